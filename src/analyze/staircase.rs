//! The staircase model: the cost of one launch (time, or work over throughput) is flat up to a knee,
//! then climbs in steps `τ·⌈(x − φ)/P⌉` on top of a smooth (quadratic) trend, and may end in a
//! straight line where the curve becomes bandwidth-bound and the steps drown.
//!
//! Every period `P` and phase `φ` on the x grid is tried; for each, the fit is a weighted least
//! squares with weights `1/cost²`, so residuals are relative and a 1 % wobble counts the same at
//! every height. Moving the phase by one grid step changes the step count of one residue class
//! only, so all phases of one period cost one pass over the points. The knee and the start of the
//! straight tail are found by prefix sums, alternating with the period search.

use super::fit::{ceil_div, median, robust_sigma, Normal};

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

/// How the points cover the drops a staircase predicts (see `Cost::coverage`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Coverage {
    /// Edges inside the stepped part.
    pub predicted: usize,
    /// Those with points on both sides.
    pub seen: usize,
    /// Those seen where the points do not rise.
    pub absent: usize,
}

impl Coverage {
    /// Enough whole periods with points on both sides of their drops: three at least, and
    /// three quarters of those predicted.
    pub(crate) fn enough_points(&self) -> bool {
        self.seen >= MIN_STEPS as usize && 4 * self.seen >= 3 * self.predicted
    }

    /// The predicted drops are there: at most one in ten absent, none when fewer than ten
    /// were seen (a few cliffs fitted by a staircase miss the drops between them).
    pub(crate) fn drops_present(&self) -> bool {
        10 * self.absent <= self.seen
    }

    /// Enough seen edges to tell the period from its neighbours beyond a point's doubt: P ± 1
    /// moves the outermost of `seen` edges by `(seen − 1)/2` grid steps, and a shift of one
    /// step is what the knee, the trend or a rounded rise can absorb. With fewer, the period
    /// is at most of medium confidence (x = 1..64 with P = 16 read as 15 or 17).
    pub(crate) fn resolves_neighbours(&self) -> bool {
        self.seen >= MIN_STEPS as usize + 2
    }
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

    /// Step count, scaled so that it runs over [0, ~1] like `t`.
    fn step(&self, i: usize, period: i64, residue: i64) -> f64 {
        ceil_div(self.g[i] - residue, period) as f64 * period as f64 / self.span
    }

    fn trend_row(&self, i: usize) -> [f64; 4] {
        let t = self.t[i];
        [1.0, t, t * t, self.c[i]]
    }

    fn stair_row(&self, i: usize, period: i64, residue: i64) -> [f64; 5] {
        let t = self.t[i];
        [1.0, t, t * t, self.step(i, period, residue), self.c[i]]
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

    /// Flat, then a quadratic trend, then a straight tail: the fit a staircase has to beat.
    pub(crate) fn baseline(&self) -> Option<Baseline> {
        let n = self.len();
        if n < MIN_MIDDLE + 2 {
            return None;
        }
        let mid = self.prefix(|i| self.trend_row(i));
        let fit = |s: &Normal<4>| s.rss();
        let (start, rss_start) = self.best_bounds(&mid, Bounds { knee: 0, end: n }, 0, false, fit);
        let (with_tail, rss_tail) = self.best_bounds(&mid, start, 0, true, fit);
        let (bounds, rss) = if self.tail_pays(rss_start, rss_tail) {
            (with_tail, rss_tail)
        } else {
            (start, rss_start)
        };
        let rss_no_knee = self.total(&mid, Bounds { knee: 0, end: n }, fit);
        let floor = rss_floor(n);
        rss.is_finite().then_some(Baseline {
            start,
            bounds,
            rss: rss.max(floor),
            rss_no_knee: rss_no_knee.max(floor),
        })
    }

    /// Whether `period` is one that `search` tries with bounds `b`: a multiple of the stride,
    /// with three steps between the knee and the tail.
    pub(crate) fn is_candidate(&self, b: Bounds, period: i64) -> bool {
        b.end >= b.knee + MIN_MIDDLE
            && period >= 2
            && period % self.stride == 0
            && period <= ((self.g[b.end - 1] - self.g[b.knee] + 1) / MIN_STEPS).min(MAX_PERIOD)
    }

    /// Best phase for each period with fixed bounds.
    fn search(&self, b: Bounds) -> Option<Found> {
        if b.end < b.knee + MIN_MIDDLE {
            return None;
        }
        let max_period = ((self.g[b.end - 1] - self.g[b.knee] + 1) / MIN_STEPS).min(MAX_PERIOD);
        let mut best: Option<(i64, i64, f64)> = None;
        let mut by_period = Vec::new();
        let mut candidates = 0;
        let stride = self.stride;
        for period in (2..=max_period).filter(|p| p % stride == 0) {
            let (residue, rss) = self.phase_scan(b, period);
            candidates += period as usize;
            by_period.push((period, rss));
            if best.is_none_or(|(_, _, r)| rss < r) {
                best = Some((period, residue, rss));
            }
        }
        let (period, residue, rss) = best?;
        Some(Found {
            period,
            residue,
            rss,
            by_period,
            candidates,
        })
    }

    /// The best phase of one period, and its residual sum of squares, with fixed bounds.
    fn phase_scan(&self, b: Bounds, period: i64) -> (i64, f64) {
        let outside = self.flat[b.knee].rss() + self.tail[b.end];
        let mid = b.knee..b.end;
        // Middle points without their step count (0): the trend part of the sums; the step
        // count is then shifted in point by point.
        let mut sums = self.trend5[b.end].minus(&self.trend5[b.knee]);
        // Points grouped by residue class (a counting sort), so that each phase step visits one
        // class.
        let mut starts = vec![0usize; period as usize + 1];
        for i in mid.clone() {
            starts[self.g[i].rem_euclid(period) as usize + 1] += 1;
        }
        for q in 0..period as usize {
            starts[q + 1] += starts[q];
        }
        let mut fill = starts.clone();
        let mut order = vec![0; mid.len()];
        for i in mid.clone() {
            let q = self.g[i].rem_euclid(period) as usize;
            order[fill[q]] = i;
            fill[q] += 1;
        }
        for i in mid {
            let mut row = self.stair_row(i, period, 0);
            let step = row[3];
            row[3] = 0.0;
            sums.shift(self.w[i], &row, 3, step);
        }
        let mut best = (0, outside + rising_rss(&sums));
        let down = period as f64 / self.span;
        for residue in 1..period {
            // The step count of this residue class goes down by one.
            let class = starts[residue as usize]..starts[residue as usize + 1];
            for &i in &order[class] {
                let row = self.stair_row(i, period, residue - 1);
                sums.shift(self.w[i], &row, 3, -down);
            }
            let rss = outside + rising_rss(&sums);
            if rss < best.1 {
                best = (residue, rss);
            }
        }
        best
    }

    /// A straight tail is kept only when it improves the fit by more than its cost in BIC terms.
    fn tail_pays(&self, without: f64, with: f64) -> bool {
        let floor = rss_floor(self.len());
        let m = self.len() as f64;
        with.is_finite() && m * (without.max(floor) / with.max(floor)).ln() > TAIL_COST * m.ln()
    }

    /// Fits the staircase: period and phase with the start's bounds (no tail), then the knee for
    /// that period and phase, and the period again while the knee moves. Then the same with a
    /// straight tail, kept when the tail pays for itself.
    pub(crate) fn staircase(&self, start: Bounds) -> Option<Staircase> {
        let mut plain = self.settle(start, false);
        // A knee found without steps can cut a short sweep down to fewer than three periods
        // (x = 1..64 with P = 16): the steps are also sought from the first point.
        if 4 * start.knee > self.len() {
            for knee in [0, start.knee / 2] {
                let earlier = Bounds {
                    knee,
                    end: start.end,
                };
                if let Some(other) = self.settle(earlier, false) {
                    if plain.as_ref().is_none_or(|p| other.rss < p.rss) {
                        plain = Some(other);
                    }
                }
            }
        }
        let plain = plain?;
        let mid = self.prefix(|i| self.stair_row(i, plain.period, plain.residue));
        let (b, rss) = self.best_bounds(
            &mid,
            plain.bounds,
            MIN_STEPS * plain.period,
            true,
            rising_rss,
        );
        if b.end < self.len() && self.tail_pays(plain.rss, rss) {
            if let Some(tailed) = self.settle(b, true) {
                if self.tail_pays(plain.rss, tailed.rss) {
                    return Some(tailed);
                }
            }
        }
        Some(plain)
    }

    fn settle(&self, start: Bounds, tail: bool) -> Option<Staircase> {
        let mut bounds = start;
        let mut found = self.search(bounds)?;
        for _ in 0..3 {
            let mid = self.prefix(|i| self.stair_row(i, found.period, found.residue));
            let (b, rss) =
                self.best_bounds(&mid, bounds, MIN_STEPS * found.period, tail, rising_rss);
            if b == bounds || !rss.is_finite() {
                break;
            }
            bounds = b;
            match self.search(bounds) {
                Some(again) => found = again,
                None => break,
            }
        }
        // The multiples of the period that were too long to be candidates are still fitted, so
        // that the confidence knows whether they would do better.
        let extent = self.g[bounds.end - 1] - self.g[bounds.knee] + 1;
        for k in 2..=4 {
            let q = k * found.period;
            if q <= extent && !found.by_period.iter().any(|(p, _)| *p == q) {
                found.by_period.push((q, self.phase_scan(bounds, q).1));
            }
        }
        let floor = rss_floor(self.len());
        Some(Staircase {
            period: found.period,
            residue: found.residue,
            bounds,
            rss: found.rss.max(floor),
            rss_by_period: found
                .by_period
                .into_iter()
                .map(|(q, r)| (q, r.max(floor)))
                .collect(),
            candidates: found.candidates,
        })
    }

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
    /// (a cubic, flat at both ends) over `width` grid steps after its edge (an eighth to a half
    /// of the period, where the rise of a
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

    fn rounded_at(&self, b: Bounds, period: i64, residue: i64) -> (f64, usize) {
        let sharp = residue;
        let outside = self.flat[b.knee].rss() + self.tail[b.end];
        let widths = self.rounded_widths(period);
        let mut best = f64::INFINITY;
        let mut tried = 0;
        for &width in &widths {
            for shift in -width..=width / 4 {
                let residue = sharp + shift;
                let mut sums = Normal::<5>::default();
                for i in b.knee..b.end {
                    let d = self.g[i] - residue - 1;
                    let into = (d.rem_euclid(period) + 1) as f64;
                    let rise = (into / width as f64).min(1.0);
                    let step = d.div_euclid(period) as f64 + rise * rise * (3.0 - 2.0 * rise);
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
    /// were tried; `None` when none fits with both steps rising.
    pub(crate) fn nested(&self, st: &Staircase) -> Option<(i64, i64, f64, usize)> {
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
            if beta[3] <= 0.0 || beta[4] <= 0.0 {
                continue;
            }
            let rss = (outside + rss).max(rss_floor(self.len()));
            if best.is_none_or(|(_, _, r)| rss < r) {
                best = Some((q, r, rss));
            }
        }
        best.map(|(q, r, rss)| (q, r, rss, pairs.len()))
    }

    /// Whether the points show the staircase's drops: for each edge inside the stepped part,
    /// the mean of the points in the half period before it against
    /// the mean of those from a quarter to three quarters of a period after it. A drop is seen
    /// when both sides have a point; absent when the rise is below half the fitted one by more
    /// than three standard errors (the noise taken from point-to-point changes, which steps
    /// hardly move).
    pub(crate) fn coverage(&self, st: &Staircase, rounded: bool) -> Coverage {
        let (b, p) = (st.bounds, st.period);
        let model = self.middle_model(b, p, st.residue);
        let level = self.flat[b.knee].solve().1[0];
        // The flat part at its level; the straight tail under the steps carried on: where the
        // tail does not rise like the steps, their drops are missing (a few cliffs end flat).
        let fit = |i: usize| if i < b.knee { level } else { model(i) };
        let step = model_step(self, b, p, st.residue);
        let all: Vec<usize> = (0..self.len()).collect();
        let live: Vec<usize> = (0..self.len()).filter(|&i| self.w[i] > 0.0).collect();
        let change: Vec<f64> = live
            .windows(2)
            .filter(|w| w[0] >= b.knee)
            .map(|w| (self.c[w[1]] - self.c[w[0]]) / self.c[w[1]])
            .collect();
        let noise = robust_sigma(&change) / std::f64::consts::SQRT_2;
        let (lo, hi) = (self.g[b.knee], self.g[self.len() - 1]);
        let (half, quarter) = ((p / 2).max(1), p / 4);
        // Points of `of` with grid index in (from, to].
        let within = |of: &[usize], from: i64, to: i64| -> Vec<usize> {
            let a = of.partition_point(|&i| self.g[i] <= from);
            let z = of.partition_point(|&i| self.g[i] <= to);
            of[a..z].to_vec()
        };
        let mean = |idx: &[usize], f: &dyn Fn(usize) -> f64| -> f64 {
            idx.iter().map(|&i| f(i)).sum::<f64>() / idx.len() as f64
        };
        let value = |i: usize| self.c[i];
        let mut cov = Coverage::default();
        // From the edge that ends the flat part (a drop too) to the last point.
        let mut edge = st.residue + (lo - half - st.residue).div_euclid(p) * p;
        while edge < hi {
            // The last edge may leave less than a quarter period after it: then its next points.
            let from = (edge + quarter).min(hi - 1).max(edge);
            let (before, after) = ((edge - half, edge), (from, from + half));
            let this = edge;
            edge += p;
            if this < lo - half {
                continue;
            }
            let (bi, ai) = (
                within(&all, before.0, before.1),
                within(&all, after.0, after.1),
            );
            if bi.is_empty() || ai.is_empty() {
                cov.predicted += usize::from(this >= lo);
                continue;
            }
            let fitted = mean(&ai, &fit) - mean(&bi, &fit);
            // Before the knee, an edge counts only where the model rises there.
            if this < lo && fitted < 0.5 * step {
                continue;
            }
            cov.predicted += 1;
            cov.seen += 1;
            let (bi, ai) = (
                within(&live, before.0, before.1),
                within(&live, after.0, after.1),
            );
            if bi.is_empty() || ai.is_empty() {
                continue;
            }
            let observed = mean(&ai, &value) - mean(&bi, &value);
            let height = mean(&bi, &value).max(mean(&ai, &value));
            let se = noise * height * (1.0 / ai.len() as f64 + 1.0 / bi.len() as f64).sqrt();
            let missing = observed < 0.5 * fitted - 3.0 * se;
            // A rounded rise has no sharp place; a sharp one is where the edge says.
            let slack = if rounded { p / 8 } else { 2 * self.stride };
            let around = within(&live, this - half, this + half);
            let spread = noise * height;
            if missing || self.misplaced(&around, this, p, slack, spread) {
                cov.absent += 1;
            }
        }
        cov
    }

    /// Whether the drop near `edge` (the last point before it) lies elsewhere: the best split of
    /// the points `idx` (a period around the edge) into two levels (`spread`: the noise of one
    /// point there) is more than `slack` grid steps from the edge and fits better beyond doubt. Irregular cliffs fitted by a
    /// staircase have their drops away from the edges.
    fn misplaced(&self, idx: &[usize], edge: i64, period: i64, slack: i64, spread: f64) -> bool {
        let k = idx.len();
        if k < 8 {
            return false;
        }
        let v: Vec<f64> = idx.iter().map(|&i| self.c[i]).collect();
        let rss_at = |split: usize| -> f64 {
            let part = |s: &[f64]| {
                let m = s.iter().sum::<f64>() / s.len().max(1) as f64;
                s.iter().map(|x| (x - m) * (x - m)).sum::<f64>()
            };
            part(&v[..split]) + part(&v[split..])
        };
        let at_edge = idx.partition_point(|&i| self.g[i] <= edge).clamp(1, k - 1);
        let (best, rss_best) = (1..k)
            .map(|s| (s, rss_at(s)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap_or((at_edge, 0.0));
        let off = (self.g[idx[best]] - self.g[idx[at_edge]]).abs();
        let floor = 1e-12 * k as f64;
        let gain = k as f64 * (rss_at(at_edge).max(floor) / rss_best.max(floor)).ln();
        // A drop that two levels fit to within the noise (its residual variance at most that of
        // the noise) is a cliff, sharp even where the staircase's edges are rounded: it must
        // sit where a sharp edge would.
        let cliff = rss_best <= spread * spread * k as f64 + floor;
        let slack = if cliff { 2 * self.stride } else { slack };
        off > slack.max(1) && gain > 2.0 * (period as f64).ln() + 6.0
    }

    /// Relative residual of every point under a staircase, or under the baseline when `st` is `None`.
    pub(crate) fn residuals(&self, bounds: Bounds, st: Option<(i64, i64)>) -> Vec<f64> {
        let (_, flat) = self.flat[bounds.knee].solve();
        let mut tail = Normal::<3>::default();
        for i in bounds.end..self.len() {
            tail.add(self.w[i], &[1.0, self.t[i], self.c[i]]);
        }
        let (_, line) = tail.solve();
        let middle: Box<dyn Fn(usize) -> f64 + '_> = match st {
            Some((period, residue)) => Box::new(self.middle_model(bounds, period, residue)),
            None => {
                let mut sums = Normal::<4>::default();
                for i in bounds.knee..bounds.end {
                    sums.add(self.w[i], &self.trend_row(i));
                }
                let (_, b) = sums.solve();
                Box::new(move |i| {
                    let r = self.trend_row(i);
                    b[0] + b[1] * r[1] + b[2] * r[2]
                })
            }
        };
        (0..self.len())
            .map(|i| {
                let fitted = if i < bounds.knee {
                    flat[0]
                } else if i < bounds.end {
                    middle(i)
                } else {
                    line[0] + line[1] * self.t[i]
                };
                (self.c[i] - fitted) / self.c[i]
            })
            .collect()
    }

    /// Relative residual of point `i` under the steps and trend of the middle part, carried on
    /// past the tail when `i` lies there.
    pub(crate) fn stepped_residual(&self, st: &Staircase, i: usize) -> f64 {
        let model = self.middle_model(st.bounds, st.period, st.residue);
        (self.c[i] - model(i)) / self.c[i]
    }

    /// The fitted cost of the middle part, as a function of the point index.
    fn middle_model(
        &self,
        bounds: Bounds,
        period: i64,
        residue: i64,
    ) -> impl Fn(usize) -> f64 + '_ {
        let mut sums = Normal::<5>::default();
        for i in bounds.knee..bounds.end {
            sums.add(self.w[i], &self.stair_row(i, period, residue));
        }
        let (_, b) = sums.solve();
        move |i| {
            let r = self.stair_row(i, period, residue);
            b[0] + b[1] * r[1] + b[2] * r[2] + b[3] * r[3]
        }
    }

    /// Index of the last point of the flat part: the point before the knee, or, when the first
    /// step after the knee stays within half a step of the flat level (the knee fell inside a step
    /// that carries on at that level), the last point of that step. `None` when the staircase
    /// rises from the first point.
    pub(crate) fn flat_end(&self, st: &Staircase) -> Option<usize> {
        let b = st.bounds;
        let model = self.middle_model(b, st.period, st.residue);
        let level = if b.knee > 0 {
            self.flat[b.knee].solve().1[0]
        } else {
            model(0)
        };
        // The height of one step, from the coefficient of the step count.
        let rise = model_step(self, b, st.period, st.residue);
        let mut last = b.knee.checked_sub(1);
        for i in b.knee..b.end {
            if rise <= 0.0 || model(i) - level >= 0.5 * rise {
                break;
            }
            last = Some(i);
        }
        last
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
    if beta[3] > 0.0 {
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

    #[test]
    fn baseline_finds_the_end_of_a_flat_part() {
        let g: Vec<i64> = (0..100).collect();
        let cost: Vec<f64> = g.iter().map(|&gi| (gi as f64).max(40.0)).collect();
        let b = Cost::new(&g, &cost, None).baseline().unwrap();
        assert!((39..=41).contains(&b.start.knee), "knee {}", b.start.knee);
        assert!(b.rss < b.rss_no_knee);
    }
}
