//! Compile check of every bench in cuda/ with real nvcc for sm_90, at the corners of every sweep
//! (`sweep build --sample 5`: the first point, the last, and three between). No GPU needed.
//! `make test` puts NVIDIA's nvcc from PyPI on PATH when there is none, and sets
//! SWEEP_REQUIRE_NVCC=1 so that a missing nvcc fails this test instead of skipping it.

use crate::common;

use crate::common::stderr;
use assert_cmd::Command;
use std::path::Path;

/// Whether to skip a test for want of nvcc on PATH (saying so); fails instead where
/// SWEEP_REQUIRE_NVCC is set.
pub(crate) fn skip_without_nvcc() -> bool {
    if common::on_path("nvcc") {
        return false;
    }
    assert!(
        std::env::var("SWEEP_REQUIRE_NVCC").is_err(),
        "SWEEP_REQUIRE_NVCC is set but nvcc is not on PATH"
    );
    common::skip("nvcc is not on PATH (make test installs it)");
    true
}

#[test]
fn every_sweep_builds_at_its_corners_with_real_nvcc() {
    if skip_without_nvcc() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = tempfile::tempdir().unwrap();
    let mut specs: Vec<_> = std::fs::read_dir(root.join("sweeps"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    specs.sort();
    assert!(
        specs.len() >= 10,
        "the sweeps of the source studies are there: {specs:?}"
    );
    let mut benches = std::collections::BTreeSet::new();
    for spec in &specs {
        let o = Command::cargo_bin("sweep")
            .unwrap()
            .current_dir(root)
            .env("SWEEP_LOCK_DIR", out.path().join("locks"))
            .args([
                "build",
                &spec.display().to_string(),
                "--sample",
                "5",
                "--output",
            ])
            .arg(out.path())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success() && stdout.contains(" 0 failed"),
            "{}: {stdout}{}",
            spec.display(),
            stderr(&o)
        );
        assert!(
            stdout.contains("arch sm_90"),
            "{}: built for sm_90: {stdout}",
            spec.display()
        );
        let text = std::fs::read_to_string(spec).unwrap();
        let bench = text
            .lines()
            .find_map(|l| l.strip_prefix("bench = "))
            .unwrap()
            .trim_matches('"')
            .to_string();
        benches.insert(bench);
    }
    let all: std::collections::BTreeSet<String> = std::fs::read_dir(root.join("cuda"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "common")
        .collect();
    assert_eq!(
        benches, all,
        "every bench in cuda/ has a sweep, and so was compiled"
    );
}

#[test]
fn the_timing_core_fails_a_wrong_result_on_the_host() {
    if skip_without_nvcc() {
        return;
    }
    // The bench lives in tests/project/cuda/checks; the timing core is the real cuda/common.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    for (src, dst) in [
        ("tests/project/cuda/checks", "cuda/checks"),
        ("cuda/common", "cuda/common"),
    ] {
        std::fs::create_dir_all(tmp.path().join(dst)).unwrap();
        for e in std::fs::read_dir(root.join(src)).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), tmp.path().join(dst).join(e.file_name())).unwrap();
        }
    }
    std::fs::create_dir_all(tmp.path().join("sweeps")).unwrap();
    std::fs::copy(
        root.join("tests/project/sweeps/checks.toml"),
        tmp.path().join("sweeps/checks.toml"),
    )
    .unwrap();
    let o = Command::cargo_bin("sweep")
        .unwrap()
        .current_dir(tmp.path())
        .env("SWEEP_LOCK_DIR", tmp.path().join("locks"))
        .args(["run", "sweeps/checks.toml"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let run = std::fs::read_dir(tmp.path().join("output/checks"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut r = csv::Reader::from_path(run.join("results.csv")).unwrap();
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    let (status, error) = (3, rows[0].len() - 1);
    assert_eq!(&rows[0][2], "right");
    assert_eq!(&rows[0][status], "ok");
    assert_eq!(&rows[1][status], "wrong_result");
    assert!(
        rows[1][error]
            .starts_with("wrong result: copy of 64 floats differs at 5: got 6, expected 5"),
        "{:?}",
        &rows[1]
    );
    assert_eq!(&rows[2][status], "wrong_result");
    assert!(
        rows[2][error].contains("differs at 9: got nan"),
        "{:?}",
        &rows[2]
    );
}

/// The start-gate contract: a bench's `main` calls `sweep::options_from_env()` (which waits at the
/// gate) before any other CUDA call, or a program started early would allocate and copy on the GPU
/// while the previous point measures.
/// (name, source of `cuda/<name>/<name>.cu`) of every bench.
fn bench_sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("cuda");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&root).unwrap() {
        let dir = e.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        if name != "common" {
            let src = std::fs::read_to_string(dir.join(format!("{name}.cu"))).unwrap();
            out.push((name, src));
        }
    }
    assert!(out.len() >= 10, "every bench is there");
    out
}

#[test]
fn every_bench_waits_at_the_gate_before_touching_the_gpu() {
    let cuda_call = regex::Regex::new(r"SWEEP_CHECK\(|\bcuda[A-Z][A-Za-z0-9]*\(|<<<").unwrap();
    for (name, src) in bench_sources() {
        let main = &src[src
            .find("int main(")
            .unwrap_or_else(|| panic!("{name}: no main"))..];
        let gate = main
            .find("options_from_env()")
            .unwrap_or_else(|| panic!("{name}: main never calls options_from_env()"));
        if let Some(first) = cuda_call.find(main) {
            assert!(
                gate < first.start(),
                "{name}: `{}` comes before options_from_env()",
                &main[first.start()..first.end()]
            );
        }
    }
}

/// Every bench allocates the buffers it times with `sweep::malloc`, so the timing core measures
/// them at every placement (issue 10): a plain `cudaMalloc` would be measured wherever the
/// allocation history put it.
#[test]
fn every_bench_places_its_buffers() {
    let plain = regex::Regex::new(r"\bcudaMalloc\(").unwrap();
    for (name, src) in bench_sources() {
        assert!(
            !plain.is_match(&src),
            "{name}: allocates with cudaMalloc (hint: SWEEP_CHECK(sweep::malloc(&ptr, bytes)))"
        );
        assert!(src.contains("sweep::malloc("), "{name}: no sweep::malloc");
    }
}

/// The add-and-store kernels (pogorilyy, halfwarp) are meant to be store-bound: one store per
/// trip. ptxas drops a plain store to the same address as the next one in an unrolled loop
/// (halfwarp's `st.shared` did: 1 of 4 stores was left, and stride 2 looked conflict-free on an
/// H100), so each kernel's SASS must hold at least as many stores as float additions.
#[test]
fn every_add_and_store_kernel_issues_every_store() {
    if skip_without_nvcc() {
        return;
    }
    if !common::on_path("cuobjdump") || !common::on_path("nvdisasm") {
        assert!(
            std::env::var("SWEEP_REQUIRE_NVCC").is_err(),
            "SWEEP_REQUIRE_NVCC is set but cuobjdump or nvdisasm is not on PATH"
        );
        common::skip("cuobjdump or nvdisasm is not on PATH (make test installs them)");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("params.h"),
        "#define THREADS 48\n#define ITERATIONS 8192\n#define ADDS 1\n#define BLOCKS_PER_SM 8\n",
    )
    .unwrap();
    for bench in ["pogorilyy", "halfwarp"] {
        let cubin = dir.path().join(format!("{bench}.cubin"));
        let o = std::process::Command::new("nvcc")
            .args(["-arch=sm_90", "-O3", "-cubin", "-o"])
            .arg(&cubin)
            .arg(format!("-I{}", dir.path().display()))
            .arg(format!("-I{}", root.join("cuda/common").display()))
            .arg(root.join(format!("cuda/{bench}/{bench}.cu")))
            .output()
            .unwrap();
        assert!(o.status.success(), "{bench}: {}", stderr(&o));
        let o = std::process::Command::new("cuobjdump")
            .arg("-sass")
            .arg(&cubin)
            .output()
            .unwrap();
        assert!(o.status.success(), "{bench}: {}", stderr(&o));
        let sass = String::from_utf8_lossy(&o.stdout);
        let mut kernels = 0;
        for f in sass.split("Function : ").skip(1) {
            let name = f.split_whitespace().next().unwrap_or_default();
            if !name.contains("add_store") {
                continue;
            }
            kernels += 1;
            let count = |op: &str| {
                f.lines()
                    .filter(|l| l.split_whitespace().any(|w| w.starts_with(op)))
                    .count()
            };
            let stores = count("STS") + count("STG");
            let adds = count("FADD");
            assert!(
                adds >= 4 && stores >= adds,
                "{bench}: {name} has {stores} stores for {adds} float additions"
            );
        }
        assert!(
            kernels >= 6,
            "{bench}: {kernels} add_store kernels in\n{sass}"
        );
    }
}
