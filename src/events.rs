//! Events the driver emits, and the reporters that listen: what the terminal shows
//! ([`terminal::Terminal`]: a line per point, the closing summary) and the summary's counts.
//! Reporters never drive; nothing else writes to the terminal during a run.

use crate::analyze::Analysis;
use crate::points::Point;
use crate::store::{Row, Status};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub mod closing;
pub mod marks;
pub mod terminal;

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
    /// After the run: the analysis of its results (what the closing summary names per series).
    Analyzed(&'a Analysis),
    /// After the run: a file its end wrote (analysis, charts, exports).
    Wrote(&'a Path),
    /// After the run: something worth a line that is not a warning.
    Note(&'a str),
    /// Everything the command does is done: the closing summary.
    Done {
        summary: &'a Summary,
    },
}

pub trait Reporter: Send {
    fn on(&mut self, event: &Event);
}

/// What a run did, for the summary at its end.
#[derive(Debug, Default)]
pub struct Summary {
    pub run_dir: PathBuf,
    pub csv: PathBuf,
    pub total: usize,
    pub skipped: usize,
    /// Of the points done before this run resumed, those that failed: their rows are in the CSV
    /// too, so the run's exit code counts them.
    pub failed_before: usize,
    pub counts: BTreeMap<Status, usize>,
    /// The values of the rows (points × metrics) and those their own status marks, by cause
    /// ([`marks`]: placement, processes, noisy).
    pub marks: marks::Tally,
    /// The run's confidence target (`[timing] target_rel_ci`), which tells placement from
    /// processes where both were measured; `None`: the timing core's default.
    pub target_rel_ci: Option<f64>,
    /// `recheck`: points held for more processes because their samples fell into two groups.
    pub held: usize,
    /// `repeat` > 1: the pass this summary is of, and the passes (from 1).
    pub pass: Option<(u32, u32)>,
    /// `repeat` > 1: the processes this command ran in the passes before this one (a summary
    /// is of its pass; the command's line counts them all: review 20b F2).
    pub earlier_processes: usize,
    /// The points this command built, over its passes: whether the compiler ran for each (`true`)
    /// or every build of it came from the cache. From the `Built` events, not the rows: a
    /// `repeat` row combines the processes of earlier commands too (review 21 F1: a resume whose
    /// builds all came from the cache said "11 compiled").
    pub builds: BTreeMap<String, bool>,
    /// The slowest processes of this command (label, seconds of one process), slowest first, a
    /// point once: a `repeat` row's `run_s` sums its processes' (review 21 F2).
    pub slowest: Vec<(String, f64)>,
    /// One process's `run_s` of the points whose combined row (`Finished`) is still to come.
    pub raw_run_s: BTreeMap<String, f64>,
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

    /// Points measured (`ok`, `noisy` or `unstable` in the CSV): marked values are measured too.
    pub fn measured(&self) -> usize {
        self.counts
            .iter()
            .filter(|(s, _)| s.measured())
            .map(|(_, n)| n)
            .sum()
    }

    /// The run's confidence target.
    pub fn target(&self) -> f64 {
        self.target_rel_ci
            .unwrap_or(crate::spec::DEFAULT_TARGET_REL_CI)
    }

    /// Points this command compiled (a failed build ran the compiler too).
    pub fn compiled(&self) -> usize {
        self.builds.values().filter(|c| **c).count()
    }

    /// Points whose every build of this command came from the cache.
    pub fn from_cache(&self) -> usize {
        self.builds.values().filter(|c| !**c).count()
    }

    /// A point built: compiled, or from the cache.
    pub fn built(&mut self, point: &str, cached: bool) {
        *self.builds.entry(point.to_string()).or_default() |= !cached;
    }

    pub fn record(&mut self, row: &Row) {
        *self.counts.entry(row.status).or_default() += 1;
        self.marks.add_row(row, self.target());
        let run_s = self.raw_run_s.remove(&row.point.id).unwrap_or(row.run_s);
        self.process_took(row.point.label(), run_s);
    }

    /// One process of a point took `run_s`: kept among the slowest three, a point once.
    fn process_took(&mut self, label: String, run_s: f64) {
        match self.slowest.iter_mut().find(|(l, _)| *l == label) {
            Some(slow) => slow.1 = slow.1.max(run_s),
            None => self.slowest.push((label, run_s)),
        }
        self.slowest.sort_by(|a, b| b.1.total_cmp(&a.1));
        self.slowest.truncate(3);
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
                pass,
                ..
            } => {
                let later = matches!(pass, Some((p, _)) if *p > 1);
                let earlier_processes = match later {
                    true => self.earlier_processes + self.counts.values().sum::<usize>(),
                    false => 0,
                };
                // A later pass is of the same command: its builds and slowest processes go on.
                let (builds, slowest) = match later {
                    true => (
                        std::mem::take(&mut self.builds),
                        std::mem::take(&mut self.slowest),
                    ),
                    false => Default::default(),
                };
                *self = Summary {
                    earlier_processes,
                    builds,
                    slowest,
                    run_dir: run_dir.to_path_buf(),
                    csv: crate::store::RunDir::new(run_dir).results(),
                    total: *total,
                    skipped: total.saturating_sub(*todo),
                    pass: *pass,
                    target_rel_ci: Some(crate::store::target_rel_ci(run_dir)),
                    ..Summary::default()
                }
            }
            Event::Built { point, cached, .. } => self.built(&point.id, *cached),
            Event::Raw { row } => {
                self.raw_run_s.insert(row.point.id.clone(), row.run_s);
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
