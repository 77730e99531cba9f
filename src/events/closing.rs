//! The closing summary of a run, on stdout, in [`WIDTH`] columns: the counts and wall time, period,
//! knee and best per series (the full readings are in `analysis.md`), and where the run folder,
//! `report.html` and `analysis.md` are; or, with `-q`, its first line alone ([`one_line`]).

use super::marks;
use super::terminal::{duration, paint, run_time};
use super::Summary;
use crate::analyze::reading::{human, human_x};
use crate::analyze::Analysis;
use crate::units::format_value;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The closing summary's widest line (its paths excepted: they are never cut), and its width on
/// a terminal narrower than that (down to [`NARROWEST`]: see [`width`]).
pub const WIDTH: usize = 120;
pub const NARROWEST: usize = 60;

/// The width to write the closing summary in: the terminal's columns where stdout is one
/// narrower than [`WIDTH`] (not under [`NARROWEST`]), else [`WIDTH`] (a pipe, a file, a CI log).
pub fn width() -> usize {
    width_of(std::io::stdout())
}

/// The width of the lines written to `stream` (stdout, stderr), as [`width`] says it.
pub fn width_of(stream: impl std::io::IsTerminal + std::os::fd::AsRawFd) -> usize {
    if !stream.is_terminal() {
        return WIDTH;
    }
    let mut size = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one `winsize` into the struct it is given, which lives here.
    let ok = unsafe { libc::ioctl(stream.as_raw_fd(), libc::TIOCGWINSZ, &mut size) } == 0;
    match usize::from(size.ws_col) {
        cols if ok && cols > 0 => cols.clamp(NARROWEST, WIDTH),
        _ => WIDTH,
    }
}

/// The counts of the summary wrap at this width, so that they read whole in an 80-column terminal.
const NARROW: usize = 80;

/// At most this many series get a line in the closing summary; `analysis.md` has them all.
const MAX_SERIES: usize = 24;

/// A series name longer than this is cut in the closing summary.
const SERIES_NAME: usize = 44;

/// The kinds of failure the run had, with their counts: `1 run_failed`, `1 timeout`.
fn failures(s: &Summary) -> Vec<String> {
    s.counts
        .iter()
        .filter(|(st, n)| !st.measured() && **n > 0)
        .map(|(st, n)| format!("{n} {}", st.as_str()))
        .collect()
}

/// `20 measured, 2 failed`, and with `why` ` (1 run_failed, 1 timeout)`, coloured where not
/// zero. Marked values are measured: how many, and why, is [`values`]'s.
fn counts(s: &Summary, colour: bool, why: bool) -> String {
    let part = |count: usize, what: &str, code: &str| {
        let text = format!("{} {what}", marks::count(count));
        paint(colour && count > 0, code, &text)
    };
    let failures = failures(s);
    let mut out = [
        part(s.measured(), "measured", "32"),
        part(s.failed(), "failed", "31"),
    ]
    .join(", ");
    if !failures.is_empty() && why {
        out += &format!(" ({})", failures.join(", "));
    }
    out
}

/// The values the run measured and those marked, per cause: `1,192 of 6,144 values vary with
/// buffer placement (8 of 12 metrics); 0 noisy`, then in parentheses what each cause means and
/// how results.csv writes it; nothing when no value was measured. The counts wrap at [`NARROW`]
/// columns (or `width`, if narrower); the lines in parentheses at `width`.
fn values(s: &Summary, width: usize) -> Vec<String> {
    if s.marks.values == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut line = String::new();
    for c in s.marks.clauses() {
        if line.is_empty() {
            line = c;
        } else if line.chars().count() + 2 + c.chars().count() > NARROW.min(width) {
            out.push(line + ";");
            line = format!("  {c}");
        } else {
            line = format!("{line}; {c}");
        }
    }
    out.push(line);
    for note in s
        .marks
        .legend(s.target())
        .into_iter()
        .chain(s.marks.csv_line())
    {
        out.extend(wrap(&format!("  ({note})"), width, "   "));
    }
    out
}

/// `text` in lines of at most `width` columns, broken between words, each after the first
/// starting with `indent`; a word longer than the width stays whole (and is cut later).
fn wrap(text: &str, width: usize, indent: &str) -> Vec<String> {
    let lead: String = text.chars().take_while(|c| *c == ' ').collect();
    let mut out = Vec::new();
    let mut line = lead;
    let mut fresh = true;
    for word in text.trim_start().split(' ') {
        if !fresh && line.chars().count() + 1 + word.chars().count() > width {
            out.push(std::mem::replace(&mut line, indent.to_string()));
            fresh = true;
        }
        if !fresh {
            line.push(' ');
        }
        line.push_str(word);
        fresh = false;
    }
    out.push(line);
    out
}

/// `finished 20 points in 2.0 s: 18 measured, 2 failed`; with `why` the failures' kinds in
/// parentheses.
fn first_line(s: &Summary, colour: bool, why: bool) -> String {
    let last_pass = s.pass.is_some_and(|(p, k)| p == k && k > 1);
    let what = if s.counts.is_empty() && (s.held > 0 || (s.interrupted && last_pass)) {
        "none combined yet".to_string()
    } else if s.counts.is_empty() && s.interrupted {
        // Stopped before its first point ended: there was something to do.
        "none measured yet".to_string()
    } else if s.counts.is_empty() {
        "nothing to do".to_string()
    } else {
        counts(s, colour, why)
    };
    let before = if s.failed_before > 0 {
        format!(
            " ({} already done before, {} of them failed)",
            s.skipped, s.failed_before
        )
    } else if s.skipped > 0 {
        format!(" ({} already done before)", s.skipped)
    } else {
        String::new()
    };
    let n = s.counts.values().sum::<usize>();
    // A `repeat` run stopped in a pass before its last counted that pass's processes as points,
    // with no row in results.csv (review 19b F4): it names the pass, and what it counts; stopped
    // in a later pass, the command's processes too (review 20b F2): `… after 9 processes of this
    // command, 6 processes of this pass in 1.7 s`.
    let (stopped, noun, of_this_pass) = match s.pass {
        Some((p, k)) if s.interrupted && p < k && s.earlier_processes > 0 => (
            format!(
                "interrupted in pass {p} of {k} after {} processes of this command,",
                marks::count(s.earlier_processes + n)
            ),
            "process",
            " of this pass",
        ),
        Some((p, k)) if s.interrupted && p < k => (
            format!("interrupted in pass {p} of {k} after"),
            "process",
            "",
        ),
        Some((p, k)) if s.interrupted => {
            (format!("interrupted in pass {p} of {k} after"), "point", "")
        }
        _ if s.interrupted => ("interrupted after".to_string(), "point", ""),
        _ => ("finished".to_string(), "point", ""),
    };
    let noun = format!("{}{of_this_pass}", crate::words::noun_for(n, noun));
    format!(
        "{stopped} {} {noun} in {}: {what}{before}",
        marks::count(n),
        duration(s.wall.as_secs_f64())
    )
}

/// What `-q` prints: the first line, the values marked in short, where the report is, and how to
/// resume.
pub fn one_line(s: &Summary, report: Option<&Path>, colour: bool) -> String {
    let mut out = first_line(s, colour, true);
    if s.marks.values > 0 {
        out += &format!("; {}", s.marks.clauses().join(", "));
    }
    if let Some(r) = report {
        out += &format!("; report {}", r.display());
    }
    if s.interrupted {
        out += "; run the same command again to resume";
    }
    out
}

/// `line` cut to `width` characters, ending in `…` where it was cut.
fn fit(line: String, width: usize) -> String {
    if line.chars().count() <= width {
        return line;
    }
    let mut out: String = line.chars().take(width - 1).collect();
    out.push('…');
    out
}

/// Rows of cells as left-aligned columns two spaces apart, the last one ragged.
fn columns(rows: &[Vec<String>]) -> Vec<String> {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width = |c: usize| {
        rows.iter()
            .filter_map(|r| r.get(c))
            .map(|s| s.chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..cols).map(width).collect();
    rows.iter()
        .map(|r| {
            let cells: Vec<String> = r
                .iter()
                .enumerate()
                .map(|(c, s)| {
                    if c + 1 == r.len() {
                        s.clone()
                    } else {
                        format!("{s:<w$}", w = widths[c])
                    }
                })
                .collect();
            cells.join("  ").trim_end().to_string()
        })
        .collect()
}

/// `name` cut to `max` characters, ending in `…` where it was cut.
fn cut(name: &str, max: usize) -> String {
    if name.chars().count() <= max {
        return name.to_string();
    }
    let mut out: String = name.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// One line per series (the first [`MAX_SERIES`]): its period (and the period nested in it:
/// `32 (high) +64`, its level said where it is not high), knee and best value with its unit,
/// and its values marked ([`marks::series_marks`]: `264 placement, up to 69 %`, or `-`; the
/// column only where some series has marked values).
fn series_lines(a: &Analysis, tally: &marks::Tally) -> Vec<String> {
    let mut rows = vec![vec![
        "series".to_string(),
        "period (+nested)".into(),
        "knee".into(),
        "best".into(),
        "marked".into(),
    ]];
    for s in a.series.iter().take(MAX_SERIES) {
        let c = &s.curve;
        let period = period_words(c);
        let knee = c.knee.map_or("-".to_string(), human);
        let best = c.best.as_ref().map_or("-".to_string(), |b| {
            format!(
                "{} at {}={}",
                format_value(b.value, &s.unit),
                a.x,
                human_x(b.x)
            )
        });
        let marked = marks::series_marks(s, tally);
        rows.push(vec![cut(&s.name, SERIES_NAME), period, knee, best, marked]);
    }
    // No series marked: no column of dashes (the counts above say so already).
    if rows[1..].iter().all(|r| r[4] == "-") {
        rows.iter_mut().for_each(|r| r.truncate(4));
    }
    let mut out = columns(&rows);
    // Points that are medians of rows `by` left unsplit (review 20a H3): said under the table.
    if !a.merged.is_empty() {
        out.push(crate::analyze::reading::merged(&a.x, &a.merged));
    }
    if a.series.len() > MAX_SERIES {
        out.push(format!(
            "… and {} more series in analysis.md",
            a.series.len() - MAX_SERIES
        ));
    }
    out
}

/// A curve's period as the closing table and the report's analysis table write it: `128 (high)`,
/// with the period nested in it (`32 (high) +64`, its level said where it is not high), or
/// `none (guess 16)`, or `none`.
pub(crate) fn period_words(c: &crate::analyze::curve::Curve) -> String {
    match (&c.period, &c.guess) {
        (Some(p), _) => {
            let nested = c
                .secondary
                .as_ref()
                .map_or(String::new(), |q| match q.level.as_str() {
                    "high" => format!(" +{}", human(q.period)),
                    l => format!(" +{} ({l})", human(q.period)),
                });
            format!("{} ({}){nested}", human(p.period), p.level.as_str())
        }
        (None, Some(g)) => format!("none (guess {})", human(g.period)),
        (None, None) => "none".into(),
    }
}

/// What else the run's end wrote, short: files in the run folder by name, a subfolder's by count,
/// others by their path (`results.csv, analysis.json, charts/ (24 files), /tmp/run.json`).
fn also(run_dir: &Path, wrote: &[PathBuf], shown: &[&Path]) -> String {
    let mut names: Vec<String> = vec![crate::store::RESULTS.to_string()];
    let mut folders: Vec<(String, usize)> = Vec::new();
    for p in wrote.iter().filter(|p| !shown.contains(&p.as_path())) {
        let Ok(rel) = p.strip_prefix(run_dir) else {
            names.push(p.display().to_string());
            continue;
        };
        let mut parts = rel.components();
        let first = parts
            .next()
            .map(|c| c.as_os_str().to_string_lossy().into_owned());
        match (first, parts.next()) {
            (Some(f), None) => names.push(f),
            (Some(dir), Some(_)) => match folders.iter_mut().find(|(d, _)| *d == dir) {
                Some((_, n)) => *n += 1,
                None => folders.push((dir, 1)),
            },
            (None, _) => {}
        }
    }
    names.dedup();
    names.extend(
        folders
            .into_iter()
            .map(|(d, n)| format!("{d}/ ({n} file{})", if n == 1 { "" } else { "s" })),
    );
    names.join(", ")
}

/// The closing summary: counts and wall time, recheck and builds, a line per series, and where the
/// files are. Every line but a path fits `width` columns ([`WIDTH`], or [`width`] on a terminal).
pub fn closing(
    s: &Summary,
    analysis: Option<&Analysis>,
    wrote: &[PathBuf],
    report: Option<&Path>,
    colour: bool,
    width: usize,
) -> Vec<String> {
    let mut out = vec![first_line(s, colour, false)];
    let failures = failures(s);
    if !failures.is_empty() {
        out.push(format!(
            "failed: {} (each named above with its log)",
            failures.join(", ")
        ));
    }
    out.extend(values(s, width));
    let (held, it) = if s.held == 1 {
        ("1 point".to_string(), "it")
    } else {
        (format!("{} points", s.held), "each")
    };
    if s.held > 0 && s.interrupted {
        out.push(format!("recheck: {held} had two groups of samples in one process, held in passes/recheck.csv until the run resumes"));
    } else if s.held > 0 {
        out.push(format!("recheck: {held} had two groups of samples in one process; {it} was measured in more processes"));
    }
    let mut builds = format!(
        "builds: {} compiled, {} from cache",
        s.compiled(),
        s.from_cache()
    );
    // The slowest runs that fit the line, whole.
    for (i, (l, t)) in s.slowest.iter().enumerate() {
        let item = format!(
            "{}{l} ({})",
            if i == 0 { "; slowest runs: " } else { ", " },
            run_time(*t)
        );
        if builds.chars().count() + item.chars().count() > width {
            break;
        }
        builds += &item;
    }
    out.push(builds);
    if let Some(a) = analysis.filter(|a| !a.series.is_empty()) {
        out.push(String::new());
        out.extend(series_lines(a, &s.marks));
    }
    out.push(String::new());
    let mut out: Vec<String> = out.into_iter().map(|l| fit(l, width)).collect();
    // Where the files are: the paths in full, never cut; the list of the others cut to fit.
    let md = wrote
        .iter()
        .find(|p| p.file_name() == Some(OsStr::new(crate::store::run::ANALYSIS_MD)));
    let mut places = vec![vec![
        "run folder".to_string(),
        s.run_dir.display().to_string(),
    ]];
    let mut shown: Vec<&Path> = Vec::new();
    for (what, path) in [("report", report), ("readings", md.map(PathBuf::as_path))] {
        if let Some(p) = path {
            places.push(vec![what.to_string(), p.display().to_string()]);
            shown.push(p);
        }
    }
    places.push(vec!["also".to_string(), also(&s.run_dir, wrote, &shown)]);
    let places = columns(&places);
    let last = places.len() - 1;
    for (i, line) in places.into_iter().enumerate() {
        out.push(if i == last { fit(line, width) } else { line });
    }
    if s.interrupted {
        out.push("run the same command again to resume".into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_says_held_points_wait_when_the_run_was_interrupted() {
        let mut s = Summary {
            held: 2,
            interrupted: true,
            run_dir: PathBuf::from("out/x/1"),
            ..Summary::default()
        };
        let text = closing(&s, None, &[], None, false, WIDTH).join("\n");
        assert!(
            text.starts_with("interrupted after 0 points in 0.0 s: none combined yet\n"),
            "{text}"
        );
        assert!(
            text.contains("recheck: 2 points had two groups of samples in one process, held in passes/recheck.csv until the run resumes"),
            "{text}"
        );
        assert!(
            text.ends_with("\nrun the same command again to resume"),
            "{text}"
        );
        s.interrupted = false;
        s.held = 1;
        assert!(closing(&s, None, &[], None, false, WIDTH).join("\n").contains(
            "recheck: 1 point had two groups of samples in one process; it was measured in more processes"
        ));
    }

    #[test]
    fn the_other_files_are_named_short() {
        let run = Path::new("out/saw/1");
        let wrote: Vec<PathBuf> = [
            "out/saw/1/analysis.json",
            "out/saw/1/analysis.md",
            "out/saw/1/charts/a.svg",
            "out/saw/1/charts/a.png",
            "out/saw/1/export/saw.xlsx",
            "/tmp/run.json",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        let md = Path::new("out/saw/1/analysis.md");
        assert_eq!(
            also(run, &wrote, &[md]),
            "results.csv, analysis.json, /tmp/run.json, charts/ (2 files), export/ (1 file)"
        );
    }

    #[test]
    fn notes_wrap_between_words_with_an_indent() {
        assert_eq!(wrap("  (aa bb cc dd)", 9, "   "), ["  (aa bb", "   cc dd)"]);
        assert_eq!(wrap("  (short)", 80, "   "), ["  (short)"]);
        assert_eq!(
            wrap("  (averyveryverylongword x)", 9, "   "),
            ["  (averyveryverylongword", "   x)"]
        );
    }

    #[test]
    fn long_lines_are_cut_at_the_width() {
        let long = "x".repeat(300);
        let cut_line = fit(long.clone(), WIDTH);
        assert_eq!(cut_line.chars().count(), WIDTH);
        assert!(cut_line.ends_with('…'));
        assert_eq!(fit(long, 80).chars().count(), 80, "an 80-column terminal");
        assert_eq!(fit("short".into(), WIDTH), "short");
    }

    #[test]
    fn the_summary_counts_points_measured_then_values_marked_per_cause() {
        use crate::store::{Row, Status};
        let mut s = Summary::default();
        let row = |global: (Status, f64), shared: Status| Row {
            point: crate::points::Point {
                index: 0,
                id: "p".into(),
                values: vec![],
            },
            status: global.0.max(shared),
            statuses: [
                ("global_x".to_string(), global.0),
                ("shared_x".to_string(), shared),
            ]
            .into(),
            values: [("global_x_spread".to_string(), global.1)].into(),
            build_s: 0.0,
            run_s: 0.0,
            cached: false,
            gpu: Default::default(),
            error: String::new(),
        };
        s.record(&row((Status::Unstable, 0.25), Status::Ok));
        s.record(&row((Status::Unstable, 0.12), Status::Noisy));
        s.record(&row((Status::Ok, 0.001), Status::Unstable));
        s.record(&row((Status::Unstable, 0.3), Status::Ok));
        let text = closing(&s, None, &[], None, false, WIDTH).join("\n");
        assert!(
            text.starts_with("finished 4 points in 0.0 s: 4 measured, 0 failed\n4 of 8 values vary with buffer placement (2 of 2 metrics);\n  1 noisy (1 of 2 metrics)\n  (placement: its buffer placements differ beyond the 1.0 % target and the noise; the value is their median)\n  (noisy: its confidence interval stayed wider than the 1.0 % target within the time allowed)\n  (results.csv: `<metric>_status` is `unstable` or `noisy`; a point's `status` is the worst of its metrics')\n"),
            "{text}"
        );
        assert!(text.lines().all(|l| l.chars().count() <= WIDTH), "{text}");
        assert_eq!(
            one_line(&s, None, false),
            "finished 4 points in 0.0 s: 4 measured, 0 failed; 4 of 8 values vary with buffer placement (2 of 2 metrics), 1 noisy (1 of 2 metrics)"
        );
    }

    #[test]
    fn values_that_only_processes_tell_apart_are_named_so_and_the_counts_wrap_at_80_columns() {
        use crate::store::{Row, Status};
        let mut s = Summary {
            target_rel_ci: Some(0.007),
            ..Summary::default()
        };
        // (status, spread over placements, spread over processes)
        for (st, spread, repeat) in [
            (Status::Unstable, 0.3, 0.01),
            (Status::Unstable, 0.004, 0.03),
            (Status::Ok, 0.001, 0.001),
        ] {
            s.record(&Row {
                point: crate::points::Point {
                    index: 0,
                    id: "p".into(),
                    values: vec![],
                },
                status: st,
                statuses: [("long_metric_name_of_a_kernel".to_string(), st)].into(),
                values: [
                    ("long_metric_name_of_a_kernel_spread".to_string(), spread),
                    (
                        "long_metric_name_of_a_kernel_repeat_spread".to_string(),
                        repeat,
                    ),
                ]
                .into(),
                build_s: 0.0,
                run_s: 0.0,
                cached: false,
                gpu: Default::default(),
                error: String::new(),
            });
        }
        let lines = values(&s, WIDTH);
        assert_eq!(
            lines[..2],
            [
                "1 of 3 values varies with buffer placement (1 of 1 metric);",
                "  1 differs between processes (1 of 1 metric); 0 noisy"
            ]
        );
        assert!(lines[2].starts_with("  (placement: "), "{lines:?}");
        assert!(
            lines[3].starts_with(
                "  (processes: the processes that measured it differ beyond the 0.7 % target"
            ),
            "{lines:?}"
        );
    }

    #[test]
    fn the_series_table_names_marked_values_and_drops_the_column_when_none_is() {
        // Two series over 8 threads: `global_x` unstable at 3 of them, `shared_x` clean.
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("results.csv");
        let mut text = "point_id,index,threads,status,global_x_mflops,global_x_spread,global_x_status,shared_x_mflops,shared_x_status\n".to_string();
        for t in 1..=8 {
            let st = if t <= 3 { "unstable" } else { "ok" };
            let spread = if t <= 3 { 0.25 } else { 0.001 };
            text += &format!(
                "p{t},{t},{t},{st},{},{spread},{st},{},ok\n",
                100 * t,
                50 * t
            );
        }
        std::fs::write(&csv, text).unwrap();
        let opts = crate::analyze::AnalyzeOptions {
            x: Some("threads".into()),
            ..Default::default()
        };
        let a = crate::analyze::analyze_csv(&csv, &opts).unwrap();
        let mut tally = marks::Tally::default();
        tally.add("global_x", Some((marks::Mark::Placement, Some(0.25))));
        let lines = series_lines(&a, &tally);
        assert!(lines[0].ends_with("  marked"), "{lines:?}");
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("global_x_mflops")
                    && l.ends_with("  3 placement, up to 25 %")),
            "{lines:?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("shared_x_mflops") && l.ends_with("  -")),
            "{lines:?}"
        );
        let clean = Analysis {
            series: a
                .series
                .into_iter()
                .filter(|s| s.name.starts_with("shared_x"))
                .collect(),
            ..a
        };
        let lines = series_lines(&clean, &marks::Tally::default());
        assert!(lines[0].ends_with("  best"), "{lines:?}");
        assert!(!lines[1].ends_with("  -"), "{lines:?}");
    }
}
