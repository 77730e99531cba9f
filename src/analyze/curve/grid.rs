//! The curve on its x grid: points sorted and merged, the grid step, the cost of a launch at
//! each point, and the points that stand out (spikes, outliers).

use super::Sense;
use crate::analyze::fit::{median, robust_sigma};

/// A curve as the analysis reads it, and as every chart draws it: sorted by x (whatever the order
/// of the CSV's rows: held points are appended, `--order shuffled` stores rows shuffled), one
/// point per x. Several rows at one x (series grouped by fewer axes, repeats in a CSV without point ids) give
/// the median of their values; a gap if none has one. Non-finite x are left out.
pub(crate) fn one_per_x(points: &[(f64, Option<f64>)]) -> Vec<(f64, Option<f64>)> {
    let mut pts: Vec<(f64, Option<f64>)> = points
        .iter()
        .copied()
        .filter(|(x, _)| x.is_finite())
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut merged: Vec<(f64, Option<f64>)> = Vec::new();
    let mut i = 0;
    while i < pts.len() {
        let mut j = i;
        while j < pts.len() && pts[j].0 == pts[i].0 {
            j += 1;
        }
        let vals: Vec<f64> = pts[i..j]
            .iter()
            .filter_map(|p| p.1)
            .filter(|v| v.is_finite())
            .collect();
        merged.push((pts[i].0, median(&vals)));
        i = j;
    }
    merged
}

/// How many x of `points` more than one row falls at ([`one_per_x`] takes their median).
pub(crate) fn repeated_x(points: &[(f64, Option<f64>)]) -> usize {
    let mut xs: Vec<f64> = points
        .iter()
        .map(|p| p.0)
        .filter(|x| x.is_finite())
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.chunk_by(|a, b| a == b).filter(|c| c.len() > 1).count()
}

/// The sorted, de-duplicated curve on its x grid.
pub(super) struct Grid {
    /// Observed points: x, value, grid index.
    pub(super) x: Vec<f64>,
    pub(super) y: Vec<f64>,
    pub(super) g: Vec<i64>,
    pub(super) x0: f64,
    pub(super) unit: f64,
    pub(super) gaps: usize,
}

impl Grid {
    pub(super) fn new(points: &[(f64, Option<f64>)]) -> Grid {
        let merged = one_per_x(points);
        let xs: Vec<f64> = merged.iter().map(|p| p.0).collect();
        let (x0, unit) = grid_unit(&xs);
        let mut grid = Grid {
            x: vec![],
            y: vec![],
            g: vec![],
            x0,
            unit,
            gaps: 0,
        };
        for (x, y) in merged {
            match y {
                Some(v) => {
                    grid.x.push(x);
                    grid.y.push(v);
                    grid.g.push(((x - x0) / unit).round() as i64);
                }
                None => grid.gaps += 1,
            }
        }
        grid
    }

    /// Whether the period, fold and comb searches can work on this grid: its indices span at
    /// most 2^52 steps, so that they and their sums stay exact integers. An x far off the others
    /// (1e308 beside 1..1024, a pow2 axis to 2^63) spans more: its index saturates, and the
    /// searches' arithmetic would overflow; such a curve is read without a period.
    pub(super) fn searchable(&self) -> bool {
        const SPAN: i64 = 1 << 52;
        self.g.iter().all(|&g| (0..=SPAN).contains(&g))
    }

    pub(super) fn to_x(&self, g: i64) -> f64 {
        self.x0 + g as f64 * self.unit
    }
}

/// The first x and the step of the grid all x lie on (the gcd of the differences).
pub(super) fn grid_unit(xs: &[f64]) -> (f64, f64) {
    let Some(&x0) = xs.first() else {
        return (0.0, 1.0);
    };
    for digits in 0..=6 {
        let scale = 10f64.powi(digits);
        let ints: Option<Vec<i64>> = xs
            .iter()
            .map(|x| {
                let v = (x - x0) * scale;
                ((v - v.round()).abs() < 1e-6 * scale.max(1.0) && v.abs() < 9e15)
                    .then(|| v.round() as i64)
            })
            .collect();
        if let Some(ints) = ints {
            let g = ints.iter().fold(0i64, |acc, &v| gcd(acc, v));
            return (x0, if g == 0 { 1.0 } else { g as f64 / scale });
        }
    }
    let step = xs
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|d| *d > 0.0)
        .fold(f64::INFINITY, f64::min);
    (x0, if step.is_finite() { step } else { 1.0 })
}

pub(super) fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Points whose relative residual is far out (more than 5 robust standard deviations and 5 %),
/// at most 5 % of the points, the worst first. The floor of 5 % keeps a model that misses some
/// real structure from throwing that structure away as outliers.
pub(super) fn outliers(residuals: &[f64]) -> Vec<usize> {
    let limit = outlier_limit(residuals);
    let mut far: Vec<usize> = (0..residuals.len())
        .filter(|&i| residuals[i].abs() > limit)
        .collect();
    far.sort_by(|&a, &b| residuals[b].abs().total_cmp(&residuals[a].abs()));
    far.truncate(residuals.len() / 20);
    far
}

/// How far off (relative) a point must be to be an outlier: 5 robust standard deviations of the
/// residuals, and 5 %.
pub(super) fn outlier_limit(residuals: &[f64]) -> f64 {
    (5.0 * robust_sigma(residuals)).max(0.05)
}

/// The cost of one launch at point `i`: work over throughput (work taken as proportional to x),
/// or the time itself.
pub(super) fn cost(grid: &Grid, sense: Sense, i: usize) -> Option<f64> {
    let (x, y) = (grid.x[i], grid.y[i]);
    let c = match sense {
        Sense::HigherIsBetter if x > 0.0 && y > 0.0 => x / y,
        Sense::LowerIsBetter if y > 0.0 => y,
        _ => return None,
    };
    c.is_finite().then_some(c)
}

/// The robust standard deviation of the relative point-to-point change.
fn change_sigma(values: &[f64]) -> f64 {
    let change: Vec<f64> = values
        .windows(2)
        .map(|w| (w[1] - w[0]) / w[1].abs().max(f64::MIN_POSITIVE))
        .collect();
    robust_sigma(&change)
}

/// How far a change must go to be more than the noise, for [`on_ramp`]: two robust standard
/// deviations of the point-to-point change, and 0.5 %.
fn ramp_noise(values: &[f64]) -> f64 {
    (2.0 * change_sigma(values)).max(0.005)
}

/// Point `k` follows the local trend of a ramp rather than standing out of it: it lies inside a
/// run of four points (three steps) that move one way, each step beyond the noise (`noise`,
/// relative to the point stepped to): at an end, the first or the last four; inside, four with
/// one more neighbour on either side. A point on a steep or bending ramp is off the line through
/// its neighbours but goes their way; a spike, or two outliers side by side, turn back within
/// the run. On a flat or gentle stretch no point is on a ramp (its steps are within the noise),
/// and the outlier tests stand as they were.
pub(super) fn on_ramp(values: &[f64], k: usize, noise: f64) -> bool {
    let n = values.len();
    // Points `from..from + 4` step one way, each step beyond the noise.
    let steady = |from: usize| {
        from + 4 <= n && {
            let w = &values[from..from + 4];
            let up = w[1] > w[0];
            w.windows(2)
                .all(|p| (p[1] > p[0]) == up && (p[1] - p[0]).abs() > noise * p[1].abs())
        }
    };
    match k {
        0 => steady(0),
        _ if k + 1 == n => n >= 4 && steady(n - 4),
        _ => (k >= 2 && steady(k - 2)) || steady(k - 1),
    }
}

/// The points of `candidates` that stand out of the local trend (not [`on_ramp`]).
pub(super) fn off_ramp(values: &[f64], candidates: &mut Vec<usize>) {
    let noise = ramp_noise(values);
    candidates.retain(|&k| !on_ramp(values, k, noise));
}

/// Points that stand out from their neighbours: off the line through the two neighbours (or,
/// at the ends, through the next two) and off each neighbour, by more than 5 % and more than 5
/// robust standard deviations of the point-to-point change, and not on a ramp ([`on_ramp`]).
/// A step edge is off the line but level with one neighbour, so it stays.
pub(super) fn spikes(g: &[i64], values: &[f64]) -> Vec<usize> {
    let n = values.len();
    if n < 4 {
        return vec![];
    }
    let limit = (5.0 * change_sigma(values) / std::f64::consts::SQRT_2).max(0.05);
    let noise = ramp_noise(values);
    // The value on the line through points a and b, at point k.
    let line = |a: usize, b: usize, k: usize| {
        values[a] + (values[b] - values[a]) * (g[k] - g[a]) as f64 / (g[b] - g[a]) as f64
    };
    (0..n)
        .filter(|&k| {
            let (expected, near) = match k {
                0 => (line(1, 2, 0), (values[0] - values[1]).abs()),
                _ if k == n - 1 => (line(n - 3, n - 2, k), (values[k] - values[k - 1]).abs()),
                _ => (
                    line(k - 1, k + 1, k),
                    (values[k] - values[k - 1])
                        .abs()
                        .min((values[k] - values[k + 1]).abs()),
                ),
            };
            let scale = limit * values[k].abs();
            (values[k] - expected).abs() > scale && near > scale && !on_ramp(values, k, noise)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_at_the_same_x_merge_into_their_median() {
        let pts = [
            (1.0, Some(5.0)),
            (1.0, Some(7.0)),
            (1.0, Some(100.0)),
            (2.0, None),
            (2.0, None),
        ];
        let grid = Grid::new(&pts);
        assert_eq!(
            (grid.x.clone(), grid.y.clone(), grid.gaps),
            (vec![1.0], vec![7.0], 1)
        );
    }

    /// transpose_sizes' naive transpose: the cost (n over GB/s) of its 32 sizes, the first ones
    /// falling steeply (each a half to three quarters of the one before). No point of that ramp is
    /// a spike; a point above both neighbours on it is, and so is a first point above a flat
    /// start, and a pair of outliers side by side keeps its outer one.
    #[test]
    fn points_on_a_steep_ramp_are_not_spikes_but_a_point_above_both_neighbours_is() {
        let ramp = [
            3.686, 1.928, 1.483, 1.32, 1.338, 1.405, 1.421, 1.441, 1.546, 1.621, 1.741, 1.893,
            1.953, 2.092, 2.172, 2.259, 2.555, 2.571, 2.765, 3.03, 3.057, 3.169, 3.328, 3.609,
            3.589, 3.839, 3.953, 4.13, 4.294, 4.509, 4.589, 4.301,
        ];
        let g: Vec<i64> = (1..=ramp.len() as i64).collect();
        assert_eq!(spikes(&g, &ramp), Vec::<usize>::new());
        let mut spiked = ramp;
        spiked[6] = 2.2;
        assert_eq!(spikes(&g, &spiked), [6]);
        let mut flat = [1.0; 32];
        for (i, v) in flat.iter_mut().enumerate() {
            *v += 0.01 * ((i * 7 % 5) as f64 - 2.0);
        }
        flat[0] = 3.0;
        assert_eq!(spikes(&g, &flat), [0]);
        // Judged against the local trend, the residual outliers of a flat fit keep only points
        // that stand out of it.
        let mut far = vec![0, 1, 2, 6];
        off_ramp(&spiked, &mut far);
        assert_eq!(far, [6]);
        // Two outliers side by side on a flat line: the second lies between the first and the
        // line, but turns back within four points.
        let mut pair = flat;
        pair[0] = 1.0;
        (pair[11], pair[12]) = (1.55, 1.3);
        let mut far = vec![11, 12];
        off_ramp(&pair, &mut far);
        assert_eq!(far, [11, 12]);
    }

    #[test]
    fn grid_unit_is_the_gcd_of_steps() {
        assert_eq!(grid_unit(&[128.0, 256.0, 640.0]), (128.0, 128.0));
        assert_eq!(grid_unit(&[1.0, 3.0, 7.0]), (1.0, 2.0));
        assert_eq!(grid_unit(&[0.5, 1.0, 2.5]), (0.5, 0.5));
    }
}
