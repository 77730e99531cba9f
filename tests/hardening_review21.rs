//! What review 21 found of issue 38 (each tried as a hostile user would): a results CSV without
//! its run whose rows repeat a point, drawn as their median unsaid, and a `repeat` run's closing
//! lines, which counted builds and run times from the combined rows.

use crate::common::{code_and_err, project, run_dirs};
use crate::hardening::write;
use crate::hardening_review17::{s, TWO as SPEC};
use crate::hardening_review19::{interrupted_in_pass, pass_lines};

/// Review 21 F0: a results CSV alone (a copy of a run's `export/results.csv`, edited) with two
/// rows of one point was analysed and plotted with their median (105 and 200 ms drawn as 152.5),
/// unsaid; in a run folder the same rows are refused. The analysis says which x are medians of
/// repeated rows, in analysis.md and in the chart's subtitle; a CSV without repeats says nothing.
#[test]
fn a_csv_alone_says_the_points_its_repeated_rows_are_medians_of() {
    let p = project();
    let rows = "point_id,threads,status,time_ms\na,1,ok,100\nb,2,ok,105\nc,3,ok,110\nd,4,ok,120\n";
    write(p.path(), "once.csv", rows);
    write(p.path(), "twice.csv", &format!("{rows}b,2,ok,200\n"));
    let md = |name: &str| {
        let out = p.path().join(format!("a-{name}"));
        let (code, err, _) = code_and_err(
            p.path(),
            &["analyze", s(&p.path().join(name)), "--out", s(&out)],
        );
        assert_eq!(code, Some(0), "{err}");
        std::fs::read_to_string(out.join("analysis.md")).unwrap()
    };
    let twice = md("twice.csv");
    assert!(
        twice.contains("Some rows repeat a point (the same value of every axis)"),
        "{twice}"
    );
    assert!(
        twice.contains(
            "at 1 of its 4 values of threads, the median of the rows that repeat a point"
        ),
        "{twice}"
    );
    let once = md("once.csv");
    assert!(!once.contains("repeat"), "{once}");
    let charts = p.path().join("charts");
    let (code, err, _) = code_and_err(
        p.path(),
        &["plot", s(&p.path().join("twice.csv")), "--out", s(&charts)],
    );
    assert_eq!(code, Some(0), "{err}");
    let svg = std::fs::read_to_string(charts.join("charts/time_ms.svg")).unwrap();
    assert!(svg.contains("1 point the median of repeated rows"), "{svg}");
}

/// The closing line `builds: ...; slowest runs: ...` of what a command printed.
fn builds_line(said: &str) -> &str {
    said.lines()
        .find(|l| l.starts_with("builds: "))
        .unwrap_or_else(|| panic!("no builds line: {said}"))
}

/// Review 21 F1: the `builds:` line counted the rows, and a `repeat` row says its point was
/// compiled when an earlier command compiled it: a resume of the last pass whose builds all came
/// from the cache said "N compiled". It counts this command's builds now.
#[test]
fn a_resumed_repeat_run_counts_its_own_builds() {
    let p = project();
    let spec = SPEC
        .replace("control_every = 4\n", "repeat = 3\n")
        .replace("slow_ms = 0", "slow_ms = 150")
        .replace("range = [1, 6]", "range = [1, 3]");
    interrupted_in_pass(p.path(), "slow", &spec, 2);
    let r = run_dirs(&p.path().join("output/slow"))[0].clone();
    let left = 6 - (pass_lines(p.path(), "slow", 2) - 1);
    assert!(left > 0, "the last pass was not cut");
    let (code, err, said) = code_and_err(p.path(), &["resume", s(&r), "--no-analyze"]);
    assert_eq!(code, Some(0), "{err}");
    let line = builds_line(&said);
    assert!(
        line.starts_with(&format!("builds: 0 compiled, {left} from cache")),
        "{line}"
    );
}

/// Review 21 F2: "slowest runs" of a `repeat` run showed a point's `run_s` summed over its
/// processes (as its combined row holds it) beside the processes of one command. It shows one
/// process's time: none above the slowest process of the pass CSVs.
#[test]
fn a_repeat_runs_slowest_runs_are_one_processes() {
    let p = project();
    let spec = SPEC
        .replace("control_every = 4\n", "repeat = 3\n")
        .replace("slow_ms = 0", "slow_ms = 200")
        .replace("range = [1, 6]", "values = [1]");
    write(p.path(), "sweeps/slow.toml", &spec);
    let (code, err, said) = code_and_err(p.path(), &["run", "sweeps/slow.toml", "--no-analyze"]);
    assert_eq!(code, Some(0), "{err}");
    let r = run_dirs(&p.path().join("output/slow"))[0].clone();
    let slowest_process = (0..3)
        .flat_map(|pass| crate::common::rows(&r.join(format!("passes/pass-{pass}.csv"))))
        .map(|row| row["run_s"].parse::<f64>().unwrap())
        .fold(0.0, f64::max);
    let line = builds_line(&said);
    let (_, slowest) = line.split_once("slowest runs: ").unwrap();
    for item in slowest.split(", ") {
        let secs: f64 = item
            .rsplit_once(" (")
            .and_then(|(_, t)| t.strip_suffix(" s)"))
            .unwrap_or_else(|| panic!("{line}"))
            .parse()
            .unwrap();
        assert!(secs <= slowest_process + 0.01, "{line}: {slowest_process}");
    }
}

/// Review 21 F5: a unit of letters beyond ASCII lost them in its columns' names: `µs` named the
/// value `saw_s`, the column of seconds, which a reader of the CSV alone then took for seconds.
#[test]
fn a_unit_of_micro_seconds_names_its_columns_us() {
    let p = project();
    let program = p.path().join("cuda/hostsaw/hostsaw.c");
    let text = std::fs::read_to_string(&program).unwrap();
    std::fs::write(&program, text.replace("unit=MFlops", "unit=µs")).unwrap();
    let spec = SPEC.replace("unit = \"MFlops\"", "unit = \"µs\"");
    let r = crate::common::run_of(p.path(), "mu", &spec);
    let header = std::fs::read_to_string(r.join("results.csv")).unwrap();
    let header = header.lines().next().unwrap();
    assert!(header.contains(",saw_us,saw_median_us,"), "{header}");
    assert!(!header.contains(",saw_s,"), "{header}");
}
