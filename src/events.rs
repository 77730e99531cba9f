//! Events the driver emits, and the reporters that listen (progress bar or plain lines, summary).
//! Reporters never drive.

use crate::points::Point;
use crate::store::{Row, Status};
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Debug)]
pub enum Event<'a> {
    Started {
        run_dir: &'a std::path::Path,
        total: usize,
        todo: usize,
        resumed: bool,
        jobs: usize,
        gpus: &'a [String],
        /// `repeat` > 1: (this pass, passes), from 1.
        pass: Option<(u32, u32)>,
    },
    Built {
        point: &'a Point,
        cached: bool,
        failed: bool,
        /// When its build started and ended, in seconds since the run started.
        started: f64,
        ended: f64,
    },
    Running {
        point: &'a Point,
    },
    /// A point's row, with when its run started and ended (seconds since the run started).
    Finished {
        row: &'a Row,
        run_start: f64,
        run_end: f64,
    },
    /// The last pass of a `repeat` run: one process's own row of a point, before it is combined
    /// with the earlier passes' into the point's row (`Finished`).
    Raw {
        row: &'a Row,
    },
    /// `recheck`: a point's row whose samples fell into two groups (`why`, naming the metric): kept
    /// in `passes/recheck.csv`, not `results.csv`, until more processes have measured the point at
    /// the end of the sweep.
    Held {
        row: &'a Row,
        why: &'a str,
    },
    /// `recheck`: a round of the held points begins, each measured once more (round of rounds, from 1).
    Recheck {
        points: usize,
        round: u32,
        rounds: u32,
    },
    /// A control re-run's row (`control_every`).
    Control {
        row: &'a Row,
    },
    /// Something the user should know that does not stop the run.
    Warning(&'a str),
    /// The run is over and its manifest says so (finished, or interrupted); `summary` is what
    /// its last pass did.
    RunFinished {
        summary: &'a Summary,
    },
}

pub trait Reporter: Send {
    fn on(&mut self, event: &Event);
}

/// A progress bar on a terminal, else one plain line per point (on stderr).
pub struct Progress {
    bar: Option<ProgressBar>,
    total: usize,
    done: usize,
    failed: usize,
    quiet: bool,
}

impl Progress {
    pub fn new(quiet: bool) -> Progress {
        Progress {
            bar: None,
            total: 0,
            done: 0,
            failed: 0,
            quiet,
        }
    }
}

impl Progress {
    /// A line above the bar, or on its own without one (not with `-q`).
    fn note(&self, msg: String) {
        match &self.bar {
            Some(bar) => bar.println(msg),
            None if !self.quiet => eprintln!("{msg}"),
            None => {}
        }
    }
}

impl Reporter for Progress {
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
                if !self.quiet {
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
                    eprintln!(
                        "{what} {todo} of {total} points into {} ({jobs} build jobs, runs on {on})",
                        run_dir.display()
                    );
                }
                if std::io::stderr().is_terminal() && !self.quiet {
                    let bar = ProgressBar::new(*todo as u64);
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
            Event::Built { .. }
            | Event::Raw { .. }
            | Event::Control { .. }
            | Event::RunFinished { .. } => {}
            Event::Held { row, why } => {
                let msg = format!(
                    "held {} for more processes: two groups of samples in {why}",
                    row.point.label()
                );
                self.note(msg);
            }
            Event::Recheck {
                points,
                round,
                rounds,
            } => {
                let msg = format!(
                    "recheck {round} of {rounds}: {points} held point{} in a fresh process each, shuffled",
                    if *points == 1 { "" } else { "s" }
                );
                self.note(msg);
            }
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
                match &self.bar {
                    Some(bar) => {
                        bar.set_prefix(format!("{} failed", self.failed));
                        bar.inc(1);
                        if !row.status.measured() {
                            bar.println(format!("{}: {}", row.status.as_str(), row.error));
                        }
                    }
                    None if !self.quiet => eprintln!("{}", plain_line(row, self.done, self.total)),
                    None => {}
                }
            }
            Event::Warning(w) => {
                let msg = format!("warning: {w}");
                match &self.bar {
                    Some(bar) => bar.println(msg),
                    None => eprintln!("{msg}"),
                }
            }
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// A metric's own value, not one of its statistics (`_max_s`, `_rel_ci`, ...), a profile counter or
/// the point's power: what the progress line shows.
fn is_value_column(k: &str) -> bool {
    use crate::spec::{CORE_FIELDS, CORE_STATS};
    !k.contains(crate::profile::config::SEP)
        && !crate::profile::power::COLUMNS.contains(&k)
        && !CORE_STATS.iter().any(|s| k.contains(&format!("_{s}_")))
        && !CORE_FIELDS.iter().any(|f| k.ends_with(&format!("_{f}")))
        && !k.ends_with("_repeat_spread")
}

fn plain_line(row: &Row, done: usize, total: usize) -> String {
    // A measured value, not a profile counter or the point's power.
    let first = row
        .values
        .iter()
        .find(|(k, _)| is_value_column(k))
        .map(|(k, v)| format!(" {k}={v}"))
        .unwrap_or_default();
    let build = if row.cached {
        "cached".to_string()
    } else {
        format!("build {:.2} s", row.build_s)
    };
    let mut line = format!(
        "[{done}/{total}] {} {}{first} ({build}, run {:.2} s)",
        row.status.as_str(),
        row.point.label(),
        row.run_s
    );
    if !row.error.is_empty() {
        line.push_str(": ");
        line.push_str(&row.error);
    }
    line
}

/// What a run did, for the summary at its end.
#[derive(Debug, Default)]
pub struct Summary {
    pub run_dir: PathBuf,
    pub csv: PathBuf,
    pub total: usize,
    pub skipped: usize,
    pub counts: BTreeMap<Status, usize>,
    /// Each metric's points marked by its own status (`<metric>_status`): metric -> (noisy,
    /// unstable).
    pub marked: Vec<(String, usize, usize)>,
    /// `recheck`: points held for more processes because their samples fell into two groups.
    pub held: usize,
    pub built: usize,
    pub cached: usize,
    pub slowest: Vec<(String, f64)>,
    pub wall: Duration,
    pub interrupted: bool,
}

impl Summary {
    pub fn failed(&self) -> usize {
        self.counts
            .iter()
            .filter(|(s, _)| !s.measured())
            .map(|(_, n)| n)
            .sum()
    }

    pub fn record(&mut self, row: &Row) {
        *self.counts.entry(row.status).or_default() += 1;
        for (metric, status) in &row.statuses {
            let at = match self.marked.iter().position(|m| m.0 == *metric) {
                Some(at) => at,
                None => {
                    self.marked.push((metric.clone(), 0, 0));
                    self.marked.len() - 1
                }
            };
            match status {
                Status::Noisy => self.marked[at].1 += 1,
                Status::Unstable => self.marked[at].2 += 1,
                _ => {}
            }
        }
        if row.cached {
            self.cached += 1;
        } else if row.build_s > 0.0 {
            self.built += 1;
        }
        self.slowest.push((row.point.label(), row.run_s));
        self.slowest.sort_by(|a, b| b.1.total_cmp(&a.1));
        self.slowest.truncate(3);
    }

    pub fn text(&self) -> String {
        let counts: Vec<String> = self
            .counts
            .iter()
            .map(|(s, n)| format!("{n} {}", s.as_str()))
            .collect();
        let mut out = format!(
            "{} {} points in {:.1} s: {}{}\n",
            if self.interrupted {
                "interrupted after"
            } else {
                "finished"
            },
            self.counts.values().sum::<usize>(),
            self.wall.as_secs_f64(),
            if counts.is_empty() && self.held > 0 {
                "none combined yet".into()
            } else if counts.is_empty() {
                "nothing to do".into()
            } else {
                counts.join(", ")
            },
            if self.skipped > 0 {
                format!(" ({} already done before)", self.skipped)
            } else {
                String::new()
            }
        );
        out += &self.marked_text();
        if self.held > 0 && self.interrupted {
            out += &format!(
                "recheck: {} point{} had two groups of samples in one process, held in passes/recheck.csv; the run measures {} again when it resumes\n",
                self.held,
                if self.held == 1 { "" } else { "s" },
                if self.held == 1 { "it" } else { "them" },
            );
        } else if self.held > 0 {
            out += &format!(
                "recheck: {} point{} had two groups of samples in one process; {} measured in more processes (the median: passes/recheck.csv)\n",
                self.held,
                if self.held == 1 { "" } else { "s" },
                if self.held == 1 { "it was" } else { "each was" },
            );
        }
        out += &format!(
            "builds: {} compiled, {} from cache\n",
            self.built, self.cached
        );
        if !self.slowest.is_empty() {
            let s: Vec<String> = self
                .slowest
                .iter()
                .map(|(l, t)| format!("{l} ({t:.2} s)"))
                .collect();
            out += &format!("slowest runs: {}\n", s.join("; "));
        }
        out += &format!("results: {}\n", self.csv.display());
        if self.interrupted {
            out += "run the same command again to resume\n";
        }
        out
    }
}

impl Summary {
    /// Per metric, the points its own status marks, and what the words mean: `unstable:
    /// global_all_grid 337, shared_nc_grid 4 (...)`; empty when none is marked.
    fn marked_text(&self) -> String {
        let mut out = String::new();
        for (word, means, pick) in [
            (
                "unstable",
                crate::store::UNSTABLE_MEANS,
                (|m: &(String, usize, usize)| m.2) as fn(&(String, usize, usize)) -> usize,
            ),
            ("noisy", crate::store::NOISY_MEANS, |m| m.1),
        ] {
            let mut counts: Vec<(&str, usize)> = self
                .marked
                .iter()
                .map(|m| (m.0.as_str(), pick(m)))
                .filter(|m| m.1 > 0)
                .collect();
            if counts.is_empty() {
                continue;
            }
            counts.sort_by_key(|c| std::cmp::Reverse(c.1));
            let listed: Vec<String> = counts.iter().map(|(m, n)| format!("{m} {n}")).collect();
            out += &format!(
                "{word} by metric: {} ({word}: {means})\n",
                listed.join(", ")
            );
        }
        out
    }
}

/// The summary listens: `Started` begins a pass's, each `Finished` row counts.
impl Reporter for Summary {
    fn on(&mut self, event: &Event) {
        match event {
            Event::Started {
                run_dir,
                total,
                todo,
                ..
            } => {
                *self = Summary {
                    run_dir: run_dir.to_path_buf(),
                    csv: run_dir.join(crate::store::RESULTS),
                    total: *total,
                    skipped: total.saturating_sub(*todo),
                    ..Summary::default()
                }
            }
            Event::Finished { row, .. } => self.record(row),
            Event::Held { .. } => self.held += 1,
            _ => {}
        }
    }
}

/// Times since the start of a run, in seconds.
#[derive(Clone, Copy)]
pub struct Clock(pub Instant);

impl Clock {
    pub fn now(&self) -> f64 {
        self.0.elapsed().as_secs_f64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_says_held_points_wait_when_the_run_was_interrupted() {
        let mut s = Summary {
            held: 2,
            interrupted: true,
            ..Summary::default()
        };
        let text = s.text();
        assert!(
            text.starts_with("interrupted after 0 points in 0.0 s: none combined yet\n"),
            "{text}"
        );
        assert!(
            text.contains("recheck: 2 points had two groups of samples in one process, held in passes/recheck.csv; the run measures them again when it resumes"),
            "{text}"
        );
        assert!(!text.contains("by metric"), "nothing marked, nothing said");
        s.interrupted = false;
        s.held = 1;
        assert!(s.text().contains(
            "recheck: 1 point had two groups of samples in one process; it was measured in more processes"
        ));
    }

    #[test]
    fn the_summary_counts_unstable_and_noisy_points_per_metric() {
        let mut s = Summary::default();
        let row = |global: Status, shared: Status| Row {
            point: crate::points::Point {
                index: 0,
                id: "p".into(),
                values: vec![],
            },
            status: global.max(shared),
            statuses: [
                ("global_x".to_string(), global),
                ("shared_x".to_string(), shared),
            ]
            .into(),
            values: Default::default(),
            build_s: 0.0,
            run_s: 0.0,
            cached: false,
            gpu: Default::default(),
            error: String::new(),
        };
        s.record(&row(Status::Unstable, Status::Ok));
        s.record(&row(Status::Unstable, Status::Noisy));
        s.record(&row(Status::Ok, Status::Unstable));
        s.record(&row(Status::Unstable, Status::Ok));
        let text = s.text();
        assert!(
            text.starts_with("finished 4 points in 0.0 s: 4 unstable\n"),
            "{text}"
        );
        assert!(
            text.contains("\nunstable by metric: global_x 3, shared_x 1 (unstable: the placements of the kernel's buffers in memory gave values further apart than the target allows)\n"),
            "{text}"
        );
        assert!(
            text.contains("\nnoisy by metric: shared_x 1 (noisy: "),
            "{text}"
        );
    }
}
