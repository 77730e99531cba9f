//! What the period means on the curve: where the peaks are, the drop after them, what a second
//! period's steps cost, the knee of a curve without a period, and the best x.

use super::grid::{cost, Grid};
use super::{Best, Confidence, Drop, Period, Sense};
use crate::analyze::fit::median;
use crate::analyze::staircase;

/// What one step past the secondary period's own peaks costs (relative; positive: worse). For a
/// shorter secondary period: the median over its peaks that are not the primary's; for a longer
/// one: the median over its peaks, less the median over the primary's other peaks.
pub(super) fn secondary_cost(grid: &Grid, sense: Sense, p: &Period, q: &Period) -> Option<f64> {
    let on = |x: f64, per: &Period| {
        let r = (x - per.phase).rem_euclid(per.period);
        r < 1e-6 || per.period - r < 1e-6
    };
    let costs = |pred: &dyn Fn(f64) -> bool| -> Vec<f64> {
        (0..grid.x.len().saturating_sub(1))
            .filter(|&i| pred(grid.x[i]) && grid.y[i] != 0.0)
            .map(|i| {
                let step = grid.y[i + 1] / grid.y[i] - 1.0;
                match sense {
                    Sense::HigherIsBetter => -step,
                    Sense::LowerIsBetter => step,
                }
            })
            .collect()
    };
    if q.period < p.period {
        median(&costs(&|x| on(x, q) && !on(x, p)))
    } else {
        let own = median(&costs(&|x| on(x, q)))?;
        let other = median(&costs(&|x| on(x, p) && !on(x, q)))?;
        Some(own - other)
    }
}

/// Where the peaks really are, near the residue of the steps: when a drop is spread over two
/// or three points, the best point of each period may sit one or two before the largest step.
/// Moves to a neighbouring residue only when its values are better beyond doubt: in the median
/// over the periods, by three standard errors (from `noise`, the relative noise of one point)
/// and by 0.5 % at least.
pub(super) fn peak_residue(
    grid: &Grid,
    sense: Sense,
    (period, residue): (i64, i64),
    knee: Option<f64>,
    noise: f64,
) -> i64 {
    let from = knee.unwrap_or(f64::NEG_INFINITY);
    // Work over cost: the throughput, also for a time metric (the most work for one step's time).
    let value =
        |i: usize| Some(grid.x[i].ln() - cost(grid, sense, i)?.ln()).filter(|v| v.is_finite());
    let at = |g: i64| grid.g.binary_search(&g).ok().filter(|&i| grid.x[i] >= from);
    let mut best = (residue, 0.0);
    for q in (residue - 2)..=(residue + 2) {
        if q == residue {
            continue;
        }
        let diffs: Vec<f64> = (0..)
            .map(|k| residue.rem_euclid(period) + k * period)
            .take_while(|&g| g <= *grid.g.last().unwrap_or(&0) + period)
            .filter_map(|g| Some(value(at(g + q - residue)?)? - value(at(g)?)?))
            .collect();
        if diffs.len() < 3 {
            continue;
        }
        // The median, so that an outlier or two cannot move the peaks; its standard error is
        // about 1.25 times that of the mean.
        let n = diffs.len() as f64;
        let typical = median(&diffs).unwrap_or(0.0);
        let standard_error = 1.25 * std::f64::consts::SQRT_2 * noise / n.sqrt();
        if typical > 0.005 && typical > 3.0 * standard_error && typical > best.1 {
            best = (q, typical);
        }
    }
    best.0.rem_euclid(period)
}

/// Rounds away float dust such as 31.999999999.
pub(super) fn clean(v: f64) -> f64 {
    let r = (v * 1e9).round() / 1e9;
    if r == -0.0 {
        0.0
    } else {
        r
    }
}

pub(super) fn left_out(grid: &Grid, used: &[usize]) -> Vec<f64> {
    let n = grid.x.len();
    let mut kept = vec![false; n];
    for &i in used.iter().filter(|&&i| i < n) {
        kept[i] = true;
    }
    (0..grid.x.len())
        .filter(|&i| !kept[i])
        .map(|i| grid.x[i])
        .collect()
}

/// The knee of a curve without a period, when the flat part is there beyond doubt.
pub(super) fn baseline_knee(grid: &Grid, used: &[usize], b: &staircase::Baseline) -> Option<f64> {
    let m = used.len() as f64;
    let gain = m * (b.rss_no_knee / b.rss).ln() - 2.0 * m.ln();
    (b.bounds.knee > 1 && gain > Confidence::HIGH).then(|| grid.x[used[b.bounds.knee - 1]])
}

pub(super) fn best(grid: &Grid, sense: Sense) -> Option<Best> {
    let mut i_best = None::<usize>;
    for i in 0..grid.y.len() {
        if i_best.is_none_or(|b| sense.better(grid.y[i], grid.y[b])) {
            i_best = Some(i);
        }
    }
    let b = i_best?;
    let top = grid.y[b];
    let slack = 0.01 * top.abs();
    let within = (0..grid.y.len()).find(|&i| sense.loss(top, grid.y[i]) <= slack)?;
    Some(Best {
        x: grid.x[b],
        value: top,
        x_within_1pct: grid.x[within],
        value_within_1pct: grid.y[within],
        tied: vec![],
    })
}

/// The relative loss from each point at `g ≡ residue (mod period)` (grid steps, from `from` on)
/// to the next point, where that point lies early in the next step (as `drop_after` reads it):
/// `(g, loss)`, the loss positive where the value gets worse.
pub(super) fn losses_after(
    grid: &Grid,
    sense: Sense,
    (period, residue): (i64, i64),
    from: i64,
) -> Vec<(i64, f64)> {
    let reach = (period / 4).max(1);
    (0..grid.x.len().saturating_sub(1))
        .filter(|&i| grid.g[i] >= from && (grid.g[i] - residue).rem_euclid(period) == 0)
        .filter(|&i| grid.g[i + 1] - grid.g[i] <= reach && grid.y[i] != 0.0)
        .map(|i| {
            (
                grid.g[i],
                sense.loss(grid.y[i], grid.y[i + 1]) / grid.y[i].abs(),
            )
        })
        .collect()
}

/// The average loss from each peak to the next point, when that point lies early in the next step.
pub(super) fn drop_after(grid: &Grid, peaks: &[usize], period: i64, sense: Sense) -> Option<Drop> {
    let reach = (period / 4).max(1);
    let mut abs = Vec::new();
    let mut rel = Vec::new();
    let mut after = Vec::new();
    for &i in peaks {
        let j = i + 1;
        if j >= grid.x.len() || grid.g[j] - grid.g[i] > reach {
            continue;
        }
        let loss = sense.loss(grid.y[i], grid.y[j]);
        abs.push(loss);
        if grid.y[i] != 0.0 {
            rel.push(loss / grid.y[i].abs());
        }
        after.push(grid.x[j] - grid.x[i]);
    }
    if abs.is_empty() {
        return None;
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    Some(Drop {
        absolute: mean(&abs),
        relative: mean(&rel),
        after: median(&after)?,
        peaks: abs.len(),
    })
}
