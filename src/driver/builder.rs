//! The build stage of the driver: render, cache lookup, compile. Shared by `sweep run` (builds
//! run ahead of the runners) and `sweep build` (builds only).

use super::outcome::PointError;
use super::{plan, preflight, BuildOptions, DriverError};
use crate::cache::{self, Cache};
use crate::compile::{self, Toolchain};
use crate::events::Clock;
use crate::gpu;
use crate::points::Point;
use crate::render::{self, Bench};
use crate::run;
use crate::spec::Spec;
use crate::store::{self, Manifest};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One built point, waiting for its runner.
pub(super) struct Built {
    pub(super) point: Point,
    pub(super) dir: PathBuf,
    pub(super) binary: Result<PathBuf, Arc<PointError>>,
    /// The binary waits at the start gate, so it may be started while another point measures.
    pub(super) gated: bool,
    pub(super) build_s: f64,
    pub(super) cached: bool,
    pub(super) started: f64,
    pub(super) ended: f64,
}

/// What the build stage needs, shared by the build threads.
pub(super) struct BuildCtx {
    pub(super) spec: Spec,
    pub(super) bench: Bench,
    pub(super) toolchain: Toolchain,
    pub(super) cache: Cache,
    /// The cache entries this run uses, kept from a `sweep cache clean` beside it.
    holder: cache::Holder,
    pub(super) clock: Clock,
    /// One lock per cache key, so two points with the same render build once.
    pub(super) inflight: Mutex<BTreeMap<String, Arc<Mutex<()>>>>,
    /// The files the run's builds read (path -> hash, the first seen) and the keys whose lists
    /// are in it; kept in the run folder's [`store::RunDir::build_inputs`] (None: `sweep build`).
    inputs: Mutex<(BTreeMap<String, String>, std::collections::HashSet<String>)>,
    inputs_file: Option<PathBuf>,
    /// The bench's fingerprint when the run started (None: `sweep build`): a build that ends
    /// on another bench stops the run, where the run went on with two programs' rows.
    pub(super) started_bench: Option<String>,
    /// The run's token: once cancelled, a build in flight is killed (its point is not run).
    pub(super) cancel: super::Cancel,
}

impl BuildCtx {
    pub(super) fn new(spec: &Spec, bench: Bench, toolchain: Toolchain, cache: &Path) -> BuildCtx {
        let cache = Cache::new(cache);
        cache.remove_stale_scratch();
        BuildCtx {
            holder: cache.holder(),
            spec: spec.clone(),
            bench,
            toolchain,
            cache,
            clock: Clock(Instant::now()),
            inflight: Mutex::default(),
            inputs: Mutex::default(),
            inputs_file: None,
            started_bench: None,
            cancel: super::Cancel::new(),
        }
    }

    /// Keeps the list of the files this run's builds read in `run_dir`, which a resume checks
    /// ([`super::resume`]); a resumed run's list goes on from what it holds.
    pub(super) fn keep_inputs_in(&mut self, run_dir: &Path) {
        let file = store::RunDir::new(run_dir).build_inputs();
        // Only as a file: a FIFO at the name hung the resume (review 17 C6).
        let had = store::read_regular(&file).unwrap_or_default();
        if let Ok(mut inputs) = self.inputs.lock() {
            inputs.0.extend(cache::read_list(&had));
        }
        self.inputs_file = Some(file);
    }

    /// Adds the files entry `key`'s build read to the run's list, written again (whole, then
    /// renamed) when it grew. A list that cannot be written is the resume's loss only.
    fn note_inputs(&self, key: &str) {
        let Some(file) = &self.inputs_file else {
            return;
        };
        let Ok(mut inputs) = self.inputs.lock() else {
            return;
        };
        let (files, keys) = &mut *inputs;
        if !keys.insert(key.to_string()) {
            return;
        }
        let before = files.len();
        for (path, hash) in self.cache.inputs(key) {
            files.entry(path).or_insert(hash);
        }
        if files.len() > before {
            let text = cache::write_list("the files this run's builds read", files.iter());
            let _ = store::write_atomic(file, text.as_bytes());
        }
    }

    pub(super) fn build(&self, point: Point, dir: PathBuf) -> Built {
        let started = self.clock.now();
        let t0 = Instant::now();
        let mut result = self.build_inner(&point, &dir);
        // Looked at after the build: an edit before the compiler read the file is caught; one
        // after it does not change the binary.
        let now = self
            .started_bench
            .as_ref()
            .map(|was| bench_changed(self.bench.fingerprint(), was));
        if !result.as_ref().is_err_and(|e| e.stops_the_run()) {
            match now {
                Some(Ok(true)) => {
                    result = Err(PointError::BenchChanged {
                        bench: self.bench.name.clone(),
                    })
                }
                Some(Err(e)) => result = Err(PointError::ReadBench(e)),
                _ => {}
            }
        }
        let (binary, cached) = match result {
            Ok((b, cached)) => (Ok(b), cached),
            Err(e) => (Err(Arc::new(e)), false),
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

    fn build_inner(&self, point: &Point, dir: &Path) -> Result<(PathBuf, bool), PointError> {
        let rendered = render::render(&self.bench, &self.spec, point)?;
        // What sweep writes in the point's folder is made anew: a FIFO or a link left at one of
        // its names (by an earlier try's program, or by hand) was waited on or written through
        // (review 16a A1).
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if e.file_type().is_ok_and(|t| !t.is_file() && !t.is_dir()) {
                let _ = std::fs::remove_file(e.path());
            }
        }
        render::write(&rendered, dir).map_err(|source| PointError::WriteHeaders {
            dir: dir.to_path_buf(),
            source,
        })?;
        let flags = compile::point_flags(&self.spec, point);
        let key = Cache::key(&self.toolchain, &self.bench, &rendered, &flags)
            .map_err(PointError::ReadBench)?;
        let log = dir.join(cache::LOG);
        let key_lock = self
            .inflight
            .lock()
            .map(|mut m| Arc::clone(m.entry(key.clone()).or_default()))
            .unwrap_or_default();
        let _building = key_lock.lock();
        if let Some(bin) = self.cache.use_entry(&self.holder, &key) {
            // Read only where it is a file: a FIFO in an entry (planted, or made by a build's
            // leftover process) hung every sweep that used it (review 16a A1, A3b).
            if let Ok(mut from) =
                crate::store::open_regular(&self.cache.entry(&key).join(cache::LOG))
            {
                let _ = std::fs::File::create(&log)
                    .and_then(|mut to| std::io::copy(&mut from, &mut to));
            }
            self.note_inputs(&key);
            return Ok((bin, true));
        }
        let scratch = self
            .cache
            .scratch(&key)
            .map_err(|source| PointError::Scratch {
                cache: self.cache.dir.clone(),
                source,
            })?;
        let cmd = compile::command(
            &self.toolchain,
            &self.bench,
            &flags,
            dir,
            Some(&scratch.join(cache::MAKE_DEPS)),
            &scratch.join(cache::BINARY),
        )
        // Whatever its flags say, the build writes beneath its scratch folder alone (review
        // 13a: `-Xassembler -adhln=FILE`, `-Xfatbin --create=FILE`, gold's
        // `--print-symbol-counts=FILE` and `--run` wrote outside the output folder).
        .confined_to(&scratch);
        let since = std::time::SystemTime::now();
        let outcome = compile::build(&cmd, self.spec.build_timeout, &log, &|| {
            self.cancel.is_cancelled()
        })
        .map_err(PointError::StartBuild)?;
        if !outcome.success() {
            let _ = std::fs::remove_dir_all(&scratch);
            let first = first_error_line(&log);
            let head = crate::parse::read_part(&log, 1 << 20, false);
            let no_room = head.is_some_and(|(t, _)| {
                [
                    "No space left on device",
                    "Disk quota exceeded",
                    "Read-only file system",
                ]
                .iter()
                .any(|w| t.contains(w))
            });
            let failed = PointError::Build {
                outcome,
                first,
                log,
            };
            if no_room {
                // The binary goes to the cache, the log to the point's folder (written: that one
                // had room), temporary files to TMPDIR: the one that is full, else the cache.
                let tmp = std::env::temp_dir();
                let full = [self.cache.dir.as_path(), dir, tmp.as_path()]
                    .into_iter()
                    .find(|d| crate::store::space::full(d))
                    .unwrap_or(&self.cache.dir);
                return Err(PointError::Full {
                    dir: full.to_path_buf(),
                    free: crate::store::space::free_bytes(full).unwrap_or(0),
                    what: failed.to_string(),
                });
            }
            return Err(failed.or_full(dir).or_full(&self.cache.dir));
        }
        // The build's temporary folder (its TMPDIR) is no part of the entry.
        let _ = std::fs::remove_dir_all(scratch.join("tmp"));
        // What sweep reads there must be files; what it writes there is made anew, whatever the
        // build left in its place (a link would be written through, a FIFO would hang).
        for name in [cache::BINARY, cache::MAKE_DEPS] {
            let left = std::fs::symlink_metadata(scratch.join(name));
            if left.is_ok_and(|m| !m.file_type().is_file()) {
                let _ = std::fs::remove_dir_all(&scratch);
                return Err(PointError::BuildLeftNoFile {
                    name: name.to_string(),
                    log,
                });
            }
        }
        for name in [cache::LOG, cache::DEPS] {
            let path = scratch.join(name);
            match std::fs::symlink_metadata(&path) {
                Ok(m) if m.is_dir() => {
                    let _ = std::fs::remove_dir_all(&path);
                }
                Ok(_) => {
                    let _ = std::fs::remove_file(&path);
                }
                Err(_) => {}
            }
        }
        if let Ok(text) = std::fs::read(&log) {
            let _ = cache::write_new(&scratch.join(cache::LOG), &text);
        }
        self.cache
            .record_deps(&scratch, dir, since)
            .map_err(PointError::CacheStore)?;
        let bin = self
            .cache
            .commit(&key, &scratch)
            .map_err(PointError::CacheStore)?;
        self.note_inputs(&key);
        Ok((bin, false))
    }
}

/// The first line of a build log (after the command line) that says `error`, else its first
/// line, cut to 160 characters.
fn first_error_line(log: &Path) -> Option<String> {
    let (text, _) = crate::parse::read_part(log, 1 << 20, false).unwrap_or_default();
    text.lines()
        .skip(1)
        .find(|l| l.contains("error"))
        .or_else(|| text.lines().skip(1).find(|l| !l.trim().is_empty()))
        .map(|l| crate::parse::one_line(l.trim(), 160))
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
    /// A Ctrl-C or SIGTERM stopped the builds: those it killed are neither built nor failed.
    pub interrupted: bool,
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
    opts: &BuildOptions,
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
    // A build folder, not a run: `sweep run` never resumes it (state `build`).
    let manifest = Manifest {
        sweep: spec.name.clone(),
        spec_path: spec.path.display().to_string(),
        spec_hash: spec.hash.clone(),
        spec: spec.text.clone(),
        bench: spec.bench.clone(),
        state: store::RunState::Build,
        ..Manifest::default()
    };
    let dir = store::new_run_dir(&opts.output, &spec.name, "-build", &manifest)?;
    // From here a first Ctrl-C stops the builds and says what was built (before, it ends sweep).
    opts.cancel.working_in(dir.clone());
    let mut ctx = BuildCtx::new(spec, bench, toolchain, &opts.cache);
    ctx.cancel = opts.cancel.clone();
    let next = AtomicUsize::new(0);
    let report = Mutex::new(BuildReport {
        dir: dir.clone(),
        arch: ctx.toolchain.arch.clone(),
        arch_from: ctx.toolchain.arch_from.clone(),
        ..BuildReport::default()
    });
    // The first failure that every later point would share (disk full, no descriptors): the
    // build stops there, as a run does, rather than fail every point for it.
    let stopped: Mutex<Option<DriverError>> = Mutex::new(None);
    let stopping = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        // No more threads than points (see `Session::execute`).
        for k in 0..opts.jobs.clamp(1, points.len().max(1)) {
            let spawned = std::thread::Builder::new().spawn_scoped(s, || loop {
                if opts.cancel.is_cancelled() || stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Some(p) = points.get(next.fetch_add(1, Ordering::SeqCst)) else {
                    break;
                };
                let b = ctx.build(p.clone(), store::RunDir::new(&dir).point(&p.id));
                if let Some(e) = b.binary.as_ref().err().filter(|e| e.stops_the_run()) {
                    stopping.store(true, Ordering::SeqCst);
                    if let Ok(mut first) = stopped.lock() {
                        first.get_or_insert(DriverError::BuildStopped {
                            point: p.label(),
                            source: Arc::clone(e),
                        });
                    }
                    break;
                }
                if let Ok(mut r) = report.lock() {
                    match &b.binary {
                        Ok(_) if b.cached => r.cached += 1,
                        Ok(_) => r.built += 1,
                        // Killed by the interrupt, not failed (review 11a M4: each build in
                        // flight was told failed, "killed by signal 9", and the build exited 1).
                        Err(_) if opts.cancel.is_cancelled() => {}
                        Err(e) => r.failed.push(format!("{}: {e}", p.label())),
                    }
                }
            });
            if let Err(e) = spawned {
                // Fewer build threads than asked for (EAGAIN under a memory or process limit):
                // those started build every point; with none, nothing can be built.
                if k == 0 {
                    if let (Ok(mut first), Some(p)) = (stopped.lock(), points.first()) {
                        first.get_or_insert(DriverError::BuildStopped {
                            point: p.label(),
                            source: Arc::new(PointError::StartBuild(
                                crate::exec::ExecError::Spawn {
                                    line: "a build thread of sweep's".into(),
                                    source: e,
                                },
                            )),
                        });
                    }
                }
                break;
            }
        }
    });
    if let Some(e) = stopped.into_inner().ok().flatten() {
        return Err(e);
    }
    let mut r = report.into_inner().unwrap_or_default();
    r.wall = wall.elapsed();
    r.interrupted = opts.cancel.is_cancelled();
    Ok(r)
}

/// Whether the bench's files changed since the run started (`was`, their fingerprint then), by
/// their fingerprint `now`. Out of descriptors or memory the bench cannot be read again: that is
/// the error, which stops the run as itself (it was told as an edit of the bench that nobody
/// made). Any other failure to read it (a file gone, a link broken) is a change.
fn bench_changed(
    now: Result<String, render::RenderError>,
    was: &str,
) -> Result<bool, std::io::Error> {
    let scarce = |e: &std::io::Error| {
        matches!(
            e.raw_os_error(),
            Some(libc::EMFILE | libc::ENFILE | libc::ENOMEM)
        )
    };
    match now {
        Ok(now) => Ok(now != was),
        Err(render::RenderError::Io { source, .. }) if scarce(&source) => Err(source),
        Err(render::RenderError::BadLink {
            cause: render::LinkError::Io(source),
            ..
        }) if scarce(&source) => Err(source),
        Err(_) => Ok(true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Review 10a, M3: out of descriptors while the bench was read again after a build, the run
    /// stopped saying the bench had been edited while it ran.
    #[test]
    fn a_bench_that_cannot_be_read_for_want_of_descriptors_is_no_changed_bench() {
        let emfile = || std::io::Error::from_raw_os_error(libc::EMFILE);
        let io = render::RenderError::Io {
            path: "cuda/x/x.cu".into(),
            source: emfile(),
        };
        let stopped = PointError::ReadBench(bench_changed(Err(io), "a").unwrap_err());
        assert!(stopped.stops_the_run(), "{stopped}");
        assert!(
            stopped.to_string().contains("Too many open files"),
            "{stopped}"
        );
        let walk = render::RenderError::BadLink {
            link: "cuda/x".into(),
            target: String::new(),
            cause: render::LinkError::Io(emfile()),
        };
        assert!(bench_changed(Err(walk), "a").is_err());
        let gone = render::RenderError::Io {
            path: "cuda/x/x.cu".into(),
            source: std::io::Error::from_raw_os_error(libc::ENOENT),
        };
        assert!(
            bench_changed(Err(gone), "a").unwrap(),
            "a file gone is a change"
        );
        assert!(!bench_changed(Ok("a".into()), "a").unwrap());
        assert!(bench_changed(Ok("b".into()), "a").unwrap());
    }
}
