//! `repeat = k`: every point runs in k independent processes, one per pass over the sweep (pass 0
//! in the sweep's order, pass p > 0 shuffled with seed + p), so what differs between processes
//! (where the buffers land, the state of the GPU) shows in the data. Passes 0..k-2 keep their rows
//! in `passes/pass-<p>.csv`; in the last pass each point's raw row goes to its pass CSV and the
//! combined row, built here, to `results.csv`.

use crate::analyze::fit::median;
use crate::spec::{Metric, Spec, CORE_FIELDS, CORE_STATS};
use crate::store::{self, schema, Dialect, Row, Status, StoreError};
use std::collections::BTreeMap;
use std::path::Path;

/// One earlier pass's row of a point.
struct Earlier {
    pass: u32,
    status: Status,
    /// Each metric's own status in that process, by name.
    statuses: BTreeMap<String, Status>,
    values: BTreeMap<String, f64>,
    run_s: f64,
    /// Its build: seconds, and whether it came from the cache (pass 0 builds, the others find
    /// the binary cached).
    build_s: f64,
    cached: bool,
    error: String,
}

/// How a column combines over the processes.
#[derive(Clone, Copy)]
enum Rule {
    Median,
    Min,
    Max,
    Sum,
}

/// Builds `results.csv` rows from the last pass and the earlier passes' CSVs.
pub(super) struct Aggregator {
    earlier: BTreeMap<String, Vec<Earlier>>,
    /// Every metric column and how it combines.
    rules: Vec<(String, Rule)>,
    metrics: Vec<Metric>,
    target: f64,
    /// Processes a point's row combines.
    repeat: u32,
    /// Whose processes these are: every point's (`repeat`) or held points' (`recheck`).
    kind: Kind,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Repeat,
    Recheck,
}

impl Kind {
    /// What one process is called in an error.
    fn unit(self) -> &'static str {
        match self {
            Kind::Repeat => "pass",
            Kind::Recheck => "process",
        }
    }
}

/// How far the processes' values of a metric lie apart: (largest - smallest) / |median|, 0 for a
/// median of 0; None for fewer than two values.
fn spread(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let mid = median(values)?;
    let (lo, hi) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
            (l.min(x), h.max(x))
        });
    Some(if mid != 0.0 {
        (hi - lo) / mid.abs()
    } else {
        0.0
    })
}

/// Processes `spread` apart disagree: by more than the target and more than twice the widest
/// confidence interval any of them reported.
fn disagree(spread: f64, target: f64, widest_ci: f64) -> bool {
    spread > target && spread > 2.0 * widest_ci
}

/// How each column of a metric combines over the processes: the value and the median as medians,
/// the least `_min_`, `_placements` and `_sm_mhz`, the summed `_samples`, and the worst (largest)
/// of the rest: `_stddev_`, `_max_`, `_rel_ci`, `_throttled`, `_spread`.
fn rules(m: &Metric) -> Vec<(String, Rule)> {
    let stats = std::iter::once("value")
        .chain(CORE_STATS)
        .chain(CORE_FIELDS);
    m.columns()
        .into_iter()
        .zip(stats)
        .map(|(col, stat)| {
            let rule = match stat {
                "value" | "median" => Rule::Median,
                "min" | "placements" | "sm_mhz" => Rule::Min,
                "samples" => Rule::Sum,
                _ => Rule::Max,
            };
            (col, rule)
        })
        .collect()
}

impl Aggregator {
    /// Reads passes 0..repeat-1 (all but the last).
    pub(super) fn open(
        spec: &Spec,
        run_dir: &Path,
        header: &[String],
        dialect: Dialect,
    ) -> Result<Aggregator, StoreError> {
        let mut rows = Vec::new();
        for pass in 0..spec.repeat - 1 {
            let path = store::pass_csv(run_dir, pass);
            rows.extend(store::read_done(&path, header)?.into_values());
        }
        Ok(Self::from_rows(
            spec,
            header,
            dialect,
            rows,
            spec.repeat,
            Kind::Repeat,
        ))
    }

    /// `recheck`: the processes `passes/recheck.csv` holds of each held point (the first its
    /// sweep's, then one per round); a point is combined at its `1 + recheck`-th.
    pub(super) fn open_recheck(
        spec: &Spec,
        run_dir: &Path,
        header: &[String],
        dialect: Dialect,
    ) -> Result<Aggregator, StoreError> {
        let rows = store::read_rows(&store::recheck_csv(run_dir), header)?;
        Ok(Self::from_rows(
            spec,
            header,
            dialect,
            rows,
            1 + spec.recheck,
            Kind::Recheck,
        ))
    }

    fn from_rows(
        spec: &Spec,
        header: &[String],
        dialect: Dialect,
        rows: Vec<Vec<String>>,
        processes: u32,
        kind: Kind,
    ) -> Aggregator {
        let rules: Vec<(String, Rule)> = spec.metrics.iter().flat_map(rules).collect();
        let mut earlier: BTreeMap<String, Vec<Earlier>> = BTreeMap::new();
        for fields in rows {
            let cell = |name: &str| {
                header
                    .iter()
                    .position(|c| c == name)
                    .and_then(|i| fields.get(i))
                    .map(|f| f.as_str())
                    .unwrap_or_default()
            };
            let status = Status::parse(cell(schema::STATUS_COLUMN)).unwrap_or(Status::RunFailed);
            let statuses = spec
                .metrics
                .iter()
                .filter_map(|m| {
                    let s = store::metric_status_in_row(
                        header,
                        &fields,
                        &m.name,
                        dialect,
                        spec.target_rel_ci(),
                    )?;
                    Some((m.name.clone(), s))
                })
                .collect();
            let mut values = BTreeMap::new();
            for (col, _) in &rules {
                if let Some(v) = dialect.parse_number(cell(col)) {
                    values.insert(col.clone(), v);
                }
            }
            let id = fields.first().cloned().unwrap_or_default();
            let list = earlier.entry(id).or_default();
            list.push(Earlier {
                pass: list.len() as u32,
                status,
                statuses,
                values,
                run_s: dialect
                    .parse_number(cell(schema::RUN_S_COLUMN))
                    .unwrap_or(0.0),
                build_s: dialect
                    .parse_number(cell(schema::BUILD_S_COLUMN))
                    .unwrap_or(0.0),
                cached: cell(schema::CACHED_COLUMN) == "1",
                error: cell(schema::ERROR_COLUMN).to_string(),
            });
        }
        Aggregator {
            earlier,
            rules,
            metrics: spec.metrics.clone(),
            target: spec.target_rel_ci(),
            repeat: processes,
            kind,
        }
    }

    /// The points with a process of their own kept so far.
    pub(super) fn kept(&self) -> impl Iterator<Item = &String> {
        self.earlier.keys()
    }

    /// Whether the process that gave `last` completes its point (its row can be combined): the
    /// last of `repeat`, or with `recheck`, one after which the processes agree on the metrics that
    /// showed two groups in the first: all of them, or the two or more after the held one (the
    /// median then is theirs).
    pub(super) fn completes(&self, spec: &Spec, last: &Row) -> bool {
        let none = Vec::new();
        let earlier = self.earlier.get(&last.point.id).unwrap_or(&none);
        if earlier.len() as u32 + 1 >= self.repeat {
            return true;
        }
        let Some(first) = earlier.first().filter(|_| self.kind == Kind::Recheck) else {
            return false;
        };
        if !last.status.measured() || earlier.iter().any(|e| !e.status.measured()) {
            return true;
        }
        let grouped = super::recheck::grouped_metrics(spec, &first.values);
        let all: Vec<&BTreeMap<String, f64>> = earlier
            .iter()
            .map(|e| &e.values)
            .chain(std::iter::once(&last.values))
            .collect();
        let agree = |values: &[&BTreeMap<String, f64>]| {
            !grouped.is_empty()
                && grouped.iter().all(|m| {
                    let ci = format!("{}_rel_ci", m.name);
                    let (x, c): (Vec<f64>, Vec<f64>) = values
                        .iter()
                        .filter_map(|v| Some((*v.get(&m.column())?, *v.get(&ci)?)))
                        .unzip();
                    let widest_ci = c.iter().copied().fold(0.0, f64::max);
                    x.len() == values.len()
                        && spread(&x).is_some_and(|s| !disagree(s, self.target, widest_ci))
                })
        };
        agree(&all) || (all.len() >= 3 && agree(&all[1..]))
    }

    /// The `results.csv` row of a point whose last pass gave `last`.
    pub(super) fn combine(&self, last: &Row) -> Row {
        let none = Vec::new();
        let earlier = self.earlier.get(&last.point.id).unwrap_or(&none);
        let mut row = last.clone();
        row.run_s = last.run_s + earlier.iter().map(|e| e.run_s).sum::<f64>();
        // Built in whichever process built it (pass 0, mostly): the last one found the binary
        // cached, and the row said `cached=1, build_s=0` of a point just compiled (review 20b
        // #1).
        row.build_s = last.build_s + earlier.iter().map(|e| e.build_s).sum::<f64>();
        row.cached = last.cached && earlier.iter().all(|e| e.cached);
        // A failure in any process is the point's failure: never hidden behind a median.
        if let Some(e) = earlier.iter().find(|e| !e.status.measured()) {
            row.status = e.status;
            row.values.clear();
            row.statuses.clear();
            // A resumed run may have run one more than planned (killed between a process's row
            // and the point's): never "4 of 3".
            let of = self.repeat.max(earlier.len() as u32 + 1);
            row.error = format!("{} {} of {of}: {}", self.kind.unit(), e.pass + 1, e.error);
            return row;
        }
        if !last.status.measured() {
            row.statuses.clear();
            let n = earlier.len() as u32 + 1;
            let of = self.repeat.max(n);
            row.error = format!("{} {n} of {of}: {}", self.kind.unit(), last.error);
            return row;
        }
        let passes: Vec<&BTreeMap<String, f64>> = earlier
            .iter()
            .map(|e| &e.values)
            .chain(std::iter::once(&last.values))
            .collect();
        let mut values = BTreeMap::new();
        for (col, rule) in &self.rules {
            let v: Vec<f64> = passes.iter().filter_map(|p| p.get(col).copied()).collect();
            let Some(mid) = median(&v) else { continue };
            let x = match rule {
                Rule::Median => mid,
                Rule::Min => v.iter().copied().fold(f64::INFINITY, f64::min),
                Rule::Max => v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                Rule::Sum => v.iter().sum(),
            };
            values.insert(col.clone(), x);
        }
        // A metric's status: the worst any process gave it, and unstable when the processes'
        // values of it disagree (their spread is beyond the target and their intervals).
        let mut statuses: BTreeMap<String, Status> = BTreeMap::new();
        for m in &self.metrics {
            let worst = earlier
                .iter()
                .map(|e| &e.statuses)
                .chain(std::iter::once(&last.statuses))
                .filter_map(|s| s.get(&m.name).copied())
                .max()
                .unwrap_or(Status::Ok);
            statuses.insert(m.name.clone(), worst);
        }
        for m in &self.metrics {
            let value_col = m.column();
            let v: Vec<f64> = passes
                .iter()
                .filter_map(|p| p.get(&value_col).copied())
                .collect();
            let Some(spread) = spread(&v) else { continue };
            values.insert(store::repeat_spread_column(m), spread);
            // `_rel_ci` combines as its largest; a regex metric has none.
            let widest_ci = values
                .get(&format!("{}_rel_ci", m.name))
                .copied()
                .unwrap_or(0.0);
            if disagree(spread, self.target, widest_ci) {
                statuses.insert(m.name.clone(), Status::Unstable);
            }
        }
        row.values = values;
        // The row's status: the worst of its metrics', and never better than a process's own
        // (as before metrics had statuses of their own).
        row.status = statuses
            .values()
            .copied()
            .chain(earlier.iter().map(|e| e.status))
            .chain(std::iter::once(last.status))
            .max()
            .unwrap_or(Status::Ok);
        row.statuses = statuses;
        row
    }
}
