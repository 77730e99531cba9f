//! Review 10b (read side and inputs, the confirming round) of issue 38: what a hostile user still
//! found in the commands that read a run or a CSV, each fixed with a test that failed before.
//! Real files, real runs of host programs built with `cc`.

use crate::common::{stderr, sweep};
use crate::hardening::write;
use std::time::Duration;

/// Review 10b, H1: a value whose chart spans more than f64 holds (`-1e308` and `1e308` in one
/// series, or `1.7e308` with the headroom above it; bars of a category run alike) made plotters'
/// tick search loop for good: `plot`, `report` and `compare` hung at 100 % CPU. The chart is drawn
/// with its range bounded.
#[test]
fn a_value_near_the_end_of_f64_is_charted_without_a_hang() {
    let tmp = tempfile::tempdir().unwrap();
    let alternating: String = (1..40)
        .map(|x| format!("{x},ok,{}\n", if x % 2 == 1 { "1e308" } else { "-1e308" }))
        .collect();
    for (name, text) in [
        ("alternating.csv", format!("x,status,t_ms\n{alternating}")),
        (
            "top.csv",
            "x,status,t_ms\n1,ok,1.7e308\n2,ok,1\n3,ok,1.6e308\n".into(),
        ),
        (
            "bars.csv",
            "k,status,t_ms\na,ok,1.7e308\nb,ok,1\nc,ok,-1.7e308\n".into(),
        ),
    ] {
        let csv = write(tmp.path(), name, &text);
        let commands: &[&[&str]] = &[&["plot"], &["compare", csv.to_str().unwrap()]];
        for args in commands {
            let out = sweep(tmp.path())
                .arg(args[0])
                .arg(&csv)
                .args(&args[1..])
                .arg("--out")
                .arg(tmp.path().join(format!("{}-{name}", args[0])))
                .timeout(Duration::from_secs(30))
                .output()
                .unwrap();
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(0), "{} {name}: {err}", args[0]);
        }
        let charts = tmp.path().join(format!("plot-{name}/charts"));
        let pngs = std::fs::read_dir(&charts).unwrap().count();
        assert!(pngs >= 2, "{name}: {pngs} files in {}", charts.display());
    }
}

/// Review 10b, M1: a legal axis of integers past 2^53 (`9007199254740992` and the three after it,
/// which the spec takes and `plan` and `run` keep apart) made `compare` refuse the run, even with
/// itself: "has two rows of the point threads=9007199254740992" (exit 3), for a run of one row a
/// point. Integers are matched exactly.
#[test]
fn integers_past_two_to_the_53_are_compared_as_the_points_they_are() {
    let p = crate::common::project();
    write(
        p.path(),
        "sweeps/big.toml",
        "bench = \"hostsaw\"\ncompiler = \"cc\"\n[vars]\nmode = \"ok\"\nslow_ms = 0\n[[axis]]\nname = \"threads\"\nvalues = [9007199254740992, 9007199254740993, 9007199254740994, 9007199254740995]\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n",
    );
    let out = sweep(p.path())
        .args(["run", "sweeps/big.toml", "-q", "--no-analyze", "--cache"])
        .arg(p.path().join("cache"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let run = crate::common::run_dirs(&p.path().join("output/big"))
        .pop()
        .unwrap();
    let out = sweep(p.path())
        .arg("compare")
        .arg(&run)
        .arg(&run)
        .args(["--fail-on-slower", "5", "--out"])
        .arg(p.path().join("cmp"))
        .output()
        .unwrap();
    let (err, text) = (stderr(&out), crate::common::stdout(&out));
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(text.contains("4 points matched by `threads`"), "{text}");
    let rows = crate::common::rows(&p.path().join("cmp/compare.csv"));
    let threads: Vec<&str> = rows.iter().map(|r| r["threads"].as_str()).collect();
    assert_eq!(
        threads,
        [
            "9007199254740992",
            "9007199254740993",
            "9007199254740994",
            "9007199254740995"
        ]
    );
}

/// A copy of the committed H100 run `copy_stride` (results.csv and manifest.json) in `dir/name`.
fn h100_copy(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    let src =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h100/copy_stride");
    let run = dir.join(name);
    std::fs::create_dir_all(&run).unwrap();
    for f in ["results.csv", "manifest.json"] {
        std::fs::copy(src.join(f), run.join(f)).unwrap();
    }
    run
}

/// Review 10b, M2: a manifest whose `axes` list was emptied by hand made `analyze` say "every
/// axis is a category ()", naming none, while `plot`, `report`, `export` and `merge` went on
/// (exit 0) with the axes' columns read as something else; one whose `metrics` was emptied made
/// `analyze` and `plot` say "no metric columns" of a CSV full of them. No spec makes either:
/// every reader names the manifest and the empty list, exit 3.
#[test]
fn a_manifest_that_lists_no_axis_or_no_metric_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    for what in ["axis", "metric"] {
        let run = h100_copy(tmp.path(), what);
        let path = run.join("manifest.json");
        let mut m: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let key = if what == "axis" { "axes" } else { "metrics" };
        m[key] = serde_json::json!([]);
        std::fs::write(&path, m.to_string()).unwrap();
        let want = format!(
            "`{}` lists no {what}, and every run has one",
            path.display()
        );
        let commands: &[&[&str]] = &[
            &["analyze"],
            &["plot"],
            &["report"],
            &["export", "--format", "json"],
            &["merge"],
        ];
        for args in commands {
            let out = sweep(tmp.path())
                .arg(args[0])
                .arg(&run)
                .args(&args[1..])
                .arg("--out")
                .arg(tmp.path().join(format!("{what}-{}", args[0])))
                .output()
                .unwrap();
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(3), "{what} {}: {err}", args[0]);
            assert!(err.contains(&want), "{what} {}: {err}", args[0]);
            assert_eq!(err.lines().count(), 1, "{what} {}: {err}", args[0]);
        }
    }
}

/// Review 10b, M3: review 9b made an `--out` that is a file a usage error, but not its
/// neighbours: an `--out` under a file (`afile/sub`) said "Not a directory (os error 20)" (merge:
/// "File exists"), and a link to nothing (or a folder under one) "File exists (os error 17)", exit
/// 4 as a full disk, naming the whole path rather than the part to change. Each is a usage error
/// (exit 2) naming that part, for every reader and merge.
#[test]
fn an_out_under_a_file_or_a_link_to_nothing_is_a_usage_error_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let run = h100_copy(tmp.path(), "run");
    let file = write(tmp.path(), "afile", "x");
    let dangling = tmp.path().join("dangling");
    std::os::unix::fs::symlink(tmp.path().join("nowhere"), &dangling).unwrap();
    let cases = [
        (
            file.join("sub"),
            format!("lies under `{}`, which is a file", file.display()),
        ),
        (
            dangling.clone(),
            format!(
                "is a link to `{}`, which does not exist",
                tmp.path().join("nowhere").display()
            ),
        ),
        (
            dangling.join("sub"),
            format!("lies under `{}`, which is a link to", dangling.display()),
        ),
    ];
    let commands: &[&[&str]] = &[
        &["analyze"],
        &["plot"],
        &["report"],
        &["export", "--format", "json"],
        &["compare", "ARG"],
        &["merge"],
    ];
    for (out_dir, want) in &cases {
        for args in commands {
            let out = sweep(tmp.path())
                .arg(args[0])
                .arg(&run)
                .args(args[1..].iter().map(|a| {
                    if *a == "ARG" {
                        run.as_os_str()
                    } else {
                        a.as_ref()
                    }
                }))
                .arg("--out")
                .arg(out_dir)
                .output()
                .unwrap();
            let err = stderr(&out);
            assert_eq!(
                out.status.code(),
                Some(2),
                "{} {}: {err}",
                args[0],
                out_dir.display()
            );
            assert!(
                err.contains(want),
                "{} {}: {err}",
                args[0],
                out_dir.display()
            );
            assert_eq!(err.lines().count(), 1, "{err}");
        }
    }
    assert!(!tmp.path().join("nowhere").exists());
}

/// Review 10b, M4 (the neighbour of 9b's M5 in `plot --metrics`): a metric named twice
/// (`copy,copy_gb_per_s`, or `copy,copy`) was drawn twice over itself, its legend "copy (under
/// copy)" and "copy", exit 0. It is one curve: with another metric a chart of two, alone the
/// usage error that one curve has nothing to overlay.
#[test]
fn a_metric_named_twice_in_metrics_is_one_curve() {
    let tmp = tempfile::tempdir().unwrap();
    let run = h100_copy(tmp.path(), "run");
    let plot = |metrics: &str, out: &str| {
        sweep(tmp.path())
            .arg("plot")
            .arg(&run)
            .args(["--metrics", metrics, "--out"])
            .arg(tmp.path().join(out))
            .output()
            .unwrap()
    };
    for twice in ["copy,copy_gb_per_s", "copy,copy"] {
        let out = plot(twice, "alone");
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{twice}: {err}");
        assert!(
            err.contains("give no two curves to overlay"),
            "{twice}: {err}"
        );
    }
    let out = plot("copy,copy_gb_per_s,memcpy_d2d", "two");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let charts = tmp.path().join("two/charts");
    let svg = std::fs::read_dir(&charts)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "svg"))
        .unwrap();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(!text.contains("(under copy)"), "{}", svg.display());
    // Legend entries are text elements of their own: `>\ncopy\n<`.
    assert_eq!(text.matches(">\ncopy\n<").count(), 1, "{}", svg.display());
    assert_eq!(
        text.matches(">\nmemcpy_d2d\n<").count(),
        1,
        "{}",
        svg.display()
    );
}

/// Review 10b, M5 (the neighbour of 9b's M3 in names rather than values): an axis whose name in
/// a CSV's header holds an ANSI escape went raw to the terminal from `analyze` ("against
/// `x<ESC>[31m`", and each reading's "best at x<ESC>[31m = 2") and `compare` ("matched by"); a
/// line break in a metric's name tore its reading's line. Both are shown escaped.
#[test]
fn control_characters_in_column_names_do_not_reach_the_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = write(
        tmp.path(),
        "ctl.csv",
        "x\u{1b}[31m,status,\"t\nms\",r_gb_per_s\n1,ok,2,1\n2,ok,3,1\n3,ok,1,2\n",
    );
    let commands: &[&[&str]] = &[&["analyze"], &["compare", "ARG"], &["plot"]];
    for args in commands {
        let out = sweep(tmp.path())
            .arg(args[0])
            .arg(&csv)
            .args(args[1..].iter().map(|_| csv.as_os_str()))
            .arg("--out")
            .arg(tmp.path().join(args[0]))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let all = [out.stdout.as_slice(), out.stderr.as_slice()].concat();
        assert!(
            !all.contains(&0x1b),
            "{}: {}",
            args[0],
            String::from_utf8_lossy(&all)
        );
        if args[0] == "analyze" {
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(text.contains("against `x\\u{1b}[31m`"), "{text}");
            assert!(
                text.contains("- `t\\nms`: no periodic structure; best at x\\u{1b}[31m = 2"),
                "{text}"
            );
        }
    }
}

/// Review 10b, M6 (the neighbour of 9a's merge refusals): two shards of one spec text run with
/// other overrides (`-a threads=1:2` and `-a threads=3:4`, or `--set` on one alone) were
/// refused as "of another spec ... (hint: merge the shards of one spec text)", which they are
/// not: the user was sent to compare spec files that are the same. The refusal names the
/// overrides of each.
#[test]
fn shards_run_with_other_overrides_are_refused_naming_them() {
    let p = crate::common::project();
    write(
        p.path(),
        "sweeps/s4.toml",
        "bench = \"hostsaw\"\ncompiler = \"cc\"\n[vars]\nmode = \"ok\"\nslow_ms = 0\n[[axis]]\nname = \"threads\"\nrange = [1, 4]\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n",
    );
    for (shard, range) in [("0/2", "threads=1:2"), ("1/2", "threads=3:4")] {
        let out = sweep(p.path())
            .args([
                "run",
                "sweeps/s4.toml",
                "-q",
                "--no-analyze",
                "--shard",
                shard,
            ])
            .args(["--split", "points", "-a", range])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let out = sweep(p.path())
        .args(["merge", "output/s4", "--out"])
        .arg(p.path().join("merged"))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("was run with other overrides than"), "{err}");
    assert!(
        err.contains("`-a threads=3:4` vs `-a threads=1:2`"),
        "{err}"
    );
    assert!(!err.contains("another spec"), "{err}");
    assert!(!p.path().join("merged").exists());
}

/// Review 10b, H2 (issue 38 item 3's neighbour in headers): an axis whose name starts like a
/// formula (`=cmd|' /C calc'!A0`, a CSV's header or a manifest edited) was written as is into
/// the header of compare.csv (its first cell) and, as a grouping axis, of analysis.csv: a
/// spreadsheet that evaluates formulas ran it. Values and metric names were defused already;
/// names in headers are too, and analysis.csv still reads back as written.
#[test]
fn an_axis_name_that_starts_like_a_formula_is_defused_in_every_csv_header() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = write(
        tmp.path(),
        "f.csv",
        "\"=cmd|' /C calc'!A0\",\"@g\",status,t_ms\n1,a,ok,2\n2,a,ok,3\n3,a,ok,1\n1,b,ok,2\n2,b,ok,3\n3,b,ok,1\n",
    );
    let run = |args: &[&str], out: &str| {
        let o = sweep(tmp.path())
            .args(args)
            .arg("--out")
            .arg(tmp.path().join(out))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    };
    let path = csv.to_str().unwrap();
    run(&["compare", path, path], "c");
    run(&["analyze", path, "--x", "=cmd|' /C calc'!A0"], "a");
    for file in ["c/compare.csv", "a/analysis.csv"] {
        let text = std::fs::read_to_string(tmp.path().join(file)).unwrap();
        let header = text.lines().next().unwrap();
        for cell in header.split(',') {
            let cell = cell.trim_start_matches('"');
            assert!(
                !cell.starts_with(['=', '+', '-', '@']),
                "{file}: `{cell}` in {header}"
            );
        }
    }
    let compare = std::fs::read_to_string(tmp.path().join("c/compare.csv")).unwrap();
    assert!(compare.starts_with("'=cmd|' /C calc'!A0,'@g,"), "{compare}");
    let analysis = std::fs::read_to_string(tmp.path().join("a/analysis.csv")).unwrap();
    assert!(
        analysis.starts_with("series,metric,unit,'@g,period"),
        "{analysis}"
    );
}

/// Review 10b, M3 on the run side: `run --output` naming a file, a path under one or a link to
/// nothing said "Not a directory" or "File exists", exit 4 (the environment, as a full disk).
/// Each is a usage error naming the part to change, before anything is built.
#[test]
fn a_run_output_that_no_folder_can_be_made_at_is_a_usage_error() {
    let p = crate::common::project();
    let file = write(p.path(), "afile", "x");
    std::os::unix::fs::symlink(p.path().join("nowhere"), p.path().join("dangling")).unwrap();
    for (output, want) in [
        (
            "afile",
            "--output `afile` is a file, not a folder".to_string(),
        ),
        (
            "afile/sub",
            "--output `afile/sub` lies under `afile`, which is a file".to_string(),
        ),
        (
            "dangling/sub",
            "--output `dangling/sub` lies under `dangling`, which is a link to".into(),
        ),
    ] {
        let out = sweep(p.path())
            .args([
                "run",
                "sweeps/saw.toml",
                "-q",
                "--no-analyze",
                "-a",
                "threads=1:2",
                "--output",
                output,
            ])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{output}: {err}");
        assert!(err.contains(&want), "{output}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    assert!(!p.path().join("nowhere").exists());
}

/// Review 10b, M7: `[analyze] x` (or `by`) naming no axis of the spec (a typo) was accepted by
/// `plan` and `run`; the whole sweep ran, then "the analysis at the end of the run failed" in a
/// warning, exit 0, while `sweep analyze` passed the key over. Refused when the spec is read,
/// with its line and the axes.
#[test]
fn an_analyze_key_that_names_no_axis_is_refused_with_its_line() {
    let p = crate::common::project();
    for (key, value) in [("x", "\"thread\""), ("by", "[\"mode\"]")] {
        write(
            p.path(),
            "sweeps/typo.toml",
            &format!("bench = \"hostsaw\"\ncompiler = \"cc\"\n[vars]\nmode = \"ok\"\nslow_ms = 0\n[[axis]]\nname = \"threads\"\nrange = [1, 4]\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n[analyze]\n{key} = {value}\n"),
        );
        for cmd in ["plan", "run"] {
            let out = sweep(p.path())
                .args([cmd, "sweeps/typo.toml"])
                .output()
                .unwrap();
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(3), "{cmd} {key}: {err}");
            assert!(
                err.starts_with(&format!(
                    "error: sweeps/typo.toml:13: `[analyze] {key}` names `"
                )),
                "{cmd} {key}: {err}"
            );
            assert!(err.contains("(hint: one of `threads`)"), "{err}");
        }
        assert!(!p.path().join("output/typo").exists());
    }
}
