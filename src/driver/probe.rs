//! What is measured beside a point's timed run, in the way of Kernel Tuner's observers: each
//! probe ([`Probe`]) is called by the runner at the same two moments, after a measured run (the
//! GPU is the runner's alone until the next gate opens) and on the point's final row; the runner
//! knows the moments, not the probes. Ours: ncu's counters ([`Counters`]), the power samples of
//! the run's window ([`Power`]), and a metric's watts from a run in power mode ([`MetricPower`]).

use super::builder::Built;
use crate::profile::power::{NvidiaSmi, PowerError};
use crate::spec::{MetricSource, Spec};
use crate::store::{GpuState, Row};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// A measured run, as its probes see it.
pub(super) struct Window<'a> {
    pub(super) built: &'a Built,
    pub(super) gpu: Option<&'a GpuState>,
    /// The GPU's measure lock (see [`crate::store::RunDir::measure_lock`]).
    pub(super) lock: &'a Path,
    /// When its gate opened and its exit was seen, on the power samples' clock.
    pub(super) from: f64,
    pub(super) to: f64,
    /// This process gives the point its row (`repeat`'s last, not held by `recheck`): a probe
    /// that starts programs runs for it only, as counters of an earlier process go unused.
    pub(super) gives_the_row: bool,
}

/// What a probe found: its columns, and why they are empty when they are.
#[derive(Default)]
pub(super) struct Found {
    pub(super) values: BTreeMap<String, f64>,
    pub(super) why: Option<String>,
}

impl Found {
    fn failed(why: String) -> Found {
        Found {
            values: BTreeMap::new(),
            why: Some(why),
        }
    }

    /// Adds `other`'s columns; its reason counts where this has none.
    pub(super) fn add(&mut self, other: Found) {
        self.values.extend(other.values);
        self.why = self.why.take().or(other.why);
    }

    /// Adds the columns to a row, and the reason to its `error` when it has one.
    pub(super) fn apply(&self, row: &mut Row) {
        row.values
            .extend(self.values.iter().map(|(k, v)| (k.clone(), *v)));
        if let Some(w) = &self.why {
            if row.error.is_empty() {
                row.error = w.clone();
            } else {
                row.error = format!("{}; {w}", row.error);
            }
        }
    }
}

/// An observer of a point's runs.
pub(super) trait Probe {
    /// After a measured run, before the next point's gate opens.
    fn after_run(&self, spec: &Spec, run: &Window) -> Found;

    /// On the point's final row (with `repeat`, the combined one), before it is written.
    fn on_row(&self, _spec: &Spec, _row: &mut Row) {}
}

/// The probes a spec's `[profile]` asks for, in the order they run, for the runner of `gpu`:
/// started with it (the power samples run while the runner does).
pub(super) fn probes(spec: &Spec, gpu: Option<&GpuState>) -> Vec<Box<dyn Probe>> {
    let Some(p) = spec.profile.as_ref() else {
        return vec![];
    };
    let samples = p.samples_power().then(|| {
        let id = gpu.map_or("0", |g| g.uuid.as_str());
        Arc::new(NvidiaSmi::start(id, 20))
    });
    let mut out: Vec<Box<dyn Probe>> = Vec::new();
    if !p.counters.is_empty() {
        out.push(Box::new(Counters));
    }
    if let Some(samples) = samples.as_ref().filter(|_| p.power) {
        out.push(Box::new(Power(Arc::clone(samples))));
    }
    if let (Some(every), Some(samples)) = (p.metric_power, samples) {
        out.push(Box::new(MetricPower { every, samples }));
    }
    out
}

/// The command of the point's program (as its timed run had it), for a probe to run again.
fn program(spec: &Spec, run: &Window, binary: &Path) -> crate::exec::Cmd {
    super::runner::program(spec, run.built, binary, run.gpu, run.lock)
}

/// `[profile]` counters: the point's binary once more under ncu, in the timing core's profile
/// mode.
struct Counters;

impl Probe for Counters {
    fn after_run(&self, spec: &Spec, run: &Window) -> Found {
        use crate::profile::{ncu, run_program};
        let (Some(p), Ok(binary), true) = (
            spec.profile.as_ref(),
            run.built.binary.as_ref(),
            run.gives_the_row,
        ) else {
            return Found::default();
        };
        let fail = |why: String| Found::failed(format!("profile: {why}"));
        let ncu_path = match ncu::locate() {
            Ok(n) => n,
            Err(e) => return fail(e.to_string()),
        };
        let dir = &run.built.dir;
        let cmd = ncu::command(&ncu_path, p, &program(spec, run, binary), dir);
        let _ = std::fs::write(dir.join(ncu::CMD), format!("{}\n", cmd.line()));
        let _ = std::fs::remove_file(dir.join(ncu::CSV));
        let (out_path, err_path) = (dir.join(ncu::STDOUT), dir.join(ncu::STDERR));
        let hint = "a longer `[profile] timeout_s`";
        if let Err(why) = run_program(&cmd, p.timeout, &out_path, &err_path, "ncu", Some(hint)) {
            return fail(why.to_string());
        }
        let csv = crate::parse::read_capped(&dir.join(ncu::CSV)).unwrap_or_default();
        let stdout = crate::parse::read_capped(&out_path).unwrap_or_default();
        let metrics: Vec<String> = spec
            .metrics
            .iter()
            .filter(|m| matches!(m.source, MetricSource::Core))
            .map(|m| m.name.clone())
            .collect();
        let read = ncu::read(&csv, &stdout, p, &metrics);
        let why = (!read.problems.is_empty()).then(|| {
            format!(
                "profile: {} (log: {})",
                read.problems.join("; "),
                dir.join(ncu::CSV).display()
            )
        });
        Found {
            values: read.values,
            why,
        }
    }
}

/// This GPU's power and clock, sampled while the runner runs.
type Samples = Arc<Result<NvidiaSmi, PowerError>>;

/// `[profile] power`: the point's power columns from the samples of its window (gate to exit),
/// in every process.
struct Power(Samples);

impl Probe for Power {
    fn after_run(&self, _spec: &Spec, run: &Window) -> Found {
        use crate::profile::power::{summarize, PowerSource};
        match self.0.as_ref() {
            Ok(src) => {
                let values = summarize(&src.between(run.from, run.to), run.from, run.to);
                let why = values.is_empty().then(|| {
                    let what = src.trouble();
                    format!(
                        "power: {}",
                        what.as_deref()
                            .unwrap_or("no sample while the point measured")
                    )
                });
                Found { values, why }
            }
            Err(e) => Found::failed(format!("power: {e}")),
        }
    }
}

/// `[profile] metric_power_ms`: the point's program once more in the timing core's power mode
/// (after ncu); each timing-core metric's watts, and on the final row its value per watt (see
/// [`crate::profile::metric_power`]).
struct MetricPower {
    every: std::time::Duration,
    samples: Samples,
}

impl Probe for MetricPower {
    fn after_run(&self, spec: &Spec, run: &Window) -> Found {
        use crate::profile::metric_power::{limit, run_pass};
        let (Ok(binary), true) = (run.built.binary.as_ref(), run.gives_the_row) else {
            return Found::default();
        };
        let source = match self.samples.as_ref() {
            Ok(src) => src,
            Err(e) => return Found::failed(format!("power: {e}")),
        };
        let wanted = power_wanted(spec);
        let limit = limit(self.every, wanted.len(), spec.run_timeout);
        let program = program(spec, run, binary);
        let (values, why) = run_pass(&program, &run.built.dir, self.every, limit, source, &wanted);
        Found { values, why }
    }

    fn on_row(&self, spec: &Spec, row: &mut Row) {
        // From the row's final values: with `repeat`, the median over the processes.
        crate::profile::metric_power::add_per_watt(&mut row.values, &power_wanted(spec));
    }
}

/// The metrics of a power pass: every timing-core metric.
fn power_wanted(spec: &Spec) -> Vec<crate::profile::metric_power::Wanted<'_>> {
    spec.metrics
        .iter()
        .filter(|m| matches!(m.source, MetricSource::Core))
        .map(|m| crate::profile::metric_power::Wanted {
            metric: &m.name,
            value_column: m.column(),
            unit_slug: crate::spec::unit_slug(&m.unit),
        })
        .collect()
}
