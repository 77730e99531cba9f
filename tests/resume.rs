//! Kill-and-resume: SIGKILL a real sweep at random moments, resume it, and check that the CSV
//! ends with every point exactly once, with the values of an uninterrupted run.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// `common::project()` with `sweeps/kill.toml`: saw.toml cut to 16 points of 15 ms each.
fn project() -> tempfile::TempDir {
    let tmp = common::project();
    let spec = std::fs::read_to_string(tmp.path().join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 16]")
        .replace("slow_ms = 0", "slow_ms = 15")
        .replace("[analyze]\nx = \"threads\"\n", "");
    std::fs::write(tmp.path().join("sweeps/kill.toml"), spec).unwrap();
    tmp
}

/// `sweep run sweeps/kill.toml -q -j 2` in `dir` (`common::sweep_process()`, no cache from the
/// environment), its output dropped.
fn sweep(dir: &Path) -> Command {
    let mut c = common::sweep_process(dir);
    c.env_remove("SWEEP_CACHE")
        .args(["run", "sweeps/kill.toml", "-q", "-j", "2"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

/// point id -> (status, saw value); a strict reader: a torn or short row fails the parse.
fn results(dir: &Path) -> (usize, BTreeMap<String, (String, String)>) {
    let runs: Vec<_> = std::fs::read_dir(dir.join("output/kill"))
        .unwrap()
        .filter(|e| {
            !e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with('.')
        })
        .collect();
    assert_eq!(runs.len(), 1, "resume reuses the run folder");
    let csv = runs
        .into_iter()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("results.csv");
    let mut r = csv::Reader::from_path(&csv).unwrap();
    let mut n = 0;
    let mut out = BTreeMap::new();
    for rec in r.records() {
        let rec = rec.unwrap_or_else(|e| panic!("{}: unparseable row: {e}", csv.display()));
        n += 1;
        out.insert(rec[0].to_string(), (rec[3].to_string(), rec[4].to_string()));
    }
    (n, out)
}

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[test]
fn sigkill_at_random_moments_loses_and_duplicates_nothing() {
    let reference = project();
    let t0 = std::time::Instant::now();
    assert!(sweep(reference.path()).status().unwrap().success());
    // Kill moments fall inside the time an uninterrupted run takes (builds included).
    let span = (t0.elapsed().as_millis() as u64 * 9 / 10).max(100);
    let (n, want) = results(reference.path());
    assert_eq!(n, 16);
    assert!(want.values().all(|(s, _)| s == "ok"));

    let mut killed_mid_run = 0;
    for seed in 1..=20u64 {
        let p = project();
        let mut state = seed;
        // Up to three kills at random moments, then let it finish (a finished sweep run again
        // would start a new run, so stop killing once it finished on its own).
        let mut finished = false;
        for _ in 0..=(splitmix(&mut state) % 3) {
            let mut child = sweep(p.path()).spawn().unwrap();
            std::thread::sleep(Duration::from_millis(splitmix(&mut state) % span));
            finished = child.try_wait().unwrap().is_some();
            child.kill().unwrap_or(()); // SIGKILL
            child.wait().unwrap();
            if finished {
                break;
            }
            killed_mid_run += 1;
        }
        if !finished {
            assert!(
                sweep(p.path()).status().unwrap().success(),
                "seed {seed}: the resumed run finishes"
            );
        }
        let (rows, got) = results(p.path());
        assert_eq!(rows, 16, "seed {seed}: every point exactly once");
        assert_eq!(
            got, want,
            "seed {seed}: same point set and values as an uninterrupted run"
        );
    }
    assert!(
        killed_mid_run >= 10,
        "most kills landed while the sweep ran ({killed_mid_run})"
    );
}
