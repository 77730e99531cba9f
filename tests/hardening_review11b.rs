//! Review 11b (read side and inputs, the confirming round after reviews 9 and 10b) of issue 38:
//! what a hostile user still found, each fixed with a test that failed before. Real files, real
//! runs of host programs built with `cc`.

use crate::common::{stderr, sweep};
use crate::hardening::write;

fn saw_spec(analyze: &str) -> String {
    format!("bench = \"hostsaw\"\ncompiler = \"cc\"\n[vars]\nmode = \"ok\"\nslow_ms = 0\n[[axis]]\nname = \"threads\"\nrange = [1, 4]\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n[analyze]\nx = \"threads\"\n{analyze}\n")
}

/// Review 11b, M1 (the neighbour of review 10b's M7): a typo in `[analyze] y` ran the whole sweep
/// and then warned "the analysis at the end of the run failed", exit 0. It is refused at spec read
/// with its line, as `x` and `by` are; a metric's name or column still passes.
#[test]
fn an_analyze_y_that_names_no_metric_is_refused_with_its_line() {
    let p = crate::common::project();
    write(
        p.path(),
        "sweeps/typo.toml",
        &saw_spec("y = [\"saw\", \"sawz\"]"),
    );
    for cmd in ["plan", "run"] {
        let out = sweep(p.path())
            .args([cmd, "sweeps/typo.toml"])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{cmd}: {err}");
        assert!(
            err.starts_with(
                "error: sweeps/typo.toml:14: `[analyze] y` names `sawz`, which is not a metric"
            ),
            "{cmd}: {err}"
        );
        assert!(err.contains("(hint: one of `saw`)"), "{err}");
    }
    assert!(!p.path().join("output/typo").exists());
    for good in ["y = [\"saw\"]", "y = [\"saw_mflops\"]"] {
        write(p.path(), "sweeps/good.toml", &saw_spec(good));
        let out = sweep(p.path())
            .args(["plan", "sweeps/good.toml"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{good}: {}", stderr(&out));
    }
}
