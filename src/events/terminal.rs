//! What the terminal shows of a run, as hyperfine users expect it. On stderr, a line per point: its
//! `[i/N]`, status and axes, its headline metric scaled with its unit and ± its uncertainty, the
//! time so far and an ETA; plain lines when stderr is not a terminal, the same lines above a
//! progress bar when it is. On stdout, the closing summary (src/events/closing.rs) at the end. With
//! `-q`: failed points, warnings and the summary's first line only. Colour only on a terminal, and
//! never with `NO_COLOR` set.

use super::closing::{closing, one_line};
use super::marks::{row_marks, share, Mark};
use super::{Event, Reporter};
use crate::analyze::Analysis;
use crate::spec::{Metric, MetricSource, Spec};
use crate::store::{Row, Status};
use crate::units::format_value;
use indicatif::{ProgressBar, ProgressStyle};
use std::ffi::OsStr;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

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
        format!("{} %", crate::schema::fixed(p, 1))
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
pub(super) fn run_time(secs: f64) -> String {
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
pub(super) fn paint(on: bool, code: &str, text: &str) -> String {
    if on {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// The colour of a status: green ok, yellow a measured point with a marked value, red failed.
fn status_colour(s: Status) -> &'static str {
    match s {
        Status::Ok => "32",
        Status::Noisy | Status::Unstable => "33",
        _ => "31",
    }
}

/// What a point's line calls its status: `ok`; the cause of its worst marked value (`placement`,
/// `processes`, `noisy`: [`marks`]) where results.csv says `unstable` or `noisy`; or why it
/// failed (`run_failed`, `timeout`, ...).
fn status_word(row: &Row, marked: &[(&str, Mark, Option<f64>)]) -> &'static str {
    match marked.first() {
        Some(m) if row.status.measured() => m.1.word(),
        // No metric of it marked (or a row without statuses per metric): the row's own token.
        _ => row.status.as_str(),
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
/// a point with marked values ends with them (`   placement [ 4/20] ...   placement: saw 25 %`,
/// [`marked_by`]), and leaves out its times where the line would be too wide for them. A failed
/// point's has its reason where the reading goes, and the log it names
/// on a line of its own below, under the axes:
/// `  run_failed [ 5/20] threads=5   program killed by signal 11 (SIGSEGV)`
/// `                     log: out/saw/1/points/p1/stderr.txt`.
/// Each line but the log's (a path is never cut) fits `width` columns, ending in `…` where it was
/// cut; results.csv's `error` cell keeps the whole reason.
fn point_lines(
    row: &Row,
    target: f64,
    headline: Option<&Headline>,
    at: Position,
    widths: &mut Widths,
    colour: bool,
    width: usize,
) -> Vec<String> {
    let n = at.total.to_string().len();
    let marked = row_marks(row, target);
    let status = format!("{:>STATUS$}", status_word(row, &marked));
    let label = row.point.label();
    // The line is cut to `width` anyway; a wider pad (a 2 MB axis value) is past what `format!`
    // can pad to (a panic), and padding it would cost its length on every later line.
    widths.label = widths
        .label
        .max(label.chars().count())
        .min(width.min(1 << 12));
    let head = format!(
        " [{:>n$}/{}] {label:<lw$}   ",
        at.done,
        at.total,
        lw = widths.label
    );
    if !row.status.measured() {
        let (reason, log) = split_log(&row.error);
        let mut out = vec![fit_painted(
            &[
                (status, Some(status_colour(row.status))),
                (head.clone(), None),
                (reason, None),
            ],
            width,
            colour,
        )
        .trim_end()
        .to_string()];
        if let Some(log) = log {
            // Under the axes: past the status, its `[i/N]` and a space.
            let indent = STATUS + head.find(']').map_or(0, |i| i + 2);
            out.push(format!("{}log: {log}", " ".repeat(indent)));
        }
        return out;
    }
    let reading = headline
        .and_then(|h| h.reading(row))
        .unwrap_or_else(|| "-".into());
    widths.reading = widths.reading.max(reading.chars().count());
    let pad = " ".repeat(widths.reading - reading.chars().count());
    let which = marked_by(&marked).map_or(String::new(), |w| format!("   {w}"));
    let parts = |tail: String| {
        [
            (status.clone(), Some(status_colour(row.status))),
            (head.clone(), None),
            (reading.clone(), Some("1")),
            (tail, None),
        ]
    };
    let mut line = parts(format!("{pad}   {}{which}", at.time()));
    // Too wide: the marks are worth more than the times (which the bar shows on a terminal).
    let wide = |l: &[(String, Option<&str>)]| l.iter().map(|p| p.0.chars().count()).sum::<usize>();
    if wide(&line) > width && !which.is_empty() {
        line = parts(which.clone());
    }
    vec![fit_painted(&line, width, colour)]
}

/// A failed point's reason and the log it names (results.csv's `error` cell): `program killed by
/// signal 11 (SIGSEGV) (log: p/stderr.txt)` gives (`program killed by signal 11 (SIGSEGV)`,
/// `p/stderr.txt`), and `... (hint: print less; log: p/stdout.txt)` keeps its hint: (`... (hint:
/// print less)`, `p/stdout.txt`).
pub(crate) fn split_log(error: &str) -> (String, Option<&str>) {
    let Some(body) = error.strip_suffix(')') else {
        return (error.to_string(), None);
    };
    if let Some(at) = body.rfind(" (log: ") {
        return (body[..at].to_string(), Some(&body[at + " (log: ".len()..]));
    }
    if let Some(at) = body.rfind("; log: ") {
        return (
            format!("{})", &body[..at]),
            Some(&body[at + "; log: ".len()..]),
        );
    }
    (error.to_string(), None)
}

/// A line's parts, each in its colour (an SGR code, see [`paint`]) when `colour`, cut at `width`
/// columns: the part that passes it ends in `…` and the rest are left out.
fn fit_painted(parts: &[(String, Option<&str>)], width: usize, colour: bool) -> String {
    let total: usize = parts.iter().map(|(t, _)| t.chars().count()).sum();
    let mut room = if total <= width {
        total
    } else {
        width.saturating_sub(1)
    };
    let mut out = String::new();
    for (text, code) in parts {
        if room == 0 {
            break;
        }
        let shown: String = text.chars().take(room).collect();
        room -= shown.chars().count();
        out += &match code {
            Some(code) if !shown.trim().is_empty() => paint(colour, code, &shown),
            _ => shown,
        };
    }
    if total > width {
        out.push('…');
    }
    out
}

/// Which metrics mark a measured point, by cause, with how much, the largest first:
/// `placement: global_all_grid 69 %, global_even_grid 52 % +2; noisy: shared_x ± 1.3 %`; `None`
/// where none does.
fn marked_by(marked: &[(&str, Mark, Option<f64>)]) -> Option<String> {
    let mut groups = Vec::new();
    for mark in Mark::ALL {
        let of: Vec<String> = marked
            .iter()
            .filter(|m| m.1 == mark)
            .map(|(name, _, amount)| match (mark, amount) {
                (Mark::Noisy, Some(a)) => format!("{name} ± {}", share(*a)),
                (_, Some(a)) => format!("{name} {}", share(*a)),
                (_, None) => name.to_string(),
            })
            .collect();
        if of.is_empty() {
            continue;
        }
        let (shown, more) = of.split_at(of.len().min(2));
        let mut group = format!("{}: {}", mark.word(), shown.join(", "));
        if !more.is_empty() {
            group += &format!(" +{}", more.len());
        }
        groups.push(group);
    }
    (!groups.is_empty()).then(|| groups.join("; "))
}

/// What the terminal shows of a run; see the module's doc.
pub struct Terminal {
    quiet: bool,
    headline: Option<Headline>,
    /// The run's confidence target, which tells placement from processes.
    target: f64,
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
    /// The closing summary goes to stderr too: stdout carries something else (`--export-json -`).
    summary_on_stderr: bool,
}

impl Terminal {
    pub fn new(spec: &Spec, quiet: bool) -> Terminal {
        let no_color = std::env::var_os("NO_COLOR");
        Terminal {
            quiet,
            headline: spec.headline().map(Headline::of),
            target: spec.target_rel_ci(),
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
            summary_on_stderr: false,
        }
    }

    /// Writes the closing summary on stderr, as every other line: stdout is kept for what the
    /// user sent there (`--export-json -`, or `/dev/stdout`), so that it pipes into a parser.
    pub fn summary_on_stderr(mut self) -> Terminal {
        self.summary_on_stderr = true;
        self.colour.1 = self.colour.0;
        self
    }

    /// A line on stderr, above the bar when there is one.
    fn say(&self, msg: String) {
        match &self.bar {
            Some(bar) => bar.println(msg),
            // A terminal that went away (`2>&1 | head`) ends no run: its lines are lost, not the run.
            None => {
                let _ = writeln!(std::io::stderr(), "{msg}");
            }
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
                    "{what} {todo} of {} into {} ({}, runs on {on})",
                    crate::words::plural(*total, "point"),
                    run_dir.display(),
                    crate::words::plural(*jobs, "build job")
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
                let lines = point_lines(
                    row,
                    self.target,
                    self.headline.as_ref(),
                    at,
                    &mut self.widths,
                    self.colour.0,
                    super::closing::width_of(std::io::stderr()),
                );
                // A failed point is an error: `-q` shows it too.
                if !self.quiet || !row.status.measured() {
                    for line in lines {
                        self.say(line);
                    }
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
                let report = crate::store::RunDir::new(&summary.run_dir).report();
                let report = report.is_file().then_some(report.as_path());
                let lines = if self.quiet {
                    vec![one_line(summary, report, self.colour.1)]
                } else {
                    closing(
                        summary,
                        self.analysis.as_ref(),
                        &self.wrote,
                        report,
                        self.colour.1,
                        if self.summary_on_stderr {
                            super::closing::width_of(std::io::stderr())
                        } else {
                            super::closing::width()
                        },
                    )
                };
                for l in lines {
                    if self.summary_on_stderr {
                        self.say(l);
                    } else {
                        let _ = writeln!(std::io::stdout(), "{l}");
                    }
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
    fn a_point_line_names_its_marked_metrics_by_cause_the_largest_first() {
        let mut row = Row {
            point: crate::points::Point {
                index: 0,
                id: "p".into(),
                values: vec![("threads".into(), crate::spec::Value::Int(58))],
            },
            status: Status::Unstable,
            statuses: Default::default(),
            values: Default::default(),
            build_s: 0.0,
            run_s: 0.0,
            cached: false,
            gpu: Default::default(),
            error: String::new(),
        };
        // (metric, status, spread over placements, rel_ci)
        for (m, st, spread, ci) in [
            ("global_all_grid", Status::Unstable, 0.69, 0.001),
            ("global_even_grid", Status::Unstable, 0.72, 0.001),
            ("global_all_1blk", Status::Unstable, 0.12, 0.001),
            ("shared_nc_grid", Status::Ok, 0.003, 0.001),
            ("shared_x", Status::Noisy, 0.003, 0.013),
        ] {
            row.statuses.insert(m.into(), st);
            row.values.insert(format!("{m}_spread"), spread);
            row.values.insert(format!("{m}_rel_ci"), ci);
        }
        let at = Position {
            done: 58,
            total: 512,
            elapsed: 40.0,
        };
        let line = point_lines(&row, 0.007, None, at, &mut Widths::default(), false, 200).remove(0);
        assert!(
            line.starts_with("   placement [ 58/512] threads=58"),
            "{line}"
        );
        assert!(
            line.ends_with("   placement: global_even_grid 72 %, global_all_grid 69 % +1; noisy: shared_x ± 1.3 %"),
            "{line}"
        );
        // Where the line is too wide, the times give way to the marks.
        let line = point_lines(&row, 0.007, None, at, &mut Widths::default(), false, 122).remove(0);
        assert_eq!(
            line,
            "   placement [ 58/512] threads=58   -   placement: global_even_grid 72 %, global_all_grid 69 % +1; noisy: shared_x ± 1.3 %"
        );
        // Every metric ok: `ok` and nothing after the times.
        for st in row.statuses.values_mut() {
            *st = Status::Ok;
        }
        row.status = Status::Ok;
        let line = point_lines(&row, 0.007, None, at, &mut Widths::default(), false, 200).remove(0);
        assert!(line.starts_with("          ok [ 58/512]"), "{line}");
        assert!(line.ends_with("eta 5 min 13 s"), "{line}");
    }

    fn a_row(status: Status, error: &str) -> Row {
        Row {
            point: crate::points::Point {
                index: 0,
                id: "p".into(),
                values: vec![
                    ("mode".into(), crate::spec::Value::Str("crash".into())),
                    ("threads".into(), crate::spec::Value::Int(14)),
                ],
            },
            status,
            statuses: Default::default(),
            values: Default::default(),
            build_s: 0.0,
            run_s: 0.0,
            cached: false,
            gpu: Default::default(),
            error: error.into(),
        }
    }

    #[test]
    fn a_failed_points_reason_fits_the_width_and_its_log_has_a_line_of_its_own() {
        let at = Position {
            done: 11,
            total: 15,
            elapsed: 1.3,
        };
        let row = a_row(
            Status::RunFailed,
            "program killed by signal 11 (SIGSEGV) (log: output/term/20261126T173505Z/points/p23f3ec6fc4d5/stderr.txt)",
        );
        let mut widths = Widths {
            label: 22,
            reading: 25,
        };
        let lines = point_lines(&row, 0.01, None, at, &mut widths, false, 100);
        assert_eq!(
            lines,
            [
                "  run_failed [11/15] mode=crash threads=14    program killed by signal 11 (SIGSEGV)",
                "                     log: output/term/20261126T173505Z/points/p23f3ec6fc4d5/stderr.txt"
            ]
        );
        // Narrower: the reason is cut, the log's path never.
        let lines = point_lines(&row, 0.01, None, at, &mut widths, false, 80);
        assert_eq!(
            lines[0],
            "  run_failed [11/15] mode=crash threads=14    program killed by signal 11 (SIGS…"
        );
        assert_eq!(lines[0].chars().count(), 80);
        assert!(lines[1].ends_with("/stderr.txt"), "{lines:?}");
        // A hint stays with the reason; a reason without a log is one line.
        let row = a_row(
            Status::RunFailed,
            "the program printed 300 MiB on stdout (hint: print less; log: p/stdout.txt)",
        );
        let lines = point_lines(&row, 0.01, None, at, &mut widths, false, 120);
        assert_eq!(
            lines,
            [
                "  run_failed [11/15] mode=crash threads=14    the program printed 300 MiB on stdout (hint: print less)",
                "                     log: p/stdout.txt"
            ]
        );
        let row = a_row(
            Status::BuildFailed,
            "`nvcc` not found (hint: put it on PATH)",
        );
        let lines = point_lines(&row, 0.01, None, at, &mut widths, false, 120);
        assert_eq!(
            lines,
            ["build_failed [11/15] mode=crash threads=14    `nvcc` not found (hint: put it on PATH)"]
        );
    }

    #[test]
    fn a_measured_points_line_is_cut_at_the_width_its_colours_whole() {
        let mut row = a_row(Status::Ok, "");
        row.values.insert("saw_mflops".into(), 14000.0);
        row.values.insert("saw_rel_ci".into(), 0.001);
        let headline = Headline {
            name: "saw".into(),
            unit: "MFlops".into(),
            column: "saw_mflops".into(),
            rel_ci: Some("saw_rel_ci".into()),
        };
        let at = Position {
            done: 1,
            total: 15,
            elapsed: 0.2,
        };
        let line = |width: usize, colour: bool| {
            point_lines(
                &row,
                0.01,
                Some(&headline),
                at,
                &mut Widths::default(),
                colour,
                width,
            )
            .remove(0)
        };
        let whole = line(200, false);
        assert_eq!(
            whole,
            "          ok [ 1/15] mode=crash threads=14   saw 14.00 GFLOP/s ± 0.1 %   elapsed 0.2 s, eta 2.8 s"
        );
        let cut = line(80, false);
        assert_eq!(cut.chars().count(), 80);
        assert_eq!(
            cut,
            format!("{}…", whole.chars().take(79).collect::<String>())
        );
        // In colour, the SGR codes take no columns: the same text is shown.
        let painted = line(80, true);
        assert!(
            painted.starts_with("\x1b[32m          ok\x1b[0m [ 1/15]"),
            "{painted:?}"
        );
        assert!(
            painted.contains("\x1b[1msaw 14.00 GFLOP/s ± 0.1 %\x1b[0m"),
            "{painted:?}"
        );
        let plain = regex::Regex::new("\x1b\\[[0-9;]*m")
            .unwrap()
            .replace_all(&painted, "");
        assert_eq!(plain, cut);
    }
}
