//! Which period to report and how sure it is: margins over harmonics and neighbours, the period
//! a negative confidence gives way to, and a second, nested period.

use super::fits::StairResult;
use super::grid::Grid;
use super::peaks::clean;
use super::{Confidence, Guess, Method, Period, DETECT};
use crate::analyze::staircase;

/// Margins of the chosen period over its harmonics and its neighbours: `score(q) - score(p)` for
/// each such `q` that was tried, where a lower score is better.
/// The multiples count only with `multiples`: the fold has already tested each multiple
/// against its period (nested F-tests) and kept the shorter one where the longer does not
/// explain significantly more, which a BIC margin may still favour.
pub(super) fn harmonic_margins(
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

/// The period with the best score: what a period with negative confidence gives way to.
pub(super) fn better_harmonic(grid: &Grid, scores: &[(i64, f64)]) -> Guess {
    let best = scores
        .iter()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map_or(0, |(q, _)| *q);
    Guess {
        period: best as f64 * grid.unit,
        why: "a multiple or divisor of the period found fits better but is too long to test".into(),
    }
}

/// A second period nested in the staircase's: reported when fitting both steps together beats
/// the staircase alone by `DETECT` after paying for the pairs tried, and, for a shorter period
/// or when the staircase's edges are rounded, also beats the staircase with rounded edges (two
/// sharp steps can pass for one rounded one, and longer sharp steps on top of sharp ones can
/// pass for the shape of a rounded rise).
pub(super) fn secondary(
    grid: &Grid,
    s: &StairResult,
    st: &staircase::Staircase,
    m: f64,
) -> Option<Period> {
    // The edges the coverage tolerated as irregular are no steps of another period: where it
    // tolerated some (more than the strict rule allows), a multiple must show drops of its own.
    // Where the strict rule holds the nested period is sought as before (issue 34: the
    // committed runs' nested 64 of the global grid stores, 7 of 7 larger drops, stays).
    let coverage = s.cost.coverage(st, s.rounded);
    // A few edges (a quarter at most) that drop less than half, though none looks absent
    // beyond the noise, are left out of that test too: two weak edges of 32 of one parity,
    // at 2-3 % noise, are all that a nested 64 fits (issue 34's Irregular battery, at high
    // confidence). A family of weak edges, every other one, is steps of two sizes and stays.
    let weak = coverage.weak_at.len();
    let mut irregular = coverage.absent_at.clone();
    if weak <= staircase::FREE_EDGES && 4 * weak <= coverage.seen {
        irregular.extend(
            coverage
                .weak_at
                .iter()
                .filter(|e| !coverage.absent_at.contains(e)),
        );
    }
    let (q, r, rss, tried) = s.cost.nested(st, Some(irregular.as_slice()))?;
    let mut gain = m * (st.rss / rss).ln() - m.ln() - 2.0 * (tried as f64).ln();
    if q < st.period || s.rounded {
        gain = gain.min(m * (s.rounded_rss / rss).ln());
    }
    // Where the coverage tolerated irregular edges, the nested period must also beat the
    // staircase with its weak edges given drops of their own (one parameter each): two weak
    // edges of 32 of one parity are all that a nested 64 fits (issue 34's Irregular battery:
    // 64 or 128 nested at high confidence).
    if !coverage.absent_at.is_empty() {
        let mut free = coverage.absent_at.clone();
        free.extend(
            coverage
                .weak_at
                .iter()
                .filter(|e| !free.contains(e))
                .copied()
                .collect::<Vec<_>>(),
        );
        free.truncate(staircase::FREE_EDGES);
        let freed = s.cost.freed_rss(st, &free);
        let extra = free.len() as f64 - 1.0;
        gain = gain.min(m * (freed / rss).ln() + extra * m.ln() - 2.0 * (tried as f64).ln());
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

pub(super) fn period_of(
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
