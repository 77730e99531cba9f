//! The timing core's statistics (cuda/common/sweep_stats.h: placements, the value's confidence
//! interval, median of placement means, spread, unstable), run on the CPU through the driver
//! tests/timing_stats/stats.cpp on generated samples. The same header runs inside every bench on
//! the GPU. Skipped (saying so) only without a host C++ compiler.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

fn driver() -> Option<std::path::PathBuf> {
    if !common::on_path("c++") {
        common::skip("no host C++ compiler (`c++`) on PATH");
        return None;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap().keep();
    let bin = dir.join("stats");
    let out = std::process::Command::new("c++")
        .args(["-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(root.join("cuda/common"))
        .arg("-o")
        .arg(&bin)
        .arg(root.join("tests/timing_stats/stats.cpp"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::stderr(&out));
    Some(bin)
}

/// What the driver prints for one scenario (it must succeed).
fn printed(bin: &Path, scenario: &str) -> String {
    let out = std::process::Command::new(bin)
        .arg(scenario)
        .output()
        .unwrap();
    assert!(out.status.success(), "{scenario}: {}", common::stderr(&out));
    common::stdout(&out)
}

fn summary(bin: &Path, scenario: &str) -> BTreeMap<String, f64> {
    printed(bin, scenario)
        .split_whitespace()
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect()
}

/// scenario, mean (ms, to 1 %), spread range, placements, unstable
type Case = (&'static str, f64, (f64, f64), f64, f64);

#[test]
fn placements_give_the_median_the_spread_and_unstable_only_beyond_the_noise() {
    let Some(bin) = driver() else { return };
    let cases: &[Case] = &[
        // alike placements: the spread is the noise, not unstable
        ("equal", 1.0, (0.0, 0.005), 8.0, 0.0),
        // one placement 40 % slower: the median ignores it, the spread shows it, unstable
        ("one_slow", 1.0, (0.39, 0.41), 8.0, 1.0),
        // 1.5 % apart under 10 % noise with 2 samples each: a wide spread the noise explains
        ("noise_hides", 1.0, (0.02, 0.5), 8.0, 0.0),
        // five of eight placements slower: the median is the slow value
        ("half_slow", 1.3, (0.22, 0.24), 8.0, 1.0),
        // the time cap hit after three placements: only those count
        ("cut_short", 1.0, (0.0, 0.01), 3.0, 0.0),
    ];
    for &(scenario, mean_ms, (lo, hi), placements, unstable) in cases {
        let s = summary(&bin, scenario);
        let mean = s["mean"] * 1e3;
        assert!(
            (mean / mean_ms - 1.0).abs() < 0.01,
            "{scenario}: mean {mean} ms"
        );
        assert!(
            s["spread"] >= lo && s["spread"] <= hi,
            "{scenario}: spread {}",
            s["spread"]
        );
        assert_eq!(s["placements"], placements, "{scenario}");
        assert_eq!(s["unstable"], unstable, "{scenario}");
    }
}

#[test]
fn the_confidence_interval_comes_from_the_within_placement_noise() {
    let Some(bin) = driver() else { return };
    // One placement: the plain mean of 1, 2, 3, 4 ms and its Student-t half-width,
    // t(0.975, 3) * sd / sqrt(4) / mean = 3.182 * 1.2910 / 2 / 2.5.
    let s = summary(&bin, "single");
    assert!((s["mean"] - 2.5e-3).abs() < 1e-12);
    assert!((s["rel_ci"] - 0.82159).abs() < 1e-4, "{}", s["rel_ci"]);
    assert_eq!(s["spread"], 0.0);
    // A slow placement moves the spread, barely the CI: both runs have 0.2 % noise.
    let equal = summary(&bin, "equal");
    let slow = summary(&bin, "one_slow");
    assert!(equal["rel_ci"] < 0.001 && slow["rel_ci"] < 0.001);
    assert!(
        summary(&bin, "noise_hides")["rel_ci"] > 0.01,
        "10 % noise over 16 samples is above a 1 % target"
    );
}

#[test]
fn the_confidence_interval_holds_the_median_of_the_placements_in_95_percent_of_runs() {
    let Some(bin) = driver() else { return };
    let out = printed(&bin, "coverage");
    // case -> (how often |value - true median| <= rel_ci, the same with the pooled CI of the mean)
    let got: BTreeMap<String, (f64, f64)> = out
        .lines()
        .map(|l| {
            let v: Vec<&str> = l.split(' ').collect();
            (
                v[1].to_string(),
                (v[2].parse().unwrap(), v[3].parse().unwrap()),
            )
        })
        .collect();
    assert_eq!(got.len(), 4, "{got:?}");
    // Two groups split unevenly around the middle (3 of 8 placements 20 % slower): the median is
    // the top of the fast group's noisy means, biased by about 1.3 of its standard deviations, and
    // the CI centred on it holds the true median in only ~79 % of runs (the pooled one in ~42 %).
    // A known weakness (sweep_stats.h, value_rel_ci); this keeps it from getting worse.
    let (value, pooled) = got["three_slow"];
    assert!(
        value >= 0.75 && pooled < value,
        "three_slow: {value} / {pooled}"
    );
    for (case, (value, pooled)) in got.iter().filter(|(c, _)| *c != "three_slow") {
        // 4000 runs: a 95 % interval holds 94.3..95.7 % of them to two standard errors; the
        // bootstrap's t widening and its 2000 draws may add a point or two above
        assert!(
            (0.94..=0.975).contains(value),
            "{case}: the value's CI holds the true value in {value}"
        );
        assert!(pooled < value, "{case}: pooled {pooled} vs {value}");
    }
    // placements 2 % apart: only the middle two carry the median, and the pooled CI of the mean
    // of all samples (what rel_ci was until session 11) holds it in barely 71 % of runs
    assert!(got["apart"].1 < 0.8, "{:?}", got["apart"]);
}

#[test]
fn samples_only_at_the_central_placements_keep_the_confidence_interval_honest() {
    let Some(bin) = driver() else { return };
    // case -> (how often |value - true median| <= rel_ci, mean samples taken); 6 passes of 2 samples
    // per visit, the last four only where Placements::central says a place's mean may be the median
    let got: BTreeMap<String, (f64, f64)> = printed(&bin, "coverage_central")
        .lines()
        .map(|l| {
            let v: Vec<&str> = l.split(' ').collect();
            (
                v[1].to_string(),
                (v[2].parse().unwrap(), v[4].parse().unwrap()),
            )
        })
        .collect();
    assert_eq!(got.len(), 4, "{got:?}");
    for (case, (held, _)) in got.iter().filter(|(c, _)| *c != "three_slow") {
        assert!(
            (0.935..=0.975).contains(held),
            "{case}: the CI holds the true value in {held}"
        );
    }
    // the weak case stays as weak as with every place visited (~0.79 there)
    assert!(got["three_slow"].0 >= 0.74, "{:?}", got["three_slow"]);
    // all 8 places in all 6 passes would be 96 samples: alike places are all central, a slow one or
    // a slow group is left out once the noise can tell it from the middle
    assert_eq!(got["alike"].1, 96.0);
    assert!(got["one_slow"].1 < 92.0, "{:?}", got["one_slow"]);
    assert!(got["three_slow"].1 < 80.0, "{:?}", got["three_slow"]);
}

#[test]
fn placements_lie_inside_one_page_by_default_and_in_as_many_pages_as_asked() {
    let Some(bin) = driver() else { return };
    let out = printed(&bin, "plan");
    let page = 2usize << 20;
    // (pages, buffer, placement) -> (offset, span)
    let mut plan: BTreeMap<(usize, usize, usize), (usize, usize)> = BTreeMap::new();
    for l in out.lines() {
        let v: Vec<usize> = l["offset ".len()..]
            .split(' ')
            .map(|x| x.parse().unwrap())
            .collect();
        plan.insert((v[0], v[1], v[2]), (v[3], v[4]));
    }
    for (pages, placements) in [(1, 8), (16, 16)] {
        for i in 0..3 {
            assert_eq!(
                plan[&(pages, i, 0)].0,
                0,
                "placement 0 is where cudaMalloc put the pool"
            );
            let mut seen_pages = std::collections::BTreeSet::new();
            let mut offsets = std::collections::BTreeSet::new();
            for j in 0..placements {
                let (o, span) = plan[&(pages, i, j)];
                assert_eq!(span, pages * page);
                assert_eq!(
                    o % 4096,
                    0,
                    "{pages} pages, buffer {i}, placement {j}: 4 KiB aligned"
                );
                assert!(
                    o < span,
                    "{pages} pages, buffer {i}, placement {j}: {o} inside the span"
                );
                seen_pages.insert(o / page);
                offsets.insert(o);
            }
            assert_eq!(seen_pages.len(), pages, "{pages} pages, buffer {i}");
            assert_eq!(
                offsets.len(),
                placements,
                "{pages} pages, buffer {i}: distinct places"
            );
        }
        assert_ne!(
            plan[&(pages, 0, 1)],
            plan[&(pages, 1, 1)],
            "buffers do not share offsets"
        );
    }
}

#[test]
fn the_fill_pass_takes_as_many_samples_per_place_as_reach_the_minimum_time() {
    let Some(bin) = driver() else { return };
    let out = printed(&bin, "fill");
    let got: Vec<(String, i64)> = out
        .lines()
        .map(|l| {
            let (case, n) = l["fill ".len()..].rsplit_once(' ').unwrap();
            (case.to_string(), n.parse().unwrap())
        })
        .collect();
    let want: &[(&str, i64)] = &[
        // 16 samples of 40 us (0.64 ms) at 8 places: 4.36 ms to go = 109 samples = 14 per place
        ("8 2 5 0.64 16", 14),
        // min_time already reached: the base
        ("8 2 5 5.2 16", 2),
        // 0.1 ms short, but never fewer than the base
        ("8 2 5 4.9 16", 2),
        // one place: nothing to visit, one sample per pass as before
        ("1 1 5 0.04 1", 1),
        // a 0 ms reading (floored to 1 ns per sample): capped, never unbounded
        ("8 2 5 0 16", 4096),
        // 10 us samples, 20 ms: 19.84 ms to go = 1984 samples = 248 per place
        ("8 2 20 0.16 16", 248),
        // 4 places, base 3: 2.6 ms to go at 0.2 ms = 13 samples = ceil(3.25) = 4 per place
        ("4 3 5 2.4 12", 4),
        // an absurd min_time: capped
        ("8 2 1e+09 1 16", 4096),
    ];
    assert_eq!(
        got,
        want.iter()
            .map(|(c, n)| (c.to_string(), *n))
            .collect::<Vec<_>>()
    );
}
