//! Other shapes of the same steps, for the margins of the one found: a sinusoid of its period,
//! rounded edges, and a second period nested in the first.

use super::{rising_rss, rss_floor, Bounds, Cost, Staircase, MIN_STEPS, SHAPE_TEST_STEPS};
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
        let mut best = f64::INFINITY;
        let mut tried = 0;
        // A rise as a cubic (flat at both ends) or as a straight ramp, the commonest real shape.
        for (&width, linear) in widths.iter().flat_map(|w| [(w, false), (w, true)]) {
            for shift in -width..=width / 4 {
                let residue = sharp + shift;
                let mut sums = Normal::<5>::default();
                for i in b.knee..b.end {
                    let d = self.g[i] - residue - 1;
                    let into = (d.rem_euclid(period) + 1) as f64;
                    let rise = (into / width as f64).min(1.0);
                    let shape = if linear {
                        rise
                    } else {
                        rise * rise * (3.0 - 2.0 * rise)
                    };
                    let step = d.div_euclid(period) as f64 + shape;
                    let t = self.t[i];
                    let row = [1.0, t, t * t, step * period as f64 / self.span, self.c[i]];
                    sums.add(self.w[i], &row);
                }
                tried += 1;
                best = best.min(outside + rising_rss(&sums));
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
            if p % k == 0 && p / k >= 2 && (p / k) % self.stride == 0 {
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
            let own = irregular.is_none_or(|at| self.multiple_steps(st, q, r, at));
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
        let mut sums = Normal::<{ 5 + FREE_EDGES }>::default();
        for i in b.knee..b.end {
            let t = self.t[i];
            let mut row = [0.0; 5 + FREE_EDGES];
            row[..4].copy_from_slice(&[1.0, t, t * t, self.step(i, st.period, st.residue)]);
            for (k, &e) in edges.iter().take(FREE_EDGES).enumerate() {
                row[4 + k] = if self.g[i] > e { 1.0 } else { 0.0 };
            }
            row[4 + FREE_EDGES] = self.c[i];
            sums.add(self.w[i], &row);
        }
        let (rss, beta) = sums.solve();
        let rss = if beta[3] > 0.0 { rss } else { f64::INFINITY };
        (outside + rss).max(rss_floor(self.len()))
    }
}
