//! Readings that must hold under the measured uncertainty. A second cold run of the H100 thread
//! sweep read the same period and best thread count in all twelve series, but `global_even_grid`'s
//! knee moved from 45 to 40 (values there agree within their uncertainty, inside a step whose cost
//! is flat), and `global_half_grid`'s best sat at 383, one thread off the staircase's peaks, with a
//! dozen points within the noise of it. Here the knee is read from the values and their
//! uncertainty `u` so that no move of the values within u takes it out of the range said, and the
//! best is the best of the points tied with the maximum within u, at the period's peaks where the
//! curve has them (docs/analysis.md, "Readings within the uncertainty").

use super::curve::{Curve, KneeRange, Sense};

/// The least relative uncertainty a value is given (95 %): the between-process scatter that the
/// H100 runs' control re-runs measured on every timed metric (±0.5–0.6 %, the SM clock above
/// all), for runs without control re-runs or with a metric whose pairs agreed better.
pub const U_FLOOR: f64 = 0.005;

/// The least change of the cost (in log) that ends a ramp, beyond the values' uncertainty, where
/// the curve has no steps to measure it by: 1 %. Added to every level's tolerance alike, so it
/// keeps the range's bound on moves within u.
const MATERIAL: f64 = 0.01;

/// The least change of the cost (in log) that ends the ramp of a curve with steps: half of one
/// step (the drop after a peak, as a cost ratio), as the fit's own knee reads it, and 1 % at
/// least. Nested steps and the shape of the trend are smaller (`shared_nc_1blk`: +2.4 % past 32
/// threads, +40 % past 128; `shared_3way_1blk`: +5.4 % past 66, +16 % past 96; `global_half_1blk`
/// creeps by up to 1.2 % from 97 on): the ramp ends at the step.
pub fn material(drop: Option<f64>, sense: Sense) -> f64 {
    let step = drop.map_or(0.0, |d| match sense {
        Sense::HigherIsBetter => -(1.0 - d.abs().min(0.99)).ln(),
        Sense::LowerIsBetter => d.abs().ln_1p(),
    });
    (step / 2.0).max(MATERIAL)
}

/// A measured point: x, its value, its relative uncertainty u (95 % half-width).
pub type Point = (f64, f64, f64);

/// Each measured point of `data` (one per x) with its u: the largest of its own `rel_ci` (the
/// median of the rows at its x), the metric's between-process half-width (`between`: the control
/// re-runs, in which each process lays out its buffers anew) and [`U_FLOOR`]. The placement
/// spread does not enter: it is the range over one process's placements, whose median (the value)
/// moves between processes by `between` only (global_even_grid: placements 64–74 % apart at
/// threads 33–64, medians ±0.5 % between processes).
pub fn points_with_u(
    data: &[(f64, Option<f64>)],
    rel_ci: &[(f64, f64)],
    between: Option<f64>,
) -> Vec<Point> {
    let ci: Vec<(f64, Option<f64>)> = rel_ci.iter().map(|&(x, c)| (x, Some(c))).collect();
    let ci = super::curve::one_per_x(&ci);
    let floor = between.unwrap_or(0.0).max(U_FLOOR);
    data.iter()
        .filter_map(|&(x, v)| {
            let v = v?;
            let own = ci
                .binary_search_by(|p| p.0.total_cmp(&x))
                .ok()
                .and_then(|i| ci[i].1)
                .unwrap_or(0.0);
            Some((x, v, own.abs().max(floor)))
        })
        .collect()
}

/// The cost of one launch, as the staircase reads it: work (x) over throughput, or the time.
fn cost(sense: Sense, x: f64, v: f64) -> Option<f64> {
    let c = match sense {
        Sense::HigherIsBetter if x > 0.0 && v > 0.0 => x / v,
        Sense::LowerIsBetter if v > 0.0 => v,
        _ => return None,
    };
    c.is_finite().then_some(c)
}

/// Where the ramp ends, within the values' uncertainty, given the knee the fit found (`fitted`).
///
/// On the ramp the cost of a launch stays at one level `L` (the median cost over the first half
/// of the points up to the fitted knee). A point is off that level at `k` when its log cost is
/// more than `k·ℓ + material` above it (ℓ = −ln(1 − u): the most a move of the value within
/// u moves its log cost; `material`: [`material`], what a change must be to end the ramp at all);
/// a cost below the level is no end of the ramp (`threads_pitch`'s dense grid stores cost less
/// at 64 threads than at 40–56, and are best there); the flat part ends
/// before the first two neighbouring points off it (one point off is an outlier, not the end).
/// The knee is where it ends at `k = 2`. Moving every value within its u moves each log cost by
/// ℓ at most, so the knee then ends no earlier than at `k = 1` and no later than at `k = 3`: that
/// is the range. Where the cost past the knee takes more than two grid steps to leave the level
/// beyond any such move (`k = 3`), the ramp bends gradually and there is no sharp knee. The flat
/// part starts at the first two neighbouring points on the level at `k = 1`; `None` where none
/// are.
pub fn knee_range(
    points: &[Point],
    sense: Sense,
    fitted: f64,
    material: f64,
) -> Option<(Option<f64>, KneeRange)> {
    let costed: Vec<(f64, f64, f64)> = points
        .iter()
        .filter_map(|&(x, v, u)| Some((x, cost(sense, x, v)?, -(1.0 - u.min(0.5)).ln())))
        .collect();
    // The level from the first half of the points up to the fitted knee (three at least): a
    // knee fitted past a smaller step (H200 `global_all_1blk`: +4 % at 65 threads, +55 % at 129,
    // fitted at 128) would otherwise put the level between the two, off both.
    let upto = costed.iter().take_while(|p| p.0 <= fitted).count();
    let first = upto.div_ceil(2).max(upto.min(3));
    let flat: Vec<f64> = costed[..first].iter().map(|p| p.1).collect();
    let level = super::fit::median(&flat)?;
    let off = |i: usize, k: f64| {
        let (_, c, l) = costed[i];
        (c / level).ln() > k * l + material
    };
    let n = costed.len();
    // The flat part starts at the first two neighbours not above its level even in the worst
    // case (a first launch or two that cost more, as a cold start does).
    let start = (0..n.saturating_sub(1)).find(|&i| !off(i, 1.0) && !off(i + 1, 1.0))?;
    // The last point of the flat part at `k`: before the first two neighbours off it.
    let end = |k: f64| -> usize {
        match (start..n).find(|&i| off(i, k) && (i + 1 == n || off(i + 1, k))) {
            Some(i) => i - 1,
            None => n - 1,
        }
    };
    let (lo, knee, hi) = (end(1.0), end(2.0), end(3.0));
    let x = |i: usize| costed[i].0;
    let steps: Vec<f64> = costed.windows(2).map(|w| w[1].0 - w[0].0).collect();
    let stride = super::fit::median(&steps).unwrap_or(1.0);
    // Sharp: past the knee the cost is off its level beyond any move within u, within two grid
    // steps. Points before it that creep up by about u widen the range, not the knee's kind.
    let sharp = x(hi) - x(knee) <= 2.0 * stride * (1.0 + 1e-9);
    Some((
        sharp.then(|| x(knee)),
        KneeRange {
            lo: x(lo),
            hi: x(hi),
            sharp,
        },
    ))
}

/// Whether `b` is tied with the best `a` within their uncertainties (95 % half-widths, added in
/// quadrature).
fn tied(a: &Point, b: &Point, sense: Sense) -> bool {
    let loss = match sense {
        Sense::HigherIsBetter => a.1 - b.1,
        Sense::LowerIsBetter => b.1 - a.1,
    };
    loss <= a.1.abs() * (a.2 * a.2 + b.2 * b.2).sqrt()
}

/// The best x a user should take. The points tied with the measured best within their
/// uncertainty are all equally good as far as the data can tell; where the curve has a period,
/// the best is the best of those at its peaks (the staircase's peak phase: one thread past a
/// peak starts a new step, one before it is on the way up, and which of them measured highest is
/// the noise's pick: 383 for 384 in `global_half_grid`), and the other tied peaks are listed.
/// Without a period, or with no peak among the tied points, the measured best stands, with every
/// point tied with it listed.
pub fn robust_best(curve: &mut Curve, points: &[Point], sense: Sense) {
    let Some(best) = curve.best.as_mut() else {
        return;
    };
    let Some(top) = points.iter().find(|p| p.0 == best.x).copied() else {
        return;
    };
    let better = |a: &Point, b: &Point| match sense {
        Sense::HigherIsBetter => a.1 > b.1,
        Sense::LowerIsBetter => a.1 < b.1,
    };
    let ties: Vec<Point> = points
        .iter()
        .filter(|p| tied(&top, p, sense))
        .copied()
        .collect();
    let at_peaks: Vec<Point> = ties
        .iter()
        .filter(|p| curve.period.is_some() && curve.peaks.contains(&p.0))
        .copied()
        .collect();
    let pool = if at_peaks.is_empty() { ties } else { at_peaks };
    let chosen = pool
        .iter()
        .copied()
        .reduce(|a, b| if better(&b, &a) { b } else { a })
        .unwrap_or(top);
    best.x = chosen.0;
    best.value = chosen.1;
    best.tied = pool
        .iter()
        .map(|p| p.0)
        .filter(|&x| x != chosen.0)
        .collect();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Throughput `x · 1000` up to x = 32 (flat cost), then a step down to `x · 560` up to 64,
    /// then lower: the flat part ends at 32.
    fn ramp_then_steps(u: f64) -> Vec<Point> {
        (1..=128)
            .map(|x| {
                let per = match x {
                    1..=32 => 1000.0,
                    33..=64 => 560.0,
                    _ => 230.0,
                };
                (x as f64, per * x as f64, u)
            })
            .collect()
    }

    #[test]
    fn a_knee_that_the_fit_put_inside_the_next_step_is_read_at_the_step() {
        // The fit said 45 in one run and 40 in the next: the cost is flat inside the step
        // 33..64, so a knee anywhere in it fits alike.
        for fitted in [40.0, 45.0] {
            let (knee, range) = knee_range(
                &ramp_then_steps(0.005),
                Sense::HigherIsBetter,
                fitted,
                MATERIAL,
            )
            .expect("a flat start");
            assert_eq!(knee, Some(32.0));
            assert_eq!((range.lo, range.hi, range.sharp), (32.0, 32.0, true));
        }
    }

    /// `shared_nc_1blk`'s shape, its nested step larger: the cost 5 % higher past 32 threads, 40 %
    /// past 128 (steps of about 29 % after each peak), and one dip below the level at 64: the
    /// ramp ends at the step.
    #[test]
    fn a_nested_step_or_a_dip_does_not_end_the_ramp_a_step_does() {
        let points: Vec<Point> = (1..=256)
            .map(|x| {
                let cost = match x {
                    64 => 0.9,
                    1..=32 => 1.0,
                    33..=128 => 1.05,
                    _ => 1.4,
                };
                (x as f64, x as f64 / cost, 0.005)
            })
            .collect();
        let m = material(Some(0.29), Sense::HigherIsBetter);
        assert!(m > 0.15 && m < 0.2, "{m}");
        let (knee, range) = knee_range(&points, Sense::HigherIsBetter, 128.0, m).unwrap();
        assert_eq!(knee, Some(128.0));
        assert_eq!((range.lo, range.hi, range.sharp), (128.0, 128.0, true));
        // Without steps to measure by, 1 %: the 5 % is the end.
        let (knee, _) = knee_range(&points, Sense::HigherIsBetter, 40.0, MATERIAL).unwrap();
        assert_eq!(knee, Some(32.0));
    }

    #[test]
    fn a_ramp_that_bends_gradually_has_no_sharp_knee() {
        // The cost grows smoothly by 0.05 % a point from x = 20 on: it leaves the flat level
        // within u over many points.
        let points: Vec<Point> = (1..=100)
            .map(|x| {
                let cost = 1.0 + 0.0005 * (x as f64 - 20.0).max(0.0);
                (x as f64, x as f64 / cost, 0.005)
            })
            .collect();
        let (knee, range) = knee_range(&points, Sense::HigherIsBetter, 30.0, MATERIAL).unwrap();
        assert_eq!(knee, None, "{range:?}");
        assert!(!range.sharp && range.hi - range.lo > 2.0, "{range:?}");
        // Off by ℓ + 1 % from x = 50 on, by 3ℓ + 1 % from 70 on.
        assert!(range.lo >= 45.0 && range.hi <= 75.0, "{range:?}");
    }

    #[test]
    fn a_best_off_the_peaks_gives_way_to_the_best_tied_peak() {
        // Peaks every 32; 383 measured 0.1 % above 384, 0.3 % above 448 and 512.
        let saw: Vec<(f64, Option<f64>)> = (1..=512)
            .map(|x| (x as f64, Some(x as f64 / (x as f64 / 32.0).ceil())))
            .collect();
        let mut curve = crate::analyze::analyze_curve(&saw, Sense::HigherIsBetter);
        assert!(curve.period.is_some());
        curve.peaks = vec![320.0, 352.0, 384.0, 416.0, 448.0, 480.0, 512.0];
        let points: Vec<Point> = [
            (320.0, 19.0),
            (352.0, 20.0),
            (383.0, 20.85),
            (384.0, 20.83),
            (416.0, 20.2),
            (448.0, 20.79),
            (480.0, 20.3),
            (512.0, 20.78),
        ]
        .iter()
        .map(|&(x, v)| (x, v, 0.005))
        .collect();
        if let Some(b) = curve.best.as_mut() {
            (b.x, b.value) = (383.0, 20.85);
        }
        robust_best(&mut curve, &points, Sense::HigherIsBetter);
        let b = curve.best.unwrap();
        assert_eq!((b.x, b.value), (384.0, 20.83));
        assert_eq!(b.tied, [448.0, 512.0]);
    }
}
