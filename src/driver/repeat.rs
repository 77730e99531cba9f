//! `repeat = k`: every point runs in k independent processes, one per pass over the sweep (pass 0
//! in the sweep's order, pass p > 0 shuffled with seed + p), so what differs between processes
//! (where the buffers land, the state of the GPU) shows in the data. Passes 0..k-2 keep their rows
//! in `passes/pass-<p>.csv`; in the last pass each point's raw row goes to its pass CSV and the
//! combined row, built here, to `results.csv`.

use crate::spec::{Metric, MetricSource, Spec};
use crate::store::{self, CsvSink, Dialect, Row, Status, StoreError};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;

/// One earlier pass's row of a point.
struct Earlier {
    pass: u32,
    status: Status,
    values: BTreeMap<String, f64>,
    run_s: f64,
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
    /// The last pass's raw rows.
    pub(super) pass_sink: Mutex<CsvSink>,
    earlier: BTreeMap<String, Vec<Earlier>>,
    /// Columns with values, how each combines, and which value column it belongs to.
    rules: Vec<(String, Rule)>,
    /// (metric, its value column, its `_rel_ci` column for timing-core metrics).
    metrics: Vec<(Metric, String, Option<String>)>,
    target: f64,
    repeat: u32,
}

fn rules(m: &Metric) -> Vec<(String, Rule)> {
    let cols = m.columns();
    match m.source {
        MetricSource::Regex(_) => vec![(cols[0].clone(), Rule::Median)],
        // value, median, stddev, min, max, rel_ci, samples, throttled, spread, placements, sm_mhz
        MetricSource::Core => {
            let by_position = [
                Rule::Median,
                Rule::Median,
                Rule::Max,
                Rule::Min,
                Rule::Max,
                Rule::Max,
                Rule::Sum,
                Rule::Max,
                Rule::Max,
                Rule::Min,
                Rule::Min,
            ];
            cols.into_iter().zip(by_position).collect()
        }
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

impl Aggregator {
    /// Reads passes 0..repeat-1 (all but the last) and opens the last pass's CSV.
    pub(super) fn open(
        spec: &Spec,
        run_dir: &Path,
        header: &[String],
        dialect: Dialect,
    ) -> Result<Aggregator, StoreError> {
        let value_cols: Vec<String> = header.to_vec();
        let mut earlier: BTreeMap<String, Vec<Earlier>> = BTreeMap::new();
        for pass in 0..spec.repeat - 1 {
            let path = store::pass_csv(run_dir, pass);
            for (id, fields) in store::read_done(&path, header)? {
                let cell = |name: &str| {
                    value_cols
                        .iter()
                        .position(|c| c == name)
                        .map(|i| fields[i].as_str())
                        .unwrap_or_default()
                };
                let status = Status::parse(cell("status")).unwrap_or(Status::RunFailed);
                let mut values = BTreeMap::new();
                for m in &spec.metrics {
                    for (col, _) in rules(m) {
                        if let Some(v) = dialect.parse_number(cell(&col)) {
                            values.insert(col, v);
                        }
                    }
                }
                earlier.entry(id).or_default().push(Earlier {
                    pass,
                    status,
                    values,
                    run_s: dialect.parse_number(cell("run_s")).unwrap_or(0.0),
                    error: cell("error").to_string(),
                });
            }
        }
        let last = store::pass_csv(run_dir, spec.repeat - 1);
        Ok(Aggregator {
            pass_sink: Mutex::new(CsvSink::open(&last, header.to_vec(), dialect)?),
            earlier,
            rules: spec.metrics.iter().flat_map(rules).collect(),
            metrics: spec
                .metrics
                .iter()
                .map(|m| {
                    let ci = matches!(m.source, MetricSource::Core)
                        .then(|| format!("{}_rel_ci", m.name));
                    (m.clone(), m.column(), ci)
                })
                .collect(),
            target: spec.target_rel_ci(),
            repeat: spec.repeat,
        })
    }

    /// The `results.csv` row of a point whose last pass gave `last`.
    pub(super) fn combine(&self, last: &Row) -> Row {
        let none = Vec::new();
        let earlier = self.earlier.get(&last.point.id).unwrap_or(&none);
        let mut row = last.clone();
        row.run_s = last.run_s + earlier.iter().map(|e| e.run_s).sum::<f64>();
        // A failure in any process is the point's failure: never hidden behind a median.
        if let Some(e) = earlier.iter().find(|e| !e.status.measured()) {
            row.status = e.status;
            row.values.clear();
            row.error = format!("pass {} of {}: {}", e.pass + 1, self.repeat, e.error);
            return row;
        }
        if !last.status.measured() {
            row.error = format!("pass {} of {}: {}", self.repeat, self.repeat, last.error);
            return row;
        }
        let passes: Vec<&BTreeMap<String, f64>> = earlier
            .iter()
            .map(|e| &e.values)
            .chain(std::iter::once(&last.values))
            .collect();
        let mut values = BTreeMap::new();
        for (col, rule) in &self.rules {
            let mut v: Vec<f64> = passes.iter().filter_map(|p| p.get(col).copied()).collect();
            if v.is_empty() {
                continue;
            }
            let x = match rule {
                Rule::Median => median(&mut v),
                Rule::Min => v.iter().copied().fold(f64::INFINITY, f64::min),
                Rule::Max => v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                Rule::Sum => v.iter().sum(),
            };
            values.insert(col.clone(), x);
        }
        let mut unstable =
            earlier.iter().any(|e| e.status == Status::Unstable) || last.status == Status::Unstable;
        let noisy =
            earlier.iter().any(|e| e.status == Status::Noisy) || last.status == Status::Noisy;
        for (m, value_col, ci_col) in &self.metrics {
            let mut v: Vec<f64> = passes
                .iter()
                .filter_map(|p| p.get(value_col).copied())
                .collect();
            if v.len() < 2 {
                continue;
            }
            let (lo, hi) = v
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
                    (l.min(x), h.max(x))
                });
            let mid = median(&mut v);
            let spread = if mid != 0.0 {
                (hi - lo) / mid.abs()
            } else {
                0.0
            };
            values.insert(store::repeat_spread_column(m), spread);
            // The processes disagree by more than the target and more than twice the widest
            // confidence interval any of them reported.
            let widest_ci = ci_col
                .as_ref()
                .and_then(|c| values.get(c).copied())
                .unwrap_or(0.0);
            if spread > self.target && spread > 2.0 * widest_ci {
                unstable = true;
            }
        }
        row.values = values;
        row.status = if unstable {
            Status::Unstable
        } else if noisy {
            Status::Noisy
        } else {
            Status::Ok
        };
        row
    }
}
