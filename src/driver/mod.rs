//! The driver: the only code that knows the order of the stages.
//!
//! Builds run on `jobs` threads, always ahead; each GPU has one runner that takes its points
//! strictly one at a time, in its order, as soon as each is built. Builds never wait for runs.

mod builder;
mod dispatch;
mod outcome;
mod recheck;
mod repeat;
mod resume;
mod runner;

pub use builder::{build_only, sample, BuildReport};
use builder::{BuildCtx, Built};
use dispatch::{CsvWriter, Dispatch, Rows};
pub use outcome::PointError;
use resume::{lock_run, pick_run_dir};
use runner::Shared;

use crate::compile::{self, Toolchain};
use crate::events::{Event, Reporter, Summary};
use crate::gpu::{self, HeldLock};
use crate::points::{self, Order, Point, Shard, Split};
use crate::render::{self, Bench, RenderError};
use crate::spec::Spec;
use crate::store::{self, CsvSink, Dialect, GpuState, Manifest};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;

/// Set by the first Ctrl-C: no new build or run starts; the current points finish and are written.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// The first failure that stops a run (a file of its own could not be written), and its point.
#[derive(Default)]
pub(super) struct Halt(Mutex<Option<(Point, Arc<PointError>)>>);

impl Halt {
    /// Stops the run: no new build or run starts, and the run ends with this error.
    pub(super) fn stop(&self, point: &Point, e: Arc<PointError>) {
        if let Ok(mut h) = self.0.lock() {
            h.get_or_insert_with(|| (point.clone(), e));
        }
        STOP.store(true, Ordering::SeqCst);
    }

    fn take(&self) -> Option<(Point, Arc<PointError>)> {
        self.0.lock().ok().and_then(|mut h| h.take())
    }
}

/// The run folder `run` is working in, for [`mark_interrupted`].
static ACTIVE_RUN: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Writes `interrupted` into the manifest of the run in progress: for a second Ctrl-C or SIGTERM,
/// which ends sweep at once, before the driver can say so itself.
pub fn mark_interrupted() {
    let dir = ACTIVE_RUN.lock().ok().and_then(|d| d.clone());
    if let Some(dir) = dir {
        if let Ok(mut m) = Manifest::load(&dir) {
            if m.state == store::RunState::Running {
                m.state = store::RunState::Interrupted;
                let _ = m.save(&dir);
            }
        }
    }
}

#[derive(Clone, Debug)]
pub struct Options {
    pub output: PathBuf,
    pub cache: PathBuf,
    pub jobs: usize,
    /// The CSV dialect of a new run; `None`: comma, or the dialect of the run resumed.
    pub dialect: Option<Dialect>,
    pub order: Order,
    pub seed: u64,
    pub shard: Option<Shard>,
    pub split: Split,
    pub gpus: Option<gpu::GpuChoice>,
    pub wait_lock: bool,
    pub force: bool,
    pub resume: Option<PathBuf>,
    pub command: Vec<String>,
    /// How many GPU programs each runner starts ahead while the current one measures; each waits
    /// at its start gate (after creating its CUDA context) until the GPU is free. 0 = none.
    pub prestart: usize,
}

/// GPU programs started ahead per runner by default (`--prestart`): none. With one started ahead
/// (waiting at its gate while the current one measures) shared_nc_grid at 258-290 threads lost
/// 8 % at 1-8 points in 17 of 19 band sweeps on H100 hosts (counting those with a process kept
/// beside), and 1 point in 1 of 9 without (bench/band.txt). What governs it is how long the GPU
/// idles between measurements (~40 ms with prestart, ~250 ms without), so the start-up time this
/// default costs is also what keeps the numbers clean; clock retries and the session lock did not help.
pub const DEFAULT_PRESTART: usize = 0;

#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    #[error(transparent)]
    Points(#[from] points::PointsError),
    #[error(transparent)]
    Render(#[from] RenderError),
    #[error(transparent)]
    Compile(#[from] compile::CompileError),
    #[error(transparent)]
    Store(#[from] store::StoreError),
    /// `[profile]` counters are asked for and there is no ncu to count them.
    #[error("`[profile]` asks for counters: {0}")]
    NoNcu(#[from] crate::profile::ncu::LocateError),
    #[error("no GPU visible: `nvidia-smi` lists none (hint: `sweep build` compiles without a GPU; set `gpu = false` in the spec for a host program)")]
    NoGpu,
    #[error(transparent)]
    Gpu(#[from] gpu::SelectError),
    /// A GPU's lock file cannot be made or read.
    #[error(transparent)]
    GpuLock(gpu::LockError),
    #[error(
        "gpu {gpu} is in use by another sweep ({holder}) (hint: --wait-lock to queue behind it)"
    )]
    Locked { gpu: String, holder: String },
    #[error("the spec changed since the unfinished run `{dir}` started: {changes} differ (hint: --force starts a new run)")]
    SpecChanged { dir: String, changes: String },
    #[error("`{dir}` is not a run folder of this spec: {source}")]
    BadResume {
        dir: String,
        #[source]
        source: store::StoreError,
    },
    #[error("the unfinished run `{dir}` was started by an older sweep, whose point ids lack the `p` prefix; this version cannot resume it (hint: --force starts a new run)")]
    OldIds { dir: String },
    #[error("the unfinished run `{dir}` writes the {theirs} CSV dialect; --csv-dialect {asked} would mix two dialects in one results.csv (hint: resume without --csv-dialect, and `sweep export RUN --format csv --dialect {asked}` when it ends)")]
    DialectDiffers {
        dir: String,
        theirs: &'static str,
        asked: &'static str,
    },
    #[error("the run `{dir}` is in use by another sweep (hint: wait for it to end; its results.csv grows as it runs)")]
    RunInUse { dir: String },
    /// A file of the run's own could not be written (disk full, read-only): the run stopped
    /// before recording the point, and its manifest says `interrupted`.
    #[error("point {point}: {source} (hint: nothing was recorded for it; make room, then `sweep resume {run_dir}` measures it and the rest)")]
    Stopped {
        point: String,
        run_dir: String,
        #[source]
        source: Arc<PointError>,
    },
}

impl DriverError {
    /// Whether the environment, not the input, is at fault: no GPU, a lock held by another sweep,
    /// no compiler, or a file of sweep's own that cannot be written.
    pub fn environment(&self) -> bool {
        matches!(
            self,
            DriverError::NoGpu
                | DriverError::Gpu(_)
                | DriverError::GpuLock(_)
                | DriverError::Locked { .. }
                | DriverError::RunInUse { .. }
                | DriverError::Compile(_)
                | DriverError::NoNcu(_)
                | DriverError::Stopped { .. }
                | DriverError::Store(store::StoreError::Write { .. })
        )
    }
}

/// The GPUs a run uses, locked; or none for a host program.
fn claim_gpus(
    spec: &Spec,
    opts: &Options,
    holder: &str,
) -> Result<(Vec<GpuState>, Vec<HeldLock>), DriverError> {
    if !spec.gpu {
        return Ok((vec![], vec![]));
    }
    let all = gpu::list();
    if all.is_empty() {
        return Err(DriverError::NoGpu);
    }
    let chosen = gpu::select(&all, opts.gpus.as_ref())?;
    if chosen.is_empty() {
        return Err(DriverError::NoGpu);
    }
    let mut locks = Vec::new();
    for g in &chosen {
        let lock =
            gpu::lock(&gpu::lock_dir(), &g.uuid, holder, opts.wait_lock).map_err(|e| match e {
                gpu::LockError::Held { holder, .. } => DriverError::Locked {
                    gpu: format!("{} ({})", g.index, g.name),
                    holder: if holder.is_empty() {
                        "unknown".into()
                    } else {
                        holder
                    },
                },
                e @ gpu::LockError::Io { .. } => DriverError::GpuLock(e),
            })?;
        locks.push(lock);
    }
    Ok((chosen, locks))
}

pub fn host() -> String {
    crate::exec::query("hostname", &[])
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

pub fn git_commit(dir: &Path) -> String {
    crate::exec::query(
        "git",
        &["-C", &dir.display().to_string(), "rev-parse", "HEAD"],
    )
    .map(|h| h.trim().to_string())
    .unwrap_or_default()
}

/// Whether the tracked files of the bench — its folder and `cuda/common/` (the timing core goes
/// into every binary) — differ from the commit `git_commit` names (None outside a git work tree).
pub fn git_dirty(bench: &Bench) -> Option<bool> {
    let dir = bench.dir.display().to_string();
    let common: Vec<String> = bench
        .common
        .iter()
        .map(|c| c.display().to_string())
        .collect();
    let mut args = vec![
        "-C",
        &dir,
        "status",
        "--porcelain",
        "--untracked-files=no",
        "--",
        ".",
    ];
    args.extend(common.iter().map(String::as_str));
    let status = crate::exec::query("git", &args)?;
    Some(!status.trim().is_empty())
}

/// The points of a spec after `--shard` (what `plan` lists and `run` runs).
pub fn plan(spec: &Spec, shard: Option<Shard>, split: Split) -> Result<Vec<Point>, DriverError> {
    let all = points::expand(spec)?;
    Ok(match shard {
        Some(s) => points::shard(all, s, split, &points::x_axis(spec)),
        None => all,
    })
}

/// Checks that every template renders for the first point, before anything is built.
fn preflight(spec: &Spec, bench: &Bench, points: &[Point]) -> Result<(), DriverError> {
    if let Some(p) = points.first() {
        render::render(bench, spec, p)?;
    }
    Ok(())
}

/// `sweep run` and `sweep resume`: builds and measures every point of the spec that its run
/// folder does not hold yet; the summary is its last pass's.
pub fn run_sweep(
    spec: &Spec,
    opts: &Options,
    reporter: &mut dyn Reporter,
) -> Result<Summary, DriverError> {
    let wall = Instant::now();
    let points = plan(spec, opts.shard, opts.split)?;
    let bench = Bench::locate(spec)?;
    preflight(spec, &bench, &points)?;
    // `[profile]` counters were asked for: without ncu every row would lack them.
    if spec
        .profile
        .as_ref()
        .is_some_and(|p| !p.counters.is_empty())
    {
        crate::profile::ncu::locate()?;
    }
    let holder = format!("pid {} on {}", std::process::id(), host());
    let (gpus, _locks) = claim_gpus(spec, opts, &holder)?;
    let toolchain = Toolchain::find(spec, gpus.first().and_then(gpu::arch_of))?;
    let resume_dir = pick_run_dir(spec, opts)?;
    let resumed = resume_dir.is_some();
    let header = store::header(spec);
    let now = || chrono::Utc::now().to_rfc3339();
    let mut manifest = match &resume_dir {
        Some(dir) => Manifest::load(dir)?,
        None => Manifest {
            sweep: spec.name.clone(),
            spec_path: spec.path.display().to_string(),
            cwd: std::env::current_dir()
                .map(|d| d.display().to_string())
                .unwrap_or_default(),
            spec_hash: spec.hash.clone(),
            spec: spec.text.clone(),
            bench: spec.bench.clone(),
            axes: spec.axis_names(),
            metrics: spec
                .metrics
                .iter()
                .map(|m| store::MetricInfo {
                    name: m.name.clone(),
                    unit: m.unit.clone(),
                    column: m.column(),
                    better: m.better.map(|b| b.as_str().to_string()),
                    model: m.model.map(|m| m.to_string()),
                })
                .collect(),
            columns: header.clone(),
            points_total: points.len(),
            point_ids: points.iter().map(|p| p.id.clone()).collect(),
            shard: opts.shard.map(|s| format!("{}/{}", s.index, s.count)),
            split: Some(opts.split),
            order: Some(opts.order),
            seed: opts.seed,
            host: host(),
            git_commit: git_commit(&bench.dir),
            git_dirty: git_dirty(&bench),
            sweep_version: Some(store::manifest::SWEEP_VERSION.into()),
            sweep_commit: Some(store::manifest::SWEEP_COMMIT.into()),
            started: now(),
            state: store::RunState::Running,
            dialect: opts.dialect.unwrap_or_default(),
            overrides: spec.overrides.clone(),
            ..Manifest::default()
        },
    };
    let run_dir = match resume_dir {
        Some(dir) => {
            manifest.resumed.push(now());
            dir
        }
        None => {
            let suffix = opts
                .shard
                .map(|s| format!("-shard-{}-of-{}", s.index, s.count))
                .unwrap_or_default();
            store::new_run_dir(&opts.output, &spec.name, &suffix, &manifest)?
        }
    };
    // One sweep at a time per run folder: two would append to one results.csv.
    let _run_lock = lock_run(&run_dir, &holder)?;
    if let Ok(mut active) = ACTIVE_RUN.lock() {
        *active = Some(run_dir.clone());
    }
    let csv_path = run_dir.join(store::RESULTS);
    let done = store::read_done(&csv_path, &header)?;
    let sink = CsvSink::open(&csv_path, header.clone(), manifest.dialect)?;
    manifest.state = store::RunState::Running;
    manifest.finished = None;
    let (prestart, prestart_note) = keep_prestart(manifest.prestart, resumed, opts.prestart);
    manifest.prestart = Some(prestart);
    manifest.jobs = opts.jobs;
    manifest.command = opts.command.clone();
    manifest.compiler = toolchain.compiler.clone();
    manifest.compiler_version = toolchain.version.clone();
    manifest.arch = toolchain.arch.clone();
    manifest.gpus_start = gpus.clone();
    manifest.save(&run_dir)?;
    // Room for the manifest at the run's end, however full the disk gets meanwhile: its text now
    // and a timeline entry per point.
    let reserve_bytes = serde_json::to_vec_pretty(&manifest).map_or(0, |t| t.len()) as u64
        + 512 * points.len() as u64
        + 64 * 1024;
    let reserve = match store::space::Reserve::make(&run_dir, reserve_bytes) {
        Ok(r) => r,
        Err(e) => {
            manifest.state = store::RunState::Interrupted;
            let _ = manifest.save(&run_dir);
            return Err(store::StoreError::Write {
                path: run_dir.join(store::space::RESERVE),
                cause: e.into(),
            }
            .into());
        }
    };
    let halt = Halt::default();

    let gpu_names: Vec<String> = gpus
        .iter()
        .map(|g| format!("gpu {} ({})", g.index, g.name))
        .collect();
    // Every event goes to the CSV, summary, timeline and reporter listeners in turn; a row the
    // CSV could not take stops the sweep.
    let dispatch = Mutex::new(Dispatch::new(reporter));
    let emit = |e: Event| {
        if let Ok(mut d) = dispatch.lock() {
            if !d.on(&e) {
                STOP.store(true, Ordering::SeqCst);
            }
        }
    };
    let ctx = BuildCtx::new(spec, bench, toolchain, &opts.cache);
    let runners = gpus.len().max(1);
    let passes = spec.repeat.max(1);
    // `recheck` (one pass only): points whose samples fell into two groups are held in
    // passes/recheck.csv and measured in more processes after the pass (src/driver/recheck.rs).
    let rechecking = spec.rechecks();
    if passes > 1 || rechecking {
        std::fs::create_dir_all(run_dir.join("passes")).map_err(|e| store::StoreError::Write {
            path: run_dir.join("passes"),
            cause: e.into(),
        })?;
    }
    let recheck_path = store::recheck_csv(&run_dir);
    // Held points not combined yet (a resumed run's): pass 0 leaves them to the recheck rounds.
    // (Reading it also cuts a row a kill tore, before pass 0 appends to it.)
    let held: HashSet<String> = if rechecking {
        store::read_rows(&recheck_path, &header)?
            .into_iter()
            .filter_map(|f| f.into_iter().next())
            .filter(|id| !done.contains_key(id))
            .collect()
    } else {
        HashSet::new()
    };
    let run_pass = |pass: Pass, todo: &[Point], csvs: Vec<CsvWriter>, shared: Shared| {
        let owner = if runners > 1 {
            points::assign(todo, runners, opts.split, &points::x_axis(spec))
        } else {
            vec![0; todo.len()]
        };
        if let Pass::Sweep { index: 0, .. } = pass {
            if let Some(w) = idle_gpus_warning(&owner, runners) {
                emit(Event::Warning(&w));
            }
            for w in prestart_note
                .iter()
                .chain(prestart_warning(prestart).iter())
            {
                emit(Event::Warning(w));
            }
        }
        if let Ok(mut d) = dispatch.lock() {
            d.csvs = csvs;
        }
        match pass {
            Pass::Sweep { index, held } => emit(Event::Started {
                run_dir: &run_dir,
                total: manifest.points_total,
                todo: todo.len() + held,
                resumed,
                jobs: opts.jobs,
                gpus: &gpu_names,
                pass: (passes > 1).then_some((index + 1, passes)),
            }),
            Pass::Recheck { round } => emit(Event::Recheck {
                points: todo.len(),
                round,
                rounds: spec.recheck,
            }),
        }
        execute(&shared, todo, &owner, runners, &gpus, opts, prestart);
        let csvs = dispatch
            .lock()
            .map(|mut d| std::mem::take(&mut d.csvs))
            .unwrap_or_default();
        for csv in csvs {
            csv.finish()?;
        }
        Ok::<(), DriverError>(())
    };
    let controls_made = || {
        std::sync::atomic::AtomicUsize::new(
            std::fs::read_to_string(run_dir.join(store::CONTROLS))
                .map_or(0, |t| t.lines().count().saturating_sub(1)),
        )
    };
    let mut sink = Some(sink);
    let passes_run = (|| -> Result<(), DriverError> {
        for pass in 0..passes {
            let last = pass + 1 == passes;
            // The CSVs this pass appends to, and what they already hold.
            let (pass_sink, pass_done, aggregate) = if passes == 1 {
                (sink.take(), BTreeMap::new(), None)
            } else if !last {
                let path = store::pass_csv(&run_dir, pass);
                let pass_done = store::read_done(&path, &header)?;
                let s = CsvSink::open(&path, header.clone(), manifest.dialect)?;
                (Some(s), pass_done, None)
            } else {
                let agg = repeat::Aggregator::open(spec, &run_dir, &header, manifest.dialect)?;
                (sink.take(), BTreeMap::new(), Some(agg))
            };
            let Some(pass_sink) = pass_sink else { break };
            let mut csvs = vec![CsvWriter::new(pass_sink, Rows::Points)];
            if aggregate.is_some() {
                let path = store::pass_csv(&run_dir, pass);
                // Read first, so that a row or header a kill tore is cut before rows are appended.
                store::read_rows(&path, &header)?;
                let raw = CsvSink::open(&path, header.clone(), manifest.dialect)?;
                csvs.push(CsvWriter::new(raw, Rows::Raw));
            }
            if rechecking {
                let raw = CsvSink::open(&recheck_path, header.clone(), manifest.dialect)?;
                csvs.push(CsvWriter::new(raw, Rows::Raw));
            }
            let controls = passes == 1 && spec.control_every > 0;
            if controls {
                let path = run_dir.join(store::CONTROLS);
                store::read_rows(&path, &header)?;
                let c = CsvSink::open(&path, header.clone(), manifest.dialect)?;
                csvs.push(CsvWriter::new(c, Rows::Controls));
            }
            let mut todo: Vec<Point> = points
                .iter()
                .filter(|p| {
                    !done.contains_key(&p.id)
                        && !pass_done.contains_key(&p.id)
                        && !held.contains(&p.id)
                })
                .cloned()
                .collect();
            // Pass 0 in the order asked for; later passes each in a shuffle of their own.
            if pass > 0 {
                points::shuffle(&mut todo, opts.seed.wrapping_add(pass as u64));
            } else if opts.order == Order::Shuffled {
                points::shuffle(&mut todo, opts.seed);
            }
            let shared = Shared {
                ctx: &ctx,
                emit: &emit,
                run_dir: run_dir.clone(),
                aggregate,
                hold: rechecking,
                controls_made: controls_made(),
                controls,
                halt: &halt,
            };
            let pass = Pass::Sweep {
                index: pass,
                held: held.len(),
            };
            run_pass(pass, &todo, csvs, shared)?;
            if STOP.load(Ordering::SeqCst) {
                break;
            }
        }
        // The recheck rounds: each measures every held point not combined yet once more, in a fresh
        // process, in a shuffled order; a point is combined at its `1 + recheck`-th process.
        for round in 1..=spec.recheck {
            if !rechecking || STOP.load(Ordering::SeqCst) {
                break;
            }
            let agg = repeat::Aggregator::open_recheck(spec, &run_dir, &header, manifest.dialect)?;
            let finished = store::read_done(&csv_path, &header)?;
            let kept: HashSet<&String> = agg.kept().collect();
            let mut todo: Vec<Point> = points
                .iter()
                .filter(|p| kept.contains(&p.id) && !finished.contains_key(&p.id))
                .cloned()
                .collect();
            if todo.is_empty() {
                break;
            }
            points::shuffle(
                &mut todo,
                opts.seed.wrapping_add(RECHECK_SEED + u64::from(round)),
            );
            let results = CsvSink::open(&csv_path, header.clone(), manifest.dialect)?;
            let raw = CsvSink::open(&recheck_path, header.clone(), manifest.dialect)?;
            let csvs = vec![
                CsvWriter::new(results, Rows::Points),
                CsvWriter::new(raw, Rows::Raw),
            ];
            let shared = Shared {
                ctx: &ctx,
                emit: &emit,
                run_dir: run_dir.clone(),
                aggregate: Some(agg),
                hold: false,
                controls_made: controls_made(),
                controls: false,
                halt: &halt,
            };
            run_pass(Pass::Recheck { round }, &todo, csvs, shared)?;
        }
        Ok(())
    })();
    let stopped = halt.take().map(|(point, source)| DriverError::Stopped {
        point: point.label(),
        run_dir: run_dir.display().to_string(),
        source,
    });
    let mut dispatch = dispatch.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = stopped.or(passes_run.err()) {
        // The run stops here: its manifest says so, in the room the reserve kept for it.
        drop(reserve);
        manifest.state = store::RunState::Interrupted;
        manifest.timeline.append(&mut dispatch.timeline.entries);
        let _ = manifest.save(&run_dir);
        return Err(e);
    }
    let mut summary = std::mem::take(&mut dispatch.summary);
    let finished_ids: HashSet<String> = store::read_done(&csv_path, &header)?.into_keys().collect();
    let complete = manifest
        .point_ids
        .iter()
        .all(|id| finished_ids.contains(id));
    summary.interrupted = !complete;
    summary.wall = wall.elapsed();
    manifest.state = if complete {
        store::RunState::Finished
    } else {
        store::RunState::Interrupted
    };
    manifest.finished = complete.then(now);
    manifest.gpus_end = if spec.gpu {
        let now_gpus = gpu::list();
        gpus.iter()
            .filter_map(|g| now_gpus.iter().find(|n| n.uuid == g.uuid).cloned())
            .collect()
    } else {
        vec![]
    };
    manifest.counts = count_statuses(&csv_path, &header);
    let failed_in_csv: usize = manifest
        .counts
        .iter()
        .filter(|(s, _)| store::Status::parse(s).is_some_and(|s| !s.measured()))
        .map(|(_, n)| n)
        .sum();
    summary.failed_before = failed_in_csv.saturating_sub(summary.failed());
    manifest.timeline.append(&mut dispatch.timeline.entries);
    drop(reserve);
    manifest.save(&run_dir)?;
    dispatch.on(&Event::RunFinished { summary: &summary });
    Ok(summary)
}

/// Which pass over the points [`run_sweep`] starts.
#[derive(Clone, Copy)]
enum Pass {
    /// Pass `index` of the sweep (of `repeat`), with `held` points waiting for the recheck rounds.
    Sweep { index: u32, held: usize },
    /// A recheck round (from 1).
    Recheck { round: u32 },
}

/// Added to the run's seed for the shuffle of recheck round r (+ r): apart from the passes' seeds.
const RECHECK_SEED: u64 = 1000;

/// Builds `todo` on `opts.jobs` threads and runs it with one runner per GPU (or the host), each
/// point going to the runner `owner` names; rows go to `shared`'s sink.
fn execute(
    shared: &Shared,
    todo: &[Point],
    owner: &[usize],
    runners: usize,
    gpus: &[GpuState],
    opts: &Options,
    prestart: usize,
) {
    let (ctx, emit, run_dir) = (shared.ctx, shared.emit, &shared.run_dir);
    let plan = Schedule::new(owner, runners);
    let next_build = AtomicUsize::new(0);
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..runners)
        .map(|_| mpsc::channel::<(usize, Built)>())
        .unzip();
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.max(1) {
            let senders = senders.clone();
            let (plan, next_build) = (&plan, &next_build);
            s.spawn(move || loop {
                if STOP.load(Ordering::SeqCst) {
                    break;
                }
                let k = next_build.fetch_add(1, Ordering::SeqCst);
                let Some(&i) = plan.build_order.get(k) else {
                    break;
                };
                let point = todo[i].clone();
                let dir = run_dir.join(store::POINTS).join(&point.id);
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
        }
        drop(senders);
        for (r, rx) in receivers.into_iter().enumerate() {
            let (count, gpu) = (plan.queues[r].len(), gpus.get(r).cloned());
            s.spawn(move || runner::measure(shared, count, rx, gpu, prestart));
        }
    });
}

/// The prestart a run measures with: a resumed run keeps the one its manifest holds, so that all
/// its points are measured in one pattern (a program waiting at its gate beside a measurement
/// moved values by 8 % on some H100s); a note when that overrides the command line, or when an
/// older manifest does not say.
fn keep_prestart(recorded: Option<usize>, resumed: bool, asked: usize) -> (usize, Option<String>) {
    match recorded {
        Some(p) if resumed && p != asked => (
            p,
            Some(format!(
                "this run started with `--prestart {p}`: its remaining points run with it too, not with {asked} (hint: `--output` another folder starts a new run)"
            )),
        ),
        Some(p) if resumed => (p, None),
        None if resumed => (
            asked,
            Some(format!(
                "this run's manifest does not say how many programs its first points started ahead (runs before 2026-11-25: 1 by default); the remaining points run with `--prestart {asked}`"
            )),
        ),
        _ => (asked, None),
    }
}

/// Says what programs started ahead may cost: a one-line reminder whenever a run uses them.
fn prestart_warning(prestart: usize) -> Option<String> {
    (prestart > 0).then(|| {
        format!(
            "`--prestart {prestart}`: a program waits at its gate beside each measurement, which moved some values by 8 % on some H100s (bench/band.txt) (hint: without it, the default, each program starts after the previous one ended)"
        )
    })
}

/// Says so when some GPUs get no point: fewer series than GPUs under `--split series`.
fn idle_gpus_warning(owner: &[usize], runners: usize) -> Option<String> {
    let used: HashSet<usize> = owner.iter().copied().collect();
    (runners > 1 && !owner.is_empty() && used.len() < runners).then(|| {
        format!(
            "only {n} of {runners} GPUs get points: `--split series` keeps each series on one GPU and this sweep has {n} series (hint: `--split points` spreads the points)",
            n = used.len()
        )
    })
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

fn count_statuses(csv: &Path, header: &[String]) -> BTreeMap<String, usize> {
    let col = header.iter().position(|c| c == "status").unwrap_or(0);
    let mut counts = BTreeMap::new();
    for fields in store::read_done(csv, header).unwrap_or_default().values() {
        *counts.entry(fields[col].clone()).or_insert(0) += 1;
    }
    counts
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
    fn a_resumed_run_keeps_its_prestart_and_a_run_that_starts_programs_ahead_is_warned() {
        assert_eq!(keep_prestart(None, false, 0), (0, None));
        assert_eq!(keep_prestart(Some(1), true, 1), (1, None));
        let (p, note) = keep_prestart(Some(1), true, 0);
        assert_eq!(p, 1, "a resumed run keeps its prestart");
        assert!(note.unwrap().contains("`--prestart 1`"));
        let (p, note) = keep_prestart(None, true, 0);
        assert_eq!(p, 0);
        assert!(note.unwrap().contains("does not say"));
        assert_eq!(prestart_warning(0), None);
        assert!(prestart_warning(2).unwrap().starts_with("`--prestart 2`"));
    }

    #[test]
    fn idle_gpus_are_reported() {
        assert_eq!(idle_gpus_warning(&[0, 1, 0], 2), None);
        assert_eq!(idle_gpus_warning(&[0, 0], 1), None);
        let w = idle_gpus_warning(&[0, 0, 0], 2).unwrap();
        assert!(w.starts_with("only 1 of 2 GPUs get points"), "{w}");
    }
}
