//! The several-GPU scheduling of `sweep run --gpus`, on the CPU. `nvidia-smi` is stood in for by a
//! script that lists two GPUs (nothing else here pretends: the programs are real host programs,
//! the locks are real flocks). What these tests pin: one runner per GPU, each running its points
//! one at a time; series kept whole on one GPU by default; the GPU in every row; the per-GPU lock.

use crate::common;

use crate::common::{manifest, project, rows, run_dirs, stderr, sweep};
use std::time::Duration;

/// A project whose PATH finds a stand-in `nvidia-smi` listing two GPUs, and a spec of 2 series ×
/// 6 points that declares it needs a GPU but builds with `cc`.
fn two_gpu_project() -> (tempfile::TempDir, String) {
    let p = project();
    let bin = p.path().join("fakebin");
    std::fs::create_dir_all(&bin).unwrap();
    let smi = bin.join("nvidia-smi");
    common::script(&smi, "#!/bin/sh\necho '0, Stand-in GPU A, GPU-aaaa, 580.0, 9.0, 1980, 2619, 30'\necho '1, Stand-in GPU B, GPU-bbbb, 580.0, 9.0, 1980, 2619, 31'\n");
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml"))
        .unwrap()
        .replace("compiler = \"cc\"", "compiler = \"cc\"\ngpu = true")
        .replace("range = [1, 64]", "range = [1, 6]")
        .replace("slow_ms = 0", "slow_ms = 150")
        .replace(
            "[analyze]\nx = \"threads\"\n",
            "[[axis]]\nname = \"rep\"\nvalues = [1, 2]\n[analyze]\nx = \"threads\"\n",
        );
    std::fs::write(p.path().join("sweeps/two.toml"), spec).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    (p, path)
}

#[test]
fn each_gpu_runs_whole_series_one_point_at_a_time() {
    let (p, path) = two_gpu_project();
    let out = sweep(p.path())
        .env("PATH", &path)
        .env_remove("CUDA_VISIBLE_DEVICES")
        .args(["run", "sweeps/two.toml", "--gpus", "all", "--no-analyze"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let run = run_dirs(&p.path().join("output/two"))[0].clone();
    let rows = rows(&run.join("results.csv"));
    assert_eq!(rows.len(), 12);
    for rep in ["1", "2"] {
        let gpus: std::collections::BTreeSet<&str> = rows
            .iter()
            .filter(|r| r["rep"] == rep)
            .map(|r| r["gpu_uuid"].as_str())
            .collect();
        assert_eq!(
            gpus.len(),
            1,
            "series rep={rep} stayed on one GPU: {gpus:?}"
        );
    }
    let used: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r["gpu_name"].as_str()).collect();
    assert_eq!(used.len(), 2, "both GPUs got points: {used:?}");

    // From the manifest's timeline: never two runs at once on one GPU, but the two GPUs overlap.
    let m = manifest(&run);
    let t = m["timeline"].as_array().unwrap();
    let gpu_of = |id: &str| rows.iter().find(|r| r["point_id"] == id).unwrap()["gpu_index"].clone();
    let span = |e: &serde_json::Value| {
        (
            e["run_start"].as_f64().unwrap(),
            e["run_end"].as_f64().unwrap(),
        )
    };
    let mut across = 0;
    for a in t {
        for b in t {
            let (ga, gb) = (
                gpu_of(a["point_id"].as_str().unwrap()),
                gpu_of(b["point_id"].as_str().unwrap()),
            );
            let ((a0, a1), (b0, b1)) = (span(a), span(b));
            let overlap = a0 < b1 && b0 < a1;
            if a["point_id"] != b["point_id"] && overlap {
                assert_ne!(ga, gb, "two runs at once on gpu {ga}");
                across += 1;
            }
        }
    }
    assert!(across > 0, "the two GPUs ran at the same time");
    assert_eq!(m["gpus_start"].as_array().unwrap().len(), 2);
}

#[test]
fn a_second_sweep_on_a_locked_gpu_is_refused_naming_the_holder() {
    let (p, path) = two_gpu_project();
    let mut first = common::sweep_process(p.path())
        .env("PATH", &path)
        .env_remove("CUDA_VISIBLE_DEVICES")
        .args([
            "run",
            "sweeps/two.toml",
            "--gpus",
            "0",
            "-q",
            "--no-analyze",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    let second = |gpu: &str| {
        sweep(p.path())
            .env("PATH", &path)
            .env_remove("CUDA_VISIBLE_DEVICES")
            .args([
                "run",
                "sweeps/two.toml",
                "--gpus",
                gpu,
                "--output",
                "other",
                "--no-analyze",
            ])
            .output()
            .unwrap()
    };
    let refused = second("0");
    let still_running = first.try_wait().unwrap().is_none();
    let free = second("1");
    first.kill().unwrap_or(());
    first.wait().unwrap();
    assert!(
        still_running,
        "the first sweep held gpu 0 during the second's attempt"
    );
    assert_eq!(refused.status.code(), Some(4));
    let err = stderr(&refused);
    assert!(
        err.starts_with("error: gpu 0 (Stand-in GPU A) is in use by another sweep (pid ")
            && err.ends_with("(hint: --wait-lock to queue behind it)\n"),
        "{err}"
    );
    assert!(free.status.success(), "gpu 1 was free: {}", stderr(&free));
}
