//! The run's environment failing under it (issue 38): a disk that fills up, a read-only output
//! folder, a cache cleaned beside a running sweep, a program that prints more than sweep keeps;
//! and the exit codes that scripts read. Real file systems (a small tmpfs, mounted when the tests
//! run as root; skipped with the reason otherwise), real programs, real signals.

use crate::common::{self, manifest, project, rows, run_dirs, stderr, sweep};
use std::path::{Path, PathBuf};

fn write(dir: &Path, rel: &str, text: &str) -> PathBuf {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

/// A tmpfs of `size` mounted at `at` (made), unmounted when dropped; None, with the reason
/// printed, where the tests do not run as root or the mount is refused.
pub(crate) struct Tmpfs(PathBuf);

impl Tmpfs {
    pub(crate) fn mount(at: &Path, size: &str) -> Option<Tmpfs> {
        // SAFETY: geteuid only reads this process's user id.
        if unsafe { libc::geteuid() } != 0 {
            common::skip("needs root to mount a small tmpfs");
            return None;
        }
        std::fs::create_dir_all(at).unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            common::skip("`mount -t tmpfs` is refused here");
            return None;
        }
        Some(Tmpfs(at.to_path_buf()))
    }

    pub(crate) fn remount(&self, options: &str) {
        let ok = std::process::Command::new("mount")
            .args(["-o", &format!("remount,{options}")])
            .arg(&self.0)
            .status()
            .unwrap();
        assert!(ok.success(), "remount {options}");
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// A bench that prints `FILL_KB` KB of lines, then its metric: a program whose output fills a
/// small disk.
pub(crate) fn chatty(p: &Path, points: u32, fill_kb: u32) {
    write(
        p,
        "cuda/chatty/chatty.c",
        "#include \"params.h\"\n#include <stdio.h>\nint main(void) {\n  for (int i = 0; i < FILL_KB * 16; i++) printf(\"%063d\\n\", i);\n  printf(\"MFlops: %d.5\\n\", THREADS);\n  return 0;\n}\n",
    );
    write(
        p,
        "cuda/chatty/params.h.tera",
        &format!("#define THREADS {{{{ threads }}}}\n#define FILL_KB {fill_kb}\n"),
    );
    write(
        p,
        "sweeps/chatty.toml",
        &format!("bench = \"chatty\"\ncompiler = \"cc\"\n[[axis]]\nname = \"threads\"\nrange = [1, {points}]\n[[metric]]\npattern = \"mflops\"\n"),
    );
}

/// Issue 38 item 2: the output folder's disk fills up mid-run. The run stops with exit 4 before
/// recording the point whose files could not be written (no `no_metric` or `build_failed` row for
/// good), its manifest says `interrupted`, and once there is room the resume measures the rest.
#[test]
fn a_full_disk_stops_the_run_unrecorded_and_the_resume_measures_the_rest() {
    let p = project();
    let Some(disk) = Tmpfs::mount(&p.path().join("output"), "3m") else {
        return;
    };
    chatty(p.path(), 24, 300);
    let out = sweep(p.path())
        .args(["run", "sweeps/chatty.toml", "-q", "-j", "1", "--no-analyze"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("No space left on device") || err.contains("is full"),
        "{err}"
    );
    assert_eq!(err.lines().filter(|l| l.starts_with("error:")).count(), 1);
    let runs = run_dirs(&p.path().join("output/chatty"));
    let run = runs
        .iter()
        .find(|r| r.join("manifest.json").is_file())
        .unwrap();
    assert_eq!(manifest(run)["state"], "interrupted", "{err}");
    // The live report's last version is the stopped run's, not one that reloads forever.
    if let Ok(html) = std::fs::read_to_string(run.join("report.html")) {
        assert!(!html.contains("http-equiv=\"refresh\""), "{html}");
    }
    let before = rows(&run.join("results.csv"));
    assert!(
        before.len() < 24,
        "the disk was meant to fill: {}",
        before.len()
    );
    for r in &before {
        assert_eq!(
            r["status"], "ok",
            "a row recorded for a disk-full point: {r:?}"
        );
    }
    disk.remount("size=64m");
    let out = sweep(p.path())
        .args(["run", "sweeps/chatty.toml", "-q", "-j", "1", "--no-analyze"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let after = rows(&run.join("results.csv"));
    assert_eq!(after.len(), 24);
    assert!(after.iter().all(|r| r["status"] == "ok"), "{after:?}");
    assert_eq!(manifest(run)["state"], "finished");
    assert!(
        !run.join(".reserve").exists(),
        "the reserve goes at the end"
    );
}

/// `sweeps/saw.toml` cut to threads 1..`n`, in mode `mode`, under the name `name`.
fn saw(p: &Path, name: &str, n: u32, mode: &str) {
    let spec = std::fs::read_to_string(p.join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", &format!("range = [1, {n}]"))
        .replace("mode = \"ok\"", &format!("mode = \"{mode}\""))
        .replace("[analyze]\nx = \"threads\"\n", "");
    write(p, &format!("sweeps/{name}.toml"), &spec);
}

/// Issue 38 item 6: a resumed run exits 1 while its results.csv holds failed rows, as the run
/// that wrote them did, and its summary says so.
#[test]
fn a_resumed_run_with_failed_rows_exits_as_the_fresh_run_did() {
    let p = project();
    saw(p.path(), "failing", 3, "fail");
    let fresh = sweep(p.path())
        .args(["run", "sweeps/failing.toml", "-q"])
        .output()
        .unwrap();
    assert_eq!(fresh.status.code(), Some(1), "{}", stderr(&fresh));
    let run = run_dirs(&p.path().join("output/failing"))[0].clone();
    let resumed = sweep(p.path())
        .arg("resume")
        .arg(&run)
        .arg("-q")
        .output()
        .unwrap();
    assert_eq!(resumed.status.code(), Some(1), "{}", stderr(&resumed));
    let said = common::stdout(&resumed);
    assert!(
        said.contains("3 already done before, 3 of them failed"),
        "{said}"
    );
}

/// Issue 38 item 6: `compare --fail-on-slower` fails when nothing could be compared (every
/// point of B failed): no value shows that B is not slower.
#[test]
fn compare_fail_on_slower_fails_when_nothing_could_be_compared() {
    let p = project();
    saw(p.path(), "good", 3, "ok");
    saw(p.path(), "bad", 3, "fail");
    sweep(p.path())
        .args(["run", "sweeps/good.toml", "-q"])
        .assert()
        .success();
    sweep(p.path())
        .args(["run", "sweeps/bad.toml", "-q"])
        .assert()
        .code(1);
    let a = run_dirs(&p.path().join("output/good"))[0].clone();
    let b = run_dirs(&p.path().join("output/bad"))[0].clone();
    let out = sweep(p.path())
        .arg("compare")
        .args([&a, &b])
        .args(["--fail-on-slower", "5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("error: --fail-on-slower: no value of B could be compared with A"),
        "{err}"
    );
    // Without the option it is a report, not a verdict.
    sweep(p.path())
        .arg("compare")
        .args([&a, &b])
        .assert()
        .success();
}

/// Issue 38 item 6: `[profile]` counters with no ncu to count them stop before anything runs
/// (exit 4, naming what is missing) instead of `N ok` with every counter cell empty.
#[test]
fn profile_counters_without_ncu_fail_before_anything_runs() {
    let p = project();
    let out = sweep(p.path())
        .args(["run", "sweeps/profiled.toml"])
        .env("SWEEP_NCU", p.path().join("no-such-ncu"))
        .env("SWEEP_NVIDIA_SMI", p.path().join("tools/nvidia-smi"))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.starts_with("error: `[profile]` asks for counters: `SWEEP_NCU` = `")
            && err.contains("no-such-ncu` is not a file"),
        "{err}"
    );
    assert!(!p.path().join("output/profiled").exists(), "nothing ran");
}

/// Issue 38 item 6: `--output` on a read-only file system exits 4 (the environment) and names
/// the folder the user gave, not the hidden folder a run is made in.
#[test]
fn output_on_a_read_only_file_system_exits_4_naming_the_folder_given() {
    let p = project();
    let Some(disk) = Tmpfs::mount(&p.path().join("ro"), "1m") else {
        return;
    };
    disk.remount("ro");
    saw(p.path(), "small", 2, "ok");
    let out = sweep(p.path())
        .args(["run", "sweeps/small.toml", "--output", "ro/out"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("`ro/out`") && err.contains("Read-only file system"),
        "{err}"
    );
    assert!(!err.contains(".new-"), "{err}");
}

/// Issue 38 item 7: `sweep cache clean`, over and over beside a running sweep, turns no point
/// into a failed build or run: the entries the sweep uses, and the builds it is making, are kept
/// while it runs; once it ended, a clean removes them.
#[test]
fn cache_clean_beside_a_running_sweep_fails_no_point() {
    let p = project();
    saw(p.path(), "busy", 48, "ok");
    let cleaning = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let cleaner = {
        let (dir, cleaning) = (p.path().to_path_buf(), cleaning.clone());
        std::thread::spawn(move || {
            let mut cleans = 0;
            while cleaning.load(std::sync::atomic::Ordering::SeqCst) {
                let out = sweep(&dir).args(["cache", "clean"]).output().unwrap();
                assert!(out.status.success(), "{}", stderr(&out));
                cleans += 1;
            }
            cleans
        })
    };
    let out = sweep(p.path())
        .args(["run", "sweeps/busy.toml", "-q", "-j", "2"])
        .output()
        .unwrap();
    cleaning.store(false, std::sync::atomic::Ordering::SeqCst);
    let cleans = cleaner.join().unwrap();
    assert!(cleans > 3, "the cleaner ran beside the sweep: {cleans}");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let run = run_dirs(&p.path().join("output/busy"))[0].clone();
    let rows = rows(&run.join("results.csv"));
    assert_eq!(rows.len(), 48);
    for r in &rows {
        assert_eq!(r["status"], "ok", "{r:?}");
    }
    // The sweep is over: what it held goes with the next clean (the cleaner's last, or this).
    let out = sweep(p.path()).args(["cache", "clean"]).output().unwrap();
    let said = common::stdout(&out);
    assert!(!said.contains("running sweeps use"), "{said}");
    assert!(!p.path().join("output/.cache").exists(), "{said}");
}

/// Issue 38 item 8: a program that prints 400 MB on stdout, with sweep held to 1 GiB of address
/// space: sweep reads no more than its cap of it, fails that point saying why, measures the
/// others and ends as it should; the point's log keeps everything the program printed.
#[test]
fn a_program_that_prints_hundreds_of_megabytes_fails_its_point_and_sweep_goes_on() {
    let p = project();
    write(
        p.path(),
        "cuda/flood/flood.c",
        "#include \"params.h\"\n#include <stdio.h>\n#include <string.h>\nstatic char line[1 << 20];\nint main(void) {\n  memset(line, 'x', sizeof line - 1);\n  line[sizeof line - 1] = '\\n';\n  for (int i = 0; i < FLOOD_MB; i++) fwrite(line, 1, sizeof line, stdout);\n  printf(\"MFlops: %d.5\\n\", THREADS);\n  return 0;\n}\n",
    );
    write(
        p.path(),
        "cuda/flood/params.h.tera",
        "#define THREADS {{ threads }}\n#define FLOOD_MB {% if threads == 1 %}400{% else %}1{% endif %}\n",
    );
    write(
        p.path(),
        "sweeps/flood.toml",
        "bench = \"flood\"\ncompiler = \"cc\"\nrun_timeout_s = 60\n[[axis]]\nname = \"threads\"\nrange = [1, 2]\n[[metric]]\npattern = \"mflops\"\n",
    );
    let mut cmd = common::sweep_process(p.path());
    cmd.env_remove("SWEEP_CACHE")
        .env("MALLOC_ARENA_MAX", "2")
        .args(["run", "sweeps/flood.toml", "-q", "-j", "1"]);
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe; it limits the child (sweep) alone.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 1 << 30,
                rlim_max: 1 << 30,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let run = run_dirs(&p.path().join("output/flood"))[0].clone();
    assert_eq!(manifest(&run)["state"], "finished");
    let rows = rows(&run.join("results.csv"));
    let by_threads = |t: &str| rows.iter().find(|r| r["threads"] == t).unwrap().clone();
    let flood = by_threads("1");
    assert_eq!(flood["status"], "run_failed", "{flood:?}");
    assert!(
        flood["error"].starts_with(
            "the program printed 400 MiB on stdout, more than the 64 MiB sweep reads for metrics (hint: "
        ),
        "{flood:?}"
    );
    assert_eq!(by_threads("2")["status"], "ok");
    let log = run
        .join("points")
        .join(&flood["point_id"])
        .join("stdout.txt");
    assert!(
        std::fs::metadata(&log).unwrap().len() > 400 << 20,
        "the log keeps it all"
    );
}
