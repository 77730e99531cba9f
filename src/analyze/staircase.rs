//! The staircase model: the cost of one launch (time, or work over throughput) is flat up to a knee,
//! then climbs in steps `τ·⌈(x − φ)/P⌉` (plus a straight-line part for a bandwidth-bound tail).
//!
//! Every period `P` and phase `φ` on the x grid is tried; for each, the fit is a weighted least
//! squares with weights `1/cost²`, so residuals are relative and a 1 % wobble counts the same at
//! every height. Moving the phase by one grid step changes the step count of one residue class
//! only, so all phases of one period cost one pass over the points.

use super::fit::{ceil_div, Normal};

/// Points prepared for the model, sorted by grid index.
pub(crate) struct Points<'a> {
    /// Grid index of each point: `x = x0 + g·unit`.
    pub g: &'a [i64],
    /// Cost of each point (time per launch), positive.
    pub cost: &'a [f64],
}

/// The best flat-then-line fit (no period): the baseline the staircase has to beat.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hinge {
    /// Index of the first point after the knee (0: no flat part).
    pub knee: usize,
    pub rss: f64,
    /// Residual sum of squares of the straight line alone (no knee).
    pub rss_line: f64,
}

/// The best staircase.
#[derive(Debug, Clone)]
pub(crate) struct Staircase {
    /// Period, in grid steps.
    pub period: i64,
    /// Residue of the peaks: peaks sit at `g ≡ residue (mod period)`.
    pub residue: i64,
    /// Index of the first point after the knee.
    pub knee: usize,
    pub rss: f64,
    /// Best residual sum of squares for each period tried (all at the final knee).
    pub rss_by_period: Vec<(i64, f64)>,
    /// How many (period, phase) pairs were tried.
    pub candidates: usize,
}

/// The largest period tried, in grid steps: more than 256 steps would make the search slow
/// and such long periods are not what these sweeps look for.
const MAX_PERIOD: i64 = 256;

struct Prepared {
    g: Vec<i64>,
    /// Grid index scaled to [0, 1].
    t: Vec<f64>,
    /// Cost divided by its median.
    c: Vec<f64>,
    w: Vec<f64>,
    span: f64,
}

impl Prepared {
    fn new(points: &Points) -> Prepared {
        let g = points.g.to_vec();
        let g0 = g.first().copied().unwrap_or(0);
        let span = (g.last().copied().unwrap_or(0) - g0).max(1) as f64;
        let t = g.iter().map(|&gi| (gi - g0) as f64 / span).collect();
        let mid = super::fit::median(points.cost).unwrap_or(1.0).max(f64::MIN_POSITIVE);
        let c: Vec<f64> = points.cost.iter().map(|v| v / mid).collect();
        let w = c.iter().map(|v| 1.0 / (v * v)).collect();
        Prepared { g, t, c, w, span }
    }

    fn len(&self) -> usize {
        self.g.len()
    }

    /// Step count, scaled so that it runs over [0, ~1] like `t`.
    fn step(&self, i: usize, period: i64, residue: i64) -> f64 {
        ceil_div(self.g[i] - residue, period) as f64 * period as f64 / self.span
    }

    /// Prefix sums of the flat part: `pre[k]` covers points `0..k`.
    fn flat_prefix(&self) -> Vec<Normal<2>> {
        let mut out = Vec::with_capacity(self.len() + 1);
        let mut acc = Normal::<2>::default();
        out.push(acc);
        for i in 0..self.len() {
            acc.add(self.w[i], &[1.0, self.c[i]]);
            out.push(acc);
        }
        out
    }
}

/// Residual sums of squares below this (relative to the point count) are treated as this: a 0.01 %
/// noise floor, so that exact curves still compare by something finite.
pub(crate) fn rss_floor(n: usize) -> f64 {
    n as f64 * 1e-8
}

/// Flat up to a knee, then a straight line: the best knee by least squares.
pub(crate) fn hinge(points: &Points) -> Option<Hinge> {
    let p = Prepared::new(points);
    let n = p.len();
    if n < 6 {
        return None;
    }
    let pre = p.flat_prefix();
    let mut line = vec![Normal::<3>::default(); n + 1];
    for i in 0..n {
        line[i + 1] = line[i];
        line[i + 1].add(p.w[i], &[1.0, p.t[i], p.c[i]]);
    }
    let total = line[n];
    let mut best = Hinge { knee: 0, rss: f64::INFINITY, rss_line: total.rss() };
    for k in 0..=(n - 4) {
        let rss = pre[k].rss() + total.minus(&line[k]).rss();
        if rss < best.rss {
            best.knee = k;
            best.rss = rss;
        }
    }
    let floor = rss_floor(n);
    best.rss = best.rss.max(floor);
    best.rss_line = best.rss_line.max(floor);
    Some(best)
}

/// Best phase for each period with the knee fixed at point `knee`.
/// Returns (best period, best residue, best rss, rss by period, candidates).
fn search(p: &Prepared, knee: usize) -> Option<(i64, i64, f64, Vec<(i64, f64)>, usize)> {
    let n = p.len();
    let pre_rss = p.flat_prefix()[knee].rss();
    let post = knee..n;
    if post.len() < 6 {
        return None;
    }
    let span = p.g[n - 1] - p.g[knee];
    let max_period = (span / 2).min(MAX_PERIOD);
    let mut best: Option<(i64, i64, f64)> = None;
    let mut by_period = Vec::new();
    let mut candidates = 0;
    let mut order: Vec<usize> = Vec::with_capacity(post.len());
    for period in 2..=max_period {
        // Post-knee points grouped by residue class, so that each phase step visits one class.
        order.clear();
        order.extend(post.clone());
        order.sort_by_key(|&i| p.g[i].rem_euclid(period));
        let mut sums = Normal::<4>::default();
        for i in post.clone() {
            sums.add(p.w[i], &[1.0, p.t[i], p.step(i, period, 0), p.c[i]]);
        }
        let mut best_here = (0, pre_rss + sums.rss());
        let drop = period as f64 / p.span;
        let mut cursor = 0;
        for residue in 1..period {
            // Skip the classes below `residue`, then move this class's step count down by one.
            while cursor < order.len() && p.g[order[cursor]].rem_euclid(period) < residue {
                cursor += 1;
            }
            while cursor < order.len() && p.g[order[cursor]].rem_euclid(period) == residue {
                let i = order[cursor];
                let old = p.step(i, period, residue - 1);
                sums.remove(p.w[i], &[1.0, p.t[i], old, p.c[i]]);
                sums.add(p.w[i], &[1.0, p.t[i], old - drop, p.c[i]]);
                cursor += 1;
            }
            let rss = pre_rss + sums.rss();
            if rss < best_here.1 {
                best_here = (residue, rss);
            }
        }
        candidates += period as usize;
        by_period.push((period, best_here.1));
        if best.is_none_or(|b| best_here.1 < b.2) {
            best = Some((period, best_here.0, best_here.1));
        }
    }
    let (period, residue, rss) = best?;
    Some((period, residue, rss, by_period, candidates))
}

/// Best knee for a given period and phase.
fn best_knee(p: &Prepared, period: i64, residue: i64) -> (usize, f64) {
    let n = p.len();
    let pre = p.flat_prefix();
    let mut stair = vec![Normal::<4>::default(); n + 1];
    for i in 0..n {
        stair[i + 1] = stair[i];
        stair[i + 1].add(p.w[i], &[1.0, p.t[i], p.step(i, period, residue), p.c[i]]);
    }
    let total = stair[n];
    let mut best = (0, f64::INFINITY);
    for k in 0..n.saturating_sub(6) {
        if p.g[n - 1] - p.g[k] < 2 * period {
            break;
        }
        let rss = pre[k].rss() + total.minus(&stair[k]).rss();
        if rss < best.1 {
            best = (k, rss);
        }
    }
    best
}

/// Fits the staircase: knee from the baseline, then period and phase, then the knee again for
/// that period and phase, and the period once more if the knee moved.
pub(crate) fn fit(points: &Points, start_knee: usize) -> Option<Staircase> {
    let p = Prepared::new(points);
    let mut knee = start_knee;
    let mut found = search(&p, knee)?;
    for _ in 0..2 {
        let (k, _) = best_knee(&p, found.0, found.1);
        if k == knee {
            break;
        }
        knee = k;
        match search(&p, knee) {
            Some(again) => found = again,
            None => break,
        }
    }
    let floor = rss_floor(p.len());
    let (period, residue, rss, by_period, candidates) = found;
    Some(Staircase {
        period,
        residue,
        knee,
        rss: rss.max(floor),
        rss_by_period: by_period.into_iter().map(|(q, r)| (q, r.max(floor))).collect(),
        candidates,
    })
}

/// Index of the last point of the flat part: the point before the knee, or, when the first steps
/// after the knee stay within half a step of the flat level (the knee fell inside a step that
/// carries on at that level), the last point of those steps. `None` when the staircase rises from
/// the first point.
pub(crate) fn flat_end(points: &Points, knee: usize, period: i64, residue: i64) -> Option<usize> {
    let p = Prepared::new(points);
    let n = p.len();
    let mut post = Normal::<4>::default();
    for i in knee..n {
        post.add(p.w[i], &[1.0, p.t[i], p.step(i, period, residue), p.c[i]]);
    }
    let (_, b) = post.solve();
    let model = |i: usize| b[0] + b[1] * p.t[i] + b[2] * p.step(i, period, residue);
    let rise = b[2] * period as f64 / p.span + b[1] * period as f64 / p.span;
    let level = if knee > 0 {
        let mut pre = Normal::<2>::default();
        for i in 0..knee {
            pre.add(p.w[i], &[1.0, p.c[i]]);
        }
        pre.solve().1[0]
    } else {
        model(0)
    };
    let mut last = knee.checked_sub(1);
    for i in knee..n {
        if rise <= 0.0 || model(i) - level >= 0.5 * rise {
            break;
        }
        last = Some(i);
    }
    last
}

/// Relative residual of every point under a staircase (or, with `period` 0, under the hinge),
/// for spotting outliers.
pub(crate) fn residuals(points: &Points, knee: usize, period: i64, residue: i64) -> Vec<f64> {
    let p = Prepared::new(points);
    let n = p.len();
    let mut pre = Normal::<2>::default();
    for i in 0..knee {
        pre.add(p.w[i], &[1.0, p.c[i]]);
    }
    let (_, flat) = pre.solve();
    let mut out = Vec::with_capacity(n);
    for i in 0..knee {
        out.push((p.c[i] - flat[0]) / p.c[i]);
    }
    if period == 0 {
        let mut post = Normal::<3>::default();
        for i in knee..n {
            post.add(p.w[i], &[1.0, p.t[i], p.c[i]]);
        }
        let (_, b) = post.solve();
        for i in knee..n {
            out.push((p.c[i] - b[0] - b[1] * p.t[i]) / p.c[i]);
        }
    } else {
        let mut post = Normal::<4>::default();
        for i in knee..n {
            post.add(p.w[i], &[1.0, p.t[i], p.step(i, period, residue), p.c[i]]);
        }
        let (_, b) = post.solve();
        for i in knee..n {
            let model = b[0] + b[1] * p.t[i] + b[2] * p.step(i, period, residue);
            out.push((p.c[i] - model) / p.c[i]);
        }
    }
    out
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
        let points = Points { g: &g, cost: &cost };
        let h = hinge(&points).unwrap();
        let s = fit(&points, h.knee).unwrap();
        assert_eq!((s.period, s.residue), (16, 4));
        // Flat through x = 5 + 3·16 = 53, that is g = 52.
        assert_eq!(flat_end(&points, s.knee, s.period, s.residue), Some(52));
        assert!(s.rss <= rss_floor(256) * 1.0001);
    }

    #[test]
    fn hinge_finds_the_end_of_a_flat_part() {
        let g: Vec<i64> = (0..100).collect();
        let cost: Vec<f64> = g.iter().map(|&gi| (gi as f64).max(40.0)).collect();
        let h = hinge(&Points { g: &g, cost: &cost }).unwrap();
        assert!((39..=41).contains(&h.knee), "knee {}", h.knee);
        assert!(h.rss < h.rss_line);
    }
}
