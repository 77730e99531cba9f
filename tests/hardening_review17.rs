//! Review 17 of issue 38 (the round-16 fixes, tried as a hostile user would): checks that one
//! reader applied and another did not, a row moved to another point's values, text values that
//! are one number, a rate per millisecond read as a time, and a resume that changed a run it then
//! refused.

use crate::common::{code_and_err, col, edit_rows, manifest, project, run_of as run};
use crate::hardening::write;
use std::path::Path;

/// A sweep of the host bench over threads 1..6 and two periods, with control re-runs.
pub(crate) const TWO: &str = "bench = \"hostsaw\"\ncompiler = \"cc\"\ncontrol_every = 4\n[vars]\nslow_ms = 0\nmode = \"ok\"\n[[axis]]\nname = \"threads\"\nrange = [1, 6]\n[[axis]]\nname = \"period\"\nvalues = [2, 4]\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n[analyze]\nx = \"threads\"\n";

/// A path as a command's argument.
pub(crate) fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Review 17 C2: a row whose listed id names `threads=6` had its axis cell edited to 60: every
/// reader took it ("best at threads = 60"), merge wrote it and resume kept it. Each refuses it
/// now, naming the point and the row, and the resume leaves the run as it was.
#[test]
fn a_row_at_another_points_axis_values_is_refused_by_every_reader() {
    let p = project();
    let r = run(p.path(), "two", TWO);
    edit_rows(&r.join("results.csv"), |h, cells| {
        if cells[col(h, "threads")] == "6" && cells[col(h, "period")] == "4" {
            cells[col(h, "threads")] = "60".into();
        }
    });
    let before = std::fs::read(r.join("results.csv")).unwrap();
    let state = manifest(&r)["state"].clone();
    let out = p.path().join("elsewhere");
    for args in [
        vec!["analyze", s(&r), "--out", s(&out)],
        vec!["report", s(&r), "--out", s(&out)],
        vec!["export", s(&r), "--out", s(&out)],
        vec!["compare", s(&r), s(&r)],
        vec!["merge", s(&r), "--out", s(&p.path().join("merged"))],
        vec!["resume", s(&r), "-q"],
    ] {
        let (code, err, _) = code_and_err(p.path(), &args);
        assert_eq!(code, Some(3), "{args:?}: {err}");
        assert!(
            err.contains("at threads=60 period=4, which are not that point's axis values")
                && err.contains("hint:")
                && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
    assert_eq!(std::fs::read(r.join("results.csv")).unwrap(), before);
    assert_eq!(manifest(&r)["state"], state, "the resume changed nothing");
    assert!(!p.path().join("merged").exists());
}

/// Review 17 C1: an edited controls.csv (a status no sweep writes) was refused by analyze and
/// compare, but report and export said "the same in all 6 control re-runs", exit 0. Every reader
/// of the run refuses it now.
#[test]
fn an_edited_controls_csv_is_refused_by_report_and_export_too() {
    let p = project();
    let r = run(p.path(), "two", TWO);
    let controls = r.join("controls.csv");
    assert!(controls.is_file(), "control_every = 4 made re-runs");
    edit_rows(&controls, |h, cells| cells[col(h, "status")] = "OK".into());
    let out = p.path().join("elsewhere");
    for args in [
        vec!["analyze", s(&r), "--out", s(&out)],
        vec!["report", s(&r), "--out", s(&out)],
        vec!["export", s(&r), "--out", s(&out)],
        vec!["compare", s(&r), s(&r)],
    ] {
        let (code, err, _) = code_and_err(p.path(), &args);
        assert_eq!(code, Some(3), "{args:?}: {err}");
        assert!(
            err.contains("controls.csv` has the status `OK`") && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
}

/// Review 17 C7: a resume refused because controls.csv was edited had already set the manifest
/// from `finished` to `interrupted`, and rewritten controls.csv. It is refused before it changes
/// anything.
#[test]
fn a_resume_refused_over_an_edited_controls_csv_changes_nothing() {
    let p = project();
    let r = run(p.path(), "two", TWO);
    let controls = r.join("controls.csv");
    // A torn last row too: a resume that went on would cut it.
    let mut text = std::fs::read_to_string(&controls).unwrap();
    text = text.replacen("threads", " threads", 1) + "pdeadbeef,3";
    std::fs::write(&controls, &text).unwrap();
    let manifest_before = std::fs::read(r.join("manifest.json")).unwrap();
    let (code, err, _) = code_and_err(p.path(), &["resume", s(&r), "-q"]);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("controls.csv") && err.lines().count() == 1,
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&controls).unwrap(), text);
    assert_eq!(
        std::fs::read(r.join("manifest.json")).unwrap(),
        manifest_before,
        "the manifest is as the run left it"
    );
}

/// Review 17 C3: `plan` accepted text values that are one number on an axis of numbers (`1` and
/// `"1.0"`, `1` and `"1e0"`): the run measured every point, then its analysis failed and the run
/// exited 0. Refused before anything runs, naming both points; text of a category is kept.
#[test]
fn values_that_are_one_number_are_refused_at_plan() {
    let p = project();
    for values in ["[1, \"1.0\", 2]", "[1, \"1e0\", 2]", "[\"2\", \"2.0\", 3]"] {
        let spec = TWO.replace("range = [1, 6]", &format!("values = {values}"));
        write(p.path(), "sweeps/one.toml", &spec);
        for args in [
            vec!["plan", "sweeps/one.toml"],
            vec!["run", "sweeps/one.toml", "-q"],
        ] {
            let (code, err, _) = code_and_err(p.path(), &args);
            assert_eq!(code, Some(3), "{values}: {args:?}: {err}");
            assert!(
                err.contains("one point in results.csv") && err.contains("hint:"),
                "{values}: {args:?}: {err}"
            );
        }
        assert!(
            !p.path().join("output/one").exists(),
            "{values}: nothing ran"
        );
    }
    // A category (one value is no number) keeps its texts apart.
    let spec = TWO.replace("values = [2, 4]", "values = [\"1\", \"1.0\", \"naive\"]");
    write(p.path(), "sweeps/cat.toml", &spec);
    let (code, err, _) = code_and_err(p.path(), &["plan", "sweeps/cat.toml"]);
    assert_eq!(code, Some(0), "{err}");
    // And the semicolon dialect's decimal comma: `"1,5"` and `"1.5"` are 1.5 there.
    let spec = TWO.replace("values = [2, 4]", "values = [\"1,5\", \"1.5\", \"2\"]");
    write(p.path(), "sweeps/semi.toml", &spec);
    let (code, err, _) = code_and_err(p.path(), &["plan", "sweeps/semi.toml"]);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("--csv-dialect semicolon"), "{err}");
}

/// Every shipped spec still plans.
#[test]
fn every_shipped_spec_still_plans() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for e in std::fs::read_dir(root.join("sweeps")).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "toml") {
            let (code, err, _) = code_and_err(root, &["plan", s(&path)]);
            assert_eq!(code, Some(0), "{}: {err}", path.display());
        }
    }
}

/// Review 17 C4: a bare CSV's `*_per_ms` column (unit `ops/ms`) was read as a time, lower is
/// better, as `*_per_s` was before review 16b B5: the slowest point was the best.
#[test]
fn a_bare_csvs_rate_per_millisecond_is_a_rate() {
    let p = project();
    let spec = TWO.replace(
        "unit = \"MFlops\"",
        "unit = \"ops/ms\"\nregex = 'MFlops: (?P<value>[0-9.]+)'",
    );
    let r = run(p.path(), "rate", &spec);
    let a = p.path().join("a.csv");
    std::fs::copy(r.join("results.csv"), &a).unwrap();
    let text = std::fs::read_to_string(&a).unwrap();
    assert!(text.contains("saw_ops_per_ms"), "{text}");
    let (code, err, md) = code_and_err(p.path(), &["analyze", s(&a), "--out", "an"]);
    assert_eq!(code, Some(0), "{err}");
    let md = std::fs::read_to_string(p.path().join("an/analysis.md")).unwrap_or(md);
    assert!(!md.contains(" s)"), "read as seconds: {md}");
    assert!(md.contains("/ms"), "{md}");
}

/// Review 17 C8: a metric's own status (`<metric>_status`) edited to a word no sweep writes was
/// read as no status, the row's taken instead, unsaid. Refused as the row's status is.
#[test]
fn a_metrics_own_status_word_is_checked_too() {
    let p = project();
    let r = run(p.path(), "two", TWO);
    let csv = r.join("results.csv");
    let header = std::fs::read_to_string(&csv).unwrap();
    assert!(header.contains("saw_status"), "{header}");
    edit_rows(&csv, |h, cells| {
        if cells[col(h, "threads")] == "3" {
            cells[col(h, "saw_status")] = "fine".into();
        }
    });
    for args in [
        vec!["analyze", s(&r), "--out", "an"],
        vec!["export", s(&r), "--out", "ex"],
    ] {
        let (code, err, _) = code_and_err(p.path(), &args);
        assert_eq!(code, Some(3), "{args:?}: {err}");
        assert!(
            err.contains("has `fine` in `saw_status` of its row"),
            "{args:?}: {err}"
        );
    }
}

/// Review 16b B2: a metric cell edited to text was a silent gap in the analysis, and turned its
/// column of the workbook to text. Every reader of the run refuses it, naming the cell.
#[test]
fn a_metric_value_that_is_no_number_is_refused() {
    let p = project();
    let r = run(p.path(), "two", TWO);
    edit_rows(&r.join("results.csv"), |h, cells| {
        if cells[col(h, "threads")] == "2" && cells[col(h, "period")] == "2" {
            cells[col(h, "saw_mflops")] = "n/a".into();
        }
    });
    for args in [
        vec!["analyze", s(&r), "--out", "an"],
        vec!["export", s(&r), "--out", "ex"],
        vec!["compare", s(&r), s(&r)],
    ] {
        let (code, err, _) = code_and_err(p.path(), &args);
        assert_eq!(code, Some(3), "{args:?}: {err}");
        assert!(
            err.contains("has `n/a` in the metric column `saw_mflops`") && err.contains("hint:"),
            "{args:?}: {err}"
        );
    }
}
