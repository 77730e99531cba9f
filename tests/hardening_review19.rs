//! What review 18 left open of issue 38 (each tried as a hostile user would): a resume that
//! rewrote a finished run to say "nothing to do", a second row in an earlier pass found only
//! after the resume had changed the run, a merge that took a pass short of a row, a torn row cut
//! without a word, and a report drawn along another x than the run's own analysis.

use crate::common::{code_and_err, manifest, project, run_dirs, run_of as run};
use crate::hardening::write;
use crate::hardening_review17::{s, TWO as SPEC};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every file under `dir` with its bytes and modification time.
fn files(dir: &Path) -> Files {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let meta = e.metadata().unwrap();
            (
                e.path().to_path_buf(),
                (std::fs::read(e.path()).unwrap(), meta.modified().unwrap()),
            )
        })
        .collect()
}

/// The run's manifest said `interrupted`, as a kill leaves it to a resume.
fn as_killed(run: &Path) {
    let path = run.join("manifest.json");
    let mut m = manifest(run);
    m["state"] = "interrupted".into();
    std::fs::write(path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
}

/// Line `n` of a CSV (0: its header) written again at its end, as a hand's copy would; the
/// text it held before.
fn repeat_line(csv: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(csv).unwrap();
    let again = text.split_inclusive('\n').nth(n).unwrap().to_string();
    std::fs::write(csv, text.clone() + &again).unwrap();
    text
}

/// The lines of `passes/pass-<pass>.csv` of the run of `sweeps/<name>.toml` (0 before it has one).
pub(crate) fn pass_lines(p: &Path, name: &str, pass: u32) -> usize {
    let dir = p.join("output").join(name);
    let runs = if dir.is_dir() { run_dirs(&dir) } else { vec![] };
    runs.first()
        .and_then(|r| std::fs::read_to_string(r.join(format!("passes/pass-{pass}.csv"))).ok())
        .map_or(0, |t| t.lines().count())
}

/// `sweep run sweeps/<name>.toml -q` (spec `spec`), sent SIGINT once its pass `pass` has a row:
/// what it printed, after it exited 130.
pub(crate) fn interrupted_in_pass(p: &Path, name: &str, spec: &str, pass: u32) -> String {
    write(p, &format!("sweeps/{name}.toml"), spec);
    let child = crate::common::sweep_process(p)
        .args(["run", &format!("sweeps/{name}.toml"), "-q"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while pass_lines(p, name, pass) < 2 && t0.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        crate::common::stderr(&out)
    );
    crate::common::stdout(&out)
}

/// The run's results.csv without its last row.
fn drop_last_row(run: &Path) {
    let csv = run.join("results.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    lines.pop();
    std::fs::write(&csv, lines.concat()).unwrap();
}

/// Review 18b F6: `sweep resume` of a finished run said "nothing to do", yet rewrote its
/// manifest (`command`, `resumed`, `finished`), report, analysis and charts. It now says so
/// and leaves every file as it was, exit 0.
#[test]
fn resuming_a_finished_run_changes_nothing() {
    let p = project();
    write(p.path(), "sweeps/two.toml", SPEC);
    let (code, err, _) = code_and_err(p.path(), &["run", "sweeps/two.toml", "-q"]);
    assert_eq!(code, Some(0), "{err}");
    let r = run_dirs(&p.path().join("output/two"))[0].clone();
    assert!(r.join("analysis.csv").exists() && r.join("report.html").exists());
    let before = files(&r);
    std::thread::sleep(std::time::Duration::from_millis(50));
    let (code, err, said) = code_and_err(p.path(), &["resume", s(&r), "-q"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        said.contains("nothing to do")
            && said.contains("is finished (12 already done before)")
            && said.contains("left as it was"),
        "{said}"
    );
    assert_eq!(said.lines().count(), 1, "{said}");
    unchanged(&before, &files(&r));
    // Its end could not write the analysis (a full disk): the hint says what writes it
    // (review 19b F7).
    std::fs::remove_file(r.join("analysis.md")).unwrap();
    let (code, err, said) = code_and_err(p.path(), &["resume", s(&r), "-q"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        said.contains("its analysis is missing: `sweep analyze"),
        "{said}"
    );
}

type Files = BTreeMap<PathBuf, (Vec<u8>, std::time::SystemTime)>;

/// The same files, each as it was.
fn unchanged(before: &Files, after: &Files) {
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    for (path, was) in before {
        assert!(after[path] == *was, "{} was rewritten", path.display());
    }
}

/// Review 18b F1 (its pass part): a second row of a point in `passes/pass-0.csv` (a pass before
/// the last, one row per point) was found by the last pass only after the resume had rewritten
/// the manifest. The resume refuses it before it changes anything; a second row in the last
/// pass's CSV (a kill between a process's row and its point's) stays legitimate.
#[test]
fn a_second_row_in_an_earlier_pass_is_refused_before_the_resume_changes_anything() {
    let p = project();
    let spec = SPEC.replace("control_every = 4\n", "repeat = 3\n");
    let r = run(p.path(), "rep", &spec);
    drop_last_row(&r);
    as_killed(&r);
    let pass0 = r.join("passes/pass-0.csv");
    let text = repeat_line(&pass0, 1);
    let before = files(&r);
    let (code, err, _) = code_and_err(p.path(), &["resume", s(&r), "-q"]);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("passes/pass-0.csv` has two rows of the point")
            && err.contains("each of its passes but the last")
            && err.lines().count() == 1,
        "{err}"
    );
    unchanged(&before, &files(&r));
    // The same second row in the last pass's CSV is a kill's leftover: the resume measures the
    // point again.
    std::fs::write(&pass0, &text).unwrap();
    repeat_line(&r.join("passes/pass-2.csv"), 1);
    let (code, err, _) = code_and_err(p.path(), &["resume", s(&r), "-q"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(manifest(&r)["state"], "finished");
}

/// Review 18b F3 (its rest): merge of `repeat` shards took a pass CSV short of a point's row
/// (deleted by hand) and wrote a merged run whose pass lacked a process its results row
/// combines. Refused, naming the file and the point; nothing is written.
#[test]
fn merge_refuses_a_pass_short_of_a_row_its_results_combine() {
    let p = project();
    let spec = SPEC.replace("control_every = 4\n", "repeat = 3\n");
    write(p.path(), "sweeps/rep.toml", &spec);
    for shard in ["0/2", "1/2"] {
        let (code, err, _) = code_and_err(
            p.path(),
            &[
                "run",
                "sweeps/rep.toml",
                "-q",
                "--no-analyze",
                "--shard",
                shard,
            ],
        );
        assert_eq!(code, Some(0), "{err}");
    }
    let runs = run_dirs(&p.path().join("output/rep"));
    let pass1 = runs[0].join("passes/pass-1.csv");
    let text = std::fs::read_to_string(&pass1).unwrap();
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    lines.remove(1);
    std::fs::write(&pass1, lines.concat()).unwrap();
    let out = p.path().join("merged");
    let (code, err, _) = code_and_err(
        p.path(),
        &["merge", s(&p.path().join("output/rep")), "--out", s(&out)],
    );
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("passes/pass-1.csv` has no row of the point")
            && err.contains("nothing was written")
            && err.lines().count() == 1,
        "{err}"
    );
    assert!(!out.exists());
}

/// Review 18b F8: the resume cut a torn last row off results.csv without a word, where every
/// reader that leaves one out warns of it. It says so, naming the file and the line.
#[test]
fn a_resume_says_it_cut_a_torn_row() {
    let p = project();
    let r = run(p.path(), "two", SPEC);
    let csv = r.join("results.csv");
    let len = std::fs::metadata(&csv).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&csv)
        .unwrap()
        .set_len(len - 6)
        .unwrap();
    as_killed(&r);
    let (code, err, _) = code_and_err(p.path(), &["resume", s(&r), "-q"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("results.csv` line 13: its last row was torn")
            && err.contains("is cut off before the run appends to it"),
        "{err}"
    );
    assert_eq!(manifest(&r)["state"], "finished");
}

/// Review 18 left it: `sweep report` drew the page along sweep's default x (the numeric axis with
/// the most values), where the run's own analysis and charts took the spec's `[analyze] x`. A
/// spec of 6 threads by 7 periods, analysed along threads: the page's chart shows curves of
/// threads, one per period, as charts/ does.
#[test]
fn the_report_draws_along_the_specs_analyze() {
    let p = project();
    let spec = SPEC.replace("values = [2, 4]", "values = [2, 4, 8, 16, 32, 64, 128]");
    write(p.path(), "sweeps/wide.toml", &spec);
    let (code, err, _) = code_and_err(p.path(), &["run", "sweeps/wide.toml", "-q"]);
    assert_eq!(code, Some(0), "{err}");
    let r = run_dirs(&p.path().join("output/wide"))[0].clone();
    assert!(r.join("charts/family-saw-by-period.svg").exists());
    let out = p.path().join("page");
    let (code, err, _) = code_and_err(p.path(), &["report", s(&r), "--out", s(&out)]);
    assert_eq!(code, Some(0), "{err}");
    for page in [r.join("report.html"), out.join("report.html")] {
        let html = std::fs::read_to_string(&page).unwrap();
        assert!(
            html.contains("<figcaption title=\"saw by period\">")
                && !html.contains("saw by threads"),
            "{}",
            page.display()
        );
    }
}

/// A shard dealt no point (3 shards of a sweep of 2 series) finishes with nothing to do: its end
/// no longer warns that the analysis failed for want of rows.
#[test]
fn a_shard_of_no_point_does_not_warn_of_its_analysis() {
    let p = project();
    write(p.path(), "sweeps/two.toml", SPEC);
    let (code, err, said) = code_and_err(p.path(), &["run", "sweeps/two.toml", "--shard", "2/3"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(said.contains("nothing to do"), "{said}");
    assert!(!err.contains("analysis"), "{err}");
}

/// Review 19a H1: the charts padded x by at least half a unit, whatever its values: an axis of
/// 0.01..0.05 filled 4 % of the plot, and 1e-6..5e-6 fell onto one pixel (one dot per curve
/// above one tick). Each x now gets a place of its own across the plot.
#[test]
fn a_float_axis_of_small_values_spreads_over_the_plot() {
    let p = project();
    for values in ["[0.01, 0.02, 0.03, 0.04, 0.05]", "[1e-6, 2e-6, 3e-6, 5e-6]"] {
        // `v`, an axis the bench does not use, analysed along.
        let spec = SPEC
            .replace("range = [1, 6]", "values = [1, 2]")
            .replace("control_every = 4\n", "")
            .replace(
                "[[metric]]",
                &format!("[[axis]]\nname = \"v\"\nvalues = {values}\n[[metric]]"),
            )
            .replace(
                "x = \"threads\"",
                "x = \"v\"\nby = [\"threads\", \"period\"]",
            );
        write(p.path(), "sweeps/small.toml", &spec);
        let (code, err, _) = code_and_err(p.path(), &["run", "sweeps/small.toml", "-q", "--force"]);
        assert_eq!(code, Some(0), "{err}");
        let mut runs = run_dirs(&p.path().join("output/small"));
        runs.sort();
        let svg = std::fs::read_to_string(
            runs.last()
                .unwrap()
                .join("charts/saw_mflops__threads-1__period-2.svg"),
        )
        .unwrap();
        let mut cx: Vec<f64> = svg
            .split("<circle cx=\"")
            .skip(1)
            .filter_map(|t| t.split('"').next()?.parse().ok())
            .collect();
        cx.sort_by(f64::total_cmp);
        cx.dedup();
        let n = values.matches(',').count() + 1;
        assert_eq!(cx.len(), n, "{values}: {cx:?}");
        let width: f64 = svg
            .split("width=\"")
            .nth(1)
            .and_then(|t| t.split('"').next()?.parse().ok())
            .unwrap();
        assert!(
            cx[n - 1] - cx[0] > 0.6 * width,
            "{values}: the points span {:.0} of {width} px",
            cx[n - 1] - cx[0]
        );
    }
}

/// Review 19a M1: an axis of the texts `"inf"`, `"-inf"` and `"nan"` was taken for one of
/// numbers (the default x), then refused by the reader as not one: the run's own analysis and
/// charts failed at its end, `sweep analyze RUN` exited 3. It is an axis of categories: the
/// analysis runs along the axis of numbers, and `[analyze] x` naming it is refused at plan.
#[test]
fn texts_that_rust_reads_as_infinite_are_categories() {
    let p = project();
    let spec = SPEC.replace("values = [2, 4]", "values = [\"inf\", \"-inf\", \"nan\"]");
    let spec = spec.replace("[analyze]\nx = \"threads\"\n", "[analyze]\nplot = true\n");
    write(p.path(), "sweeps/inf.toml", &spec);
    let (code, err, _) = code_and_err(p.path(), &["run", "sweeps/inf.toml", "-q"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("failed"), "{err}");
    let r = run_dirs(&p.path().join("output/inf"))[0].clone();
    assert!(r.join("charts/family-saw-by-period.svg").exists());
    let (code, err, said) = code_and_err(p.path(), &["analyze", s(&r), "--out", "an"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(said.contains("against `threads`"), "{said}");
    write(
        p.path(),
        "sweeps/inf.toml",
        &spec.replace("plot = true", "x = \"period\""),
    );
    let (code, err, _) = code_and_err(p.path(), &["plan", "sweeps/inf.toml"]);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("whose value `inf` is not a number"), "{err}");
}

/// Review 19b F1: a second row of a point in `passes/pass-0.csv` (a pass before the last) was
/// refused by the resume of an unfinished run, but merge took the later row (beside a results row
/// that combined the other), and the resume of the finished run said "nothing to do". Both
/// refuse it now, naming the file, the point and both rows.
#[test]
fn merge_and_a_finished_runs_resume_refuse_a_second_row_in_an_earlier_pass() {
    let p = project();
    let spec = SPEC.replace("control_every = 4\n", "repeat = 3\n");
    let r = run(p.path(), "rep", &spec);
    repeat_line(&r.join("passes/pass-0.csv"), 2);
    let out = p.path().join("merged");
    for args in [
        vec!["merge", s(&r), "--out", s(&out)],
        vec!["resume", s(&r), "-q"],
    ] {
        let (code, err, said) = code_and_err(p.path(), &args);
        assert_eq!(code, Some(3), "{args:?}: {err}{said}");
        assert!(
            err.contains("passes/pass-0.csv` has two rows of the point")
                && err.contains("its rows 2 and 13 after the header")
                && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
    assert!(!out.exists());
}

/// Review 19b F2: the series table of a resume took the marks' causes from the rows it measured
/// itself: a resume that measured none of a `repeat` run's processes-marked values called them
/// "4 placement", where the report and analysis.md said they differ between processes.
#[test]
fn a_resumes_series_table_names_the_cause_its_rows_say() {
    let p = project();
    let spec = SPEC
        .replace("control_every = 4\n", "repeat = 3\n")
        .replace("mode = \"ok\"", "mode = \"varies\"")
        .replace("values = [2, 4]", "values = [2]");
    write(p.path(), "sweeps/varies.toml", &spec);
    let (code, err, said) = code_and_err(p.path(), &["run", "sweeps/varies.toml"]);
    assert_eq!(code, Some(0), "{err}");
    let row = |said: &str| {
        said.lines()
            .find(|l| l.starts_with("saw_mflops "))
            .map(str::to_string)
            .unwrap_or_default()
    };
    assert!(row(&said).contains(" processes"), "{said}");
    let r = run_dirs(&p.path().join("output/varies"))[0].clone();
    let (code, err, said) = code_and_err(p.path(), &["resume", s(&r), "--export", "csv"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        row(&said).contains(" processes") && !row(&said).contains("placement"),
        "{said}"
    );
}

/// Review 19b F6: `sweep cache stats` beside a running sweep called the builds it was making
/// "unfinished builds of killed sweeps". They are told apart as `cache clean` tells them.
#[test]
fn cache_stats_beside_a_running_sweep_calls_no_build_a_killed_sweeps() {
    let p = project();
    let spec = SPEC
        .replace("range = [1, 6]", "range = [1, 24]")
        .replace("control_every = 4\n", "");
    write(p.path(), "sweeps/busy.toml", &spec);
    let mut child = crate::common::sweep_process(p.path())
        .args(["run", "sweeps/busy.toml", "-q", "-j", "2"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut polls = Vec::new();
    while child.try_wait().unwrap().is_none() {
        let (code, err, said) = code_and_err(p.path(), &["cache", "stats"]);
        assert_eq!(code, Some(0), "{err}");
        polls.push(said);
    }
    assert!(child.wait().unwrap().success());
    assert!(
        polls.len() > 3,
        "stats ran beside the sweep: {}",
        polls.len()
    );
    for said in &polls {
        assert!(!said.contains("killed sweeps"), "{said}");
    }
}

/// Review 19b F5: a run stopped by a full disk before its setup saved a word (its manifest
/// without compiler or prestart, no row) was resumed as an older sweep's, with a warning of
/// programs "started 1 ahead" that never started. It is resumed without one.
#[test]
fn a_run_stopped_before_its_setup_is_resumed_without_the_old_sweeps_warning() {
    let p = project();
    let r = run(p.path(), "two", SPEC);
    let csv = r.join("results.csv");
    let header = std::fs::read_to_string(&csv).unwrap();
    let header = header.split_inclusive('\n').next().unwrap().to_string();
    std::fs::write(&csv, header).unwrap();
    std::fs::remove_file(r.join("controls.csv")).unwrap();
    let mut m = manifest(&r);
    m["state"] = "interrupted".into();
    m["compiler"] = "".into();
    m["compiler_version"] = "".into();
    m["prestart"] = serde_json::Value::Null;
    std::fs::write(r.join("manifest.json"), m.to_string()).unwrap();
    let (code, err, _) = code_and_err(p.path(), &["resume", s(&r), "-q"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("started 1 ahead"), "{err}");
    assert_eq!(manifest(&r)["state"], "finished");
}

/// Review 19b F4: a `repeat` run stopped in its first pass said "interrupted after 2 points: 2
/// measured" with no row in results.csv: it counted that pass's processes as points. It names
/// the pass and counts processes.
#[test]
fn a_repeat_run_stopped_in_a_pass_names_the_pass_and_counts_processes() {
    let p = project();
    let spec = SPEC
        .replace("control_every = 4\n", "repeat = 3\n")
        .replace("slow_ms = 0", "slow_ms = 300");
    let said = interrupted_in_pass(p.path(), "slow", &spec, 0);
    assert!(
        said.contains("interrupted in pass 1 of 3 after") && said.contains(" process"),
        "{said}"
    );
    assert!(!said.contains(" points"), "{said}");
}

/// Review 19a M3: a `by` naming x was dropped without a word, and the axes then left out were
/// merged into medians, unsaid (`--by threads` on the H100 thread-pitch sweep merged its layouts).
/// `--by` and `[analyze] by` naming x are refused; a `by` that leaves an axis out says the rows
/// are merged.
#[test]
fn a_by_naming_x_is_refused_and_a_merge_is_said() {
    let p = project();
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/h100/threads_pitch/results.csv");
    let (code, err, _) = code_and_err(
        p.path(),
        &["analyze", s(&fixture), "--by", "threads", "--out", "an"],
    );
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("`by` names `threads`, the axis the series run along")
            && err.contains("`layout`")
            && err.lines().count() == 1,
        "{err}"
    );
    let spec = SPEC.replace("x = \"threads\"\n", "x = \"threads\"\nby = [\"threads\"]\n");
    write(p.path(), "sweeps/byx.toml", &spec);
    let (code, err, _) = code_and_err(p.path(), &["plan", "sweeps/byx.toml"]);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("`[analyze] by` names `threads`"), "{err}");
    let spec = SPEC.replace("x = \"threads\"\n", "x = \"threads\"\nby = []\n");
    write(p.path(), "sweeps/merged.toml", &spec);
    let (code, err, _) = code_and_err(p.path(), &["run", "sweeps/merged.toml", "-q"]);
    assert_eq!(code, Some(0), "{err}");
    let r = run_dirs(&p.path().join("output/merged"))[0].clone();
    let md = std::fs::read_to_string(r.join("analysis.md")).unwrap();
    assert!(
        md.contains("The series are not split by `period`: the rows at one x that differ only there are one point, their median."),
        "{md}"
    );
    // And where else the medians show (review 20a H3): the reading, the chart, the report.
    assert!(
        md.contains("at each threads, the median of its rows over `period`"),
        "{md}"
    );
    let svg = std::fs::read_to_string(r.join("charts/saw_mflops.svg")).unwrap();
    assert!(svg.contains("each point the median of its rows over period"));
    let html = std::fs::read_to_string(r.join("report.html")).unwrap();
    assert!(html.contains("the median of its rows over"));
}

/// Review 19a M7: where the run's spec `[analyze]` named what its results lack (its manifest
/// edited), `sweep analyze RUN` said "no axis `zz`", though the user gave no `--x`. It says
/// where `zz` comes from.
#[test]
fn an_analysis_the_runs_spec_asks_for_says_so_when_it_fails() {
    let p = project();
    let r = run(p.path(), "two", SPEC);
    let mut m = manifest(&r);
    let spec = m["spec"]
        .as_str()
        .unwrap()
        .replace("x = \"threads\"", "x = \"zz\"")
        .replace(
            "[[metric]]",
            "[[axis]]\nname = \"zz\"\nvalues = [1, 2]\n[[metric]]",
        );
    m["spec"] = spec.into();
    std::fs::write(r.join("manifest.json"), m.to_string()).unwrap();
    for cmd in ["analyze", "plot"] {
        let (code, err, _) = code_and_err(p.path(), &[cmd, s(&r), "--out", "an"]);
        assert_eq!(code, Some(3), "{cmd}: {err}");
        assert!(
            err.contains(
                "the run's spec asks `[analyze]` x = \"zz\" (manifest.json), and no axis `zz`"
            ) && err.lines().count() == 1,
            "{cmd}: {err}"
        );
    }
    let (code, err, _) = code_and_err(
        p.path(),
        &["analyze", s(&r), "--x", "threads", "--out", "an"],
    );
    assert_eq!(code, Some(0), "{err}");
}

/// Review 19a M6: `sweep compare` listed `ok` rows whose values are 0 or less under "Failed",
/// and with nothing compared said "every compared value is the same". Each is said as it is.
#[test]
fn compare_tells_values_below_zero_from_failures_and_says_when_nothing_was_compared() {
    let p = project();
    let a = run(p.path(), "two", SPEC);
    let b = p.path().join("neg");
    std::fs::create_dir(&b).unwrap();
    for f in ["results.csv", "manifest.json"] {
        std::fs::copy(a.join(f), b.join(f)).unwrap();
    }
    crate::common::edit_rows(&b.join("results.csv"), |h, cells| {
        let c = crate::common::col(h, "saw_mflops");
        cells[c] = format!("-{}", cells[c]);
    });
    let (code, err, said) = code_and_err(p.path(), &["compare", s(&a), s(&b)]);
    assert_eq!(code, Some(0), "{err}");
    assert!(said.contains("Failed (not compared): 0."), "{said}");
    assert!(
        said.contains("Without a value above 0 (not compared): 12 (threads=1, period=2 `saw_mflops` (B -1000)"),
        "{said}"
    );
    assert!(said.contains("None: no value was compared."), "{said}");
    // Nor are they failed in the series table (review 20a M1).
    for row in said.lines().filter(|l| l.starts_with("| saw_mflops")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!(cells[7], "0", "{row}");
    }
    assert!(!said.contains("every compared value is the same"), "{said}");
}

/// Review 19a M5: the argument parser's usage errors took 3 to 7 lines (its tip, the usage and
/// "For more information" each on lines of their own). One line each, exit 2; help still prints
/// whole.
#[test]
fn usage_errors_of_the_argument_parser_are_one_line() {
    let p = project();
    for args in [
        vec!["compare", "a", "b", "--fail-on-slower", "-5"],
        vec!["plan", "sweeps/saw.toml", "-a", "threads="],
        vec!["plan", "sweeps/saw.toml", "-a", "threads"],
        vec!["run"],
        vec!["frobnicate"],
        vec!["export", "x", "--format", "gif"],
    ] {
        let (code, err, _) = code_and_err(p.path(), &args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("error: ") && err.contains("hint:"),
            "{args:?}: {err}"
        );
    }
    let (code, _, said) = code_and_err(p.path(), &["run", "--help"]);
    assert_eq!(code, Some(0));
    assert!(
        said.contains("Usage: sweep run") && said.lines().count() > 5,
        "{said}"
    );
}

/// Review 19a M2: a metric named as another metric's column (`saw_mflops` beside `saw` in
/// MFlops) was one metric to `[analyze] y` and the other to `headline`. Refused at plan.
#[test]
fn a_metric_named_as_another_metrics_column_is_refused() {
    let p = project();
    let spec = SPEC.replace(
        "[analyze]",
        "[[metric]]\nname = \"saw_mflops\"\nunit = \"ms\"\nregex = 'threads (?P<value>[0-9]+) mode'\n[analyze]",
    );
    write(p.path(), "sweeps/amb.toml", &spec);
    let (code, err, _) = code_and_err(p.path(), &["plan", "sweeps/amb.toml"]);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("metric `saw_mflops` has the name of metric `saw`'s column")
            && err.lines().count() == 1,
        "{err}"
    );
}

/// Review 19b F7: `sweep resume RUN --output DIR` was taken and ignored (the resume wrote into
/// its run's own folder). Another folder is refused, exit 2; the run's own is taken.
#[test]
fn a_resume_refuses_another_output() {
    let p = project();
    let r = run(p.path(), "two", SPEC);
    let elsewhere = p.path().join("elsewhere");
    let (code, err, _) = code_and_err(p.path(), &["resume", s(&r), "--output", s(&elsewhere)]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("a resume writes into its run's own folder") && err.lines().count() == 1,
        "{err}"
    );
    assert!(!elsewhere.exists());
    let own = p.path().join("output");
    let (code, err, _) = code_and_err(p.path(), &["resume", s(&r), "--output", s(&own), "-q"]);
    assert_eq!(code, Some(0), "{err}");
}

/// Review 19a M4: in a run of the semicolon dialect (decimal comma), a metric cell `2.000` (what
/// a spreadsheet of those locales writes for 2000) read as 2, a 1000-fold change unflagged.
/// Refused, naming the cell and the dialect.
#[test]
fn a_dotted_value_in_a_semicolon_run_is_refused() {
    let p = project();
    write(p.path(), "sweeps/semi.toml", SPEC);
    let (code, err, _) = code_and_err(
        p.path(),
        &[
            "run",
            "sweeps/semi.toml",
            "-q",
            "--no-analyze",
            "--csv-dialect",
            "semicolon",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let r = run_dirs(&p.path().join("output/semi"))[0].clone();
    let csv = r.join("results.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.contains(";ok;2000;"), "{text}");
    std::fs::write(&csv, text.replacen(";ok;2000;", ";ok;2.000;", 1)).unwrap();
    let (code, err, _) = code_and_err(p.path(), &["analyze", s(&r), "--out", "an"]);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("has `2.000` in the metric column `saw_mflops`")
            && err.contains("semicolon dialect, whose decimal mark is `,`")
            && err.lines().count() == 1,
        "{err}"
    );
}

/// Review 20a H1: on a log2 x the chart's legend wrote the best's "within 1 %" x as 2^x, and
/// said it where the best is itself the first within 1 % (the H100 tile sweep: "best: 9.069
/// TFLOP/s at 32 (within 1 % from 4294967296)").
#[test]
fn a_log2_charts_legend_writes_the_x_within_1_percent_as_measured() {
    let p = project();
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h100/matmul_tile");
    let out = p.path().join("plot");
    let (code, err, _) = code_and_err(p.path(), &["plot", s(&fixture), "--out", s(&out)]);
    assert_eq!(code, Some(0), "{err}");
    let svg = std::fs::read_to_string(out.join("charts/matmul_gflops__n-1024.svg")).unwrap();
    assert!(svg.contains("best: 9.069 TFLOP/s at 32"), "{svg}");
    assert!(!svg.contains("within 1 % from"));
    assert!(!svg.contains("4294967296"));
}

/// Review 20a H2: x was written with four digits everywhere (chart ticks, subtitle, legend,
/// analysis.md, the terminal), so x = 1000.1 to 1000.4 all read `1000`. A measured x is written
/// as results.csv writes it.
#[test]
fn distinct_x_are_written_apart() {
    let p = project();
    let spec = SPEC
        .replace("range = [1, 6]", "values = [1]")
        .replace("values = [2, 4]", "values = [2]")
        .replace("control_every = 4\n", "")
        .replace(
            "[[metric]]",
            "[[axis]]\nname = \"v\"\nvalues = [1000.1, 1000.2, 1000.3, 1000.4]\n[[metric]]",
        )
        .replace("x = \"threads\"", "x = \"v\"");
    write(p.path(), "sweeps/fine.toml", &spec);
    let (code, err, said) = code_and_err(p.path(), &["run", "sweeps/fine.toml"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(said.contains(" at v=1000."), "{said}");
    let r = run_dirs(&p.path().join("output/fine"))[0].clone();
    let md = std::fs::read_to_string(r.join("analysis.md")).unwrap();
    assert!(md.contains("| 1000.1 (1.000 GFLOP/s) | 1000.1 "), "{md}");
    let svg =
        std::fs::read_to_string(r.join("charts/saw_mflops__threads-1__period-2.svg")).unwrap();
    for tick in ["1000.1", "1000.2", "1000.3", "1000.4"] {
        assert!(svg.lines().any(|l| l.trim() == tick), "{tick}");
    }
}

/// Review 20a H4: an axis `metric` is `axis_metric` in the long export and compare.csv; beside
/// an axis really named `axis_metric` the header held that name twice, and results_long.json
/// kept one key of two (the `metric` axis's value lost). Each column has a name of its own.
#[test]
fn a_renamed_axis_column_takes_no_other_axiss_name() {
    let p = project();
    let spec = SPEC.replace(
        "[[metric]]",
        "[[axis]]\nname = \"metric\"\nvalues = [\"p\"]\n[[axis]]\nname = \"axis_metric\"\nvalues = [7]\n[[metric]]",
    );
    let r = run(p.path(), "named", &spec);
    let out = p.path().join("ex");
    let (code, err, _) = code_and_err(
        p.path(),
        &["export", s(&r), "--format", "long", "--out", s(&out)],
    );
    assert_eq!(code, Some(0), "{err}");
    let csv = std::fs::read_to_string(out.join("results_long.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let mut unique = header.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), header.len(), "{header:?}");
    assert!(header.contains(&"axis_metric_2"), "{header:?}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results_long.json")).unwrap())
            .unwrap();
    assert_eq!(json[0]["axis_metric"], 7);
    assert_eq!(json[0]["axis_metric_2"], "p");
    let cmp = p.path().join("cmp");
    let (code, err, _) = code_and_err(p.path(), &["compare", s(&r), s(&r), "--out", s(&cmp)]);
    assert_eq!(code, Some(0), "{err}");
    let csv = std::fs::read_to_string(cmp.join("compare.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let mut unique = header.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), header.len(), "{header:?}");
}

/// Review 20a M2: an `--out` inside the run folder was taken: `analyze RUN --out RUN/passes`
/// wrote analysis.csv among the passes' CSVs, and every resume then refused the run;
/// `report --out RUN/points` wrote into the run. Refused, exit 2; the folders a command writes
/// to by default (`export/`, `charts/`) stay its to name.
#[test]
fn an_out_inside_the_run_folder_is_refused() {
    let p = project();
    let r = run(p.path(), "two", SPEC);
    for (cmd, sub) in [
        ("analyze", "passes"),
        ("report", "points"),
        ("export", "points/x"),
        ("plot", "sub"),
    ] {
        let inside = r.join(sub);
        let (code, err, _) = code_and_err(p.path(), &[cmd, s(&r), "--out", s(&inside)]);
        assert_eq!(code, Some(2), "{cmd}: {err}");
        assert!(
            err.contains("lies inside the run folder") && err.lines().count() == 1,
            "{cmd}: {err}"
        );
    }
    let (code, err, _) = code_and_err(
        p.path(),
        &["compare", s(&r), s(&r), "--out", s(&r.join("cmp"))],
    );
    assert_eq!(code, Some(2), "{err}");
    for (cmd, out) in [("export", r.join("export")), ("plot", r.clone())] {
        let (code, err, _) = code_and_err(p.path(), &[cmd, s(&r), "--out", s(&out)]);
        assert_eq!(code, Some(0), "{cmd}: {err}");
    }
    // Review 21 F4: `plot --out RUN/charts` wrote `RUN/charts/charts/`.
    let (code, err, _) = code_and_err(p.path(), &["plot", s(&r), "--out", s(&r.join("charts"))]);
    assert_eq!(code, Some(2), "{err}");
    let (code, err, _) = code_and_err(p.path(), &["resume", s(&r), "-q"]);
    assert_eq!(code, Some(0), "{err}");
}

/// Review 20b #1: with `repeat`, a point compiled in pass 0 had its combined row say
/// `cached=1, build_s=0` (the last pass found the binary cached), and the summary "0 compiled,
/// 2 from cache" on a cold cache. The row says it was built, in its build's time.
#[test]
fn a_repeat_runs_rows_say_their_points_were_built() {
    let p = project();
    let spec = SPEC
        .replace("control_every = 4\n", "repeat = 3\n")
        .replace("range = [1, 6]", "values = [1]");
    write(p.path(), "sweeps/cold.toml", &spec);
    let (code, err, said) = code_and_err(p.path(), &["run", "sweeps/cold.toml", "--no-analyze"]);
    assert_eq!(code, Some(0), "{err}");
    let r = run_dirs(&p.path().join("output/cold"))[0].clone();
    let rows = crate::common::rows(&r.join("results.csv"));
    let pass0 = crate::common::rows(&r.join("passes/pass-0.csv"));
    let built = pass0.iter().filter(|r| r["cached"] == "0").count();
    assert!(built >= 1, "{pass0:?}");
    assert!(
        said.contains(&format!("builds: {built} compiled")),
        "{said}"
    );
    for row in &rows {
        let first = pass0
            .iter()
            .find(|r| r["point_id"] == row["point_id"])
            .unwrap();
        assert_eq!(row["cached"], first["cached"], "{row:?}");
        let (b, b0): (f64, f64) = (
            row["build_s"].parse().unwrap(),
            first["build_s"].parse().unwrap(),
        );
        assert!(b >= b0, "{row:?}");
    }
}

/// Review 20b #3 and #4: the resume of a finished run took `--csv-dialect` of another dialect
/// ("nothing to do", exit 0) where an unfinished run's resume refuses it; and that of a finished
/// shard of no point said its analysis was missing, which no command can make.
#[test]
fn a_finished_runs_resume_refuses_another_dialect_and_an_empty_shard_misses_no_analysis() {
    let p = project();
    write(p.path(), "sweeps/two.toml", SPEC);
    let (code, err, _) = code_and_err(p.path(), &["run", "sweeps/two.toml", "-q"]);
    assert_eq!(code, Some(0), "{err}");
    let r = run_dirs(&p.path().join("output/two"))[0].clone();
    let before = files(&r);
    let (code, err, _) = code_and_err(p.path(), &["resume", s(&r), "--csv-dialect", "semicolon"]);
    // Review 21 F3: exit 2, as another `--output` of a resume (the command line is wrong).
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("writes the comma CSV dialect"), "{err}");
    unchanged(&before, &files(&r));
    let (code, err, _) = code_and_err(
        p.path(),
        &["run", "sweeps/two.toml", "-q", "--shard", "2/3"],
    );
    assert_eq!(code, Some(0), "{err}");
    let empty = run_dirs(&p.path().join("output/two"))
        .into_iter()
        .find(|d| d.to_string_lossy().ends_with("-shard-2-of-3"))
        .unwrap();
    let (code, err, said) = code_and_err(p.path(), &["resume", s(&empty)]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        said.contains("nothing to do") && !said.contains("analysis is missing"),
        "{said}"
    );
}

/// Review 20b F2: stopped in its second pass, a `repeat` run counted only that pass's
/// processes beside the whole command's time. It counts the command's, and this pass's apart.
#[test]
fn a_repeat_run_stopped_in_a_later_pass_counts_every_process_it_ran() {
    let p = project();
    let spec = SPEC
        .replace("control_every = 4\n", "repeat = 3\n")
        .replace("slow_ms = 0", "slow_ms = 200")
        .replace("range = [1, 6]", "range = [1, 2]");
    let said = interrupted_in_pass(p.path(), "slow", &spec, 1);
    let rows = |pass| pass_lines(p.path(), "slow", pass);
    let ran = (rows(0) - 1) + (rows(1) - 1);
    assert!(
        said.contains(&format!(
            "interrupted in pass 2 of 3 after {ran} processes of this command, "
        )),
        "{said}"
    );
}

/// Review 20a L4: `unit = ""` was taken, and its columns were named `saw_`, `saw_median_`.
/// Refused at plan, naming the metric; `%` names its columns `_percent`.
#[test]
fn a_unit_of_no_letter_or_digit_is_refused() {
    let p = project();
    for unit in ["", "  ", "-"] {
        let spec = SPEC.replace("unit = \"MFlops\"", &format!("unit = {unit:?}"));
        write(p.path(), "sweeps/unit.toml", &spec);
        let (code, err, _) = code_and_err(p.path(), &["plan", "sweeps/unit.toml"]);
        assert_eq!(code, Some(3), "{unit:?}: {err}");
        assert!(
            err.contains("metric `saw`")
                && err.contains("has no letter or digit")
                && err.lines().count() == 1,
            "{unit:?}: {err}"
        );
    }
    write(
        p.path(),
        "sweeps/pct.toml",
        &SPEC.replace("unit = \"MFlops\"", "unit = \"%\""),
    );
    let (code, err, _) = code_and_err(p.path(), &["plan", "sweeps/pct.toml"]);
    assert_eq!(code, Some(0), "{err}");
}
