//! Review 8 of issue 38: what a hostile user found on the tree after the seventh round (the
//! render worker, the subreaper and its marks, staging leftovers, NFC, outputs over inputs), each
//! fixed with a test that failed before. Real programs built with `cc`, real runs, real signals.

use crate::common::{self, project, rows, run_dirs, stderr, sweep};
use crate::hardening::write;
use std::path::Path;
use std::time::{Duration, Instant};

/// A bench `orphan` whose program runs `line` through `system()` (each point), waits `wait_ms`,
/// and prints its MFlops; `sweeps/orphan.toml` over threads 1..`points`.
fn orphan_bench(p: &Path, line: &str, wait_ms: u32, points: u32) {
    write(
        p,
        "cuda/orphan/orphan.c",
        &format!("#include \"params.h\"\n#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\nint main(void) {{\n  system(\"{line}\");\n  usleep({wait_ms} * 1000);\n  printf(\"MFlops: %d\\n\", THREADS);\n  return 0;\n}}\n"),
    );
    write(
        p,
        "cuda/orphan/params.h.tera",
        "#define THREADS {{ threads }}\n",
    );
    write(
        p,
        "sweeps/orphan.toml",
        &format!("bench = \"orphan\"\ncompiler = \"cc\"\n[[axis]]\nname = \"threads\"\nrange = [1, {points}]\n[[metric]]\npattern = \"mflops\"\n"),
    );
}

/// The zombies whose parent is `parent`.
fn zombies_of(parent: i32) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| common::state_and_parent(pid) == Some(('Z', parent)))
        .count()
}

/// Review 8, H1: sweep is the subreaper of what its programs orphan, but reaped only what it
/// killed: a `setsid` grandchild that ended by itself stayed a zombie of sweep to the end of the
/// run, one a point (30 points: 22 zombies at once), until a long sweep filled the process table
/// (or a container's pids limit) and no point could start. Orphans that ended are reaped.
#[test]
fn orphans_that_end_by_themselves_are_reaped_at_once() {
    if !common::on_path("setsid") {
        return common::skip("no setsid on PATH");
    }
    let p = project();
    orphan_bench(p.path(), "setsid sh -c 'sleep 0.05' &", 300, 12);
    let mut child = common::sweep_process(p.path())
        .args(["run", "sweeps/orphan.toml", "-q", "--no-analyze"])
        .env_remove("SWEEP_CACHE")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let mut most = 0;
    while child.try_wait().unwrap().is_none() {
        most = most.max(zombies_of(pid));
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // One may be between its end and the end of its point.
    assert!(most <= 2, "{most} zombies of sweep at once");
}

/// Review 8, H2: a program whose grandchild clears or changes its environment (`setsid env -i
/// sleep`, `setsid env SWEEP_TREE=x sleep`) carries no mark, and outlived its point and sweep.
/// Such an orphan of sweep can be told from no running command's: it is killed at the end of the
/// point.
#[test]
fn a_grandchild_that_clears_its_environment_does_not_outlive_its_point() {
    if !common::on_path("setsid") || !common::on_path("env") {
        return common::skip("no setsid or env on PATH");
    }
    let p = project();
    let secs = format!("{}", 600_000 + std::process::id());
    let other = format!("{}", 700_000 + std::process::id());
    orphan_bench(
        p.path(),
        &format!("setsid env -i sleep {secs} & setsid env SWEEP_TREE=x sleep {other} &"),
        200,
        3,
    );
    let out = sweep(p.path())
        .args(["run", "sweeps/orphan.toml", "-q", "--no-analyze"])
        .output()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(5);
    while !(common::sleeps(&secs).is_empty() && common::sleeps(&other).is_empty())
        && Instant::now() < until
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left: Vec<i32> = [common::sleeps(&secs), common::sleeps(&other)].concat();
    for pid in &left {
        // SAFETY: kills this test's own leftover sleeps.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(left.is_empty(), "sleeps outlived their points: {left:?}");
    let run = run_dirs(&p.path().join("output/orphan")).pop().unwrap();
    assert!(rows(&run.join("results.csv"))
        .iter()
        .all(|r| r["status"] == "ok"));
}

/// The pids of the `sweep render-worker` processes whose parent is `parent`.
fn workers_of(parent: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| matches!(common::state_and_parent(pid), Some((s, pp)) if pp == parent && s != 'Z'))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.windows(13).any(|w| w == b"render-worker"))
        })
        .collect()
}

/// The render workers of sweep `pid` once there is one (30 s at most; none is a failure).
fn workers_started(pid: i32) -> Vec<i32> {
    let until = Instant::now() + Duration::from_secs(30);
    let mut workers = workers_of(pid);
    while workers.is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
        workers = workers_of(pid);
    }
    assert!(!workers.is_empty(), "no render worker started");
    workers
}

/// Review 8, M1: sweep SIGKILLed while the render worker rendered a slow template left the worker
/// rendering on to the end of its CPU limit (10 s of CPU time: minutes of wall-clock time on a
/// busy machine), in a process group of its own that the guard did not know. The guard kills it.
#[test]
fn the_render_worker_does_not_outlive_a_sigkilled_sweep() {
    let p = project();
    // A template that renders for seconds (a billion loop steps), well within the limits.
    write(
        p.path(),
        "cuda/hostsaw/params.h.tera",
        "{% for i in range(end=1000000) %}{% for j in range(end=1000) %}{% endfor %}{% endfor %}\n#define THREADS {{ threads }}\n#define MODE {{ mode }}\n#define MODE_{{ mode | upper }} 1\n#define SLOW_MS {{ slow_ms }}\n",
    );
    let mut child = common::sweep_process(p.path())
        .args(["run", "sweeps/saw.toml", "-q", "--no-analyze"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let workers = workers_started(child.id() as i32);
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    let until = Instant::now() + Duration::from_secs(3);
    while workers.iter().any(|&w| common::running(w)) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left: Vec<i32> = workers
        .into_iter()
        .filter(|&w| common::running(w))
        .collect();
    for w in &left {
        // SAFETY: kills this test's own leftover worker.
        unsafe { libc::kill(*w, libc::SIGKILL) };
    }
    assert!(
        left.is_empty(),
        "the render worker outlived sweep: {left:?}"
    );
}

/// Review 8, M2: `sweep run ... 2>&1 | head -3` killed the run at its next line (SIGPIPE, exit
/// 141) mid-sweep: 3 of 64 rows, the manifest left `running` (the report says Running and reloads
/// for ever). A run outlives the terminal that watches it: its lines are lost, the run ends.
#[test]
fn a_run_whose_terminal_went_away_goes_on_to_its_end() {
    use std::io::BufRead;
    let p = project();
    for (pipe_stdout, what) in [(false, "stderr"), (true, "stdout and stderr")] {
        let mut c = common::sweep_process(p.path());
        c.args(["run", "sweeps/saw.toml", "--no-analyze"])
            .env_remove("SWEEP_CACHE")
            .stderr(std::process::Stdio::piped());
        c.stdout(if pipe_stdout {
            std::process::Stdio::piped()
        } else {
            std::process::Stdio::null()
        });
        let mut child = c.spawn().unwrap();
        let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
        let mut first = String::new();
        err.read_line(&mut first).unwrap();
        // What `head -1` does: reads a line, then goes away.
        drop(err);
        drop(child.stdout.take());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{what}: {status:?} after {first:?}");
        let run = run_dirs(&p.path().join("output/saw")).pop().unwrap();
        assert_eq!(common::manifest(&run)["state"], "finished", "{what}");
        assert_eq!(rows(&run.join("results.csv")).len(), 64, "{what}");
    }
}

/// A copy of folder `from` at `to` (files and folders).
fn copy_dir(from: &Path, to: &Path) {
    for e in walkdir::WalkDir::new(from)
        .into_iter()
        .filter_map(Result::ok)
    {
        let dst = to.join(e.path().strip_prefix(from).unwrap());
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&dst).unwrap();
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
}

/// Review 8, M3: specs refuse decomposed text, but a results.csv edited by hand (or written by a
/// tool that decomposes) may hold it; `compare` then listed the same point as "only in A:
/// label=noisé" and "only in B: label=noisé", two names that look alike. It says which is written
/// decomposed, with its code points.
#[test]
fn compare_says_which_point_is_written_decomposed() {
    let p = project();
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 2]")
        + "[[axis]]\nname = \"label\"\nvalues = [\"noisé\", \"plain\"]\n";
    write(p.path(), "sweeps/lab.toml", &spec);
    sweep(p.path())
        .args(["run", "sweeps/lab.toml", "-q", "--no-analyze"])
        .assert()
        .success();
    let a = run_dirs(&p.path().join("output/lab")).pop().unwrap();
    let b = p.path().join("b");
    copy_dir(&a, &b);
    let csv = b.join("results.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.contains("noisé"), "{text}");
    std::fs::write(&csv, text.replace("noisé", "noise\u{301}")).unwrap();
    // In a run folder the row's id names the composed value: refused as a row at another
    // point's values, saying which is written decomposed (review 17 C2).
    let out = sweep(p.path())
        .args(["compare"])
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("label=noise\u{301} (written decomposed: U+0065 U+0301), which are not that point's axis values"),
        "{err}"
    );
    // A CSV alone (no manifest, so no id to check) lists it as only in B, said decomposed.
    let bare = p.path().join("b.csv");
    std::fs::copy(&csv, &bare).unwrap();
    let out = sweep(p.path())
        .args(["compare"])
        .arg(&a)
        .arg(&bare)
        .output()
        .unwrap();
    let said = common::stdout(&out);
    let line = said.lines().find(|l| l.contains("only in B")).unwrap_or("");
    assert!(
        line.contains("label=noise\u{301} (written decomposed: U+0065 U+0301)")
            && !line.contains("noisé (written"),
        "{said}{}",
        stderr(&out)
    );
}

/// Review 8, H3: a program that could not be started for want of file descriptors (or processes,
/// or memory) was recorded as the point's failure, `run_failed` or `build_failed` for good, and
/// so was every point after it (exit 1); a resume never measured them. That is the run's
/// trouble: the run stops before recording the point (exit 4, manifest `interrupted`), and the
/// message names the limit. With too few descriptors for even the compiler's `--version`, the
/// compiler is said not to start, not to be missing. Tried at every limit from 10 to 30 open
/// files: whatever the limit, no point is recorded as failed.
#[test]
fn too_few_open_files_stops_the_run_and_records_no_failure() {
    use std::os::unix::process::CommandExt;
    let p = project();
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 8]");
    write(p.path(), "sweeps/few.toml", &spec);
    let mut stopped = 0;
    for limit in 10..=30u64 {
        let mut c = common::sweep_process(p.path());
        c.args(["run", "sweeps/few.toml", "-q", "--no-analyze", "--force"])
            .env_remove("SWEEP_CACHE");
        // SAFETY: setrlimit is async-signal-safe; it lowers the limit of the child alone.
        unsafe {
            c.pre_exec(move || {
                let lim = libc::rlimit {
                    rlim_cur: limit,
                    rlim_max: limit,
                };
                libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
                Ok(())
            });
        }
        let out = c.output().unwrap();
        let err = stderr(&out);
        match out.status.code() {
            Some(0) => {}
            Some(4) => {
                // One error line; a warning that the live report could not be written for the
                // same want of descriptors may come before it.
                assert!(
                    err.contains("Too many open files")
                        && err.lines().filter(|l| l.starts_with("error:")).count() == 1
                        && err
                            .lines()
                            .all(|l| l.starts_with("error:") || l.starts_with("warning:")),
                    "limit {limit}: {err}"
                );
                assert!(!err.contains("not found"), "limit {limit}: {err}");
                if err.contains("nothing was recorded") {
                    stopped += 1;
                    assert!(err.contains("ulimit -n"), "limit {limit}: {err}");
                }
            }
            code => panic!("limit {limit}: exit {code:?}: {err}"),
        }
        let sweep_dir = p.path().join("output/few");
        let runs = if sweep_dir.exists() {
            run_dirs(&sweep_dir)
        } else {
            Vec::new()
        };
        for run in runs {
            let failed: Vec<String> = rows(&run.join("results.csv"))
                .into_iter()
                .filter(|r| r["status"] != "ok")
                .map(|r| format!("threads={} {}", r["threads"], r["status"]))
                .collect();
            assert!(failed.is_empty(), "limit {limit}: {failed:?}");
        }
    }
    assert!(stopped > 0, "no limit stopped the run at a point");
}

/// Review 8, M4: a compiler that is there but fails on `--version` (a broken install, a wrapper
/// that refuses the option) was said to be "not found" (hint: install it).
#[test]
fn a_compiler_that_fails_on_version_is_not_said_missing() {
    let p = project();
    let cc = p.path().join("tools/badcc");
    common::script(
        &cc,
        "#!/bin/sh\necho 'badcc: licence expired' >&2\nexit 1\n",
    );
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml"))
        .unwrap()
        .replace(
            "compiler = \"cc\"",
            &format!("compiler = \"{}\"", cc.display()),
        );
    write(p.path(), "sweeps/bad.toml", &spec);
    let out = sweep(p.path())
        .args(["run", "sweeps/bad.toml", "-q"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("badcc --version`") && !err.contains("not found") && err.contains("hint:"),
        "{err}"
    );
}

/// The other side of H2: an unmarked helper that a point still uses (started with a cleared
/// environment, and talked to until the point ends) is not killed because another command (a
/// build beside it, `-j 4`) ended meanwhile; it goes once no command runs.
#[test]
fn an_unmarked_helper_lives_as_long_as_commands_run() {
    if !common::on_path("setsid") || !common::on_path("env") {
        return common::skip("no setsid or env on PATH");
    }
    let p = project();
    let secs = format!("{}", 800_000 + std::process::id());
    write(
        p.path(),
        "cuda/helper/helper.c",
        &format!("#include \"params.h\"\n#include <signal.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\nint main(void) {{\n  char cmd[256];\n  snprintf(cmd, sizeof cmd, \"setsid env -i sh -c 'echo $$ > helper.%d.pid; exec sleep {secs}' &\", THREADS);\n  system(cmd);\n  usleep(100000);\n  char name[64];\n  snprintf(name, sizeof name, \"helper.%d.pid\", THREADS);\n  FILE *f = fopen(name, \"r\");\n  int pid = 0;\n  if (!f || fscanf(f, \"%d\", &pid) != 1) {{ fprintf(stderr, \"no helper\\n\"); return 1; }}\n  for (int i = 0; i < 10; i++) {{\n    usleep(50000);\n    if (kill(pid, 0) != 0) {{ fprintf(stderr, \"helper killed\\n\"); return 1; }}\n  }}\n  printf(\"MFlops: %d\\n\", THREADS);\n  return 0;\n}}\n"),
    );
    write(
        p.path(),
        "cuda/helper/params.h.tera",
        "#define THREADS {{ threads }}\n",
    );
    write(
        p.path(),
        "sweeps/helper.toml",
        "bench = \"helper\"\ncompiler = \"cc\"\n[[axis]]\nname = \"threads\"\nrange = [1, 8]\n[[metric]]\npattern = \"mflops\"\n",
    );
    let out = sweep(p.path())
        .args(["run", "sweeps/helper.toml", "-q", "--no-analyze", "-j", "4"])
        .output()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(5);
    while !common::sleeps(&secs).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left = common::sleeps(&secs);
    for pid in &left {
        // SAFETY: kills this test's own leftover sleeps.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(left.is_empty(), "helpers outlived the run: {left:?}");
}

/// Review 8, H4: the render worker killed from outside (SIGKILL by a user, the OOM killer)
/// between two templates made the next point `build_failed` for good, blaming its template ("the
/// renderer was killed by signal 9"). A worker killed from outside is replaced and the template
/// rendered again; every point measures.
#[test]
fn a_render_worker_killed_from_outside_fails_no_point() {
    let p = project();
    let child = common::sweep_process(p.path())
        .args(["run", "sweeps/saw.toml", "-q", "--no-analyze", "-j", "1"])
        .args(["--set", "slow_ms=20"])
        .env_remove("SWEEP_CACHE")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let workers = workers_started(child.id() as i32);
    for w in workers {
        // SAFETY: kills the render worker of the sweep this test started.
        unsafe { libc::kill(w, libc::SIGKILL) };
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let run = run_dirs(&p.path().join("output/saw")).pop().unwrap();
    let rows = rows(&run.join("results.csv"));
    assert_eq!(rows.len(), 64);
    assert!(rows.iter().all(|r| r["status"] == "ok"), "{}", stderr(&out));
}

/// Review 8, left open then closed: sweep SIGKILLed while a point runs, whose program started
/// `setsid env -i sleep N &` (out of its group, no mark of sweep, adopted by sweep as a subreaper):
/// the sleep outlived sweep under pid 1. sweep now tells the guard each orphan it adopts within
/// half a second, and the guard kills it with the rest.
#[test]
fn a_grandchild_without_a_mark_does_not_outlive_a_sigkilled_sweep() {
    if !common::on_path("setsid") || !common::on_path("env") {
        return common::skip("no setsid or env on PATH");
    }
    let p = project();
    let secs = format!("{}", 800_000 + std::process::id());
    orphan_bench(
        p.path(),
        &format!("setsid env -i sleep {secs} &"),
        60_000,
        1,
    );
    let mut child = common::sweep_process(p.path())
        .args(["run", "sweeps/orphan.toml", "-q", "--no-analyze"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The point runs once its sleep is there; then a second for sweep to see its new orphan.
    let until = Instant::now() + Duration::from_secs(60);
    while common::sleeps(&secs).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !common::sleeps(&secs).is_empty(),
        "the point's sleep never started"
    );
    std::thread::sleep(Duration::from_millis(1500));
    child.kill().unwrap();
    child.wait().unwrap();
    let until = Instant::now() + Duration::from_secs(5);
    while !common::sleeps(&secs).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left = common::sleeps(&secs);
    for pid in &left {
        // SAFETY: kills this test's own leftover sleeps.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    assert!(
        left.is_empty(),
        "a sleep outlived the SIGKILLed sweep: {left:?}"
    );
}

/// The last open high of review 8's round: a grandchild that left its group and cleared its
/// environment while the point's program still waits for it (not an orphan of sweep yet) went
/// to init when a SIGKILL ended sweep and its program, and ran on. sweep tells the guard every
/// group its descendants make for themselves, not only its orphans'.
#[test]
fn a_grandchild_its_program_still_holds_does_not_outlive_a_sigkilled_sweep() {
    if !common::on_path("setsid") || !common::on_path("env") {
        return common::skip("no setsid or env on PATH");
    }
    let p = project();
    let secs = format!("{}", 900_000 + std::process::id());
    // system() waits for the sleep: it stays the program's descendant until sweep is killed.
    orphan_bench(p.path(), &format!("setsid env -i sleep {secs}"), 0, 1);
    let mut child = common::sweep_process(p.path())
        .args(["run", "sweeps/orphan.toml", "-q", "--no-analyze"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    while common::sleeps(&secs).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !common::sleeps(&secs).is_empty(),
        "the point's sleep never started"
    );
    std::thread::sleep(Duration::from_millis(1500));
    child.kill().unwrap();
    child.wait().unwrap();
    let until = Instant::now() + Duration::from_secs(5);
    while !common::sleeps(&secs).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left = common::sleeps(&secs);
    for pid in &left {
        // SAFETY: kills this test's own leftover sleeps.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    assert!(
        left.is_empty(),
        "a sleep outlived the SIGKILLed sweep: {left:?}"
    );
}
