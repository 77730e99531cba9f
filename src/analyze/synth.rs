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
    /// The second period of nested steps (`Hard::Nested`).
    pub second: Option<f64>,
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
    let (points, sense) = from_cost(rng, &x, cost, noise);
    Generated {
        points,
        sense,
        period: Some((period as f64, phase.rem_euclid(period) as f64)),
        knee: knee.map(|v| v as f64),
        second: None,
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
        second: None,
        kind: format!("{kind} n={}", x.len()),
    }
}

/// The harder curves of issue 12, each a way the analysis used to fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hard {
    /// Steps whose rise is spread over a quarter to a half of the period (P = 32, 64).
    Rounded,
    /// Small steps every 16 and large ones every 32, the small ones a quarter to a half of the
    /// step at every 32.
    Nested,
    /// 20 points: powers of two and 3·2^k, up to 1024; a sawtooth of 16, 32 or 64 that they
    /// cannot resolve.
    Sparse,
    /// Two or three drops at irregular places and no more: no period.
    Cliffs,
    /// A period of 180–250 on 1..=512: two or three steps, too few for a period.
    Long,
    /// x = 1..=64 with P = 16 and any phase.
    Short,
    /// x = 1 and every 4th x up to 512, P = 16, 32 or 64.
    Coarse,
    /// P = 32 on 1..=512 with two of its edges (not the first two) irregular: their drop a
    /// tenth of the others (issue 34: a strong staircase with two odd edges).
    Irregular,
    /// Peaks of a single point: the value is higher by 10-30 % at every P-th x only (an
    /// alignment comb), P = 16 or 32, on a smooth trend.
    Spikes,
    /// Steps whose rise is a straight ramp over P/4 to P/2 points, P = 32 or 64.
    Linear,
    /// Grids that are not uniform and have holes (issue 34): 1..512 with one or two runs of
    /// 24-64 missing x; 1..63, then every 8th x to 512; every 2nd x; 1..128, then every 4th
    /// x; each with a hole (the last three sometimes), P = 16, 32 or 64 (32 or 64 where x
    /// steps by 8), the peaks on the grid, an edge sometimes inside a hole.
    Holes,
}

impl Hard {
    pub(crate) const ALL: [Hard; 11] = [
        Hard::Rounded,
        Hard::Nested,
        Hard::Sparse,
        Hard::Cliffs,
        Hard::Long,
        Hard::Short,
        Hard::Coarse,
        Hard::Irregular,
        Hard::Spikes,
        Hard::Linear,
        Hard::Holes,
    ];
}

/// The x values of a `Hard::Holes` curve with period `period`, and the step of the grid where
/// the peaks lie (the phase is a multiple of it).
fn holes_grid(rng: &mut Rng, period: i64) -> (Vec<i64>, i64) {
    let layout = rng.int(0, 3);
    let (mut x, step): (Vec<i64>, i64) = match layout {
        0 => ((1..=512).collect(), 1),
        1 => ((1..=63).chain((8..=64).map(|k| 8 * k)).collect(), 8),
        2 => ((1..=256).map(|k| 2 * k).collect(), 2),
        _ => ((1..=127).chain((32..=128).map(|k| 4 * k)).collect(), 4),
    };
    // One or two holes of 24-64 x between x = 80 and 490; the layouts of uneven steps have
    // one in three times none.
    let holes = match layout {
        0 => rng.int(1, 2),
        _ => i64::from(!rng.chance(1.0 / 3.0)),
    };
    for _ in 0..holes {
        let width = rng.int(24, 64).max(period / 2);
        let from = rng.int(80, 490 - width);
        x.retain(|&v| v <= from || v > from + width);
    }
    let step = step.min(period / 2);
    (x, step)
}

/// 0 at `t <= 0`, 1 at `t >= 1`, smooth in between.
fn smoothstep(t: f64) -> f64 {
    let t = t.clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// Throughput (or time) from a cost of one launch, at the points `x`.
fn from_cost(
    rng: &mut Rng,
    x: &[i64],
    cost: impl Fn(i64) -> f64,
    noise: f64,
) -> (Vec<(f64, Option<f64>)>, Sense) {
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
    (points, sense)
}

/// A curve of category `kind` with relative noise `noise`.
pub(crate) fn hard(rng: &mut Rng, kind: Hard, noise: f64) -> Generated {
    let overhead = if rng.chance(0.5) {
        0.0
    } else {
        rng.range(0.0, 3.0)
    };
    let tau = rng.range(0.5, 2.0);
    let mut second = None;
    let (x, period, phase): (Vec<i64>, i64, i64) = match kind {
        Hard::Rounded | Hard::Linear => {
            let period = [32, 64][rng.int(0, 1) as usize];
            (xs(rng, 512), period, rng.int(0, period - 1))
        }
        Hard::Irregular => (xs(rng, 512), 32, rng.int(0, 31)),
        Hard::Spikes => {
            let period = [16, 32][rng.int(0, 1) as usize];
            let x = xs(rng, 512);
            // On the grid of 2, the spikes on the grid, so that they are sampled.
            let phase = if x.iter().all(|v| v % 2 == 0) {
                2 * rng.int(0, period / 2 - 1)
            } else {
                rng.int(0, period - 1)
            };
            (x, period, phase)
        }
        Hard::Nested => {
            second = Some(16.0);
            (xs(rng, 512), 32, rng.int(0, 31))
        }
        Hard::Sparse => {
            let x = (0..10)
                .flat_map(|k| [1i64 << k, 3 << k])
                .filter(|&v| v <= 1024);
            let mut x: Vec<i64> = x.chain([1024]).collect();
            x.sort_unstable();
            x.dedup();
            let period = [16, 32, 64][rng.int(0, 2) as usize];
            (x, period, rng.int(0, period - 1))
        }
        Hard::Cliffs => (xs(rng, 512), 0, 0),
        Hard::Holes => {
            let period = [16, 32, 64][rng.int(0, 2) as usize];
            let (x, step) = holes_grid(rng, period);
            // Where x steps by 8, a period of 16 spans two points: 32 or 64 there.
            let period = if step == 8 && period == 16 {
                32
            } else {
                period
            };
            let phase = step * rng.int(0, period / step - 1);
            (x, period, phase)
        }
        Hard::Long => {
            let period = rng.int(180, 250);
            (xs(rng, 512), period, rng.int(0, period - 1))
        }
        Hard::Short => ((1..=64).collect(), 16, rng.int(0, 15)),
        Hard::Coarse => {
            let x: Vec<i64> = std::iter::once(1).chain((1..=128).map(|k| 4 * k)).collect();
            let period = [16, 32, 64][rng.int(0, 2) as usize];
            // Peaks on the grid, so that they are sampled.
            (x, period, 4 * rng.int(0, period / 4 - 1))
        }
    };
    let n = *x.last().unwrap_or(&1);
    let floor_steps = if period > 0 {
        rng.int(1, (n / period - 3).clamp(1, 3))
    } else {
        1
    };
    let (points, sense, what) = match kind {
        Hard::Rounded | Hard::Linear => {
            // Each edge rises over `width` points: a cubic (Rounded) or a straight ramp (Linear).
            let (rise, name): (fn(f64) -> f64, &str) = match kind {
                Hard::Rounded => (smoothstep, ""),
                _ => (|t: f64| t.min(1.0), "linear "),
            };
            let width = rng.int(period / 4, period / 2) as f64;
            let steps = |v: i64| {
                let d = v - phase - 1;
                let k = d.div_euclid(period) as f64;
                let into = (d.rem_euclid(period) + 1) as f64;
                (k + rise(into / width)).max(floor_steps as f64)
            };
            let (p, s) = from_cost(rng, &x, |v| tau * (overhead + steps(v)), noise);
            (p, s, format!("{name}width={width}"))
        }
        Hard::Irregular => {
            // Edge k lies at phase + k * P; two of edges 3..=n/P - 1 drop a tenth of the others.
            let last = (n - phase) / period;
            let a = rng.int(3, last - 1);
            let mut b = rng.int(3, last - 1);
            while b == a {
                b = rng.int(3, last - 1);
            }
            let steps = move |v: i64| {
                let k = ceil_div(v - phase, period).max(floor_steps);
                let odd = [a, b]
                    .iter()
                    .filter(|&&e| e < k && e >= floor_steps)
                    .count();
                k as f64 - 0.9 * odd as f64
            };
            let (p, s) = from_cost(rng, &x, |v| tau * (overhead + steps(v)), noise);
            (p, s, format!("irregular edges {a}, {b}"))
        }
        Hard::Spikes => {
            let h = rng.range(0.1, 0.3);
            let cost = move |v: i64| {
                let trend = tau * (1.0 + overhead + v as f64 / 64.0);
                if (v - phase).rem_euclid(period) == 0 {
                    trend * (1.0 - h)
                } else {
                    trend
                }
            };
            let (p, s) = from_cost(rng, &x, cost, noise);
            (p, s, format!("spikes of {h:.2}"))
        }
        Hard::Nested => {
            // Every 32 a step of 1, every other 16 a step of `small`: 25/75 to 50/50.
            let small = rng.range(0.25, 0.5);
            let steps = |v: i64| {
                small * ceil_div(v - phase, 16).max(2 * floor_steps) as f64
                    + (1.0 - small) * ceil_div(v - phase, 32).max(floor_steps) as f64
            };
            let (p, s) = from_cost(rng, &x, |v| tau * (overhead + steps(v)), noise);
            (p, s, format!("small share={small:.2}"))
        }
        Hard::Cliffs => {
            let count = rng.int(2, 3);
            let mut at = vec![rng.int(40, 160)];
            let mut last_gap = 0;
            while (at.len() as i64) < count {
                let mut gap = rng.int(70, 180);
                while (gap - last_gap).abs() < 25 {
                    gap = rng.int(70, 180);
                }
                last_gap = gap;
                at.push(at[at.len() - 1] + gap);
            }
            let heights: Vec<f64> = at.iter().map(|_| rng.range(0.3, 1.0)).collect();
            let cliffs = at.clone();
            let cost = move |v: i64| {
                let passed: f64 = cliffs
                    .iter()
                    .zip(&heights)
                    .filter(|(c, _)| v > **c)
                    .map(|(_, h)| h)
                    .sum();
                tau * (1.0 + overhead + passed)
            };
            let (p, s) = from_cost(rng, &x, cost, noise);
            (p, s, format!("cliffs at {at:?}"))
        }
        Hard::Holes => {
            let steps = |v: i64| ceil_div(v - phase, period).max(floor_steps) as f64;
            let (p, s) = from_cost(rng, &x, |v| tau * (overhead + steps(v)), noise);
            let holes: Vec<String> = x
                .windows(2)
                .filter(|w| w[1] - w[0] > 8)
                .map(|w| format!("{}..{}", w[0], w[1]))
                .collect();
            let steps: Vec<i64> = x
                .windows(2)
                .map(|w| w[1] - w[0])
                .filter(|d| *d <= 8)
                .collect();
            let top = steps.iter().copied().max().unwrap_or(1);
            (p, s, format!("grid to {top}, holes {holes:?}"))
        }
        _ => {
            let steps = |v: i64| ceil_div(v - phase, period).max(floor_steps) as f64;
            let (p, s) = from_cost(rng, &x, |v| tau * (overhead + steps(v)), noise);
            (p, s, String::new())
        }
    };
    Generated {
        points,
        sense,
        period: (period > 0).then(|| (period as f64, phase.rem_euclid(period) as f64)),
        knee: None,
        second,
        kind: format!(
            "{kind:?} P={period} phase={phase} floor={floor_steps} overhead={overhead:.2} {what} {sense:?} n={}",
            x.len()
        ),
    }
}
