//! Accuracy of the period detection on generated curves of known period, phase and knee.
//!
//! The targets (from the issue): at noise up to 3 % the period is right in at least 98 % of the
//! curves and the phase in at least 95 %; when the confidence is reported high, harmonic errors
//! (P/2, 2P, ...) stay below 1 % at any noise up to 10 %; ramps, flat lines and noise give
//! "no periodic structure" in at least 99 % of the curves. The generator is seeded, so every run
//! sees the same curves (`SEED=<n>` in the environment tries others).

use super::curve::{analyze_curve, Confidence};
use super::synth::{aperiodic, hard, sawtooth, Hard, Rng};

const PERIODS: [i64; 5] = [4, 8, 16, 32, 64];

#[derive(Default)]
struct Tally {
    curves: usize,
    period_right: usize,
    phase_right: usize,
    knee_right: usize,
    high: usize,
    high_harmonic: usize,
    /// Curves of one period that were given a second one.
    second: usize,
    /// The first few misses, for the failure message.
    misses: Vec<String>,
}

impl Tally {
    fn miss(&mut self, what: String) {
        if self.misses.len() < 5 {
            self.misses.push(what);
        }
    }
}

fn seed(default: u64) -> u64 {
    std::env::var("SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// `found` is `truth` times or divided by an integer of 2 or more.
fn is_harmonic(found: f64, truth: f64) -> bool {
    let ratio = if found > truth {
        found / truth
    } else {
        truth / found
    };
    (ratio - ratio.round()).abs() < 1e-9 && ratio.round() >= 2.0
}

fn run_sawtooths(seed: u64, noises: &[f64], per_cell: usize) -> Tally {
    let mut rng = Rng::new(seed);
    let mut t = Tally::default();
    for &noise in noises {
        for &period in &PERIODS {
            for _ in 0..per_cell {
                let g = sawtooth(&mut rng, period, noise);
                let (p_true, phase_true) = g.period.unwrap_or((0.0, 0.0));
                let c = analyze_curve(&g.points, g.sense);
                t.curves += 1;
                t.second += usize::from(c.secondary.is_some());
                let Some(p) = &c.period else {
                    t.miss(format!("{} at noise {noise}: no period", g.kind));
                    continue;
                };
                if p.period == p_true && p.phase == phase_true {
                    t.period_right += 1;
                    t.phase_right += 1;
                } else if p.period == p_true {
                    t.period_right += 1;
                    t.miss(format!("{} at noise {noise}: phase {}", g.kind, p.phase));
                } else {
                    t.miss(format!(
                        "{} at noise {noise}: period {} ({:?})",
                        g.kind, p.period, p.level
                    ));
                }
                if p.period == p_true && c.knee.is_some() && c.knee == g.knee {
                    t.knee_right += 1;
                }
                if p.level == Confidence::High {
                    t.high += 1;
                    if is_harmonic(p.period, p_true) {
                        t.high_harmonic += 1;
                    }
                }
            }
        }
    }
    t
}

fn rate(k: usize, n: usize) -> f64 {
    k as f64 / n.max(1) as f64
}

#[test]
fn period_phase_and_knee_are_right_at_noise_up_to_3_percent() {
    let t = run_sawtooths(seed(0x5EED_0001), &[0.0, 0.01, 0.02, 0.03], 25);
    let (period, phase, knee) = (
        rate(t.period_right, t.curves),
        rate(t.phase_right, t.curves),
        rate(t.knee_right, t.curves),
    );
    println!(
        "noise <= 3 %: {} curves, period right {:.1} %, phase right {:.1} %, knee exact {:.1} %, a second period in {}",
        t.curves,
        100.0 * period,
        100.0 * phase,
        100.0 * knee,
        t.second
    );
    assert!(
        period >= 0.98,
        "period right in {:.1} % of the curves; misses: {:#?}",
        100.0 * period,
        t.misses
    );
    assert!(
        phase >= 0.95,
        "phase right in {:.1} % of the curves; misses: {:#?}",
        100.0 * phase,
        t.misses
    );
    assert!(
        knee >= 0.90,
        "knee exact in {:.1} % of the curves",
        100.0 * knee
    );
    assert!(
        t.second * 100 <= t.curves,
        "{} of {} curves of one period were given a second one",
        t.second,
        t.curves
    );
}

#[test]
fn high_confidence_is_not_a_harmonic_at_noise_up_to_10_percent() {
    let t = run_sawtooths(seed(0x5EED_0002), &[0.0, 0.02, 0.05, 0.1], 20);
    let harmonic = rate(t.high_harmonic, t.high);
    println!(
        "noise 0-10 %: {} curves, {} with high confidence, harmonic errors among those {:.2} %, period right {:.1} %",
        t.curves,
        t.high,
        100.0 * harmonic,
        100.0 * rate(t.period_right, t.curves)
    );
    // High confidence must also be common, or the claim would be empty.
    assert!(
        t.high * 2 >= t.curves,
        "only {} of {} curves have high confidence",
        t.high,
        t.curves
    );
    assert!(
        harmonic < 0.01,
        "{} harmonic errors among {} high-confidence answers",
        t.high_harmonic,
        t.high
    );
}

#[test]
fn ramps_flat_lines_and_noise_have_no_period() {
    let mut rng = Rng::new(seed(0x5EED_0003));
    let mut curves = 0;
    let mut none = 0;
    let mut misses = Vec::new();
    for &noise in &[0.0, 0.01, 0.03, 0.05, 0.1] {
        for _ in 0..100 {
            let g = aperiodic(&mut rng, noise);
            let c = analyze_curve(&g.points, g.sense);
            curves += 1;
            match &c.period {
                None => none += 1,
                Some(p) => misses.push(format!(
                    "{} at noise {noise}: period {} ({:?}, {:?}, margin {:.1})",
                    g.kind, p.period, p.method, p.level, p.margin_none
                )),
            }
        }
    }
    let r = rate(none, curves);
    println!(
        "aperiodic: {curves} curves, no periodic structure in {:.1} %",
        100.0 * r
    );
    assert!(
        r >= 0.99,
        "no periodic structure in only {:.1} % of aperiodic curves: {misses:#?}",
        100.0 * r
    );
}

/// What the analysis made of one curve of a harder category.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Right,
    Wrong,
    /// A wrong period, reported with high confidence.
    HighWrong,
}

/// The periods reported for a curve: the primary, then the secondary when there is one.
fn reported(c: &super::curve::Curve) -> Vec<&super::curve::Period> {
    c.period.iter().chain(&c.secondary).collect()
}

/// Scores one curve of category `kind`. Nested steps are right when both periods are reported;
/// sparse points and long periods when the true period or none is reported (the points cannot
/// show it); cliffs when none is; the others when the true period is.
fn verdict(kind: Hard, g: &super::synth::Generated, c: &super::curve::Curve) -> Verdict {
    let periods: Vec<f64> = reported(c).iter().map(|p| p.period).collect();
    let truth: Vec<f64> = g.period.iter().map(|p| p.0).chain(g.second).collect();
    let right = match kind {
        Hard::Nested => periods.len() == 2 && truth.iter().all(|t| periods.contains(t)),
        Hard::Sparse | Hard::Long => periods.is_empty() || periods == truth[..1],
        Hard::Cliffs => periods.is_empty(),
        Hard::Rounded
        | Hard::Short
        | Hard::Coarse
        | Hard::Irregular
        | Hard::Spikes
        | Hard::Linear
        | Hard::Holes => periods.first() == truth.first(),
    };
    let high_wrong = reported(c)
        .iter()
        .any(|p| p.level == Confidence::High && !truth.contains(&p.period));
    match (right, high_wrong) {
        (_, true) => Verdict::HighWrong,
        (true, false) => Verdict::Right,
        (false, false) => Verdict::Wrong,
    }
}

/// Per category: curves, right, high-confidence wrong, periods printed with negative
/// confidence, and the first few misses.
#[derive(Default)]
struct HardTally {
    curves: usize,
    right: usize,
    high_wrong: usize,
    negative: usize,
    misses: Vec<String>,
}

/// How many misses per category the battery prints: 6, or `MISSES=<n>` in the environment.
fn shown_misses() -> usize {
    std::env::var("MISSES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(6)
}

/// The curves of the battery at `seed`, in the order it reads them: for each noise, each
/// category, `per_cell` curves, with the category and the noise.
fn hard_curves(
    seed: u64,
    noises: &[f64],
    per_cell: usize,
) -> impl Iterator<Item = (Hard, f64, super::synth::Generated)> + '_ {
    let mut rng = Rng::new(seed);
    // The categories added after the first ten draw from a generator of their own, so that
    // the curves of the others stay those of earlier batteries.
    let mut later = Rng::new(seed ^ 0x4015);
    noises
        .iter()
        .flat_map(move |&noise| {
            Hard::ALL
                .iter()
                .flat_map(move |&kind| std::iter::repeat_n(kind, per_cell))
                .map(move |kind| (kind, noise))
        })
        .map(move |(kind, noise)| {
            let from = if kind == Hard::Holes {
                &mut later
            } else {
                &mut rng
            };
            (kind, noise, hard(from, kind, noise))
        })
}

/// The battery's noises and curves per category and noise.
const HARD_NOISES: [f64; 4] = [0.0, 0.01, 0.02, 0.03];
const HARD_PER_CELL: usize = 30;

fn run_hard(seed: u64, noises: &[f64], per_cell: usize) -> Vec<(Hard, HardTally)> {
    let mut out: Vec<(Hard, HardTally)> = Hard::ALL
        .iter()
        .map(|&k| (k, HardTally::default()))
        .collect();
    for (kind, noise, g) in hard_curves(seed, noises, per_cell) {
        let Some((_, t)) = out.iter_mut().find(|(k, _)| *k == kind) else {
            continue;
        };
        let c = analyze_curve(&g.points, g.sense);
        t.curves += 1;
        t.negative += reported(&c).iter().filter(|p| p.confidence < 0.0).count();
        let v = verdict(kind, &g, &c);
        if v == Verdict::Right {
            t.right += 1;
            continue;
        }
        t.high_wrong += usize::from(v == Verdict::HighWrong);
        if t.misses.len() < shown_misses() {
            let said: Vec<String> = reported(&c)
                .iter()
                .map(|p| format!("{} ({:?}, {:.0})", p.period, p.level, p.confidence))
                .collect();
            let guess = c.guess.as_ref().map(|g| (g.period, g.why.clone()));
            t.misses.push(format!(
                "{} at noise {noise}: said {said:?}, guess {guess:?}",
                g.kind
            ));
        }
    }
    out
}

/// The battery of issue 12: every category at noise up to 3 %, 120 curves each. Heavy, so it
/// runs in release builds only: `cargo test --release --lib accuracy -- --nocapture`.
#[test]
#[cfg_attr(debug_assertions, ignore = "heavy: run with --release")]
fn harder_curves_are_read_right_or_left_unread() {
    let tallies = run_hard(seed(0x5EED_0012), &HARD_NOISES, HARD_PER_CELL);
    let periodic = [
        Hard::Rounded,
        Hard::Nested,
        Hard::Short,
        Hard::Coarse,
        Hard::Irregular,
        Hard::Spikes,
        Hard::Linear,
        Hard::Holes,
    ];
    let (mut curves, mut right, mut high_wrong, mut negative) = (0, 0, 0, 0);
    let (mut p_curves, mut p_right) = (0, 0);
    let mut failures = Vec::new();
    println!("| category | curves | right | high-confidence wrong | negative confidence |");
    println!("|---|---|---|---|---|");
    for (kind, t) in &tallies {
        let r = rate(t.right, t.curves);
        println!(
            "| {kind:?} | {} | {:.1} % | {} | {} |",
            t.curves,
            100.0 * r,
            t.high_wrong,
            t.negative
        );
        for m in &t.misses {
            println!("    miss: {m}");
        }
        curves += t.curves;
        right += t.right;
        high_wrong += t.high_wrong;
        negative += t.negative;
        if periodic.contains(kind) {
            p_curves += t.curves;
            p_right += t.right;
        }
        if r < 0.93 {
            failures.push(format!("{kind:?} right in {:.1} %", 100.0 * r));
        }
    }
    println!(
        "all: {curves} curves, right {:.1} %; periodic: {p_curves} curves, right {:.1} %",
        100.0 * rate(right, curves),
        100.0 * rate(p_right, p_curves)
    );
    // Issue 34's targets: 97.5 % of the periodic curves, no category below 93 % (issue 12's
    // were 97 % and 90 %, before the irregular, spike and linear categories).
    if rate(p_right, p_curves) < 0.975 {
        failures.push(format!(
            "periodic curves right in {:.1} %",
            100.0 * rate(p_right, p_curves)
        ));
    }
    if high_wrong > 0 {
        failures.push(format!("{high_wrong} high-confidence wrong answers"));
    }
    if negative > 0 {
        failures.push(format!("{negative} periods with negative confidence"));
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The six readings that the battery gave at high confidence and wrong, over the default seed
/// and seeds 1-10 (issue 34), each found again by its seed and description: two weak edges of
/// 32 read as 32 with 64 nested, or 64 with 32 nested, at high confidence; a comb of 16 read as
/// steps of 8; one step at x = 420 read as a comb of 47, an outlier its tallest spike. Each is
/// now read right, and none of its periods is high and wrong.
#[test]
fn the_high_confidence_wrong_readings_of_the_battery_are_right() {
    let cases: [(u64, f64, &str); 7] = [
        (4, 0.03, "Irregular P=32 phase=24 floor=2 overhead=0.00 irregular edges 5, 3 LowerIsBetter n=377"),
        (1, 0.03, "Spikes P=16 phase=12 floor=3 overhead=2.92 spikes of 0.13 HigherIsBetter n=512"),
        (2, 0.03, "Irregular P=32 phase=28 floor=2 overhead=0.00 irregular edges 7, 12 HigherIsBetter n=392"),
        (6, 0.02, "Irregular P=32 phase=28 floor=2 overhead=2.73 irregular edges 7, 9 HigherIsBetter n=512"),
        (8, 0.03, "Spikes P=16 phase=8 floor=1 overhead=0.35 spikes of 0.13 HigherIsBetter n=512"),
        (9, 0.03, "Long P=248 phase=171 floor=1 overhead=1.63  LowerIsBetter n=512"),
        (10, 0.03, "Irregular P=32 phase=24 floor=2 overhead=0.00 irregular edges 6, 4 HigherIsBetter n=256"),
    ];
    for (seed, noise, kind) in cases {
        let (hard_kind, _, g) = hard_curves(seed, &HARD_NOISES, HARD_PER_CELL)
            .find(|(_, n, g)| *n == noise && g.kind == kind)
            .unwrap_or_else(|| panic!("seed {seed}: no curve {kind} at noise {noise}"));
        let c = analyze_curve(&g.points, g.sense);
        let said: Vec<String> = reported(&c)
            .iter()
            .map(|p| format!("{} ({:?})", p.period, p.level))
            .collect();
        assert_eq!(
            verdict(hard_kind, &g, &c),
            Verdict::Right,
            "seed {seed}, {kind} at noise {noise}: said {said:?}"
        );
    }
}
