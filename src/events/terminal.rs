//! What the terminal shows of a run, as hyperfine users expect it. On stderr, a line per point: its
//! `[i/N]`, status and axes, its headline metric scaled with its unit and ± its uncertainty, the
//! time so far and an ETA; plain lines when stderr is not a terminal, the same lines above a
//! progress bar when it is. On stdout, the closing summary in [`WIDTH`] columns: the counts and wall
//! time, period, knee and best per series (the full readings are in `analysis.md`), and where the
//! run folder, `report.html` and `analysis.md` are. With `-q`: failed points, warnings and the
//! summary's first line only. Colour only on a terminal, and never with `NO_COLOR` set.

use super::{Event, Reporter, Summary};
use crate::analyze::reading::human;
use crate::analyze::Analysis;
use crate::report::format_value;
use crate::spec::{Metric, MetricSource, Spec};
use crate::store::{Row, Status};
use indicatif::{ProgressBar, ProgressStyle};
use std::ffi::OsStr;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The closing summary's widest line (its paths excepted: they are never cut).
pub const WIDTH: usize = 120;

/// At most this many series get a line in the closing summary; `analysis.md` has them all.
const MAX_SERIES: usize = 24;

/// A series name longer than this is cut in the closing summary.
const SERIES_NAME: usize = 44;

/// The metric a point's line shows: the spec's `headline`, else its first metric.
#[derive(Clone, Debug)]
pub struct Headline {
    pub name: String,
    pub unit: String,
    /// The column of its value, and of its confidence half-width (timing-core metrics only).
    pub column: String,
    pub rel_ci: Option<String>,
}

impl Headline {
    pub fn of(m: &Metric) -> Headline {
        Headline {
            name: m.name.clone(),
            unit: m.unit.clone(),
            column: m.column(),
            rel_ci: matches!(m.source, MetricSource::Core).then(|| format!("{}_rel_ci", m.name)),
        }
    }

    /// `saw 16.00 GFLOP/s ± 0.1 %`; `None` when the row has no value of it (a failed point).
    pub fn reading(&self, row: &Row) -> Option<String> {
        let v = row.values.get(&self.column).filter(|v| v.is_finite())?;
        let mut out = format!("{} {}", self.name, format_value(*v, &self.unit));
        let ci = self.rel_ci.as_ref().and_then(|c| row.values.get(c));
        if let Some(ci) = ci.filter(|c| c.is_finite()) {
            out += &format!(" ± {}", percent(*ci));
        }
        Some(out)
    }
}

/// A relative uncertainty in percent: one decimal, two below 0.1 % (`0.1 %`, `0.04 %`).
fn percent(f: f64) -> String {
    let p = 100.0 * f.abs();
    if p > 0.0 && p < 0.095 {
        format!("{p:.2} %")
    } else {
        format!("{p:.1} %")
    }
}

/// A duration for people: `0.4 s`, `12 s`, `3 min 05 s`, `2 h 07 min`.
pub fn duration(secs: f64) -> String {
    let s = secs.max(0.0);
    if s < 10.0 {
        return format!("{s:.1} s");
    }
    let whole = s.round() as u64;
    match whole {
        0..60 => format!("{whole} s"),
        60..3600 => format!("{} min {:02} s", whole / 60, whole % 60),
        _ => format!("{} h {:02} min", whole / 3600, whole % 3600 / 60),
    }
}

/// A point's run time: `0.01 s` (to the hundredth below 10 s), else as [`duration`] writes it.
fn run_time(secs: f64) -> String {
    if secs < 10.0 {
        format!("{secs:.2} s")
    } else {
        duration(secs)
    }
}

/// Whether a stream gets colour: it is a terminal and `NO_COLOR` is unset or empty
/// (<https://no-color.org>).
pub fn colour_wanted(terminal: bool, no_color: Option<&OsStr>) -> bool {
    terminal && no_color.is_none_or(|v| v.is_empty())
}

/// `text` in an SGR colour (`32` green, `33` yellow, `31` red, `1` bold) when `on`.
fn paint(on: bool, code: &str, text: &str) -> String {
    if on {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// The colour of a status: green ok, yellow noisy or unstable, red failed.
fn status_colour(s: Status) -> &'static str {
    match s {
        Status::Ok => "32",
        Status::Noisy | Status::Unstable => "33",
        _ => "31",
    }
}

/// Where a run stands when a point's line is printed.
#[derive(Clone, Copy, Debug)]
pub struct Position {
    pub done: usize,
    pub total: usize,
    /// Seconds since the pass started.
    pub elapsed: f64,
}

impl Position {
    /// `elapsed 1.2 s, eta 6.8 s`: the time left at the pace so far; no ETA after the last point.
    fn time(&self) -> String {
        let mut out = format!("elapsed {}", duration(self.elapsed));
        if self.done > 0 && self.done < self.total {
            let left = self.elapsed / self.done as f64 * (self.total - self.done) as f64;
            out += &format!(", eta {}", duration(left));
        }
        out
    }
}

/// The columns of the point lines, as wide as their widest entry so far.
#[derive(Default)]
struct Widths {
    label: usize,
    reading: usize,
}

/// The width of the status column: the longest status (`build_failed`, `wrong_result`).
const STATUS: usize = 12;

/// One point's line, its status right-aligned first (as cargo-nextest's):
/// `          ok [ 3/20] threads=3   saw 3.000 GFLOP/s ± 0.1 %   elapsed 0.6 s, eta 3.4 s`;
/// a failed point's has no reading and ends with its error.
fn point_line(
    row: &Row,
    headline: Option<&Headline>,
    at: Position,
    widths: &mut Widths,
    colour: bool,
) -> String {
    let n = at.total.to_string().len();
    let status = format!("{:>STATUS$}", row.status.as_str());
    let label = row.point.label();
    widths.label = widths.label.max(label.chars().count());
    let reading = if row.status.measured() {
        headline
            .and_then(|h| h.reading(row))
            .unwrap_or_else(|| "-".into())
    } else {
        String::new()
    };
    widths.reading = widths.reading.max(reading.chars().count());
    let pad = " ".repeat(widths.reading - reading.chars().count());
    let mut line = format!(
        "{} [{:>n$}/{}] {label:<lw$}   {}{pad}   {}",
        paint(colour, status_colour(row.status), &status),
        at.done,
        at.total,
        paint(colour && !reading.is_empty(), "1", &reading),
        at.time(),
        lw = widths.label
    );
    if !row.error.is_empty() {
        line += "   ";
        line += &row.error;
    }
    line
}

/// What the terminal shows of a run; see the module's doc.
pub struct Terminal {
    quiet: bool,
    headline: Option<Headline>,
    /// Colour on stderr (the point lines) and on stdout (the closing summary).
    colour: (bool, bool),
    bar: Option<ProgressBar>,
    total: usize,
    done: usize,
    failed: usize,
    started: Instant,
    widths: Widths,
    analysis: Option<Analysis>,
    wrote: Vec<PathBuf>,
}

impl Terminal {
    pub fn new(spec: &Spec, quiet: bool) -> Terminal {
        let no_color = std::env::var_os("NO_COLOR");
        Terminal {
            quiet,
            headline: spec.headline().map(Headline::of),
            colour: (
                colour_wanted(std::io::stderr().is_terminal(), no_color.as_deref()),
                colour_wanted(std::io::stdout().is_terminal(), no_color.as_deref()),
            ),
            bar: None,
            total: 0,
            done: 0,
            failed: 0,
            started: Instant::now(),
            // The axes line up from the first point: as wide as the widest point's.
            widths: Widths {
                label: crate::points::expand(spec)
                    .ok()
                    .and_then(|ps| ps.iter().map(|p| p.label().chars().count()).max())
                    .unwrap_or(0),
                reading: 0,
            },
            analysis: None,
            wrote: Vec::new(),
        }
    }

    /// A line on stderr, above the bar when there is one.
    fn say(&self, msg: String) {
        match &self.bar {
            Some(bar) => bar.println(msg),
            None => eprintln!("{msg}"),
        }
    }

    /// A line that `-q` leaves out.
    fn note(&self, msg: String) {
        if !self.quiet {
            self.say(msg);
        }
    }

    fn start_bar(&mut self, todo: usize) {
        let bar = ProgressBar::new(todo as u64);
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {prefix} eta {eta} {wide_msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        self.bar = Some(bar);
    }
}

impl Reporter for Terminal {
    fn on(&mut self, event: &Event) {
        match event {
            Event::Started {
                run_dir,
                total,
                todo,
                resumed,
                jobs,
                gpus,
                pass,
            } => {
                self.total = *todo;
                self.done = 0;
                self.failed = 0;
                self.started = Instant::now();
                let what = match (resumed, pass) {
                    (_, Some((p, n))) => format!(
                        "pass {p} of {n} ({}): {}",
                        if *p == 1 { "sweep order" } else { "shuffled" },
                        if *resumed { "resuming" } else { "running" }
                    ),
                    (true, None) => "resuming".to_string(),
                    (false, None) => "running".to_string(),
                };
                let on = if gpus.is_empty() {
                    "the host".to_string()
                } else {
                    gpus.join(", ")
                };
                if let Some(bar) = self.bar.take() {
                    bar.finish_and_clear();
                }
                self.note(format!(
                    "{what} {todo} of {total} points into {} ({jobs} build jobs, runs on {on})",
                    run_dir.display()
                ));
                if std::io::stderr().is_terminal() && !self.quiet {
                    self.start_bar(*todo);
                }
            }
            Event::Built { .. } | Event::Raw { .. } | Event::Control { .. } => {}
            Event::Held { row, why } => self.note(format!(
                "held {} for more processes: two groups of samples in {why}",
                row.point.label()
            )),
            Event::Recheck {
                points,
                round,
                rounds,
            } => self.note(format!(
                "recheck {round} of {rounds}: {points} held point{} in a fresh process each, shuffled",
                if *points == 1 { "" } else { "s" }
            )),
            Event::Running { point } => {
                if let Some(bar) = &self.bar {
                    bar.set_message(point.label());
                }
            }
            Event::Finished { row, .. } => {
                self.done += 1;
                if !row.status.measured() {
                    self.failed += 1;
                }
                let at = Position {
                    done: self.done,
                    total: self.total,
                    elapsed: self.started.elapsed().as_secs_f64(),
                };
                let line = point_line(
                    row,
                    self.headline.as_ref(),
                    at,
                    &mut self.widths,
                    self.colour.0,
                );
                // A failed point is an error: `-q` shows it too.
                if !self.quiet || !row.status.measured() {
                    self.say(line);
                }
                if let Some(bar) = &self.bar {
                    bar.set_prefix(format!("{} failed", self.failed));
                    bar.inc(1);
                }
            }
            Event::Warning(w) => self.say(format!("warning: {w}")),
            Event::Note(n) => self.note(format!("note: {n}")),
            Event::RunFinished { .. } => {
                if let Some(bar) = self.bar.take() {
                    bar.finish_and_clear();
                }
            }
            Event::Analyzed(a) => self.analysis = Some((*a).clone()),
            Event::Wrote(path) => self.wrote.push(path.to_path_buf()),
            Event::Done { summary } => {
                let report = summary.run_dir.join(crate::report::html::FILE);
                let report = report.is_file().then_some(report.as_path());
                let lines = if self.quiet {
                    vec![one_line(summary, report, self.colour.1)]
                } else {
                    closing(summary, self.analysis.as_ref(), &self.wrote, report, self.colour.1)
                };
                for l in lines {
                    println!("{l}");
                }
            }
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The kinds of failure the run had, with their counts: `1 run_failed`, `1 timeout`.
fn failures(s: &Summary) -> Vec<String> {
    s.counts
        .iter()
        .filter(|(st, n)| !st.measured() && **n > 0)
        .map(|(st, n)| format!("{n} {}", st.as_str()))
        .collect()
}

/// `20 ok, 0 noisy, 0 unstable, 2 failed`, and with `why` ` (1 run_failed, 1 timeout)`, coloured
/// where not zero.
fn counts(s: &Summary, colour: bool, why: bool) -> String {
    let n = |st: Status| s.counts.get(&st).copied().unwrap_or(0);
    let part = |count: usize, what: &str, code: &str| {
        let text = format!("{count} {what}");
        paint(colour && count > 0, code, &text)
    };
    let failures = failures(s);
    let mut out = [
        part(n(Status::Ok), "ok", "32"),
        part(n(Status::Noisy), "noisy", "33"),
        part(n(Status::Unstable), "unstable", "33"),
        part(s.failed(), "failed", "31"),
    ]
    .join(", ");
    if !failures.is_empty() && why {
        out += &format!(" ({})", failures.join(", "));
    }
    out
}

/// `finished 20 points in 2.0 s: 20 ok, 0 noisy, 0 unstable, 0 failed`; with `why` the failures'
/// kinds in parentheses.
fn first_line(s: &Summary, colour: bool, why: bool) -> String {
    let what = if s.counts.is_empty() && s.held > 0 {
        "none combined yet".to_string()
    } else if s.counts.is_empty() {
        "nothing to do".to_string()
    } else {
        counts(s, colour, why)
    };
    let before = if s.skipped > 0 {
        format!(" ({} already done before)", s.skipped)
    } else {
        String::new()
    };
    format!(
        "{} {} points in {}: {what}{before}",
        if s.interrupted {
            "interrupted after"
        } else {
            "finished"
        },
        s.counts.values().sum::<usize>(),
        duration(s.wall.as_secs_f64())
    )
}

/// What `-q` prints: the first line, where the report is, and how to resume.
pub fn one_line(s: &Summary, report: Option<&Path>, colour: bool) -> String {
    let mut out = first_line(s, colour, true);
    if let Some(r) = report {
        out += &format!("; report {}", r.display());
    }
    if s.interrupted {
        out += "; run the same command again to resume";
    }
    out
}

/// `line` cut to [`WIDTH`] characters, ending in `…` where it was cut.
fn fit(line: String) -> String {
    if line.chars().count() <= WIDTH {
        return line;
    }
    let mut out: String = line.chars().take(WIDTH - 1).collect();
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

/// One line per series (the first [`MAX_SERIES`]): its period, knee and best value with its unit.
fn series_lines(a: &Analysis) -> Vec<String> {
    let mut rows = vec![vec![
        "series".to_string(),
        "period".into(),
        "knee".into(),
        "best".into(),
    ]];
    for s in a.series.iter().take(MAX_SERIES) {
        let c = &s.curve;
        let period = match (&c.period, &c.guess) {
            (Some(p), _) => format!("{} ({})", human(p.period), p.level.as_str()),
            (None, Some(g)) => format!("none (guess {})", human(g.period)),
            (None, None) => "none".into(),
        };
        let knee = c.knee.map_or("-".to_string(), human);
        let best = c.best.as_ref().map_or("-".to_string(), |b| {
            format!(
                "{} at {}={}",
                format_value(b.value, &s.unit),
                a.x,
                human(b.x)
            )
        });
        rows.push(vec![cut(&s.name, SERIES_NAME), period, knee, best]);
    }
    let mut out = columns(&rows);
    if a.series.len() > MAX_SERIES {
        out.push(format!(
            "… and {} more series in analysis.md",
            a.series.len() - MAX_SERIES
        ));
    }
    out
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
/// files are. Every line but a path fits [`WIDTH`] columns.
pub fn closing(
    s: &Summary,
    analysis: Option<&Analysis>,
    wrote: &[PathBuf],
    report: Option<&Path>,
    colour: bool,
) -> Vec<String> {
    let mut out = vec![first_line(s, colour, false)];
    let failures = failures(s);
    if !failures.is_empty() {
        out.push(format!(
            "failed: {} (each named above with its log)",
            failures.join(", ")
        ));
    }
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
    let mut builds = format!("builds: {} compiled, {} from cache", s.built, s.cached);
    // The slowest runs that fit the line, whole.
    for (i, (l, t)) in s.slowest.iter().enumerate() {
        let item = format!(
            "{}{l} ({})",
            if i == 0 { "; slowest runs: " } else { ", " },
            run_time(*t)
        );
        if builds.chars().count() + item.chars().count() > WIDTH {
            break;
        }
        builds += &item;
    }
    out.push(builds);
    if let Some(a) = analysis.filter(|a| !a.series.is_empty()) {
        out.push(String::new());
        out.extend(series_lines(a));
    }
    out.push(String::new());
    let mut out: Vec<String> = out.into_iter().map(fit).collect();
    // Where the files are: the paths in full, never cut; the list of the others cut to fit.
    let md = wrote
        .iter()
        .find(|p| p.file_name() == Some(OsStr::new("analysis.md")));
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
        out.push(if i == last { fit(line) } else { line });
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
    fn durations_read_in_seconds_minutes_or_hours() {
        let cases = [
            (0.04, "0.0 s"),
            (2.04, "2.0 s"),
            (12.4, "12 s"),
            (185.0, "3 min 05 s"),
            (7620.0, "2 h 07 min"),
            (-1.0, "0.0 s"),
        ];
        for (s, want) in cases {
            assert_eq!(duration(s), want, "{s}");
        }
    }

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(colour_wanted(true, None));
        assert!(colour_wanted(true, Some(OsStr::new(""))), "empty: unset");
        assert!(!colour_wanted(true, Some(OsStr::new("1"))));
        assert!(!colour_wanted(false, None));
        assert_eq!(paint(false, "31", "x"), "x");
        assert_eq!(paint(true, "31", "x"), "\x1b[31mx\x1b[0m");
    }

    #[test]
    fn uncertainties_keep_a_digit_that_shows() {
        assert_eq!(percent(0.001), "0.1 %");
        assert_eq!(percent(0.0004), "0.04 %");
        assert_eq!(percent(0.0123), "1.2 %");
        assert_eq!(percent(0.0), "0.0 %");
    }

    #[test]
    fn the_summary_says_held_points_wait_when_the_run_was_interrupted() {
        let mut s = Summary {
            held: 2,
            interrupted: true,
            run_dir: PathBuf::from("out/x/1"),
            ..Summary::default()
        };
        let text = closing(&s, None, &[], None, false).join("\n");
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
        assert!(closing(&s, None, &[], None, false).join("\n").contains(
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
    fn long_lines_are_cut_at_the_width() {
        let long = "x".repeat(300);
        let cut_line = fit(long);
        assert_eq!(cut_line.chars().count(), WIDTH);
        assert!(cut_line.ends_with('…'));
        assert_eq!(fit("short".into()), "short");
    }
}
