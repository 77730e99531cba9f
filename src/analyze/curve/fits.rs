//! The two models fitted to one curve: the staircase (sharp or rounded edges, outliers left out)
//! and the fold, each with its BIC margin over the same model without a period.

use super::grid::{cost, off_ramp, outlier_limit, outliers, spikes, Grid};
use super::Sense;
use crate::analyze::{fold, staircase};

pub(super) struct StairResult {
    /// Indices into the grid's observed points that were used.
    pub(super) used: Vec<usize>,
    /// Those of them that got no weight in the end (grid indices).
    pub(super) outliers: Vec<usize>,
    pub(super) cost: staircase::Cost,
    pub(super) baseline: staircase::Baseline,
    pub(super) stair: Option<staircase::Staircase>,
    /// BIC margin of the staircase over the baseline, after paying for the search.
    pub(super) margin_none: f64,
    /// BIC margin of the staircase over a sinusoid of the same period.
    pub(super) margin_shape: f64,
    /// BIC margin of that sinusoid over the baseline, after paying for the search (infinite
    /// where the staircase needs no shape test).
    pub(super) margin_sine: f64,
    /// The staircase with rounded edges: residual sum of squares, and its BIC score less that
    /// of the sharp one (negative: the rounded edges fit better after paying for the search).
    pub(super) rounded_rss: f64,
    /// The rounded edges score better than the sharp ones.
    pub(super) rounded: bool,
}

/// The staircase model, fitted once with weights `1/cost²` (relative residuals), and once more
/// without the points that neither the baseline nor the staircase explains (outliers), when there
/// are any. `None` when the cost cannot be formed.
pub(super) fn fit_staircase(grid: &Grid, sense: Sense) -> Option<StairResult> {
    if !grid.searchable() {
        return None;
    }
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
        // Against the local trend, not a flat fit: a point on a steep ramp the baseline cannot
        // follow is no outlier.
        off_ramp(&values, &mut far);
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
            margin_sine: f64::NEG_INFINITY,
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
            // Against a sinusoid, whose phase is free, the rounded edges pay for their width and
            // shape (cubic or straight) only: where a rise starts is their phase.
            let widths = (2 * r.cost.rounded_widths(s.period).len()).max(1) as f64;
            let score_shape = (m * sharp.ln()).min(m * r.rounded_rss.ln() + 2.0 * widths.ln());
            (r.margin_shape, r.margin_sine) = if r.cost.needs_shape_test(s) {
                let sine = m * r.cost.sine_rss(s).ln();
                let search = 2.0 * (s.candidates as f64).ln();
                (
                    sine - score_shape,
                    m * r.baseline.rss.ln() - sine - 2.0 * m.ln() - search,
                )
            } else {
                (f64::INFINITY, f64::INFINITY)
            };
        }
        result = Some(r);
        break;
    }
    result
}

impl StairResult {
    /// The margin over a sinusoid as the period's evidence counts it: where the sinusoid of the
    /// staircase's period is itself a periodic structure beyond the threshold (its margin over
    /// the baseline, after paying for the search), the period stands whatever the shape of its
    /// rises, and the margin is not held against it (`shape_doubt` caps its level instead). A
    /// straight ramp over half of a 64 at 2-3 % noise fits a sinusoid about as well as rounded
    /// steps (issue 34's Linear battery: no period, margins over none in the hundreds).
    pub(super) fn shape_margin(&self) -> f64 {
        if self.shape_doubt() {
            f64::INFINITY
        } else {
            self.margin_shape
        }
    }

    /// The steps do not beat a sinusoid of their period, which beats the baseline by itself,
    /// and the period spans eight points of the grid at least (fewer cannot show the shape of a
    /// rise: the H100 transpose's 32 sizes would read a period of five of them).
    pub(super) fn shape_doubt(&self) -> bool {
        let wide = self
            .stair
            .as_ref()
            .is_some_and(|st| st.period >= 8 * self.cost.stride());
        wide && self.margin_shape <= super::DETECT && self.margin_sine > super::DETECT
    }
}

/// When rounded edges fit better than sharp ones, the sharp fit can put the period a grid step
/// or two off (the rise has no edge to lock on): the neighbours are fitted with rounded edges
/// too, and the period moves to the better one until it fits better than both of its own; the
/// scores of the periods so fitted are the rounded ones.
pub(super) fn rounded_neighbours(r: &mut StairResult, m: f64, tried: usize) {
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

pub(super) struct FoldResult {
    pub(super) used: Vec<usize>,
    pub(super) fold: fold::Fold,
    pub(super) margin_none: f64,
}

pub(super) fn fit_fold(grid: &Grid, sense: Sense) -> Option<FoldResult> {
    if !grid.searchable() {
        return None;
    }
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

/// A comb found by `fit_comb`: its period and residue (grid steps), its BIC margin over the
/// trend alone, the fold's scores by period (for the margins over harmonics), the points used.
pub(super) struct Comb {
    pub(super) period: i64,
    pub(super) residue: i64,
    pub(super) margin_none: f64,
    pub(super) scores: Vec<(i64, f64)>,
    pub(super) used: Vec<usize>,
}

/// The noise a comb's fit assumes at least (on the log of the metric).
const COMB_NOISE_FLOOR: f64 = 0.005;
/// A comb shows at least this many spikes at its residue.
const COMB_MIN_CYCLES: usize = 6;
/// The smallest height of a comb's spikes over the rest (on the log of the metric: 3 %).
const COMB_MIN_HEIGHT: f64 = 0.03;

/// A comb: peaks of a single point that recur at one phase of a period (alignment combs, the
/// first warps of a grid curve). The lone-spike filter drops such points from the staircase,
/// and the fold's cubic trend cannot follow a curve that bends as sharply as x / (a + b·x) near
/// its start, so neither sees them. Here a spike that recurs at one phase is structure. The
/// curve is read as the log of the metric less its running median over five points (which
/// keeps steps and slow bends and leaves single points out), and each period Q (grid steps, at
/// least four grid steps and six cycles, at most 128) as two levels: its best residue and the rest. The period
/// whose two levels fit best is the comb's (a divisor puts only every other point of its
/// residue on a spike, a multiple only every other spike on its residue); its margin is its
/// BIC gain over one level, paying for every period and residue searched. The lone-spike
/// filter's 5 % floor is not asked for: spikes of 11-20 % at 2-3 % noise pass under it.
pub(super) fn fit_comb(grid: &Grid, sense: Sense) -> Option<Comb> {
    if !grid.searchable() {
        return None;
    }
    let used: Vec<usize> = (0..grid.x.len()).filter(|&i| grid.y[i] > 0.0).collect();
    if used.len() < 8 * COMB_MIN_CYCLES {
        return None;
    }
    let g: Vec<i64> = used.iter().map(|&i| grid.g[i]).collect();
    let v: Vec<f64> = used
        .iter()
        .map(|&i| match sense {
            Sense::HigherIsBetter => grid.y[i].ln(),
            Sense::LowerIsBetter => -grid.y[i].ln(),
        })
        .collect();
    let level: Vec<f64> = (0..v.len())
        .map(|k| {
            let (a, z) = (k.saturating_sub(2), (k + 3).min(v.len()));
            // Five values at most: sorted in place, not in a Vec of their own.
            let mut w = [0.0; 5];
            let w = &mut w[..z - a];
            w.copy_from_slice(&v[a..z]);
            w.sort_by(f64::total_cmp);
            w[w.len() / 2]
        })
        .collect();
    let e: Vec<f64> = v.iter().zip(&level).map(|(v, l)| v - l).collect();
    let m = e.len() as f64;
    let (s1, s2) = e.iter().fold((0.0, 0.0), |(a, b), v| (a + v, b + v * v));
    // Noise below 0.5 % counts as 0.5 %: on a smooth curve without noise any bend would
    // otherwise win by the ratio of two tiny sums.
    let floor = m * COMB_NOISE_FLOOR * COMB_NOISE_FLOOR;
    let rss0 = s2 - s1 * s1 / m + floor;
    // Period q's best residue (four points at least) and the residual sum of squares of its two
    // levels, from each residue's count, sum and sum of squares.
    let best = |q: i64| -> Option<(i64, f64)> {
        let mut at = vec![(0usize, 0.0f64, 0.0f64); q as usize];
        for (r, x) in crate::analyze::fit::residues(&g, q).zip(&e) {
            let b = &mut at[r];
            *b = (b.0 + 1, b.1 + x, b.2 + x * x);
        }
        at.iter()
            .enumerate()
            .filter(|(_, b)| b.0 >= COMB_MIN_CYCLES && (b.0 as f64) < m)
            .map(|(r, &(n, a, b))| {
                let n = n as f64;
                let on = b - a * a / n;
                let off = (s2 - b) - (s1 - a) * (s1 - a) / (m - n);
                (r as i64, on.max(0.0) + off.max(0.0) + floor)
            })
            .min_by(|x, y| x.1.total_cmp(&y.1))
    };
    let span = g[g.len() - 1] - g[0] + 1;
    let top = (span / COMB_MIN_CYCLES as i64).min(128);
    if top < 4 {
        return None;
    }
    let (period, (residue, rss)) = (4..=top)
        .filter_map(|q| Some((q, best(q)?)))
        .min_by(|x, y| x.1 .1.total_cmp(&y.1 .1))?;
    let mut around: Vec<i64> = vec![period - 1, period, period + 1];
    around.extend((2..=4).filter(|k| period % k == 0).map(|k| period / k));
    around.extend((2..=4).map(|k| period * k).filter(|&q| q <= span / 2));
    // A period's score: its best two levels (lower is better).
    let scores: Vec<(i64, f64)> = around
        .into_iter()
        .filter(|&q| q >= 2)
        .filter_map(|q| Some((q, m * best(q)?.1.ln())))
        .collect();
    // Single points, not a bend: the residue's points stand apart from the rest by 3 % at
    // least, and two thirds of them by half that, on the same side.
    let on: Vec<f64> = (0..e.len())
        .filter(|&k| g[k].rem_euclid(period) == residue)
        .map(|k| e[k])
        .collect();
    let mean_on = on.iter().sum::<f64>() / on.len() as f64;
    let mean_off = (s1 - on.iter().sum::<f64>()) / (m - on.len() as f64);
    let d = mean_on - mean_off;
    let apart = on
        .iter()
        .filter(|&&x| (x - mean_off) * d.signum() > 0.5 * d.abs())
        .count();
    if d.abs() < COMB_MIN_HEIGHT || 3 * apart < 2 * on.len() {
        return None;
    }
    // Searched over every period up to `top` and its residues.
    let tried: f64 = (4..=top).map(|q| q as f64).sum();
    let margin = |m: f64, rss0: f64, rss: f64| m * (rss0 / rss).ln() - m.ln() - 2.0 * tried.ln();
    // No one point makes a comb: the margin is also taken without the spike that stands
    // farthest out, and the smaller one counts. An outlier of 35 % at the residue of 47, with
    // the noise of eight other points of it, read a comb of 47 at high confidence on a curve
    // of one step (issue 34's Long battery).
    let far = on
        .iter()
        .copied()
        .max_by(|a, b| ((a - mean_off) * d.signum()).total_cmp(&((b - mean_off) * d.signum())))
        .unwrap_or(0.0);
    let (n, a) = (on.len() as f64, on.iter().sum::<f64>());
    let b = on.iter().map(|x| x * x).sum::<f64>();
    let (n, a, b) = (n - 1.0, a - far, b - far * far);
    let (mm, t1, t2) = (m - 1.0, s1 - far, s2 - far * far);
    let floor1 = mm * COMB_NOISE_FLOOR * COMB_NOISE_FLOOR;
    let rss0_less = t2 - t1 * t1 / mm + floor1;
    let on_rss = (b - a * a / n).max(0.0);
    let off_rss = ((t2 - b) - (t1 - a) * (t1 - a) / (mm - n)).max(0.0);
    let without = margin(mm, rss0_less, on_rss + off_rss + floor1);
    Some(Comb {
        period,
        residue,
        margin_none: margin(m, rss0, rss).min(without),
        scores,
        used,
    })
}
