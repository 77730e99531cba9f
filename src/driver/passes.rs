//! The passes of a run over its points: `repeat` passes over the sweep, then, with `recheck`, its
//! rounds ([`plan`]). Each pass is set up the same way (its points in their order, the CSVs it
//! appends to, what its runners share) and run the same way: built on `jobs` threads, measured by
//! one runner per GPU (or the host).

use super::builder::Built;
use super::dispatch::{CsvWriter, Dispatch, Rows};
use super::outcome::PointError;
use super::repeat::Aggregator;
use super::runner::{self, Shared};
use super::session::Session;
use super::{idle_gpus_warning, prestart_warning, DriverError};
use crate::events::Event;
use crate::points::{self, Order, Point};
use crate::spec::Spec;
use crate::store::{self, CsvSink};
use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};

/// One pass over the points.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Pass {
    /// Pass `index` of the sweep (of `repeat`).
    Sweep { index: u32 },
    /// A recheck round (from 1): the held points not combined yet, once more each.
    Recheck { round: u32 },
}

/// Added to the run's seed for the shuffle of recheck round r (+ r): apart from the passes' seeds.
const RECHECK_SEED: u64 = 1000;

/// The passes of a run, in order.
pub(super) fn plan(spec: &Spec) -> Vec<Pass> {
    let sweeps = (0..spec.repeat.max(1)).map(|index| Pass::Sweep { index });
    let rounds = if spec.rechecks() { spec.recheck } else { 0 };
    sweeps
        .chain((1..=rounds).map(|round| Pass::Recheck { round }))
        .collect()
}

/// Runs the passes of the plan, in order, until one finds nothing to do or the run is cancelled
/// (checked after each pass: the first one always starts).
pub(super) fn run_all(
    session: &mut Session,
    dispatch: &Mutex<Dispatch>,
    emit: &(dyn Fn(Event) + Sync),
) -> Result<(), DriverError> {
    for (i, pass) in plan(session.spec).into_iter().enumerate() {
        if i > 0 && session.opts.build.cancel.is_cancelled() {
            break;
        }
        let Some(setup) = session.setup(pass)? else {
            break;
        };
        session.run_pass(pass, setup, dispatch, emit)?;
    }
    Ok(())
}

/// A pass ready to run.
pub(super) struct Setup {
    /// Its points, in the order they run.
    todo: Vec<Point>,
    /// The CSVs it appends to.
    csvs: Vec<CsvWriter>,
    /// Its rows combine with earlier processes' (`repeat`'s last pass, the recheck rounds).
    aggregate: Option<Aggregator>,
    /// `recheck`'s first pass: rows whose samples fall into two groups are held.
    hold: bool,
    /// Control re-runs are made.
    controls: bool,
}

impl Session<'_> {
    /// The points, CSVs and rules of `pass`; None when it has nothing to do.
    fn setup(&mut self, pass: Pass) -> Result<Option<Setup>, DriverError> {
        match pass {
            Pass::Sweep { index } => self.setup_sweep(index),
            Pass::Recheck { round } => self.setup_recheck(round),
        }
    }

    fn setup_sweep(&mut self, index: u32) -> Result<Option<Setup>, DriverError> {
        let (spec, header, dialect) = (self.spec, self.header.clone(), self.manifest.dialect);
        let passes = spec.repeat.max(1);
        let last = index + 1 == passes;
        let rechecking = spec.rechecks();
        // The CSVs this pass appends to, and what they already hold.
        let (sink, pass_done, aggregate) = if passes == 1 {
            (self.results.take(), BTreeMap::new(), None)
        } else if !last {
            let path = store::pass_csv(&self.run_dir, index);
            let pass_done = store::read_done(&path, &header)?;
            let s = CsvSink::open(&path, header.clone(), dialect)?;
            (Some(s), pass_done, None)
        } else {
            let agg = Aggregator::open(spec, &self.run_dir, &header, dialect)?;
            (self.results.take(), BTreeMap::new(), Some(agg))
        };
        let Some(sink) = sink else { return Ok(None) };
        let mut csvs = vec![CsvWriter::new(sink, Rows::Points)];
        if aggregate.is_some() {
            let path = store::pass_csv(&self.run_dir, index);
            // Read first, so that a row or header a kill tore is cut before rows are appended.
            store::read_rows(&path, &header)?;
            let raw = CsvSink::open(&path, header.clone(), dialect)?;
            csvs.push(CsvWriter::new(raw, Rows::Raw));
        }
        if rechecking {
            let path = store::recheck_csv(&self.run_dir);
            let raw = CsvSink::open(&path, header.clone(), dialect)?;
            csvs.push(CsvWriter::new(raw, Rows::Raw));
        }
        let controls = passes == 1 && spec.control_every > 0;
        if controls {
            let path = store::RunDir::new(&self.run_dir).controls();
            store::read_rows(&path, &header)?;
            let c = CsvSink::open(&path, header.clone(), dialect)?;
            csvs.push(CsvWriter::new(c, Rows::Controls));
        }
        let mut todo: Vec<Point> = self
            .points
            .iter()
            .filter(|p| {
                let id = &p.id;
                !self.done.contains_key(id)
                    && !pass_done.contains_key(id)
                    && !self.held.contains(id)
            })
            .cloned()
            .collect();
        // Pass 0 in the order asked for; later passes each in a shuffle of their own.
        if index > 0 {
            points::shuffle(&mut todo, self.opts.seed.wrapping_add(index as u64));
        } else if self.opts.order == Order::Shuffled {
            points::shuffle(&mut todo, self.opts.seed);
        }
        Ok(Some(Setup {
            todo,
            csvs,
            aggregate,
            hold: rechecking,
            controls,
        }))
    }

    /// Round `round` measures every held point not combined yet once more, in a fresh process,
    /// in a shuffled order; a point is combined at its `1 + recheck`-th process.
    fn setup_recheck(&mut self, round: u32) -> Result<Option<Setup>, DriverError> {
        let (spec, header, dialect) = (self.spec, self.header.clone(), self.manifest.dialect);
        let agg = Aggregator::open_recheck(spec, &self.run_dir, &header, dialect)?;
        let csv_path = self.csv_path();
        let finished = store::read_done(&csv_path, &header)?;
        let kept: HashSet<&String> = agg.kept().collect();
        let mut todo: Vec<Point> = self
            .points
            .iter()
            .filter(|p| kept.contains(&p.id) && !finished.contains_key(&p.id))
            .cloned()
            .collect();
        if todo.is_empty() {
            return Ok(None);
        }
        let seed = self.opts.seed.wrapping_add(RECHECK_SEED + u64::from(round));
        points::shuffle(&mut todo, seed);
        let results = CsvSink::open(&csv_path, header.clone(), dialect)?;
        let raw = CsvSink::open(&store::recheck_csv(&self.run_dir), header, dialect)?;
        Ok(Some(Setup {
            todo,
            csvs: vec![
                CsvWriter::new(results, Rows::Points),
                CsvWriter::new(raw, Rows::Raw),
            ],
            aggregate: Some(agg),
            hold: false,
            controls: false,
        }))
    }

    /// Runs a pass that is set up: says it starts, builds and measures its points, and closes
    /// its CSVs (a write that failed stops the run here).
    fn run_pass(
        &self,
        pass: Pass,
        setup: Setup,
        dispatch: &Mutex<Dispatch>,
        emit: &(dyn Fn(Event) + Sync),
    ) -> Result<(), DriverError> {
        let (spec, opts, todo) = (self.spec, self.opts, &setup.todo);
        let runners = self.gpus.len().max(1);
        let owner = if runners > 1 {
            points::assign(todo, runners, opts.build.split, &points::x_axis(spec))
        } else {
            vec![0; todo.len()]
        };
        if pass == (Pass::Sweep { index: 0 }) {
            if let Some(w) = idle_gpus_warning(&owner, runners) {
                emit(Event::Warning(&w));
            }
            let prestart = prestart_warning(self.prestart);
            for w in self.prestart_note.iter().chain(prestart.iter()) {
                emit(Event::Warning(w));
            }
        }
        if let Ok(mut d) = dispatch.lock() {
            d.csvs = setup.csvs;
        }
        let gpus: Vec<String> = self
            .gpus
            .iter()
            .map(|g| format!("gpu {} ({})", g.index, g.name))
            .collect();
        let passes = spec.repeat.max(1);
        match pass {
            Pass::Sweep { index } => emit(Event::Started {
                run_dir: &self.run_dir,
                total: self.manifest.points_total,
                todo: todo.len() + self.held.len(),
                resumed: self.resumed,
                jobs: opts.build.jobs,
                gpus: &gpus,
                pass: (passes > 1).then_some((index + 1, passes)),
            }),
            Pass::Recheck { round } => emit(Event::Recheck {
                points: todo.len(),
                round,
                rounds: spec.recheck,
            }),
        }
        let shared = Shared {
            ctx: &self.ctx,
            emit,
            run_dir: self.run_dir.clone(),
            aggregate: setup.aggregate,
            hold: setup.hold,
            controls: setup.controls,
            controls_made: AtomicUsize::new(self.controls_made()),
            halt: &self.halt,
            cancel: &opts.build.cancel,
            rest: self.rest,
        };
        self.execute(&shared, todo, &owner);
        let csvs = dispatch
            .lock()
            .map(|mut d| std::mem::take(&mut d.csvs))
            .unwrap_or_default();
        for csv in csvs {
            csv.finish()?;
        }
        Ok(())
    }

    /// The control re-runs made so far (rows of `controls.csv`): numbers the next one's folder.
    fn controls_made(&self) -> usize {
        std::fs::read_to_string(store::RunDir::new(&self.run_dir).controls())
            .map_or(0, |t| t.lines().count().saturating_sub(1))
    }

    /// Builds `todo` on `jobs` threads and runs it with one runner per GPU (or the host), each
    /// point going to the runner `owner` names; rows go out through `shared`.
    fn execute(&self, shared: &Shared, todo: &[Point], owner: &[usize]) {
        let (ctx, emit, cancel) = (shared.ctx, shared.emit, shared.cancel);
        let runners = self.gpus.len().max(1);
        let plan = Schedule::new(owner, runners);
        let next_build = AtomicUsize::new(0);
        let (senders, receivers): (Vec<_>, Vec<_>) = (0..runners)
            .map(|_| mpsc::channel::<(usize, Built)>())
            .unzip();
        std::thread::scope(|s| {
            // No more build threads than points: `-j 1000000` spent 37 s making threads that
            // found nothing to build (`-j 1000000000` hours).
            // A thread that cannot be started (EAGAIN under a memory or process limit): fewer
            // build threads do the builds; with no build thread or a runner short, the run stops
            // as for any want of resources (exit 4, resume it), before it records a point.
            let no_thread = |e: std::io::Error, what: &str| {
                if let Some(point) = todo.first() {
                    let e = PointError::Start(crate::exec::ExecError::Spawn {
                        line: format!("{what} of sweep's"),
                        source: e,
                    });
                    shared.halt.stop(point, std::sync::Arc::new(e), cancel);
                }
            };
            for k in 0..self.opts.build.jobs.clamp(1, todo.len().max(1)) {
                let senders = senders.clone();
                let (plan, next_build) = (&plan, &next_build);
                let spawned = std::thread::Builder::new().spawn_scoped(s, move || loop {
                    if cancel.is_cancelled() {
                        break;
                    }
                    let k = next_build.fetch_add(1, Ordering::SeqCst);
                    let Some(&i) = plan.build_order.get(k) else {
                        break;
                    };
                    let point = todo[i].clone();
                    let dir = store::RunDir::new(&shared.run_dir).point(&point.id);
                    let built = ctx.build(point, dir);
                    emit(Event::Built {
                        point: &built.point,
                        cached: built.cached,
                        failed: built.binary.is_err(),
                        started: built.started,
                        ended: built.ended,
                    });
                    if senders[owner[i]].send((plan.position[i], built)).is_err() {
                        break;
                    }
                });
                if let Err(e) = spawned {
                    if k == 0 {
                        no_thread(e, "a build thread");
                    }
                    break;
                }
            }
            drop(senders);
            for (r, rx) in receivers.into_iter().enumerate() {
                let (count, gpu) = (plan.queues[r].len(), self.gpus.get(r).cloned());
                let prestart = self.prestart;
                let spawned = std::thread::Builder::new()
                    .spawn_scoped(s, move || runner::measure(shared, count, rx, gpu, prestart));
                if let Err(e) = spawned {
                    no_thread(e, "a runner thread");
                }
            }
        });
    }
}

/// Which runner runs which point, and in what order the points are built.
struct Schedule {
    /// Each runner's points (indices into the to-do list), in its run order.
    queues: Vec<Vec<usize>>,
    /// Builds are dealt round-robin across the runners' queues, so every runner's next point is
    /// built early.
    build_order: Vec<usize>,
    /// A point's position in its runner's queue.
    position: Vec<usize>,
}

impl Schedule {
    fn new(owner: &[usize], runners: usize) -> Schedule {
        let queues: Vec<Vec<usize>> = (0..runners)
            .map(|r| (0..owner.len()).filter(|&i| owner[i] == r).collect())
            .collect();
        let mut build_order = Vec::with_capacity(owner.len());
        let mut position = vec![0; owner.len()];
        for k in 0..queues.iter().map(Vec::len).max().unwrap_or(0) {
            for q in &queues {
                if let Some(&i) = q.get(k) {
                    build_order.push(i);
                    position[i] = k;
                }
            }
        }
        Schedule {
            queues,
            build_order,
            position,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_deals_builds_round_robin_over_the_runners_queues() {
        let owner = [0, 0, 1, 0, 1];
        let s = Schedule::new(&owner, 2);
        assert_eq!(s.queues, vec![vec![0, 1, 3], vec![2, 4]]);
        assert_eq!(s.build_order, vec![0, 2, 1, 4, 3]);
        assert_eq!(s.position, vec![0, 1, 0, 2, 1]);
    }

    #[test]
    fn the_plan_is_the_repeat_passes_then_the_recheck_rounds() {
        let spec = |extra: &str| {
            Spec::parse(
                std::path::Path::new("t.toml"),
                &format!("bench = \"b\"\ncompiler = \"cc\"\n{extra}[[axis]]\nname = \"k\"\nrange = [1, 2]\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n"),
            )
            .unwrap()
        };
        assert_eq!(plan(&spec("recheck = 0\n")), [Pass::Sweep { index: 0 }]);
        assert_eq!(
            plan(&spec("repeat = 3\n")),
            [0, 1, 2].map(|index| Pass::Sweep { index })
        );
        assert_eq!(
            plan(&spec("recheck = 2\n")),
            [
                Pass::Sweep { index: 0 },
                Pass::Recheck { round: 1 },
                Pass::Recheck { round: 2 }
            ]
        );
    }
}
