//! The run stage of the driver: one runner per GPU (or the host) takes its points strictly one
//! at a time, in its order, as soon as each is built, and starts the next gated program early.

use super::builder::{BuildCtx, Built};
use super::outcome::{PointError, Ran};
use super::STOP;
use crate::events::Event;
use crate::exec::{Exit, Started};
use crate::parse;
use crate::run;
use crate::spec::Spec;
use crate::store::{GpuState, GpuTag, Row, Status};
use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::Duration;

/// What the runners share: the build context and where events go. Every row goes out as an
/// event, to the listeners of src/driver/dispatch.rs (the CSVs among them).
pub(super) struct Shared<'a> {
    pub(super) ctx: &'a BuildCtx,
    pub(super) emit: &'a (dyn Fn(Event) + Sync),
    /// Holds the measure lock of each GPU (see [`run::measure_lock`]).
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
    pub(super) halt: &'a super::Halt,
}

/// A started program, or why it could not start.
type Launched = Result<Started, std::sync::Arc<PointError>>;

/// The command of a built point's program: on `gpu` when there is one, and waiting at the gate
/// (`lock`) when the point is gated. Its timed run, its ncu pass and its power pass all run it.
fn program(
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
    let stdout = crate::parse::read_output(&stdout_path).unwrap_or_default();
    let parsed = parse::parse(&stdout, &spec.metrics, spec.target_rel_ci());
    let verdict = if matches!(outcome.exit, Exit::TimedOut(_)) {
        Err(PointError::TimedOut {
            outcome,
            stderr: stderr_path,
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
            last_error: run::last_error_line(&b.dir),
            stderr: stderr_path,
        })
    } else if !parsed.missing.is_empty() {
        Err(PointError::NoMetric {
            missing: parsed.missing.clone(),
            unreadable: parsed.unreadable.clone(),
            stdout: stdout_path,
        })
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

/// `[profile]` counters of a measured point: its binary once more under ncu, in the timing core's
/// profile mode, after its timed run and before the next point's gate opens (the GPU is this
/// runner's alone then). Returns the counter columns and, when some stay empty, why.
fn profile_point(
    spec: &Spec,
    b: &Built,
    gpu: Option<&GpuState>,
    lock: &Path,
) -> (BTreeMap<String, f64>, Option<String>) {
    use crate::profile::{ncu, run_program};
    let Some(p) = spec.profile.as_ref().filter(|p| !p.counters.is_empty()) else {
        return (BTreeMap::new(), None);
    };
    let Ok(binary) = b.binary.as_ref() else {
        return (BTreeMap::new(), None);
    };
    let fail = |why: String| (BTreeMap::new(), Some(format!("profile: {why}")));
    let ncu_path = match ncu::locate() {
        Ok(n) => n,
        Err(e) => return fail(e.to_string()),
    };
    let program = program(spec, b, binary, gpu, lock);
    let cmd = ncu::command(&ncu_path, p, &program, &b.dir);
    let _ = std::fs::write(b.dir.join(ncu::CMD), format!("{}\n", cmd.line()));
    let _ = std::fs::remove_file(b.dir.join(ncu::CSV));
    let (out_path, err_path) = (b.dir.join(ncu::STDOUT), b.dir.join(ncu::STDERR));
    let hint = "a longer `[profile] timeout_s`";
    if let Err(why) = run_program(&cmd, p.timeout, &out_path, &err_path, "ncu", Some(hint)) {
        return fail(why);
    }
    let csv = crate::parse::read_output(&b.dir.join(ncu::CSV)).unwrap_or_default();
    let stdout = crate::parse::read_output(&out_path).unwrap_or_default();
    let metrics: Vec<String> = spec
        .metrics
        .iter()
        .filter(|m| matches!(m.source, crate::spec::MetricSource::Core))
        .map(|m| m.name.clone())
        .collect();
    let read = ncu::read(&csv, &stdout, p, &metrics);
    let why = (!read.problems.is_empty()).then(|| {
        format!(
            "profile: {} (log: {})",
            read.problems.join("; "),
            b.dir.join(ncu::CSV).display()
        )
    });
    (read.values, why)
}

/// `[profile] power`: the point's power columns from the samples of its window (gate to exit),
/// and why they are empty when they are.
fn power_point(
    power: Option<&Result<crate::profile::power::NvidiaSmi, crate::profile::power::PowerError>>,
    from: f64,
    to: f64,
) -> (BTreeMap<String, f64>, Option<String>) {
    use crate::profile::power::{summarize, PowerSource};
    match power {
        Some(Ok(src)) => {
            let cols = summarize(&src.between(from, to), from, to);
            let why = cols.is_empty().then(|| {
                let what = src.trouble();
                format!(
                    "power: {}",
                    what.as_deref()
                        .unwrap_or("no sample while the point measured")
                )
            });
            (cols, why)
        }
        Some(Err(e)) => (BTreeMap::new(), Some(format!("power: {e}"))),
        None => (BTreeMap::new(), None),
    }
}

/// `[profile] metric_power_ms`: the point's program once more in the timing core's power mode,
/// after its timed run (and ncu) and before the next gate opens; each timing-core metric's watts
/// and value per watt (see [`crate::profile::metric_power`]).
fn metric_power_point(
    spec: &Spec,
    b: &Built,
    gpu: Option<&GpuState>,
    lock: &Path,
    power: Option<&Result<crate::profile::power::NvidiaSmi, crate::profile::power::PowerError>>,
) -> (BTreeMap<String, f64>, Option<String>) {
    use crate::profile::metric_power::{limit, run_pass};
    let (Some(every), Ok(binary)) = (
        spec.profile.as_ref().and_then(|p| p.metric_power),
        b.binary.as_ref(),
    ) else {
        return (BTreeMap::new(), None);
    };
    let source = match power {
        Some(Ok(src)) => src,
        Some(Err(e)) => return (BTreeMap::new(), Some(format!("power: {e}"))),
        None => return (BTreeMap::new(), None),
    };
    let wanted = power_wanted(spec);
    let program = program(spec, b, binary, gpu, lock);
    let limit = limit(every, wanted.len(), spec.run_timeout);
    run_pass(&program, &b.dir, every, limit, source, &wanted)
}

/// The metrics of a power pass: every timing-core metric.
fn power_wanted(spec: &Spec) -> Vec<crate::profile::metric_power::Wanted<'_>> {
    spec.metrics
        .iter()
        .filter(|m| matches!(m.source, crate::spec::MetricSource::Core))
        .map(|m| crate::profile::metric_power::Wanted {
            metric: &m.name,
            value_column: m.column(),
            unit_slug: crate::spec::unit_slug(&m.unit),
        })
        .collect()
}

/// Adds what profiling found to a row: its values, and a reason to `error` when the row has none.
fn add_profile(row: &mut Row, values: &BTreeMap<String, f64>, why: &Option<String>) {
    row.values
        .extend(values.iter().map(|(k, v)| (k.clone(), *v)));
    if let Some(w) = why {
        if row.error.is_empty() {
            row.error = w.clone();
        } else {
            row.error = format!("{}; {w}", row.error);
        }
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
fn control(shared: &Shared, m: &Measured, gpu: Option<&GpuState>, lock: &Path, n: usize) {
    let dir = m.built.dir.join(format!("control-{n}"));
    if let Err(source) = std::fs::create_dir_all(&dir) {
        let e = PointError::WriteFile { path: dir, source };
        shared.halt.stop(&m.built.point, e.into());
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
    if let Ok(s) = started.as_mut() {
        s.go();
    }
    let ran = finish(&shared.ctx.spec, &b, started);
    if let Some(e) = ran.stops_the_run() {
        shared.halt.stop(&b.point, e);
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
    let (ctx, emit) = (shared.ctx, shared.emit);
    let tracing = tracing();
    let lock = run::measure_lock(&shared.run_dir, gpu.as_ref().map(|g| g.index.as_str()));
    let mut pending: BTreeMap<usize, Built> = BTreeMap::new();
    // The next points (consecutive positions), already started and waiting at their gates.
    let mut ahead: VecDeque<(usize, Launched)> = VecDeque::new();
    let mut next = 0;
    // Short sweeps re-run more often, so that every sweep gets at least four controls.
    let every = if shared.controls {
        (ctx.spec.control_every as usize).min((count / 4).max(1))
    } else {
        0
    };
    let mut measured: VecDeque<Measured> = VecDeque::new();
    let mut builds_done = false;
    // `[profile] power`: this GPU's power and clock, sampled while the sweep runs.
    let power: Option<Result<crate::profile::power::NvidiaSmi, crate::profile::power::PowerError>> =
        ctx.spec
            .profile
            .as_ref()
            .filter(|p| p.samples_power())
            .map(|_| {
                let id = gpu.as_ref().map_or("0", |g| g.uuid.as_str());
                crate::profile::power::NvidiaSmi::start(id, 20)
            });
    while next < count && !STOP.load(Ordering::SeqCst) {
        // A point starts only once it and the `prestart` points after it have come from the
        // builder (built, failed or cached), so that a cold run starts its programs in the same
        // pattern as a warm one: every program allocates and measures with its successors
        // started beside it. Where a program's buffers land depends on that, and a cold run whose
        // builds lagged moved global-store values by up to 7 % (bench/cold_ab.txt).
        let wanted = next + 1 + if builds_done { 0 } else { prestart };
        if (next..wanted.min(count)).any(|k| !pending.contains_key(&k)) {
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok((k, b)) => {
                    pending.insert(k, b);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) if builds_done => break,
                Err(mpsc::RecvTimeoutError::Disconnected) => builds_done = true,
            }
            continue;
        }
        let Some(b) = pending.remove(&next) else {
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
        let gate_t = crate::profile::power::now();
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
        let ran = finish(&ctx.spec, &b, started);
        let exit_t = crate::profile::power::now();
        if let Some(e) = ran.stops_the_run() {
            shared.halt.stop(&b.point, e);
            break;
        }
        let mut raw = row(&b, gpu.as_ref(), ran);
        let measured_ok = raw.status.measured();
        if tracing {
            trace(&b.dir, "reaped");
        }
        let held = (measured_ok && shared.hold)
            .then(|| super::recheck::two_groups(&ctx.spec, &raw))
            .flatten();
        // Whether this process gives the point its row; counters are that process's (`repeat`,
        // `recheck`): an earlier one would profile for nothing.
        let last_pass = match &shared.aggregate {
            Some(agg) => agg.completes(&ctx.spec, &raw),
            None => ctx.spec.repeat <= 1 && held.is_none(),
        };
        let (mut extra, mut why) = if measured_ok && last_pass {
            profile_point(&ctx.spec, &b, gpu.as_ref(), &lock)
        } else {
            (BTreeMap::new(), None)
        };
        if measured_ok && ctx.spec.profile.as_ref().is_some_and(|p| p.power) {
            let (cols, power_why) = power_point(power.as_ref(), gate_t, exit_t);
            extra.extend(cols);
            why = why.or(power_why);
        }
        if measured_ok && last_pass {
            let (cols, power_why) =
                metric_power_point(&ctx.spec, &b, gpu.as_ref(), &lock, power.as_ref());
            extra.extend(cols);
            why = why.or(power_why);
        }
        if let Some(what) = why.as_ref().filter(|_| crate::store::space::full(&b.dir)) {
            let e = PointError::Full {
                dir: b.dir.clone(),
                free: crate::store::space::free_bytes(&b.dir).unwrap_or(0),
                what: what.clone(),
            };
            shared.halt.stop(&b.point, e.into());
            break;
        }
        add_profile(&mut raw, &extra, &why);
        let run_end = ctx.clock.now();
        let row = match (&shared.aggregate, &held) {
            (_, Some(why)) => {
                emit(Event::Held { row: &raw, why });
                None
            }
            (Some(agg), None) => {
                emit(Event::Raw { row: &raw });
                last_pass.then(|| agg.combine(&raw)).map(|mut combined| {
                    if combined.status.measured() {
                        // Counters and power are the last process's: they are not measurements to
                        // median.
                        combined
                            .values
                            .extend(extra.iter().map(|(k, v)| (k.clone(), *v)));
                    }
                    combined
                })
            }
            (None, None) => Some(raw),
        };
        if let Some(mut row) = row {
            if ctx
                .spec
                .profile
                .as_ref()
                .is_some_and(|p| p.metric_power.is_some())
            {
                // From the row's final values: with `repeat`, the median over the processes.
                crate::profile::metric_power::add_per_watt(
                    &mut row.values,
                    &power_wanted(&ctx.spec),
                );
            }
            emit(Event::Finished {
                row: &row,
                run_start,
                run_end,
            });
        }
        if every == 0 {
            continue;
        }
        let pos = next - 1;
        if measured_ok {
            measured.push_back(Measured {
                position: pos,
                built: b,
            });
            while measured.len() > every {
                measured.pop_front();
            }
        }
        let target = control_target(pos, every);
        if let (Some(t), true) = (target, shared.controls) {
            if let Some(m) = measured.iter().find(|m| m.position == t) {
                if !STOP.load(Ordering::SeqCst) {
                    let n = shared.controls_made.fetch_add(1, Ordering::SeqCst);
                    control(shared, m, gpu.as_ref(), &lock, n);
                }
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
