//! Review 10b (read side and inputs, the confirming round) of issue 38: what a hostile user still
//! found in the commands that read a run or a CSV, each fixed with a test that failed before.
//! Real files, real runs of host programs built with `cc`.

use crate::common::{stderr, sweep};
use crate::hardening::write;
use std::time::Duration;

/// Review 10b, H1: a value whose chart spans more than f64 holds (`-1e308` and `1e308` in one
/// series, or `1.7e308` with the headroom above it; bars of a category run alike) made plotters'
/// tick search loop for good: `plot`, `report` and `compare` hung at 100 % CPU. The chart is drawn
/// with its range bounded.
#[test]
fn a_value_near_the_end_of_f64_is_charted_without_a_hang() {
    let tmp = tempfile::tempdir().unwrap();
    let alternating: String = (1..40)
        .map(|x| format!("{x},ok,{}\n", if x % 2 == 1 { "1e308" } else { "-1e308" }))
        .collect();
    for (name, text) in [
        ("alternating.csv", format!("x,status,t_ms\n{alternating}")),
        (
            "top.csv",
            "x,status,t_ms\n1,ok,1.7e308\n2,ok,1\n3,ok,1.6e308\n".into(),
        ),
        (
            "bars.csv",
            "k,status,t_ms\na,ok,1.7e308\nb,ok,1\nc,ok,-1.7e308\n".into(),
        ),
    ] {
        let csv = write(tmp.path(), name, &text);
        let commands: &[&[&str]] = &[&["plot"], &["compare", csv.to_str().unwrap()]];
        for args in commands {
            let out = sweep(tmp.path())
                .arg(args[0])
                .arg(&csv)
                .args(&args[1..])
                .arg("--out")
                .arg(tmp.path().join(format!("{}-{name}", args[0])))
                .timeout(Duration::from_secs(30))
                .output()
                .unwrap();
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(0), "{} {name}: {err}", args[0]);
        }
        let charts = tmp.path().join(format!("plot-{name}/charts"));
        let pngs = std::fs::read_dir(&charts).unwrap().count();
        assert!(pngs >= 2, "{name}: {pngs} files in {}", charts.display());
    }
}
