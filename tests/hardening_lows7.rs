//! The lows the last review of issue 38 left open (round 7): JSON lost on a closed stdout, merge
//! messages that said "there/here" or merged a run with itself, a 2 MB axis value that took
//! minutes to chart, readers that disagreed on a last row without a line break, exports of a run
//! without rows, a 0-byte CSV, numbers written with hundreds of digits, "1 points", and a `sweep
//! list` as slow as planning every spec. Real files, real runs (cc), real processes.

use crate::common::{self, project, rows, run_dirs, stderr, stdout, sweep};
use crate::hardening::write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `sweeps/saw.toml` over 4 points, as `sweeps/s4.toml`.
fn saw4(p: &Path) {
    let spec = std::fs::read_to_string(p.join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 4]");
    std::fs::write(p.join("sweeps/s4.toml"), spec).unwrap();
}

/// A finished run of `sweeps/s4.toml` (4 points, all ok).
fn finished_s4(p: &Path) -> PathBuf {
    saw4(p);
    let out = sweep(p)
        .args(["run", "sweeps/s4.toml", "-q", "--no-analyze"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    run_dirs(&p.join("output/s4")).pop().unwrap()
}

/// The two shard runs of `sweeps/s4.toml`, its points dealt round-robin (points 0, 2 and 1, 3).
fn two_shards(p: &Path) -> (PathBuf, PathBuf) {
    saw4(p);
    for shard in ["0/2", "1/2"] {
        let out = sweep(p)
            .args(["run", "sweeps/s4.toml", "-q", "--no-analyze"])
            .args(["--shard", shard, "--split", "points"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let runs = run_dirs(&p.join("output/s4"));
    let of = |s: &str| {
        runs.iter()
            .find(|r| r.to_string_lossy().contains(s))
            .unwrap()
            .clone()
    };
    (of("shard-0-of-2"), of("shard-1-of-2"))
}

/// Low 1: `--export-json -` with stdout closed (`>&-`) wrote the JSON into the /dev/null that
/// Rust's runtime opens there, and exited 0: the JSON was lost unsaid. A JSON that cannot be
/// written to stdout (closed: EBADF; full: ENOSPC) is a failure of the environment, exit 4, in one
/// warning line; the run's own files are whole.
#[test]
fn json_to_a_closed_or_full_stdout_is_a_failure_and_the_run_is_kept() {
    use std::os::unix::process::CommandExt;
    let p = project();
    saw4(p.path());
    let mut closed = common::sweep_process(p.path());
    closed
        .args([
            "run",
            "sweeps/s4.toml",
            "-q",
            "--no-analyze",
            "--export-json",
            "-",
        ])
        .env_remove("SWEEP_CACHE")
        .stderr(std::process::Stdio::piped());
    // SAFETY: only closes fd 1 of the child between fork and exec.
    unsafe {
        closed.pre_exec(|| {
            libc::close(1);
            Ok(())
        });
    }
    let out = closed.output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    let warning: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("--export-json"))
        .collect();
    assert_eq!(warning.len(), 1, "{err}");
    assert!(
        warning[0].contains("Bad file descriptor")
            && warning[0].contains("(hint: stdout is closed"),
        "{err}"
    );
    let run = run_dirs(&p.path().join("output/s4")).pop().unwrap();
    assert_eq!(rows(&run.join("results.csv")).len(), 4);
    assert_eq!(common::manifest(&run)["state"], "finished");

    // A full stdout (ENOSPC) is the same failure.
    if Path::new("/dev/full").exists() {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = common::sweep_process(p.path())
            .args(["run", "sweeps/s4.toml", "-q", "--force", "--no-analyze"])
            .args(["--export-json", "-"])
            .env_remove("SWEEP_CACHE")
            .stdout(full)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("No space left on device"),
            "{}",
            stderr(&out)
        );
    }
    // Stdout sent to /dev/null by the user is their choice: no failure.
    let out = common::sweep_process(p.path())
        .args(["run", "sweeps/s4.toml", "-q", "--force", "--no-analyze"])
        .args(["--export-json", "-"])
        .env_remove("SWEEP_CACHE")
        .stdout(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// Low 2: merge's messages about two runs said "column 6 is `x` there and `y` here", naming
/// neither; a point in two shards named both runs but not whether their values differ. Each
/// message names both runs' folders (and the point, with its values where they differ).
#[test]
fn merge_messages_name_both_runs_and_the_point() {
    let p = project();
    let (a, b) = two_shards(p.path());
    let (a_name, b_name) = (a.display().to_string(), b.display().to_string());

    // A point of shard 0 (threads=3) written into shard 1 too, with another value.
    let a_csv = std::fs::read_to_string(a.join("results.csv")).unwrap();
    let three = a_csv.lines().find(|l| l.contains(",2,3,ok,3000,")).unwrap();
    let mut b_csv = std::fs::read_to_string(b.join("results.csv")).unwrap();
    b_csv += &format!("{}\r\n", three.replacen(",3000,", ",1234,", 1));
    std::fs::write(b.join("results.csv"), &b_csv).unwrap();
    // And listed by shard 1's manifest, as shards of two shardings overlap (a row no manifest
    // lists is refused as any reader refuses it).
    let id = three.split(',').next().unwrap();
    let mut m = crate::common::manifest(&b);
    m["point_ids"].as_array_mut().unwrap().push(id.into());
    std::fs::write(b.join("manifest.json"), m.to_string()).unwrap();
    let out = sweep(p.path())
        .args(["merge", &a_name, &b_name])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    for said in [
        "1 point appears more than once",
        "(threads=3; in",
        &format!("`{a_name}` and `{b_name}`"),
        &format!("with other values: `saw_mflops` 3000 in `{a_name}`, 1234 in `{b_name}`"),
    ] {
        assert!(err.contains(said), "{said}: {err}");
    }

    // Another header: both runs named, no "there" or "here".
    let renamed = b_csv.replacen("saw_median_mflops", "saw_med_mflops", 1);
    std::fs::write(b.join("results.csv"), renamed).unwrap();
    let out = sweep(p.path())
        .args(["merge", &a_name, &b_name])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains(&format!(
            "column 6 is `saw_med_mflops` in `{b_name}` and `saw_median_mflops` in `{a_name}`"
        )),
        "{err}"
    );
    assert!(!err.contains(" there") && !err.contains(" here"), "{err}");
}

/// Low 3: `sweep merge A A` (or `A ./A/`, or a sweep folder and one of its runs) merged the run
/// once and said only "N missing". A run given twice is refused in one line naming the folder
/// (canonical) and how it was given, exit 3, and nothing is written.
#[test]
fn a_run_given_twice_to_merge_is_refused_naming_it() {
    let p = project();
    let (a, _) = two_shards(p.path());
    let rel = a.strip_prefix(p.path()).unwrap().display().to_string();
    let real = a.canonicalize().unwrap().display().to_string();
    for args in [
        vec![rel.clone(), rel.clone()],
        vec![rel.clone(), format!("./{rel}/")],
        vec!["output/s4".to_string(), rel.clone()],
    ] {
        let before = run_dirs(&p.path().join("output/s4")).len();
        let out = sweep(p.path()).arg("merge").args(&args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!("run `{real}` is given twice")) && err.contains("(hint: "),
            "{args:?}: {err}"
        );
        assert_eq!(
            run_dirs(&p.path().join("output/s4")).len(),
            before,
            "written"
        );
    }
}

/// Low 4: an axis value of 2 MB made `sweep plot` and `sweep report` take minutes (every fit of
/// a legend entry or a title measured all 2 MB of it, dozens of times per chart), and the
/// progress line panicked padding to it. Charts measure only what they could show and cut the
/// rest with `…`; the CSV keeps the whole value.
#[test]
fn a_two_megabyte_axis_value_charts_in_seconds_and_is_cut_there() {
    let p = project();
    let big = "v".repeat(2_000_000);
    write(
        p.path(),
        "sweeps/big.toml",
        &format!("bench = \"hostsaw\"\ncompiler = \"cc\"\n[vars]\nslow_ms = 0\n[[axis]]\nname = \"threads\"\nrange = [1, 2]\n[[axis]]\nname = \"mode\"\nvalues = [\"ok\", \"{big}\"]\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n[analyze]\nx = \"threads\"\n"),
    );
    let out = sweep(p.path())
        .args(["run", "sweeps/big.toml", "--no-analyze"])
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        &stderr(&out)[..stderr(&out).len().min(2000)]
    );
    let run = run_dirs(&p.path().join("output/big")).pop().unwrap();
    assert!(rows(&run.join("results.csv"))
        .iter()
        .any(|r| r["mode"] == big));
    for (args, limit) in [(["plot"], 90), (["report"], 90)] {
        let started = Instant::now();
        let out = sweep(p.path())
            .args(args)
            .arg(&run)
            .timeout(Duration::from_secs(limit))
            .output()
            .unwrap();
        let took = started.elapsed();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?} after {took:?}: {}",
            stderr(&out)
        );
    }
    let family = std::fs::read_to_string(run.join("charts/family-saw-by-mode.svg")).unwrap();
    assert!(
        family.contains("vvvvvvvvvv…"),
        "the legend cuts the value with an ellipsis"
    );
    assert!(family.len() < 200_000, "{} bytes of SVG", family.len());
}

/// The run folder `run` copied to `to`, its analysis and exports left behind.
fn copy_run(run: &Path, to: &Path) -> PathBuf {
    for e in walkdir::WalkDir::new(run)
        .into_iter()
        .filter_map(Result::ok)
    {
        let dst = to.join(e.path().strip_prefix(run).unwrap());
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&dst).unwrap();
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
    to.to_path_buf()
}

/// What each reader makes of `run` (its results.csv as the test left it): the points it counts
/// (compare, export, report, merge) and whether each warned of a torn row at line 5.
fn readers_of(p: &Path, run: &Path, other: &Path) -> Vec<(&'static str, usize, bool)> {
    let warned = |out: &std::process::Output| {
        let err = stderr(out);
        let w: Vec<&str> = err.lines().filter(|l| l.starts_with("warning: ")).collect();
        assert!(w.len() <= 1, "one warning at most: {err}");
        w.first().is_some_and(|l| {
            l.contains(&format!(
                "`{}` line 5: its last row is torn",
                run.join("results.csv").display()
            ))
        })
    };
    let mut seen = Vec::new();
    let out = sweep(p).arg("analyze").arg(run).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    seen.push(("analyze", usize::MAX, warned(&out)));
    let out = sweep(p)
        .arg("compare")
        .arg(run)
        .arg(other)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let matched = stdout(&out)
        .lines()
        .find_map(|l| l.split(" point").next()?.parse::<usize>().ok())
        .unwrap();
    seen.push(("compare", matched, warned(&out)));
    let exported = tempfile::tempdir().unwrap();
    let out = sweep(p)
        .arg("export")
        .arg(run)
        .args(["--format", "csv", "--out"])
        .arg(exported.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    seen.push((
        "export",
        rows(&exported.path().join("results.csv")).len(),
        warned(&out),
    ));
    let page = tempfile::tempdir().unwrap();
    let out = sweep(p)
        .arg("report")
        .arg(run)
        .arg("--out")
        .arg(page.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let html = std::fs::read_to_string(page.path().join("report.html")).unwrap();
    let done = html
        .split("<h2 id=\"progress\">Progress</h2>\n<p>")
        .nth(1)
        .and_then(|t| t.split(' ').next()?.parse::<usize>().ok())
        .unwrap();
    seen.push(("report", done, warned(&out)));
    let merged = tempfile::tempdir().unwrap();
    let out = sweep(p)
        .arg("merge")
        .arg(run)
        .arg("--out")
        .arg(merged.path().join("m"))
        .output()
        .unwrap();
    seen.push((
        "merge",
        rows(&merged.path().join("m/results.csv")).len(),
        warned(&out),
    ));
    seen
}

/// Low 5: a last row without a line break was read by analyze and compare and dropped by
/// export, report and merge. One rule for every reader: a last row with all its fields that
/// parses is a row (no warning); a torn one (fewer fields, or its last number cut to no number)
/// is left out with one warning line naming the file and line.
#[test]
fn every_reader_reads_a_last_row_without_a_line_break_alike() {
    let p = project();
    let run = finished_s4(p.path());
    let other = copy_run(&run, &p.path().join("other"));
    let text = std::fs::read_to_string(run.join("results.csv")).unwrap();
    let body = text.strip_suffix("\r\n").unwrap();

    let whole = copy_run(&run, &p.path().join("whole"));
    std::fs::write(whole.join("results.csv"), body).unwrap();
    for (reader, n, warned) in readers_of(p.path(), &whole, &other) {
        assert!(!warned, "{reader} warned of a whole row");
        assert!(n == 4 || n == usize::MAX, "{reader} read {n} points of 4");
    }

    let torn = copy_run(&run, &p.path().join("torn"));
    // Cut inside the row's fields: fewer than the header's.
    let cut = body.rfind(",ok,").unwrap();
    std::fs::write(torn.join("results.csv"), &body[..cut]).unwrap();
    for (reader, n, warned) in readers_of(p.path(), &torn, &other) {
        assert!(warned, "{reader} left the torn row out unsaid");
        assert!(n == 3 || n == usize::MAX, "{reader} read {n} points of 3");
    }
    assert_eq!(
        std::fs::read_to_string(torn.join("results.csv")).unwrap(),
        &body[..cut],
        "the readers leave the file as it is"
    );

    // `resume` reads the same rule and, before appending, gives a whole last row its line
    // break: its row is kept, the others are measured, and every row is whole.
    crate::hardening::unfinish(&run, 2);
    let text = std::fs::read_to_string(run.join("results.csv")).unwrap();
    std::fs::write(run.join("results.csv"), text.strip_suffix("\r\n").unwrap()).unwrap();
    let out = sweep(p.path())
        .arg("resume")
        .arg(&run)
        .args(["-q", "--no-analyze"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("finished 2 points"),
        "{}",
        stdout(&out)
    );
    let all = rows(&run.join("results.csv"));
    assert_eq!(all.len(), 4);
    assert!(all.iter().all(|r| r["status"] == "ok"), "{all:?}");

    // A hand-made CSV whose last number is cut to no number (`1e`): torn too.
    let hand = p.path().join("hand.csv");
    std::fs::write(&hand, "threads,status,mflops\n1,ok,100\n2,ok,200\n3,ok,1e").unwrap();
    let out = sweep(p.path())
        .args(["analyze", "hand.csv", "--x", "threads"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains("`hand.csv` line 4: its last row is torn (its last field `1e` is no number)"),
        "{}",
        stderr(&out)
    );
}

/// Low 6: `export` of a finished run whose results.csv holds only its header wrote empty files
/// and exited 0. It says "no rows in <file>" and exits 3 (bad input), as analyze and compare do.
#[test]
fn a_run_without_rows_is_not_exported() {
    let p = project();
    let run = finished_s4(p.path());
    let text = std::fs::read_to_string(run.join("results.csv")).unwrap();
    let header = text.split_inclusive('\n').next().unwrap();
    std::fs::write(run.join("results.csv"), header).unwrap();
    let csv = run.join("results.csv").display().to_string();
    let out = sweep(p.path()).arg("export").arg(&run).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("no rows in `{csv}`")) && err.contains("(hint: "),
        "{err}"
    );
    assert!(
        !run.join("export/results.xlsx").exists(),
        "an empty export was written"
    );
    for args in [vec!["analyze"], vec!["compare", "other"]] {
        let other = copy_run(&run, &p.path().join("other"));
        let mut c = sweep(p.path());
        c.arg(args[0]).arg(&run);
        if args.len() > 1 {
            c.arg(&other);
        }
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", stderr(&out));
    }
}

/// Low 7: `sweep analyze` of a 0-byte CSV said it had no `status` column. It says the file is
/// empty, for every reader of a CSV.
#[test]
fn a_zero_byte_csv_is_called_empty() {
    let p = project();
    std::fs::write(p.path().join("empty.csv"), "").unwrap();
    let run = finished_s4(p.path());
    let run = run.display().to_string();
    for args in [
        vec!["analyze", "empty.csv"],
        vec!["plot", "empty.csv"],
        vec!["compare", "empty.csv", &run],
        vec!["compare", &run, "empty.csv"],
    ] {
        let out = sweep(p.path()).args(&args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert_eq!(
            err.trim_end(),
            "error: `empty.csv` is empty (0 bytes): not a results CSV (hint: give a results.csv written by `sweep run`, which starts with its header line)",
            "{args:?}"
        );
    }
}

/// Low 8: a subnormal metric (5e-324) was written as 0.000… with 324 decimals, and 1e308 with 309
/// digits, in the exported CSVs, analysis.csv, compare.csv, the readings and the charts'
/// attributes. Every float is written in its shortest round-trip form (exponent form far from 1).
#[test]
fn extreme_numbers_are_written_short_everywhere() {
    let p = project();
    let run = finished_s4(p.path());
    let csv = run.join("results.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let header: Vec<&str> = lines[0].split(',').collect();
    let columns: Vec<usize> = [
        "saw_mflops",
        "saw_median_mflops",
        "saw_min_mflops",
        "saw_max_mflops",
    ]
    .iter()
    .map(|c| header.iter().position(|h| h == c).unwrap())
    .collect();
    for (line, v) in lines[1..]
        .iter_mut()
        .zip(["5e-324", "1e308", "-0.0", "4.9e-324"])
    {
        let mut f: Vec<String> = line.split(',').map(String::from).collect();
        for &c in &columns {
            f[c] = v.to_string();
        }
        *line = f.join(",");
    }
    std::fs::write(&csv, lines.join("\r\n") + "\r\n").unwrap();
    let other = copy_run(&finished_s4(p.path()), &p.path().join("other"));
    let mut said = String::new();
    for args in [
        vec!["analyze".to_string(), run.display().to_string()],
        vec![
            "export".into(),
            run.display().to_string(),
            "--format".into(),
            "csv".into(),
            "--format".into(),
            "long".into(),
            "--format".into(),
            "json".into(),
        ],
        vec!["report".into(), run.display().to_string()],
        vec![
            "compare".into(),
            run.display().to_string(),
            other.display().to_string(),
            "--out".into(),
            "cmp".into(),
        ],
        // B the extreme run: ratios of 1e305 and percentages of 1e307.
        vec![
            "compare".into(),
            other.display().to_string(),
            run.display().to_string(),
            "--out".into(),
            "cmp2".into(),
        ],
    ] {
        let out = sweep(p.path()).args(&args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        said += &stdout(&out);
        said += &stderr(&out);
    }
    let long_number = regex::Regex::new(r"[0-9]{30,}").unwrap();
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(&run)
        .into_iter()
        .chain(walkdir::WalkDir::new(p.path().join("cmp")))
        .chain(walkdir::WalkDir::new(p.path().join("cmp2")))
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .filter(|f| {
            let name = f.to_string_lossy();
            [".csv", ".json", ".md", ".html", ".svg"]
                .iter()
                .any(|x| name.ends_with(x))
        })
        .collect();
    files.sort();
    assert!(files.iter().any(|f| f.ends_with("export/results_long.csv")));
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        assert!(
            !long_number.is_match(&text),
            "{}: {:?}",
            f.display(),
            long_number
                .find(&text)
                .map(|m| &text[m.start().saturating_sub(40)..m.end().min(m.start() + 80)])
        );
    }
    assert!(!long_number.is_match(&said), "{said}");
    let exported = std::fs::read_to_string(run.join("export/results.csv")).unwrap();
    for v in [",5e-324,", ",1e308,", ",-0,"] {
        assert!(exported.contains(v), "{v}: {exported}");
    }
}

/// Low 9: "1 points", "merged 1 runs", "1 build jobs": a count and its noun agree.
#[test]
fn one_is_said_in_the_singular() {
    let p = project();
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 1]");
    write(p.path(), "sweeps/one.toml", &spec);
    let out = sweep(p.path())
        .args(["plan", "sweeps/one.toml"])
        .output()
        .unwrap();
    assert!(
        stdout(&out).lines().any(|l| l.starts_with("1 point ")),
        "{}",
        stdout(&out)
    );
    let out = sweep(p.path())
        .args(["run", "sweeps/one.toml", "--no-analyze", "-j", "1"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        stdout(&out).contains("finished 1 point in"),
        "{}",
        stdout(&out)
    );
    assert!(
        err.contains("1 of 1 point into") && err.contains("(1 build job,"),
        "{err}"
    );
    let run = run_dirs(&p.path().join("output/one")).pop().unwrap();
    let out = sweep(p.path())
        .arg("merge")
        .arg(&run)
        .args(["--out", "merged"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(all.contains("merged 1 run: 1 of 1 point (1 ok)"), "{all}");
    assert!(
        !all.contains("1 points") && !all.contains("1 runs"),
        "{all}"
    );
}

/// Low 10: `sweep list` expanded every spec's points (ids hashed, labels written) to count them:
/// a spec of 160,000 points took as long to list as to plan. It reads each spec's bench and axes'
/// sizes (and counts what a filter keeps) and says them.
#[test]
fn list_sizes_a_sweep_from_its_axes() {
    let p = project();
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 400]");
    write(
        p.path(),
        "sweeps/huge.toml",
        &format!("{spec}[[axis]]\nname = \"extra\"\nrange = [1, 400]\n"),
    );
    write(
        p.path(),
        "sweeps/filtered.toml",
        "bench = \"hostsaw\"\ncompiler = \"cc\"\nfilter = \"threads % 2 == 0\"\n[vars]\nmode = \"ok\"\nslow_ms = 0\n[[axis]]\nname = \"threads\"\nrange = [1, 10]\n[[axis]]\nname = \"extra\"\nrange = [1, 3]\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n",
    );
    // What `plan` refuses, `list` says as `plan` does: a point written twice, a filter that
    // keeps none.
    let one_axis = |extra: &str, values: &str| {
        format!("bench = \"hostsaw\"\ncompiler = \"cc\"\n{extra}[vars]\nmode = \"ok\"\nslow_ms = 0\n[[axis]]\nname = \"threads\"\nvalues = {values}\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n")
    };
    write(p.path(), "sweeps/dup.toml", &one_axis("", "[1, 2, 1]"));
    write(
        p.path(),
        "sweeps/none.toml",
        &one_axis("filter = \"threads > 100\"\n", "[1, 2]"),
    );
    let started = Instant::now();
    let out = sweep(p.path()).arg("list").output().unwrap();
    let took = started.elapsed();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let line = |name: &str| {
        text.lines()
            .find(|l| l.contains(name))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        line("sweeps/huge.toml")
            .ends_with("bench hostsaw        160000 points (threads 400 x extra 400)"),
        "{text}"
    );
    assert!(
        line("sweeps/filtered.toml")
            .ends_with("15 points (filtered from threads 10 x extra 3 = 30)"),
        "{text}"
    );
    assert!(line("sweeps/saw.toml").ends_with("64 points"), "{text}");
    for (spec, refused) in [
        ("dup", "point `threads=1` comes twice, at index 0 and 2"),
        (
            "none",
            "filter `threads > 100` drops every one of the 2 points",
        ),
    ] {
        let planned = sweep(p.path())
            .args(["plan", &format!("sweeps/{spec}.toml")])
            .output()
            .unwrap();
        assert!(stderr(&planned).contains(refused), "{}", stderr(&planned));
        assert!(
            line(&format!("sweeps/{spec}.toml")).contains(refused),
            "{text}"
        );
    }
    // Planning the large spec takes seconds in a debug build; listing it, a fraction of that.
    let started = Instant::now();
    let planned = sweep(p.path())
        .args(["plan", "sweeps/huge.toml"])
        .output()
        .unwrap();
    let plan = started.elapsed();
    assert!(planned.status.success());
    assert!(took < plan, "list {took:?}, plan {plan:?}");
}
