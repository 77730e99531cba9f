//! Review 18 of issue 38 (the round-17 fixes, tried as a hostile user would): a legitimate run
//! refused by the new row checks, checks turned off or skipped, and resume and merge changing or
//! writing what they then refuse.

use crate::common::{code_and_err, col, edit_rows, manifest, project, run_dirs, run_of as run};
use crate::hardening::write;
use crate::hardening_review17::{s, TWO as SPEC};

/// Review 18a F1: a text value of blanks alone (`" "`, a tab, U+00A0) was measured, and then
/// every reader refused the unedited run (a cell of blanks reads back empty, another value).
/// Refused at plan, naming the axis and the value; `""` stays a value.
#[test]
fn a_value_of_blanks_alone_is_refused_at_plan() {
    let p = project();
    for value in ["\" \"", "\"\\t\"", "\"\u{a0}\"", "\"\u{3000}\""] {
        let spec = SPEC.replace("values = [2, 4]", &format!("values = [\"a\", {value}]"));
        write(p.path(), "sweeps/blank.toml", &spec);
        let (code, err, _) = code_and_err(p.path(), &["plan", "sweeps/blank.toml"]);
        assert_eq!(code, Some(3), "{value}: {err}");
        assert!(
            err.contains("axis `period` has the value")
                && err.contains("only blanks")
                && err.contains("hint:")
                && err.lines().count() == 1,
            "{value}: {err}"
        );
    }
    let spec = SPEC.replace("values = [2, 4]", "values = [\"a\", \"\"]");
    write(p.path(), "sweeps/empty.toml", &spec);
    let (code, err, _) = code_and_err(p.path(), &["plan", "sweeps/empty.toml"]);
    assert_eq!(code, Some(0), "{err}");
}

/// Review 18a F3 and F4: a metric value `NaN` or `inf` got past the number check (a gap, and
/// `NaN` text in the export); a metric's own status `run_failed` was "none of sweep's" beside a
/// hint that listed it. Both refused, naming the column.
#[test]
fn non_finite_values_and_a_failed_own_status_are_refused() {
    let p = project();
    let r = run(p.path(), "two", SPEC);
    let csv = r.join("results.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    for value in ["NaN", "inf", "-infinity", "1e999"] {
        std::fs::write(&csv, &text).unwrap();
        edit_rows(&csv, |h, cells| {
            if cells[col(h, "threads")] == "2" {
                cells[col(h, "saw_mflops")] = value.into();
            }
        });
        let (code, err, _) = code_and_err(p.path(), &["analyze", s(&r), "--out", "an"]);
        assert_eq!(code, Some(3), "{value}: {err}");
        assert!(
            err.contains(&format!("has `{value}` in the metric column `saw_mflops`")),
            "{value}: {err}"
        );
    }
    std::fs::write(&csv, &text).unwrap();
    edit_rows(&csv, |h, cells| {
        if cells[col(h, "threads")] == "2" {
            cells[col(h, "saw_status")] = "run_failed".into();
        }
    });
    let (code, err, _) = code_and_err(p.path(), &["export", s(&r), "--out", "ex"]);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("has `run_failed` in `saw_status` of its row")
            && err.contains("a metric's own status is ok, noisy or unstable"),
        "{err}"
    );
}

/// Review 18a F10: whether rows were checked against their ids was decided by the manifest's
/// first id alone: one id rewritten in the old scheme (12 bare hex digits) turned the check off
/// for every row, and a point moved to `threads=9` was read there. Each row is judged by its own.
#[test]
fn one_old_id_does_not_turn_the_check_off_for_the_others() {
    let p = project();
    let r = run(p.path(), "two", SPEC);
    let first = manifest(&r)["point_ids"][0].as_str().unwrap().to_string();
    for file in ["manifest.json", "results.csv", "controls.csv"] {
        let path = r.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace(&first, "0123456789ab")).unwrap();
    }
    edit_rows(&r.join("results.csv"), |h, cells| {
        if cells[col(h, "threads")] == "5" && cells[col(h, "period")] == "2" {
            cells[col(h, "threads")] = "9".into();
        }
    });
    let (code, err, _) = code_and_err(p.path(), &["analyze", s(&r), "--out", "an"]);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("at threads=9 period=2, which are not that point's axis values"),
        "{err}"
    );
}

/// Review 18b F1 and F7: a file at `passes/` was found by the repeat passes after the resume had
/// rewritten the manifest (and a warning named `` as no run folder); a `controls.csv` a kill left
/// empty was refused by every reader. The resume refuses the file before it changes anything, in
/// one line; the empty controls.csv holds no re-run.
#[test]
fn a_resume_refuses_a_file_at_passes_before_it_changes_anything() {
    let p = project();
    let spec = SPEC.replace("control_every = 4", "repeat = 2");
    let r = run(p.path(), "rep", &spec);
    std::fs::remove_dir_all(r.join("passes")).unwrap();
    std::fs::write(r.join("passes"), "hi").unwrap();
    let before = std::fs::read(r.join("manifest.json")).unwrap();
    let (code, err, _) = code_and_err(p.path(), &["resume", s(&r), "-q"]);
    assert_ne!(code, Some(0), "{err}");
    assert!(
        err.contains("it is no folder") && err.contains("hint:") && err.lines().count() == 1,
        "{err}"
    );
    assert_eq!(std::fs::read(r.join("manifest.json")).unwrap(), before);

    let r = run(p.path(), "two", SPEC);
    std::fs::write(r.join("controls.csv"), "").unwrap();
    for args in [
        vec!["export", s(&r), "--out", "ex"],
        vec!["report", s(&r), "--out", "rep"],
        vec!["analyze", s(&r), "--out", "an"],
    ] {
        let (code, err, _) = code_and_err(p.path(), &args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
    }
}

/// Review 18b F2: a resume of a whole run given `--shard 1/2` measured that shard's points, said
/// the rest "already done" and exited 130. Refused (exit 2), the run unchanged.
#[test]
fn a_whole_run_is_not_resumed_as_a_shard() {
    let p = project();
    let r = run(p.path(), "two", SPEC);
    let before = std::fs::read(r.join("manifest.json")).unwrap();
    let (code, err, _) = code_and_err(p.path(), &["resume", s(&r), "--shard", "1/2", "-q"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("is a whole run, of no shard") && err.contains("hint:"),
        "{err}"
    );
    assert_eq!(std::fs::read(r.join("manifest.json")).unwrap(), before);
}

/// Review 18b F3 and F5: merge took a shard's controls.csv row of a point no manifest lists, and
/// wrote a run every reader then refused; and it wrote its `--out` inside a shard's own folder.
/// Both refused, nothing written.
#[test]
fn merge_refuses_foreign_kept_rows_and_an_out_inside_a_shard() {
    let p = project();
    write(p.path(), "sweeps/sh.toml", SPEC);
    for shard in ["0/2", "1/2"] {
        let (code, err, _) = code_and_err(
            p.path(),
            &[
                "run",
                "sweeps/sh.toml",
                "-q",
                "--no-analyze",
                "--shard",
                shard,
            ],
        );
        assert_eq!(code, Some(0), "{err}");
    }
    let mut shards = run_dirs(&p.path().join("output/sh"));
    shards.sort();
    let (a, b) = (s(&shards[0]), s(&shards[1]));
    let inside = shards[0].join("sub");
    let (code, err, _) = code_and_err(p.path(), &["merge", a, b, "--out", s(&inside)]);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("a run it merges"), "{err}");
    assert!(!inside.exists());

    let controls = shards[0].join("controls.csv");
    let text = std::fs::read_to_string(&controls).unwrap();
    let id = text
        .split("\r\n")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap();
    std::fs::write(&controls, text.replace(id, "p0123456789ab")).unwrap();
    let out = p.path().join("merged");
    let (code, err, _) = code_and_err(p.path(), &["merge", a, b, "--out", s(&out)]);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("controls.csv` has a row of the point `p0123456789ab`"),
        "{err}"
    );
    assert!(!out.exists());
}

/// Review 18a F5 (and 16b B3): `sweep analyze RUN` and `sweep plot` took the default x (the axis
/// of most values), not the spec's `[analyze] x`: the run's analysis.csv was written again along
/// another axis, or an axis the run never analysed along was refused. A run folder's CSV read
/// without `--x`, `--y` or `--by` takes its spec's `[analyze]`; `--x` still picks.
#[test]
fn analyze_of_a_run_takes_its_specs_analyze_table() {
    let p = project();
    let spec = SPEC
        .replace("values = [2, 4]", "values = [2, 4, 8]")
        .replace("x = \"threads\"", "x = \"period\"");
    let r = run(p.path(), "px", &spec);
    for (args, x) in [
        (vec!["analyze", s(&r), "--out", "a1"], "period"),
        (
            vec!["analyze", s(&r), "--out", "a2", "--x", "threads"],
            "threads",
        ),
    ] {
        let (code, err, md) = code_and_err(p.path(), &args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert!(
            md.lines()
                .next()
                .unwrap_or("")
                .ends_with(&format!("against `{x}`")),
            "{args:?}: {md}"
        );
    }
}
