//! The committed 2×H200 runs of the whole thread sweep (tests/fixtures/h200x2, measured with
//! bench/gpus.sh): one GPU and `--gpus all --split points`, each cold and warm. The all-GPU runs
//! used both GPUs evenly, and `sweep analyze` reads the same curves from them as from one GPU.

use crate::common::{rows, stderr};
use assert_cmd::Command;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const RUNS: [&str; 4] = ["one_cold", "one_warm", "all_cold", "all_warm"];

fn fixture(run: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/h200x2")
        .join(format!("{run}.csv"))
}

#[test]
fn every_run_completed_the_sweep_and_all_gpu_runs_used_both_gpus_evenly() {
    for run in RUNS {
        let rows = rows(&fixture(run));
        assert_eq!(rows.len(), 512, "{run}");
        assert!(
            rows.iter()
                .all(|r| r["status"] == "ok" || r["status"] == "noisy"),
            "{run}"
        );
        let mut per_gpu: BTreeMap<(String, String), usize> = BTreeMap::new();
        for r in &rows {
            assert_eq!(r["gpu_name"], "NVIDIA H200", "{run}");
            *per_gpu
                .entry((r["gpu_index"].clone(), r["gpu_uuid"].clone()))
                .or_default() += 1;
        }
        let counts: Vec<usize> = per_gpu.values().copied().collect();
        let want: &[usize] = if run.starts_with("all") {
            &[256, 256]
        } else {
            &[512]
        };
        assert_eq!(counts, want, "{run}: rows per GPU {per_gpu:?}");
    }
}

/// series -> (period, knee, best x, smallest x within 1 % of the best) from `sweep analyze`.
fn analysis(run: &str) -> BTreeMap<String, (u32, u32, u32, u32)> {
    let out = tempfile::tempdir().unwrap();
    let o = Command::cargo_bin("sweep")
        .unwrap()
        .arg("analyze")
        .arg(fixture(run))
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{run}: {}", stderr(&o));
    let table = crate::common::squeeze(&String::from_utf8(o.stdout).unwrap());
    let num = |s: &str| -> u32 {
        s.split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap_or_else(|_| panic!("{run}: not a number: {s:?}\n{table}"))
    };
    table
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains("_mflops"))
        .map(|l| {
            let c: Vec<&str> = l.split('|').map(str::trim).collect();
            let best = num(c[7]);
            let within = if c[8].is_empty() { best } else { num(c[8]) };
            (c[1].to_string(), (num(c[2]), num(c[5]), best, within))
        })
        .collect()
}

#[test]
fn two_gpus_give_the_same_curves_as_one() {
    let one = analysis("one_warm");
    assert_eq!(one.len(), 12);
    for run in ["one_cold", "all_cold", "all_warm"] {
        let other = analysis(run);
        assert_eq!(
            other.keys().collect::<BTreeSet<_>>(),
            one.keys().collect::<BTreeSet<_>>()
        );
        for (name, &(p1, k1, b1, w1)) in &one {
            let (p2, k2, b2, w2) = other[name];
            // A full grid steps by warps: the fit names 32 or its harmonic 64 (global_even_grid,
            // where half of the threads idle, sits between the two from run to run).
            let periods: &[u32] = if name.contains("_grid") {
                &[32, 64]
            } else {
                &[128]
            };
            assert!(
                periods.contains(&p1) && periods.contains(&p2),
                "{name}: period {p1} (one_warm) vs {p2} ({run})"
            );
            assert_eq!(k1, k2, "{name}: knee, one_warm vs {run}");
            assert!(
                (w1..=b1.max(w1)).contains(&b2) || (w2..=b2.max(w2)).contains(&b1),
                "{name}: best x {b1} (within 1 % from {w1}) vs {b2} (from {w2}) in {run}"
            );
        }
    }
}
