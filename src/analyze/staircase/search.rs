//! The search: the baseline without a period (knee, trend, tail), then every period and phase,
//! alternating with the knee and the start of the straight tail until they settle.

use super::{
    beats, rising, rising_rss, rss_floor, Baseline, Bounds, Cost, Found, Staircase, MAX_PERIOD,
    MIN_MIDDLE, MIN_STEPS, TAIL_COST,
};
use crate::analyze::fit::Normal;

impl Cost {
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
            && period % self.stride_in(b) == 0
            && period <= ((self.g[b.end - 1] - self.g[b.knee] + 1) / MIN_STEPS).min(MAX_PERIOD)
    }

    /// Best phase for each period with fixed bounds.
    pub(super) fn search(&self, b: Bounds) -> Option<Found> {
        if b.end < b.knee + MIN_MIDDLE {
            return None;
        }
        let max_period = ((self.g[b.end - 1] - self.g[b.knee] + 1) / MIN_STEPS).min(MAX_PERIOD);
        let mut best: Option<(i64, i64, f64)> = None;
        let mut by_period = Vec::new();
        let mut candidates = 0;
        let stride = self.stride_in(b);
        for period in (2..=max_period).filter(|p| p % stride == 0) {
            let (residue, rss) = self.phase_scan(b, period);
            candidates += period as usize;
            by_period.push((period, rss));
            if best.is_none_or(|(_, _, r)| beats(rss, r)) {
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
    pub(super) fn phase_scan(&self, b: Bounds, period: i64) -> (i64, f64) {
        let outside = self.flat[b.knee].rss() + self.tail[b.end];
        let mid = b.knee..b.end;
        // Middle points without their step count (0): the trend part of the sums; the step
        // count is then shifted in point by point. Only its entries (`column`) change from phase
        // to phase: the rest of the elimination is done once (`LastRegressor`).
        let sums = self.trend5[b.end].minus(&self.trend5[b.knee]);
        let solver = sums.last_regressor();
        let mut column = sums.column(3);
        let (w, t, c) = (
            &self.w[mid.clone()],
            &self.t[mid.clone()],
            &self.c[mid.clone()],
        );
        // Each point as `g = q·period + class`; each phase step visits one class. Where the
        // points are consecutive grid steps, a class is every period-th point from its first;
        // else the points are grouped by class (a counting sort).
        let n = mid.len();
        let g0 = self.g[b.knee];
        let sorted =
            (self.g[b.end - 1] - g0 != n as i64 - 1).then(|| self.classes(mid.clone(), period));
        // The step count of phase 0 is ⌈g/period⌉ = q + (class > 0); that of phase r − 1 in
        // class r is q + 1: the values `stair_row` gives.
        // Computed once for each count where the points outnumber the counts (one division a
        // count, not one a point): the same values.
        let scaled = |count: i64| count as f64 * period as f64 / self.span;
        let (first, last) = (g0.div_euclid(period), self.g[b.end - 1].div_euclid(period));
        let counts: Option<Vec<f64>> =
            (last - first < n as i64).then(|| (first..=last + 1).map(scaled).collect());
        let step = |count: i64| match &counts {
            Some(counts) => counts[(count - first) as usize],
            None => scaled(count),
        };
        // Point k's step count (scaled) from `from` by `delta`.
        let shift = |column: &mut [f64; 5], k: usize, from: f64, delta: f64| {
            let row = [1.0, t[k], t[k] * t[k], from, c[k]];
            Normal::shift(column, w[k], &row, 3, delta);
        };
        match &sorted {
            None => {
                let (mut q, mut class) = (first, g0.rem_euclid(period));
                for k in 0..n {
                    shift(&mut column, k, 0.0, step(q + i64::from(class > 0)));
                    class += 1;
                    if class == period {
                        (q, class) = (q + 1, 0);
                    }
                }
            }
            Some((split, ..)) => {
                for (k, &(q, class)) in split.iter().enumerate() {
                    shift(&mut column, k, 0.0, step(q + i64::from(class > 0)));
                }
            }
        }
        let mut best = (0, outside + rising(solver.solve(column)));
        let down = period as f64 / self.span;
        for residue in 1..period {
            // The step count of this residue class goes down by one.
            match &sorted {
                None => {
                    let k0 = (residue - g0).rem_euclid(period);
                    let q0 = (g0 + k0).div_euclid(period);
                    for (q, k) in (q0..).zip((k0 as usize..n).step_by(period as usize)) {
                        shift(&mut column, k, step(q + 1), -down);
                    }
                }
                Some((split, starts, order)) => {
                    let class = starts[residue as usize]..starts[residue as usize + 1];
                    for &k in &order[class] {
                        shift(&mut column, k, step(split[k].0 + 1), -down);
                    }
                }
            }
            let rss = outside + rising(solver.solve(column));
            if beats(rss, best.1) {
                best = (residue, rss);
            }
        }
        best
    }

    /// The points `range` as `g = q·period + class` (`split`), and grouped by class in grid
    /// order (a counting sort): the points of class r are `order[starts[r]..starts[r + 1]]`,
    /// counted from the first of `range`.
    #[allow(clippy::type_complexity)]
    fn classes(
        &self,
        range: std::ops::Range<usize>,
        period: i64,
    ) -> (Vec<(i64, i64)>, Vec<usize>, Vec<usize>) {
        let split = self.split(range, period);
        let mut starts = vec![0usize; period as usize + 1];
        for &(_, class) in &split {
            starts[class as usize + 1] += 1;
        }
        for q in 0..period as usize {
            starts[q + 1] += starts[q];
        }
        let mut fill = starts.clone();
        let mut order = vec![0; split.len()];
        for (k, &(_, class)) in split.iter().enumerate() {
            order[fill[class as usize]] = k;
            fill[class as usize] += 1;
        }
        (split, starts, order)
    }

    /// `(g.div_euclid(period), g.rem_euclid(period))` of the points `range` (in grid order),
    /// with one division.
    pub(super) fn split(&self, range: std::ops::Range<usize>, period: i64) -> Vec<(i64, i64)> {
        let mut out = Vec::with_capacity(range.len());
        let mut at: Option<(i64, i64, i64)> = None;
        for i in range {
            let g = self.g[i];
            let (q, r) = match at {
                Some((last, q, r)) if g >= last && g - last < period => {
                    let r = r + (g - last);
                    if r >= period {
                        (q + 1, r - period)
                    } else {
                        (q, r)
                    }
                }
                _ => (g.div_euclid(period), g.rem_euclid(period)),
            };
            at = Some((g, q, r));
            out.push((q, r));
        }
        out
    }

    /// A staircase of a given period: its phase and bounds settled as `settle` does (from the
    /// knee of `st` to the last point, no tail), and the periods its confidence is weighed against
    /// (neighbours, divisors, multiples) scored with the same bounds. `None` when the period does
    /// not fit three times into them.
    pub(crate) fn at_period(&self, st: &Staircase, period: i64) -> Option<Staircase> {
        let extent = |b: Bounds| self.g[b.end - 1] - self.g[b.knee] + 1;
        let mut bounds = Bounds {
            knee: st.bounds.knee,
            end: self.len(),
        };
        if !(2..=MAX_PERIOD).contains(&period) || MIN_STEPS * period > extent(bounds) {
            return None;
        }
        let (mut residue, mut rss) = self.phase_scan(bounds, period);
        for _ in 0..3 {
            let mid = self.prefix(|i| self.stair_row(i, period, residue));
            let (b, r) = self.best_bounds(&mid, bounds, MIN_STEPS * period, false, rising_rss);
            if b == bounds || !r.is_finite() {
                break;
            }
            bounds = b;
            (residue, rss) = self.phase_scan(bounds, period);
        }
        let floor = rss_floor(self.len());
        let mut others = vec![period - 1, period + 1];
        for k in 2..=4 {
            if period % k == 0 {
                others.push(period / k);
            }
            others.push(k * period);
        }
        let mut rss_by_period = vec![(period, rss.max(floor))];
        for q in others {
            if q >= 2 && q % self.stride_in(bounds) == 0 && q <= extent(bounds) {
                rss_by_period.push((q, self.phase_scan(bounds, q).1.max(floor)));
            }
        }
        Some(Staircase {
            period,
            residue,
            bounds,
            rss: rss.max(floor),
            rss_by_period,
            candidates: st.candidates,
        })
    }

    /// A straight tail is kept only when it improves the fit by more than its cost in BIC terms.
    pub(super) fn tail_pays(&self, without: f64, with: f64) -> bool {
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

    pub(super) fn settle(&self, start: Bounds, tail: bool) -> Option<Staircase> {
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
}
