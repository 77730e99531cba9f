//! The host-side result check of every bench in cuda/ (cuda/<bench>/check.h), run on the CPU.
//! Each bench has a driver, tests/bench_checks/<bench>.cpp (its protocol: driver.h there), built
//! with the host C++ compiler against a params.h that `sweep render` writes for real points of the
//! bench's sweeps. The driver hands the check a right output, which must pass, and corrupted ones,
//! which must fail as a wrong answer fails on the GPU: exit 3 and `@sweep check=failed what="..."`
//! naming the element that is wrong. No GPU and no nvcc; skipped (saying so) only without `c++`.

use crate::common;

use crate::common::{stderr, stdout};
use assert_cmd::Command;
use regex::Regex;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

/// Where a case's params.h comes from.
enum Params {
    /// `sweep render SPEC --point N` for each point index (as `sweep plan` numbers them).
    Points(&'static str, &'static [usize]),
    /// A header written by hand, for sizes that no sweep has.
    Literal(&'static str),
}

/// One bench checked at some parameters: `ok` and every corrupt mode of its driver, each with the
/// pattern that the check's `what` must match.
struct Case {
    bench: &'static str,
    params: Params,
    wrong: &'static [(&'static str, &'static str)],
}

const RECORD: &str = r"^record \d+ sums to \d+, host gives \d+$";
const LANE: &str = r"^thread \d+ \(lane \d+\) sums \d+, host gives \d+$";
const COPY: &str = r"^copy \((coalesced|offset|stride)\) of 2048x2048: element offset\+ differs at \d+: got \S+, expected \S+$";
const COPY_NAN: &str =
    r"^copy \(\w+\) of 2048x2048: element offset\+ differs at \d+: got nan, expected \S+$";
const THREAD: &str = r"^thread \d+ gives -?[\d.]+, host gives -?[\d.]+$";
const BLOCK_SUM: &str = r"^partial sum of block \d+ is -?\d+, host gives -?\d+$";
const PRODUCT: &str = r"^P\(\d+,\d+\) = -?\d+, host product gives -?\d+$";
const ELEMENT: &str = r"^element \(\d+,\d+\) is -?\d+, host gives -?\d+$";
const VEC4_SUM: &str = r"^global_vec4: sum of thread \d+ is [\d.]+, expected [\d.]+$";
const HALF_SUM: &str = r"^global_half_grid: sum of thread \d+ is [\d.]+, expected [\d.]+$";
const PADDING: &str = r"^global_half_grid: padding slot \d+ is [\d.]+, expected 0\.0+$";
const TRANSPOSED: &str = r"^transpose \((naive|shared|padded|diagonal)\) of \d+x\d+: element differs at \d+: got \S+, expected \S+$";

/// Every bench, at the first point of its sweep, one between and the last (all four patterns of
/// l1_cache; for copy, each variant and then the offsets that have elements before them).
const CASES: &[Case] = &[
    Case {
        bench: "aos_soa",
        params: Params::Points("sweeps/aos_soa.toml", &[0, 5, 7]),
        wrong: &[("one_off", RECORD), ("misplaced", RECORD)],
    },
    Case {
        bench: "bank_stride",
        params: Params::Points("sweeps/bank_stride.toml", &[0, 31, 63]),
        wrong: &[("one_off", LANE), ("short", LANE), ("misplaced", LANE)],
    },
    Case {
        bench: "copy",
        params: Params::Points("sweeps/copy_all.toml", &[0, 17, 70]),
        wrong: &[("one_off", COPY), ("nan", COPY_NAN), ("misplaced", COPY)],
    },
    Case {
        bench: "copy",
        params: Params::Points("sweeps/copy_offset.toml", &[1, 32]),
        wrong: &[(
            "before_offset",
            r"^copy wrote element \d+ before the offset$",
        )],
    },
    Case {
        bench: "divergence",
        params: Params::Points("sweeps/divergence.toml", &[0, 21, 41]),
        wrong: &[
            ("one_off", THREAD),
            ("nan", r"^thread \d+ gives nan, host gives -?[\d.]+$"),
            ("swapped", THREAD),
        ],
    },
    Case {
        bench: "l1_cache",
        params: Params::Points("sweeps/l1_cache.toml", &[0, 2, 4, 7]),
        wrong: &[("one_off", BLOCK_SUM), ("misplaced", BLOCK_SUM)],
    },
    Case {
        bench: "matmul",
        params: Params::Points("sweeps/matmul_tile.toml", &[0, 3, 7]),
        wrong: &[
            ("one_off", PRODUCT),
            ("nan", r"^P\(\d+,\d+\) = nan, host product gives -?\d+$"),
            ("misplaced", PRODUCT),
        ],
    },
    // Fewer than 64 rows: the check used to step by n / 64 = 0 rows and never end.
    Case {
        bench: "matmul",
        params: Params::Literal("#define TILE_WIDTH 8\n#define MATRIX_N 32\n"),
        wrong: &[("one_off", PRODUCT), ("misplaced", PRODUCT)],
    },
    Case {
        bench: "pitch",
        params: Params::Points("sweeps/pitch.toml", &[0, 7, 13]),
        wrong: &[
            ("one_off", ELEMENT),
            ("nan", r"^element \(\d+,\d+\) is nan, host gives -?\d+$"),
            ("misplaced", ELEMENT),
        ],
    },
    Case {
        bench: "pogorilyy",
        params: Params::Points("sweeps/threads_1_512.toml", &[0, 99, 511]),
        wrong: &[
            ("one_off", HALF_SUM),
            (
                "store_wrong",
                r"^global_half_grid: global store of thread \d+ has a wrong value$",
            ),
            (
                "stray_store",
                r"^global_half_grid: global store of thread \d+ was written but should not be$",
            ),
        ],
    },
    // Padding slots exist where THREADS is not a multiple of 32.
    Case {
        bench: "pogorilyy",
        params: Params::Points("sweeps/threads_1_512.toml", &[0, 99]),
        wrong: &[("padding", PADDING)],
    },
    // The block layouts of the pitch experiment, global-store grids only: dense at 40 threads
    // (no padding), line128 and align256 at 40 (24 padding slots each), align256 at 96 (32 slots
    // where line128 has none) and line128 at 512.
    Case {
        bench: "pogorilyy",
        params: Params::Points("sweeps/threads_pitch.toml", &[3, 4, 5, 26, 181]),
        wrong: &[
            ("one_off", HALF_SUM),
            (
                "store_wrong",
                r"^global_half_grid: global store of thread \d+ has a wrong value$",
            ),
            (
                "stray_store",
                r"^global_half_grid: global store of thread \d+ was written but should not be$",
            ),
        ],
    },
    Case {
        bench: "pogorilyy",
        params: Params::Points("sweeps/threads_pitch.toml", &[4, 5, 26]),
        wrong: &[("padding", PADDING)],
    },
    Case {
        bench: "halfwarp",
        params: Params::Points("sweeps/halfwarp.toml", &[0, 47, 255]),
        wrong: &[
            ("one_off", VEC4_SUM),
            (
                "component",
                r"^global_vec4: global store of thread \d+ component 3 has a wrong value$",
            ),
        ],
    },
    // Padding slots exist where THREADS is not a multiple of 32.
    Case {
        bench: "halfwarp",
        params: Params::Points("sweeps/halfwarp.toml", &[0, 47]),
        wrong: &[
            (
                "padding",
                r"^global_vec4: padding slot \d+ is [\d.]+, expected 0\.0+$",
            ),
            (
                "stray_store",
                r"^global_vec4: global store of thread \d+ component 0 was written but should not be$",
            ),
        ],
    },
    Case {
        bench: "reduction",
        params: Params::Points("sweeps/reduction.toml", &[0, 7, 14]),
        wrong: &[("one_off", BLOCK_SUM), ("misplaced", BLOCK_SUM)],
    },
    Case {
        bench: "transpose",
        params: Params::Points("sweeps/transpose_sizes.toml", &[0, 45, 127]),
        wrong: &[
            ("one_off", TRANSPOSED),
            ("nan", TRANSPOSED),
            ("misplaced", TRANSPOSED),
        ],
    },
];

/// A driver that runs longer than this hangs (a check that never ends fails the test).
const RUN_TIMEOUT: Duration = Duration::from_secs(60);

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The bench folders of cuda/, sorted.
fn benches() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("cuda"))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "common")
        .collect();
    names.sort();
    names
}

fn driver_source(bench: &str) -> PathBuf {
    root().join(format!("tests/bench_checks/{bench}.cpp"))
}

#[test]
fn every_bench_has_a_host_check_a_driver_and_cases() {
    let benches = benches();
    assert!(benches.len() >= 10, "the benches are there: {benches:?}");
    for bench in &benches {
        let dir = root().join("cuda").join(bench);
        assert!(
            dir.join("check.h").is_file(),
            "{bench}: no cuda/{bench}/check.h (the host check, testable on a CPU)"
        );
        assert!(
            driver_source(bench).is_file(),
            "{bench}: no driver tests/bench_checks/{bench}.cpp"
        );
        assert!(
            CASES.iter().any(|c| c.bench == bench),
            "{bench}: no case in tests/bench_checks.rs CASES"
        );
        let src = std::fs::read_to_string(dir.join(format!("{bench}.cu"))).unwrap();
        assert!(
            src.contains("#include \"check.h\""),
            "{bench}: {bench}.cu does not include check.h"
        );
        for inline in ["sweep::check(false", "sweep::check_equal("] {
            assert!(
                !src.contains(inline),
                "{bench}: {bench}.cu verifies inline (`{inline}`): that belongs in check.h"
            );
        }
        let check = std::fs::read_to_string(dir.join("check.h")).unwrap();
        assert!(
            !check.contains("sweep.cuh") && !check.contains("cuda_runtime"),
            "{bench}: check.h must build without CUDA"
        );
    }
    for e in std::fs::read_dir(root().join("tests/bench_checks")).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "cpp") {
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            assert!(
                benches.contains(&stem),
                "{}: a driver for no bench in cuda/",
                path.display()
            );
        }
    }
}

#[test]
fn every_bench_check_passes_a_right_result_and_fails_wrong_ones() {
    if !common::on_path("c++") {
        common::skip("no host C++ compiler (`c++`) on PATH");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // The cases run side by side: the largest take about a second per run.
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = CASES
            .iter()
            .enumerate()
            .map(|(i, case)| {
                let dir = tmp.path().join(format!("{i}-{}", case.bench));
                s.spawn(move || check_case(case, &dir))
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}

/// Every point of `case`: render, build, run each mode. Returns what went wrong.
fn check_case(case: &Case, dir: &Path) -> Vec<String> {
    let mut failures = Vec::new();
    let mut headers: Vec<(String, PathBuf)> = Vec::new();
    match case.params {
        Params::Points(spec, points) => {
            for &point in points {
                let out = dir.join(format!("point-{point}"));
                let o = Command::cargo_bin("sweep")
                    .unwrap()
                    .current_dir(root())
                    .args(["render", spec, "--point", &point.to_string(), "--out"])
                    .arg(&out)
                    .output()
                    .unwrap();
                let label = format!("{} at {spec} point {point}", case.bench);
                if !o.status.success() {
                    failures.push(format!("{label}: sweep render failed:\n{}", stderr(&o)));
                    continue;
                }
                headers.push((label, out));
            }
        }
        Params::Literal(text) => {
            let out = dir.join("by-hand");
            std::fs::create_dir_all(&out).unwrap();
            std::fs::write(out.join("params.h"), text).unwrap();
            headers.push((format!("{} with params.h {text:?}", case.bench), out));
        }
    }
    for (label, params) in headers {
        let exe = params.join("check");
        let build = std::process::Command::new("c++")
            .args(["-std=c++17", "-O1"])
            .arg(format!("-I{}", root().join("cuda/common").display()))
            .arg(format!(
                "-I{}",
                root().join("cuda").join(case.bench).display()
            ))
            .arg(format!("-I{}", params.display()))
            .arg("-o")
            .arg(&exe)
            .arg(driver_source(case.bench))
            .output()
            .unwrap();
        if !build.status.success() {
            failures.push(format!(
                "{label}: the driver does not build:\n{}",
                stderr(&build)
            ));
            continue;
        }
        let right = run(&exe, "ok").and_then(|o| verdict_right(&o));
        if let Err(e) = right {
            failures.push(format!("{label}, mode ok: {e}"));
        }
        for (mode, pattern) in case.wrong {
            if let Err(e) = run(&exe, mode).and_then(|o| verdict_wrong(&o, pattern)) {
                failures.push(format!("{label}, mode {mode}: {e}"));
            }
        }
    }
    failures
}

/// Runs the driver in `mode`; kills it after RUN_TIMEOUT, an error.
fn run(exe: &Path, mode: &str) -> Result<Output, String> {
    let mut child = std::process::Command::new(exe)
        .arg(mode)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > RUN_TIMEOUT {
            child.kill().unwrap();
            let o = child.wait_with_output().unwrap();
            return Err(format!(
                "killed after {} s: a check that never ends?\n{}",
                RUN_TIMEOUT.as_secs(),
                show(&o)
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(child.wait_with_output().unwrap())
}

fn show(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        o.status.code(),
        stdout(o),
        stderr(o)
    )
}

/// A right output passes: exit 0, the driver's "check passed", no failed check.
fn verdict_right(o: &Output) -> Result<(), String> {
    if o.status.code() != Some(0) || !stdout(o).contains("check passed (ok)") {
        return Err(format!("the check failed a right result\n{}", show(o)));
    }
    if stdout(o).contains("check=failed") {
        return Err(format!("a failed check, yet exit 0\n{}", show(o)));
    }
    Ok(())
}

/// A wrong output fails as on the GPU: exit 3 and one `@sweep check=failed what="..."` line whose
/// message matches `pattern` and contains what the driver planted (`planted: <text>` on stderr).
fn verdict_wrong(o: &Output, pattern: &str) -> Result<(), String> {
    match o.status.code() {
        Some(3) => {}
        Some(0) => return Err(format!("the check passed a wrong result\n{}", show(o))),
        _ => return Err(format!("expected exit 3 (wrong result)\n{}", show(o))),
    }
    let out = stdout(o);
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("@sweep check=failed"))
        .collect();
    let [line] = lines[..] else {
        return Err(format!(
            "expected one `@sweep check=failed` line\n{}",
            show(o)
        ));
    };
    let Some(what) = line
        .strip_prefix("@sweep check=failed what=\"")
        .and_then(|w| w.strip_suffix('"'))
    else {
        return Err(format!("malformed line `{line}`"));
    };
    if !Regex::new(pattern).unwrap().is_match(what) {
        return Err(format!("the message `{what}` does not match `{pattern}`"));
    }
    let err = stderr(o);
    let Some(planted) = err.lines().find_map(|l| l.strip_prefix("planted: ")) else {
        return Err(format!("the driver said nothing planted\n{}", show(o)));
    };
    if planted.trim().is_empty() || !what.contains(planted) {
        return Err(format!(
            "the message `{what}` does not name the wrong element (`{planted}`)"
        ));
    }
    if !err.contains(&format!("check failed: {what}")) {
        return Err(format!("the reason is not on stderr\n{}", show(o)));
    }
    Ok(())
}
