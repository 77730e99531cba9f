//! Accuracy of the period detection on generated curves of known period, phase and knee.
//!
//! The targets (from the issue): at noise up to 3 % the period is right in at least 98 % of the
//! curves and the phase in at least 95 %; when the confidence is reported high, harmonic errors
//! (P/2, 2P, ...) stay below 1 % at any noise up to 10 %; ramps, flat lines and noise give
//! "no periodic structure" in at least 99 % of the curves. The generator is seeded, so every run
//! sees the same curves.

use super::curve::{analyze_curve, Confidence};
use super::synth::{aperiodic, sawtooth, Rng};

const PERIODS: [i64; 5] = [4, 8, 16, 32, 64];

struct Tally {
    curves: usize,
    period_right: usize,
    phase_right: usize,
    knee_right: usize,
    high: usize,
    high_harmonic: usize,
    harmonic: usize,
    none: usize,
}

fn is_harmonic(found: f64, truth: f64) -> bool {
    let ratio = if found > truth { found / truth } else { truth / found };
    found != truth && (ratio - ratio.round()).abs() < 1e-9 && ratio.round() >= 2.0
}

fn run_sawtooths(seed: u64, noises: &[f64], per_cell: usize) -> Tally {
    let mut rng = Rng::new(seed);
    let mut t = Tally {
        curves: 0,
        period_right: 0,
        phase_right: 0,
        knee_right: 0,
        high: 0,
        high_harmonic: 0,
        harmonic: 0,
        none: 0,
    };
    for &noise in noises {
        for &period in &PERIODS {
            for _ in 0..per_cell {
                let g = sawtooth(&mut rng, period, noise);
                let (p_true, phase_true) = g.period.unwrap_or((0.0, 0.0));
                let c = analyze_curve(&g.points, g.sense);
                t.curves += 1;
                let Some(p) = &c.period else {
                    t.none += 1;
                    continue;
                };
                if p.period == p_true {
                    t.period_right += 1;
                    if p.phase == phase_true {
                        t.phase_right += 1;
                    }
                    if let (Some(k), Some(k_true)) = (c.knee, g.knee) {
                        if (k - k_true).abs() <= 0.0 {
                            t.knee_right += 1;
                        }
                    }
                } else if is_harmonic(p.period, p_true) {
                    t.harmonic += 1;
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
fn period_and_phase_are_right_at_noise_up_to_3_percent() {
    let seed = std::env::var("SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5EED_0001);
    let t = run_sawtooths(seed, &[0.0, 0.01, 0.02, 0.03], 25);
    let (period, phase) = (rate(t.period_right, t.curves), rate(t.phase_right, t.curves));
    let knee = rate(t.knee_right, t.curves);
    println!(
        "noise <= 3 %: {} curves, period right {:.1} %, phase right {:.1} %, knee exact {:.1} %, \
         harmonic {}, none {}",
        t.curves,
        100.0 * period,
        100.0 * phase,
        100.0 * knee,
        t.harmonic,
        t.none
    );
    assert!(period >= 0.98, "period right in {:.1} % of the curves", 100.0 * period);
    assert!(phase >= 0.95, "phase right in {:.1} % of the curves", 100.0 * phase);
}

#[test]
fn high_confidence_is_not_a_harmonic_at_noise_up_to_10_percent() {
    let seed = std::env::var("SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5EED_0002);
    let t = run_sawtooths(seed, &[0.0, 0.02, 0.05, 0.1], 20);
    let harmonic = rate(t.high_harmonic, t.high);
    println!(
        "noise 0-10 %: {} curves, {} high, harmonic among high {:.2} %, period right {:.1} %, \
         harmonic overall {}",
        t.curves,
        t.high,
        100.0 * harmonic,
        100.0 * rate(t.period_right, t.curves),
        t.harmonic
    );
    assert!(t.high * 2 >= t.curves, "only {} of {} curves have high confidence", t.high, t.curves);
    assert!(harmonic < 0.01, "{} harmonic errors among {} high-confidence answers", t.high_harmonic, t.high);
}

#[test]
fn ramps_flat_lines_and_noise_have_no_period() {
    let seed = std::env::var("SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5EED_0003);
    let mut rng = Rng::new(seed);
    let mut curves = 0;
    let mut none = 0;
    for &noise in &[0.0, 0.01, 0.03, 0.05, 0.1] {
        for _ in 0..100 {
            let g = aperiodic(&mut rng, noise);
            let c = analyze_curve(&g.points, g.sense);
            curves += 1;
            if c.period.is_none() {
                none += 1;
            }
        }
    }
    let r = rate(none, curves);
    println!("aperiodic: {curves} curves, no periodic structure in {:.1} %", 100.0 * r);
    assert!(r >= 0.99, "no periodic structure in only {:.1} % of aperiodic curves", 100.0 * r);
}

#[test]
#[ignore]
fn diag() {
    let mut rng = Rng::new(0x5EED_0001);
    for &noise in &[0.0, 0.01, 0.02, 0.03] {
        for &period in &PERIODS {
            for _ in 0..10 {
                let g = sawtooth(&mut rng, period, noise);
                let c = analyze_curve(&g.points, g.sense);
                let (pt, ft) = g.period.unwrap();
                let ok = c.period.as_ref().is_some_and(|p| p.period == pt && p.phase == ft);
                if !ok {
                    let n = g.points.len();
                    let step = g.points[1].0 - g.points[0].0;
                    println!("SAW noise {noise} {} step {step} -> {:?} knee {:?}", g.kind, c.period.map(|p| (p.period, p.phase, p.level, p.margin_none, p.margin_half, p.margin_double)), c.knee);
                    super::curve::debug_fit(&g.points, g.sense);
                }
            }
        }
    }
    let mut rng = Rng::new(0x5EED_0003);
    for &noise in &[0.0, 0.01, 0.03, 0.05, 0.1] {
        for i in 0..40 {
            let g = aperiodic(&mut rng, noise);
            let c = analyze_curve(&g.points, g.sense);
            if c.period.is_some() {
                println!("APER noise {noise} i {i} {} -> {:?}", g.kind, c.period);
                if i == 15 && noise == 0.03 {
                    for (x, y) in &g.points { print!("{x}:{} ", y.map_or(0.0, |v| (v * 10.0).round() / 10.0)); }
                    println!();
                }
            }
        }
    }
}

#[test]
#[ignore]
fn diag2() {
    let mut rng = Rng::new(0x5EED_0001);
    for &noise in &[0.0, 0.01] {
        for &period in &PERIODS {
            for _ in 0..10 {
                let g = sawtooth(&mut rng, period, noise);
                if noise == 0.01 && period == 4 {
                    let c = analyze_curve(&g.points, g.sense);
                    if c.period.is_none() {
                        for (x, y) in &g.points { println!("{x} {}", y.map_or("nan".to_string(), |v| v.to_string())); }
                        super::curve::debug_fit(&g.points, g.sense);
                        return;
                    }
                }
            }
        }
    }
}

#[test]
#[ignore]
fn diag3() {
    let pts: Vec<(f64, Option<f64>)> = (1..=128).map(|x| {
        let s = super::fit::ceil_div(x - 3, 4).max(3) as f64 + 2.59;
        (x as f64, Some(x as f64 / s))
    }).collect();
    super::curve::debug_fit(&pts, super::curve::Sense::HigherIsBetter);
    let c = analyze_curve(&pts, super::curve::Sense::HigherIsBetter);
    println!("{:?} knee {:?}", c.period, c.knee);
}

#[test]
#[ignore]
fn diag4() {
    let mut rng = Rng::new(77);
    let mut v = vec![];
    for &noise in &[0.0, 0.01, 0.03, 0.05, 0.1] {
        for _ in 0..200 {
            let g = aperiodic(&mut rng, noise);
            let (a, b, c) = super::curve::debug_margins(&g.points, g.sense);
            v.push((a.min(b), a, b, c, g.kind.clone(), noise));
        }
    }
    v.sort_by(|x, y| y.1.total_cmp(&x.1));
    for r in &v[..25] { println!("APER stair {:.1} (none {:.1} shape {:.1}) {} {}", r.0, r.1, r.2, r.4, r.5); }
    v.sort_by(|x, y| y.3.total_cmp(&x.3));
    for r in &v[..10] { println!("APER fold {:.1} {} {}", r.3, r.4, r.5); }
    let mut w = vec![];
    for &noise in &[0.0, 0.01, 0.02, 0.03, 0.05, 0.1] {
        for &period in &PERIODS {
            for _ in 0..20 {
                let g = sawtooth(&mut rng, period, noise);
                let (a, b, c) = super::curve::debug_margins(&g.points, g.sense);
                w.push((a.min(b), a, b, c, g.kind.clone(), noise));
            }
        }
    }
    w.sort_by(|x, y| x.0.total_cmp(&y.0));
    for r in w.iter().filter(|r| r.5 <= 0.03).take(15) { println!("SAW stair {:.1} (none {:.1} shape {:.1}) fold {:.1} {} {}", r.0, r.1, r.2, r.3, r.4, r.5); }
}

#[test]
#[ignore]
fn diag5() {
    let mut rng = Rng::new(77);
    for &noise in &[0.0] {
        for _ in 0..200 {
            let g = aperiodic(&mut rng, noise);
            let (_, _, c) = super::curve::debug_margins(&g.points, g.sense);
            if c > 100.0 {
                println!("{} fold margin {c}", g.kind);
                for (x, y) in &g.points { print!("{x}:{} ", y.map_or(0.0, |v| (v * 10.0).round() / 10.0)); }
                println!();
                return;
            }
        }
    }
}

#[test]
#[ignore]
fn diag6() {
    for seed in [0u64, 4] {
        let mut rng = Rng::new(seed);
        for &noise in &[0.0, 0.02, 0.05, 0.1] {
            for &period in &PERIODS {
                for _ in 0..20 {
                    let g = sawtooth(&mut rng, period, noise);
                    let c = analyze_curve(&g.points, g.sense);
                    if let Some(p) = &c.period {
                        if p.period != period as f64 && p.level != Confidence::Low {
                            println!("seed {seed} noise {noise} {} -> {:?}", g.kind, p);
                        }
                    }
                }
            }
        }
    }
}

#[test]
#[ignore]
fn diag7() {
    let mut rng = Rng::new(4);
    for &noise in &[0.0, 0.02, 0.05, 0.1] {
        for &period in &PERIODS {
            for _ in 0..20 {
                let g = sawtooth(&mut rng, period, noise);
                if (noise == 0.0 && period == 8 && g.kind.contains("tail=true") && g.kind.contains("phase=5")) || (noise == 0.1 && period == 16 && g.kind.contains("phase=0 ")) {
                    println!("{}", g.kind);
                    super::curve::debug_fit(&g.points, g.sense);
                    for (x, y) in &g.points { print!("{x}:{} ", y.map_or(0.0, |v| (v * 10.0).round() / 10.0)); }
                    println!();
                }
            }
        }
    }
}
