//! Review 16b of issue 38 (the read side, on the round-16 tree): rows that get past the checks of
//! one reader and not another's, units and senses guessed wrong, uncertainties borrowed from
//! another metric, and compare's gate on a B that is not whole.

use crate::common::{
    code_and_err, col, edit_rows, project, run_dirs, run_of as run, stderr, sweep,
};
use crate::hardening::write;
use std::path::Path;

const TWO: &str = "bench = \"hostsaw\"\ncompiler = \"cc\"\n[vars]\nslow_ms = 0\nmode = \"ok\"\n[[axis]]\nname = \"threads\"\nrange = [1, 8]\n[[axis]]\nname = \"period\"\nvalues = [2, 4]\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n[analyze]\nx = \"threads\"\n";

/// Every value of `column` in `csv` times `by`.
fn scale(csv: &Path, column: &str, by: f64) {
    edit_rows(csv, |h, cells| {
        let i = col(h, column);
        if let Ok(v) = cells[i].parse::<f64>() {
            cells[i] = format!("{}", v * by);
        }
    });
}

/// Review 16b B1: a row whose axis cell was edited to another point's values, under its own
/// listed id, got past the two-rows check: analyze and the report put the median of the two
/// rows (1500 of 1000 and 2000) at x = 1, a value no point measured. Refused, naming both rows.
#[test]
fn two_rows_at_one_points_axis_values_are_refused_by_analyze() {
    let p = project();
    let r = run(p.path(), "two", TWO);
    edit_rows(&r.join("results.csv"), |h, cells| {
        if cells[col(h, "threads")] == "2" && cells[col(h, "period")] == "2" {
            cells[col(h, "threads")] = "1".into();
        }
    });
    let (code, err, _) = code_and_err(p.path(), &["analyze", r.to_str().unwrap()]);
    assert_eq!(code, Some(3), "{err}");
    // The edited row's id names threads=2 period=2: refused as a row at another point's values
    // (review 17 C2), by every reader of the run.
    assert!(
        err.contains("at threads=1 period=2, which are not that point's axis values"),
        "{err}"
    );
}

/// Review 16b B5: a bare CSV's `*_mb_per_s` column (every throughput but `gb_per_s`) was read
/// as seconds, lower is better: the worst point was "best (100.0 s)", and compare called a 20 %
/// gain slower (exit 5).
#[test]
fn a_bare_csvs_throughput_is_a_rate_not_seconds() {
    let p = project();
    let spec = TWO.replace(
        "unit = \"MFlops\"",
        "unit = \"MB/s\"\nregex = 'MFlops: (?P<value>[0-9.]+)'",
    );
    let r = run(p.path(), "bw", &spec);
    let a = p.path().join("a.csv");
    let b = p.path().join("b.csv");
    std::fs::copy(r.join("results.csv"), &a).unwrap();
    std::fs::copy(r.join("results.csv"), &b).unwrap();
    scale(&b, "saw_mb_per_s", 1.2);
    let (code, err, md) = code_and_err(p.path(), &["analyze", a.to_str().unwrap(), "--out", "an"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(md.contains("8 (8.000 GB/s)") && !md.contains(" s)"), "{md}");
    let (code, err, md) = code_and_err(
        p.path(),
        &[
            "compare",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--fail-on-slower",
            "5",
        ],
    );
    assert_eq!(code, Some(0), "{err}\n{md}");
    assert!(md.contains("0 same, 16 faster, 0 slower"), "{md}");
}

/// Review 16b B9: a metric with no uncertainty columns whose name starts with another's
/// (`saw_plain` beside `saw`) borrowed that one's spread: compare called a 20 % drop `same`
/// and `--fail-on-slower 5` passed.
#[test]
fn a_metric_never_borrows_another_metrics_spread() {
    let p = project();
    let spec = TWO.replace("mode = \"ok\"", "mode = \"unstable\"")
        + "[[metric]]\nname = \"saw_plain\"\nunit = \"MFlops\"\nregex = 'MFlops: (?P<value>[0-9.]+)'\n";
    let a = run(p.path(), "plain", &spec);
    let b = p.path().join("b");
    let out = std::process::Command::new("cp")
        .arg("-r")
        .arg(&a)
        .arg(&b)
        .status()
        .unwrap();
    assert!(out.success());
    for f in ["results.csv", "controls.csv"] {
        if b.join(f).exists() {
            scale(&b.join(f), "saw_plain_mflops", 0.8);
        }
    }
    let (code, err, md) = code_and_err(
        p.path(),
        &[
            "compare",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--y",
            "saw_plain",
            "--fail-on-slower",
            "5",
        ],
    );
    assert_eq!(code, Some(5), "{err}\n{md}");
    assert!(md.contains("0 same, 0 faster, 16 slower"), "{md}");
}

/// Review 16b B4: compare refused opposite senses only where both specs said `better`; a spec
/// that implied `higher` (MFlops) beside one that said `lower` let A's decide: a regression by
/// B's spec was `faster`, exit 0. Refused; a CSV alone takes the other side's sense.
#[test]
fn compare_refuses_an_implied_sense_against_a_said_one() {
    let p = project();
    let a = run(p.path(), "implied", TWO);
    let lower = TWO.replace(
        "unit = \"MFlops\"\n",
        "unit = \"MFlops\"\nbetter = \"lower\"\n",
    );
    let b = run(p.path(), "lower", &lower);
    let (code, err, _) = code_and_err(
        p.path(),
        &["compare", a.to_str().unwrap(), b.to_str().unwrap()],
    );
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("is better one way in"), "{err}");
    // A CSV alone (no spec) beside B: B's `lower` decides; B 20 % higher is slower.
    let bare = p.path().join("bare.csv");
    std::fs::copy(b.join("results.csv"), &bare).unwrap();
    for f in ["results.csv", "controls.csv"] {
        if b.join(f).exists() {
            scale(&b.join(f), "saw_mflops", 1.2);
        }
    }
    let (code, err, md) = code_and_err(
        p.path(),
        &[
            "compare",
            bare.to_str().unwrap(),
            b.to_str().unwrap(),
            "--fail-on-slower",
            "5",
        ],
    );
    assert_eq!(code, Some(5), "{err}\n{md}");
}

/// Review 16b B6: compare --out wrote its charts through a link at `DIR/charts`, over another
/// run's charts. Refused as plot refuses it; the run's charts are untouched.
#[test]
fn compare_out_never_writes_through_a_charts_link() {
    let p = project();
    let r = run(p.path(), "two", TWO);
    let victim = p.path().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("saw_mflops__period-2.svg"), "theirs").unwrap();
    let out = p.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::os::unix::fs::symlink(&victim, out.join("charts")).unwrap();
    let (code, err, _) = code_and_err(
        p.path(),
        &[
            "compare",
            r.to_str().unwrap(),
            r.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    // Exit 2, as `--out` of a run folder (review 17 C9: it was 4).
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(
        std::fs::read_to_string(victim.join("saw_mflops__period-2.svg")).unwrap(),
        "theirs"
    );
}

/// Review 16b B7 and B10: merge took a shard's row of a point its manifest does not list (the
/// other shard's), and compare read two rows of one id or a row of an unlisted id as "only in
/// B", exit 0; every other reader refuses them.
#[test]
fn merge_and_compare_refuse_rows_a_manifest_does_not_list() {
    let p = project();
    write(p.path(), "sweeps/sh.toml", TWO);
    for shard in ["0/2", "1/2"] {
        let out = sweep(p.path())
            .args([
                "run",
                "sweeps/sh.toml",
                "-q",
                "--no-analyze",
                "--split",
                "points",
                "--shard",
                shard,
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let mut shards = run_dirs(&p.path().join("output/sh"));
    shards.sort();
    // Shard 0 gets a copy of shard 1's first row.
    let other = std::fs::read_to_string(shards[1].join("results.csv")).unwrap();
    let row = other.split("\r\n").nth(1).unwrap().to_string();
    let csv = shards[0].join("results.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    std::fs::write(&csv, format!("{text}{row}\r\n")).unwrap();
    let s0 = shards[0].to_str().unwrap();
    let (code, err, _) = code_and_err(p.path(), &["merge", s0, shards[1].to_str().unwrap()]);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("which the run's manifest does not list"),
        "{err}"
    );
    let (code, err, _) = code_and_err(p.path(), &["compare", shards[1].to_str().unwrap(), s0]);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("which the run's manifest does not list"),
        "{err}"
    );
}

/// Review 16b B11: `--fail-on-slower` passed a B interrupted after 1 of its 16 points (the 15
/// it lacks were "only in A", not counted). A B that did not measure its own points fails the
/// gate, naming how many it measured.
#[test]
fn the_slower_gate_fails_a_b_that_did_not_measure_its_own_points() {
    let p = project();
    let a = run(p.path(), "two", TWO);
    let b = p.path().join("b");
    assert!(std::process::Command::new("cp")
        .arg("-r")
        .arg(&a)
        .arg(&b)
        .status()
        .unwrap()
        .success());
    let text = std::fs::read_to_string(a.join("results.csv")).unwrap();
    let first_two: Vec<&str> = text.split("\r\n").take(2).collect();
    std::fs::write(b.join("results.csv"), first_two.join("\r\n") + "\r\n").unwrap();
    let _ = std::fs::remove_file(b.join("controls.csv"));
    let m = std::fs::read_to_string(b.join("manifest.json")).unwrap();
    std::fs::write(
        b.join("manifest.json"),
        m.replace("\"state\": \"finished\"", "\"state\": \"interrupted\""),
    )
    .unwrap();
    let (code, err, _) = code_and_err(
        p.path(),
        &[
            "compare",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--fail-on-slower",
            "5",
        ],
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("B measured 1 of its 16 points"), "{err}");
}

/// Review 16b B13: a header name padded by hand (` threads `) was read by analyze and compare
/// (names trimmed) and refused by export and report. Every reader refuses it.
#[test]
fn a_padded_header_name_is_refused_by_every_reader() {
    let p = project();
    let r = run(p.path(), "two", TWO);
    let csv = r.join("results.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    std::fs::write(&csv, text.replacen(",threads,", ", threads ,", 1)).unwrap();
    let rs = r.to_str().unwrap();
    for args in [
        vec!["analyze", rs],
        vec!["compare", rs, rs],
        vec!["export", rs, "--format", "json"],
    ] {
        let (code, err, _) = code_and_err(p.path(), &args);
        assert_eq!(code, Some(3), "{args:?}: {err}");
        assert!(
            err.contains("has another header than its run's manifest lists"),
            "{args:?}: {err}"
        );
    }
}
