//! A run's state, from the moment its folder is chosen to its manifest's last word: what
//! [`super::run_sweep`] opens ([`Session::open`]: the points, the GPUs locked, the run folder new
//! or resumed, its manifest saved `running`), what its passes share, and how it ends
//! ([`Session::end`]: `finished`, or `interrupted` however it stopped).

use super::builder::BuildCtx;
use super::dispatch::Dispatch;
use super::outcome::PointError;
use super::resume::{lock_run, pick_run_dir};
use super::{claim_gpus, git_commit, git_dirty, host, keep_prestart, plan, preflight};
use super::{DriverError, Options};
use crate::compile::Toolchain;
use crate::events::{Event, Summary};
use crate::gpu::{self, HeldLock};
use crate::points::Point;
use crate::render::Bench;
use crate::spec::Spec;
use crate::store::{self, space::Reserve, CsvSink, GpuState, Manifest};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The first failure that stops a run (a file of its own could not be written), and its point.
#[derive(Default)]
pub(super) struct Halt(Mutex<Option<(Point, Arc<PointError>)>>);

impl Halt {
    /// Stops the run (`cancel`): no new build or run starts, and the run ends with this error.
    pub(super) fn stop(&self, point: &Point, e: Arc<PointError>, cancel: &super::Cancel) {
        if let Ok(mut h) = self.0.lock() {
            h.get_or_insert_with(|| (point.clone(), e));
        }
        cancel.cancel();
    }

    fn take(&self) -> Option<(Point, Arc<PointError>)> {
        self.0.lock().ok().and_then(|mut h| h.take())
    }
}

/// One run of a spec in its run folder.
pub(super) struct Session<'s> {
    pub(super) spec: &'s Spec,
    pub(super) opts: &'s Options,
    pub(super) points: Vec<Point>,
    /// The GPUs it runs on, one runner each (none: the host).
    pub(super) gpus: Vec<GpuState>,
    pub(super) run_dir: PathBuf,
    pub(super) header: Vec<String>,
    pub(super) manifest: Manifest,
    pub(super) resumed: bool,
    /// The rows `results.csv` held when the run (re)started, by point id.
    pub(super) done: BTreeMap<String, Vec<String>>,
    /// `recheck`: points held and not combined yet (a resumed run's), left to the recheck rounds.
    pub(super) held: HashSet<String>,
    pub(super) prestart: usize,
    /// Why the prestart is not the one asked for, when it is not.
    pub(super) prestart_note: Option<String>,
    /// `results.csv`, opened when the run starts; the pass that writes it takes it.
    pub(super) results: Option<CsvSink>,
    pub(super) ctx: BuildCtx,
    pub(super) halt: Halt,
    /// Room for the manifest at the run's end, however full the disk gets meanwhile.
    reserve: Option<Reserve>,
    /// The GPUs' locks and the run folder's, held for the run.
    _locks: (Vec<HeldLock>, HeldLock),
    /// The CUDA driver and a context on each GPU, held by sweep for the run (see [`super::hold`]).
    _driver: Option<super::hold::DriverHold>,
    /// From a program's exit to the next gate on its GPU: [`super::hold::REST`] while the driver
    /// is held, zero otherwise (each program's own start-up is the rest then).
    pub(super) rest: std::time::Duration,
}

/// The manifest of a new run.
fn new_manifest(
    spec: &Spec,
    opts: &Options,
    points: &[Point],
    bench: &Bench,
    header: &[String],
) -> Manifest {
    Manifest {
        sweep: spec.name.clone(),
        spec_path: spec.path.display().to_string(),
        cwd: std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default(),
        cache: std::path::absolute(&opts.build.cache)
            .ok()
            .map(|c| c.display().to_string()),
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
        columns: header.to_vec(),
        points_total: points.len(),
        point_ids: points.iter().map(|p| p.id.clone()).collect(),
        shard: opts.build.shard.map(|s| format!("{}/{}", s.index, s.count)),
        split: Some(opts.build.split),
        order: Some(opts.order),
        seed: opts.seed,
        host: host(),
        git_commit: git_commit(&bench.dir),
        git_dirty: git_dirty(bench),
        sweep_version: Some(store::manifest::SWEEP_VERSION.into()),
        sweep_commit: Some(store::manifest::SWEEP_COMMIT.into()),
        started: now(),
        // Until the run is set up and says `running`: a run folder whose setup failed is
        // resumed like a stopped one.
        state: store::RunState::Interrupted,
        dialect: opts.dialect.unwrap_or_default(),
        overrides: spec.overrides.clone(),
        ..Manifest::default()
    }
}

/// Refuses an output folder (`what`: or the build cache) inside the bench's folder (or
/// `cuda/common/`): `sweep run` started in `cuda/<bench>/` made `output/` there, and every run's
/// files (every build's) became the bench's input.
fn output_outside(output: &Path, bench: &Bench, what: &'static str) -> Result<(), DriverError> {
    let real = crate::files::real_path;
    let out = real(output);
    for dir in std::iter::once(&bench.dir).chain(bench.common.as_ref()) {
        if out.starts_with(real(dir)) {
            return Err(DriverError::OutputInBench {
                what,
                output: output.display().to_string(),
                bench_dir: dir.display().to_string(),
            });
        }
    }
    Ok(())
}

/// The rows of a run's results.csv, checked as they are, before anything of the run changes
/// (a torn last row is left out in memory, not cut): no row of a point the run does not list, no
/// status no sweep writes (review 13b F9: the resume kept it, and every reader then refused the
/// run), no row at another point's axis values (review 17 C2: kept, it was read at those
/// values). With `kept` (a resume's), the run's controls.csv and passes/ are checked alike, and
/// the CSVs of the passes before the last (`kept` of them) hold one row per point: a second row
/// there was found by the pass that reads it, after the resume had rewritten the manifest
/// (review 18b F1). The last pass's CSV may hold two: the process a kill cut off before its
/// point's row, and the one the resume measured again.
fn checked_as_is(
    run_dir: &Path,
    manifest: &Manifest,
    header: &[String],
    kept: Option<u32>,
) -> Result<BTreeMap<String, Vec<String>>, DriverError> {
    let csv_path = store::RunDir::new(run_dir).results();
    let done = store::read_done_as_is(&csv_path, header)?;
    let ours: HashSet<&String> = manifest.point_ids.iter().collect();
    if let Some((id, row)) = done.iter().find(|(id, _)| !ours.contains(id)) {
        let at = header
            .iter()
            .zip(row)
            .filter(|(c, _)| manifest.axes.contains(c))
            .map(|(c, v)| format!("{c}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        return Err(DriverError::ForeignRow {
            csv: csv_path.display().to_string(),
            id: id.clone(),
            at,
        });
    }
    let mut check = store::rows::RowCheck::new(&csv_path, manifest, header, manifest.dialect);
    for (id, row) in &done {
        check.row(row, || {
            format!("the row of the point `{}`", crate::units::visible(id))
        })?;
    }
    if let Some(earlier) = kept {
        store::rows::check_kept(run_dir, manifest, header, earlier)?;
    }
    Ok(done)
}

/// A finished run that a resume would leave as it is (every point it lists has its row, each
/// checked as every resume checks them): its points and how many of their rows failed. None when
/// the resume has something to do, or its manifest is of a sweep before the columns' record.
/// Its resume then changes nothing: before, it wrote the manifest (`command`, `resumed`), the
/// report, the analysis and the charts again, and said "nothing to do" (review 18b F6).
pub fn finished_as_is(
    run_dir: &Path,
    manifest: &Manifest,
) -> Result<Option<(usize, usize)>, DriverError> {
    if manifest.state != store::RunState::Finished || manifest.columns.is_empty() {
        return Ok(None);
    }
    let header = &manifest.columns;
    // Its passes' CSVs as a resume of it unfinished checks them (and merge): one row per point
    // in each pass before the last.
    let repeat = crate::spec::Spec::parse(Path::new(&manifest.spec_path), &manifest.spec)
        .map_or(1, |s| s.repeat.max(1));
    let done = checked_as_is(run_dir, manifest, header, Some(repeat - 1))?;
    if !manifest.point_ids.iter().all(|id| done.contains_key(id)) {
        return Ok(None);
    }
    let failed = failed_in(&statuses_of(done.values(), header));
    Ok(Some((done.len(), failed)))
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339()
}

impl<'s> Session<'s> {
    /// Everything before the first build: the points, the GPUs (locked), the toolchain, the run
    /// folder (new, or the one resumed, locked), its CSV and its manifest saved `running`.
    pub(super) fn open(spec: &'s Spec, opts: &'s Options) -> Result<Session<'s>, DriverError> {
        let points = plan(spec, opts.build.shard, opts.build.split)?;
        let bench = Bench::locate(spec)?;
        output_outside(&opts.build.output, &bench, "output")?;
        output_outside(&opts.build.cache, &bench, "build cache")?;
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
        let (gpus, gpu_locks) = claim_gpus(spec, opts, &holder)?;
        let toolchain = Toolchain::find(spec, gpus.first().and_then(gpu::arch_of))?;
        let bench_hash = bench.fingerprint()?;
        // What killed sweeps left half made beside the runs goes before any is picked (a new
        // run's folder does the same).
        store::staging::remove_dead(&opts.build.output.join(&spec.name));
        if let Some(parent) = opts.resume.as_deref().and_then(Path::parent) {
            store::staging::remove_dead(parent);
        }
        let resume_dir = pick_run_dir(spec, opts, &bench_hash, &toolchain, &gpus)?;
        let resumed = resume_dir.is_some();
        let header = store::header(spec);
        let (mut manifest, run_dir) = match resume_dir {
            Some(dir) => {
                let mut m = Manifest::load(&dir)?;
                m.resumed.push(now());
                (m, dir)
            }
            None => {
                let mut m = new_manifest(spec, opts, &points, &bench, &header);
                m.bench_hash = bench_hash;
                let suffix = opts
                    .build
                    .shard
                    .map(|s| format!("-shard-{}-of-{}", s.index, s.count))
                    .unwrap_or_default();
                let dir = store::new_run_dir(&opts.build.output, &spec.name, &suffix, &m)?;
                (m, dir)
            }
        };
        // Checked as it is, before anything of the run changes, its lock included: a refused
        // resume leaves the run as it found it (a torn last row is cut off only once every check
        // passed; review 18b F11: run.lock was rewritten).
        let kept = resumed.then(|| spec.repeat.max(1) - 1);
        checked_as_is(&run_dir, &manifest, &header, kept)?;
        // One sweep at a time per run folder: two would append to one results.csv.
        let run_lock = lock_run(&run_dir, &holder)?;
        opts.build.cancel.working_in(run_dir.clone());
        // Room for the manifest at the run's end, however full the disk gets meanwhile: its
        // text now and a timeline entry per point.
        let bytes = serde_json::to_vec_pretty(&manifest).map_or(0, |t| t.len()) as u64
            + 512 * points.len() as u64
            + 64 * 1024;
        let reserve = match Reserve::make(&run_dir, bytes) {
            Ok(r) => r,
            Err(e) => {
                manifest.state = store::RunState::Interrupted;
                let _ = manifest.save(&run_dir);
                return Err(store::StoreError::Write {
                    path: run_dir,
                    cause: e.into(),
                }
                .into());
            }
        };
        let csv_path = store::RunDir::new(&run_dir).results();
        let done = store::read_done(&csv_path, &header)?;
        let results = CsvSink::open(&csv_path, header.clone(), manifest.dialect)?;
        manifest.state = store::RunState::Running;
        manifest.finished = None;
        // A run stopped before its setup saved a word (a full disk at its start: no compiler, no
        // prestart) started no program: it is no older sweep's, whose prestart went unrecorded
        // (review 19b F5: its resume warned of programs "started 1 ahead").
        let set_up = !manifest.compiler.is_empty() || manifest.prestart.is_some();
        let (prestart, prestart_note) =
            keep_prestart(manifest.prestart, resumed && set_up, opts.prestart);
        manifest.prestart = Some(prestart);
        manifest.jobs = opts.build.jobs;
        manifest.command = opts.command.clone();
        manifest.compiler = toolchain.compiler.clone();
        manifest.compiler_version = toolchain.version.clone();
        manifest.compiler_path = toolchain.program().map(|p| p.display().to_string());
        manifest.arch = toolchain.arch.clone();
        manifest.gpus_start = gpus.clone();
        let (driver, rest) = super::hold::for_run(&gpus, prestart);
        if !gpus.is_empty() {
            manifest.rest_ms = Some(rest.as_millis() as u64);
        }
        manifest.save(&run_dir)?;
        let mut ctx = BuildCtx::new(spec, bench, toolchain, &opts.build.cache);
        ctx.keep_inputs_in(&run_dir);
        ctx.started_bench = Some(manifest.bench_hash.clone()).filter(|h| !h.is_empty());
        ctx.cancel = opts.build.cancel.clone();
        let mut session = Session {
            spec,
            opts,
            points,
            gpus,
            run_dir,
            header,
            manifest,
            resumed,
            done,
            held: HashSet::new(),
            prestart,
            prestart_note,
            results: Some(results),
            ctx,
            halt: Halt::default(),
            reserve: Some(reserve),
            _locks: (gpu_locks, run_lock),
            _driver: driver,
            rest,
        };
        // From here on the manifest says `running`: a failure leaves it `interrupted`.
        if let Err(e) = session.prepare() {
            return Err(session.fail(e));
        }
        Ok(session)
    }

    /// The folder of the passes' CSVs, and the points a resumed `recheck` run holds.
    fn prepare(&mut self) -> Result<(), DriverError> {
        let rechecking = self.spec.rechecks();
        // `recheck` (one pass only): points whose samples fell into two groups are held in
        // passes/recheck.csv and measured in more processes after the pass (recheck.rs).
        if self.spec.repeat > 1 || rechecking {
            let dir = store::RunDir::new(&self.run_dir).passes();
            std::fs::create_dir_all(&dir).map_err(|e| store::StoreError::Write {
                path: dir.clone(),
                cause: e.into(),
            })?;
        }
        if rechecking {
            // Held points not combined yet (a resumed run's): pass 0 leaves them to the recheck
            // rounds. (Reading it also cuts a row a kill tore, before pass 0 appends to it.)
            let path = store::recheck_csv(&self.run_dir);
            self.held = store::read_rows(&path, &self.header)?
                .into_iter()
                .filter_map(|f| f.into_iter().next())
                .filter(|id| !self.done.contains_key(id))
                .collect();
        }
        Ok(())
    }

    /// The run stops with `e`: its manifest says `interrupted`, in the room the reserve kept.
    fn fail(&mut self, e: DriverError) -> DriverError {
        self.reserve = None;
        self.manifest.state = store::RunState::Interrupted;
        // What the run recorded before it stopped, as an interrupted run's manifest says it.
        self.manifest.counts = count_statuses(&self.csv_path(), &self.header);
        let _ = self.manifest.save(&self.run_dir);
        self.opts.build.cancel.sweep_over();
        e
    }

    /// Where the run's rows are.
    pub(super) fn csv_path(&self) -> PathBuf {
        store::RunDir::new(&self.run_dir).results()
    }

    /// The run is over, as its passes left it (`ran`): its manifest's last word (`finished`
    /// when every point has its row, else `interrupted`), and the summary of its last pass.
    pub(super) fn end(
        mut self,
        mut dispatch: Dispatch,
        ran: Result<(), DriverError>,
        wall: Instant,
    ) -> Result<Summary, DriverError> {
        let stopped = self
            .halt
            .take()
            .map(|(point, source)| DriverError::Stopped {
                point: point.label(),
                run_dir: self.run_dir.display().to_string(),
                source,
            });
        self.manifest
            .timeline
            .append(&mut dispatch.timeline.entries);
        let mut summary = std::mem::take(&mut dispatch.summary);
        // A run stopped before its start was told: the listeners' last word names its folder
        // all the same (review 18b F1: the live report warned of `` as no run folder).
        if summary.run_dir.as_os_str().is_empty() {
            summary.run_dir = self.run_dir.clone();
        }
        if let Some(e) = stopped.or(ran.err()) {
            let e = self.fail(e);
            // The listeners' last word (the live report's last version says `interrupted`).
            summary.interrupted = true;
            summary.wall = wall.elapsed();
            dispatch.on(&Event::RunFinished { summary: &summary });
            return Err(e);
        }
        let csv_path = self.csv_path();
        // A results.csv that cannot be read back (a program wrote into it, a hand cut it): the
        // run stops as that, its manifest `interrupted` (review 12a M1: it stayed `running`).
        let finished: HashSet<String> = match store::read_done(&csv_path, &self.header) {
            Ok(done) => done.into_keys().collect(),
            Err(e) => {
                let e = self.fail(e.into());
                summary.interrupted = true;
                summary.wall = wall.elapsed();
                dispatch.on(&Event::RunFinished { summary: &summary });
                return Err(e);
            }
        };
        let complete = self
            .manifest
            .point_ids
            .iter()
            .all(|id| finished.contains(id));
        summary.interrupted = !complete;
        summary.wall = wall.elapsed();
        let m = &mut self.manifest;
        m.state = if complete {
            store::RunState::Finished
        } else {
            store::RunState::Interrupted
        };
        m.finished = complete.then(now);
        m.gpus_end = if self.spec.gpu {
            let now_gpus = gpu::list();
            self.gpus
                .iter()
                .filter_map(|g| now_gpus.iter().find(|n| n.uuid == g.uuid).cloned())
                .collect()
        } else {
            vec![]
        };
        m.counts = count_statuses(&csv_path, &self.header);
        let failed_in_csv = failed_in(&m.counts);
        summary.failed_before = failed_in_csv.saturating_sub(summary.failed());
        self.reserve = None;
        self.manifest.save(&self.run_dir)?;
        self.opts.build.cancel.sweep_over();
        dispatch.on(&Event::RunFinished { summary: &summary });
        Ok(summary)
    }
}

fn count_statuses(csv: &Path, header: &[String]) -> BTreeMap<String, usize> {
    statuses_of(
        store::read_done(csv, header).unwrap_or_default().values(),
        header,
    )
}

/// How many of `rows` have each status word.
fn statuses_of<'r>(
    rows: impl Iterator<Item = &'r Vec<String>>,
    header: &[String],
) -> BTreeMap<String, usize> {
    let col = header
        .iter()
        .position(|c| c == store::schema::STATUS_COLUMN)
        .unwrap_or(0);
    let mut counts = BTreeMap::new();
    for fields in rows {
        *counts.entry(fields[col].clone()).or_insert(0) += 1;
    }
    counts
}

/// The rows of `counts` (status word -> rows) whose point failed.
fn failed_in(counts: &BTreeMap<String, usize>) -> usize {
    counts
        .iter()
        .filter(|(s, _)| store::Status::parse(s).is_some_and(|s| !s.measured()))
        .map(|(_, n)| n)
        .sum()
}
