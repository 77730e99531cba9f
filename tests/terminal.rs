//! What `sweep run` shows on the terminal, on a real sweep of the host program: a line per point
//! with the headline metric (pinned word for word, the times and run folder masked), the closing
//! summary in 120 columns, `-q`'s errors and one line, and colour only on a terminal without
//! `NO_COLOR`. Snapshots in tests/snapshots/integration__terminal__<test>.snap.

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
    for line in summary.lines() {
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

#[test]
fn the_summary_of_the_h100_thread_sweep_fits_120_columns() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h100/threads_1_512");
    let opts = sweep::analyze::AnalyzeOptions {
        x: Some("threads".into()),
        ..Default::default()
    };
    let analysis = sweep::analyze::analyze_csv(&fixture.join("results.csv"), &opts).unwrap();
    let summary = sweep::events::Summary {
        run_dir: "output/threads_1_512/20261125T101500Z".into(),
        counts: [
            (sweep::store::Status::Ok, 145),
            (sweep::store::Status::Unstable, 367),
        ]
        .into(),
        built: 512,
        wall: std::time::Duration::from_secs(3725),
        slowest: vec![("threads=415".into(), 1.92), ("threads=263".into(), 1.9)],
        ..Default::default()
    };
    let md = Path::new("output/threads_1_512/20261125T101500Z/analysis.md").to_path_buf();
    let report = Path::new("output/threads_1_512/20261125T101500Z/report.html");
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
