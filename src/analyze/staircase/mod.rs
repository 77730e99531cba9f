//! The staircase model: the cost of one launch (time, or work over throughput) is flat up to a knee,
//! then climbs in steps `τ·⌈(x − φ)/P⌉` on top of a smooth (quadratic) trend, and may end in a
//! straight line where the curve becomes bandwidth-bound and the steps drown.
//!
//! Every period `P` and phase `φ` on the x grid is tried; for each, the fit is a weighted least
//! squares with weights `1/cost²`, so residuals are relative and a 1 % wobble counts the same at
//! every height. Moving the phase by one grid step changes the step count of one residue class
//! only, so all phases of one period cost one pass over the points. The knee and the start of the
//! straight tail are found by prefix sums, alternating with the period search.

mod coverage;
mod residuals;
mod search;
mod shapes;
pub(crate) use shapes::FREE_EDGES;

use super::fit::{ceil_div, median, Normal};

/// Where the parts of the curve begin: flat `0..knee`, steps (or trend) `knee..end`, tail `end..`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bounds {
    pub knee: usize,
    pub end: usize,
}

/// The best fit without a period: flat, then a quadratic trend, then a straight tail.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Baseline {
    /// Flat, then the trend to the last point: where the staircase search starts.
    pub start: Bounds,
    pub bounds: Bounds,
    pub rss: f64,
    /// The trend alone, from the first point to the last.
    pub rss_no_knee: f64,
}

/// The best staircase.
#[derive(Debug, Clone)]
pub(crate) struct Staircase {
    /// Period, in grid steps.
    pub period: i64,
    /// Peaks sit at `g ≡ residue (mod period)`: the last point of each step.
    pub residue: i64,
    pub bounds: Bounds,
    pub rss: f64,
    /// Best residual sum of squares for each period tried (all with the final bounds).
    pub rss_by_period: Vec<(i64, f64)>,
    /// How many (period, phase) pairs were tried.
    pub candidates: usize,
}

/// What one search over all periods and phases found, for fixed bounds.
struct Found {
    period: i64,
    residue: i64,
    rss: f64,
    /// Best residual sum of squares of each period.
    by_period: Vec<(i64, f64)>,
    /// How many (period, phase) pairs were tried.
    candidates: usize,
}

/// The largest period tried, in grid steps: longer periods would make the search slow, and these
/// sweeps do not look for them.
const MAX_PERIOD: i64 = 256;
/// A period is tried only where at least this many of its steps lie between the knee and the
/// tail: fewer steps cannot be told from a bent line.
const MIN_STEPS: i64 = 3;
/// Staircases with fewer steps than this must also beat a sinusoid of their period.
const SHAPE_TEST_STEPS: i64 = 12;
/// What a straight tail costs, in units of ln(points) of BIC (its line and its start).
const TAIL_COST: f64 = 3.0;
/// The fewest points of a straight tail (none at all is allowed too).
const MIN_TAIL: usize = 4;
/// The fewest points between the knee and the tail.
const MIN_MIDDLE: usize = 6;

/// Whether a residual sum of squares `rss` beats `best` beyond rounding: two periods or phases
/// whose steps fall alike on the points (P and P + 1 where the points lie every 8th x, or edges
/// inside a hole of the grid) fit alike, and the one tried first (the shorter period, the lower
/// phase) stands; floating-point noise does not choose.
pub(crate) fn beats(rss: f64, best: f64) -> bool {
    if best.is_finite() {
        rss < best - 1e-12 * best.abs()
    } else {
        rss < best
    }
}

/// Residual sums of squares below this (relative to the point count) are treated as this: a 0.1 %
/// noise floor, so that wobbles smaller than 0.1 % are not told apart and exact curves still
/// compare by something finite.
pub(crate) fn rss_floor(n: usize) -> f64 {
    n as f64 * 1e-6
}

/// The points, prepared once: grid index, scaled position, cost over its median, weights, and
/// prefix sums of the flat part and of the straight tail.
pub(crate) struct Cost {
    g: Vec<i64>,
    /// Grid index scaled to [0, 1].
    t: Vec<f64>,
    c: Vec<f64>,
    w: Vec<f64>,
    span: f64,
    /// The typical distance between points (grid steps): periods are tried in multiples of it,
    /// since a grid that samples every 4th x cannot tell 64 from 65.
    stride: i64,
    /// `flat[k]`: sums of points `0..k` for a constant.
    flat: Vec<Normal<2>>,
    /// Prefix sums of the staircase rows with the step count left at 0.
    trend5: Vec<Normal<5>>,
    /// `tail[e]`: residual sum of squares of a straight line through points `e..`
    /// (0 when empty, infinite when shorter than `MIN_TAIL`).
    tail: Vec<f64>,
}

impl Cost {
    /// `g`: sorted grid indices; `cost`: positive costs; `weights`: the weight of each point,
    /// `1/cost²` (relative residuals) when `None`. Weights are relative to the cost as given.
    pub(crate) fn new(g: &[i64], cost: &[f64], weights: Option<&[f64]>) -> Cost {
        let n = g.len();
        let g0 = g.first().copied().unwrap_or(0);
        let span = (g.last().copied().unwrap_or(0) - g0).max(1) as f64;
        let t: Vec<f64> = g.iter().map(|&gi| (gi - g0) as f64 / span).collect();
        let mid = median(cost).unwrap_or(1.0).max(f64::MIN_POSITIVE);
        let c: Vec<f64> = cost.iter().map(|v| v / mid).collect();
        let w: Vec<f64> = match weights {
            Some(w) => w.iter().map(|v| v * mid * mid).collect(),
            None => c.iter().map(|v| 1.0 / (v * v)).collect(),
        };
        let mut flat = vec![Normal::<2>::default(); n + 1];
        for i in 0..n {
            flat[i + 1] = flat[i];
            flat[i + 1].add(w[i], &[1.0, c[i]]);
        }
        let mut tail = vec![0.0; n + 1];
        let mut acc = Normal::<3>::default();
        for e in (0..n).rev() {
            acc.add(w[e], &[1.0, t[e], c[e]]);
            tail[e] = if n - e < MIN_TAIL {
                f64::INFINITY
            } else {
                acc.rss()
            };
        }
        let mut steps: Vec<f64> = g.windows(2).map(|p| (p[1] - p[0]) as f64).collect();
        steps.retain(|d| *d > 0.0);
        let stride = median(&steps).map_or(1, |d| (d.round() as i64).max(1));
        let mut cost = Cost {
            g: g.to_vec(),
            t,
            c,
            w,
            span,
            stride,
            flat,
            trend5: vec![],
            tail,
        };
        cost.trend5 = cost.prefix(|i| {
            let t = cost.t[i];
            [1.0, t, t * t, 0.0, cost.c[i]]
        });
        cost
    }

    pub(crate) fn len(&self) -> usize {
        self.g.len()
    }

    /// The typical distance between points, in grid steps.
    pub(crate) fn stride(&self) -> i64 {
        self.stride
    }

    /// The typical distance between the points of the part `b` (grid steps): the stride of the
    /// steps, which periods are tried in multiples of. On a grid of 1..63 and then every 8th x
    /// the whole grid's median distance is 1 while the steps lie where x moves by 8, and 63 and
    /// 64 fitted those points alike (issue 34's Holes battery read 63).
    pub(crate) fn stride_in(&self, b: Bounds) -> i64 {
        let end = b.end.min(self.len());
        if end < b.knee + 2 {
            return self.stride;
        }
        let steps: Vec<f64> = self.g[b.knee..end]
            .windows(2)
            .map(|p| (p[1] - p[0]) as f64)
            .filter(|d| *d > 0.0)
            .collect();
        median(&steps).map_or(self.stride, |d| (d.round() as i64).max(1))
    }

    /// Step count, scaled so that it runs over [0, ~1] like `t`.
    fn step(&self, i: usize, period: i64, residue: i64) -> f64 {
        ceil_div(self.g[i] - residue, period) as f64 * period as f64 / self.span
    }

    fn trend_row(&self, i: usize) -> [f64; 4] {
        let t = self.t[i];
        [1.0, t, t * t, self.c[i]]
    }

    fn stair_row(&self, i: usize, period: i64, residue: i64) -> [f64; 5] {
        self.stair_row_at(i, self.step(i, period, residue))
    }

    /// `stair_row` with the step count (as `step` scales it) already known.
    fn stair_row_at(&self, i: usize, step: f64) -> [f64; 5] {
        let t = self.t[i];
        [1.0, t, t * t, step, self.c[i]]
    }

    fn sine_row(&self, i: usize, period: i64) -> [f64; 6] {
        let t = self.t[i];
        let angle = std::f64::consts::TAU * self.g[i] as f64 / period as f64;
        [1.0, t, t * t, angle.sin(), angle.cos(), self.c[i]]
    }

    fn prefix<const N: usize>(&self, row: impl Fn(usize) -> [f64; N]) -> Vec<Normal<N>> {
        let mut out = vec![Normal::<N>::default(); self.len() + 1];
        for i in 0..self.len() {
            out[i + 1] = out[i];
            out[i + 1].add(self.w[i], &row(i));
        }
        out
    }

    /// Bounds that leave enough points between knee and tail (and at least half of those after
    /// the knee), spanning `min_span` grid steps, and a tail that is empty or long enough.
    fn valid(&self, b: Bounds, min_span: i64) -> bool {
        b.end <= self.len()
            && b.end >= b.knee + MIN_MIDDLE
            && 2 * (b.end - b.knee) >= self.len() - b.knee
            && self.g[b.end - 1] - self.g[b.knee] + 1 >= min_span
            && self.tail[b.end].is_finite()
    }

    /// Residual sum of squares of the three parts, the middle one given by its prefix sums.
    fn total<const N: usize>(
        &self,
        mid: &[Normal<N>],
        b: Bounds,
        fit: impl Fn(&Normal<N>) -> f64,
    ) -> f64 {
        self.flat[b.knee].rss() + fit(&mid[b.end].minus(&mid[b.knee])) + self.tail[b.end]
    }

    /// Best knee, then (with `tail`) best tail start, then best knee again, for a fixed middle
    /// model. `min_span`: the least extent (grid steps) of the middle part.
    fn best_bounds<const N: usize>(
        &self,
        mid: &[Normal<N>],
        start: Bounds,
        min_span: i64,
        tail: bool,
        fit: impl Fn(&Normal<N>) -> f64,
    ) -> (Bounds, f64) {
        let n = self.len();
        let ok = |b: Bounds| self.valid(b, min_span);
        let mut best = (
            start,
            if ok(start) {
                self.total(mid, start, &fit)
            } else {
                f64::INFINITY
            },
        );
        for round in 0..3 {
            let before = best.0;
            let candidates: Vec<Bounds> = if round % 2 == 0 {
                (0..n)
                    .map(|knee| Bounds {
                        knee,
                        end: best.0.end,
                    })
                    .collect()
            } else {
                (0..=n)
                    .map(|end| Bounds {
                        knee: best.0.knee,
                        end,
                    })
                    .collect()
            };
            for b in candidates {
                if !ok(b) {
                    continue;
                }
                let rss = self.total(mid, b, &fit);
                if rss < best.1 {
                    best = (b, rss);
                }
            }
            if !tail || (round > 0 && best.0 == before) {
                break;
            }
        }
        best
    }
}

fn model_step(cost: &Cost, b: Bounds, period: i64, residue: i64) -> f64 {
    let mut sums = Normal::<5>::default();
    for i in b.knee..b.end {
        sums.add(cost.w[i], &cost.stair_row(i, period, residue));
    }
    sums.solve().1[3] * period as f64 / cost.span
}

/// Residual sum of squares of a staircase fit, or infinity when its steps go down: the cost of a
/// launch can only grow with each started group. (With a period of two grid steps, a falling
/// staircase of one phase plus the trend is exactly a rising one of the other phase.)
fn rising_rss(sums: &Normal<5>) -> f64 {
    let (rss, beta) = sums.solve();
    rising((rss, beta[3]))
}

/// `rising_rss` of a residual sum of squares and the coefficient of the step count.
fn rising((rss, step): (f64, f64)) -> f64 {
    if step > 0.0 {
        rss
    } else {
        f64::INFINITY
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stair(n: i64, period: i64, phase: i64, floor_steps: i64) -> (Vec<i64>, Vec<f64>) {
        let g: Vec<i64> = (0..n).collect();
        let cost = g
            .iter()
            .map(|&gi| (ceil_div(gi + 1 - phase, period).max(floor_steps)) as f64)
            .collect();
        (g, cost)
    }

    #[test]
    fn exact_staircase_gives_its_period_phase_and_knee() {
        // x = g + 1; peaks at x ≡ 5 (mod 16), i.e. g ≡ 4; flat up to the third step.
        let (g, cost) = stair(256, 16, 5, 3);
        let c = Cost::new(&g, &cost, None);
        let base = c.baseline().unwrap();
        let s = c.staircase(base.start).unwrap();
        assert_eq!((s.period, s.residue), (16, 4));
        // Flat through x = 5 + 3·16 = 53, that is g = 52.
        assert_eq!(c.flat_end(&s), Some(52));
        assert!(s.rss <= rss_floor(256) * 1.0001);
        assert!(c.sine_rss(&s) > 10.0 * s.rss);
    }

    #[test]
    fn staircase_that_drowns_in_a_straight_tail_is_still_found() {
        // Steps of 8 up to g = 160, then a straight line well above them.
        let g: Vec<i64> = (0..240).collect();
        let cost: Vec<f64> = g
            .iter()
            .map(|&gi| {
                (ceil_div(gi + 1, 8) as f64).max(if gi > 160 { (gi as f64) / 7.0 } else { 0.0 })
            })
            .collect();
        let c = Cost::new(&g, &cost, None);
        let s = c.staircase(c.baseline().unwrap().start).unwrap();
        assert_eq!((s.period, s.residue), (8, 7));
        assert!(
            (150..=170).contains(&s.bounds.end),
            "tail from {}",
            s.bounds.end
        );
    }

    /// x = 1..63, then every 8th x to 512 (grid index x − 1), steps of 64 with peaks at x ≡ 48:
    /// on the points every 8th x, 63 fits as 64 does, and the whole grid's median distance (1)
    /// let floating-point noise pick 63 (issue 34's Holes battery). The steps' own stride (8)
    /// tries multiples of 8 only.
    #[test]
    fn a_grid_that_thins_out_reads_the_period_of_its_steps() {
        let x: Vec<i64> = (1..=63).chain((8..=64).map(|k| 8 * k)).collect();
        let g: Vec<i64> = x.iter().map(|v| v - 1).collect();
        let cost: Vec<f64> = x
            .iter()
            .map(|&v| 0.5 + ceil_div(v - 48, 64).max(2) as f64)
            .collect();
        let c = Cost::new(&g, &cost, None);
        assert_eq!(c.stride(), 1);
        let s = c.staircase(c.baseline().unwrap().start).unwrap();
        assert_eq!(c.stride_in(s.bounds), 8);
        assert_eq!((s.period, s.residue), (64, 47));
    }

    /// Two candidates that fit alike: the one tried first stands, whatever the rounding.
    #[test]
    fn a_tie_goes_to_the_candidate_tried_first() {
        assert!(!beats(1.0 + 1e-15, 1.0));
        assert!(!beats(1.0 - 1e-15, 1.0));
        assert!(beats(1.0 - 1e-9, 1.0));
        assert!(beats(5.0, f64::INFINITY));
    }

    /// Steps of 32 on 1..512 with x = 200..260 missing: the edges at 224 and 256 fall inside
    /// the hole, unobserved, and count neither way; every other edge is seen and drops.
    #[test]
    fn edges_inside_a_hole_of_the_grid_are_unobserved() {
        let x: Vec<i64> = (1..=512).filter(|v| !(200..=260).contains(v)).collect();
        let g: Vec<i64> = x.iter().map(|v| v - 1).collect();
        let cost: Vec<f64> = x.iter().map(|&v| ceil_div(v, 32).max(2) as f64).collect();
        let c = Cost::new(&g, &cost, None);
        let s = c.staircase(c.baseline().unwrap().start).unwrap();
        assert_eq!((s.period, s.residue), (32, 31));
        let cov = c.coverage(&s, false);
        assert_eq!(cov.absent, 0, "{cov:?}");
        assert_eq!(cov.predicted, cov.seen, "{cov:?}");
        assert!(cov.enough_points() && cov.drops_present(), "{cov:?}");
    }

    #[test]
    fn baseline_finds_the_end_of_a_flat_part() {
        let g: Vec<i64> = (0..100).collect();
        let cost: Vec<f64> = g.iter().map(|&gi| (gi as f64).max(40.0)).collect();
        let b = Cost::new(&g, &cost, None).baseline().unwrap();
        assert!((39..=41).contains(&b.start.knee), "knee {}", b.start.knee);
        assert!(b.rss < b.rss_no_knee);
    }
}
