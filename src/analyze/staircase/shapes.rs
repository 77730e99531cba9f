//! Other shapes of the same steps, for the margins of the one found: a sinusoid of its period,
//! rounded edges, and a second period nested in the first.

use super::{rising, rss_floor, Bounds, Cost, Staircase, MIN_STEPS, SHAPE_TEST_STEPS};
use crate::analyze::fit::Normal;

impl Cost {
    /// Whether the staircase must also beat a sinusoid: only with few steps (a bend of the curve
    /// can pass for a handful of steps, not for a dozen) and a period of 4 grid steps or more
    /// (a sinusoid fits any pattern of period 2 or 3 exactly).
    pub(crate) fn needs_shape_test(&self, st: &Staircase) -> bool {
        let b = st.bounds;
        let steps = (self.g[b.end - 1] - self.g[b.knee]) / st.period;
        st.period >= 4 && steps < SHAPE_TEST_STEPS
    }

    /// Residual sum of squares with a sinusoid of the staircase's period in place of the steps:
    /// a smooth wiggle fits a sinusoid as well as a staircase; real steps fit a staircase better.
    pub(crate) fn sine_rss(&self, st: &Staircase) -> f64 {
        let mid = self.prefix(|i| self.sine_row(i, st.period));
        self.total(&mid, st.bounds, |s: &Normal<6>| s.rss())
            .max(rss_floor(self.len()))
    }

    /// Residual sum of squares of the staircase with rounded edges: each step rises smoothly
    /// (a cubic, flat at both ends, or a straight ramp) over `width` grid steps after its edge
    /// (an eighth to a half of the period, where the rise of a
    /// real staircase is spread out), with the edge moved back to where the rise starts. The
    /// best over widths and edges, and how many were tried. A sinusoid fits such a rise better
    /// than sharp steps do, but not better than rounded ones.
    pub(crate) fn rounded_rss(&self, st: &Staircase) -> (f64, usize) {
        self.rounded_at(st.bounds, st.period, st.residue)
    }

    /// `rounded_rss` for another period: its best sharp phase, then rounded edges around it.
    pub(crate) fn rounded_for(&self, st: &Staircase, period: i64) -> (i64, f64, usize) {
        let residue = self.phase_scan(st.bounds, period).0;
        let (rss, tried) = self.rounded_at(st.bounds, period, residue);
        (residue, rss, tried)
    }

    /// The widths (grid steps) over which rounded edges rise: an eighth to a half of the period,
    /// in sixteenths (a rise of 28 on P = 64 fitted with 24 or 32 can pull the period to 65).
    pub(crate) fn rounded_widths(&self, period: i64) -> Vec<i64> {
        let mut widths: Vec<i64> = (2..=8)
            .map(|k| k * period / 16)
            .filter(|w| *w >= 2)
            .collect();
        widths.dedup();
        widths
    }

    pub(super) fn rounded_at(&self, b: Bounds, period: i64, residue: i64) -> (f64, usize) {
        let sharp = residue;
        let outside = self.flat[b.knee].rss() + self.tail[b.end];
        let widths = self.rounded_widths(period);
        // Every fit shares the trend part of its sums (the points' rows but for the step count):
        // it is summed once, as `Normal::add` sums it, and each fit sums the step count's
        // entries alone, with the same operations as `add` (`wv`: weight times each regressor
        // before the step count), and is solved by `LastRegressor`.
        let mut trend = Normal::<5>::default();
        for i in b.knee..b.end {
            trend.add(self.w[i], &self.stair_row_at(i, 0.0));
        }
        let solver = trend.last_regressor();
        let wv: Vec<[f64; 3]> = (b.knee..b.end)
            .map(|i| {
                let t = self.t[i];
                [self.w[i] * 1.0, self.w[i] * t, self.w[i] * (t * t)]
            })
            .collect();
        // A rise as a cubic (flat at both ends) or as a straight ramp, the commonest real shape:
        // `shapes[into − 1]` holds how far a step of each has risen `into` grid steps into the
        // period (both fitted in one pass over the points).
        let fits: Vec<(i64, Vec<[f64; 2]>)> = widths
            .iter()
            .map(|&width| {
                let shapes = (1..=period)
                    .map(|into| {
                        let rise = (into as f64 / width as f64).min(1.0);
                        [rise * rise * (3.0 - 2.0 * rise), rise]
                    })
                    .collect();
                (width, shapes)
            })
            .collect();
        let (g, w, c) = (
            &self.g[b.knee..b.end],
            &self.w[b.knee..b.end],
            &self.c[b.knee..b.end],
        );
        let scale = |step: f64| step * period as f64 / self.span;
        let mut best = f64::INFINITY;
        let mut tried = 0;
        // Each edge moved back by up to a width, or on by a quarter of it: the edges of all
        // widths in one pass. A point's step counts are a function of `d = g − residue − 1`
        // (`d = q·period + r`: `q` steps and the rise `shapes[r]`), and where the points are
        // dense they are looked up by `d`, one division each, else computed from `d` kept split.
        let widest = widths.iter().copied().max().unwrap_or(0);
        let (first, last) = (
            g.first().copied().unwrap_or(0),
            g.last().copied().unwrap_or(0),
        );
        let d_min = first - (sharp + widest / 4) - 1;
        let d_max = last - (sharp - widest) - 1;
        let by_d: Vec<Vec<[f64; 2]>> = if d_max - d_min < 4 * g.len() as i64 {
            fits.iter()
                .map(|(_, shapes)| {
                    (d_min..=d_max)
                        .map(|d| {
                            let q = d.div_euclid(period) as f64;
                            let shape = shapes[d.rem_euclid(period) as usize];
                            [scale(q + shape[0]), scale(q + shape[1])]
                        })
                        .collect()
                })
                .collect()
        } else {
            Vec::new()
        };
        let mut split: Vec<(i64, i64)> = Vec::new();
        if by_d.is_empty() {
            split = self
                .split(b.knee..b.end, period)
                .into_iter()
                .map(|(q, r)| {
                    // g − (sharp − widest) − 1, from g = q·period + r.
                    let d = r - (sharp - widest) - 1;
                    (q + d.div_euclid(period), d.rem_euclid(period))
                })
                .collect();
        }
        for shift in -widest..=widest / 4 {
            if shift > -widest {
                // One more on the residue: one less on every d.
                for (q, r) in split.iter_mut() {
                    if *r == 0 {
                        (*q, *r) = (*q - 1, period - 1);
                    } else {
                        *r -= 1;
                    }
                }
            }
            // d − d_min of a point at this residue, from its g.
            let at = -(sharp + shift) - 1 - d_min;
            for (f, (width, shapes)) in fits.iter().enumerate() {
                if shift < -width || shift > width / 4 {
                    continue;
                }
                let columns = match by_d.get(f) {
                    Some(by_d) => step_columns(w, c, &wv, |k| by_d[(g[k] + at) as usize]),
                    None => step_columns(w, c, &wv, |k| {
                        let (q, r) = split[k];
                        let shape = shapes[r as usize];
                        [scale(q as f64 + shape[0]), scale(q as f64 + shape[1])]
                    }),
                };
                tried += 2;
                for column in columns {
                    best = best.min(outside + rising(solver.solve(column)));
                }
            }
        }
        (best.max(rss_floor(self.len())), tried.max(1))
    }

    /// A second period nested in the first: steps of a multiple of the period (every other
    /// step larger) or of a divisor (small steps between the large ones), fitted together with
    /// the first. The best such period, its residue, the residual sum of squares and how many
    /// were tried; `None` when none fits with both steps rising. Where the coverage of `st`
    /// tolerated irregular edges (`irregular`: their places), a multiple must also have its own
    /// drops larger than those between (`multiple_steps`, where those edges count for neither).
    pub(crate) fn nested(
        &self,
        st: &Staircase,
        irregular: Option<&[i64]>,
    ) -> Option<(i64, i64, f64, usize)> {
        let (b, p) = (st.bounds, st.period);
        let extent = self.g[b.end - 1] - self.g[b.knee] + 1;
        let outside = self.flat[b.knee].rss() + self.tail[b.end];
        let mut pairs = Vec::new();
        for k in 2..=4 {
            let q = k * p;
            if q * MIN_STEPS <= extent {
                pairs.extend((0..k).map(|j| (q, (st.residue + j * p).rem_euclid(q))));
            }
            if p % k == 0 && p / k >= 2 && (p / k) % self.stride_in(b) == 0 {
                pairs.push((p / k, st.residue.rem_euclid(p / k)));
            }
        }
        let mut best: Option<(i64, i64, f64)> = None;
        for &(q, r) in &pairs {
            let mut sums = Normal::<6>::default();
            for i in b.knee..b.end {
                let t = self.t[i];
                let row = [
                    1.0,
                    t,
                    t * t,
                    self.step(i, p, st.residue),
                    self.step(i, q, r),
                    self.c[i],
                ];
                sums.add(self.w[i], &row);
            }
            let (rss, beta) = sums.solve();
            // A multiple must step at its own edges, not only fit two odd edges of the first.
            let own = irregular.is_none_or(|at| self.multiple_steps(st, (q, r), at, false));
            if beta[3] <= 0.0 || beta[4] <= 0.0 || !own {
                continue;
            }
            let rss = (outside + rss).max(rss_floor(self.len()));
            if best.is_none_or(|(_, _, r)| rss < r) {
                best = Some((q, r, rss));
            }
        }
        best.map(|(q, r, rss)| (q, r, rss, pairs.len()))
    }
}

/// The step count's entries of the sums (`Normal::column(3)`) of two staircases over the same
/// points (weights `w`, costs `c`, `wv`: the weight times each regressor before the step count),
/// `steps(k)` giving point k's step count in each: what `Normal::add` adds there, with the same
/// operations in the same order.
#[inline(always)]
fn step_columns(
    w: &[f64],
    c: &[f64],
    wv: &[[f64; 3]],
    steps: impl Fn(usize) -> [f64; 2],
) -> [[f64; 5]; 2] {
    let mut columns = [[0.0; 5]; 2];
    for (k, ((&w, &c), wv)) in w.iter().zip(c).zip(wv).enumerate() {
        for (column, s) in columns.iter_mut().zip(steps(k)) {
            column[0] += wv[0] * s;
            column[1] += wv[1] * s;
            column[2] += wv[2] * s;
            let ws = w * s;
            column[3] += ws * s;
            column[4] += ws * c;
        }
    }
    columns
}

/// The most irregular edges `freed_rss` gives a drop of their own.
pub(crate) const FREE_EDGES: usize = 4;

impl Cost {
    /// Residual sum of squares of the staircase with the drops at `edges` (grid positions of
    /// its edges: the last point before each drop; the first [`FREE_EDGES`]) each of a height
    /// of its own: the model of a staircase whose coverage tolerated those edges as irregular.
    /// Two edges of fifteen at a tenth of the drop leave every later point a step and a half
    /// below the plain staircase, which then fits worse than a multiple of its period that
    /// puts an edge of its own near them (issue 34's Irregular battery read 96 or 128, or 32
    /// at a confidence below zero); each edge freed costs one parameter.
    pub(crate) fn freed_rss(&self, st: &Staircase, edges: &[i64]) -> f64 {
        let b = st.bounds;
        let outside = self.flat[b.knee].rss() + self.tail[b.end];
        let (rss, beta) = self.freed_sums(b, (st.period, st.residue), edges).solve();
        let rss = if beta[3] > 0.0 { rss } else { f64::INFINITY };
        (outside + rss).max(rss_floor(self.len()))
    }

    /// The fitted cost of the middle part `b` under a staircase of `period` and `residue` whose
    /// drops at `edges` (the first [`FREE_EDGES`]) have heights of their own, at every point
    /// (0 outside `b`): the model `freed_rss` fits.
    pub(crate) fn freed_model(
        &self,
        b: Bounds,
        (period, residue): (i64, i64),
        edges: &[i64],
    ) -> Vec<f64> {
        let (_, beta) = self.freed_sums(b, (period, residue), edges).solve();
        (0..self.len())
            .map(|i| {
                if i < b.knee || i >= b.end {
                    return 0.0;
                }
                let row = self.freed_row(i, (period, residue), edges);
                row[..4 + FREE_EDGES]
                    .iter()
                    .zip(&beta)
                    .map(|(r, b)| r * b)
                    .sum()
            })
            .collect()
    }

    fn freed_row(
        &self,
        i: usize,
        (period, residue): (i64, i64),
        edges: &[i64],
    ) -> [f64; 5 + FREE_EDGES] {
        let t = self.t[i];
        let mut row = [0.0; 5 + FREE_EDGES];
        row[..4].copy_from_slice(&[1.0, t, t * t, self.step(i, period, residue)]);
        for (k, &e) in edges.iter().take(FREE_EDGES).enumerate() {
            row[4 + k] = if self.g[i] > e { 1.0 } else { 0.0 };
        }
        row[4 + FREE_EDGES] = self.c[i];
        row
    }

    fn freed_sums(
        &self,
        b: Bounds,
        stair: (i64, i64),
        edges: &[i64],
    ) -> Normal<{ 5 + FREE_EDGES }> {
        let mut sums = Normal::<{ 5 + FREE_EDGES }>::default();
        for i in b.knee..b.end {
            sums.add(self.w[i], &self.freed_row(i, stair, edges));
        }
        sums
    }
}
