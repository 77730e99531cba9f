//! Which period to report and how sure it is: margins over harmonics and neighbours, the period
//! a negative confidence gives way to, a second, nested period, and which of a period and its
//! multiple is the main one.

use super::fits::{fit_comb, StairResult};
use super::grid::Grid;
use super::peaks::{clean, losses_after};
use super::{Confidence, Guess, Method, Period, Sense, DETECT};
use crate::analyze::fit::median;
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
        why: "it is too long to be tested: a multiple or divisor of the period the search found, \
              it fits better than that one"
            .into(),
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
    let irregular = coverage.irregular();
    let (q, r, rss, tried) = s.cost.nested(st, Some(irregular.as_slice()))?;
    let mut gain = m * (st.rss / rss).ln() - m.ln() - 2.0 * (tried as f64).ln();
    if q < st.period || s.rounded {
        gain = gain.min(m * (s.rounded_rss / rss).ln());
    }
    // Where the coverage tolerated irregular edges, or found a few weak ones, the nested period
    // must also beat the staircase with its weak edges given drops of their own (one parameter
    // each): two weak edges of 32 of one parity are all that a nested 64 fits (issue 34's
    // Irregular battery: 64 or 128 nested at high confidence, also where the two weak edges
    // were within the noise of half a drop and none looked absent).
    if !irregular.is_empty() {
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

/// Whether `small` (period P) is the period and its multiple `multiple` (residue `residue`) the
/// one nested in it: P steps at every edge but for chance, the multiple's drops the larger
/// (`steps_at_every_edge`: two sizes of drop, where P's coverage of one size asks the smaller
/// ones for half of the mean rise); one step past P's other peaks costs a quarter at least of
/// what it costs past the multiple's (by their medians: smaller steps are a detail of the
/// multiple's); P reads at high confidence with the multiple not counted against it (`level`,
/// as `weigh` scores it); and the multiple is found nested in P at high confidence. Which of
/// the two the search settles on turns on the knee and on a few points: five H100 runs of the
/// thread sweep read `global_all_grid` as 32 with 64 nested, the committed two as 64 with 32
/// nested, both at high confidence, on curves whose drops agree edge for edge (issue 34: one
/// step past 32 costs 6-8 %, past 64 13 %). `shared_3way_1blk` (1.4 % past 64 or 32, 11-25 %
/// past 128) keeps 128 with 32 nested.
pub(super) fn nests(
    grid: &Grid,
    s: &StairResult,
    sense: Sense,
    small: &staircase::Staircase,
    (multiple, residue): (i64, i64),
    m: f64,
    level: &dyn Fn(&staircase::Staircase, Option<i64>) -> Confidence,
) -> bool {
    let p = small.period;
    if multiple <= p || multiple % p != 0 || (residue - small.residue).rem_euclid(p) != 0 {
        return false;
    }
    let from = grid.g[s.used[small.bounds.knee]];
    let losses = losses_after(grid, sense, (p, small.residue), from);
    let typical = |at_multiple: bool| {
        let v: Vec<f64> = losses
            .iter()
            .filter(|(g, _)| ((g - residue).rem_euclid(multiple) == 0) == at_multiple)
            .map(|l| l.1)
            .collect();
        median(&v)
    };
    let comparable = match (typical(true), typical(false)) {
        (Some(own), Some(between)) => own > 0.0 && between >= 0.25 * own,
        _ => false,
    };
    comparable
        && s.cost.coverage(small, s.rounded).enough_points()
        && s.cost.steps_at_every_edge(small, multiple, residue)
        && level(small, Some(multiple)) == Confidence::High
        && secondary(grid, s, small, m)
            .is_some_and(|q| q.level == Confidence::High && q.period == multiple as f64 * grid.unit)
}

/// The search found kP (k = 2, 3, 4): P, where it `nests` in kP, and kP.
pub(super) fn nests_in(
    grid: &Grid,
    s: &StairResult,
    sense: Sense,
    first: &staircase::Staircase,
    m: f64,
    level: &dyn Fn(&staircase::Staircase, Option<i64>) -> Confidence,
) -> Option<(staircase::Staircase, i64)> {
    // Both at high confidence: a multiple whose own reading is less sure is no period that
    // P could be nested in (two weak edges of 32 of one parity read 64 at medium, and 32
    // nested at high: issue 34's Irregular battery).
    if level(first, None) != Confidence::High {
        return None;
    }
    let stride = s.cost.stride();
    (2..=4)
        .filter(|k| first.period % k == 0 && (first.period / k) % stride == 0)
        .find_map(|k| {
            let small = s.cost.at_period(first, first.period / k)?;
            nests(
                grid,
                s,
                sense,
                &small,
                (first.period, first.residue),
                m,
                level,
            )
            .then_some((small, first.period))
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

/// Whether the staircase's period P (its peaks at `residue`, grid steps) is a comb of single
/// points at a multiple kP (k = 2, 3, 4) whose every other peak is none: `fit_comb` reads kP
/// beyond the threshold, with a confidence of its own, its spikes at P's peaks. A staircase
/// of P fits such a comb about as well as one of kP (its sawtooth has a low point at every
/// spike and at the points between), and at 3 % noise read 8 at high confidence for a comb of
/// 16 (issue 34's Spikes battery); the comb, which sees every peak of P between the spikes
/// standing no higher than the rest, is what the points show. Only where P spans eight grid
/// points at least: with four (the H100 thread sweeps on a grid of 8), every peak of a
/// staircase is a single point.
pub(super) fn comb_of_multiple(
    grid: &Grid,
    sense: Sense,
    s: &StairResult,
    (period, residue): (i64, i64),
) -> bool {
    if period < 8 * s.cost.stride() {
        return false;
    }
    fit_comb(grid, sense).is_some_and(|c| {
        let k = c.period / period;
        let confident = period_of(
            grid,
            c.period,
            &[c.residue],
            Method::Fold,
            c.margin_none,
            &c.scores,
        )
        .confidence
            >= 0.0;
        (2..=4).contains(&k)
            && c.period == k * period
            && (c.residue - residue).rem_euclid(period) == 0
            && c.margin_none > DETECT
            && confident
    })
}
