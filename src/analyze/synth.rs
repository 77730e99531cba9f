//! Seeded generator of curves with known period, phase and knee, for the accuracy tests.
//!
//! A sawtooth is built the way the hardware makes it: the cost of a launch is flat up to a knee
//! (latency-bound), then one step `τ` per started group of P threads (plus an optional fixed
//! overhead and an optional bandwidth-bound tail); the throughput is work over cost, with the work
//! proportional to x. Noise is multiplicative; outliers and failed points are sprinkled in.

use super::curve::Sense;
use super::fit::ceil_div;

/// splitmix64: small, fast, and enough for test data.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub(crate) fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// Uniform integer in lo..=hi.
    pub(crate) fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as i64
    }

    pub(crate) fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// Standard normal (Box–Muller).
    pub(crate) fn normal(&mut self) -> f64 {
        let u1 = self.unit().max(1e-300);
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

/// A generated curve and what it really is.
pub(crate) struct Generated {
    pub points: Vec<(f64, Option<f64>)>,
    pub sense: Sense,
    /// Period and phase (in x units) of a sawtooth; `None` for curves without one.
    pub period: Option<(f64, f64)>,
    /// Last x of the ramp, for sawtooths.
    pub knee: Option<f64>,
    /// What the curve is, for failure messages.
    pub kind: String,
}

/// Multiplicative noise with relative standard deviation `noise`, 1 % outliers (20–50 % off) and
/// 2 % failed points.
fn disturb(rng: &mut Rng, clean: f64, noise: f64) -> Option<f64> {
    if rng.chance(0.02) {
        return None;
    }
    let mut v = clean * (1.0 + noise * rng.normal()).max(0.05);
    if rng.chance(0.01) {
        let off = rng.range(0.2, 0.5);
        v *= if rng.chance(0.5) {
            1.0 + off
        } else {
            1.0 - off
        };
    }
    Some(v)
}

/// The x values: 1..=n, sometimes with a quarter of them missing (uneven steps), sometimes on a
/// grid of 2 starting at 2.
fn xs(rng: &mut Rng, n: i64) -> Vec<i64> {
    match rng.int(0, 9) {
        0 | 1 => (1..=n).filter(|_| !rng.chance(0.25)).collect(),
        2 => (1..=n / 2).map(|k| 2 * k).collect(),
        _ => (1..=n).collect(),
    }
}

/// A thread-count sawtooth with period `period` and relative noise `noise`.
pub(crate) fn sawtooth(rng: &mut Rng, period: i64, noise: f64) -> Generated {
    let n = (16 * period).clamp(128, 512);
    let x = xs(rng, n);
    // On the grid of 2, keep the phase on the grid so that peaks are sampled.
    let even = x.len() > 1 && x.iter().all(|v| v % 2 == 0);
    let phase = if even {
        2 * rng.int(0, period / 2 - 1)
    } else {
        rng.int(0, period - 1)
    };
    // At least four whole periods after the knee, so that the staircase can be told apart.
    let floor_steps = rng.int(1, (n / period - 5).clamp(1, 4));
    let overhead = if rng.chance(0.5) {
        0.0
    } else {
        rng.range(0.0, 3.0)
    };
    let tau = rng.range(0.5, 2.0);
    let stair = |v: i64| tau * (overhead + ceil_div(v - phase, period).max(floor_steps) as f64);
    // Sometimes a bandwidth-bound tail: the cost grows like x from 60–90 % of the range on.
    // (The line must cross the staircase from below, which takes a fixed overhead.)
    let tail = (period <= 32 && overhead >= 1.0 && rng.chance(0.4)).then(|| {
        let from = (n as f64 * rng.range(0.6, 0.9)) as i64;
        stair(from) / from as f64
    });
    let cost = |v: i64| tail.map_or(stair(v), |beta| stair(v).max(beta * v as f64));
    let first = x[0];
    let knee = x
        .iter()
        .copied()
        .take_while(|&v| cost(v) == cost(first))
        .last();
    let sense = if rng.chance(0.15) {
        Sense::LowerIsBetter
    } else {
        Sense::HigherIsBetter
    };
    let scale = rng.range(10.0, 5000.0);
    let points = x
        .iter()
        .map(|&v| {
            let clean = match sense {
                Sense::HigherIsBetter => scale * v as f64 / cost(v),
                Sense::LowerIsBetter => scale * cost(v),
            };
            (v as f64, disturb(rng, clean, noise))
        })
        .collect();
    Generated {
        points,
        sense,
        period: Some((period as f64, phase.rem_euclid(period) as f64)),
        knee: knee.map(|v| v as f64),
        kind: format!(
            "sawtooth P={period} phase={phase} knee={knee:?} overhead={overhead:.2} tail={} {sense:?} n={}",
            tail.is_some(),
            x.len()
        ),
    }
}

/// A curve with no period: a ramp, a flat line, a ramp then a plateau, a smooth saturation, or a
/// straight time line, with relative noise `noise`.
pub(crate) fn aperiodic(rng: &mut Rng, noise: f64) -> Generated {
    let n = *[128, 256, 512].get(rng.int(0, 2) as usize).unwrap_or(&256);
    let x = xs(rng, n);
    let scale = rng.range(10.0, 5000.0);
    let kind = rng.int(0, 4);
    let knee = rng.range(0.1, 0.7) * n as f64;
    let length = rng.range(0.05, 0.5) * n as f64;
    let clean = |v: f64| match kind {
        0 => scale * v,
        1 => scale,
        2 => scale * v.min(knee),
        3 => scale * (1.0 - (-v / length).exp()),
        _ => scale * (1.0 + v / length),
    };
    let sense = if kind == 4 {
        Sense::LowerIsBetter
    } else {
        Sense::HigherIsBetter
    };
    let points = x
        .iter()
        .map(|&v| (v as f64, disturb(rng, clean(v as f64), noise)))
        .collect();
    let kind = [
        "ramp",
        "flat",
        "ramp then plateau",
        "saturation",
        "time line",
    ][kind as usize];
    Generated {
        points,
        sense,
        period: None,
        knee: None,
        kind: format!("{kind} n={}", x.len()),
    }
}
