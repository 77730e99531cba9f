//! Review 9 of issue 38, the run side: what a hostile user found on the tree after the eighth
//! round (a build cache cut by hand, shards of other programs merged, resume messages), each
//! fixed with a test that failed before. Real programs built with `cc`, real runs.

use crate::common::{self, project, rows, run_dirs, stderr, sweep};
use crate::hardening::write;
use std::path::Path;

/// `sweeps/saw4.toml`: saw.toml over threads 1..4, without its analysis.
fn saw4(p: &Path) {
    let spec = std::fs::read_to_string(p.join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 4]")
        .replace("[analyze]\nx = \"threads\"\n", "");
    write(p, "sweeps/saw4.toml", &spec);
}

/// `sweep run sweeps/saw4.toml --force` with `args` added: its exit code, stderr, and the rows
/// of the run it made.
fn run_saw4(p: &Path, args: &[&str]) -> (Option<i32>, String, common::Rows) {
    let out = sweep(p)
        .args(["run", "sweeps/saw4.toml", "-q", "--force", "--no-analyze"])
        .args(args)
        .output()
        .unwrap();
    let run = run_dirs(&p.join("output/saw4")).pop().unwrap();
    (
        out.status.code(),
        stderr(&out),
        rows(&run.join("results.csv")),
    )
}

/// Review 9a, H1: a cache entry whose binary was cut to 0 bytes (a full disk, by hand) was run
/// as it was: every point `no_metric`, blamed on the program, `cached=1`, run after run. One
/// whose binary is a folder stopped every run (exit 4, "has no binary", resume for ever). Both
/// are built again, and the new build replaces them.
#[test]
fn a_cache_entry_cut_by_hand_is_built_again_and_replaced() {
    let p = project();
    saw4(p.path());
    let cache = p.path().join("cache");
    let cache_arg = cache.to_str().unwrap();
    let (code, err, first) = run_saw4(p.path(), &["--cache", cache_arg]);
    assert_eq!(code, Some(0), "{err}");
    assert!(first.iter().all(|r| r["cached"] == "0"));
    let mut entries: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|e| e.join("deps.txt").is_file())
        .collect();
    entries.sort();
    assert_eq!(entries.len(), 4, "one entry a point");
    std::fs::write(entries[0].join("bench"), b"").unwrap();
    std::fs::write(entries[1].join("bench"), b"").unwrap();
    std::fs::remove_file(entries[2].join("bench")).unwrap();
    std::fs::create_dir(entries[2].join("bench")).unwrap();
    let (code, err, again) = run_saw4(p.path(), &["--cache", cache_arg]);
    assert_eq!(code, Some(0), "{err}");
    let saw = |rows: &common::Rows| -> Vec<String> {
        rows.iter().map(|r| r["saw_mflops"].clone()).collect()
    };
    assert_eq!(saw(&again), saw(&first));
    assert_eq!(
        again.iter().filter(|r| r["cached"] == "0").count(),
        3,
        "the three broken entries built again"
    );
    let (code, err, third) = run_saw4(p.path(), &["--cache", cache_arg]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        third.iter().all(|r| r["cached"] == "1"),
        "the new builds replaced the broken entries"
    );
    assert_eq!(saw(&third), saw(&first));
}
