//! A curve set by the power of 2 that divides x (issue 34): shared-memory bank conflicts along a
//! stride go by gcd(stride, 32), so the bandwidth is full at every odd stride, half at 2, 6, 10,
//! ..., a quarter at 4, 12, ..., and 1/32 at the multiples of 32. Such a curve repeats every 32,
//! with shallower dips at the odd multiples of 16, 8, 4 and 2. A fold reads it as period 16 (the
//! multiples of 16 and of 32 are both far below the rest, so 16 explains nearly everything), and
//! the drop after a peak averages dips of five depths into one number that describes none. This
//! module finds the ladder in the data itself, level by level, and says what each level is worth:
//! a fact about the axis, with no cause; the cause is the declared model's or the counters'.

use super::curve::{Curve, Period, Sense};
use super::mechanism::{axis_kind, AxisKind};
use super::reading::human;

/// The value of each level of a curve set by the power of 2 dividing x.
#[derive(Debug, Clone, PartialEq)]
pub struct Ladder {
    /// Mean value of the points at level k (2^k divides x, 2^(k+1) does not), for k up to the
    /// level where it stops changing; the last one holds every multiple of 2^top (x = 0 too).
    pub values: Vec<f64>,
}

/// A level's values agree to this fraction at least, and two levels differ by four times their
/// own spread, and by 2 % at least, to be told apart.
const SAME: f64 = 0.02;
const APART: f64 = 4.0;

impl Ladder {
    /// The highest level: the curve repeats every 2^top.
    pub fn top(&self) -> u32 {
        self.values.len() as u32 - 1
    }

    pub fn period(&self) -> f64 {
        f64::from(1u32 << self.top())
    }

    /// The level of x: how many times 2 divides it, at most `top` (0 is divided by every power).
    fn level(x: f64, top: u32) -> u32 {
        let n = x.round() as u64;
        if n == 0 {
            top
        } else {
            n.trailing_zeros().min(top)
        }
    }

    /// The curve read as the ladder: its period with peaks at the best level, every other point
    /// below them by its own level's depth (said in the words, not averaged into one drop).
    pub fn apply(&self, curve: &mut Curve, data: &[(f64, Option<f64>)], sense: Sense) {
        let Some(found) = curve.period.take() else {
            return;
        };
        let top = self.top();
        let (first, last) = (self.values[0], self.values[top as usize]);
        let first_better = match sense {
            Sense::HigherIsBetter => first > last,
            Sense::LowerIsBetter => first < last,
        };
        let best_level = if first_better { 0 } else { top };
        let p = self.period();
        let peak_phases: Vec<f64> = if best_level == 0 {
            (0..1u32 << top)
                .filter(|r| r % 2 == 1)
                .map(f64::from)
                .collect()
        } else {
            vec![0.0]
        };
        curve.peaks = data
            .iter()
            .filter(|d| d.1.is_some() && Ladder::level(d.0, top) == best_level)
            .map(|d| d.0)
            .collect();
        curve.period = Some(Period {
            period: p,
            phase: peak_phases[0],
            peak_phases,
            margin_half: None,
            margin_double: None,
            ..found
        });
        curve.secondary = None;
        curve.secondary_cost = None;
        curve.two_sizes = false;
        curve.drop = None;
        curve.knee = None;
        curve.guess = None;
    }

    /// What the levels are worth, in the axis's terms: `each factor of 2 in stride up to 32 halves
    /// it: 32.78 TB/s where stride is odd, 1/2 of that at stride ≡ 2 (mod 4), …, 1/31.4 at ≡ 0
    /// (mod 32)`; a count of 1, 2, 4, ... is `gcd(stride, 32)`.
    pub fn words(&self, axis: &str, unit: &str) -> String {
        let p = human(self.period());
        let v0 = self.values[0];
        let gcd = self
            .values
            .iter()
            .enumerate()
            .all(|(k, v)| (v - f64::from(1u32 << k)).abs() < 1e-9);
        if gcd {
            return format!(
                "it is gcd({axis}, {p}): 1 where {axis} is odd, doubling with each factor of 2 in \
                 {axis} up to {p} at its multiples"
            );
        }
        let steps: Vec<f64> = self.values.windows(2).map(|w| w[1] / w[0]).collect();
        let all_near = |r: f64| steps.iter().all(|s| (s / r - 1.0).abs() < 0.05);
        let how = if all_near(0.5) {
            "halves it"
        } else if all_near(2.0) {
            "doubles it"
        } else {
            "moves it"
        };
        let top = self.top();
        let level = |k: u32| {
            let v = self.values[k as usize] / v0;
            let by = if v < 1.0 {
                format!("1/{}", human((10.0 / v).round() / 10.0))
            } else {
                format!("{}x", human((10.0 * v).round() / 10.0))
            };
            let at = if k == top {
                format!("0 (mod {p})")
            } else {
                format!("{} (mod {})", 1u32 << k, 1u32 << (k + 1))
            };
            if k == 1 {
                format!("{by} of that at {axis} ≡ {at}")
            } else {
                format!("{by} at ≡ {at}")
            }
        };
        let levels: Vec<String> = (1..=top).map(level).collect();
        let listed = if levels.len() <= 3 {
            levels.join(", ")
        } else {
            format!(
                "{}, {}, …, {}",
                levels[0],
                levels[1],
                levels[levels.len() - 1]
            )
        };
        format!(
            "each factor of 2 in {axis} up to {p} {how}: {} where {axis} is odd, {listed}",
            crate::units::format_value(v0, unit)
        )
    }
}

/// The ladder of a curve along a stride, an offset or another axis of whole numbers (not
/// threads: those step by warps), when every level's points agree, each level differs from the
/// next the same way, at least three levels do (it repeats every 8 or more) and a higher level
/// is seen to change no more (the period is seen, not guessed).
pub fn find(axis: &str, data: &[(f64, Option<f64>)]) -> Option<Ladder> {
    if axis_kind(axis) == AxisKind::Threads {
        return None;
    }
    let pts: Vec<(f64, f64)> = data
        .iter()
        .filter_map(|&(x, y)| Some((x, y?)))
        .filter(|(x, y)| y.is_finite() && *y > 0.0 && *x >= 0.0 && (x - x.round()).abs() < 1e-9)
        .collect();
    if pts.len() < 8 || pts.len() < data.len() / 2 {
        return None;
    }
    let seen = pts
        .iter()
        .filter(|p| p.0 >= 1.0)
        .map(|p| (p.0.round() as u64).trailing_zeros())
        .max()?
        .min(20);
    let groups: Vec<Vec<f64>> = (0..=seen)
        .map(|k| {
            pts.iter()
                .filter(|p| Ladder::level(p.0, seen) == k)
                .map(|p| p.1)
                .collect()
        })
        .collect();
    if groups.iter().any(Vec::is_empty) || groups[0].len() < 2 || groups[1].len() < 2 {
        return None;
    }
    let spread = |g: &[f64]| {
        let (lo, hi) = g.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(*v), hi.max(*v))
        });
        hi / lo - 1.0
    };
    let own = groups.iter().map(|g| spread(g)).fold(0.0, f64::max);
    if own > SAME {
        return None;
    }
    let mean = |g: &[f64]| g.iter().sum::<f64>() / g.len() as f64;
    let means: Vec<f64> = groups.iter().map(|g| mean(g)).collect();
    let apart = (APART * own).max(SAME);
    // The first level from which nothing changes any more.
    let top = (0..=seen as usize).find(|&k| {
        means[k..]
            .iter()
            .all(|m| (m / means[k] - 1.0).abs() <= apart.max(own))
    })?;
    if top < 3 || top == seen as usize {
        return None;
    }
    let steps: Vec<f64> = means[..=top]
        .windows(2)
        .map(|w| w[1] / w[0] - 1.0)
        .collect();
    let one_way = steps.iter().all(|s| *s > apart) || steps.iter().all(|s| *s < -apart);
    one_way.then(|| Ladder {
        values: means[..=top].to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// bank_stride on an H100: 32.78 TB/s / gcd(stride, 32), within 0.03 %.
    fn bank(stride: u32) -> f64 {
        let gcd = 1u32 << stride.trailing_zeros().min(5);
        32780.0 * (1.0 + 1e-4 * f64::from(stride % 3)) / f64::from(gcd)
    }

    fn along(f: impl Fn(u32) -> f64, xs: impl Iterator<Item = u32>) -> Vec<(f64, Option<f64>)> {
        xs.map(|x| (f64::from(x), Some(f(x)))).collect()
    }

    #[test]
    fn bank_conflicts_read_as_period_32_with_each_level_said() {
        let data = along(bank, 1..=64);
        let l = find("stride", &data).unwrap();
        assert_eq!((l.top(), l.period()), (5, 32.0));
        assert_eq!(
            l.words("stride", "GB/s"),
            "each factor of 2 in stride up to 32 halves it: 32.78 TB/s where stride is odd, \
             1/2 of that at stride ≡ 2 (mod 4), 1/4 at ≡ 4 (mod 8), …, 1/32 at ≡ 0 (mod 32)"
        );
        // The expected ways are gcd(stride, 32) itself.
        let ways = along(|s| f64::from(1u32 << s.trailing_zeros().min(5)), 1..=64);
        assert_eq!(
            find("stride", &ways).unwrap().words("stride", "ways"),
            "it is gcd(stride, 32): 1 where stride is odd, doubling with each factor of 2 in \
             stride up to 32 at its multiples"
        );
        // The fold's period 16 becomes 32, peaks at every odd stride, and no averaged drop.
        let mut curve = crate::analyze::analyze_curve(&data, Sense::HigherIsBetter);
        assert!(curve.period.is_some());
        l.apply(&mut curve, &data, Sense::HigherIsBetter);
        let p = curve.period.as_ref().unwrap();
        assert_eq!((p.period, p.peak_phases.len()), (32.0, 16));
        assert_eq!(curve.peaks.len(), 32);
        assert!(curve.drop.is_none() && curve.secondary.is_none());
    }

    #[test]
    fn no_ladder_where_levels_do_not_hold_or_the_top_is_not_seen() {
        // Up to 16 only: 16 may not be the top.
        assert_eq!(find("stride", &along(bank, 1..=16)), None);
        // A misaligned copy: every offset off a multiple of 8 costs alike (one level, not three).
        let offset = along(|o| if o % 8 == 0 { 2700.0 } else { 2400.0 }, 0..=32);
        assert_eq!(find("offset", &offset), None);
        // Thread counts step by warps, not by powers of 2.
        assert_eq!(find("threads", &along(bank, 1..=64)), None);
        // Odd strides that disagree by 10 %: the value is not set by the level alone.
        let noisy = along(|s| bank(s) * if s % 4 == 1 { 1.1 } else { 1.0 }, 1..=64);
        assert_eq!(find("stride", &noisy), None);
        // A curve that falls with the stride whatever its factors.
        assert_eq!(find("stride", &along(|s| 1e4 / f64::from(s), 1..=64)), None);
    }
}
