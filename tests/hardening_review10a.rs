//! Review 10 of issue 38, the run side: what a hostile user found on the tree after the ninth
//! round, each fixed with a test that failed before. Real programs built with `cc`, real runs,
//! real signals.

use crate::common::{self, project, stderr, sweep};
use crate::hardening::write;
use std::path::Path;
use std::time::{Duration, Instant};

/// A bench `daemon` whose program runs `line` through `system()`, then waits a minute and prints
/// its MFlops; `sweeps/daemon.toml`, one point.
fn daemon_bench(p: &Path, line: &str) {
    write(
        p,
        "cuda/daemon/daemon.c",
        &format!("#include \"params.h\"\n#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\nint main(void) {{\n  system(\"{line}\");\n  sleep(60);\n  printf(\"MFlops: %d\\n\", THREADS);\n  return 0;\n}}\n"),
    );
    write(
        p,
        "cuda/daemon/params.h.tera",
        "#define THREADS {{ threads }}\n",
    );
    write(
        p,
        "sweeps/daemon.toml",
        "bench = \"daemon\"\ncompiler = \"cc\"\n[[axis]]\nname = \"threads\"\nvalues = [1]\n[[metric]]\npattern = \"mflops\"\n",
    );
}

/// Review 10a, H1: a program that starts a daemon the classic way (fork, setsid, fork again, the
/// middle one exits; here `setsid sh -c 'env -i sleep N &'`) leaves the daemon in a session and
/// group whose leader is gone, without a mark of sweep. sweep told the guard only groups that a
/// live descendant leads, so a SIGKILL of sweep while the point ran left the daemon running
/// under pid 1. A group that holds nothing but sweep's descendants is told too.
#[test]
fn a_daemon_whose_group_leader_is_gone_does_not_outlive_a_sigkilled_sweep() {
    if !common::on_path("setsid") || !common::on_path("env") {
        return common::skip("no setsid or env on PATH");
    }
    let p = project();
    let secs = format!("{}", 700_000 + std::process::id());
    daemon_bench(p.path(), &format!("setsid sh -c 'env -i sleep {secs} &'"));
    let mut child = common::sweep_process(p.path())
        .args(["run", "sweeps/daemon.toml", "-q", "--no-analyze"])
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
        "the point's daemon never started"
    );
    // A second for sweep to see the daemon's group (it looks every half second).
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
        "a daemon outlived the SIGKILLed sweep: {left:?}"
    );
}

/// The kilobytes in use on the file system of `dir`.
fn used_kb(dir: &Path) -> u64 {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: statvfs fills a local struct from a NUL-terminated path.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut st) }, 0);
    (st.f_blocks - st.f_bfree) * st.f_frsize / 1024
}

/// Review 10a, M1: a disk that filled up while the run wrote the charts its spec's `[analyze]`
/// asks for (after every point was measured) was a warning and exit 0, while the same disk full
/// during `--export` was exit 4: a script saw success and a run without its charts. A failure of
/// the file system at the end of the run exits 4 (environment), whichever file it hit.
#[test]
fn a_disk_full_at_the_analysis_of_the_run_is_exit_4() {
    let p = project();
    let at = p.path().join("small");
    let Some(fs) = crate::driver_faults::Tmpfs::mount(&at, "8m") else {
        return;
    };
    let cache = p.path().join("cache");
    let run = |analyze: bool| {
        let mut c = sweep(p.path());
        c.args([
            "run",
            "sweeps/saw.toml",
            "-q",
            "-a",
            "threads=1:4",
            "--output",
        ])
        .arg(&at)
        .arg("--cache")
        .arg(&cache);
        if !analyze {
            c.arg("--no-analyze");
        }
        c.output().unwrap()
    };
    // What the run takes without its analysis; then a disk with room for that, the analysis'
    // small files, the SVG and the live page written beside its old copy, but not the PNG (84 KB):
    // 60 to 100 KB more fail at the PNG.
    let out = run(false);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let used = used_kb(&at);
    std::fs::remove_dir_all(at.join("saw")).unwrap();
    fs.remount(&format!("size={}k", used + 80));
    let out = run(true);
    let err = stderr(&out);
    assert!(
        err.contains("the analysis at the end of the run failed")
            && err.contains("No space left on device"),
        "the disk filled at the analysis: {err}"
    );
    assert_eq!(out.status.code(), Some(4), "{err}");
    let run = common::run_dirs(&at.join("saw")).pop().unwrap();
    assert_eq!(
        common::manifest(&run)["state"],
        "finished",
        "the rows are whole"
    );
}

/// Review 10a, H2 (the neighbour of review 9a's H1, which made an empty binary, a link or a
/// folder build again): a cache entry whose binary was cut to part of its size crashed
/// (SIGSEGV, `run_failed`, blamed on the program) and one made not executable (`chmod -x`) could
/// not start, `cached=1`, run after run. Each entry keeps the hash of the binary it built; one
/// that differs, or is not executable, is built again and replaced.
#[test]
fn a_cache_binary_cut_short_or_made_not_executable_is_built_again() {
    use std::os::unix::fs::PermissionsExt;
    let p = project();
    let cache = p.path().join("cache");
    let run = || {
        let out = sweep(p.path())
            .args(["run", "sweeps/saw.toml", "-q", "--force", "--no-analyze"])
            .args(["-a", "threads=1:2", "--cache"])
            .arg(&cache)
            .output()
            .unwrap();
        let run = common::run_dirs(&p.path().join("output/saw"))
            .pop()
            .unwrap();
        (out, common::rows(&run.join("results.csv")))
    };
    let (out, first) = run();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut bins: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|e| e.join("deps.txt").is_file())
        .map(|e| e.join("bench"))
        .collect();
    bins.sort();
    assert_eq!(bins.len(), 2, "one entry a point");
    let len = std::fs::metadata(&bins[0]).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&bins[0])
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    std::fs::set_permissions(&bins[1], std::fs::Permissions::from_mode(0o644)).unwrap();
    let (out, again) = run();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let saw = |rows: &common::Rows| -> Vec<String> {
        rows.iter().map(|r| r["saw_mflops"].clone()).collect()
    };
    assert_eq!(saw(&again), saw(&first));
    assert!(
        again.iter().all(|r| r["cached"] == "0"),
        "both broken entries built again"
    );
    let (out, third) = run();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        third.iter().all(|r| r["cached"] == "1"),
        "the new builds replaced the broken entries"
    );
}

/// Review 10a, M2: shards of two shardings (`--shard 0/2` and `--shard 1/2 --split points`),
/// each passed once, share points; merge refused them (rightly) with the hint "pass one run per
/// shard", which the user had done. The hint names the shardings the runs come from.
#[test]
fn merging_shards_of_two_shardings_names_the_shardings() {
    let p = project();
    let shard = |out: &str, args: &[&str]| {
        let o = sweep(p.path())
            .args([
                "run",
                "sweeps/saw.toml",
                "-q",
                "--no-analyze",
                "-a",
                "threads=1:8",
            ])
            .args(["--output", out])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        common::run_dirs(&p.path().join(out).join("saw"))
            .pop()
            .unwrap()
    };
    let a = shard("a", &["--shard", "0/2"]);
    let b = shard("b", &["--shard", "1/2", "--split", "points"]);
    let out = sweep(p.path())
        .arg("merge")
        .args([&a, &b])
        .args(["--out", "m"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("more than once"), "{err}");
    assert!(
        err.contains("several shardings (2 shards split by points, 2 shards split by series)"),
        "the hint names the shardings: {err}"
    );
    assert!(!err.contains("pass one run per shard"), "{err}");
    assert!(!p.path().join("m").exists(), "nothing written");
}

/// Review 10a, M4: `sweep build` went on through every point after a failure that every point
/// shares (the cache a file, a full or read-only disk, no descriptors), printed one `build
/// failed` line a point and exited 1, as if the bench did not compile. It stops at the first
/// such failure, as a run does, with one line that names it, and exits 4 (environment).
#[test]
fn sweep_build_stops_at_a_cache_it_cannot_write_with_exit_4() {
    let p = project();
    std::fs::write(p.path().join("cachefile"), "x").unwrap();
    let out = sweep(p.path())
        .args(["build", "sweeps/saw.toml", "-a", "threads=1:8", "-j", "1"])
        .args(["--cache", "cachefile"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(
        err.contains("cannot create a build folder in `cachefile`")
            && err.contains("the build cache is a file, not a folder: remove it, or add `--cache DIR` to it, then run `sweep build` again"),
        "{err}"
    );
    assert!(
        !common::stdout(&out).contains("built "),
        "no summary of a build that stopped"
    );
}

/// Review 10a, M5: results.csv removed while the run ran (by hand, by a cleaning script): the
/// run went on writing its rows into the removed file, then ended as `interrupted after 8
/// points`, exit 130, with no word of why and every row gone. The first row written after the
/// file went stops the run, naming the file, exit 4; the resume measures the points again.
#[test]
fn results_csv_removed_while_the_run_runs_stops_it_by_name() {
    let p = project();
    let child = common::sweep_process(p.path())
        .args([
            "run",
            "sweeps/saw.toml",
            "-q",
            "--no-analyze",
            "-a",
            "threads=1:8",
        ])
        .args(["--set", "mode=slow", "--set", "slow_ms=250"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    let csv = loop {
        let sweep_dir = p.path().join("output/saw");
        let run = sweep_dir
            .is_dir()
            .then(|| common::run_dirs(&sweep_dir).pop())
            .flatten();
        if let Some(csv) = run.map(|r| r.join("results.csv")) {
            if std::fs::read_to_string(&csv).is_ok_and(|t| t.lines().count() >= 2) {
                break csv;
            }
        }
        assert!(Instant::now() < until, "no row written");
        std::thread::sleep(Duration::from_millis(20));
    };
    std::fs::remove_file(&csv).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains(&format!(
            "cannot write `{}`",
            csv.strip_prefix(p.path()).unwrap().display()
        )) && err.contains("removed or replaced while the run ran"),
        "{err}"
    );
    let run = csv.parent().unwrap();
    assert_eq!(common::manifest(run)["state"], "interrupted");
    let out = sweep(p.path())
        .args(["resume", "-q"])
        .arg(run)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        common::rows(&csv).len(),
        8,
        "the resume measured every point"
    );
}

/// Review 10a, H3: the run folder moved (or removed) while a point's program ran: sweep read the
/// program's output back from the old path, found nothing, and recorded the point `no_metric`
/// for good, blamed on the program (in the moved folder's results.csv, whose file it still held).
/// Output that cannot be read back stops the run before the point is recorded, exit 4.
#[test]
fn a_run_folder_moved_while_a_point_runs_records_no_failure_for_it() {
    let p = project();
    let child = common::sweep_process(p.path())
        .args([
            "run",
            "sweeps/saw.toml",
            "-q",
            "--no-analyze",
            "-a",
            "threads=1:8",
        ])
        .args(["--set", "mode=slow", "--set", "slow_ms=500"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    let run = loop {
        let sweep_dir = p.path().join("output/saw");
        let run = sweep_dir
            .is_dir()
            .then(|| common::run_dirs(&sweep_dir).pop())
            .flatten();
        if let Some(run) = run {
            let csv = run.join("results.csv");
            if std::fs::read_to_string(&csv).is_ok_and(|t| t.lines().count() >= 2) {
                break run;
            }
        }
        assert!(Instant::now() < until, "no row written");
        std::thread::sleep(Duration::from_millis(20));
    };
    // Half-way through the next point's program (each sleeps 500 ms).
    std::thread::sleep(Duration::from_millis(200));
    let moved = run.with_extension("moved");
    std::fs::rename(&run, &moved).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("was moved or removed while the run ran"),
        "{err}"
    );
    let rows = common::rows(&moved.join("results.csv"));
    assert!(!rows.is_empty());
    let failed: Vec<_> = rows.iter().filter(|r| r["status"] != "ok").collect();
    assert!(
        failed.is_empty(),
        "a point recorded failed for the move: {failed:?}"
    );
}
