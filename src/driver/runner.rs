//! The run stage of the driver: one runner per GPU (or the host) takes its points strictly one
//! at a time, in its order, as soon as each is built, and starts the next gated program early.

use super::builder::{BuildCtx, Built};
use super::hold::Rest;
use super::outcome::{PointError, Ran};
use super::probe::{self, Found, Probe, Window};
use crate::events::Event;
use crate::exec::{Exit, Started};
use crate::parse;
use crate::run;
use crate::spec::Spec;
use crate::store::{self, space, GpuState, GpuTag, Row, Status};
use std::collections::{BTreeMap, VecDeque};
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::Duration;

/// What the runners share: the build context and where events go. Every row goes out as an
/// event, to the listeners of src/driver/dispatch.rs (the CSVs among them).
pub(super) struct Shared<'a> {
    pub(super) ctx: &'a BuildCtx,
    pub(super) emit: &'a (dyn Fn(Event) + Sync),
    /// Holds the measure lock of each GPU (see [`store::RunDir::measure_lock`]).
    pub(super) run_dir: std::path::PathBuf,
    /// The last pass of a `repeat` run: each raw row goes out as `Raw`, and the row combined over
    /// all passes as the point's.
    pub(super) aggregate: Option<super::repeat::Aggregator>,
    /// `recheck`'s first pass: a row whose samples fall into two groups goes out as `Held` (to
    /// `passes/recheck.csv`), not as the point's.
    pub(super) hold: bool,
    /// Control re-runs are made (`control_every` > 0, one pass); their rows go out as `Control`.
    pub(super) controls: bool,
    /// Numbers the control folders (`points/<id>/control-<n>`) across runners and resumes: starts
    /// at the rows `controls.csv` already holds.
    pub(super) controls_made: std::sync::atomic::AtomicUsize,
    /// Where a runner says that the run must stop (a file of its own could not be written).
    pub(super) halt: &'a super::session::Halt,
    pub(super) cancel: &'a super::Cancel,
    /// How long each GPU rests between two programs (see [`super::hold::Rest`]).
    pub(super) rest: Duration,
}

/// A started program, or why it could not start.
type Launched = Result<Started, std::sync::Arc<PointError>>;

/// The command of a built point's program: on `gpu` when there is one, and waiting at the gate
/// (`lock`) when the point is gated. Its timed run, its control re-runs and its probes all run it.
pub(super) fn program(
    spec: &Spec,
    b: &Built,
    binary: &Path,
    gpu: Option<&GpuState>,
    lock: &Path,
) -> crate::exec::Cmd {
    let uuid = gpu.map(|g| g.uuid.as_str());
    run::command(spec, binary, &b.dir, uuid, b.gated.then_some(lock))
}

/// Starts the program of a built point (one that honours the gate waits there until
/// [`Started::go`]), or says why not.
fn launch(spec: &Spec, b: &Built, gpu: Option<&GpuState>, lock: &std::path::Path) -> Launched {
    let binary = b.binary.as_ref().map_err(std::sync::Arc::clone)?;
    let cmd = program(spec, b, binary, gpu, lock);
    let path = b.dir.join("run.cmd");
    std::fs::write(&path, format!("{}\n", cmd.line()))
        .map_err(|source| PointError::WriteFile { path, source })?;
    run::start(&cmd, &b.dir, b.gated).map_err(|e| PointError::Start(e).into())
}

/// Lets a started point run to its end and classifies what happened.
fn finish(spec: &Spec, b: &Built, started: Launched) -> Ran {
    let outcome = match started.map(|s| s.wait(spec.run_timeout)) {
        Ok(Ok(o)) => o,
        Ok(Err(e)) => return Ran::failed(PointError::Start(e).or_full(&b.dir)),
        Err(e) => return Ran::failed(e),
    };
    let run_s = outcome.elapsed.as_secs_f64();
    let stdout_path = b.dir.join(run::STDOUT);
    let stderr_path = b.dir.join(run::STDERR);
    // The program wrote its stdout to the file; sweep reads it once, up to the cap. A file that
    // cannot be opened (its folder moved away while the point ran, no descriptors) is the run's
    // failure: read as empty, it recorded `no_metric` for good, blamed on the program.
    let size = match crate::store::open_regular(&stdout_path).and_then(|f| f.metadata()) {
        Ok(m) => m.len(),
        Err(source) => {
            return Ran::failed(PointError::ReadOutput {
                path: stdout_path,
                source,
            })
        }
    };
    let too_big = size > parse::MAX_OUTPUT;
    let stdout = match too_big {
        true => String::new(),
        false => parse::read_part(&stdout_path, parse::MAX_OUTPUT, false)
            .map(|(text, _)| text)
            .unwrap_or_default(),
    };
    let parsed = parse::parse(&stdout, &spec.metrics, spec.target_rel_ci());
    drop(stdout);
    let verdict = if matches!(outcome.exit, Exit::TimedOut(_)) {
        Err(PointError::TimedOut {
            outcome,
            stderr: stderr_path,
        })
    } else if too_big {
        Err(PointError::TooMuchOutput {
            bytes: size,
            stdout: stdout_path,
        })
    } else if parsed.check_failed.is_some() || outcome.exit == Exit::Code(3) {
        let what = parsed
            .check_failed
            .clone()
            .unwrap_or_else(|| "exit code 3".into());
        Err(PointError::WrongResult {
            what,
            stdout: stdout_path,
        })
    } else if !outcome.success() {
        Err(PointError::Failed {
            outcome,
            last_error: parse::last_error_line(&stderr_path),
            stderr: stderr_path,
        })
    } else if !parsed.missing.is_empty() {
        // Metrics printed on the wrong stream are named: "no metric in the output" with the
        // log of stdout sent the user to the file that does not have them.
        let err_text = parse::read_part(&stderr_path, parse::MAX_OUTPUT, false)
            .map(|(text, _)| text)
            .unwrap_or_default();
        let on_err = parse::parse(&err_text, &spec.metrics, spec.target_rel_ci());
        let on_stderr: Vec<String> = parsed
            .missing
            .iter()
            .filter(|c| on_err.values.contains_key(*c) && !parsed.unreadable.contains_key(*c))
            .cloned()
            .collect();
        if on_stderr.is_empty() {
            Err(PointError::NoMetric {
                missing: parsed.missing.clone(),
                unreadable: parsed.unreadable.clone(),
                wrong_unit: parsed.wrong_unit.clone(),
                bad_stat: parsed.bad_stat.clone(),
                stdout: stdout_path,
            })
        } else {
            Err(PointError::OnStderr {
                missing: parsed.missing.clone(),
                on_stderr,
                stderr: stderr_path,
            })
        }
    } else if parsed.unstable {
        Ok(Status::Unstable)
    } else if parsed.noisy {
        Ok(Status::Noisy)
    } else {
        Ok(Status::Ok)
    };
    // A failed point has no metric statuses, as it has no values in the CSV.
    let statuses = if verdict.is_ok() {
        parsed.statuses
    } else {
        BTreeMap::new()
    };
    Ran {
        values: parsed.values,
        statuses,
        run_s,
        verdict: verdict.map_err(|e| std::sync::Arc::new(e.or_full(&b.dir))),
    }
}

/// A point this runner measured, kept for a control re-run.
struct Measured {
    position: usize,
    built: Built,
}

/// The position whose point is re-run after position `pos`, when one is: every `every` points
/// the middle of the block just measured, so that the two processes run about `every / 2`
/// points apart and the controls cover the whole sweep.
fn control_target(pos: usize, every: usize) -> Option<usize> {
    (every > 0 && (pos + 1).is_multiple_of(every)).then(|| pos + 1 - every.div_ceil(2))
}

/// Runs the program of a point measured before once more, in a fresh process that writes into
/// `points/<id>/control-<n>/`; its row goes out for `controls.csv`.
fn control(
    shared: &Shared,
    m: &Measured,
    gpu: Option<&GpuState>,
    lock: &Path,
    n: usize,
    rest: &mut Rest,
) {
    let dir = m.built.dir.join(format!("control-{n}"));
    if let Err(source) = std::fs::create_dir_all(&dir) {
        let e = PointError::WriteFile { path: dir, source };
        shared.halt.stop(&m.built.point, e.into(), shared.cancel);
        return;
    }
    let b = Built {
        point: m.built.point.clone(),
        dir,
        binary: m.built.binary.clone(),
        gated: m.built.gated,
        build_s: 0.0,
        cached: true,
        started: 0.0,
        ended: 0.0,
    };
    let mut started = launch(&shared.ctx.spec, &b, gpu, lock);
    rest.wait();
    if let Ok(s) = started.as_mut() {
        s.go();
    }
    let ran = finish(&shared.ctx.spec, &b, started);
    rest.exited();
    if let Some(e) = ran.stops_the_run() {
        shared.halt.stop(&b.point, e, shared.cancel);
        return;
    }
    let row = row(&b, gpu, ran);
    (shared.emit)(Event::Control { row: &row });
}

/// The row of a built point from what [`finish`] found: here its failure becomes words.
fn row(b: &Built, gpu: Option<&GpuState>, ran: Ran) -> Row {
    let (status, error) = (ran.status(), ran.error());
    Row {
        point: b.point.clone(),
        status,
        statuses: ran.statuses,
        values: ran.values,
        build_s: b.build_s,
        run_s: ran.run_s,
        cached: b.cached,
        gpu: gpu
            .map(|g| GpuTag {
                index: g.index.clone(),
                name: g.name.clone(),
                uuid: g.uuid.clone(),
            })
            .unwrap_or_default(),
        error,
    }
}

/// Whether SWEEP_TRACE is set: the timing core then traces its phases on stderr, and the runner
/// its own with [`trace`].
fn tracing() -> bool {
    std::env::var_os("SWEEP_TRACE").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Appends "# trace <phase> <unix time in s>" to the point's `harness.trace` (when the gate
/// opened, when the program's exit was seen).
fn trace(dir: &std::path::Path, phase: &str) {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let line = format!("# trace {phase} {}.{:09}\n", t.as_secs(), t.subsec_nanos());
    use std::io::Write;
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("harness.trace"))
    {
        let _ = f.write_all(line.as_bytes());
    }
}

/// The runner's loop: measures, one at a time in its order, the `count` points that arrive on
/// `rx` as (position in this runner's order, built point).
pub(super) fn measure(
    shared: &Shared,
    count: usize,
    rx: mpsc::Receiver<(usize, Built)>,
    gpu: Option<GpuState>,
    prestart: usize,
) {
    let mut r = Runner::new(shared, count, gpu, prestart);
    while r.next < count && !shared.cancel.is_cancelled() {
        match r.await_builds(&rx) {
            Wait::Ready => {}
            Wait::Again => continue,
            Wait::Over => break,
        }
        let Some(b) = r.pending.remove(&r.next) else {
            continue;
        };
        // A build killed by the interrupt is no failure of its point: not run, not recorded.
        if shared.cancel.is_cancelled() && b.binary.is_err() {
            break;
        }
        (shared.emit)(Event::Running { point: &b.point });
        let run_start = shared.ctx.clock.now();
        let (started, gate_t) = r.start(&b);
        r.next += 1;
        if prestart > 0 {
            r.start_ahead(&rx);
        }
        let ran = finish(&shared.ctx.spec, &b, started);
        r.rest.exited();
        let exit_t = crate::profile::power::now();
        if let Some(e) = ran.stops_the_run() {
            shared.halt.stop(&b.point, e, shared.cancel);
            break;
        }
        let raw = row(&b, r.gpu.as_ref(), ran);
        let measured_ok = raw.status.measured();
        if r.tracing {
            trace(&b.dir, "reaped");
        }
        if r.record(&b, raw, (gate_t, exit_t), run_start).is_break() {
            break;
        }
        if !r.probes.is_empty() {
            r.rest.exited();
        }
        r.control(b, measured_ok);
    }
}

/// Whether the runner's next point may start.
enum Wait {
    Ready,
    /// Not yet: a build came, or none in 50 ms.
    Again,
    /// No more builds will come.
    Over,
}

/// One runner's state: its GPU, its probes, the points built for it and those started ahead.
struct Runner<'a, 's> {
    shared: &'a Shared<'s>,
    spec: &'a Spec,
    count: usize,
    gpu: Option<GpuState>,
    /// Holds the measure lock of this GPU (see [`store::RunDir::measure_lock`]).
    lock: std::path::PathBuf,
    prestart: usize,
    tracing: bool,
    probes: Vec<Box<dyn Probe>>,
    /// Built points not run yet, by position.
    pending: BTreeMap<usize, Built>,
    /// The next points (consecutive positions), already started and waiting at their gates.
    ahead: VecDeque<(usize, Launched)>,
    /// The position of the next point to run.
    next: usize,
    builds_done: bool,
    /// Re-run a point every this many (0: no control re-runs).
    every: usize,
    /// The last `every` points measured, for a control re-run.
    measured: VecDeque<Measured>,
    /// When this GPU's last program exited: the next gate waits out the rest.
    rest: Rest,
}

impl<'a, 's> Runner<'a, 's> {
    fn new(shared: &'a Shared<'s>, count: usize, gpu: Option<GpuState>, prestart: usize) -> Self {
        let spec = &shared.ctx.spec;
        let lock = store::RunDir::new(&shared.run_dir)
            .measure_lock(gpu.as_ref().map(|g| g.index.as_str()));
        // Short sweeps re-run more often, so that every sweep gets at least four controls.
        let every = if shared.controls {
            (spec.control_every as usize).min((count / 4).max(1))
        } else {
            0
        };
        Runner {
            shared,
            spec,
            count,
            tracing: tracing(),
            lock,
            prestart,
            // `[profile]`: started with the runner (power is sampled while it runs).
            probes: probe::probes(spec, gpu.as_ref()),
            gpu,
            pending: BTreeMap::new(),
            ahead: VecDeque::new(),
            next: 0,
            builds_done: false,
            every,
            measured: VecDeque::new(),
            rest: Rest::new(shared.rest),
        }
    }

    /// A point starts only once it and the `prestart` points after it have come from the
    /// builder (built, failed or cached), so that a cold run starts its programs in the same
    /// pattern as a warm one: every program allocates and measures with its successors started
    /// beside it. Where a program's buffers land depends on that, and a cold run whose builds
    /// lagged moved global-store values by up to 7 % (docs/measurements.md).
    fn await_builds(&mut self, rx: &mpsc::Receiver<(usize, Built)>) -> Wait {
        let wanted = self.next + 1 + if self.builds_done { 0 } else { self.prestart };
        if (self.next..wanted.min(self.count)).all(|k| self.pending.contains_key(&k)) {
            return Wait::Ready;
        }
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok((k, b)) => {
                self.pending.insert(k, b);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) if self.builds_done => return Wait::Over,
            Err(mpsc::RecvTimeoutError::Disconnected) => self.builds_done = true,
        }
        Wait::Again
    }

    /// Starts the point (or takes it from those started ahead) and opens its gate; when it did.
    fn start(&mut self, b: &Built) -> (Launched, f64) {
        let mut started = match self.ahead.pop_front() {
            Some((k, s)) if k == self.next => s,
            _ => {
                self.ahead.clear();
                launch(self.spec, b, self.gpu.as_ref(), &self.lock)
            }
        };
        self.rest.wait();
        let gate_t = crate::profile::power::now();
        if let Ok(s) = started.as_mut() {
            s.go();
            if self.tracing {
                trace(&b.dir, "go");
            }
        }
        (started, gate_t)
    }

    /// Extends the run of started points next, next+1, ... up to `prestart` of them; stops at
    /// the first that is not built yet or does not honour the gate.
    fn start_ahead(&mut self, rx: &mpsc::Receiver<(usize, Built)>) {
        while let Ok((k, built)) = rx.try_recv() {
            self.pending.insert(k, built);
        }
        let mut k = self.ahead.back().map_or(self.next, |(k, _)| k + 1);
        while k < self.next + self.prestart && k < self.count {
            let Some(nb) = self.pending.get(&k).filter(|nb| nb.gated) else {
                break;
            };
            let launched = launch(self.spec, nb, self.gpu.as_ref(), &self.lock);
            self.ahead.push_back((k, launched));
            k += 1;
        }
    }

    /// What a run gave goes out: held for `recheck`, a raw row of `repeat` (and the combined
    /// row once the point's processes are complete), or the point's row; with what the probes
    /// found in its window. Breaks when the run must stop (a probe failed on a full disk).
    fn record(
        &self,
        b: &Built,
        mut raw: Row,
        (from, to): (f64, f64),
        run_start: f64,
    ) -> ControlFlow<()> {
        let (spec, emit) = (self.spec, self.shared.emit);
        let measured_ok = raw.status.measured();
        let held = (measured_ok && self.shared.hold)
            .then(|| super::recheck::two_groups(spec, &raw))
            .flatten();
        // Whether this process gives the point its row; counters are that process's (`repeat`,
        // `recheck`): an earlier one would profile for nothing.
        let gives_the_row = match &self.shared.aggregate {
            Some(agg) => agg.completes(spec, &raw),
            None => spec.repeat <= 1 && held.is_none(),
        };
        let mut found = Found::default();
        if measured_ok {
            let window = Window {
                built: b,
                gpu: self.gpu.as_ref(),
                lock: &self.lock,
                from,
                to,
                gives_the_row,
            };
            for p in &self.probes {
                found.add(p.after_run(spec, &window));
            }
        }
        if let Some(what) = found.why.as_ref().filter(|_| space::full(&b.dir)) {
            let e = PointError::Full {
                dir: b.dir.clone(),
                free: space::free_bytes(&b.dir).unwrap_or(0),
                what: what.clone(),
            };
            self.shared
                .halt
                .stop(&b.point, e.into(), self.shared.cancel);
            return ControlFlow::Break(());
        }
        found.apply(&mut raw);
        let run_end = self.shared.ctx.clock.now();
        let row = match (&self.shared.aggregate, &held) {
            (_, Some(why)) => {
                emit(Event::Held { row: &raw, why });
                None
            }
            (Some(agg), None) => {
                emit(Event::Raw { row: &raw });
                gives_the_row
                    .then(|| agg.combine(&raw))
                    .map(|mut combined| {
                        if combined.status.measured() {
                            // Counters and power are the last process's: they are not measurements
                            // to median.
                            combined.values.extend(found.values.clone());
                        }
                        combined
                    })
            }
            (None, None) => Some(raw),
        };
        if let Some(mut row) = row {
            for p in &self.probes {
                p.on_row(spec, &mut row);
            }
            emit(Event::Finished {
                row: &row,
                run_start,
                run_end,
            });
        }
        ControlFlow::Continue(())
    }

    /// Keeps the point just run for a control re-run, and re-runs the one due (see
    /// [`control_target`]).
    fn control(&mut self, b: Built, measured_ok: bool) {
        if self.every == 0 {
            return;
        }
        let pos = self.next - 1;
        if measured_ok {
            self.measured.push_back(Measured {
                position: pos,
                built: b,
            });
            while self.measured.len() > self.every {
                self.measured.pop_front();
            }
        }
        let Some(t) = control_target(pos, self.every) else {
            return;
        };
        if let Some(m) = self.measured.iter().find(|m| m.position == t) {
            if !self.shared.cancel.is_cancelled() {
                let n = self.shared.controls_made.fetch_add(1, Ordering::SeqCst);
                control(
                    self.shared,
                    m,
                    self.gpu.as_ref(),
                    &self.lock,
                    n,
                    &mut self.rest,
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::control_target;

    #[test]
    fn controls_re_run_the_middle_of_each_block() {
        let t: Vec<(usize, usize)> = (0..100)
            .filter_map(|p| control_target(p, 32).map(|c| (p, c)))
            .collect();
        assert_eq!(t, vec![(31, 16), (63, 48), (95, 80)]);
        assert_eq!(control_target(0, 1), Some(0));
        assert_eq!(control_target(2, 3), Some(1));
        assert_eq!(control_target(5, 0), None);
    }
}
