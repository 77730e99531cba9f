//! Kill-and-resume: SIGKILL a real sweep at random moments, resume it, and check that the CSV
//! ends with every point exactly once, with the values of an uninterrupted run.

use crate::common;

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
    let names: Vec<String> = runs
        .iter()
        .map(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(runs.len(), 1, "resume reuses the run folder: {names:?}");
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

/// Whether the run of output/kill says `finished` in its manifest.
fn run_finished(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir.join("output/kill")) else {
        return false;
    };
    entries.filter_map(Result::ok).any(|e| {
        std::fs::read_to_string(e.path().join("manifest.json"))
            .ok()
            .and_then(|m| serde_json::from_str::<serde_json::Value>(&m).ok())
            .is_some_and(|m| m["state"] == "finished")
    })
}

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `project()` with `sweeps/kill.toml`'s lines changed by `edit`.
fn project_with(edit: impl Fn(String) -> String) -> tempfile::TempDir {
    let p = project();
    let path = p.path().join("sweeps/kill.toml");
    let spec = edit(std::fs::read_to_string(&path).unwrap());
    std::fs::write(&path, spec).unwrap();
    p
}

/// Kill moments for a project like `reference`: 9/10 of the time an uninterrupted run of it takes
/// (builds included), which it does.
fn kill_span(reference: &Path) -> u64 {
    let t0 = std::time::Instant::now();
    assert!(sweep(reference).status().unwrap().success());
    (t0.elapsed().as_millis() as u64 * 9 / 10).max(100)
}

/// Up to three SIGKILLs at random moments within `span` ms (from `seed`), then a run to the end;
/// how many kills landed while the sweep ran.
fn kill_then_finish(dir: &Path, seed: u64, span: u64) -> u32 {
    let mut state = seed;
    let mut kills = 0;
    for _ in 0..3 {
        let mut child = sweep(dir).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(splitmix(&mut state) % span));
        let exited = child.try_wait().unwrap().is_some();
        child.kill().unwrap_or(());
        child.wait().unwrap();
        // Finished also when killed while writing its report after the run was marked finished.
        if exited || run_finished(dir) {
            return kills;
        }
        kills += 1;
    }
    assert!(sweep(dir).status().unwrap().success(), "seed {seed}");
    kills
}

/// The run folder of output/kill.
fn kill_run(dir: &Path) -> std::path::PathBuf {
    std::fs::read_dir(dir.join("output/kill"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|d| d.join("results.csv").exists())
        .unwrap()
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
            // Finished also when killed after the run was marked finished, while it wrote its
            // report: the run is complete, and running again would start a new one.
            finished |= run_finished(p.path());
            if finished {
                break;
            }
            killed_mid_run += 1;
        }
        if !finished {
            let out = sweep(p.path()).stderr(Stdio::piped()).output().unwrap();
            assert!(
                out.status.success(),
                "seed {seed}: the resumed run finishes: {}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
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

/// The values of one pass CSV (`passes/pass-<p>.csv`): point id -> saw value (the last row of a
/// point wins, as resume reads it).
fn pass_values(run: &Path, pass: u32) -> BTreeMap<String, f64> {
    let mut r = csv::Reader::from_path(run.join(format!("passes/pass-{pass}.csv"))).unwrap();
    let mut out = BTreeMap::new();
    for rec in r.records() {
        let rec = rec.unwrap();
        out.insert(rec[0].to_string(), rec[4].parse().unwrap());
    }
    out
}

#[test]
fn sigkill_inside_a_repeat_pass_resumes_that_pass_and_combines_every_process() {
    // kill.toml with `repeat = 3`, a program whose value grows by 10 % with every run of it.
    let repeat_project = || {
        project_with(|spec| {
            spec.replace("mode = \"ok\"", "mode = \"varies\"")
                .replace("compiler = \"cc\"", "compiler = \"cc\"\nrepeat = 3")
        })
    };
    let span = kill_span(repeat_project().path());
    let mut killed_mid_run = 0;
    for seed in 1..=6u64 {
        let p = repeat_project();
        let kills = kill_then_finish(p.path(), seed, span);
        killed_mid_run += kills;
        let (rows, got) = results(p.path());
        assert_eq!(rows, 16, "seed {seed}: every point exactly once");
        let run = kill_run(p.path());
        let passes: Vec<_> = (0..3).map(|k| pass_values(&run, k)).collect();
        for (id, (status, value)) in &got {
            let mut v: Vec<f64> = passes
                .iter()
                .map(|p| {
                    *p.get(id)
                        .unwrap_or_else(|| panic!("seed {seed}: {id} missing in a pass"))
                })
                .collect();
            v.sort_by(f64::total_cmp);
            let value: f64 = value.parse().unwrap();
            assert!(
                (value - v[1]).abs() <= 1e-6 * value,
                "seed {seed}: {id} is the median of its three processes {v:?}: {value}"
            );
            assert_eq!(
                status, "unstable",
                "seed {seed}: processes at least 10 % apart"
            );
            let runs: u32 = std::fs::read_to_string(run.join("points").join(id).join("runs.count"))
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            assert!(
                (3..=3 + kills).contains(&runs),
                "seed {seed}: {id} ran {runs} times (3, and once more for each kill that caught it running)"
            );
        }
    }
    assert!(
        killed_mid_run >= 6,
        "kills landed while the sweep ran ({killed_mid_run})"
    );
}

#[test]
fn a_quote_that_never_closes_in_the_csv_is_refused_not_run_again() {
    let p = project();
    let out = common::sweep(p.path())
        .args(["run", "sweeps/kill.toml", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::stderr(&out));
    let run = common::run_dirs(&p.path().join("output/kill")).remove(0);
    let mut m = common::manifest(&run);
    m["state"] = "interrupted".into();
    std::fs::write(run.join("manifest.json"), m.to_string()).unwrap();
    // Line 5 opens a quote: a reader takes every line after it as one field, so resume saw 3
    // rows done and ran (and appended) the other 13 again.
    let csv = run.join("results.csv");
    let mut lines: Vec<String> = std::fs::read_to_string(&csv)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    lines[4] = "garbage,\"unterminated".into();
    let text = lines.join("\n") + "\n";
    std::fs::write(&csv, &text).unwrap();
    let out = common::sweep(p.path())
        .args(["resume", run.to_str().unwrap(), "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", common::stderr(&out));
    assert!(
        common::stderr(&out).contains("results.csv` line 5: a quote opened there never closes"),
        "{}",
        common::stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(&csv).unwrap(),
        text,
        "nothing appended or cut"
    );
}

#[test]
fn sigkill_inside_a_recheck_round_resumes_it_and_combines_every_process() {
    // kill.toml in mode `twostate`: at an even thread count the first process reports two groups
    // of samples (value 0.95 v) and is held; every later process gives v.
    let twostate_project =
        || project_with(|spec| spec.replace("mode = \"ok\"", "mode = \"twostate\""));
    let reference = twostate_project();
    let span = kill_span(reference.path());
    let (_, want) = results(reference.path());
    let mut killed_mid_run = 0;
    for seed in 1..=8u64 {
        let p = twostate_project();
        let kills = kill_then_finish(p.path(), seed, span);
        killed_mid_run += kills;
        let (rows, got) = results(p.path());
        assert_eq!(rows, 16, "seed {seed}: every point exactly once");
        // Held or not, every value is v: the median outvotes the two-group process.
        let values = |m: &BTreeMap<String, (String, String)>| -> BTreeMap<String, String> {
            m.iter().map(|(k, (_, v))| (k.clone(), v.clone())).collect()
        };
        assert_eq!(values(&got), values(&want), "seed {seed}");
        let run = kill_run(p.path());
        // point id -> every process kept for it in passes/recheck.csv
        let mut kept: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        let recheck = run.join("passes/recheck.csv");
        if recheck.exists() {
            for rec in csv::Reader::from_path(&recheck).unwrap().records() {
                let rec = rec.unwrap_or_else(|e| panic!("seed {seed}: torn recheck row: {e}"));
                kept.entry(rec[0].to_string())
                    .or_default()
                    .push(rec[4].parse().unwrap());
            }
        }
        for (id, (status, value)) in &got {
            let value: f64 = value.parse().unwrap();
            let runs: u32 = std::fs::read_to_string(run.join("points").join(id).join("runs.count"))
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            match kept.get(id) {
                Some(v) => {
                    // Held: the median of every process kept (three, or one more when a kill
                    // fell between a process's row and the point's).
                    let mut v = v.clone();
                    v.sort_by(f64::total_cmp);
                    assert!((2..=4).contains(&v.len()), "seed {seed}: {id}: {v:?}");
                    let mid = if v.len() % 2 == 1 {
                        v[v.len() / 2]
                    } else {
                        (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2.0
                    };
                    assert!(
                        (value - mid).abs() <= 1e-6 * value,
                        "seed {seed}: {id} is the median of its processes {v:?}: {value}"
                    );
                    // Held at 2 mod 4 (0.95 v, then v): a third process, processes 5 % apart;
                    // at a multiple of 4 (v, then v) the second agrees.
                    if v[0] < 0.96 * v[v.len() - 1] {
                        assert!(v.len() >= 3, "seed {seed}: {id}: {v:?}");
                        assert_eq!(status, "unstable", "seed {seed}: processes 5 % apart");
                    } else {
                        assert_eq!(status, "ok", "seed {seed}: {id}: {v:?}");
                    }
                    assert!(
                        (v.len() as u32..=v.len() as u32 + kills).contains(&runs),
                        "seed {seed}: {id} ran {runs} times for {} kept",
                        v.len()
                    );
                }
                None => {
                    // Never held: one clean process (a killed first run of an even point is
                    // not a process that reported two groups).
                    assert_eq!(status, "ok", "seed {seed}: {id}");
                    assert!(
                        (1..=1 + kills).contains(&runs),
                        "seed {seed}: {id} ran {runs} times"
                    );
                }
            }
        }
        assert!(
            kept.len() >= 16 / 2 - kills as usize,
            "seed {seed}: the even points were held ({} of 8, {kills} kills)",
            kept.len()
        );
    }
    assert!(
        killed_mid_run >= 8,
        "kills landed while the sweep ran ({killed_mid_run})"
    );
}
