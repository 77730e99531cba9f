//! The driver: the only code that knows the order of the stages.
//!
//! Builds run on `jobs` threads, always ahead; each GPU has one runner that takes its points
//! strictly one at a time, in its order, as soon as each is built. Builds never wait for runs.

mod builder;
mod cancel;
mod dispatch;
mod hold;
mod outcome;
mod passes;
mod probe;
mod recheck;
mod repeat;
mod resume;
mod runner;
mod session;

pub use builder::{build_only, sample, BuildReport};
pub use cancel::Cancel;
use dispatch::Dispatch;
pub use outcome::PointError;
pub use session::finished_as_is;
use session::Session;

use crate::compile;
use crate::events::{Event, Reporter, Summary};
use crate::gpu::{self, HeldLock};
use crate::points::{self, Order, Point, Shard, Split};
use crate::render::{self, Bench, RenderError};
use crate::spec::Spec;
use crate::store::{self, Dialect, GpuState};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// What building needs: `sweep build`, and the build threads of `sweep run`.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// Where run folders (and build folders) are made: `<output>/<sweep>/<stamp>`.
    pub output: PathBuf,
    pub cache: PathBuf,
    /// Build threads.
    pub jobs: usize,
    pub shard: Option<Shard>,
    pub split: Split,
    /// Cancels the run (Ctrl-C): no new build or run starts; the current points finish.
    pub cancel: Cancel,
}

/// `sweep run` and `sweep resume`: the builds' options, and how the points run.
#[derive(Clone, Debug)]
pub struct Options {
    pub build: BuildOptions,
    /// The CSV dialect of a new run; `None`: comma, or the dialect of the run resumed.
    pub dialect: Option<Dialect>,
    pub order: Order,
    pub seed: u64,
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
/// beside), and 1 point in 1 of 9 without (docs/measurements.md). What governs it is how long the
/// GPU idles between measurements (~40 ms with prestart, ~250 ms without), so the start-up time
/// this default costs is also what keeps the numbers clean; retrying a metric and a lock that keeps
/// contexts from being created during a measurement did not help.
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
    #[error("the unfinished run `{dir}` is of another spec file of the same name, `{theirs}` ({changes} differ), whose runs share this output folder (hint: `sweep run {theirs}` finishes it; --force starts a new run of this one beside it, or --output keeps the two apart)")]
    SpecOfSameName {
        dir: String,
        theirs: String,
        changes: String,
    },
    #[error("the bench `{bench}` changed since the unfinished run `{dir}` started: its remaining rows would come from another program (hint: undo the change to finish that run, or --force starts a new run)")]
    BenchChanged { dir: String, bench: String },
    #[error("the unfinished run `{dir}` was built with `{was}`, and `{compiler}` is now `{now}`: its remaining rows would come from another compiler (hint: put that compiler first on PATH to finish the run, or --force starts a new run)")]
    CompilerChanged {
        dir: String,
        compiler: String,
        was: String,
        now: String,
    },
    #[error("the unfinished run `{dir}` was built with `{compiler}` at `{was}`, and `{compiler}` is now `{now}`: its remaining rows would come from another compiler (hint: put `{was}` first on PATH to finish the run, or --force (or a new --output) starts a new run)")]
    CompilerMoved {
        dir: String,
        compiler: String,
        was: String,
        now: String,
    },
    #[error("the unfinished run `{dir}` measured its rows on `{was}`, and this run would measure on gpu {now}: one curve would hold rows of two GPU models (hint: finish it on a `{was}` (--gpus, or the node it ran on), or --force (or a new --output) starts a new run)")]
    GpuChanged {
        dir: String,
        was: String,
        now: String,
    },
    #[error("the unfinished run `{dir}` was built for `{was}`, and this run builds for `{now}`: its remaining rows would come from another program (hint: finish it on a GPU of `{was}`, or --force (or a new --output) starts a new run)")]
    ArchChanged {
        dir: String,
        was: String,
        now: String,
    },
    #[error("`{file}`, which the builds of the unfinished run `{dir}` read, changed since (or is gone): its remaining rows would come from another program (hint: undo the change to finish that run, or --force starts a new run)")]
    InputChanged { dir: String, file: String },
    #[error("`{dir}` is not a run folder of this spec: {source}")]
    BadResume {
        dir: String,
        #[source]
        source: store::StoreError,
    },
    #[error("the unfinished run `{dir}` was started by an older sweep, whose point ids lack the `p` prefix; this version cannot resume it (hint: --force starts a new run)")]
    OldIds { dir: String },
    #[error("the run `{dir}` writes the {theirs} CSV dialect; --csv-dialect {asked} would mix two dialects in one results.csv (hint: resume without --csv-dialect, and `sweep export RUN --format csv --dialect {asked}` writes it so)")]
    DialectDiffers {
        dir: String,
        theirs: &'static str,
        asked: &'static str,
    },
    #[error("the unfinished run `{dir}` of shard {shard} deals its points by {theirs}; --split {asked} would give it another shard's points (hint: --split {theirs} finishes that run, or --force starts a new run)")]
    SplitDiffers {
        dir: String,
        shard: String,
        theirs: &'static str,
        asked: &'static str,
    },
    #[error("`{link}` in the unfinished run `{dir}` is a link (to {target}), which sweep never makes: resuming would write through it (hint: remove the link, or --force starts a new run)")]
    LinkInRun {
        dir: String,
        link: String,
        target: String,
    },
    /// The run folders would lie in the bench's folder, whose every file is the bench's input:
    /// each run's files changed the bench, so a run could never be resumed ("the bench
    /// changed") and no build came from the cache.
    #[error("the {what} folder `{output}` lies inside the bench folder `{bench_dir}`, whose every file is part of the bench: the run's own files would change it, and the run could never be resumed (hint: run from the project folder, or --output / --cache a folder outside `{bench_dir}`)")]
    OutputInBench {
        what: &'static str,
        output: String,
        bench_dir: String,
    },
    /// A row of the unfinished run's results.csv is of no point of the run (an edit, a row pasted
    /// from another run or shard): resuming kept it, and the analysis read it as measured.
    #[error("`{csv}` of the unfinished run holds a row of point `{id}` ({at}), which is no point of the run (hint: was it edited? remove that row to finish the run, or --force starts a new run)")]
    ForeignRow { csv: String, id: String, at: String },
    #[error("the run `{dir}` is in use by another sweep (hint: wait for it to end; its results.csv grows as it runs)")]
    RunInUse { dir: String },
    /// A file of the run's own could not be written (disk full, read-only), or a program could
    /// not be started for want of files, processes or memory: the run stopped before recording
    /// the point, and its manifest says `interrupted`.
    #[error("point {point}: {source} (hint: nothing was recorded for it; {}, then `sweep resume {run_dir}` measures it and the rest)", remedy(source))]
    Stopped {
        point: String,
        run_dir: String,
        #[source]
        source: Arc<PointError>,
    },
    /// `sweep build` stopped at a failure that every later point would share (disk full or
    /// read-only, no descriptors or memory, the bench edited meanwhile).
    #[error("point {point}: {source} (hint: the build stopped there; {}, then run `sweep build` again: what was built stays in the cache)", remedy(source).replace("to the resume below", "to it"))]
    BuildStopped {
        point: String,
        #[source]
        source: Arc<PointError>,
    },
}

/// What to do before a stopped run is resumed: make room, free what the machine lacked, or make
/// writable (or put back) where the point writes; the cause is the operating system's error.
fn remedy(e: &PointError) -> &'static str {
    let s = e.to_string();
    let os = s
        .rsplit_once("(os error ")
        .and_then(|(_, n)| n.split(')').next()?.parse::<i32>().ok());
    let cache = matches!(e, PointError::Scratch { .. } | PointError::CacheStore(_));
    if matches!(e, PointError::BenchChanged { .. }) {
        return "undo the change to the bench (or --force starts a new run)";
    }
    match os {
        Some(libc::EMFILE | libc::ENFILE) => {
            "raise the limit of open files (`ulimit -n`) or close some"
        }
        Some(libc::EAGAIN | libc::ENOMEM) => "free memory or processes",
        Some(libc::EEXIST | libc::ENOTDIR) if cache => {
            "the build cache is a file, not a folder: remove it, or add `--cache DIR` to the resume below"
        }
        Some(libc::EROFS) if cache => {
            "the build cache's file system is read-only: make it writable, or add `--cache DIR` to the resume below"
        }
        Some(libc::EACCES | libc::EPERM) if cache => {
            "you may not write into the build cache: fix its permissions, or add `--cache DIR` to the resume below"
        }
        Some(libc::EROFS) => "its file system is read-only: make it writable",
        Some(libc::EACCES | libc::EPERM) => "you may not write there: fix its permissions",
        Some(libc::ENOENT | libc::ENOTDIR) => {
            "a folder of the run or the cache was moved or removed while the run ran: put it back"
        }
        _ => "make room",
    }
}

impl DriverError {
    /// Whether the environment, not the input, is at fault: no GPU, a lock held by another sweep,
    /// no compiler, or a file of sweep's own that cannot be written.
    /// An option of the command line the run it resumes contradicts (`--csv-dialect`, `--split`):
    /// exit 2, as a resume's other `--output` (review 21 F3: exit 3, bad input).
    pub fn usage(&self) -> bool {
        matches!(
            self,
            DriverError::DialectDiffers { .. } | DriverError::SplitDiffers { .. }
        )
    }

    pub fn environment(&self) -> bool {
        matches!(
            self,
            DriverError::NoGpu
                | DriverError::Gpu(_)
                | DriverError::GpuLock(_)
                | DriverError::Locked { .. }
                | DriverError::RunInUse { .. }
                | DriverError::Compile(_)
                | DriverError::CompilerChanged { .. }
                | DriverError::CompilerMoved { .. }
                | DriverError::GpuChanged { .. }
                | DriverError::ArchChanged { .. }
                | DriverError::NoNcu(_)
                | DriverError::Stopped { .. }
                | DriverError::BuildStopped { .. }
                | DriverError::Store(store::StoreError::Write { .. })
        ) && !matches!(self, DriverError::Stopped { source, .. } | DriverError::BuildStopped { source, .. } if matches!(**source, PointError::BenchChanged { .. }))
            || matches!(self, DriverError::Render(e) if e.environment())
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
    let mut session = Session::open(spec, opts)?;
    // Every event goes to the CSV, summary, timeline and reporter listeners in turn; a row the
    // CSV could not take stops the sweep.
    let dispatch = Mutex::new(Dispatch::new(reporter));
    let emit = |e: Event| {
        if let Ok(mut d) = dispatch.lock() {
            if !d.on(&e) {
                opts.build.cancel.cancel();
            }
        }
    };
    let ran = passes::run_all(&mut session, &dispatch, &emit);
    let dispatch = dispatch.into_inner().unwrap_or_else(|e| e.into_inner());
    session.end(dispatch, ran, wall)
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
                "this run's manifest does not say how many programs its first points started ahead (sweeps that did not record it started 1 ahead by default); the remaining points run with `--prestart {asked}`"
            )),
        ),
        _ => (asked, None),
    }
}

/// Says what programs started ahead may cost: a one-line reminder whenever a run uses them.
fn prestart_warning(prestart: usize) -> Option<String> {
    (prestart > 0).then(|| {
        format!(
            "`--prestart {prestart}`: a program waits at its gate beside each measurement, which moved some values by 8 % on some H100s (docs/measurements.md) (hint: without it, the default, each program starts after the previous one ended)"
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

#[cfg(test)]
mod tests {
    use super::*;

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
