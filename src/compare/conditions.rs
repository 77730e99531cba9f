//! How each run measured, from the manifest beside its results CSV. What differs between A and B
//! is said above the verdicts: a GPU, driver, compiler, `[timing]` table or prestart of its own can
//! move values by more than the uncertainties the verdicts use (a program started ahead beside a
//! measurement moved shared-memory values by 8 % on some H100s; docs/measurements.md).

use crate::store::{Manifest, Run};

/// The measuring conditions of a run: the manifest of the run folder whose `results.csv` this is
/// (a CSV of another name, even inside a run folder, is a bare CSV).
fn of(run: &Run) -> Option<&Manifest> {
    run.manifest.as_ref().filter(|_| run.is_results())
}

fn prestart(m: &Manifest) -> String {
    m.prestart.map_or_else(
        || "not recorded (older sweeps started 1 ahead)".to_string(),
        |p| p.to_string(),
    )
}

/// The rest between programs while sweep held the driver (`hold.rs`), or that it did not.
fn driver_held(m: &Manifest) -> String {
    match m.rest_ms {
        Some(0) | None => "no (each program loaded the driver)".to_string(),
        Some(ms) => format!("yes, {ms} ms rest between programs"),
    }
}

fn gpu(m: &Manifest) -> String {
    m.gpus_start
        .first()
        .map(|g| format!("{}, driver {}", g.name, g.driver))
        .unwrap_or_default()
}

/// The spec's `[timing]` table as one line (empty when it has none or does not parse).
fn timing(m: &Manifest) -> String {
    m.spec
        .parse::<toml::Table>()
        .ok()
        .and_then(|t| t.get("timing").cloned())
        .map(|t| t.to_string().trim().replace('\n', ", "))
        .unwrap_or_default()
}

/// A condition and how to read it off a manifest.
type Condition = (&'static str, fn(&Manifest) -> String);

/// One line per condition in which A's and B's runs differ (`what: A x / B y`); none when either
/// side is a bare CSV.
pub(super) fn differences(a: &Run, b: &Run) -> Vec<String> {
    let (Some(a), Some(b)) = (of(a), of(b)) else {
        return Vec::new();
    };
    let shown = |s: String| if s.is_empty() { "none".to_string() } else { s };
    let checks: [Condition; 5] = [
        ("prestart", prestart),
        ("driver held", driver_held),
        ("GPU", gpu),
        ("compiler", |m| m.compiler_version.clone()),
        ("[timing]", timing),
    ];
    checks
        .iter()
        .filter_map(|(what, f)| {
            let (x, y) = (f(a), f(b));
            (x != y).then(|| format!("{what}: A {} / B {}", shown(x), shown(y)))
        })
        .collect()
}

/// The runs' SM clocks (the medians of their `*_sm_mhz` readings) when they differ by more than
/// 0.2 %: a clock-bound value moves by their ratio, far beyond its CI (0.01–0.1 % for the thread
/// sweep's shared-memory series), and an H100 was seen at 1980 MHz through three sweeps and at
/// 1995 MHz in the next two (docs/measurements.md).
pub(super) fn clock(a: Option<f64>, b: Option<f64>) -> Option<String> {
    let (a, b) = (a?, b?);
    let change = b / a - 1.0;
    (change.abs() > 0.002).then(|| {
        format!(
            "SM clock (median reading): A {a:.0} MHz / B {b:.0} MHz ({:+.2} %: clock-bound values move by as much)",
            100.0 * change
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::GpuState;

    use std::path::Path;

    /// A run folder of manifest `m` (given an axis `n` and a metric, as every run has) with a
    /// results CSV of one row, read.
    fn run(dir: &Path, m: &Manifest) -> Run {
        std::fs::create_dir_all(dir).unwrap();
        let m = Manifest {
            axes: vec!["n".into()],
            metrics: vec![crate::store::MetricInfo {
                name: "mflops".into(),
                unit: "MFlops".into(),
                column: "mflops".into(),
                ..Default::default()
            }],
            ..m.clone()
        };
        m.save(dir).unwrap();
        let csv = crate::store::RunDir::new(dir).results();
        std::fs::write(&csv, "point_id,index,n,status,mflops\na,0,1,ok,5\n").unwrap();
        Run::open(&csv).unwrap()
    }

    #[test]
    fn names_each_condition_that_differs_and_nothing_else() {
        let t = tempfile::tempdir().unwrap();
        let gpu = GpuState {
            name: "NVIDIA H100 80GB HBM3".into(),
            driver: "580.159.04".into(),
            ..GpuState::default()
        };
        let a = Manifest {
            prestart: Some(1),
            gpus_start: vec![gpu.clone()],
            compiler_version: "13.0".into(),
            spec: "bench = \"b\"\n[timing]\nplacements = 8\n".into(),
            ..Manifest::default()
        };
        let b = Manifest {
            prestart: Some(0),
            spec: "bench = \"b\"\n[timing]\nplacements = 1\n".into(),
            ..a.clone()
        };
        let (pa, pb) = (run(&t.path().join("a"), &a), run(&t.path().join("b"), &b));
        assert_eq!(
            differences(&pa, &pb),
            vec![
                "prestart: A 1 / B 0".to_string(),
                "[timing]: A { placements = 8 } / B { placements = 1 }".to_string()
            ]
        );
        assert!(differences(&pa, &pa).is_empty());
        let old = Manifest {
            prestart: None,
            ..a.clone()
        };
        let po = run(&t.path().join("old"), &old);
        assert_eq!(
            differences(&po, &pa),
            vec!["prestart: A not recorded (older sweeps started 1 ahead) / B 1".to_string()]
        );
        // A bare CSV has no manifest: nothing is claimed, not even from a manifest beside it.
        let bare = t.path().join("bare.csv");
        std::fs::write(&bare, "point_id,index,status\na,0,ok\n").unwrap();
        assert!(differences(&Run::open(&bare).unwrap(), &pa).is_empty());
        let copy = t.path().join("b/copy.csv");
        std::fs::copy(
            crate::store::RunDir::new(t.path().join("b")).results(),
            &copy,
        )
        .unwrap();
        assert!(differences(&Run::open(&copy).unwrap(), &pa).is_empty());
    }

    #[test]
    fn names_a_clock_difference_beyond_a_fifth_of_a_percent() {
        assert_eq!(
            clock(Some(1980.0), Some(1995.0)).as_deref(),
            Some("SM clock (median reading): A 1980 MHz / B 1995 MHz (+0.76 %: clock-bound values move by as much)")
        );
        assert!(clock(Some(1980.0), Some(1977.0)).is_none());
        assert!(clock(None, Some(1995.0)).is_none());
        assert!(clock(Some(1995.0), Some(1980.0))
            .unwrap()
            .contains("(-0.75 %"));
    }
}
