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

fn two_axes(x: &str, mode: &str) -> String {
    format!("bench = \"hostsaw\"\ncompiler = \"cc\"\n[vars]\nslow_ms = 0\nthreads = 3\n[[axis]]\nname = \"mode\"\nvalues = [\"ok\"]\n[[axis]]\nname = \"other\"\nvalues = {mode}\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n[analyze]\nx = \"{x}\"\n")
}

/// Review 11b, M2: `[analyze] x` naming an axis of text while another axis is of numbers ran the
/// whole sweep and then warned "the analysis at the end of the run failed ... name one with
/// --x" (an option `run` does not have), exit 0. It is refused at spec read with its line and
/// the axes of numbers.
#[test]
fn an_analyze_x_of_text_beside_an_axis_of_numbers_is_refused_with_its_line() {
    let p = crate::common::project();
    write(p.path(), "sweeps/text.toml", &two_axes("mode", "[1, 2]"));
    for cmd in ["plan", "run"] {
        let out = sweep(p.path())
            .args([cmd, "sweeps/text.toml"])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{cmd}: {err}");
        assert!(
            err.starts_with("error: sweeps/text.toml:16: `[analyze] x` names `mode`, whose value `ok` is not a number (hint: an axis of numbers: `other`)"),
            "{cmd}: {err}"
        );
    }
    assert!(!p.path().join("output/text").exists());
}

/// Review 11b, M3: with every axis of text, `[analyze] x` names the category of the bars (as
/// sweeps/l1_cache.toml does), yet every run of such a spec ended in "warning: the analysis at the
/// end of the run failed" and drew no chart. The run's end draws the bars, as without x
/// (`plot --x mode` stays an error, as designed).
#[test]
fn an_analyze_x_of_categories_draws_the_bars_at_the_end_of_the_run() {
    let p = crate::common::project();
    write(
        p.path(),
        "sweeps/bars.toml",
        &two_axes("mode", "[\"a\", \"b\"]"),
    );
    let out = sweep(p.path())
        .args(["run", "sweeps/bars.toml"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("warning"), "{err}");
    let run = std::fs::read_dir(p.path().join("output/bars"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert!(run.join("charts/saw_mflops.png").is_file(), "{err}");
}

/// Review 11b, H1 (the neighbour of review 10b's integers past 2^53, fixed in compare): two
/// points at x = 2^64 + 1 and 2^64 (1 ms and 2 ms) were read by analyze and plot as repeats of one
/// x and averaged: "best at n = 1.845e19 (1.500 ms)", a value no point measured. The two cells are
/// named; equal cells (repeats of one x) are still read as before.
#[test]
fn integers_of_x_that_one_f64_holds_alike_are_named_not_averaged() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = write(
        tmp.path(),
        "n.csv",
        "n,status,t_ms\n18446744073709551617,ok,1\n18446744073709551616,ok,2\n",
    );
    for cmd in ["analyze", "plot"] {
        let out = sweep(tmp.path())
            .args([cmd, csv.to_str().unwrap(), "--out"])
            .arg(tmp.path().join(cmd))
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{cmd}: {err}");
        assert!(
            err.contains(
                "axis `n` has `18446744073709551617` (line 2) and `18446744073709551616` (line 3)"
            ),
            "{cmd}: {err}"
        );
    }
    let same = write(
        tmp.path(),
        "same.csv",
        "n,status,t_ms\n9007199254740993,ok,1\n9007199254740993,ok,2\n1,ok,3\n",
    );
    let out = sweep(tmp.path())
        .args(["analyze", same.to_str().unwrap(), "--out"])
        .arg(tmp.path().join("same"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
