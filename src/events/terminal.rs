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
use std::io::IsTerminal;
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
/// [`marked_by`]); a failed point's has no reading and ends with its error.
fn point_line(
    row: &Row,
    target: f64,
    headline: Option<&Headline>,
    at: Position,
    widths: &mut Widths,
    colour: bool,
) -> String {
    let n = at.total.to_string().len();
    let marked = row_marks(row, target);
    let status = format!("{:>STATUS$}", status_word(row, &marked));
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
    } else if let Some(which) = marked_by(&marked) {
        line += "   ";
        line += &which;
    }
    line
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
                    self.target,
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
                        super::closing::width(),
                    )
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
        let line = point_line(&row, 0.007, None, at, &mut Widths::default(), false);
        assert!(
            line.starts_with("   placement [ 58/512] threads=58"),
            "{line}"
        );
        assert!(
            line.ends_with("   placement: global_even_grid 72 %, global_all_grid 69 % +1; noisy: shared_x ± 1.3 %"),
            "{line}"
        );
        // Every metric ok: `ok` and nothing after the times.
        for st in row.statuses.values_mut() {
            *st = Status::Ok;
        }
        row.status = Status::Ok;
        let line = point_line(&row, 0.007, None, at, &mut Widths::default(), false);
        assert!(line.starts_with("          ok [ 58/512]"), "{line}");
        assert!(line.ends_with("eta 5 min 13 s"), "{line}");
    }
}
