//! Review 9 (read side and inputs) of issue 38: what a hostile user found in the commands that
//! read a run, a CSV or a spec, each fixed with a test that failed before. Real files, real runs
//! of host programs built with `cc`.

use crate::common::{project, stderr, sweep};
use crate::hardening::write;
use std::path::Path;

/// A results CSV without a manifest: x, status and one metric in ms, a value per x.
fn csv_of(dir: &Path, name: &str, rows: &[(String, f64)]) -> std::path::PathBuf {
    let mut text = String::from("x,status,t_ms\n");
    for (x, v) in rows {
        text.push_str(&format!("{x},ok,{v}\n"));
    }
    write(dir, name, &text)
}

/// Review 9b, H1: an x far off the others (1e308 beside 1..40, or a pow2 axis up to 2^63) gave a
/// grid index that saturated, and the period search's arithmetic overflowed: `analyze`, `plot`,
/// `report` and `compare` panicked (a debug build; a release build wrapped around and searched
/// nonsense). Such a curve is read without a period, the rest of its analysis kept.
#[test]
fn an_x_far_off_the_others_is_analysed_without_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let mut far: Vec<(String, f64)> = (1..40)
        .map(|x| (x.to_string(), 1.0 + (x % 7) as f64))
        .collect();
    far.push(("1e308".into(), 2.0));
    let pow2: Vec<(String, f64)> = (0..64)
        .map(|k| ((1u64 << k).to_string(), 1.0 + (k % 5) as f64))
        .collect();
    for (name, rows, best) in [
        ("far.csv", far, "| 7 (1.000 ms) |"),
        ("pow2.csv", pow2, "| 1 (1.000 ms) |"),
    ] {
        let csv = csv_of(tmp.path(), name, &rows);
        for cmd in ["analyze", "plot"] {
            let out = sweep(tmp.path())
                .args([cmd, csv.to_str().unwrap(), "--out"])
                .arg(tmp.path().join(format!("{cmd}-{name}")))
                .output()
                .unwrap();
            let err = stderr(&out);
            assert!(!err.contains("panicked"), "{cmd} {name}: {err}");
            assert_eq!(out.status.code(), Some(0), "{cmd} {name}: {err}");
        }
        let md = std::fs::read_to_string(tmp.path().join(format!("analyze-{name}/analysis.md")))
            .unwrap();
        // The rest of the analysis stands: the best x (the least time) is read.
        assert!(crate::common::squeeze(&md).contains(best), "{name}: {md}");
    }
}

/// Review 9b, H2: the spec refused two metrics of one value column, but not a metric whose
/// column is another's statistic (`saw_median` in MFlops writes `saw_median_mflops`, the median
/// of `saw`), nor one name given twice in two units (both write `saw_rel_ci`): the run wrote a
/// results.csv with two columns of one name, that every reader then refused (the report at the
/// end of the run already), and the run's values were lost to them. Refused when the spec is read.
#[test]
fn a_metric_that_writes_another_metrics_column_is_refused() {
    let p = project();
    for (name, second, says) in [
        (
            "median",
            "name = \"saw_median\"\nunit = \"MFlops\"",
            "sweeps/clash.toml:9: metric `saw_median` writes the column `saw_median_mflops`, which metric `saw` writes too (hint: rename one of them",
        ),
        (
            "twice",
            "name = \"saw\"\nunit = \"GFlops\"",
            "sweeps/clash.toml:9: metric `saw` is defined twice (hint: rename one of them",
        ),
        (
            "rel_ci",
            "name = \"saw_rel\"\nunit = \"ci\"",
            "sweeps/clash.toml:9: metric `saw_rel` writes the column `saw_rel_ci`, which metric `saw` writes too",
        ),
    ] {
        write(
            p.path(),
            "sweeps/clash.toml",
            &format!("bench = \"hostsaw\"\ncompiler = \"cc\"\n[[axis]]\nname = \"threads\"\nrange = [1, 4]\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n[[metric]]\n{second}\n"),
        );
        for cmd in [&["plan"][..], &["run", "-q"]] {
            let out = sweep(p.path())
                .args(cmd)
                .arg("sweeps/clash.toml")
                .output()
                .unwrap();
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(3), "{name} {cmd:?}: {err}");
            assert!(err.starts_with(&format!("error: {says}")), "{name} {cmd:?}: {err}");
            assert_eq!(err.lines().count(), 1, "{name} {cmd:?}: {err}");
        }
        assert!(!p.path().join("output/clash").exists(), "{name}: a run was made");
    }
}
