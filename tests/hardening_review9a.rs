//! Review 9 of issue 38, the run side: what a hostile user found on the tree after the eighth
//! round (a build cache cut by hand, shards of other programs merged, resume messages), each
//! fixed with a test that failed before. Real programs built with `cc`, real runs.

use crate::common::{self, project, rows, run_dirs, stderr, sweep};
use crate::hardening::write;
use std::path::Path;

/// `sweeps/saw4.toml`: saw.toml over threads 1..4, without its analysis.
fn saw4(p: &Path) {
    let spec = std::fs::read_to_string(p.join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 4]")
        .replace("[analyze]\nx = \"threads\"\n", "");
    write(p, "sweeps/saw4.toml", &spec);
}

/// `sweep run sweeps/saw4.toml --force` with `args` added: its exit code, stderr, and the rows
/// of the run it made.
fn run_saw4(p: &Path, args: &[&str]) -> (Option<i32>, String, common::Rows) {
    let out = sweep(p)
        .args(["run", "sweeps/saw4.toml", "-q", "--force", "--no-analyze"])
        .args(args)
        .output()
        .unwrap();
    let run = run_dirs(&p.join("output/saw4")).pop().unwrap();
    (
        out.status.code(),
        stderr(&out),
        rows(&run.join("results.csv")),
    )
}

/// Review 9a, H1: a cache entry whose binary was cut to 0 bytes (a full disk, by hand), or made
/// a link (to `/bin/true`), was run as it was: the point `no_metric`, blamed on the program,
/// `cached=1`, run after run. One whose binary is a folder stopped every run (exit 4, "has no
/// binary", resume for ever). All are built again, and the new build replaces them.
#[test]
fn a_cache_entry_cut_by_hand_is_built_again_and_replaced() {
    let p = project();
    saw4(p.path());
    let cache = p.path().join("cache");
    let cache_arg = cache.to_str().unwrap();
    let (code, err, first) = run_saw4(p.path(), &["--cache", cache_arg]);
    assert_eq!(code, Some(0), "{err}");
    assert!(first.iter().all(|r| r["cached"] == "0"));
    let mut entries: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|e| e.join("deps.txt").is_file())
        .collect();
    entries.sort();
    assert_eq!(entries.len(), 4, "one entry a point");
    std::fs::write(entries[0].join("bench"), b"").unwrap();
    std::fs::remove_file(entries[1].join("bench")).unwrap();
    std::os::unix::fs::symlink("/bin/true", entries[1].join("bench")).unwrap();
    std::fs::remove_file(entries[2].join("bench")).unwrap();
    std::fs::create_dir(entries[2].join("bench")).unwrap();
    std::fs::write(entries[3].join("bench"), b"").unwrap();
    let (code, err, again) = run_saw4(p.path(), &["--cache", cache_arg]);
    assert_eq!(code, Some(0), "{err}");
    let saw = |rows: &common::Rows| -> Vec<String> {
        rows.iter().map(|r| r["saw_mflops"].clone()).collect()
    };
    assert_eq!(saw(&again), saw(&first));
    assert!(
        again.iter().all(|r| r["cached"] == "0"),
        "the four broken entries built again"
    );
    let (code, err, third) = run_saw4(p.path(), &["--cache", cache_arg]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        third.iter().all(|r| r["cached"] == "1"),
        "the new builds replaced the broken entries"
    );
    assert_eq!(saw(&third), saw(&first));
}

/// Review 9a, H2: `sweep merge` joined shards built by two compilers (another `cc` first on PATH
/// for one shard), or from two versions of the bench (edited between the shards), exit 0: one
/// curve held two programs' rows, and the merged manifest named the first shard's compiler alone.
/// The merge refuses them (exit 3, nothing written), naming the run and what differs.
#[test]
fn merge_refuses_shards_built_by_another_compiler_or_from_another_bench() {
    let p = project();
    saw4(p.path());
    let wrapper = p.path().join("wrap");
    std::fs::create_dir(&wrapper).unwrap();
    let path = format!(
        "{}:{}",
        wrapper.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let shard = |i: u32, env_path: Option<&str>| {
        let mut c = sweep(p.path());
        if let Some(path) = env_path {
            c.env("PATH", path);
        }
        let out = c
            .args([
                "run",
                "sweeps/saw4.toml",
                "-q",
                "--no-analyze",
                "--split",
                "points",
            ])
            .args(["--shard", &format!("{i}/2")])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    };
    let merge = || {
        sweep(p.path())
            .args(["merge", "output/saw4"])
            .output()
            .unwrap()
    };
    // The wrapper execs the next `cc` on PATH: its own folder must not come first there.
    common::script(
        &wrapper.join("cc"),
        &format!("#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'cc (wrapper) 99.1'; exit 0; fi\nPATH={}\nexec cc \"$@\"\n", std::env::var("PATH").unwrap_or_default()),
    );
    shard(0, None);
    shard(1, Some(&path));
    let out = merge();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("another compiler")
            && err.contains("cc (wrapper) 99.1")
            && err.contains("shard-1-of-2"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    // Shard 1 again with the first shard's compiler, after an edit of the bench.
    for run in run_dirs(&p.path().join("output/saw4")) {
        if run.to_string_lossy().contains("shard-1-of-2") {
            std::fs::remove_dir_all(run).unwrap();
        }
    }
    let c = p.path().join("cuda/hostsaw/hostsaw.c");
    let text = std::fs::read_to_string(&c).unwrap();
    std::fs::write(&c, format!("{text}\n/* edited between the shards */\n")).unwrap();
    shard(1, None);
    let out = merge();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("another version of its bench"), "{err}");
    let merged = run_dirs(&p.path().join("output/saw4"))
        .into_iter()
        .filter(|d| d.to_string_lossy().contains("merged"))
        .count();
    assert_eq!(merged, 0, "nothing written");
    // The same bench again: the merge goes through.
    std::fs::write(&c, text).unwrap();
    for run in run_dirs(&p.path().join("output/saw4")) {
        if run.to_string_lossy().contains("shard-1-of-2") {
            std::fs::remove_dir_all(run).unwrap();
        }
    }
    shard(1, None);
    let out = merge();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// Review 9a, M1: a spec whose comments or layout alone changed since its unfinished run began
/// was refused with "the spec changed since ...:  differ": an empty list where the culprit goes.
/// The message says what changed.
#[test]
fn a_spec_changed_in_its_comments_alone_is_named_so_by_the_refused_resume() {
    let p = project();
    saw4(p.path());
    let (code, err, _) = run_saw4(p.path(), &[]);
    assert_eq!(code, Some(0), "{err}");
    let run = run_dirs(&p.path().join("output/saw4")).pop().unwrap();
    crate::hardening::unfinish(&run, 2);
    let spec = p.path().join("sweeps/saw4.toml");
    let text = std::fs::read_to_string(&spec).unwrap();
    std::fs::write(&spec, format!("# a comment added\n{text}")).unwrap();
    let out = sweep(p.path())
        .args(["run", "sweeps/saw4.toml", "-q", "--no-analyze"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("comments or layout only"), "{err}");
    assert!(!err.contains(":  differ"), "{err}");
}

/// Review 9a, M2: a `--cache` that is a file (or a link to one) stopped the run at its first
/// point with "cannot create a build folder ...: File exists (hint: ...; make room, then `sweep
/// resume RUN` ...)": no room was missing, and that resume met the same file again. The hint
/// says the cache is no folder and how to resume with another; that resume finishes the run.
#[test]
fn a_cache_that_is_a_file_is_named_so_and_the_resume_takes_another() {
    let p = project();
    saw4(p.path());
    let file = p.path().join("cache-file");
    std::fs::write(&file, "not a folder\n").unwrap();
    let link = p.path().join("cache-link");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    for cache in [&file, &link] {
        let (code, err, _) = run_saw4(p.path(), &["--cache", cache.to_str().unwrap()]);
        assert_eq!(code, Some(4), "{err}");
        assert!(
            err.contains("the build cache is a file, not a folder") && !err.contains("make room"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "not a folder\n");
    let run = run_dirs(&p.path().join("output/saw4")).pop().unwrap();
    let out = sweep(p.path())
        .args([
            "resume",
            run.to_str().unwrap(),
            "-q",
            "--no-analyze",
            "--cache",
            "cache",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(rows(&run.join("results.csv")).len(), 4);
}

/// Review 9a, M3: a row of a point that is no point of the run (pasted in by hand, from another
/// run or shard) in an unfinished run's results.csv was kept by the resume, exit 0, and read by
/// the analysis and charts as measured (here `threads=99` in a sweep of 1..4). The resume
/// refuses, naming the file, the point and its axis values (exit 3), and writes nothing.
#[test]
fn a_resume_refuses_a_row_of_no_point_of_the_run() {
    let p = project();
    saw4(p.path());
    let (code, err, _) = run_saw4(p.path(), &[]);
    assert_eq!(code, Some(0), "{err}");
    let run = run_dirs(&p.path().join("output/saw4")).pop().unwrap();
    crate::hardening::unfinish(&run, 2);
    let csv = run.join("results.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let second = text.lines().nth(1).unwrap();
    let (_, rest) = second.split_once(",1,").unwrap();
    let foreign = format!("{text}pdeadbeef0000,0,99,{rest}\n");
    std::fs::write(&csv, &foreign).unwrap();
    let out = sweep(p.path())
        .args(["run", "sweeps/saw4.toml", "-q", "--no-analyze"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("pdeadbeef0000") && err.contains("threads=99") && err.contains("results.csv"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(
        std::fs::read_to_string(&csv).unwrap(),
        foreign,
        "nothing written"
    );
    // Without the row, the run finishes.
    std::fs::write(&csv, &text).unwrap();
    let out = sweep(p.path())
        .args(["run", "sweeps/saw4.toml", "-q", "--no-analyze"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(rows(&csv).len(), 4);
}

/// Review 9a, M4: sweep stopped (SIGSTOP, or Ctrl-Z and `fg`) while a point's program ran, and
/// continued past the point's `run_timeout_s`, recorded the point `timeout` (exit 1), though its
/// program had ended in time: only sweep was stopped. A program that ended is never timed out.
#[test]
fn a_sweep_stopped_and_continued_times_out_no_program_that_ended_in_time() {
    let p = project();
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 8]")
        .replace(
            "compiler = \"cc\"\n",
            "compiler = \"cc\"\nrun_timeout_s = 1\n",
        )
        .replace("mode = \"ok\"", "mode = \"slow\"")
        .replace("slow_ms = 0", "slow_ms = 300")
        .replace("[analyze]\nx = \"threads\"\n", "");
    write(p.path(), "sweeps/stop.toml", &spec);
    // Built once before, so that the programs' runs take most of the run's time.
    sweep(p.path())
        .args(["build", "sweeps/stop.toml"])
        .env("SWEEP_CACHE", p.path().join("cache"))
        .assert()
        .success();
    let child = common::sweep_process(p.path())
        .args(["run", "sweeps/stop.toml", "-q", "--no-analyze"])
        .env("SWEEP_CACHE", p.path().join("cache"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    for _ in 0..3 {
        std::thread::sleep(std::time::Duration::from_millis(350));
        // SAFETY: stops and continues this test's own sweep.
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        std::thread::sleep(std::time::Duration::from_millis(1200));
        // SAFETY: as above.
        unsafe { libc::kill(pid, libc::SIGCONT) };
    }
    let out = child.wait_with_output().unwrap();
    // The run's folder, not the build's (`<stamp>-build`, which sorts after a run of its second).
    let run = run_dirs(&p.path().join("output/stop"))
        .into_iter()
        .rfind(|d| !d.to_string_lossy().ends_with("-build"))
        .unwrap();
    let statuses: Vec<String> = rows(&run.join("results.csv"))
        .iter()
        .map(|r| r["status"].clone())
        .collect();
    assert_eq!(out.status.code(), Some(0), "{statuses:?} {}", stderr(&out));
    assert_eq!(statuses, vec!["ok"; 8]);
}

/// Review 9a, H3: a bench file edited while a run ran (the next experiment prepared beside an
/// overnight sweep) went into the builds after the edit: the run finished with exit 0, its
/// last rows from the new program (here 7 times the value), its manifest naming the bench it
/// started with. A build that ends on another bench stops the run before recording the point
/// (exit 3, `interrupted`), and the resume, once the edit is undone, measures the rest.
#[test]
fn a_bench_edited_mid_run_stops_the_run_before_it_mixes_two_programs() {
    let p = project();
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 10]")
        .replace("mode = \"ok\"", "mode = \"slow\"")
        .replace("slow_ms = 0", "slow_ms = 250")
        .replace("[analyze]\nx = \"threads\"\n", "");
    write(p.path(), "sweeps/edit.toml", &spec);
    let child = common::sweep_process(p.path())
        .args(["run", "sweeps/edit.toml", "-q", "--no-analyze", "-j", "1"])
        .env_remove("SWEEP_CACHE")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let sweep_dir = p.path().join("output/edit");
    let measured = || {
        sweep_dir.is_dir()
            && run_dirs(&sweep_dir).pop().is_some_and(|d| {
                std::fs::read_to_string(d.join("results.csv")).is_ok_and(|t| t.lines().count() > 1)
            })
    };
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !measured() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let source = p.path().join("cuda/hostsaw/hostsaw.c");
    let text = std::fs::read_to_string(&source).unwrap();
    let edited = text.replace("double v = 1000.0", "double v = 7000.0");
    assert_ne!(edited, text);
    std::fs::write(&source, &edited).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    let run = run_dirs(&p.path().join("output/edit")).pop().unwrap();
    let values = |run: &Path| -> Vec<(String, String)> {
        rows(&run.join("results.csv"))
            .iter()
            .map(|r| (r["threads"].clone(), r["saw_mflops"].clone()))
            .collect()
    };
    let old = |v: &[(String, String)]| {
        v.iter()
            .all(|(t, m)| m.parse::<f64>().unwrap() == 1000.0 * t.parse::<f64>().unwrap())
    };
    let got = values(&run);
    assert!(old(&got), "rows of the edited program: {got:?}");
    assert_eq!(out.status.code(), Some(3), "{got:?} {err}");
    assert!(
        err.contains("the bench `hostsaw` changed while the run ran") && err.lines().count() == 1,
        "{err}"
    );
    assert_eq!(common::manifest(&run)["state"], "interrupted");
    std::fs::write(&source, &text).unwrap();
    let out = sweep(p.path())
        .args(["resume", run.to_str().unwrap(), "-q", "--no-analyze"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let got = values(&run);
    assert_eq!(got.len(), 10);
    assert!(old(&got), "{got:?}");
}

/// Review 9a, M5: where a file (or a link to one) holds the name of the sweep's folder in the
/// output folder (`output/saw4`), the run said "cannot write `output`: Not a directory": the
/// output folder, which is one, was blamed. The file is named.
#[test]
fn a_file_in_the_place_of_the_sweeps_folder_is_named() {
    let p = project();
    saw4(p.path());
    std::fs::create_dir(p.path().join("output")).unwrap();
    std::fs::write(p.path().join("output/saw4"), "a file\n").unwrap();
    let out = sweep(p.path())
        .args(["run", "sweeps/saw4.toml", "-q", "--no-analyze"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains("`output/saw4`"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(
        std::fs::read_to_string(p.path().join("output/saw4")).unwrap(),
        "a file\n"
    );
}

/// Review 9a, M6: `--jobs 0` ran the sweep with one build while it said "0 build jobs" and
/// recorded `jobs: 0`. It is refused as a usage error (exit 2) naming the value and the range;
/// a huge count stays allowed (no more threads than points are made: review 4).
#[test]
fn jobs_zero_is_refused() {
    let p = project();
    saw4(p.path());
    for jobs in ["0", "many"] {
        let out = sweep(p.path())
            .args([
                "run",
                "sweeps/saw4.toml",
                "-q",
                "--no-analyze",
                "--jobs",
                jobs,
            ])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{jobs}: {err}");
        assert!(
            err.contains(&format!("`{jobs}`")) && err.contains("1 or more"),
            "{err}"
        );
    }
    assert!(!p.path().join("output").exists(), "nothing ran");
    let (code, err, rows) = run_saw4(p.path(), &["--jobs", "10000"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(rows.len(), 4);
}

/// Review 9a, M7: a program that printed its metric on stderr was `no_metric` with "no metric
/// `mflops` in the output" and the log of its stdout, the file without the line: the user was
/// sent to look where the metric is not. The error says it is on stderr.
#[test]
fn a_metric_printed_on_stderr_is_said_to_be_there() {
    let p = project();
    write(
        p.path(),
        "cuda/errout/errout.c",
        "#include \"params.h\"\n#include <stdio.h>\nint main(void) {\n  fprintf(stderr, \"MFlops: %d\\n\", THREADS);\n  return 0;\n}\n",
    );
    write(
        p.path(),
        "cuda/errout/params.h.tera",
        "#define THREADS {{ threads }}\n",
    );
    write(
        p.path(),
        "sweeps/errout.toml",
        "bench = \"errout\"\ncompiler = \"cc\"\n[[axis]]\nname = \"threads\"\nrange = [1, 2]\n[[metric]]\npattern = \"mflops\"\n",
    );
    let out = sweep(p.path())
        .args(["run", "sweeps/errout.toml", "-q", "--no-analyze"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let run = run_dirs(&p.path().join("output/errout")).pop().unwrap();
    for row in rows(&run.join("results.csv")) {
        assert_eq!(row["status"], "no_metric");
        assert!(
            row["error"].contains("`mflops` on stderr, not stdout")
                && row["error"].contains("stderr.txt"),
            "{}",
            row["error"]
        );
    }
}

/// Review 9a, M8: `sweep resume` of a merged folder (`<stamp>-merged`) said "the unfinished run
/// ... of shard merged deals its points by points; --split series would give it another shard's
/// points", of a run that is neither unfinished nor a shard's. It is refused as a merge (exit
/// 2), and nothing is written into it.
#[test]
fn resume_of_a_merged_folder_says_it_is_a_merge() {
    let p = project();
    saw4(p.path());
    for i in 0..2 {
        sweep(p.path())
            .args([
                "run",
                "sweeps/saw4.toml",
                "-q",
                "--no-analyze",
                "--split",
                "points",
            ])
            .args(["--shard", &format!("{i}/2")])
            .assert()
            .success();
    }
    sweep(p.path())
        .args(["merge", "output/saw4"])
        .assert()
        .success();
    let merged = run_dirs(&p.path().join("output/saw4"))
        .into_iter()
        .find(|d| d.to_string_lossy().ends_with("-merged"))
        .unwrap();
    let before = std::fs::read(merged.join("results.csv")).unwrap();
    let out = sweep(p.path())
        .args(["resume", merged.to_str().unwrap(), "-q", "--no-analyze"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is a `sweep merge` folder, not a run"),
        "{err}"
    );
    assert_eq!(std::fs::read(merged.join("results.csv")).unwrap(), before);
}

/// Review 9a, M9: a run interrupted (SIGTERM) before its first point ended said "interrupted
/// after 0 points in 2 s: nothing to do; ... run the same command again to resume": the sweep
/// had every point to do. It says none is measured yet.
#[test]
fn a_run_interrupted_before_its_first_point_does_not_say_nothing_to_do() {
    let p = project();
    saw4(p.path());
    let tools = p.path().join("slowcc");
    std::fs::create_dir(&tools).unwrap();
    let path = std::env::var("PATH").unwrap_or_default();
    common::script(
        &tools.join("cc"),
        &format!("#!/bin/sh\nPATH={path}\nif [ \"$1\" = --version ]; then exec cc --version; fi\nsleep 2\nexec cc \"$@\"\n"),
    );
    let child = common::sweep_process(p.path())
        .args(["run", "sweeps/saw4.toml", "-q", "--no-analyze"])
        .env("PATH", format!("{}:{path}", tools.display()))
        .env_remove("SWEEP_CACHE")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(700));
    // SAFETY: signals this test's own sweep.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    let said = format!("{}{}", common::stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(130), "{said}");
    assert!(said.contains("none measured yet"), "{said}");
    assert!(!said.contains("nothing to do"), "{said}");
}

/// Review 9a's open medium: SIGTERM (or Ctrl-C) waited for the builds already running, up to
/// `build_timeout_s` (300 s), and then ran none of them: past Slurm's 30 s grace before its
/// SIGKILL. A build the interrupted run will not use is killed at once; its point is no failure
/// (no row), and the resume builds and measures every point.
#[test]
fn an_interrupt_does_not_wait_for_the_builds_in_flight() {
    let p = project();
    saw4(p.path());
    let tools = p.path().join("slowcc");
    std::fs::create_dir(&tools).unwrap();
    let path = std::env::var("PATH").unwrap_or_default();
    common::script(
        &tools.join("cc"),
        &format!("#!/bin/sh\nPATH={path}\nif [ \"$1\" = --version ]; then exec cc --version; fi\nsleep 30\nexec cc \"$@\"\n"),
    );
    let child = common::sweep_process(p.path())
        .args(["run", "sweeps/saw4.toml", "-q", "--no-analyze"])
        .env("PATH", format!("{}:{path}", tools.display()))
        .env_remove("SWEEP_CACHE")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let t0 = std::time::Instant::now();
    // SAFETY: signals this test's own sweep.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    let took = t0.elapsed();
    let said = format!("{}{}", common::stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(130), "{said}");
    assert!(
        took.as_secs_f64() < 10.0,
        "took {took:?} after SIGTERM: {said}"
    );
    let run = run_dirs(&p.path().join("output/saw4")).pop().unwrap();
    assert!(
        rows(&run.join("results.csv")).is_empty(),
        "a killed build was recorded: {said}"
    );
    let manifest = std::fs::read_to_string(run.join("manifest.json")).unwrap();
    assert!(manifest.contains("\"interrupted\""), "{manifest}");
    // The resume (the same compiler, no longer slow) measures every point.
    common::script(
        &tools.join("cc"),
        &format!("#!/bin/sh\nPATH={path}\nexec cc \"$@\"\n"),
    );
    let out = sweep(p.path())
        .args(["run", "sweeps/saw4.toml", "-q", "--no-analyze"])
        .env("PATH", format!("{}:{path}", tools.display()))
        .env_remove("SWEEP_CACHE")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rows = rows(&run.join("results.csv"));
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(|r| r["status"] == "ok"), "{rows:?}");
}

/// Review 10a, L1: the first Ctrl-C while the compiler answered `--version` (a wrapper waiting
/// on a licence server) said "finishing the current point" and waited for it, up to the build
/// timeout: there was no point to finish. Before the run has its folder the first Ctrl-C ends
/// sweep at once, its children killed.
#[test]
fn an_interrupt_before_the_run_has_its_folder_ends_sweep_at_once() {
    let p = project();
    saw4(p.path());
    let tools = p.path().join("slowcc");
    std::fs::create_dir(&tools).unwrap();
    let path = std::env::var("PATH").unwrap_or_default();
    let secs = format!("{}", 700_000 + std::process::id());
    common::script(
        &tools.join("cc"),
        &format!("#!/bin/sh\nPATH={path}\nif [ \"$1\" = --version ]; then sleep {secs}; fi\nexec cc \"$@\"\n"),
    );
    let child = common::sweep_process(p.path())
        .args(["run", "sweeps/saw4.toml", "-q", "--no-analyze"])
        .env("PATH", format!("{}:{path}", tools.display()))
        .env_remove("SWEEP_CACHE")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while common::sleeps(&secs).is_empty() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(!common::sleeps(&secs).is_empty(), "--version never asked");
    let t0 = std::time::Instant::now();
    // SAFETY: signals this test's own sweep.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let said = format!("{}{}", common::stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(130), "{said}");
    assert!(
        t0.elapsed().as_secs_f64() < 5.0,
        "{:?}: {said}",
        t0.elapsed()
    );
    assert!(said.contains("before any point ran"), "{said}");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        common::sleeps(&secs).is_empty(),
        "the --version query outlived sweep"
    );
}
