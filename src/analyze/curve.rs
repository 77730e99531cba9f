//! One series, one curve: period and phase, knee, drop after the peaks, best x.
//!
//! Two models compete. The staircase (`staircase.rs`) is the physical one for thread counts: the
//! cost of a launch stays flat up to a knee, then grows by one step per started group of P.
//! The fold (`fold.rs`) takes over for periodic curves of another shape. A period is reported
//! only when the model beats the same model without a period by a BIC margin that also pays for
//! every (period, phase) pair tried; the confidence is the smallest of that margin and the margins
//! over the harmonics (P/2, P/3, P/4, 2P, 3P, 4P), so a "high" answer is one that no harmonic
//! comes close to.

use super::fit::{median, robust_sigma};
use super::{fold, staircase};
use serde::Serialize;

/// The least BIC margin, over the model without a period (after paying for every period and
/// phase tried) and for a staircase also over a sinusoid of the same period (below which the
/// "steps" are more likely a smooth bend of the curve), for a period to be reported at all.
/// Calibrated on the generated curves of `accuracy.rs`: pure noise rarely reaches 6.
pub const DETECT: f64 = 8.0;

/// Whether a larger value of the metric is better (throughput) or worse (time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Sense {
    HigherIsBetter,
    LowerIsBetter,
}

impl Sense {
    /// Times (`s`, `ms`, `us`, `ns`, `cycles`) are lower-is-better; everything else higher-is-better.
    pub fn from_unit(unit: &str) -> Sense {
        let u = unit.trim().to_ascii_lowercase();
        let time = [
            "s", "sec", "ms", "us", "µs", "μs", "ns", "cycles", "clocks", "ticks",
        ];
        if time.contains(&u.as_str()) {
            Sense::LowerIsBetter
        } else {
            Sense::HigherIsBetter
        }
    }

    /// `a` is better than `b`.
    fn better(self, a: f64, b: f64) -> bool {
        match self {
            Sense::HigherIsBetter => a > b,
            Sense::LowerIsBetter => a < b,
        }
    }

    /// How much worse `after` is than `peak` (positive: a loss).
    fn loss(self, peak: f64, after: f64) -> f64 {
        match self {
            Sense::HigherIsBetter => peak - after,
            Sense::LowerIsBetter => after - peak,
        }
    }
}

/// Which model found the period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Flat, then a staircase in the cost of a launch.
    Staircase,
    /// Trend removed, then folded modulo the period.
    Fold,
}

/// How sure the period is: the smallest BIC margin over "no period" and over the harmonics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    Low,
    Medium,
    High,
}

impl Confidence {
    /// Margins of 10 and more are "very strong" evidence on the usual BIC scale; 4 is "positive".
    pub const HIGH: f64 = 10.0;
    pub const MEDIUM: f64 = 4.0;

    fn from_margin(margin: f64) -> Confidence {
        if margin >= Self::HIGH {
            Confidence::High
        } else if margin >= Self::MEDIUM {
            Confidence::Medium
        } else {
            Confidence::Low
        }
    }

    /// One level less sure (low stays low).
    pub fn lower(self) -> Confidence {
        match self {
            Confidence::High => Confidence::Medium,
            _ => Confidence::Low,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Period {
    /// Period in units of the swept axis.
    pub period: f64,
    /// Peaks sit at `x ≡ phase (mod period)`, `0 <= phase < period`.
    pub phase: f64,
    /// Every phase with peaks, when several residues are equally good (a folded pattern such as
    /// bank conflicts, where every odd stride is a peak); `[phase]` for a staircase.
    pub peak_phases: Vec<f64>,
    pub method: Method,
    /// The smallest of the margins below (BIC units).
    pub confidence: f64,
    pub level: Confidence,
    /// BIC margin over the same model without a period, after paying for the search.
    pub margin_none: f64,
    /// BIC margin over P/2 and 2P, when those were tried.
    pub margin_half: Option<f64>,
    pub margin_double: Option<f64>,
}

/// A period the curve suggests but does not support, and why not.
#[derive(Debug, Clone, Serialize)]
pub struct Guess {
    /// Period in units of the swept axis.
    pub period: f64,
    pub why: &'static str,
}

/// The average loss right after each peak.
#[derive(Debug, Clone, Serialize)]
pub struct Drop {
    /// In the metric's unit (positive: worse after the peak).
    pub absolute: f64,
    /// Relative to the peak (0.09: 9 %).
    pub relative: f64,
    /// Typical distance from a peak to the point after it, in units of x.
    pub after: f64,
    /// Number of peaks averaged.
    pub peaks: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Best {
    /// Where the best value is.
    pub x: f64,
    pub value: f64,
    /// The smallest x whose value is within 1 % of the best.
    pub x_within_1pct: f64,
    pub value_within_1pct: f64,
}

/// Everything found about one curve.
#[derive(Debug, Clone, Serialize)]
pub struct Curve {
    /// `None`: no periodic structure.
    pub period: Option<Period>,
    /// A second period nested in the first (steps of two sizes), when the data supports it.
    pub secondary: Option<Period>,
    /// What one step past the second period's own peaks costs (see `secondary_cost`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secondary_cost: Option<f64>,
    /// With no period: the one the data comes closest to supporting, when there is one.
    pub guess: Option<Guess>,
    /// The last x of the ramp; `None` when the curve has no ramp.
    pub knee: Option<f64>,
    pub drop: Option<Drop>,
    pub best: Option<Best>,
    /// The worst value observed.
    pub worst: Option<f64>,
    /// x of the peaks from the knee on.
    pub peaks: Vec<f64>,
    /// x of points left out of the fits as outliers.
    pub outliers: Vec<f64>,
    /// Points with a value, and gaps (failed points).
    pub points: usize,
    pub gaps: usize,
}

/// The sorted, de-duplicated curve on its x grid.
struct Grid {
    /// Observed points: x, value, grid index.
    x: Vec<f64>,
    y: Vec<f64>,
    g: Vec<i64>,
    x0: f64,
    unit: f64,
    gaps: usize,
}

impl Grid {
    fn new(points: &[(f64, Option<f64>)]) -> Grid {
        let mut pts: Vec<(f64, Option<f64>)> = points
            .iter()
            .copied()
            .filter(|(x, _)| x.is_finite())
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        // Several rows at one x (series grouped by fewer axes): their median; a gap if none is ok.
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

    fn to_x(&self, g: i64) -> f64 {
        self.x0 + g as f64 * self.unit
    }
}

/// The first x and the step of the grid all x lie on (the gcd of the differences).
fn grid_unit(xs: &[f64]) -> (f64, f64) {
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

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Points whose relative residual is far out (more than 5 robust standard deviations and 5 %),
/// at most 5 % of the points, the worst first. The floor of 5 % keeps a model that misses some
/// real structure from throwing that structure away as outliers.
fn outliers(residuals: &[f64]) -> Vec<usize> {
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
fn outlier_limit(residuals: &[f64]) -> f64 {
    (5.0 * robust_sigma(residuals)).max(0.05)
}

/// The cost of one launch at point `i`: work over throughput (work taken as proportional to x),
/// or the time itself.
fn cost(grid: &Grid, sense: Sense, i: usize) -> Option<f64> {
    let (x, y) = (grid.x[i], grid.y[i]);
    let c = match sense {
        Sense::HigherIsBetter if x > 0.0 && y > 0.0 => x / y,
        Sense::LowerIsBetter if y > 0.0 => y,
        _ => return None,
    };
    c.is_finite().then_some(c)
}

/// Points that stand out from their neighbours: off the line through the two neighbours (or,
/// at the ends, through the next two) and off each neighbour, by more than 5 % and more than 5
/// robust standard deviations of the point-to-point change. A step edge is off the line but
/// level with one neighbour, so it stays.
fn spikes(g: &[i64], values: &[f64]) -> Vec<usize> {
    let n = values.len();
    if n < 4 {
        return vec![];
    }
    let change: Vec<f64> = values
        .windows(2)
        .map(|w| (w[1] - w[0]) / w[1].abs().max(f64::MIN_POSITIVE))
        .collect();
    let limit = (5.0 * robust_sigma(&change) / std::f64::consts::SQRT_2).max(0.05);
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
            (values[k] - expected).abs() > scale && near > scale
        })
        .collect()
}

struct StairResult {
    /// Indices into the grid's observed points that were used.
    used: Vec<usize>,
    /// Those of them that got no weight in the end (grid indices).
    outliers: Vec<usize>,
    cost: staircase::Cost,
    baseline: staircase::Baseline,
    stair: Option<staircase::Staircase>,
    /// BIC margin of the staircase over the baseline, after paying for the search.
    margin_none: f64,
    /// BIC margin of the staircase over a sinusoid of the same period.
    margin_shape: f64,
    /// The staircase with rounded edges: residual sum of squares, and its BIC score less that
    /// of the sharp one (negative: the rounded edges fit better after paying for the search).
    rounded_rss: f64,
    /// The rounded edges score better than the sharp ones.
    rounded: bool,
}

/// The staircase model, fitted once with weights `1/cost²` (relative residuals), and once more
/// without the points that neither the baseline nor the staircase explains (outliers), when there
/// are any. `None` when the cost cannot be formed.
fn fit_staircase(grid: &Grid, sense: Sense) -> Option<StairResult> {
    let used: Vec<usize> = (0..grid.x.len())
        .filter(|&i| cost(grid, sense, i).is_some())
        .collect();
    let g: Vec<i64> = used.iter().map(|&i| grid.g[i]).collect();
    let values: Vec<f64> = used.iter().filter_map(|&i| cost(grid, sense, i)).collect();
    // Lone spikes go first: on a staircase every point shares its level with a neighbour.
    let mut rejected = spikes(&g, &values);
    let weigh = |rejected: &[usize]| -> Vec<f64> {
        values
            .iter()
            .enumerate()
            .map(|(k, c)| {
                if rejected.contains(&k) {
                    0.0
                } else {
                    1.0 / (c * c)
                }
            })
            .collect()
    };
    let mut weights = weigh(&rejected);
    let mut result = None;
    for round in 0..2 {
        let cost = staircase::Cost::new(&g, &values, Some(&weights));
        let baseline = cost.baseline()?;
        let stair = cost.staircase(baseline.start);
        // An outlier is a point that neither the baseline nor the staircase explains; a point
        // that only one of them misses may be structure.
        let mut far = outliers(&cost.residuals(baseline.bounds, None));
        if let Some(s) = &stair {
            let by_stair = outliers(&cost.residuals(s.bounds, Some((s.period, s.residue))));
            far.retain(|k| by_stair.contains(k));
        }
        far.retain(|k| !rejected.contains(k));
        // The last point has one neighbour: a jump there is a spike, unless the steps, carried
        // on to it, predict it (a step that starts at the last point of the sweep).
        let last = g.len() - 1;
        let revive = rejected.contains(&last)
            && stair.as_ref().is_some_and(|s| {
                let limit = outlier_limit(&cost.residuals(s.bounds, Some((s.period, s.residue))));
                cost.stepped_residual(s, last).abs() <= limit
            });
        if round == 0 && (!far.is_empty() || revive) {
            rejected.extend(far);
            if revive {
                rejected.retain(|&k| k != last);
            }
            weights = weigh(&rejected);
            continue;
        }
        // Sharp or rounded edges, whichever scores better after paying for the widths and edges
        // tried; with rounded edges, the period may move to a neighbour (`rounded_neighbours`).
        let m = (g.len() - rejected.len()) as f64;
        let (rounded_rss, tried) = match &stair {
            Some(s) => cost.rounded_rss(s),
            None => (f64::INFINITY, 1),
        };
        let sharp_by_period = stair.as_ref().map(|s| s.rss_by_period.clone());
        let mut r = StairResult {
            used: used.clone(),
            outliers: rejected.iter().map(|&k| used[k]).collect(),
            cost,
            baseline,
            stair,
            margin_none: f64::NEG_INFINITY,
            margin_shape: f64::NEG_INFINITY,
            rounded_rss,
            rounded: false,
        };
        rounded_neighbours(&mut r, m, tried);
        // The margins of the fit that stands: its period, sharp or rounded.
        if let (Some(s), Some(sharp)) = (&r.stair, &sharp_by_period) {
            let sharp = sharp
                .iter()
                .find(|(p, _)| *p == s.period)
                .map_or(f64::INFINITY, |(_, rss)| *rss);
            let score = (m * sharp.ln()).min(m * r.rounded_rss.ln() + 2.0 * (tried as f64).ln());
            r.margin_none =
                m * r.baseline.rss.ln() - score - m.ln() - 2.0 * (s.candidates as f64).ln();
            // Against a sinusoid, whose phase is free, the rounded edges pay for their width
            // only: where a rise starts is their phase.
            let widths = r.cost.rounded_widths(s.period).len().max(1) as f64;
            let score_shape = (m * sharp.ln()).min(m * r.rounded_rss.ln() + 2.0 * widths.ln());
            r.margin_shape = if r.cost.needs_shape_test(s) {
                m * r.cost.sine_rss(s).ln() - score_shape
            } else {
                f64::INFINITY
            };
        }
        result = Some(r);
        break;
    }
    result
}

/// When rounded edges fit better than sharp ones, the sharp fit can put the period a grid step
/// or two off (the rise has no edge to lock on): the neighbours are fitted with rounded edges
/// too, and the period moves to the better one until it fits better than both of its own; the
/// scores of the periods so fitted are the rounded ones.
fn rounded_neighbours(r: &mut StairResult, m: f64, tried: usize) {
    let Some(st) = r.stair.as_mut() else {
        return;
    };
    let rounded = r.rounded_rss;
    let penalty = 2.0 * (tried as f64).ln();
    if m * rounded.ln() + penalty >= m * st.rss.ln() {
        return;
    }
    r.rounded = true;
    let step = r.cost.stride();
    if let Some(entry) = st.rss_by_period.iter_mut().find(|(p, _)| *p == st.period) {
        entry.1 = rounded;
    }
    // Walk to the better rounded neighbour until the period that stands has both of its
    // neighbours fitted with rounded edges (a wide rise can put the sharp fit two steps off),
    // among the periods the search tries (three steps between the knee and the tail).
    let mut best = (st.period, st.residue, rounded);
    let mut refitted = vec![st.period];
    for _ in 0..8 {
        let centre = best.0;
        for q in [centre - step, centre + step] {
            if !r.cost.is_candidate(st.bounds, q) || refitted.contains(&q) {
                continue;
            }
            refitted.push(q);
            let (residue, rss, _) = r.cost.rounded_for(st, q);
            if let Some(entry) = st.rss_by_period.iter_mut().find(|(p, _)| *p == q) {
                entry.1 = rss;
            }
            if rss < best.2 {
                best = (q, residue, rss);
            }
        }
        if best.0 == centre {
            break;
        }
    }
    if best.0 != st.period {
        st.period = best.0;
        st.residue = best.1;
        st.rss = best.2;
    }
    r.rounded_rss = best.2;
}

struct FoldResult {
    used: Vec<usize>,
    fold: fold::Fold,
    margin_none: f64,
}

fn fit_fold(grid: &Grid, sense: Sense) -> Option<FoldResult> {
    let value = |i: usize| -> Option<f64> {
        let y = grid.y[i];
        (y > 0.0).then(|| match sense {
            Sense::HigherIsBetter => y.ln(),
            Sense::LowerIsBetter => -y.ln(),
        })
    };
    let mut used: Vec<usize> = (0..grid.x.len()).filter(|&i| value(i).is_some()).collect();
    let mut result = None;
    for round in 0..2 {
        let g: Vec<i64> = used.iter().map(|&i| grid.g[i]).collect();
        let v: Vec<f64> = used.iter().filter_map(|&i| value(i)).collect();
        let f = fold::fit(&g, &v)?;
        let margin_none = f.bic_trend - f.bic - 2.0 * (f.candidates as f64).ln();
        // As for the staircase: an outlier is what neither the trend nor the pattern explains
        // (the other points of an outlier's class are off the pattern, not off the trend).
        let mut far = outliers(&f.residuals);
        let by_trend = outliers(&f.trend_residuals);
        far.retain(|k| by_trend.contains(k));
        result = Some(FoldResult {
            used: used.clone(),
            fold: f,
            margin_none,
        });
        if far.is_empty() || round == 1 {
            break;
        }
        let drop: Vec<usize> = far.iter().map(|&k| used[k]).collect();
        used.retain(|i| !drop.contains(i));
    }
    result
}

/// Margins of the chosen period over its harmonics and its neighbours: `score(q) - score(p)` for
/// each such `q` that was tried, where a lower score is better.
/// The multiples count only with `multiples`: the fold has already tested each multiple
/// against its period (nested F-tests) and kept the shorter one where the longer does not
/// explain significantly more, which a BIC margin may still favour.
fn harmonic_margins(
    period: i64,
    scores: &[(i64, f64)],
    multiples: bool,
) -> (Vec<f64>, Option<f64>, Option<f64>) {
    let score = |q: i64| scores.iter().find(|(p, _)| *p == q).map(|(_, s)| *s);
    let Some(own) = score(period) else {
        return (vec![], None, None);
    };
    let mut all = Vec::new();
    let mut half = None;
    let mut double = None;
    // The neighbours: a period one grid step off is as wrong as a harmonic.
    for q in [period - 1, period + 1] {
        if let Some(s) = score(q) {
            all.push(s - own);
        }
    }
    for k in 2..=4 {
        if period % k == 0 {
            if let Some(s) = score(period / k) {
                all.push(s - own);
                if k == 2 {
                    half = Some(s - own);
                }
            }
        }
        if let Some(s) = score(period * k) {
            if multiples {
                all.push(s - own);
            }
            if k == 2 {
                double = Some(s - own);
            }
        }
    }
    (all, half, double)
}

/// Analyses one curve: `points` are (x, value) with `None` for failed points.
pub fn analyze_curve(points: &[(f64, Option<f64>)], sense: Sense) -> Curve {
    let grid = Grid::new(points);
    let mut curve = Curve {
        period: None,
        secondary: None,
        secondary_cost: None,
        guess: None,
        knee: None,
        drop: None,
        best: best(&grid, sense),
        worst: grid
            .y
            .iter()
            .copied()
            .reduce(|a, b| if sense.better(a, b) { b } else { a }),
        peaks: vec![],
        outliers: vec![],
        points: grid.x.len(),
        gaps: grid.gaps,
    };
    let stair = fit_staircase(&grid, sense);
    let folded = fit_fold(&grid, sense);

    // Which model speaks: a significant one; of two, the one with the smaller residual variance.
    let stair_ok = stair
        .as_ref()
        .filter(|s| s.margin_none.min(s.margin_shape) > DETECT && s.stair.is_some());
    let fold_ok = folded.as_ref().filter(|f| f.margin_none > DETECT);
    let use_stair = match (stair_ok, fold_ok) {
        (Some(s), Some(f)) => {
            let st = s.stair.as_ref().map_or(f64::INFINITY, |st| st.rss);
            let var_s = st / (s.used.len() as f64 - 8.0).max(1.0);
            let params = 4 + f.fold.period as usize;
            let var_f = f.fold.rss / (f.used.len() as f64 - params as f64).max(1.0);
            var_s <= var_f
        }
        (Some(_), None) => true,
        _ => false,
    };

    let mut residue_period: Option<(i64, Vec<i64>)> = None;
    if let (true, Some(s)) = (use_stair, stair_ok) {
        if let Some(st) = &s.stair {
            let m = s.used.len() as f64;
            let scores: Vec<(i64, f64)> = st
                .rss_by_period
                .iter()
                .map(|(p, r)| (*p, m * r.ln()))
                .collect();
            let margin = s.margin_none.min(s.margin_shape);
            curve.knee = s.cost.flat_end(st).map(|k| grid.x[s.used[k]]);
            let noise = robust_sigma(&s.cost.residuals(st.bounds, Some((st.period, st.residue))));
            let residue = peak_residue(&grid, sense, (st.period, st.residue), curve.knee, noise);
            // A knee on a peak of the steps moves with the peaks.
            if let Some(k) = curve.knee {
                let g = ((k - grid.x0) / grid.unit).round() as i64;
                if (g - st.residue).rem_euclid(st.period) == 0 && residue != st.residue {
                    let shift = (residue - st.residue + st.period / 2).rem_euclid(st.period)
                        - st.period / 2;
                    curve.knee = Some(clean(grid.to_x(g + shift)));
                }
            }
            let found = period_of(
                &grid,
                st.period,
                &[residue],
                Method::Staircase,
                margin,
                &scores,
            );
            curve.outliers = s.outliers.iter().map(|&i| grid.x[i]).collect();
            let coverage = s.cost.coverage(st, s.rounded);
            if !coverage.drops_present() {
                // A few cliffs, not a staircase: the drops in between are missing.
            } else if !coverage.enough_points() {
                curve.guess = Some(Guess {
                    period: found.period,
                    why: "too few points in each period to see its drops",
                });
            } else if found.confidence < 0.0 {
                curve.guess = Some(better_harmonic(&grid, &scores));
            } else {
                let m = (s.used.len() - s.outliers.len()) as f64;
                let mut found = found;
                curve.secondary = secondary(&grid, s, st, m);
                if !coverage.resolves_neighbours() {
                    found.level = found.level.min(Confidence::Medium);
                    if let Some(q) = curve.secondary.as_mut() {
                        q.level = q.level.min(Confidence::Medium);
                    }
                }
                curve.period = Some(found);
                residue_period = Some((st.period, vec![residue]));
            }
        }
    }
    // The fold speaks when it is the better model, or when the staircase's period was not
    // supported by its points.
    if let (None, Some(f)) = (&curve.period, fold_ok) {
        let fd = &f.fold;
        let found = period_of(
            &grid,
            fd.period,
            &fd.peak_residues,
            Method::Fold,
            f.margin_none,
            &fd.bic_by_period,
        );
        curve.outliers = left_out(&grid, &f.used);
        if found.confidence < 0.0 {
            if curve.guess.is_none() {
                curve.guess = Some(better_harmonic(&grid, &fd.bic_by_period));
            }
        } else {
            curve.guess = None;
            curve.period = Some(found);
            residue_period = Some((fd.period, fd.peak_residues.clone()));
        }
    }
    if curve.period.is_none() {
        if let Some(s) = &stair {
            curve.knee = baseline_knee(&grid, &s.used, &s.baseline);
            curve.outliers = s.outliers.iter().map(|&i| grid.x[i]).collect();
        }
    }
    if let Some((period, residues)) = residue_period {
        let from = curve.knee.unwrap_or(f64::NEG_INFINITY);
        let peaks: Vec<usize> = (0..grid.x.len())
            .filter(|&i| residues.contains(&grid.g[i].rem_euclid(period)) && grid.x[i] >= from)
            .filter(|i| !curve.outliers.contains(&grid.x[*i]))
            .collect();
        curve.peaks = peaks.iter().map(|&i| grid.x[i]).collect();
        curve.drop = drop_after(&grid, &peaks, period, sense);
    }
    // What the second period's own steps cost in the data, so the reading can say how much
    // it matters (a fit can prefer two periods for the shape of a ramp alone: a small cost says
    // so). Not used to drop it: at 2-3 % noise that median is too noisy for a threshold (the
    // nested battery fell below 90 % with one of 0.3 %).
    if let (Some(p), Some(q)) = (&curve.period, &curve.secondary) {
        curve.secondary_cost = secondary_cost(&grid, sense, p, q);
    }
    curve
}

/// What one step past the secondary period's own peaks costs (relative; positive: worse). For a
/// shorter secondary period: the median over its peaks that are not the primary's; for a longer
/// one: the median over its peaks, less the median over the primary's other peaks.
fn secondary_cost(grid: &Grid, sense: Sense, p: &Period, q: &Period) -> Option<f64> {
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

/// The period with the best score: what a period with negative confidence gives way to.
fn better_harmonic(grid: &Grid, scores: &[(i64, f64)]) -> Guess {
    let best = scores
        .iter()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map_or(0, |(q, _)| *q);
    Guess {
        period: best as f64 * grid.unit,
        why: "a multiple or divisor of the period found fits better but is too long to test",
    }
}

/// A second period nested in the staircase's: reported when fitting both steps together beats
/// the staircase alone by `DETECT` after paying for the pairs tried, and, for a shorter period
/// or when the staircase's edges are rounded, also beats the staircase with rounded edges (two
/// sharp steps can pass for one rounded one, and longer sharp steps on top of sharp ones can
/// pass for the shape of a rounded rise).
fn secondary(grid: &Grid, s: &StairResult, st: &staircase::Staircase, m: f64) -> Option<Period> {
    let (q, r, rss, tried) = s.cost.nested(st)?;
    let mut gain = m * (st.rss / rss).ln() - m.ln() - 2.0 * (tried as f64).ln();
    if q < st.period || s.rounded {
        gain = gain.min(m * (s.rounded_rss / rss).ln());
    }
    (gain > DETECT).then(|| {
        let period = q as f64 * grid.unit;
        let phase = clean(grid.to_x(r).rem_euclid(period));
        Period {
            period,
            phase,
            peak_phases: vec![phase],
            method: Method::Staircase,
            confidence: gain,
            level: Confidence::from_margin(gain),
            margin_none: gain,
            margin_half: None,
            margin_double: None,
        }
    })
}

/// Where the peaks really are, near the residue of the steps: when a drop is spread over two
/// or three points, the best point of each period may sit one or two before the largest step.
/// Moves to a neighbouring residue only when its values are better beyond doubt: in the median
/// over the periods, by three standard errors (from `noise`, the relative noise of one point)
/// and by 0.5 % at least.
fn peak_residue(
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

fn period_of(
    grid: &Grid,
    period: i64,
    residues: &[i64],
    method: Method,
    margin_none: f64,
    scores: &[(i64, f64)],
) -> Period {
    let (harmonics, half, double) = harmonic_margins(period, scores, method == Method::Staircase);
    let confidence = harmonics.iter().copied().fold(margin_none, f64::min);
    let p = period as f64 * grid.unit;
    let mut phases: Vec<f64> = residues
        .iter()
        .map(|&r| clean(grid.to_x(r).rem_euclid(p)))
        .collect();
    phases.sort_by(f64::total_cmp);
    Period {
        period: p,
        phase: phases.first().copied().unwrap_or(0.0),
        peak_phases: phases,
        method,
        confidence,
        level: Confidence::from_margin(confidence),
        margin_none,
        margin_half: half,
        margin_double: double,
    }
}

/// Rounds away float dust such as 31.999999999.
fn clean(v: f64) -> f64 {
    let r = (v * 1e9).round() / 1e9;
    if r == -0.0 {
        0.0
    } else {
        r
    }
}

fn left_out(grid: &Grid, used: &[usize]) -> Vec<f64> {
    (0..grid.x.len())
        .filter(|i| !used.contains(i))
        .map(|i| grid.x[i])
        .collect()
}

/// The knee of a curve without a period, when the flat part is there beyond doubt.
fn baseline_knee(grid: &Grid, used: &[usize], b: &staircase::Baseline) -> Option<f64> {
    let m = used.len() as f64;
    let gain = m * (b.rss_no_knee / b.rss).ln() - 2.0 * m.ln();
    (b.bounds.knee > 1 && gain > Confidence::HIGH).then(|| grid.x[used[b.bounds.knee - 1]])
}

fn best(grid: &Grid, sense: Sense) -> Option<Best> {
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
    })
}

/// The average loss from each peak to the next point, when that point lies early in the next step.
fn drop_after(grid: &Grid, peaks: &[usize], period: i64, sense: Sense) -> Option<Drop> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn sawtooth(n: i64, period: i64, phase: i64, knee_steps: i64) -> Vec<(f64, Option<f64>)> {
        (1..=n)
            .map(|x| {
                let steps = super::super::fit::ceil_div(x - phase, period).max(knee_steps);
                (x as f64, Some(1000.0 * x as f64 / steps as f64))
            })
            .collect()
    }

    #[test]
    fn exact_warp_sawtooth() {
        let c = analyze_curve(&sawtooth(512, 32, 0, 3), Sense::HigherIsBetter);
        let p = c.period.expect("a period");
        assert_eq!(
            (p.period, p.phase, p.method),
            (32.0, 0.0, Method::Staircase)
        );
        assert_eq!(p.level, Confidence::High);
        assert_eq!(c.knee, Some(96.0));
        let best = c.best.unwrap();
        assert_eq!(best.x_within_1pct, 96.0);
        let drop = c.drop.unwrap();
        // One thread past 32k costs 1 - (32k+1)/(32(k+1)): 25 % at k = 3, falling after.
        assert!(drop.relative > 0.05 && drop.relative < 0.25, "{drop:?}");
        assert_eq!(drop.after, 1.0);
    }

    #[test]
    fn gaps_are_skipped_and_phase_is_kept() {
        let mut pts = sawtooth(256, 16, 5, 1);
        for k in [10usize, 40, 41, 100, 180] {
            pts[k].1 = None;
        }
        let c = analyze_curve(&pts, Sense::HigherIsBetter);
        let p = c.period.expect("a period");
        assert_eq!((p.period, p.phase), (16.0, 5.0));
        assert_eq!(c.gaps, 5);
        assert!(c.peaks.iter().all(|x| (x - 5.0).rem_euclid(16.0) == 0.0));
    }

    #[test]
    fn flat_line_has_no_period_and_no_knee() {
        let pts: Vec<(f64, Option<f64>)> = (1..=200).map(|x| (x as f64, Some(7.0))).collect();
        let c = analyze_curve(&pts, Sense::HigherIsBetter);
        assert!(c.period.is_none());
        assert!(c.knee.is_none());
        assert_eq!(c.best.unwrap().x_within_1pct, 1.0);
    }

    #[test]
    fn time_metric_best_is_the_smallest() {
        let pts: Vec<(f64, Option<f64>)> = (1..=50)
            .map(|x| (x as f64, Some((x as f64 - 20.0).abs() + 5.0)))
            .collect();
        let c = analyze_curve(&pts, Sense::LowerIsBetter);
        assert_eq!(c.best.unwrap().x, 20.0);
    }

    #[test]
    fn bank_conflicts_along_a_stride_fold_to_peaks_at_odd_strides() {
        // Stride 1..32 then 64..1024 in powers of two; throughput divided by the degree of the
        // bank conflict, gcd(stride, 32), with a little deterministic wobble.
        let strides: Vec<i64> = (1..=32).chain([64, 128, 256, 512, 1024]).collect();
        let pts: Vec<(f64, Option<f64>)> = strides
            .iter()
            .map(|&s| {
                let degree = gcd(s, 32) as f64;
                let wobble = 1.0 + 0.004 * ((s * 7919 % 11) as f64 - 5.0) / 5.0;
                (s as f64, Some(900.0 / degree * wobble))
            })
            .collect();
        let c = analyze_curve(&pts, Sense::HigherIsBetter);
        let p = c
            .period
            .unwrap_or_else(|| panic!("no period (guess {:?})", c.guess));
        assert_eq!(p.method, Method::Fold);
        assert!([2.0, 4.0, 8.0].contains(&p.period), "period {}", p.period);
        let odd: Vec<f64> = (0..p.period as i64)
            .filter(|r| r % 2 == 1)
            .map(|r| r as f64)
            .collect();
        assert_eq!(p.peak_phases, odd, "peaks at odd strides");
        assert!(c.drop.unwrap().relative > 0.4);
    }

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

    #[test]
    fn grid_unit_is_the_gcd_of_steps() {
        assert_eq!(grid_unit(&[128.0, 256.0, 640.0]), (128.0, 128.0));
        assert_eq!(grid_unit(&[1.0, 3.0, 7.0]), (1.0, 2.0));
        assert_eq!(grid_unit(&[0.5, 1.0, 2.5]), (0.5, 0.5));
    }

    #[test]
    fn units_that_are_times_are_lower_is_better() {
        assert_eq!(Sense::from_unit("us"), Sense::LowerIsBetter);
        assert_eq!(Sense::from_unit("ms"), Sense::LowerIsBetter);
        assert_eq!(Sense::from_unit("GB/s"), Sense::HigherIsBetter);
        assert_eq!(Sense::from_unit("MFlops"), Sense::HigherIsBetter);
    }
}
