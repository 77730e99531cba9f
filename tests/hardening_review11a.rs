//! Review 11 of issue 38, the run side: what a hostile user found on the tree after the tenth
//! round, each fixed with a test that failed before. Real programs built with `cc`, real runs,
//! real signals.

use crate::common::{self, project, stderr, sweep};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Starts `sweep run sweeps/saw.toml` over `threads=1:8`, each point a quarter second, and
/// returns it with its run folder once the first row is in results.csv. The caller waits for it
/// (clippy sees only this function).
#[allow(clippy::zombie_processes)]
fn slow_run(p: &Path) -> (std::process::Child, PathBuf) {
    let child = common::sweep_process(p)
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
    loop {
        let sweep_dir = p.join("output/saw");
        let run = sweep_dir
            .is_dir()
            .then(|| common::run_dirs(&sweep_dir).pop())
            .flatten();
        if let Some(run) = run {
            if std::fs::read_to_string(run.join("results.csv"))
                .is_ok_and(|t| t.lines().count() >= 2)
            {
                return (child, run);
            }
        }
        if Instant::now() > until {
            let mut child = child;
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("no row written: {}", stderr(&out));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Review 11a, H1: run.lock removed by hand while the run ran (a user taking it for a stale
/// lock): a `sweep resume` of the same folder made a new run.lock, locked that and ran the
/// points beside the running sweep, both appending to one results.csv (every later point twice,
/// two programs measured at once). The run folder itself is locked too.
#[test]
fn run_lock_removed_while_the_run_runs_keeps_a_second_sweep_out() {
    let p = project();
    let (child, run) = slow_run(p.path());
    std::fs::remove_file(run.join("run.lock")).unwrap();
    let out = sweep(p.path())
        .args(["resume", "-q", "--no-analyze"])
        .arg(&run)
        .output()
        .unwrap();
    let first = child.wait_with_output().unwrap();
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains("is in use by another sweep"), "{err}");
    let rows = common::rows(&run.join("results.csv"));
    let mut ids: Vec<&String> = rows.iter().map(|r| &r["point_id"]).collect();
    ids.sort();
    ids.dedup();
    assert_eq!((rows.len(), ids.len()), (8, 8), "one row per point");
}

/// Review 11a, H2: a GPU's lock file removed by hand while a sweep measured on that GPU let a
/// second sweep make a new lock file, lock it and measure on the same GPU at the same time (both
/// exit 0, both sets of numbers contended). The lock also holds a name no `rm` removes.
#[test]
fn a_gpu_lock_file_removed_while_a_sweep_runs_keeps_a_second_sweep_off_that_gpu() {
    let p = project();
    let bin = p.path().join("fakebin");
    std::fs::create_dir_all(&bin).unwrap();
    common::script(
        &bin.join("nvidia-smi"),
        "#!/bin/sh\necho '0, Stand-in GPU A, GPU-r11a, 580.0, 9.0, 1980, 2619, 30'\n",
    );
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml"))
        .unwrap()
        .replace("compiler = \"cc\"", "compiler = \"cc\"\ngpu = true");
    std::fs::write(p.path().join("sweeps/saw.toml"), &spec).unwrap();
    std::fs::write(p.path().join("sweeps/other.toml"), &spec).unwrap();
    let child = common::sweep_process(p.path())
        .env("PATH", &path)
        .env_remove("CUDA_VISIBLE_DEVICES")
        .args(["run", "sweeps/saw.toml", "-q", "--no-analyze"])
        .args([
            "-a",
            "threads=1:8",
            "--set",
            "mode=slow",
            "--set",
            "slow_ms=250",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let locks = p.path().join("locks");
    let until = Instant::now() + Duration::from_secs(60);
    let lock = loop {
        let held = std::fs::read_dir(&locks)
            .ok()
            .and_then(|mut d| d.next())
            .and_then(Result::ok);
        if let Some(e) = held {
            break e.path();
        }
        assert!(Instant::now() < until, "no GPU lock taken");
        std::thread::sleep(Duration::from_millis(20));
    };
    std::fs::remove_file(&lock).unwrap();
    let out = sweep(p.path())
        .env("PATH", &path)
        .env_remove("CUDA_VISIBLE_DEVICES")
        .args(["run", "sweeps/other.toml", "-q", "--no-analyze"])
        .args(["-a", "threads=1:2"])
        .output()
        .unwrap();
    let first = child.wait_with_output().unwrap();
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("gpu 0 (Stand-in GPU A) is in use by another sweep")
            && err.contains("lock file was removed"),
        "{err}"
    );
    assert!(
        !p.path().join("output/other").exists(),
        "the second sweep made no run"
    );
}

/// Review 11a, M3: controls.csv removed while the run ran stopped the run with the hint that a
/// resume measures those points again; it measures only what results.csv lacks, and the control
/// re-runs written before are gone for good. The hint says so.
#[test]
fn controls_csv_removed_while_the_run_runs_says_what_a_resume_does_not_bring_back() {
    let p = project();
    let (child, run) = slow_run(p.path());
    let controls = run.join("controls.csv");
    let until = Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(&controls).is_ok_and(|t| t.lines().count() >= 2) {
        assert!(Instant::now() < until, "no control row written");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::remove_file(&controls).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("controls.csv`: it was removed or replaced while the run ran")
            && err.contains("a resume finishes the run without them")
            && !err.contains("it measures those points again"),
        "{err}"
    );
}

/// Review 11a, M4: Ctrl-C during `sweep build` killed the builds in flight (as it should) but
/// told each as failed ("build killed by signal 9 (SIGKILL)"), said "finishing the current
/// point", and exited 1 as if the bench did not compile. It says it was interrupted, counts no
/// failure, and exits 130.
#[test]
fn an_interrupted_sweep_build_is_exit_130_with_no_failed_build() {
    let p = project();
    let tools = p.path().join("slowcc");
    std::fs::create_dir(&tools).unwrap();
    let path = std::env::var("PATH").unwrap_or_default();
    common::script(
        &tools.join("cc"),
        &format!("#!/bin/sh\nPATH={path}\nif [ \"$1\" = --version ]; then exec cc --version; fi\nsleep 30\nexec cc \"$@\"\n"),
    );
    let child = common::sweep_process(p.path())
        .args(["build", "sweeps/saw.toml", "-a", "threads=1:4"])
        .env("PATH", format!("{}:{path}", tools.display()))
        .env_remove("SWEEP_CACHE")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(30);
    while !p.path().join("output/saw").is_dir() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: signals this test's own sweep.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let said = format!("{}{}", common::stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(130), "{said}");
    assert!(
        !said.contains("build failed") && said.contains("0 failed") && said.contains("interrupted"),
        "{said}"
    );
    assert!(!said.contains("finishing the current point"), "{said}");
}

/// Review 11a, M5: `sweep resume RUN/results.csv` (the read hint offers "a run folder of `sweep
/// run`, or its results.csv") failed with "cannot read `RUN/results.csv/manifest.json`: Not a
/// directory", exit 3. A file of the run stands for its folder.
#[test]
fn resume_takes_the_results_csv_of_a_run_for_its_folder() {
    let p = project();
    let (child, run) = slow_run(p.path());
    // SAFETY: signals this test's own sweep.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let _ = child.wait_with_output().unwrap();
    let out = sweep(p.path())
        .args(["resume", "-q", "--no-analyze"])
        .arg(run.join("results.csv"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(common::rows(&run.join("results.csv")).len(), 8);
}
