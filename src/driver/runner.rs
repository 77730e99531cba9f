//! The run stage of the driver: one runner per GPU (or the host) takes its points strictly one
//! at a time, in its order, as soon as each is built, and starts the next gated program early.

use super::build::{BuildCtx, Built};
use super::STOP;
use crate::events::{Event, Summary};
use crate::exec::{Exit, Started};
use crate::parse;
use crate::run;
use crate::spec::Spec;
use crate::store::{self, CsvSink, GpuState, GpuTag, Row, Status, TimelineEntry};
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Mutex};
use std::time::Duration;

/// What the runners share: the build context, the CSV and what the summary and manifest collect.
pub(super) struct Shared<'a> {
    pub(super) ctx: &'a BuildCtx,
    pub(super) sink: Mutex<CsvSink>,
    pub(super) summary: Mutex<Summary>,
    pub(super) timeline: Mutex<Vec<TimelineEntry>>,
    pub(super) write_error: Mutex<Option<store::StoreError>>,
    pub(super) emit: &'a (dyn Fn(Event) + Sync),
    /// Holds the measure lock of each GPU (see [`run::measure_lock`]).
    pub(super) run_dir: std::path::PathBuf,
    /// The last pass of a `repeat` run: raw rows go to its pass CSV, and `sink` gets the row
    /// combined over all passes.
    pub(super) aggregate: Option<super::repeat::Aggregator>,
}

impl Shared<'_> {
    /// Appends `row` to `sink`; a write error is kept for the driver and stops the sweep.
    fn append(&self, sink: &Mutex<CsvSink>, row: &Row) {
        if let Ok(mut sink) = sink.lock() {
            if let Err(e) = sink.append(row) {
                if let Ok(mut w) = self.write_error.lock() {
                    *w = Some(e);
                }
                STOP.store(true, Ordering::SeqCst);
            }
        }
    }
}

/// A started program, or why it could not start.
type Launched = Result<Started, (Status, String)>;

/// Starts the program of a built point (one that honours the gate waits there until
/// [`Started::go`]), or says why not.
fn launch(spec: &Spec, b: &Built, gpu: Option<&GpuState>, lock: &std::path::Path) -> Launched {
    let binary = b.binary.as_ref().map_err(|e| e.clone())?;
    let uuid = gpu.map(|g| g.uuid.as_str());
    let lock = b.gated.then_some(lock);
    let cmd = run::command(spec, binary, &b.dir, uuid, lock);
    let _ = std::fs::write(b.dir.join("run.cmd"), format!("{}\n", cmd.line()));
    run::start(&cmd, &b.dir, b.gated).map_err(|e| (Status::RunFailed, e.to_string()))
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
    } else if parsed.unstable {
        (Status::Unstable, String::new())
    } else if parsed.noisy {
        (Status::Noisy, String::new())
    } else {
        (Status::Ok, String::new())
    };
    (status, parsed.values, run_s, error)
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

/// Runs `count` points that arrive on `rx` as (position in this runner's order, built point).
pub(super) fn run_queue(
    shared: &Shared,
    count: usize,
    rx: mpsc::Receiver<(usize, Built)>,
    gpu: Option<GpuState>,
    prestart: usize,
) {
    let (ctx, emit) = (shared.ctx, shared.emit);
    let tracing = tracing();
    let lock = run::measure_lock(&shared.run_dir, gpu.as_ref().map(|g| g.index.as_str()));
    let mut pending: BTreeMap<usize, Built> = BTreeMap::new();
    // The next points (consecutive positions), already started and waiting at their gates.
    let mut ahead: VecDeque<(usize, Launched)> = VecDeque::new();
    let mut next = 0;
    while next < count && !STOP.load(Ordering::SeqCst) {
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
        let mut started = match ahead.pop_front() {
            Some((k, s)) if k == next => s,
            _ => {
                ahead.clear();
                launch(&ctx.spec, &b, gpu.as_ref(), &lock)
            }
        };
        if let Ok(s) = started.as_mut() {
            s.go();
            if tracing {
                trace(&b.dir, "go");
            }
        }
        next += 1;
        if prestart > 0 {
            while let Ok((k, built)) = rx.try_recv() {
                pending.insert(k, built);
            }
            // Extend the run of started points next, next+1, ... up to `prestart` of them; stop at
            // the first that is not built yet or does not honour the gate.
            let mut k = ahead.back().map_or(next, |(k, _)| k + 1);
            while k < next + prestart && k < count {
                let Some(nb) = pending.get(&k).filter(|nb| nb.gated) else {
                    break;
                };
                ahead.push_back((k, launch(&ctx.spec, nb, gpu.as_ref(), &lock)));
                k += 1;
            }
        }
        let (status, values, run_s, error) = finish(&ctx.spec, &b, started);
        if tracing {
            trace(&b.dir, "reaped");
        }
        let run_end = ctx.clock.now();
        let raw = Row {
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
        let row = match &shared.aggregate {
            Some(agg) => {
                shared.append(&agg.pass_sink, &raw);
                agg.combine(&raw)
            }
            None => raw,
        };
        shared.append(&shared.sink, &row);
        if let Ok(mut t) = shared.timeline.lock() {
            t.push(TimelineEntry {
                point_id: b.point.id.clone(),
                build_start: b.started,
                build_end: b.ended,
                run_start,
                run_end,
                cached: b.cached,
            });
        }
        if let Ok(mut sm) = shared.summary.lock() {
            sm.record(&row);
        }
        emit(Event::Finished { row: &row });
    }
}
