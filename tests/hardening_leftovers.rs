//! The lows the last review of issue 38 left open: JSON on stdout mixed with the summary, output
//! options that overwrite the command's own input, decomposed unicode in axis values, a `setsid`
//! grandchild that outlived its point, hidden folders of killed runs, and a resume from another
//! folder. Real files, real programs (cc), real processes.

use crate::common::{self, project, rows, run_dirs, stderr, stdout, sweep};
use crate::hardening::{unfinish, write};
use std::path::{Path, PathBuf};

/// `sweeps/saw.toml` over 4 points, as `sweeps/s4.toml`.
fn saw4(p: &Path) {
    let spec = std::fs::read_to_string(p.join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 4]");
    std::fs::write(p.join("sweeps/s4.toml"), spec).unwrap();
}

/// A finished run of `sweeps/s4.toml`.
fn finished_s4(p: &Path) -> PathBuf {
    saw4(p);
    let out = sweep(p)
        .args(["run", "sweeps/s4.toml", "-q", "--no-analyze"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    run_dirs(&p.join("output/s4")).pop().unwrap()
}

/// The points of the run's JSON that `text` is, all of it: nothing else on stdout.
fn json_points(text: &str) -> usize {
    let v: serde_json::Value = serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}):\n{text}"));
    v["points"].as_array().unwrap().len()
}

/// Low 1: `--export-json /dev/stdout` wrote the closing summary on stdout around the JSON, so
/// `| python3 -m json.tool` failed, and `--export-json -` wrote a file named `-`. With the JSON
/// on stdout, everything else goes to stderr; a resume from another folder does the same.
#[test]
fn json_on_stdout_is_all_that_stdout_holds() {
    let p = project();
    saw4(p.path());
    for target in ["-", "/dev/stdout"] {
        let out = sweep(p.path())
            .args(["run", "sweeps/s4.toml", "--force", "--export-json", target])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(json_points(&stdout(&out)), 4, "{target}");
        assert!(
            stderr(&out).contains("finished 4 points"),
            "{}",
            stderr(&out)
        );
    }
    assert!(!p.path().join("-").exists(), "a file named `-` was written");
    // A resume, from another folder: `-` is still stdout, not a file there.
    let run = run_dirs(&p.path().join("output/s4")).pop().unwrap();
    unfinish(&run, 1);
    let elsewhere = tempfile::tempdir().unwrap();
    let out = sweep(elsewhere.path())
        .args(["resume", run.to_str().unwrap(), "-q", "--export-json", "-"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json_points(&stdout(&out)), 4);
    assert!(
        stderr(&out).contains("finished 3 points"),
        "{}",
        stderr(&out)
    );
    assert!(!elsewhere.path().join("-").exists());
}

/// Runs `sweep args` in `p`, expects exit 2 and one line naming `named`, and `file` unchanged.
fn refused_keeping(p: &Path, args: &[&str], named: &str, file: &Path) {
    let before = std::fs::read(file).unwrap();
    let out = sweep(p).args(args).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(
        err.contains(&format!("would overwrite `{named}`")) && err.contains("(hint: "),
        "{args:?}: {err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(std::fs::read(file).unwrap(), before, "{args:?} changed it");
}

/// Low 2: an output option pointed at one of the command's own inputs overwrote it: `run
/// --export-json` over the spec or the bench's program, `analyze` of a CSV named analysis.csv
/// (beside it or with --out), `compare --out` over compare.csv it compares, `export --out` into a
/// folder whose results.csv links to the run's, `report --out` likewise. Each is refused naming
/// the file, which stays.
#[test]
fn an_output_over_an_input_of_the_command_is_refused_and_the_input_kept() {
    let p = project();
    let run = finished_s4(p.path());
    let dir = p.path();
    let spec = dir.join("sweeps/s4.toml");
    let args = ["run", "sweeps/s4.toml", "--force", "--export-json"];
    refused_keeping(
        dir,
        &[&args[..], &["sweeps/s4.toml"]].concat(),
        "sweeps/s4.toml",
        &spec,
    );
    let program = "cuda/hostsaw/hostsaw.c";
    refused_keeping(
        dir,
        &[&args[..], &[program]].concat(),
        program,
        &dir.join(program),
    );
    assert_eq!(run_dirs(&dir.join("output/s4")).len(), 1, "nothing ran");
    // A CSV named as the analysis it would get.
    std::fs::create_dir(dir.join("d")).unwrap();
    let csv = dir.join("d/analysis.csv");
    std::fs::copy(run.join("results.csv"), &csv).unwrap();
    refused_keeping(dir, &["analyze", "d/analysis.csv"], "d/analysis.csv", &csv);
    let args = ["analyze", "d/analysis.csv", "--out", "d"];
    refused_keeping(dir, &args, "d/analysis.csv", &csv);
    // compare's own output file as its B.
    let cmp = dir.join("d/compare.csv");
    std::fs::copy(run.join("results.csv"), &cmp).unwrap();
    let a = run.to_str().unwrap();
    refused_keeping(
        dir,
        &["compare", a, "d/compare.csv", "--out", "d"],
        "d/compare.csv",
        &cmp,
    );
    // export into a folder whose results.csv is the run's, through a link.
    std::fs::create_dir(dir.join("e")).unwrap();
    std::os::unix::fs::symlink(run.join("results.csv"), dir.join("e/results.csv")).unwrap();
    let results = run.join("results.csv");
    refused_keeping(
        dir,
        &["export", a, "--format", "csv", "--out", "e"],
        "e/results.csv",
        &results,
    );
    // report --out into a folder whose report.html is the run's results.csv, through a link.
    std::fs::create_dir(dir.join("g")).unwrap();
    std::os::unix::fs::symlink(run.join("results.csv"), dir.join("g/report.html")).unwrap();
    refused_keeping(dir, &["report", a, "--out", "g"], "g/report.html", &results);
    // Output elsewhere still works.
    let out = sweep(dir)
        .args(["analyze", "d/analysis.csv", "--out", "f"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(dir.join("f/analysis.csv").is_file());
}

/// Low 3: `"é"` (U+00E9) and `"e\u0301"` were two axis values, two points, two series that look
/// alike in every output. Text written decomposed is refused with its code points and a hint, in
/// the spec and through `-a`; composed text runs.
#[test]
fn an_axis_value_written_decomposed_is_refused_naming_its_code_points() {
    let p = project();
    let spec = |values: &str| {
        format!("bench = \"hostsaw\"\ncompiler = \"cc\"\n[vars]\nmode = \"ok\"\nslow_ms = 0\n[[axis]]\nname = \"threads\"\nrange = [1, 2]\n[[axis]]\nname = \"v\"\nvalues = [{values}]\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n")
    };
    write(
        p.path(),
        "sweeps/u.toml",
        &spec("\"\\u00e9\", \"e\\u0301\""),
    );
    let check = |args: &[&str], at: &str| {
        let out = sweep(p.path()).args(args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{err}");
        assert!(
            err.contains(at)
                && err.contains(
                    "axis `v` has the value `e\u{301}` written decomposed (U+0065 U+0301"
                )
                && err.contains("hint: write the letter with its accent as one character"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    };
    check(&["plan", "sweeps/u.toml"], "sweeps/u.toml:9:");
    check(&["run", "sweeps/u.toml", "-q"], "sweeps/u.toml:9:");
    assert!(!p.path().join("output/u").exists(), "nothing ran");
    write(p.path(), "sweeps/u.toml", &spec("\"\\u00e9\", \"b\""));
    check(
        &["plan", "sweeps/u.toml", "-a", "v=e\u{301},b"],
        "with -a v=",
    );
    let out = sweep(p.path())
        .args(["plan", "sweeps/u.toml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("v=\u{e9}"), "{}", stdout(&out));
}

/// A bench `esc` whose program starts `setsid sleep <secs> &` (out of its process group, which
/// sweep kills), then waits forever where `hang` is 1, and prints its MFlops; `sweeps/esc.toml`
/// over threads 1..4 and hang 1, 0 (the first point hangs), with a `run_timeout_s` of `timeout`.
/// The seconds (returned) are no other test's: this test's sleeps are found by their command line.
fn escaping_bench(p: &Path, timeout: u32) -> String {
    let secs = format!("{}", 500_000 + std::process::id() * 2 + timeout);
    write(
        p,
        "cuda/esc/esc.c",
        &format!("#include \"params.h\"\n#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\nint main(void) {{\n  system(\"setsid sleep {secs} &\");\n  if (HANG) pause();\n  printf(\"MFlops: %d\\n\", THREADS);\n  return 0;\n}}\n"),
    );
    write(
        p,
        "cuda/esc/params.h.tera",
        "#define THREADS {{ threads }}\n#define HANG {{ hang }}\n",
    );
    write(
        p,
        "sweeps/esc.toml",
        &format!("bench = \"esc\"\ncompiler = \"cc\"\nrun_timeout_s = {timeout}\n[[axis]]\nname = \"threads\"\nrange = [1, 4]\n[[axis]]\nname = \"hang\"\nvalues = [1, 0]\n[[metric]]\npattern = \"mflops\"\n"),
    );
    secs
}

/// Kills the sleeps of `secs` still running (so that a failing test leaves none), and says
/// which were.
fn kill_sleeps(secs: &str) -> Vec<i32> {
    let left = common::sleeps(secs);
    for pid in &left {
        // SAFETY: kills this test's own leftover sleeps.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    left
}

/// Low 4: a program that started `setsid sleep 1000 &` (out of its process group, which sweep
/// kills) left it running after the point ended, by a normal exit or a timeout. sweep kills what
/// a point left behind; the points (built in parallel) all measure.
#[test]
fn a_setsid_grandchild_does_not_outlive_its_point() {
    if !common::on_path("setsid") {
        return common::skip("no setsid on PATH");
    }
    let p = project();
    let secs = escaping_bench(p.path(), 1);
    let out = sweep(p.path())
        .args(["run", "sweeps/esc.toml", "-q", "--no-analyze", "-j", "4"])
        .output()
        .unwrap();
    let left = kill_sleeps(&secs);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        left.is_empty(),
        "{} `setsid sleep` survived their points: {left:?}",
        left.len()
    );
    let run = run_dirs(&p.path().join("output/esc")).pop().unwrap();
    let statuses: Vec<(String, String)> = rows(&run.join("results.csv"))
        .into_iter()
        .map(|r| (r["hang"].clone(), r["status"].clone()))
        .collect();
    assert_eq!(statuses.len(), 8);
    for (hang, status) in statuses {
        let want = if hang == "1" { "timeout" } else { "ok" };
        assert_eq!(status, want, "hang={hang}");
    }
}

/// The same when sweep itself is SIGKILLed while such a program waits: the guard, which outlives
/// sweep, kills what carries sweep's marks wherever it was reparented.
#[test]
fn a_setsid_grandchild_does_not_outlive_a_sigkilled_sweep() {
    if !common::on_path("setsid") {
        return common::skip("no setsid on PATH");
    }
    let p = project();
    let secs = escaping_bench(p.path(), 600);
    let mut child = common::sweep_process(p.path())
        .args(["run", "sweeps/esc.toml", "-q", "--no-analyze"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Until the first point, which hangs, has started its sleep.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while common::sleeps(&secs).is_empty() {
        if std::time::Instant::now() > until {
            let _ = child.kill();
            kill_sleeps(&secs);
            panic!("no sleep started");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        !common::sleeps(&secs).is_empty(),
        "the hanging point's sleep"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !common::sleeps(&secs).is_empty() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let left = kill_sleeps(&secs);
    assert!(
        left.is_empty(),
        "`setsid sleep` outlived the killed sweep: {left:?}"
    );
}

/// A hidden folder `name` in `dir` that looks like a whole run (a copy of `run`), last changed
/// ten minutes ago.
fn hidden_copy(run: &Path, dir: &Path, name: &str) -> PathBuf {
    let d = dir.join(name);
    std::fs::create_dir_all(&d).unwrap();
    for f in ["manifest.json", "results.csv"] {
        std::fs::copy(run.join(f), d.join(f)).unwrap();
    }
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(600);
    std::fs::File::open(&d).unwrap().set_modified(old).unwrap();
    d
}

/// Low 5: hidden `.new-<pid>` and `.merge-<pid>` folders of killed runs stayed for good, and a
/// command given one read it as a run. The next run removes those whose sweep is dead, and only
/// those; a reader given one refuses it, naming it.
#[test]
fn hidden_folders_of_dead_sweeps_go_and_are_never_read_as_runs() {
    let p = project();
    let run = finished_s4(p.path());
    let sweep_dir = p.path().join("output/s4");
    // A pid that is dead: a child that ended and was reaped.
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    // A live one: this test's own child.
    let mut live = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    // Named as a sweep names them: its pid, a random part and its host.
    let host = sweep::owner::host_name();
    let dead_new = hidden_copy(&run, &sweep_dir, &format!(".new-{dead}-{:016x}-{host}", 1));
    let dead_merge = hidden_copy(
        &run,
        &sweep_dir,
        &format!(".merge-{dead}-{:016x}-{host}", 2),
    );
    let live_new = hidden_copy(&run, &sweep_dir, &format!(".new-{}", live.id()));
    let other = hidden_copy(&run, &sweep_dir, ".keep-me");
    // Never read as a run: named explicitly, refused.
    let shown = format!("output/s4/.new-{}", live.id());
    for args in [
        vec!["export", &shown, "--format", "json"],
        vec!["resume", &shown],
        vec!["report", &shown],
    ] {
        let out = sweep(p.path()).args(&args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert!(
            err.contains(&format!("{shown}` is the hidden folder")) && err.contains("hint: "),
            "{args:?}: {err}"
        );
    }
    assert!(!live_new.join("export").exists() && !live_new.join("report.html").exists());
    // The next run removes the dead sweeps' folders only.
    let out = sweep(p.path())
        .args(["run", "sweeps/s4.toml", "-q", "--no-analyze", "--force"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let _ = live.kill();
    let _ = live.wait();
    assert!(!dead_new.exists() && !dead_merge.exists());
    assert!(live_new.exists() && other.exists());
}

/// Low 6: `sweep resume RUN` from another folder read the run's relative `--cache` and
/// `--output` in the folder of start, not as given: every remaining point rebuilt into a new
/// `output/.cache` there. The resume uses the cache the run started with and the run's own output
/// folder; a `--cache` given to the resume is read from where the user is.
#[test]
fn a_resume_from_another_folder_uses_the_runs_cache_and_output() {
    let p = project();
    saw4(p.path());
    let out = sweep(p.path())
        .args(["run", "sweeps/s4.toml", "-q", "--no-analyze"])
        .args(["--cache", "mycache", "--output", "out2"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let run = run_dirs(&p.path().join("out2/s4")).pop().unwrap();
    let cache = p.path().join("mycache").canonicalize().unwrap();
    let recorded = common::manifest(&run)["cache"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(Path::new(&recorded).canonicalize().unwrap(), cache);
    let cached = |run: &Path| -> Vec<String> {
        rows(&run.join("results.csv"))
            .into_iter()
            .map(|r| r["cached"].clone())
            .collect()
    };
    unfinish(&run, 1);
    let elsewhere = tempfile::tempdir().unwrap();
    let out = sweep(elsewhere.path())
        .args(["resume", run.to_str().unwrap(), "-q", "--no-analyze"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(cached(&run), ["0", "1", "1", "1"], "built again");
    assert!(
        !p.path().join("output").exists(),
        "a new output folder at the start's"
    );
    assert!(!elsewhere.path().join("output").exists());
    // --cache given to the resume: from where the user is.
    unfinish(&run, 1);
    let out = sweep(elsewhere.path())
        .args(["resume", run.to_str().unwrap(), "-q", "--no-analyze"])
        .args(["--cache", "here"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(cached(&run), ["0", "0", "0", "0"]);
    assert!(elsewhere.path().join("here").is_dir());
    assert!(!p.path().join("here").exists());
}
