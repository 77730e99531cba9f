//! Between processes: what the control re-runs say about how far a value moves when the same
//! program runs again in a fresh process, later in the sweep. `sweep run` writes them to
//! `controls.csv` beside `results.csv` (spec key `control_every`); each control row pairs with
//! the point's row in `results.csv`.
//!
//! A point's confidence interval comes from the samples inside one process, and on an H100 two
//! processes disagree by several times that (docs/measurements.md): the clock, the GPU's state and
//! where the program's memory lies are fixed within a process and differ between them. The
//! pairs measure that spread for the sweep, per metric, from d = ln(control / first) of each
//! pair. Pairs further apart than 6 robust sigmas (1.4826 median |d|) and 1 % are outliers: a
//! state of the GPU during one of the two runs (an 8 % clock dip over a few points, say), named in
//! the analysis rather than spread over every point. Over the others sigma_d = sqrt(mean d^2):
//! the root mean square, not a median, because the differences come as a mixture (most
//! processes agree to 0.05 %, one in ten is 0.4 % off on an H100), and one process's value
//! scatters by rel_sd = sigma_d / sqrt(2) around the mean over processes; t(pairs) * rel_sd is
//! the metric's own 95 % half-width (`own_u95`).
//!
//! What differs between processes is mostly state of the whole GPU that every metric of a program
//! shares: on an H100 the SM clock wanders between 1973 and 1980 MHz from one process to the next,
//! and the shared-memory series follow it by 0.3-0.45 %. Sixteen pairs of one
//! metric can miss such a state, so `u95`, the between-process part of a point's uncertainty, is
//! the largest of the metric's own half-width, the median of all metrics' own half-widths, and
//! the range of the run's SM clock readings (`<metric>_sm_mhz` of every measured row of both
//! files, 1st to 99th percentile, relative to their median): one H100 ran some programs at 1980
//! and others at 1995 MHz, and compute-bound values followed by 0.66 % while the pairs of that run
//! happened to catch no change (docs/measurements.md).
//!
//! A metric whose every pair agrees to the last digit (`expected_ways`, `blocks_per_sm`: a value
//! the program computes, not one it times) is [`BetweenProcesses::exact`]: the clock and the
//! GPU's state do not move it, so it keeps its own spread, none, and the reading says it is the
//! same in every re-run; it takes no part in the median the timed metrics share either (with it,
//! a timed metric beside one count would be floored at half its own spread).

use super::fit::median;
use super::load::carries_values;
use super::AnalyzeError;
use crate::store::run::Row;
use crate::store::schema::{POINT_ID_COLUMN, STATUS_COLUMN};
use crate::store::Run;
use serde::Serialize;
use std::collections::BTreeMap;

/// The control re-runs' file, beside `results.csv`.
pub use crate::store::CONTROLS;

/// What the controls say about one metric column.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct BetweenProcesses {
    /// The metric's column.
    pub column: String,
    /// Pairs (a point measured in two processes) with a value in both.
    pub pairs: usize,
    /// Relative standard deviation of one process's value around the mean over processes.
    pub rel_sd: f64,
    /// 95 % half-width from the metric's own pairs: t(pairs) * rel_sd.
    pub own_u95: f64,
    /// The range of the run's SM clock readings relative to their median (see the module's
    /// comment); the same for every metric of a run.
    pub clock_range: f64,
    /// The between-process 95 % half-width used: the largest of `own_u95`, the median of
    /// `own_u95` over the sweep's metrics, and `clock_range`.
    pub u95: f64,
    /// The largest |control / first - 1| over the pairs, and the point it was measured at (its
    /// axis values, `threads=13`).
    pub max_diff: f64,
    pub max_at: String,
    /// Pairs further apart than 6 robust sigmas and 1 %: (point, control / first - 1); left out
    /// of `rel_sd`.
    pub outliers: Vec<(String, f64)>,
}

impl BetweenProcesses {
    /// Every pair agreed exactly: a computed value, which does not scatter between processes
    /// (see the module's comment).
    pub fn exact(&self) -> bool {
        self.max_diff == 0.0
    }
}

/// The fewest pairs from which a spread is given.
pub const MIN_PAIRS: usize = 3;

/// Two-sided 95 % Student t quantile (smaller df used between table rows: conservative).
pub fn t95(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        31..=39 => 2.042,
        40..=59 => 2.021,
        60..=119 => 2.000,
        _ => 1.980,
    }
}

/// The metric columns' between-process spread from `controls.csv` beside the results CSV `first`
/// (already read); `None` when the run has no controls file. Metrics with fewer than
/// [`MIN_PAIRS`] pairs are left out.
pub(crate) fn between_processes(
    first: &Run,
) -> Result<Option<Vec<BetweenProcesses>>, AnalyzeError> {
    let Some(again) = first.controls()? else {
        return Ok(None);
    };
    Ok(Some(from_tables(first, &again)))
}

fn from_tables(first: &Run, again: &Run) -> Vec<BetweenProcesses> {
    let (Some(id1), Some(st1), Some(id2), Some(st2)) = (
        first.column(POINT_ID_COLUMN),
        first.column(STATUS_COLUMN),
        again.column(POINT_ID_COLUMN),
        again.column(STATUS_COLUMN),
    ) else {
        return Vec::new();
    };
    let measured = |t: &Run, row: &Row, st: usize| carries_values(t.cell(row, st));
    let by_id: BTreeMap<&str, &Row> = first
        .rows
        .iter()
        .filter(|r| measured(first, r, st1))
        .map(|r| (first.cell(r, id1), r))
        .collect();
    let mut out = Vec::new();
    for m in &first.metrics {
        let (Some(c1), Some(c2)) = (first.column(&m.column), again.column(&m.column)) else {
            continue;
        };
        let mut d: Vec<(String, f64)> = Vec::new();
        for r2 in again.rows.iter().filter(|r| measured(again, r, st2)) {
            let id = again.cell(r2, id2);
            let Some(r1) = by_id.get(id) else { continue };
            let (Some(a), Some(b)) = (
                first.number(first.cell(r1, c1)),
                again.number(again.cell(r2, c2)),
            ) else {
                continue;
            };
            if a > 0.0 && b > 0.0 && a.is_finite() && b.is_finite() {
                d.push((label(first, r1), (b / a).ln()));
            }
        }
        if let Some(b) = summarize(&m.column, &d) {
            out.push(b);
        }
    }
    let clock = clock_range(&[first, again]);
    let mut out = with_floor(out);
    for b in &mut out {
        b.clock_range = clock;
        if !b.exact() {
            b.u95 = b.u95.max(clock);
        }
    }
    out
}

/// The spread of the SM clock readings (`*_sm_mhz`) of the tables' measured rows: (99th - 1st
/// percentile) / median; 0 without readings. Percentiles, not the extremes: a single reading in
/// thousands (a program that started as the clock changed) is not the run's state.
fn clock_range(tables: &[&Run]) -> f64 {
    let mut mhz: Vec<f64> = tables.iter().flat_map(|t| clock_readings(t)).collect();
    if mhz.is_empty() {
        return 0.0;
    }
    mhz.sort_by(f64::total_cmp);
    let at = |p: f64| mhz[(p * (mhz.len() - 1) as f64).round() as usize];
    median(&mhz).map_or(0.0, |m| (at(0.99) - at(0.01)) / m)
}

/// Every SM clock reading (`*_sm_mhz`, MHz) of the table's measured rows.
fn clock_readings(t: &Run) -> Vec<f64> {
    let Some(st) = t.column(STATUS_COLUMN) else {
        return Vec::new();
    };
    let cols: Vec<usize> = (0..t.header.len())
        .filter(|&i| t.header[i].ends_with("_sm_mhz"))
        .collect();
    t.rows
        .iter()
        .filter(|r| carries_values(t.cell(r, st)))
        .flat_map(|r| cols.iter().filter_map(move |&c| t.number(t.cell(r, c))))
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect()
}

/// The median of a run's SM clock readings (MHz); None when it has none.
pub(crate) fn sm_clock(t: &Run) -> Option<f64> {
    median(&clock_readings(t))
}

/// Raises every timed metric's `u95` to the median of the timed metrics' own half-widths; an
/// exact one keeps its own (see the module's comment).
fn with_floor(mut all: Vec<BetweenProcesses>) -> Vec<BetweenProcesses> {
    let own: Vec<f64> = all
        .iter()
        .filter(|b| !b.exact())
        .map(|b| b.own_u95)
        .collect();
    if let Some(floor) = median(&own) {
        for b in all.iter_mut().filter(|b| !b.exact()) {
            b.u95 = b.own_u95.max(floor);
        }
    }
    all
}

/// A point by its axis values: `threads=13, variant=naive`.
fn label(t: &Run, row: &Row) -> String {
    t.axes
        .iter()
        .filter_map(|a| t.column(a).map(|c| format!("{a}={}", t.cell(row, c))))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The statistics of one metric's log ratios (see the module's comment).
fn summarize(column: &str, d: &[(String, f64)]) -> Option<BetweenProcesses> {
    if d.len() < MIN_PAIRS {
        return None;
    }
    let abs: Vec<f64> = d.iter().map(|(_, v)| v.abs()).collect();
    let limit = (6.0 * 1.4826 * median(&abs)?).max(0.01f64.ln_1p());
    let kept: Vec<f64> = abs.iter().copied().filter(|v| *v <= limit).collect();
    let sigma_d = (kept.iter().map(|v| v * v).sum::<f64>() / kept.len().max(1) as f64).sqrt();
    let rel_sd = sigma_d / std::f64::consts::SQRT_2;
    let (max_at, max_log) = d
        .iter()
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
        .map(|(id, v)| (id.clone(), *v))?;
    let outliers = d
        .iter()
        .filter(|(_, v)| v.abs() > limit)
        .map(|(id, v)| (id.clone(), v.exp_m1()))
        .collect();
    let own_u95 = t95(kept.len()) * rel_sd;
    Some(BetweenProcesses {
        column: column.to_string(),
        pairs: d.len(),
        rel_sd,
        own_u95,
        clock_range: 0.0,
        u95: own_u95,
        max_diff: max_log.exp_m1().abs(),
        max_at,
        outliers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(v: &[f64]) -> Vec<(String, f64)> {
        v.iter()
            .enumerate()
            .map(|(i, r)| (format!("p{i}"), r.ln()))
            .collect()
    }

    #[test]
    fn the_spread_follows_the_typical_pair_and_an_outlier_is_named_not_trusted() {
        // 15 pairs that differ by about +-0.4 % and one 8 % dip.
        let mut r: Vec<f64> = (0..15)
            .map(|i| 1.0 + if i % 2 == 0 { 0.004 } else { -0.004 })
            .collect();
        r.push(0.92);
        let b = summarize("m", &pairs(&r)).unwrap();
        assert_eq!(b.pairs, 16);
        // |d| = 0.004 for the 15 typical pairs: sigma_d = 0.004, the dip left out.
        assert!((b.rel_sd - 0.004 / 2f64.sqrt()).abs() < 2e-5, "{b:?}");
        assert!((b.u95 - t95(15) * b.rel_sd).abs() < 1e-12);
        assert_eq!(b.outliers.len(), 1);
        assert_eq!(b.outliers[0].0, "p15");
        assert!((b.outliers[0].1 + 0.08).abs() < 1e-9);
        assert!((b.max_diff - 0.08).abs() < 1e-9);
        assert_eq!(b.max_at, "p15");
    }

    #[test]
    fn a_mixture_of_agreeing_and_offset_processes_counts_the_offset_ones() {
        // 14 pairs within 0.05 %, 2 off by 0.4 % (as shared-memory series on an H100): the root
        // mean square keeps the 0.4 % pairs inside 2 * u95, where a median would not.
        let mut r = vec![1.0005; 14];
        r.extend([1.004, 0.996]);
        let b = summarize("m", &pairs(&r)).unwrap();
        assert!(b.outliers.is_empty(), "{b:?}");
        assert!(2.0 * b.u95 >= 0.004, "{b:?}");
    }

    #[test]
    fn a_metric_whose_pairs_missed_the_common_spread_gets_the_median_of_the_metrics() {
        let quiet = summarize("quiet", &pairs(&[1.0001; 8])).unwrap();
        let a = summarize("a", &pairs(&[1.004, 0.996, 1.004, 0.996])).unwrap();
        let b = summarize("b", &pairs(&[1.003, 0.997, 1.003, 0.997])).unwrap();
        let all = with_floor(vec![quiet.clone(), a.clone(), b.clone()]);
        assert!(quiet.own_u95 < 0.001);
        // The median of the three own half-widths is b's.
        assert_eq!(all[0].u95, b.own_u95);
        assert_eq!(all[1].u95, a.own_u95, "a's own is above the median");
        assert_eq!(all[2].u95, b.own_u95);
        assert_eq!(all[0].own_u95, quiet.own_u95, "its own stays reported");
    }

    /// results.csv and controls.csv of `n` points, the first `fast` of them read at 1995 MHz and
    /// the others at 1980; every point is worth 100, and `again` in the control re-runs.
    fn run_with_clock(dir: &std::path::Path, n: usize, fast: usize, again: &str) -> Run {
        let head = "point_id,index,threads,status,x_mflops,x_rel_ci,x_sm_mhz,build_s,run_s,cached,gpu_index,gpu_name,gpu_uuid,error\n";
        let row = |i: usize, value: &str| {
            let mhz = if i < fast { 1995 } else { 1980 };
            format!("p{i},{i},{i},ok,{value},0.001,{mhz},0.1,0.1,false,0,H100,u,\n")
        };
        let results: String = head.to_string() + &(0..n).map(|i| row(i, "100")).collect::<String>();
        let controls: String =
            head.to_string() + &(0..n).step_by(4).map(|i| row(i, again)).collect::<String>();
        std::fs::write(dir.join(crate::store::RESULTS), results).unwrap();
        std::fs::write(dir.join(CONTROLS), controls).unwrap();
        Run::open(&dir.join(crate::store::RESULTS)).unwrap()
    }

    #[test]
    fn a_run_whose_clock_changed_says_values_move_by_the_clock_range() {
        let dir = tempfile::tempdir().unwrap();
        // A third of the readings at 1995 MHz: the range is 15 / 1980, though every pair agrees
        // within 0.001 %.
        let t = run_with_clock(dir.path(), 90, 30, "100.001");
        let b = between_processes(&t).unwrap().unwrap();
        assert_eq!(b.len(), 1);
        assert!(b[0].own_u95 < 1e-4, "{:?}", b[0]);
        assert!(
            (b[0].clock_range - 15.0 / 1980.0).abs() < 1e-9,
            "{}",
            b[0].clock_range
        );
        assert_eq!(b[0].u95, b[0].clock_range);
        // One reading in ninety is not the run's state: the percentiles leave it out.
        let t = run_with_clock(dir.path(), 90, 0, "100.001");
        assert_eq!(between_processes(&t).unwrap().unwrap()[0].clock_range, 0.0);
        let t = run_with_clock(dir.path(), 200, 1, "100.001");
        assert_eq!(between_processes(&t).unwrap().unwrap()[0].clock_range, 0.0);
    }

    /// bank_stride on an H100: the bandwidth's pairs differ by 0.01 %, the expected ways (a count
    /// the program computes) by nothing. The count keeps its own spread, none, whatever the clock
    /// did; the bandwidth is floored by the timed metrics alone, not halfway to the count.
    #[test]
    fn a_metric_whose_pairs_agree_exactly_keeps_its_own_spread_of_none() {
        let ways = summarize("ways", &pairs(&[1.0; 4])).unwrap();
        let quiet = summarize("quiet", &pairs(&[1.0001; 4])).unwrap();
        let loud = summarize("loud", &pairs(&[1.004, 0.996, 1.004, 0.996])).unwrap();
        assert!(ways.exact() && !quiet.exact());
        let all = with_floor(vec![ways, quiet.clone(), loud.clone()]);
        assert_eq!(all[0].u95, 0.0);
        // The median of the two timed metrics' own, not of all three.
        let floor = (quiet.own_u95 + loud.own_u95) / 2.0;
        assert!((all[1].u95 - floor).abs() < 1e-15, "{:?}", all[1]);
        assert_eq!(all[2].u95, loud.own_u95);
        // The clock's range moves the timed metrics, not the count.
        let dir = tempfile::tempdir().unwrap();
        let t = run_with_clock(dir.path(), 90, 30, "100");
        let mut b = between_processes(&t).unwrap().unwrap();
        assert!(b[0].exact() && b[0].u95 == 0.0, "{:?}", b[0]);
        assert!(b[0].clock_range > 0.0);
        b[0].max_diff = 0.001;
        assert!(!b[0].exact());
    }

    #[test]
    fn too_few_pairs_say_nothing() {
        assert!(summarize("m", &pairs(&[1.0, 1.01])).is_none());
        assert!(summarize("m", &pairs(&[1.0, 1.01, 0.99])).is_some());
    }

    #[test]
    fn equal_processes_give_no_spread_and_no_outlier() {
        let b = summarize("m", &pairs(&[1.0; 8])).unwrap();
        assert_eq!(b.rel_sd, 0.0);
        assert!(b.outliers.is_empty());
    }
}
