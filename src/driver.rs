//! The driver: the only code that knows the order of the stages.
//!
//! Builds run on `jobs` threads, always ahead; each GPU has one runner that takes its points
//! strictly one at a time, in its order, as soon as each is built. Builds never wait for runs.

use crate::cache::{self, Cache};
use crate::compile::{self, Toolchain};
use crate::events::{Clock, Event, Reporter, Summary};
use crate::exec::{Exit, Started};
use crate::gpu::{self, GpuLock};
use crate::parse;
use crate::points::{self, Point, Shard, Split};
use crate::render::{self, Bench, RenderError};
use crate::run;
use crate::spec::Spec;
use crate::store::{
    self, CsvSink, Dialect, GpuState, GpuTag, Manifest, Row, Status, TimelineEntry,
};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// Set by the first Ctrl-C: no new build or run starts; the current points finish and are written.
pub static STOP: AtomicBool = AtomicBool::new(false);

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum Order {
    /// Sweep order (the last axis turns fastest).
    #[default]
    Sweep,
    /// A seeded shuffle (`--seed`), so slow drift of the GPU cannot pose as structure.
    Shuffled,
}

#[derive(Clone, Debug)]
pub struct Options {
    pub output: PathBuf,
    pub cache: PathBuf,
    pub jobs: usize,
    pub dialect: Dialect,
    pub order: Order,
    pub seed: u64,
    pub shard: Option<Shard>,
    pub split: Split,
    pub gpus: Option<String>,
    pub wait_lock: bool,
    pub force: bool,
    pub resume: Option<PathBuf>,
    pub command: Vec<String>,
    /// Start each GPU program while the previous one measures; it waits at its start gate
    /// (after creating its CUDA context) until the GPU is free.
    pub prestart: bool,
}

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
    #[error("no GPU visible: `nvidia-smi` lists none (hint: `sweep build` compiles without a GPU; set `gpu = false` in the spec for a host program)")]
    NoGpu,
    #[error("{0}")]
    Gpu(String),
    #[error(
        "gpu {gpu} is in use by another sweep ({holder}) (hint: --wait-lock to queue behind it)"
    )]
    Locked { gpu: String, holder: String },
    #[error("the spec changed since the unfinished run `{dir}` started: {changes} differ (hint: --force starts a new run)")]
    SpecChanged { dir: String, changes: String },
    #[error("`{dir}` is not a run folder of this spec: {reason}")]
    BadResume { dir: String, reason: String },
}

impl DriverError {
    pub fn exit_code(&self) -> i32 {
        match self {
            DriverError::NoGpu
            | DriverError::Gpu(_)
            | DriverError::Locked { .. }
            | DriverError::Compile(_) => crate::exit::ENVIRONMENT,
            _ => crate::exit::BAD_INPUT,
        }
    }
}

/// One built point, waiting for its runner.
struct Built {
    point: Point,
    dir: PathBuf,
    binary: Result<PathBuf, (Status, String)>,
    /// The binary waits at the start gate, so it may be started while another point measures.
    gated: bool,
    build_s: f64,
    cached: bool,
    started: f64,
    ended: f64,
}

/// What the build stage needs, shared by the build threads.
struct BuildCtx {
    spec: Spec,
    bench: Bench,
    toolchain: Toolchain,
    cache: Cache,
    clock: Clock,
    /// One lock per cache key, so two points with the same render build once.
    inflight: Mutex<BTreeMap<String, Arc<Mutex<()>>>>,
}

impl BuildCtx {
    fn build(&self, point: Point, dir: PathBuf) -> Built {
        let started = self.clock.now();
        let t0 = Instant::now();
        let result = self.build_inner(&point, &dir);
        let (binary, cached) = match result {
            Ok((b, cached)) => (Ok(b), cached),
            Err(e) => (Err(e), false),
        };
        let gated = binary.as_ref().is_ok_and(|b| run::honours_gate(b));
        Built {
            point,
            dir,
            binary,
            gated,
            build_s: if cached {
                0.0
            } else {
                t0.elapsed().as_secs_f64()
            },
            cached,
            started,
            ended: self.clock.now(),
        }
    }

    fn build_inner(&self, point: &Point, dir: &Path) -> Result<(PathBuf, bool), (Status, String)> {
        let failed = |m: String| (Status::BuildFailed, m);
        let rendered =
            render::render(&self.bench, &self.spec, point).map_err(|e| failed(e.to_string()))?;
        render::write(&rendered, dir).map_err(|e| {
            failed(format!(
                "cannot write headers into `{}`: {e}",
                dir.display()
            ))
        })?;
        let flags = compile::point_flags(&self.spec, point);
        let key = Cache::key(&self.toolchain, &self.bench, &rendered, &flags)
            .map_err(|e| failed(format!("cannot read the bench's files: {e}")))?;
        let log = dir.join(cache::LOG);
        let key_lock = self
            .inflight
            .lock()
            .map(|mut m| Arc::clone(m.entry(key.clone()).or_default()))
            .unwrap_or_default();
        let _building = key_lock.lock();
        if let Some(bin) = self.cache.lookup(&key) {
            let _ = std::fs::copy(self.cache.entry(&key).join(cache::LOG), &log);
            return Ok((bin, true));
        }
        let scratch = self.cache.scratch(&key).map_err(|e| {
            failed(format!(
                "cannot create a build folder in `{}`: {e}",
                self.cache.dir.display()
            ))
        })?;
        let cmd = compile::command(
            &self.toolchain,
            &self.bench,
            &flags,
            dir,
            &scratch.join(cache::BINARY),
        );
        let outcome = compile::build(&cmd, self.spec.build_timeout, &log)
            .map_err(|e| failed(e.to_string()))?;
        if !outcome.success() {
            let _ = std::fs::remove_dir_all(&scratch);
            let status = if matches!(outcome.exit, Exit::TimedOut(_)) {
                Status::Timeout
            } else {
                Status::BuildFailed
            };
            let first = first_error_line(&log);
            return Err((
                status,
                format!(
                    "build failed with {}{first} (log: {})",
                    outcome.describe(),
                    log.display()
                ),
            ));
        }
        let _ = std::fs::copy(&log, scratch.join(cache::LOG));
        let bin = self
            .cache
            .commit(&key, &scratch)
            .map_err(|e| failed(format!("cannot store the build in the cache: {e}")))?;
        Ok((bin, false))
    }
}

fn first_error_line(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines()
        .skip(1)
        .find(|l| l.contains("error"))
        .or_else(|| text.lines().skip(1).find(|l| !l.trim().is_empty()))
        .map(|l| format!(": {}", l.trim().chars().take(160).collect::<String>()))
        .unwrap_or_default()
}

/// A started program, or why it could not start.
type Launched = Result<Started, (Status, String)>;

/// Starts the program of a built point (gated: it waits at its start gate), or says why not.
fn launch(spec: &Spec, b: &Built, gpu: Option<&GpuState>, gated: bool) -> Launched {
    let binary = b.binary.as_ref().map_err(|e| e.clone())?;
    let cmd = run::command(spec, binary, &b.dir, gpu.map(|g| g.uuid.as_str()));
    let _ = std::fs::write(b.dir.join("run.cmd"), format!("{}\n", cmd.line()));
    run::start(&cmd, &b.dir, gated).map_err(|e| (Status::RunFailed, e.to_string()))
}

/// Lets a started point run to its end and classifies what happened.
fn finish(
    spec: &Spec,
    b: &Built,
    started: Launched,
) -> (Status, BTreeMap<String, f64>, f64, String) {
    let outcome = match started.map(|s| s.wait(spec.run_timeout)) {
        Ok(Ok(o)) => o,
        Ok(Err(e)) => return (Status::RunFailed, BTreeMap::new(), 0.0, e.to_string()),
        Err((status, msg)) => return (status, BTreeMap::new(), 0.0, msg),
    };
    let run_s = outcome.elapsed.as_secs_f64();
    let stdout_path = b.dir.join(run::STDOUT);
    let stderr_path = b.dir.join(run::STDERR);
    let stdout = std::fs::read_to_string(&stdout_path).unwrap_or_default();
    let parsed = parse::parse(&stdout, &spec.metrics, spec.target_rel_ci());
    let why = || {
        run::last_error_line(&b.dir)
            .map(|l| format!(": {l}"))
            .unwrap_or_default()
    };
    let (status, error) = if matches!(outcome.exit, Exit::TimedOut(_)) {
        (
            Status::Timeout,
            format!(
                "run {} (log: {})",
                outcome.describe(),
                stderr_path.display()
            ),
        )
    } else if parsed.check_failed.is_some() || outcome.exit == Exit::Code(3) {
        let what = parsed
            .check_failed
            .clone()
            .unwrap_or_else(|| "exit code 3".into());
        (
            Status::WrongResult,
            format!("wrong result: {what} (log: {})", stdout_path.display()),
        )
    } else if !outcome.success() {
        (
            Status::RunFailed,
            format!(
                "program failed with {}{} (log: {})",
                outcome.describe(),
                why(),
                stderr_path.display()
            ),
        )
    } else if !parsed.missing.is_empty() {
        (
            Status::NoMetric,
            format!(
                "no metric {} in the output (log: {})",
                parsed
                    .missing
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                stdout_path.display()
            ),
        )
    } else if parsed.noisy {
        (Status::Noisy, String::new())
    } else {
        (Status::Ok, String::new())
    };
    (status, parsed.values, run_s, error)
}

/// The GPUs a run uses, locked; or none for a host program.
fn claim_gpus(
    spec: &Spec,
    opts: &Options,
    holder: &str,
) -> Result<(Vec<GpuState>, Vec<GpuLock>), DriverError> {
    if !spec.gpu {
        return Ok((vec![], vec![]));
    }
    let all = gpu::list();
    if all.is_empty() {
        return Err(DriverError::NoGpu);
    }
    let chosen = gpu::select(&all, opts.gpus.as_deref()).map_err(DriverError::Gpu)?;
    if chosen.is_empty() {
        return Err(DriverError::NoGpu);
    }
    let mut locks = Vec::new();
    for g in &chosen {
        let lock =
            gpu::lock(&gpu::lock_dir(), &g.uuid, holder, opts.wait_lock).map_err(|holder| {
                DriverError::Locked {
                    gpu: format!("{} ({})", g.index, g.name),
                    holder: if holder.is_empty() {
                        "unknown".into()
                    } else {
                        holder
                    },
                }
            })?;
        locks.push(lock);
    }
    Ok((chosen, locks))
}

/// The run folder to resume: the one named by `--resume`, else the latest unfinished run of this
/// sweep (and shard); None when a new run starts.
fn pick_run_dir(spec: &Spec, opts: &Options) -> Result<Option<PathBuf>, DriverError> {
    let shard = opts.shard.map(|s| format!("{}/{}", s.index, s.count));
    if let Some(dir) = &opts.resume {
        let m = Manifest::load(dir).map_err(|e| DriverError::BadResume {
            dir: dir.display().to_string(),
            reason: e.to_string(),
        })?;
        if m.spec_hash != spec.hash && !opts.force {
            return Err(DriverError::SpecChanged {
                dir: dir.display().to_string(),
                changes: store::spec_changes(&m.spec, &spec.text).join(", "),
            });
        }
        return Ok(Some(dir.clone()));
    }
    let unfinished = store::runs_of(&opts.output, &spec.name)
        .into_iter()
        .rev()
        .find_map(|d| {
            Manifest::load(&d)
                .ok()
                .filter(|m| m.shard == shard)
                .map(|m| (d, m))
        })
        .filter(|(_, m)| m.state != "finished");
    if let Some((dir, m)) = unfinished {
        if m.spec_hash == spec.hash {
            return Ok(Some(dir));
        }
        if !opts.force {
            return Err(DriverError::SpecChanged {
                dir: dir.display().to_string(),
                changes: store::spec_changes(&m.spec, &spec.text).join(", "),
            });
        }
    }
    Ok(None)
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

/// `sweep run`.
pub fn run(
    spec: &Spec,
    opts: &Options,
    reporter: Box<dyn Reporter>,
) -> Result<Summary, DriverError> {
    let wall = Instant::now();
    let points = plan(spec, opts.shard, opts.split)?;
    let bench = Bench::locate(spec)?;
    preflight(spec, &bench, &points)?;
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
                })
                .collect(),
            columns: header.clone(),
            points_total: points.len(),
            point_ids: points.iter().map(|p| p.id.clone()).collect(),
            shard: opts.shard.map(|s| format!("{}/{}", s.index, s.count)),
            split: format!("{:?}", opts.split).to_lowercase(),
            order: format!("{:?}", opts.order).to_lowercase(),
            seed: opts.seed,
            host: host(),
            git_commit: git_commit(&bench.dir),
            started: now(),
            state: "running".into(),
            dialect: opts.dialect,
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
    let csv_path = run_dir.join(store::RESULTS);
    let done = store::read_done(&csv_path, &header)?;
    let sink = CsvSink::open(&csv_path, header.clone(), manifest.dialect)?;
    manifest.state = "running".into();
    manifest.finished = None;
    manifest.jobs = opts.jobs;
    manifest.command = opts.command.clone();
    manifest.compiler = toolchain.compiler.clone();
    manifest.compiler_version = toolchain.version.clone();
    manifest.arch = toolchain.arch.clone();
    manifest.gpus_start = gpus.clone();
    manifest.save(&run_dir)?;

    let mut todo: Vec<Point> = points
        .into_iter()
        .filter(|p| !done.contains_key(&p.id))
        .collect();
    if opts.order == Order::Shuffled {
        points::shuffle(&mut todo, opts.seed);
    }
    let runners = gpus.len().max(1);
    let owner = if runners > 1 {
        points::assign(&todo, runners, opts.split, &points::x_axis(spec))
    } else {
        vec![0; todo.len()]
    };
    let gpu_names: Vec<String> = gpus
        .iter()
        .map(|g| format!("gpu {} ({})", g.index, g.name))
        .collect();
    let reporter = Arc::new(Mutex::new(reporter));
    let emit = |e: Event| {
        if let Ok(mut r) = reporter.lock() {
            r.on(&e);
        }
    };
    emit(Event::Started {
        run_dir: &run_dir,
        total: manifest.points_total,
        todo: todo.len(),
        resumed,
        jobs: opts.jobs,
        gpus: &gpu_names,
    });

    let clock = Clock(Instant::now());
    let ctx = Arc::new(BuildCtx {
        spec: spec.clone(),
        bench,
        toolchain,
        cache: Cache::new(&opts.cache),
        clock,
        inflight: Mutex::default(),
    });
    let summary = Mutex::new(Summary {
        run_dir: run_dir.clone(),
        csv: csv_path.clone(),
        total: manifest.points_total,
        skipped: done.len(),
        ..Summary::default()
    });
    let sink = Mutex::new(sink);
    let timeline = Mutex::new(Vec::<TimelineEntry>::new());
    let write_error = Mutex::new(None::<store::StoreError>);

    // Each runner's points, in its order; builds are dealt round-robin across runners so
    // every runner's next point is built early.
    let queues: Vec<Vec<usize>> = (0..runners)
        .map(|r| (0..todo.len()).filter(|&i| owner[i] == r).collect())
        .collect();
    let mut build_order = Vec::with_capacity(todo.len());
    for k in 0..queues.iter().map(Vec::len).max().unwrap_or(0) {
        for q in &queues {
            if let Some(&i) = q.get(k) {
                build_order.push(i);
            }
        }
    }
    let position: Vec<usize> = {
        let mut pos = vec![0; todo.len()];
        for q in &queues {
            for (k, &i) in q.iter().enumerate() {
                pos[i] = k;
            }
        }
        pos
    };

    let next_build = AtomicUsize::new(0);
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..runners)
        .map(|_| mpsc::channel::<(usize, Built)>())
        .unzip();
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.max(1) {
            let senders = senders.clone();
            let (ctx, todo, build_order, next_build, owner, position, run_dir) = (
                &ctx,
                &todo,
                &build_order,
                &next_build,
                &owner,
                &position,
                &run_dir,
            );
            let emit = &emit;
            s.spawn(move || loop {
                if STOP.load(Ordering::SeqCst) {
                    break;
                }
                let k = next_build.fetch_add(1, Ordering::SeqCst);
                let Some(&i) = build_order.get(k) else { break };
                let point = todo[i].clone();
                let dir = run_dir.join(store::POINTS).join(&point.id);
                let built = ctx.build(point, dir);
                emit(Event::Built {
                    point: &built.point,
                    cached: built.cached,
                    failed: built.binary.is_err(),
                });
                if senders[owner[i]].send((position[i], built)).is_err() {
                    break;
                }
            });
        }
        drop(senders);
        for (r, rx) in receivers.into_iter().enumerate() {
            let gpu = gpus.get(r).cloned();
            let (queue, ctx, sink, summary, timeline, write_error, prestart) = (
                &queues[r],
                &ctx,
                &sink,
                &summary,
                &timeline,
                &write_error,
                opts.prestart,
            );
            let emit = &emit;
            s.spawn(move || {
                let mut pending: BTreeMap<usize, Built> = BTreeMap::new();
                // The next point, already started and waiting at its gate.
                let mut ahead: Option<(usize, Launched)> = None;
                let mut next = 0;
                while next < queue.len() && !STOP.load(Ordering::SeqCst) {
                    let Some(b) = pending.remove(&next) else {
                        match rx.recv_timeout(Duration::from_millis(50)) {
                            Ok((k, b)) => {
                                pending.insert(k, b);
                            }
                            Err(mpsc::RecvTimeoutError::Timeout) => {}
                            Err(mpsc::RecvTimeoutError::Disconnected) => break,
                        }
                        continue;
                    };
                    emit(Event::Running { point: &b.point });
                    let run_start = ctx.clock.now();
                    let mut started = match ahead.take() {
                        Some((k, s)) if k == next => s,
                        _ => launch(&ctx.spec, &b, gpu.as_ref(), b.gated),
                    };
                    if let Ok(s) = started.as_mut() {
                        s.go();
                    }
                    next += 1;
                    if prestart {
                        while let Ok((k, built)) = rx.try_recv() {
                            pending.insert(k, built);
                        }
                        if let Some(nb) = pending.get(&next).filter(|nb| nb.gated) {
                            ahead = Some((next, launch(&ctx.spec, nb, gpu.as_ref(), true)));
                        }
                    }
                    let (status, values, run_s, error) = finish(&ctx.spec, &b, started);
                    let run_end = ctx.clock.now();
                    let row = Row {
                        point: b.point.clone(),
                        status,
                        values,
                        build_s: b.build_s,
                        run_s,
                        cached: b.cached,
                        gpu: gpu
                            .as_ref()
                            .map(|g| GpuTag {
                                index: g.index.clone(),
                                name: g.name.clone(),
                                uuid: g.uuid.clone(),
                            })
                            .unwrap_or_default(),
                        error,
                    };
                    if let Ok(mut sink) = sink.lock() {
                        if let Err(e) = sink.append(&row) {
                            if let Ok(mut w) = write_error.lock() {
                                *w = Some(e);
                            }
                            STOP.store(true, Ordering::SeqCst);
                        }
                    }
                    if let Ok(mut t) = timeline.lock() {
                        t.push(TimelineEntry {
                            point_id: b.point.id.clone(),
                            build_start: b.started,
                            build_end: b.ended,
                            run_start,
                            run_end,
                            cached: b.cached,
                        });
                    }
                    if let Ok(mut sm) = summary.lock() {
                        sm.record(&row);
                    }
                    emit(Event::Finished { row: &row });
                }
            });
        }
    });

    let mut summary = summary.into_inner().unwrap_or_default();
    if let Some(e) = write_error.into_inner().ok().flatten() {
        return Err(e.into());
    }
    if let Ok(sink) = sink.lock() {
        sink.sync();
    }
    let finished_ids: HashSet<String> = store::read_done(&csv_path, &header)?.into_keys().collect();
    let complete = manifest
        .point_ids
        .iter()
        .all(|id| finished_ids.contains(id));
    summary.interrupted = !complete;
    summary.wall = wall.elapsed();
    manifest.state = if complete { "finished" } else { "interrupted" }.into();
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
    let mut t = timeline.into_inner().unwrap_or_default();
    manifest.timeline.append(&mut t);
    manifest.save(&run_dir)?;
    Ok(summary)
}

fn count_statuses(csv: &Path, header: &[String]) -> BTreeMap<String, usize> {
    let col = header.iter().position(|c| c == "status").unwrap_or(0);
    let mut counts = BTreeMap::new();
    for fields in store::read_done(csv, header).unwrap_or_default().values() {
        *counts.entry(fields[col].clone()).or_insert(0) += 1;
    }
    counts
}

/// What `sweep build` did.
#[derive(Debug, Default)]
pub struct BuildReport {
    pub dir: PathBuf,
    pub built: usize,
    pub cached: usize,
    pub failed: Vec<String>,
    pub arch: Option<String>,
    pub arch_from: String,
    pub wall: Duration,
}

/// `n` points spread evenly over `points`, the first and the last included.
pub fn sample(points: Vec<Point>, n: usize) -> Vec<Point> {
    if n >= points.len() || n == 0 {
        return points;
    }
    let last = points.len() - 1;
    let mut picks: Vec<usize> = (0..n)
        .map(|k| if n == 1 { 0 } else { k * last / (n - 1) })
        .collect();
    picks.dedup();
    picks.into_iter().map(|i| points[i].clone()).collect()
}

/// `sweep build`: compiles every point (or a `sample` of them) into the cache (no GPU needed).
pub fn build_only(
    spec: &Spec,
    opts: &Options,
    sample_n: Option<usize>,
) -> Result<BuildReport, DriverError> {
    let wall = Instant::now();
    let points = plan(spec, opts.shard, opts.split)?;
    let points = match sample_n {
        Some(n) => sample(points, n),
        None => points,
    };
    let bench = Bench::locate(spec)?;
    preflight(spec, &bench, &points)?;
    let gpu_arch = if spec.gpu {
        gpu::list().first().and_then(gpu::arch_of)
    } else {
        None
    };
    let toolchain = Toolchain::find(spec, gpu_arch)?;
    let dir = store::new_run_dir(&opts.output, &spec.name, "-build", &Manifest::default())?;
    let ctx = BuildCtx {
        spec: spec.clone(),
        bench,
        toolchain,
        cache: Cache::new(&opts.cache),
        clock: Clock(Instant::now()),
        inflight: Mutex::default(),
    };
    let next = AtomicUsize::new(0);
    let report = Mutex::new(BuildReport {
        dir: dir.clone(),
        arch: ctx.toolchain.arch.clone(),
        arch_from: ctx.toolchain.arch_from.clone(),
        ..BuildReport::default()
    });
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.max(1) {
            s.spawn(|| loop {
                if STOP.load(Ordering::SeqCst) {
                    break;
                }
                let Some(p) = points.get(next.fetch_add(1, Ordering::SeqCst)) else {
                    break;
                };
                let b = ctx.build(p.clone(), dir.join(store::POINTS).join(&p.id));
                if let Ok(mut r) = report.lock() {
                    match &b.binary {
                        Ok(_) if b.cached => r.cached += 1,
                        Ok(_) => r.built += 1,
                        Err((_, msg)) => r.failed.push(format!("{}: {msg}", p.label())),
                    }
                }
            });
        }
    });
    let mut r = report.into_inner().unwrap_or_default();
    r.wall = wall.elapsed();
    Ok(r)
}
