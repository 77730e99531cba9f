//! Review 9 (read side and inputs) of issue 38: what a hostile user found in the commands that
//! read a run, a CSV or a spec, each fixed with a test that failed before. Real files, real runs
//! of host programs built with `cc`.

use crate::common::{project, stderr, sweep};
use crate::hardening::write;
use std::path::Path;

/// A results CSV without a manifest: x, status and one metric in ms, a value per x.
fn csv_of(dir: &Path, name: &str, rows: &[(String, f64)]) -> std::path::PathBuf {
    let mut text = String::from("x,status,t_ms\n");
    for (x, v) in rows {
        text.push_str(&format!("{x},ok,{v}\n"));
    }
    write(dir, name, &text)
}

/// Review 9b, H1: an x far off the others (1e308 beside 1..40, or a pow2 axis up to 2^63) gave a
/// grid index that saturated, and the period search's arithmetic overflowed: `analyze`, `plot`,
/// `report` and `compare` panicked (a debug build; a release build wrapped around and searched
/// nonsense). Such a curve is read without a period, the rest of its analysis kept.
#[test]
fn an_x_far_off_the_others_is_analysed_without_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let mut far: Vec<(String, f64)> = (1..40)
        .map(|x| (x.to_string(), 1.0 + (x % 7) as f64))
        .collect();
    far.push(("1e308".into(), 2.0));
    let pow2: Vec<(String, f64)> = (0..64)
        .map(|k| ((1u64 << k).to_string(), 1.0 + (k % 5) as f64))
        .collect();
    for (name, rows, best) in [
        ("far.csv", far, "| 7 (1.000 ms) |"),
        ("pow2.csv", pow2, "| 1 (1.000 ms) |"),
    ] {
        let csv = csv_of(tmp.path(), name, &rows);
        for cmd in ["analyze", "plot"] {
            let out = sweep(tmp.path())
                .args([cmd, csv.to_str().unwrap(), "--out"])
                .arg(tmp.path().join(format!("{cmd}-{name}")))
                .output()
                .unwrap();
            let err = stderr(&out);
            assert!(!err.contains("panicked"), "{cmd} {name}: {err}");
            assert_eq!(out.status.code(), Some(0), "{cmd} {name}: {err}");
        }
        let md = std::fs::read_to_string(tmp.path().join(format!("analyze-{name}/analysis.md")))
            .unwrap();
        // The rest of the analysis stands: the best x (the least time) is read.
        assert!(crate::common::squeeze(&md).contains(best), "{name}: {md}");
    }
}

/// Review 9b, H2: the spec refused two metrics of one value column, but not a metric whose
/// column is another's statistic (`saw_median` in MFlops writes `saw_median_mflops`, the median
/// of `saw`), nor one name given twice in two units (both write `saw_rel_ci`): the run wrote a
/// results.csv with two columns of one name, that every reader then refused (the report at the
/// end of the run already), and the run's values were lost to them. Refused when the spec is read.
#[test]
fn a_metric_that_writes_another_metrics_column_is_refused() {
    let p = project();
    for (name, second, says) in [
        (
            "median",
            "name = \"saw_median\"\nunit = \"MFlops\"",
            "sweeps/clash.toml:9: metric `saw_median` writes the column `saw_median_mflops`, which metric `saw` writes too (hint: rename one of them",
        ),
        (
            "twice",
            "name = \"saw\"\nunit = \"GFlops\"",
            "sweeps/clash.toml:9: metric `saw` is defined twice (hint: rename one of them",
        ),
        (
            "rel_ci",
            "name = \"saw_rel\"\nunit = \"ci\"",
            "sweeps/clash.toml:9: metric `saw_rel` writes the column `saw_rel_ci`, which metric `saw` writes too",
        ),
    ] {
        write(
            p.path(),
            "sweeps/clash.toml",
            &format!("bench = \"hostsaw\"\ncompiler = \"cc\"\n[[axis]]\nname = \"threads\"\nrange = [1, 4]\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n[[metric]]\n{second}\n"),
        );
        for cmd in [&["plan"][..], &["run", "-q"]] {
            let out = sweep(p.path())
                .args(cmd)
                .arg("sweeps/clash.toml")
                .output()
                .unwrap();
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(3), "{name} {cmd:?}: {err}");
            assert!(err.starts_with(&format!("error: {says}")), "{name} {cmd:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{name} {cmd:?}: {err}");
        }
        assert!(!p.path().join("output/clash").exists(), "{name}: a run was made");
    }
}

/// A copy of the committed H100 run `copy_stride` (results.csv and manifest.json) in `dir/name`.
fn h100_copy(dir: &Path, name: &str) -> std::path::PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h100/copy_stride");
    let run = dir.join(name);
    std::fs::create_dir_all(&run).unwrap();
    for f in ["results.csv", "manifest.json"] {
        std::fs::copy(src.join(f), run.join(f)).unwrap();
    }
    run
}

/// Review 9b, H3: a run folder whose manifest.json is a pipe (or a link to `/dev/zero`) hung
/// `analyze`, `plot` and `compare` for good (or until they had eaten the memory and were killed),
/// and `export`, `report` and `merge` said the folder "has no manifest.json"; one that is a
/// folder was read as a CSV alone by some commands and as no run by the others. Each is refused at
/// once, by name, exit 3.
#[test]
fn a_manifest_that_is_no_file_is_refused_by_name_without_blocking() {
    let tmp = tempfile::tempdir().unwrap();
    let base = h100_copy(tmp.path(), "a");
    let mut runs = Vec::new();
    for kind in ["fifo", "zero", "folder"] {
        let run = h100_copy(tmp.path(), kind);
        let manifest = run.join("manifest.json");
        std::fs::remove_file(&manifest).unwrap();
        match kind {
            "fifo" => {
                let made = std::process::Command::new("mkfifo").arg(&manifest).status();
                if !made.is_ok_and(|s| s.success()) {
                    crate::common::skip("no mkfifo");
                    continue;
                }
            }
            "zero" => std::os::unix::fs::symlink("/dev/zero", &manifest).unwrap(),
            _ => std::fs::create_dir(&manifest).unwrap(),
        }
        runs.push((kind, run, manifest));
    }
    for (kind, run, manifest) in &runs {
        let csv = run.join("results.csv");
        let out_dir = tmp.path().join(format!("out-{kind}"));
        let merged = tmp.path().join(format!("merged-{kind}"));
        let commands: Vec<Vec<&std::ffi::OsStr>> = vec![
            vec![
                "analyze".as_ref(),
                csv.as_os_str(),
                "--out".as_ref(),
                out_dir.as_os_str(),
            ],
            vec![
                "plot".as_ref(),
                csv.as_os_str(),
                "--out".as_ref(),
                out_dir.as_os_str(),
            ],
            vec!["compare".as_ref(), base.as_os_str(), run.as_os_str()],
            vec![
                "export".as_ref(),
                run.as_os_str(),
                "--out".as_ref(),
                out_dir.as_os_str(),
            ],
            vec![
                "report".as_ref(),
                run.as_os_str(),
                "--out".as_ref(),
                out_dir.as_os_str(),
            ],
            vec![
                "merge".as_ref(),
                run.as_os_str(),
                "--out".as_ref(),
                merged.as_os_str(),
            ],
        ];
        for args in commands {
            let out = sweep(tmp.path())
                .args(&args)
                .timeout(std::time::Duration::from_secs(20))
                .output()
                .unwrap();
            let err = stderr(&out);
            let what = format!("{kind} {:?}", args[0]);
            assert_eq!(out.status.code(), Some(3), "{what}: {err}");
            assert!(
                err.contains(&format!(
                    "`{}` is not a regular file (a folder, a pipe, a device or a socket), so not the manifest sweep writes (hint: ",
                    manifest.display()
                )),
                "{what}: {err}"
            );
            assert_eq!(err.lines().count(), 1, "{what}: {err}");
        }
    }
}

/// Review 9b, M1: a run folder whose results.csv is a folder was "a folder that holds no
/// results.csv" to `compare`: the file is there, and is named as not being a file.
#[test]
fn a_results_csv_that_is_a_folder_is_named_as_such() {
    let tmp = tempfile::tempdir().unwrap();
    let base = h100_copy(tmp.path(), "a");
    let run = h100_copy(tmp.path(), "b");
    std::fs::remove_file(run.join("results.csv")).unwrap();
    std::fs::create_dir(run.join("results.csv")).unwrap();
    let out = sweep(tmp.path())
        .arg("compare")
        .arg(&base)
        .arg(&run)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert_eq!(
        err,
        format!(
            "error: `{}` is not a regular file (a folder, a pipe, a device or a socket): sweep reads its CSVs from files (hint: save it to a file first and give that)\n",
            run.join("results.csv").display()
        )
    );
}

/// Review 9b, M2: one cell of text in a numeric axis (`stride` = `abc` in one row of 37) made
/// `analyze` say "every axis is a category (`variant`, `stride`)", naming no cell; an empty cell
/// there was named with its line. The cell of text is named the same way.
#[test]
fn a_cell_of_text_in_a_numeric_axis_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let run = h100_copy(tmp.path(), "run");
    let csv = run.join("results.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    // The third row (line 4): stride 3.
    let edited = text.replacen(",2,stride,3,", ",2,stride,abc,", 1);
    assert_ne!(edited, text);
    std::fs::write(&csv, edited).unwrap();
    // In its run folder the row's id names stride 3: refused as a row at another point's values
    // (review 17 C2); a copy of the CSV alone has its cell named as before.
    let out = sweep(tmp.path()).arg("analyze").arg(&run).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("(its row 3 after the header) at variant=stride stride=abc, which are not that point's axis values"),
        "{err}"
    );
    let csv = tmp.path().join("alone.csv");
    std::fs::copy(run.join("results.csv"), &csv).unwrap();
    let out = sweep(tmp.path())
        .arg("analyze")
        .arg(&csv)
        .arg("--out")
        .arg(tmp.path().join("out"))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert_eq!(
        err,
        format!(
            "error: axis `stride` has a value that is not a number, `abc`, in `{}` line 4 (hint: mend that cell; else every axis is a category: `sweep plot` and `sweep report` without --x draw such a run as bars)\n",
            csv.display()
        )
    );
}

/// Review 9b, M3: an axis value with a line break or an ANSI escape (the spec takes both, `plan`
/// shows them escaped) went raw into the Markdown of `analyze` and `compare`: the line break tore
/// the table's row (and the list of readings, and compare's "only in" line) in two, the escape
/// coloured the terminal. Control characters are shown escaped (`\n`, `\u{1b}`).
#[test]
fn control_characters_in_axis_values_neither_tear_tables_nor_reach_the_terminal() {
    let p = project();
    write(
        p.path(),
        "sweeps/tags.toml",
        "bench = \"hostsaw\"\ncompiler = \"cc\"\n[vars]\nmode = \"ok\"\nslow_ms = 0\n[[axis]]\nname = \"threads\"\nrange = [1, 3]\n[[axis]]\nname = \"tag\"\nvalues = [\"a\\nb\", \"\\u001b[31mred\"]\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n",
    );
    let out = sweep(p.path())
        .args(["run", "sweeps/tags.toml", "-q", "--no-analyze"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let run = crate::common::run_dirs(&p.path().join("output/tags"))
        .pop()
        .unwrap();
    let csv = run.join("results.csv");
    let analyze = sweep(p.path())
        .arg("analyze")
        .arg(&csv)
        .arg("--out")
        .arg(p.path().join("a"))
        .output()
        .unwrap();
    assert_eq!(analyze.status.code(), Some(0), "{}", stderr(&analyze));
    let compare = sweep(p.path())
        .arg("compare")
        .arg(&run)
        .arg(&run)
        .output()
        .unwrap();
    assert_eq!(compare.status.code(), Some(0), "{}", stderr(&compare));
    let md = std::fs::read_to_string(p.path().join("a/analysis.md")).unwrap();
    for (what, text) in [
        ("analyze", crate::common::stdout(&analyze)),
        ("analysis.md", md),
        ("compare", crate::common::stdout(&compare)),
    ] {
        assert!(!text.contains('\u{1b}'), "{what}: {text}");
        assert!(text.contains("[tag=a\\nb]"), "{what}: {text}");
        assert!(text.contains("[tag=\\u{1b}[31mred]"), "{what}: {text}");
        // Every line that a series' row or reading starts is whole: no line begins with what
        // followed the line break (`b]`).
        assert!(!text.lines().any(|l| l.starts_with("b]")), "{what}: {text}");
    }
}

/// Review 9b, M5: a metric named twice in `--y` (`copy,copy_gb_per_s`, or one name twice) was
/// analysed, drawn and compared twice: compare's table had its row twice and counted its values
/// twice (`74 values compared` of 37 points). It is one series.
#[test]
fn a_metric_named_twice_in_y_is_one_series() {
    let tmp = tempfile::tempdir().unwrap();
    let run = h100_copy(tmp.path(), "run");
    let csv = run.join("results.csv");
    let analyze = sweep(tmp.path())
        .arg("analyze")
        .arg(&csv)
        .args(["--y", "copy,copy_gb_per_s", "--out"])
        .arg(tmp.path().join("a"))
        .output()
        .unwrap();
    assert_eq!(analyze.status.code(), Some(0), "{}", stderr(&analyze));
    let md = crate::common::stdout(&analyze);
    assert_eq!(
        md.matches("| copy_gb_per_s [variant=stride]").count(),
        1,
        "{md}"
    );
    let compare = sweep(tmp.path())
        .arg("compare")
        .arg(&run)
        .arg(&run)
        .args(["--y", "copy_gb_per_s,copy_gb_per_s"])
        .output()
        .unwrap();
    assert_eq!(compare.status.code(), Some(0), "{}", stderr(&compare));
    let md = crate::common::stdout(&compare);
    assert_eq!(
        md.matches("| copy_gb_per_s [variant=stride]").count(),
        1,
        "{md}"
    );
    assert!(md.contains("37 values compared: 37 same"), "{md}");
}

/// Review 9b, M6: `--out` naming a file (a typo, `/dev/null`) made analyze, export, report and
/// compare fail with "cannot write `x`: File exists (os error 17)", exit 4 as a full disk, and
/// plot with "Not a directory": no hint, and an exit code that blames the environment. Refused
/// as a usage error naming it, before anything is read or written.
#[test]
fn an_out_that_is_a_file_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let run = h100_copy(tmp.path(), "run");
    let file = write(tmp.path(), "notes.txt", "mine");
    let csv = run.join("results.csv");
    for args in [
        vec![std::ffi::OsStr::new("analyze"), csv.as_os_str()],
        vec!["plot".as_ref(), csv.as_os_str()],
        vec!["export".as_ref(), run.as_os_str()],
        vec!["report".as_ref(), run.as_os_str()],
        vec!["compare".as_ref(), run.as_os_str(), run.as_os_str()],
    ] {
        let out = sweep(tmp.path())
            .args(&args)
            .arg("--out")
            .arg(&file)
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(
            err,
            format!(
                "error: --out `{}` is a file, not a folder (hint: --out names the folder its files go into, made if missing)\n",
                file.display()
            ),
            "{args:?}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
    }
}

/// Review 9b's open medium: a manifest whose `axes` lists a column that neither the CSV nor the
/// manifest's own `columns` has (an axis added to the manifest by hand) made `analyze` say
/// "every axis is a category (`variant`, `nonexist`)", naming no culprit, and `plot` and `export`
/// exit 0 over a run whose points all read as `nonexist=`. Every reader names the column.
#[test]
fn an_axis_of_the_manifest_that_no_column_holds_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let run = h100_copy(tmp.path(), "run");
    let manifest = run.join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    m["axes"] = serde_json::json!(["variant", "nonexist"]);
    std::fs::write(&manifest, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    let csv = run.join("results.csv");
    for args in [
        vec!["analyze", csv.to_str().unwrap()],
        vec!["plot", csv.to_str().unwrap()],
        vec!["export", run.to_str().unwrap()],
    ] {
        let out = sweep(tmp.path())
            .args(&args)
            .arg("--out")
            .arg(tmp.path().join(format!("out-{}", args[0])))
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert!(
            err.contains("no column `nonexist` of the axis its manifest lists")
                && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
}
