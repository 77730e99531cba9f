//! The fallback for curves that are periodic but not staircases (bank conflicts along a stride,
//! alignment along an offset): remove a smooth trend, fold the rest modulo each period, and keep
//! the period whose class means explain the most, by nested F-tests.

use super::fit::Normal;
use super::staircase::rss_floor;

#[derive(Debug, Clone)]
pub(crate) struct Fold {
    /// Period, in grid steps.
    pub period: i64,
    /// Residues of every class within noise of the best one.
    pub peak_residues: Vec<i64>,
    pub rss: f64,
    /// BIC of every period tried, and of the trend alone (period 0 is not in the list).
    pub bic_by_period: Vec<(i64, f64)>,
    pub bic_trend: f64,
    pub bic: f64,
    /// How many periods were tried.
    pub candidates: usize,
    /// Relative residual of each point (for spotting outliers).
    pub residuals: Vec<f64>,
    /// Residual of each point from the trend alone.
    pub trend_residuals: Vec<f64>,
}

/// Parameters of the cubic trend.
const TREND_PARAMS: usize = 4;
/// Level of the test of a period against the trend, before dividing by the number of periods.
const ALPHA: f64 = 0.001;
/// Level of the nested test of a period against one of its divisors.
const ALPHA_NESTED: f64 = 0.01;
const MAX_PERIOD: i64 = 256;
/// A period is tried only where its classes hold this many points on average, so that one
/// outlier cannot make a class of its own.
const MIN_CLASS: usize = 4;
/// A period is tried only where the curve spans at least this many of them.
const MIN_CYCLES: i64 = 4;

struct Folded {
    rss: f64,
    /// Free class means (degrees of freedom of the pattern).
    df: usize,
    means: Vec<Option<f64>>,
}

/// A class needs this many points to get a mean of its own; with fewer, a lone outlier would be
/// its own class and fit exactly.
const CLASS_POINTS: usize = 3;

/// The sum of squares that `fold` starts its residual from: the same for every period.
fn squares(e: &[f64]) -> f64 {
    e.iter().map(|v| v * v).sum()
}

/// `e` folded modulo `period`; `squares`: `squares(e)`, summed once for all periods.
fn fold(g: &[i64], e: &[f64], squares: f64, period: i64) -> Folded {
    let p = period as usize;
    let mut sum = vec![0.0; p];
    let mut count = vec![0usize; p];
    for (c, ei) in super::fit::residues(g, period).zip(e) {
        sum[c] += ei;
        count[c] += 1;
    }
    let mut rss = squares;
    let mut modeled = 0usize;
    let mut means = vec![None; p];
    for c in 0..p {
        if count[c] >= CLASS_POINTS {
            rss -= sum[c] * sum[c] / count[c] as f64;
            modeled += 1;
            means[c] = Some(sum[c] / count[c] as f64);
        }
    }
    // When every point has a class mean, one of them repeats the trend's intercept.
    let complete = count.iter().all(|&n| n == 0 || n >= CLASS_POINTS);
    Folded {
        rss: rss.max(0.0),
        df: if complete {
            modeled.saturating_sub(1)
        } else {
            modeled
        },
        means,
    }
}

/// The least-squares cubic trend of `v` in the rank of the point (which copes with uneven x steps).
fn trend(v: &[f64]) -> Vec<f64> {
    let m = v.len();
    let u = |i: usize| 2.0 * i as f64 / (m.max(2) - 1) as f64 - 1.0;
    let mut sums = Normal::<5>::default();
    for (i, vi) in v.iter().enumerate() {
        let ui = u(i);
        sums.add(1.0, &[1.0, ui, ui * ui, ui * ui * ui, *vi]);
    }
    let (_, b) = sums.solve();
    (0..m)
        .map(|i| {
            let ui = u(i);
            b[0] + b[1] * ui + b[2] * ui * ui + b[3] * ui * ui * ui
        })
        .collect()
}

/// The trend and the class means of one period fitted together, by alternating the two fits
/// (a few rounds suffice), so that the class means carry none of the trend and the trend none of
/// the pattern. Returns the fold of the pattern and the residual of every point.
fn joint(g: &[i64], v: &[f64], period: i64) -> (Folded, Vec<f64>) {
    let mut effect = vec![0.0; v.len()];
    let mut result = None;
    for _ in 0..8 {
        let without: Vec<f64> = v.iter().zip(&effect).map(|(vi, ef)| vi - ef).collect();
        let t = trend(&without);
        let detrended: Vec<f64> = v.iter().zip(&t).map(|(vi, ti)| vi - ti).collect();
        let folded = fold(g, &detrended, squares(&detrended), period);
        effect = super::fit::residues(g, period)
            .map(|c| folded.means[c].unwrap_or(0.0))
            .collect();
        let residuals = detrended
            .iter()
            .zip(&effect)
            .map(|(d, ef)| d - ef)
            .collect();
        result = Some((folded, residuals));
    }
    result.unwrap_or_else(|| (fold(g, v, squares(v), period), vec![0.0; v.len()]))
}

/// `v` is the log of the metric, oriented so that higher is better; `g` the grid index, sorted.
pub(crate) fn fit(g: &[i64], v: &[f64]) -> Option<Fold> {
    let m = g.len();
    if m < 12 {
        return None;
    }
    let fitted = trend(v);
    let e: Vec<f64> = v.iter().zip(&fitted).map(|(vi, t)| vi - t).collect();
    let floor = rss_floor(m);
    let squares = squares(&e);
    let rss_trend = squares.max(floor);
    let ln_m = (m as f64).ln();
    let bic = |rss: f64, params: usize| m as f64 * (rss / m as f64).ln() + params as f64 * ln_m;
    let bic_trend = bic(rss_trend, TREND_PARAMS);

    let span = g[m - 1] - g[0];
    let max_period = ((span + 1) / MIN_CYCLES)
        .min((m / MIN_CLASS) as i64)
        .min(MAX_PERIOD);
    struct Tried {
        period: i64,
        folded: Folded,
        p_value: f64,
        bic: f64,
    }
    let mut tried: Vec<Tried> = Vec::new();
    for period in 2..=max_period {
        let mut folded = fold(g, &e, squares, period);
        folded.rss = folded.rss.max(floor);
        let df = folded.df;
        let dof = m.saturating_sub(TREND_PARAMS + df);
        if df == 0 || dof < 3 {
            continue;
        }
        let f = ((rss_trend - folded.rss) / df as f64) / (folded.rss / dof as f64);
        let p_value = f_survival(f, df as f64, dof as f64);
        let b = bic(folded.rss, TREND_PARAMS + df);
        tried.push(Tried {
            period,
            folded,
            p_value,
            bic: b,
        });
    }
    let candidates = tried.len();
    if candidates == 0 {
        return None;
    }
    let level = ALPHA / candidates as f64;
    let significant = |t: &Tried| t.p_value < level;
    let mut pick = tried
        .iter()
        .filter(|t| significant(t))
        .min_by(|a, b| a.bic.total_cmp(&b.bic))
        .or_else(|| tried.iter().min_by(|a, b| a.bic.total_cmp(&b.bic)))?;
    // Occam: go down to a divisor whenever the longer period does not explain significantly more.
    'reduce: loop {
        for q in tried
            .iter()
            .filter(|q| pick.period % q.period == 0 && q.period < pick.period)
        {
            if !significant(q) {
                continue;
            }
            let df = pick.folded.df.saturating_sub(q.folded.df);
            let dof = m.saturating_sub(TREND_PARAMS + pick.folded.df);
            if df == 0 || dof == 0 {
                continue;
            }
            let f = ((q.folded.rss - pick.folded.rss) / df as f64) / (pick.folded.rss / dof as f64);
            if f_survival(f, df as f64, dof as f64) >= ALPHA_NESTED {
                pick = q;
                continue 'reduce;
            }
        }
        break;
    }
    // The peak classes: the best class and those within noise of it (bank conflicts make every
    // odd stride a peak, for instance), from the trend and the pattern fitted together.
    let period = pick.period;
    let (pattern, residuals) = joint(g, v, period);
    let dof = m.saturating_sub(TREND_PARAMS + pattern.df).max(1);
    let class_noise =
        (pattern.rss / dof as f64).sqrt() / (m as f64 / period as f64).max(1.0).sqrt();
    let top = pattern
        .means
        .iter()
        .flatten()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    let tolerance = (2.0 * class_noise).max(0.01);
    let peak_residues: Vec<i64> = (0..period)
        .filter(|&c| pattern.means[c as usize].is_some_and(|v| v >= top - tolerance))
        .collect();
    if peak_residues.is_empty() {
        return None;
    }
    Some(Fold {
        period,
        peak_residues,
        rss: pick.folded.rss,
        bic_by_period: tried.iter().map(|t| (t.period, t.bic)).collect(),
        bic_trend,
        bic: pick.bic,
        candidates,
        residuals,
        trend_residuals: e,
    })
}

/// Survival function of the F distribution: P(F(d1, d2) > f), through the regularized incomplete
/// beta function I_x(d2/2, d1/2) at x = d2 / (d2 + d1 f). The callers pass d1, d2 >= 1.
pub(crate) fn f_survival(f: f64, d1: f64, d2: f64) -> f64 {
    if !f.is_finite() {
        return if f > 0.0 { 0.0 } else { 1.0 };
    }
    if f <= 0.0 {
        return 1.0;
    }
    // Fails only for d1 or d2 <= 0 (or NaN): nothing is significant then.
    let x = d2 / (d2 + d1 * f);
    statrs::function::beta::checked_beta_reg(d2 / 2.0, d1 / 2.0, x).unwrap_or(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f_survival_matches_tables() {
        // Upper 5 % points: F(1, 10) = 4.965, F(5, 20) = 2.711, F(10, 100) = 1.927.
        for (f, d1, d2) in [(4.965, 1.0, 10.0), (2.711, 5.0, 20.0), (1.927, 10.0, 100.0)] {
            let p = f_survival(f, d1, d2);
            assert!((p - 0.05).abs() < 1e-3, "F({d1},{d2}) at {f}: {p}");
        }
        assert_eq!(f_survival(0.0, 3.0, 7.0), 1.0);
        // To 1e-12 of the exact values (mpmath, 40 digits), as far as the analysis's degrees of
        // freedom go (a curve of 1000 points).
        for (f, d1, d2, exact) in [
            (4.965, 1.0, 10.0, 0.049_992_443_857_365_07),
            (1.927, 10.0, 100.0, 0.049_958_567_414_375_046),
            (1.06, 17.0, 1000.0, 0.389_276_234_374_756_94),
            (0.3, 3.0, 7.0, 0.824_658_633_899_361),
        ] {
            let p = f_survival(f, d1, d2);
            assert!((p - exact).abs() < 1e-12, "F({d1},{d2}) at {f}: {p}");
        }
    }

    #[test]
    fn bank_conflict_pattern_folds_to_its_period() {
        // Throughput over stride: halves when the stride is even, quarters when it is a multiple of 4,
        // on a slow trend; the pattern repeats every 4.
        let g: Vec<i64> = (0..64).collect();
        let v: Vec<f64> = g
            .iter()
            .map(|&s| {
                let x = s + 1;
                let degree = if x % 4 == 0 {
                    4.0
                } else if x % 2 == 0 {
                    2.0
                } else {
                    1.0
                };
                -f64::ln(degree) - 0.002 * s as f64 + 0.01 * ((s * 7919 % 13) as f64 / 13.0 - 0.5)
            })
            .collect();
        let fold = fit(&g, &v).unwrap();
        assert_eq!(fold.period, 4);
        // Peaks at odd strides: x = g + 1 odd, so g even: classes 0 and 2.
        assert_eq!(fold.peak_residues, [0, 2]);
        assert!(
            fold.bic_trend - fold.bic > 50.0,
            "margin {}",
            fold.bic_trend - fold.bic
        );
    }

    #[test]
    fn noise_alone_is_not_significant() {
        let g: Vec<i64> = (0..200).collect();
        let mut state = 12345u64;
        let v: Vec<f64> = g
            .iter()
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 0.05
            })
            .collect();
        let fold = fit(&g, &v).unwrap();
        assert!(
            fold.bic_trend < fold.bic,
            "margin {}",
            fold.bic_trend - fold.bic
        );
    }
}
