//! The committed H100 results (tests/fixtures/h100, measured with scripts/device-all.sh) meet the
//! targets the issues set, and `sweep analyze` reads them: a period, knee and best thread count
//! for every series of the thread sweep.

use crate::common::{manifest, rows, stderr};
use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn fixture(sweep: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/h100")
        .join(sweep)
        .join("results.csv")
}

/// `sweep analyze` of a fixture (with `args`) into a temporary folder: what it printed, and the
/// folder (analysis.json is there).
fn analyze(sweep: &str, args: &[&str]) -> (String, tempfile::TempDir) {
    analyze_csv(&fixture(sweep), args)
}

fn analyze_csv(csv: &Path, args: &[&str]) -> (String, tempfile::TempDir) {
    let out = tempfile::tempdir().unwrap();
    let o = Command::cargo_bin("sweep")
        .unwrap()
        .arg("analyze")
        .arg(csv)
        .args(args)
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let md = String::from_utf8(o.stdout).unwrap();
    (crate::common::with_readings(&md), out)
}

/// The main period of a `period (+nested)` cell: `32` of `32 +64 (medium)`.
fn main_period(cell: &str) -> &str {
    cell.split(' ').next().unwrap_or(cell)
}

/// The rows of `sweep analyze`'s series table for tests/fixtures/analysis/`file` whose line holds
/// `holds`, each as the line and its cells; `want` of them, else the whole table in the panic.
fn analysed_rows(file: &str, holds: &str, want: usize) -> Vec<(String, Vec<String>)> {
    let csv = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/analysis")
        .join(file);
    let (text, _out) = analyze_csv(&csv, &[]);
    let rows: Vec<(String, Vec<String>)> = text
        .lines()
        .filter(|l| l.contains(holds))
        .map(|l| {
            (
                l.to_string(),
                l.split('|').map(|c| c.trim().to_string()).collect(),
            )
        })
        .collect();
    assert_eq!(rows.len(), want, "{text}");
    rows
}

#[test]
fn the_thread_sweep_completed_every_point() {
    let rows = rows(&fixture("threads_1_512"));
    assert_eq!(rows.len(), 512);
    // Every thread count once. Rows come in the order the points finished: a point measured again
    // in more processes (recheck, its samples in two groups) gets its row after the others.
    let mut threads: Vec<i64> = rows.iter().map(|r| r["threads"].parse().unwrap()).collect();
    threads.sort_unstable();
    assert_eq!(threads, (1..=512).collect::<Vec<_>>());
    assert!(rows
        .iter()
        .all(|r| ["ok", "noisy", "unstable"].contains(&r["status"].as_str())));
    // Measured at 8 buffer placements per point (issue 10): every metric says so.
    assert!(rows.iter().all(|r| r["global_all_grid_placements"] == "8"));
    assert!(rows
        .iter()
        .all(|r| r["gpu_name"] == "NVIDIA H100 80GB HBM3"));
}

/// The global grid stores of the thread sweep's H100 run of 2026-11-25 16:57 UTC (the fixture
/// before the value's CI was the median's; tests/fixtures/analysis/grid_stores_unsettled.csv, those
/// two series' columns in thread order) drop after every warp and more after every other one.
/// The search settled on 64 there, with 32 nested, and the steps every other warp cost 4.7-4.9 %
/// more, less than the placements spread (median 5.8-6.0 %): the analysis called the order
/// unsettled. Period 32 steps at every edge, so it is the period and 64 the nested one
/// (issue 34: as in five later runs of the same sweep and in the committed ones), and the order
/// is not in question.
#[test]
fn grid_stores_of_an_earlier_run_read_one_warp_with_two_nested() {
    let rows = analysed_rows("grid_stores_unsettled.csv", "_grid_mflops |", 2);
    for (line, cells) in &rows {
        assert_eq!(main_period(&cells[2]), "32", "{line}");
        assert!(
            line.contains(
                "and period 64 (steps every 64 threads = 2 warps), peaks at threads ≡ 0 \
                 (mod 64), high confidence, threads +1 past its peaks costs"
            ),
            "{line}"
        );
        assert!(!line.contains("is the main one is not settled"), "{line}");
    }
}

/// The pitch experiment's dense layout (tests/fixtures/h100/threads_pitch, a grid of 8 threads):
/// its `global_all_grid` steps every 32 threads with 16 nested, whose steps cost 3.8 %, less than
/// its placements spread (4.9 %), and more than a quarter of the main drop: which of the two is
/// the main one is not settled, and the reading says so.
#[test]
fn the_analysis_says_when_a_nested_period_may_be_the_main_one() {
    let (table, _out) = analyze("threads_pitch", &[]);
    let line = table
        .lines()
        .find(|l| l.starts_with("| global_all_grid_mflops [layout=dense] |"))
        .unwrap_or_else(|| panic!("{table}"));
    let cells: Vec<&str> = line.split('|').map(str::trim).collect();
    assert_eq!(main_period(cells[2]), "32", "{line}");
    assert!(cells[4].starts_with("medium"), "{line}");
    assert!(
        line.contains(
            "which of periods 32 and 16 is the main one is not settled (both confidences one \
             level lower): the nested steps cost 3.8 %, less than a point moves with where its \
             buffers lie or between processes (4.9 %)"
        ),
        "{line}"
    );
}

/// Steps of two sizes: the global grid stores of the shuffled thread sweep of session 12
/// (tests/fixtures/analysis/grid_stores_shuffled.csv, in thread order; bench/truth.txt), whose
/// values agree with two full sweeps of the same hour within 1.43 %. The search picks 32 for
/// global_all_grid, whose staircase of one size of drop then finds the smaller drops between
/// the large ones missing; the curve read "no periodic structure" until the double period was
/// tried (src/analyze/curve/mod.rs, `doubled`), and 64 with 32 nested at medium confidence
/// until the edges were read against two sizes of drop (`nests`): 32 drops at every edge, more
/// at 64's, and is the period (issue 34), as in global_even_grid, whose search found 64.
#[test]
fn steps_of_two_sizes_read_as_the_period_with_its_double_nested() {
    let rows = analysed_rows("grid_stores_shuffled.csv", "_grid_mflops |", 2);
    for (line, cells) in &rows {
        assert_eq!(main_period(&cells[2]), "32", "{line}");
        assert!(cells[4].starts_with("high"), "{line}");
        assert!(
            line.contains(
                "and period 64 (steps every 64 threads = 2 warps), peaks at threads ≡ 0 \
                 (mod 64), high confidence, threads +1 past its peaks costs"
            ),
            "{line}"
        );
        assert!(
            !line.contains("come in two sizes, told apart by a rank test"),
            "{line}"
        );
    }
}

/// The other side of the double period: staircases of period 32 (threads 1..1024, 1 % and 0.5 %
/// noise) whose drops are absent at 4-5 random edges, built by a hostile review of the first cut
/// of `doubled` (bench/misread_data/absent_drops.py), which read all three as 64 at high
/// confidence. Their drops have one size, so 64 must not stand: they read 32, or no period.
#[test]
fn a_staircase_with_drops_absent_at_random_is_not_read_as_its_double() {
    for (line, cells) in analysed_rows("absent_drops.csv", "_mflops |", 3) {
        assert!(["32", "none"].contains(&main_period(&cells[2])), "{line}");
    }
}

#[test]
fn analyze_finds_period_knee_and_best_x_in_every_series_of_the_thread_sweep() {
    let (table, out) = analyze("threads_1_512", &[]);
    // The series table, not the one on the spread between processes under it.
    let main = table.split("\nBetween processes").next().unwrap();
    assert!(
        table.contains("\nBetween processes (16 points measured again"),
        "{table}"
    );
    let series: Vec<&str> = main
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains("_mflops"))
        .collect();
    assert_eq!(series.len(), 12, "{table}");
    let csv = rows(&fixture("threads_1_512"));
    for line in series {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (name, period, knee, best) = (cells[1], main_period(cells[2]), cells[5], cells[7]);
        let period: u32 = period
            .parse()
            .unwrap_or_else(|_| panic!("{name}: no period: {line}"));
        assert!(knee.parse::<u32>().is_ok(), "{name}: no knee: {line}");
        let number = |s: &str| -> f64 {
            s.trim_matches(|c| c == '(' || c == ')')
                .parse()
                .unwrap_or_else(|_| panic!("{name}: {line}"))
        };
        let best: Vec<&str> = best.split(' ').collect();
        let (best_x, best_value) = (number(best[0]), number(best[1]));
        // On the H100 a full grid steps by warps (32) and one block by four warps (128). Global
        // stores on a full grid drop more after every second warp (55 %, 26 %, 15 % after 64,
        // 128, 192 threads against 19 %, 8 %, 6 % after 96, 160, 224), but after every warp:
        // 32 is the period, 64 the nested one (issue 34; the fit named 64 before).
        let want: u32 = if name.contains("_grid") { 32 } else { 128 };
        assert_eq!(period, want, "{line}");
        // Those two series' steps every other warp cost 5-7 % more, above their placements'
        // median spread (3.5-3.8 %) and the scatter between processes: the analysis does not
        // call the order unsettled (issue 12).
        let unsettled = line.contains("is the main one is not settled");
        assert!(!unsettled, "{line}");
        // The best thread count is a multiple of a warp, within the noise: the value at the
        // multiple of 32 nearest to the best x is within 1 % of the best.
        let nearest = ((best_x / 32.0).round() * 32.0).clamp(32.0, 512.0) as i64;
        let at: f64 = csv
            .iter()
            .find(|r| r["threads"] == nearest.to_string())
            .unwrap()[name]
            .parse()
            .unwrap();
        assert!(
            at >= 0.99 * best_value,
            "{name}: {at} at {nearest} threads, best {best_value} at {best_x}: {line}"
        );
    }
    for f in ["analysis.json", "analysis.csv"] {
        assert!(out.path().join(f).is_file());
    }
}

/// The target a fixture was measured with: `target_rel_ci` of the spec copy in its manifest.
fn target(sweep: &str) -> f64 {
    let m = manifest(fixture(sweep).parent().unwrap());
    let spec = m["spec"].as_str().unwrap();
    spec.lines()
        .find_map(|l| l.strip_prefix("target_rel_ci = "))
        .map(|v| v.split('#').next().unwrap().trim().parse().unwrap())
        .unwrap_or(0.01)
}

#[test]
fn bandwidth_points_meet_their_confidence_target_unless_marked_noisy() {
    let sweeps = [
        "copy_offset",
        "copy_stride",
        "copy_all",
        "transpose_sizes",
        "bank_stride",
        "l1_cache",
        "aos_soa",
        "pitch",
        "reduction",
    ];
    for sweep in sweeps {
        let rows = rows(&fixture(sweep));
        let target = target(sweep);
        // Every sweep ran with the 1 %.
        assert_eq!(target, 0.01, "{sweep}");
        assert!(!rows.is_empty());
        for r in rows.iter().filter(|r| r["status"] == "ok") {
            for (col, v) in r.iter().filter(|(c, _)| c.ends_with("_rel_ci")) {
                if !r.contains_key(&col.replace("_rel_ci", "_gb_per_s")) {
                    continue;
                }
                let ci: f64 = v.parse().unwrap();
                assert!(ci <= target, "{sweep} point {} {col} = {ci}", r["point_id"]);
            }
        }
    }
}

#[test]
fn the_coalesced_copy_reaches_90_percent_of_memcpy_measured_in_the_same_run() {
    let rows = rows(&fixture("copy_offset"));
    let first = rows.iter().find(|r| r["offset"] == "0").unwrap();
    let fraction: f64 = first["copy_vs_memcpy_fraction"].parse().unwrap();
    assert!(
        fraction >= 0.9,
        "coalesced copy at {fraction} of cudaMemcpy D2D"
    );
}

/// Issue 11: with every store issued, the H100 shows the bank-conflict periods the 2010 paper saw
/// on a GeForce 8600 GT, one per conflict degree: a 2-way conflict (stride 2) costs per
/// half-warp (period 16), 4-way per quarter-warp (8), 8-way per 4 lanes; conflict-free stores and
/// the adjacent-lane 2-way layout (every warp of 2 or more lanes pays) go by whole warps (32).
#[test]
fn the_halfwarp_sweep_reads_one_period_per_conflict_degree() {
    let (_, out) = analyze("halfwarp", &["--x", "threads"]);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("analysis.json")).unwrap())
            .unwrap();
    let series = json["series"].as_array().unwrap();
    let period = |metric: &str| {
        let s = series
            .iter()
            .find(|s| s["metric"] == metric)
            .unwrap_or_else(|| panic!("no series {metric}"));
        (
            s["period"]["period"].as_f64(),
            s["period"]["level"].as_str().unwrap_or("-").to_string(),
        )
    };
    for (metric, want) in [
        ("shared_stride1", 32.0),
        ("shared_stride2", 16.0),
        ("shared_stride4", 8.0),
        ("shared_stride8", 4.0),
        ("shared_adjacent2", 32.0),
    ] {
        assert_eq!(period(metric), (Some(want), "high".to_string()), "{metric}");
    }
}

/// The `[profile]` runs (issue 16, bench/profile_h100.txt): every point has its counters and power,
/// no profile error, and the analysis names the counter behind each period of the half-warp sweep.
#[test]
fn the_counters_runs_have_counters_and_power_and_the_analysis_names_wavefronts() {
    for (sweep, counter) in [
        (
            "halfwarp_counters",
            "shared_stride2__shared_wavefronts_per_request",
        ),
        ("copy_stride_counters", "copy__global_sectors_per_request"),
    ] {
        let rows = rows(&fixture(sweep));
        assert!(rows.len() >= 37, "{sweep}");
        for r in &rows {
            assert_eq!(r["error"], "", "{sweep}: {r:?}");
            assert!(
                r[counter].parse::<f64>().unwrap() >= 1.0,
                "{sweep}: {counter}"
            );
            assert!(r["power_w"].parse::<f64>().unwrap() > 50.0, "{sweep}");
            assert!(r["power_samples"].parse::<f64>().unwrap() >= 3.0, "{sweep}");
        }
    }
    let (table, _) = analyze("halfwarp_counters", &[]);
    for (series, first) in [
        (
            "shared_stride2_mflops",
            "(5 of 5 drops; 1 -> 2 at threads = 17)",
        ),
        (
            "shared_stride4_mflops",
            "(11 of 11 drops; 1 -> 2 at threads = 9)",
        ),
        (
            "shared_stride8_mflops",
            "(23 of 23 drops; 1 -> 2 at threads = 5)",
        ),
    ] {
        let line = table
            .lines()
            .find(|l| l.starts_with(&format!("| {series} |")))
            .unwrap();
        assert!(
            line.contains(&format!(
                "ncu: `shared_wavefronts_per_request` steps with it {first}"
            )),
            "{line}"
        );
    }
    // No period, no counter named.
    let line = table
        .lines()
        .find(|l| l.starts_with("| shared_stride1_mflops |"))
        .unwrap();
    assert!(!line.contains("ncu:"), "{line}");
    // Issue 34: the global stores have their own traffic's counters (the `memory` preset), and
    // the float4 stores' nested steps every 2 threads follow their sectors per request (16-byte
    // lanes: one more 32-byte sector every 2 lanes; ceil(t / 2) for a warp of t lanes).
    let rows = rows(&fixture("halfwarp_counters"));
    for r in &rows {
        let t: f64 = r["threads"].parse().unwrap();
        let lanes = if t > 32.0 { t - 32.0 } else { t };
        let per: f64 = r["global_vec4__global_sectors_per_request"]
            .parse()
            .unwrap();
        // a full warp takes 16 sectors; with two warps, the mean of the full and the partial one
        let want = if t > 32.0 {
            (16.0 + (lanes / 2.0).ceil()) / 2.0
        } else {
            (lanes / 2.0).ceil()
        };
        if t <= 64.0 {
            assert!((per - want).abs() < 0.01, "threads {t}: {per} vs {want}");
        }
    }
    let line = table
        .lines()
        .find(|l| l.starts_with("| global_vec4_mflops |"))
        .unwrap();
    assert!(
        line.contains("period 2 (each global request touches more 32-byte sectors, as ncu counts)")
            && line.contains("ncu: `global_sectors_per_request` steps with the nested period"),
        "{line}"
    );
}

/// A run folder stands for its results.csv: `sweep analyze RUN` reads what `sweep analyze
/// RUN/results.csv` reads.
#[test]
fn analyze_takes_a_run_folder_for_its_results_csv() {
    let dir = fixture("copy_stride");
    let out = tempfile::tempdir().unwrap();
    let by_folder = Command::cargo_bin("sweep")
        .unwrap()
        .arg("analyze")
        .arg(dir.parent().unwrap())
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    assert!(by_folder.status.success(), "{}", stderr(&by_folder));
    let (by_file, _) = analyze("copy_stride", &[]);
    let by_folder = crate::common::with_readings(&String::from_utf8(by_folder.stdout).unwrap());
    assert_eq!(by_folder, by_file);
}

/// Issue 33: 345 of the thread sweep's 512 rows are `unstable`, nearly all for the global-store
/// metrics' placement spread. A run of that version has no `<metric>_status` columns, so each
/// metric's status is read from the row's and its own spread (`store::metric_status`): the
/// shared-memory series mark only their own few points, in the analysis and in the charts.
#[test]
fn the_thread_sweep_marks_a_point_unstable_only_where_its_own_metric_is() {
    let rows = rows(&fixture("threads_1_512"));
    let unstable_rows = rows.iter().filter(|r| r["status"] == "unstable").count();
    assert_eq!(unstable_rows, 345);
    let (_, out) = analyze("threads_1_512", &[]);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("analysis.json")).unwrap())
            .unwrap();
    let marked: Vec<(String, u64, u64)> = v["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["metric"].as_str().unwrap().to_string(),
                s["marked"]["unstable"].as_u64().unwrap(),
                s["marked"]["noisy"].as_u64().unwrap(),
            )
        })
        .collect();
    let want = [
        ("shared_nc_1blk", 84),
        ("shared_nc_grid", 4),
        ("shared_2way_1blk", 1),
        ("shared_2way_grid", 0),
        ("shared_3way_1blk", 0),
        ("shared_3way_grid", 1),
        ("global_all_1blk", 240),
        ("global_all_grid", 337),
        ("global_even_1blk", 215),
        ("global_even_grid", 344),
        ("global_half_1blk", 170),
        ("global_half_grid", 271),
    ];
    let got: Vec<(&str, u64)> = marked.iter().map(|(m, u, _)| (m.as_str(), *u)).collect();
    assert_eq!(got, want.map(|(m, n)| (m, n as u64)));
    assert!(
        marked.iter().all(|m| m.2 == 0),
        "no noisy point: {marked:?}"
    );
    // The charts mark the same points: each series' own.
    let analysis =
        sweep::analyze::analyze_csv(&fixture("threads_1_512"), &Default::default()).unwrap();
    let info = sweep::report::point_info(&analysis);
    for (s, info) in analysis.series.iter().zip(&info) {
        let n = info.iter().filter(|p| p.status == "unstable").count();
        assert_eq!(n, s.marked.unstable, "{}", s.name);
        assert_eq!(info.len(), 512, "{}: one per x", s.name);
        assert!(info.windows(2).all(|w| w[0].x < w[1].x), "{}", s.name);
    }
    // analysis.md counts them per series in the terminal's words, and says what the cause
    // means and how results.csv writes it.
    let md = std::fs::read_to_string(out.path().join("analysis.md")).unwrap();
    assert!(
        md.contains("\n- vary with buffer placement: `shared_nc_1blk_mflops` 84 of 512, `shared_nc_grid_mflops` 4 of 512, ")
            && md.contains(" (placement: its buffer placements differ beyond the 0.7 % target and the noise; the value is their median; results.csv: `unstable`)\n"),
        "{md}"
    );
    assert!(
        !md.contains(" unstable;") && !md.contains("\n- noisy"),
        "{md}"
    );
}

/// The mechanism clauses of a reading: the words in parentheses after each `period N (`.
fn why_texts(reading: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = reading;
    while let Some(i) = rest.find("period ") {
        let after = &rest[i + "period ".len()..];
        let digits = after
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(after.len());
        if digits == 0 || !after[digits..].starts_with(" (") {
            rest = after;
            continue;
        }
        let body = &after[digits + 2..];
        let mut depth = 1;
        let end = body
            .char_indices()
            .find(|&(_, c)| {
                depth += match c {
                    '(' => 1,
                    ')' => -1,
                    _ => 0,
                };
                depth == 0
            })
            .map_or(body.len(), |(j, _)| j);
        out.push(format!("{}: {}", &after[..digits], &body[..end]));
        rest = &body[end..];
    }
    out
}

/// Every series of `csv` analysed: `series: period: why` for each period a reading names, and the
/// reading's clause on a declared model that did not explain it.
fn why_lines(csv: &Path) -> String {
    let (_, out) = analyze_csv(csv, &[]);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("analysis.json")).unwrap())
            .unwrap();
    let mut lines = String::new();
    for s in json["series"].as_array().unwrap() {
        let reading = s["reading"].as_str().unwrap();
        for why in why_texts(reading) {
            lines += &format!("{}: {why}\n", s["name"].as_str().unwrap());
        }
        if let Some(i) = reading.find("; the declared model") {
            let clause = reading[i + 2..].split(';').next().unwrap();
            lines += &format!("{}: {clause}\n", s["name"].as_str().unwrap());
        }
        // The shape of a curve without a period (it falls, or lies within the noise) and the
        // counter that rises as it falls.
        for clause in reading.split("; ").filter(|c| {
            ["falls from ", "lowest at ", "flat within ", "ncu: `"]
                .iter()
                .any(|w| c.starts_with(w))
                && !c.contains(" steps ")
        }) {
            lines += &format!("{}: {clause}\n", s["name"].as_str().unwrap());
        }
    }
    lines
}

/// Issue 34: every mechanism a reading of a committed H100 run names, word for word. Without
/// counters or a declared model (the manifests of these runs predate the `model` key) the words
/// state only what the axis shows ("steps every 64 threads = 2 warps"; bank_stride's levels, one
/// by one, at period 32); with ncu's counters they follow the counter (halfwarp_counters:
/// wavefronts per shared request; copy_stride_counters: sectors per request rise as the copy
/// falls). A curve without a period says how it falls, or that it lies within the noise.
#[test]
fn the_mechanism_of_every_committed_h100_reading_is_pinned() {
    let mut all = String::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h100");
    let mut sweeps: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("results.csv").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|s| s != "l1_cache") // no numeric axis
        .collect();
    sweeps.sort();
    assert!(sweeps.len() >= 14, "{sweeps:?}");
    for sweep in sweeps {
        all += &format!("## {sweep}\n{}", why_lines(&fixture(&sweep)));
    }
    for banned in [
        "compute 1.x",
        "16 banks",
        "first half of the threads",
        "groups of",
        "repeats every 16 along stride",
    ] {
        assert!(!all.contains(banned), "{banned}:\n{all}");
    }
    insta::assert_snapshot!(all);
}

/// The same runs with the models their specs in sweeps/ now declare (`model = ...` put into a
/// copy of each manifest): a model is named, with its fit, only where it steps with the drops and
/// fits; where it does not (the global grid stores step every 64 threads, a warp model every 32;
/// Hopper's float2/float4 shared stores go by whole warps), the reading says so.
#[test]
fn declared_models_are_fitted_to_the_h100_runs_and_named_only_where_they_fit() {
    let specs = Path::new(env!("CARGO_MANIFEST_DIR")).join("sweeps");
    let mut all = String::new();
    for sweep in ["threads_1_512", "halfwarp", "bank_stride", "copy_offset"] {
        let tmp = tempfile::tempdir().unwrap();
        let src = fixture(sweep);
        for f in ["results.csv", "manifest.json", "controls.csv"] {
            std::fs::copy(src.parent().unwrap().join(f), tmp.path().join(f)).unwrap();
        }
        // The models of the spec as it is now, by metric name.
        let spec: toml::Value =
            toml::from_str(&std::fs::read_to_string(specs.join(format!("{sweep}.toml"))).unwrap())
                .unwrap();
        let path = tmp.path().join("manifest.json");
        let mut m: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for metric in m["metrics"].as_array_mut().unwrap() {
            let declared = spec["metric"]
                .as_array()
                .unwrap()
                .iter()
                .find(|d| d["name"].as_str() == metric["name"].as_str());
            for key in ["model", "better"] {
                if let Some(v) = declared.and_then(|d| d.get(key)).and_then(|v| v.as_str()) {
                    metric[key] = v.into();
                }
            }
        }
        std::fs::write(&path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
        all += &format!("## {sweep}\n{}", why_lines(&tmp.path().join("results.csv")));
    }
    insta::assert_snapshot!(all);
}

/// Issue 33 on a real run with per-metric statuses (the timing core's own flags, written as
/// `<metric>_status`): the thread sweep of 2026-11-26, shuffled, with held points. The row is
/// unstable at 358 points, nearly all for the global stores; the shared-memory grid series have no
/// unstable point of their own, and their charts mark none. Its family charts join their points in
/// x order although the rows are shuffled.
#[test]
fn a_shuffled_run_with_per_metric_statuses_marks_each_series_by_its_own() {
    let csv = fixture("threads_shuffled");
    let rows = rows(&csv);
    assert_eq!(
        rows.iter().filter(|r| r["status"] == "unstable").count(),
        358
    );
    let threads: Vec<u32> = rows.iter().map(|r| r["threads"].parse().unwrap()).collect();
    assert!(
        threads.windows(2).any(|w| w[0] > w[1]),
        "the rows are in shuffled order"
    );
    let analysis = sweep::analyze::analyze_csv(&csv, &Default::default()).unwrap();
    let info = sweep::report::point_info(&analysis);
    let unstable: Vec<(&str, usize)> = analysis
        .series
        .iter()
        .zip(&info)
        .map(|(s, i)| {
            let n = i.iter().filter(|p| p.status == "unstable").count();
            assert_eq!(n, s.marked.unstable, "{}", s.name);
            (s.metric.as_str(), n)
        })
        .collect();
    assert_eq!(
        unstable,
        [
            ("shared_nc_1blk", 30),
            ("shared_nc_grid", 0),
            ("shared_2way_1blk", 4),
            ("shared_2way_grid", 0),
            ("shared_3way_1blk", 0),
            ("shared_3way_grid", 0),
            ("global_all_1blk", 183),
            ("global_all_grid", 264),
            ("global_even_1blk", 161),
            ("global_even_grid", 265),
            ("global_half_1blk", 64),
            ("global_half_grid", 221),
        ]
    );
    // Each series' own status column says the same as what the charts mark.
    for (s, i) in analysis.series.iter().zip(&info) {
        let col = format!("{}_status", s.metric);
        let from_csv = rows
            .iter()
            .filter(|r| r[col.as_str()] == "unstable")
            .count();
        assert_eq!(
            from_csv,
            i.iter().filter(|p| p.status == "unstable").count(),
            "{col}"
        );
    }
}

/// A copy of the thread sweep (its manifest and control re-runs beside it) whose every metric
/// value is moved within its uncertainty u, as the analysis reads it (`stable::points_with_u`:
/// the larger of the point's `rel_ci`, its metric's spread between processes and 0.5 %), by
/// u · r with r drawn uniformly from [-1, 1] (seeded).
fn thread_sweep_moved_within_u(seed: u64, between: &[(String, f64)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = fixture("threads_1_512");
    for f in ["manifest.json", "controls.csv"] {
        std::fs::copy(src.parent().unwrap().join(f), dir.path().join(f)).unwrap();
    }
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut uniform = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let mut r = csv::Reader::from_path(&src).unwrap();
    let header = r.headers().unwrap().clone();
    let mut w = csv::Writer::from_path(dir.path().join("results.csv")).unwrap();
    w.write_record(&header).unwrap();
    for rec in r.records() {
        let rec = rec.unwrap();
        let cells: Vec<String> = header
            .iter()
            .zip(rec.iter())
            .map(|(col, cell)| {
                let Some((metric, u95)) =
                    between.iter().find(|(m, _)| format!("{m}_mflops") == col)
                else {
                    return cell.to_string();
                };
                let ci = header
                    .iter()
                    .position(|h| h == format!("{metric}_rel_ci"))
                    .and_then(|i| rec[i].parse::<f64>().ok())
                    .unwrap_or(0.0);
                let u = ci.max(*u95).max(0.005);
                let v: f64 = cell.parse().unwrap();
                format!("{}", v * (1.0 + u * uniform()))
            })
            .collect();
        w.write_record(&cells).unwrap();
    }
    w.flush().unwrap();
    dir
}

/// Issue: a second cold run read `global_even_grid`'s knee at 40 where the fixture read 45, both
/// inside the step 33..64 whose cost is flat: the knee moved with placement noise. Now each knee
/// comes with the range it can take when the values move within their u, and the fixture with
/// its values so moved (five seeds) reads every knee inside it: no more than the claimed interval.
/// `global_even_grid`'s is 32 (its cost is flat up to 32 and 79 % higher at 33), a range of none.
#[test]
fn the_knees_of_the_thread_sweep_stay_in_their_range_when_values_move_within_u() {
    let analysis =
        sweep::analyze::analyze_csv(&fixture("threads_1_512"), &Default::default()).unwrap();
    let between: Vec<(String, f64)> = analysis
        .between_processes
        .as_ref()
        .unwrap()
        .iter()
        .map(|b| (b.column.trim_end_matches("_mflops").to_string(), b.u95))
        .collect();
    let even = analysis
        .series
        .iter()
        .find(|s| s.name == "global_even_grid_mflops")
        .unwrap();
    assert_eq!(even.curve.knee, Some(32.0), "{}", even.reading);
    let range = even.curve.knee_range.unwrap();
    assert_eq!((range.lo, range.hi, range.sharp), (32.0, 32.0, true));
    for seed in 1..=5 {
        let moved = thread_sweep_moved_within_u(seed, &between);
        let again =
            sweep::analyze::analyze_csv(&moved.path().join("results.csv"), &Default::default())
                .unwrap();
        for (s, t) in analysis.series.iter().zip(&again.series) {
            let Some(r) = s.curve.knee_range else {
                assert_eq!(t.curve.knee, s.curve.knee, "seed {seed}: {}", s.name);
                continue;
            };
            // Sharp or not, where the flat part ends lies in the range claimed.
            let end = t.curve.knee.or(t.curve.knee_range.map(|r| r.hi));
            assert!(
                end.is_some_and(|k| k >= r.lo && k <= r.hi),
                "seed {seed}: {} knee {:?} ({:?}) outside {r:?}: {}",
                s.name,
                t.curve.knee,
                t.curve.knee_range,
                t.reading
            );
            // A grid step or two at most where the knee is said to be sharp.
            if r.sharp {
                assert!(r.hi - r.lo <= 2.0, "{}: {r:?}", s.name);
            }
        }
    }
}

/// `global_half_grid`'s best was 383, one thread before a peak of its period-32 staircase, and
/// "within 1 %" of a dozen others. The best is now the best of the staircase's peaks among the
/// points tied with the maximum within u: 384; and the reading names the peaks tied with it.
#[test]
fn the_best_of_the_thread_sweep_sits_on_a_peak_and_says_its_ties() {
    let analysis =
        sweep::analyze::analyze_csv(&fixture("threads_1_512"), &Default::default()).unwrap();
    for s in &analysis.series {
        let b = s.curve.best.as_ref().unwrap();
        assert_eq!(b.x % 32.0, 0.0, "{}: best {} off the peaks", s.name, b.x);
        let p = s.curve.period.as_ref().unwrap();
        for t in &b.tied {
            assert_eq!((t - p.phase) % p.period, 0.0, "{}: tied {t}", s.name);
        }
        if !b.tied.is_empty() {
            assert!(s.reading.contains("; tied within u with "), "{}", s.reading);
        }
    }
    let half = analysis
        .series
        .iter()
        .find(|s| s.name == "global_half_grid_mflops")
        .unwrap();
    assert_eq!(
        half.curve.best.as_ref().unwrap().x,
        384.0,
        "{}",
        half.reading
    );
    let two_way = analysis
        .series
        .iter()
        .find(|s| s.name == "shared_2way_grid_mflops")
        .unwrap();
    assert!(
        two_way
            .reading
            .contains("best at threads = 512 (16.65 TFLOP/s; tied within u with 256, 288, 320, 352, 384, 416 and 2 more)"),
        "{}",
        two_way.reading
    );
}

/// One fact, one number: the reading's "where the buffers lie moves N of 512 points" and the marks
/// under the table ("vary with buffer placement: `m` N of 512") count the same points (94 and 84
/// of 512 on `shared_nc_1blk` before: a 1 % threshold in one, the run's target and the noise in
/// the other).
#[test]
fn the_reading_and_the_marks_count_the_same_points_that_vary_with_placement() {
    let analysis =
        sweep::analyze::analyze_csv(&fixture("threads_1_512"), &Default::default()).unwrap();
    let md = analysis.to_markdown();
    let mut checked = 0;
    for s in &analysis.series {
        let marked = s.marked.placement();
        let said = s
            .reading
            .split("where the buffers lie moves ")
            .nth(1)
            .and_then(|t| t.split(' ').next())
            .map(|n| n.parse::<usize>().unwrap());
        assert_eq!(said, (marked > 0).then_some(marked), "{}", s.reading);
        if marked > 0 {
            assert!(
                md.contains(&format!("`{}` {marked} of 512", s.name)),
                "{}: {md}",
                s.name
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 10);
}

/// Two cold runs of the whole thread sweep on an H100, two days apart (the fixture, and
/// `threads_1_512_rerun` of 2026-11-27, 6144 of 6144 values the same within u): what the analysis
/// says of each series, its period, nested period, knee and best x, is the same in both. Before
/// the knee and best were read within the uncertainty, two knees (global_even_grid 45 / 64,
/// global_all_grid 32 / 61) and one best (global_half_grid 383 / 384) differed.
#[test]
fn two_cold_runs_of_the_thread_sweep_read_alike() {
    let read = |run: &str| {
        let a = sweep::analyze::analyze_csv(&fixture(run), &Default::default()).unwrap();
        a.series
            .iter()
            .map(|s| {
                let c = &s.curve;
                (
                    s.name.clone(),
                    c.period.as_ref().map(|p| (p.period, p.phase)),
                    c.secondary.as_ref().map(|n| n.period),
                    c.knee,
                    c.best.as_ref().map(|b| b.x),
                )
            })
            .collect::<Vec<_>>()
    };
    let (a, b) = (read("threads_1_512"), read("threads_1_512_rerun"));
    assert_eq!(a.len(), 12);
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x, y, "the two runs read {} differently", x.0);
    }
}
