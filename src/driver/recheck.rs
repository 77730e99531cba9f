//! `recheck = k` (with `repeat = 1`): a point whose samples fall into two groups inside its one
//! process is held back from `results.csv`; at the end of the sweep it runs in up to k more
//! processes (one round per process, each in a shuffled order), and its row is the median over
//! them all, built by [`super::repeat::Aggregator`] from the rows kept in `passes/recheck.csv`.
//! The rounds stop for a point as soon as its processes agree on the metrics that showed two
//! groups (within the sweep's confidence target and twice their widest interval): a second process
//! that agrees with the first ends it, one that does not calls for a third.
//!
//! Why: on an H100 one band of the thread sweep (shared_nc_grid at 258-290 threads) now and then
//! falls into a state 6-8 % slower for part of a program's samples; the value then lies between
//! the two states and nothing inside the process says which one every other process sees
//! (docs/measurements.md). A fresh process, later, is mostly in the usual state, so the median of three
//! outvotes the one.

use crate::spec::{Metric, MetricSource, Spec};
use crate::store::Row;
use std::collections::BTreeMap;

/// The samples span more than this fraction of the value: two groups this far apart move the value
/// beyond the 1 % confidence target wherever the mix falls.
const MIN_RANGE: f64 = 0.03;
/// Their standard deviation is more than this fraction of their range: one group of noise gives
/// 0.2-0.3 (16 to 128 samples), two groups of equal size 0.5.
const MIN_SD_OF_RANGE: f64 = 0.35;
/// The placements' means differ by less than this fraction of the range: the groups are inside the
/// placements (a state of the GPU), not between them (where the buffers lie, which the placements'
/// median already answers).
const MAX_SPREAD_OF_RANGE: f64 = 0.5;

/// Why the row's samples look like two groups (the first such metric), or None.
pub(super) fn two_groups(spec: &Spec, row: &Row) -> Option<String> {
    spec.metrics
        .iter()
        .find_map(|m| metric_two_groups(m, &row.values))
}

/// The metrics whose samples look like two groups in a process's values.
pub(super) fn grouped_metrics<'a>(
    spec: &'a Spec,
    values: &BTreeMap<String, f64>,
) -> Vec<&'a Metric> {
    spec.metrics
        .iter()
        .filter(|m| metric_two_groups(m, values).is_some())
        .collect()
}

fn metric_two_groups(m: &Metric, values: &BTreeMap<String, f64>) -> Option<String> {
    if !matches!(m.source, MetricSource::Core) {
        return None;
    }
    let cols = m.columns();
    // value, median, stddev, min, max, rel_ci, samples, throttled, spread, ...
    let get = |i: usize| cols.get(i).and_then(|c| values.get(c)).copied();
    let (value, sd, min, max, spread) = (get(0)?, get(2)?, get(3)?, get(4)?, get(8)?);
    let range = max - min;
    if !(value > 0.0 && range > 0.0) {
        return None;
    }
    let rel_range = range / value;
    let two = rel_range > MIN_RANGE
        && sd / range > MIN_SD_OF_RANGE
        && spread < MAX_SPREAD_OF_RANGE * rel_range;
    two.then(|| {
        format!(
            "`{}`: samples {:.1} % apart, stddev {:.2} of that, placements {:.1} %",
            m.name,
            100.0 * rel_range,
            sd / range,
            100.0 * spread
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::points::Point;
    use crate::store::Status;

    fn metric() -> Metric {
        Metric {
            name: "k".into(),
            unit: "MFlops".into(),
            source: MetricSource::Core,
            better: None,
            model: None,
        }
    }

    /// A row of metric `k` with value 100 and the given stddev, min, max and spread.
    fn row(sd: f64, min: f64, max: f64, spread: f64) -> Row {
        let cols = metric().columns();
        let mut r = Row {
            point: Point {
                index: 0,
                id: "p".into(),
                values: vec![],
            },
            status: Status::Ok,
            statuses: Default::default(),
            values: Default::default(),
            build_s: 0.0,
            run_s: 0.0,
            cached: false,
            gpu: Default::default(),
            error: String::new(),
        };
        for (i, v) in [
            (0, 100.0),
            (1, 100.0),
            (2, sd),
            (3, min),
            (4, max),
            (8, spread),
        ] {
            r.values.insert(cols[i].clone(), v);
        }
        r
    }

    #[test]
    fn two_groups_inside_the_placements_are_seen_and_noise_or_placements_are_not() {
        let m = metric();
        // (stddev, min, max, spread, two groups?): measured shapes of H100 rows.
        let cases = [
            // shared_nc_grid at t = 259 in the low state: 8.9 % range, stddev 0.44 of it.
            (3.9, 97.9, 106.8, 0.031, true),
            // one group of noise: stddev a quarter of the range.
            (1.0, 98.0, 102.0, 0.005, false),
            // global stores: two groups, but between placements (spread as wide as the range).
            (4.2, 80.0, 100.0, 0.20, false),
            // two tight groups 2 % apart: within what the target lets the value move.
            (1.0, 99.0, 101.0, 0.002, false),
            // a few fast samples in many (stddev small against the range).
            (0.2, 99.9, 102.8, 0.002, false),
        ];
        for (sd, min, max, spread, want) in cases {
            let got = metric_two_groups(&m, &row(sd, min, max, spread).values);
            assert_eq!(got.is_some(), want, "{sd} {min} {max} {spread}: {got:?}");
        }
        let why = metric_two_groups(&m, &row(3.9, 97.9, 106.8, 0.031).values).unwrap();
        assert_eq!(
            why,
            "`k`: samples 8.9 % apart, stddev 0.44 of that, placements 3.1 %"
        );
    }

    #[test]
    fn a_regex_metric_or_a_row_without_statistics_is_never_held() {
        let mut m = metric();
        m.source = MetricSource::Regex(regex::Regex::new("(?P<value>x)").unwrap());
        assert!(metric_two_groups(&m, &row(3.9, 97.9, 106.8, 0.031).values).is_none());
        let mut r = row(3.9, 97.9, 106.8, 0.031);
        r.values.retain(|k, _| k == "k_mflops");
        assert!(metric_two_groups(&metric(), &r.values).is_none());
    }
}
