//! What `sweep run` shows on the terminal, on a real sweep of the host program: a line per point
//! with the headline metric (pinned word for word, the times and run folder masked), the closing
//! summary in 120 columns (values marked by cause: placement, and with `repeat` processes), `-q`'s
//! errors and one line, and colour only on a terminal without `NO_COLOR`.
//! Snapshots in tests/snapshots/integration__terminal__<test>.snap.

use crate::common::{on_path, project, skip, stderr, stdout, sweep};
use std::path::Path;

/// The saw over threads 14..18 in three modes (ok, unstable, crash), two metrics, the second one
/// the headline; analysed against threads per mode.
const SPEC: &str = "headline = \"saw\"\nbench = \"hostsaw\"\ncompiler = \"cc\"\ncontrol_every = 0\n[vars]\nslow_ms = 0\n[[axis]]\nname = \"mode\"\nvalues = [\"ok\", \"unstable\", \"crash\"]\n[[axis]]\nname = \"threads\"\nrange = [14, 18]\n[[metric]]\npattern = \"mflops\"\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n[analyze]\nx = \"threads\"\nby = [\"mode\"]\n";

/// `text` with what changes from run to run masked: the run folder's time stamp, durations, and
/// the slowest runs (which ones they are is up to the machine).
fn steady(text: &str) -> String {
    let rules = [
        (r"\d{8}T\d{6}Z", "[stamp]"),
        (r"; slowest runs: .*", "; slowest runs: [...]"),
        (r"\d+ h \d+ min|\d+ min \d+ s|\d+(\.\d+)? s\b", "[t]"),
    ];
    rules.iter().fold(text.to_string(), |t, (re, to)| {
        regex::Regex::new(re)
            .unwrap()
            .replace_all(&t, *to)
            .into_owned()
    })
}

fn write_spec(dir: &Path) {
    std::fs::write(dir.join("sweeps/term.toml"), SPEC).unwrap();
}

#[test]
fn a_run_shows_a_line_per_point_and_a_closing_summary_in_120_columns() {
    let p = project();
    write_spec(p.path());
    let out = sweep(p.path())
        .args(["run", "sweeps/term.toml", "-j", "2"])
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "crash points fail: {}",
        stderr(&out)
    );
    let (err, summary) = (stderr(&out), stdout(&out));
    assert!(
        !err.contains('\x1b') && !summary.contains('\x1b'),
        "no colour into a pipe"
    );
    // Every line fits 120 columns in a pipe, the point lines too: a failed point's reason on its
    // line, the log it names on the next (a path is never cut).
    for line in summary
        .lines()
        .chain(err.lines().filter(|l| !l.trim_start().starts_with("log: ")))
    {
        assert!(
            line.chars().count() <= 120,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    // No `wrote` line per file: the summary names the run folder, the report and the readings.
    assert!(!err.contains("wrote "), "{err}");
    let run = crate::common::run_dirs(&p.path().join("output/term")).remove(0);
    for file in ["report.html", "analysis.md"] {
        let path = run.strip_prefix(p.path()).unwrap().join(file);
        assert!(
            summary.contains(&path.display().to_string()),
            "{file}: {summary}"
        );
        assert!(run.join(file).is_file(), "{file}");
    }
    insta::assert_snapshot!(format!(
        "$ sweep run sweeps/term.toml -j 2\n--- stderr\n{}--- stdout\n{}",
        steady(&err),
        steady(&summary)
    ));
}

#[test]
fn quiet_prints_only_failed_points_and_one_line() {
    let p = project();
    write_spec(p.path());
    let out = sweep(p.path())
        .args(["run", "sweeps/term.toml", "-q", "--export", "csv"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 1, "{}", stdout(&out));
    assert!(!stderr(&out).contains("wrote"), "{}", stderr(&out));
    assert!(
        p.path().join("output/term").read_dir().unwrap().count() == 1,
        "one run folder"
    );
    insta::assert_snapshot!(format!(
        "$ sweep run sweeps/term.toml -q --export csv\n--- stderr\n{}--- stdout\n{}",
        steady(&stderr(&out)),
        steady(&stdout(&out))
    ));
}

/// `sweep run` under `script`, which gives it a terminal; what the terminal got.
fn on_a_terminal(dir: &Path, no_color: Option<&str>) -> String {
    let bin = assert_cmd::cargo::cargo_bin("sweep");
    let mut c = std::process::Command::new("script");
    c.current_dir(dir)
        .args(["-q", "-e", "-c"])
        .arg(format!(
            "{} run sweeps/term.toml --force -a threads=16:17",
            bin.display()
        ))
        .arg("/dev/null")
        .env("SWEEP_LOCK_DIR", dir.join("locks"))
        .env_remove("NO_COLOR");
    if let Some(v) = no_color {
        c.env("NO_COLOR", v);
    }
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    stdout(&out)
}

#[test]
fn colour_only_on_a_terminal_and_never_with_no_color() {
    if !on_path("script") {
        return skip("no `script` (util-linux) to give sweep a terminal");
    }
    let p = project();
    write_spec(p.path());
    let coloured = on_a_terminal(p.path(), None);
    // The status in green or red, the reading in bold, the counts coloured.
    for sgr in [
        "\x1b[32m          ok\x1b[0m",
        "\x1b[31m  run_failed\x1b[0m",
        "\x1b[1msaw ",
    ] {
        assert!(coloured.contains(sgr), "{sgr:?} in {coloured:?}");
    }
    for no_color in ["1", "yes"] {
        let plain = on_a_terminal(p.path(), Some(no_color));
        assert!(
            !plain.contains("\x1b[3") && !plain.contains("\x1b[1m"),
            "{plain:?}"
        );
        assert!(
            plain.contains("          ok [1/6] mode=ok threads=16"),
            "{plain:?}"
        );
    }
}

/// The rows of a run's results.csv as the driver hands them to the summary: each metric's own
/// status (`<metric>_status`, or `store::metric_status`'s reading of an older run) and every
/// number.
fn fixture_rows(run: &Path, target: f64) -> Vec<sweep::store::Row> {
    use sweep::store::{metric_status_in_row, Dialect, Row, Status};
    let mut r = csv::Reader::from_path(run.join("results.csv")).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let metrics: Vec<String> = sweep::store::Manifest::load(run)
        .unwrap()
        .metrics
        .iter()
        .map(|m| m.name.clone())
        .collect();
    r.records()
        .map(|rec| {
            let fields: Vec<String> = rec.unwrap().iter().map(String::from).collect();
            let cell = |name: &str| &fields[header.iter().position(|h| h == name).unwrap()];
            let statuses = metrics
                .iter()
                .filter_map(|m| {
                    let s = metric_status_in_row(&header, &fields, m, Dialect::Comma, target)?;
                    Some((m.clone(), s))
                })
                .collect();
            Row {
                point: sweep::points::Point {
                    index: 0,
                    id: cell("point_id").clone(),
                    values: vec![(
                        "threads".into(),
                        sweep::spec::Value::Str(cell("threads").clone()),
                    )],
                },
                status: Status::parse(cell("status")).unwrap(),
                statuses,
                values: header
                    .iter()
                    .zip(&fields)
                    .filter_map(|(h, f)| Some((h.clone(), f.parse::<f64>().ok()?)))
                    .collect(),
                build_s: 1.0,
                run_s: 0.5,
                cached: false,
                gpu: Default::default(),
                error: String::new(),
            }
        })
        .collect()
}

/// The closing summary of the newest H100 run of the flagship thread sweep (512 points x 12
/// metrics), its rows recorded as the driver records them: points measured and failed first, then
/// the values marked per cause and how results.csv writes them, and per series how many of its
/// values are marked and the largest spread. Every line fits 120 columns.
#[test]
fn the_summary_of_the_h100_thread_sweep_fits_120_columns() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h100/threads_shuffled");
    let opts = sweep::analyze::AnalyzeOptions {
        x: Some("threads".into()),
        ..Default::default()
    };
    let analysis = sweep::analyze::analyze_csv(&fixture.join("results.csv"), &opts).unwrap();
    let target = sweep::store::target_rel_ci(&fixture);
    let mut summary = sweep::events::Summary {
        run_dir: "output/threads_shuffled/20261126T101500Z".into(),
        target_rel_ci: Some(target),
        ..Default::default()
    };
    for row in fixture_rows(&fixture, target) {
        summary.built(&row.point.id, row.cached);
        summary.record(&row);
    }
    summary.wall = std::time::Duration::from_secs(374);
    summary.slowest = vec![("threads=415".into(), 1.92), ("threads=263".into(), 1.9)];
    let md = Path::new("output/threads_shuffled/20261126T101500Z/analysis.md").to_path_buf();
    let report = Path::new("output/threads_shuffled/20261126T101500Z/report.html");
    let lines = sweep::events::closing::closing(
        &summary,
        Some(&analysis),
        &[md],
        Some(report),
        false,
        sweep::events::closing::WIDTH,
    );
    for line in &lines {
        assert!(
            line.chars().count() <= 120,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    // What the engineer reads first: every point measured, the marked values with their cause.
    assert!(
        lines[0].ends_with(": 512 measured, 0 failed"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains(" of 6,144 values vary with buffer placement ("),
        "{}",
        lines[1]
    );
    // On an 80-column terminal every line fits but the paths, which are never cut: the slowest
    // runs that do not fit are left out, a long series line ends in `…`.
    let narrow =
        sweep::events::closing::closing(&summary, Some(&analysis), &[], Some(report), false, 80);
    for line in narrow
        .iter()
        .filter(|l| !l.starts_with("run folder") && !l.starts_with("report"))
    {
        assert!(
            line.chars().count() <= 80,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    assert!(
        narrow.iter().any(|l| l
            .starts_with("builds: 512 compiled, 0 from cache; slowest runs: threads=415 (1.92 s)")),
        "{narrow:#?}"
    );
    insta::assert_snapshot!(lines.join("\n"));
}

/// With `repeat`, a value whose processes disagree (hostsaw `varies`: each process 10 % more) is
/// named by that cause on its point's line, in the counts and in the series table, and results.csv
/// keeps the token `unstable` for it.
#[test]
fn a_repeat_run_names_the_values_that_differ_between_processes() {
    let p = project();
    let spec = "bench = \"hostsaw\"\ncompiler = \"cc\"\nrepeat = 2\ncontrol_every = 0\n[vars]\nslow_ms = 0\n[[axis]]\nname = \"mode\"\nvalues = [\"ok\", \"varies\"]\n[[axis]]\nname = \"threads\"\nrange = [14, 16]\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n[analyze]\nx = \"threads\"\nby = [\"mode\"]\n";
    std::fs::write(p.path().join("sweeps/rep.toml"), spec).unwrap();
    let out = sweep(p.path())
        .args(["run", "sweeps/rep.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (err, summary) = (stderr(&out), stdout(&out));
    assert_eq!(
        err.matches("   processes [").count(),
        3,
        "the varying points of the last pass: {err}"
    );
    assert!(err.contains("   processes: saw 9.5 %"), "{err}");
    // The counts wrap at 80 columns.
    assert!(
        steady(&summary).starts_with(
            "finished 6 points in [t]: 6 measured, 0 failed\n0 of 6 values vary with buffer placement;\n  3 differ between processes (1 of 1 metric); 0 noisy\n  (processes: the processes that measured it differ beyond the 1.0 % target and their intervals)\n"
        ),
        "{summary}"
    );
    assert!(
        summary
            .lines()
            .any(|l| l.starts_with("saw_mflops [mode=varies]")
                && l.ends_with("  3 processes, up to 9.5 %")),
        "{summary}"
    );
    let run = crate::common::run_dirs(&p.path().join("output/rep")).remove(0);
    let rows = crate::common::rows(&run.join("results.csv"));
    for r in rows.iter().filter(|r| r["mode"] == "varies") {
        assert_eq!(
            (r["saw_status"].as_str(), r["status"].as_str()),
            ("unstable", "unstable")
        );
    }
}
