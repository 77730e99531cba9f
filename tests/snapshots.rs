//! Snapshot tests (insta): the one-line errors users see, `sweep plan` and a rendered header, pinned
//! word for word in tests/snapshots/ (named `integration__snapshots__<test>.snap` after this
//! module's path). A changed message fails here; review it with `cargo insta review` (or
//! `INSTA_UPDATE=always cargo test --test integration snapshots::`) and commit the .snap.

use crate::common::{project, stderr, stdout, sweep};

/// A spec of the host-program project with `change` applied to saw.toml's text.
const SAW: &str = "bench = \"hostsaw\"\ncompiler = \"cc\"\n[vars]\nmode = \"ok\"\nslow_ms = 0\n[[axis]]\nname = \"threads\"\nrange = [1, 64]\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n";

/// (case, spec text): each gives one error line from `sweep plan`.
fn bad_specs() -> Vec<(&'static str, String)> {
    let with = |from: &str, to: &str| SAW.replace(from, to);
    vec![
        ("unknown key", format!("{SAW}colour = \"red\"\n")),
        ("inverted range", with("range = [1, 64]", "range = [64, 1]")),
        (
            "range of three",
            with("range = [1, 64]", "range = [1, 2, 3]"),
        ),
        (
            "axis named like a column",
            with("name = \"threads\"", "name = \"status\""),
        ),
        (
            "metric named like a column",
            with(
                "name = \"saw\"\nunit = \"MFlops\"",
                "name = \"error\"\nunit = \"error\"",
            ),
        ),
        (
            "metric named like a power column",
            with(
                "name = \"saw\"\nunit = \"MFlops\"",
                "name = \"power\"\nunit = \"W\"",
            ) + "[profile]\npower = true\n",
        ),
        (
            "axis not an identifier",
            with("name = \"threads\"", "name = \"3d\""),
        ),
        (
            "bench not a folder name",
            with("bench = \"hostsaw\"", "bench = \"../etc\""),
        ),
        ("metric without unit", with("unit = \"MFlops\"\n", "")),
        (
            "unknown pattern",
            with("name = \"saw\"\nunit = \"MFlops\"", "pattern = \"gips\""),
        ),
        ("bad regex", format!("{SAW}regex = \"(\"\n")),
        (
            "value listed twice",
            with("range = [1, 64]", "values = [1, 2, 1]"),
        ),
        ("empty filter", format!("filter = \"\"\n{SAW}")),
        (
            "filter drops every point",
            format!("filter = \"threads > 100\"\n{SAW}"),
        ),
        ("zero repeat", format!("repeat = 0\n{SAW}")),
        ("unknown headline", format!("headline = \"gips\"\n{SAW}")),
        ("repeat as a string", format!("repeat = \"3\"\n{SAW}")),
        ("recheck as a float", format!("recheck = 2.5\n{SAW}")),
        ("recheck below a table", format!("{SAW}recheck = 0\n")),
        (
            "zero placements",
            format!("{SAW}[timing]\nplacements = 0\n"),
        ),
        ("negative timeout", format!("run_timeout_s = -1\n{SAW}")),
        (
            "negative confidence target",
            format!("{SAW}[timing]\ntarget_rel_ci = -0.01\n"),
        ),
        ("table for a list", format!("{SAW}[axis]\nname = \"x\"\n")),
        (
            "profile preset",
            format!("{SAW}[profile]\npresets = [\"banks\"]\n"),
        ),
        (
            "profile metric",
            format!("{SAW}[profile]\nncu_metrics = [\"dram bytes\"]\n"),
        ),
        (
            "profile timeout",
            format!("{SAW}[profile]\npower = true\ntimeout_s = 0\n"),
        ),
        (
            "profile without a timing-core metric",
            with("name = \"saw\"\nunit = \"MFlops\"", "pattern = \"mflops\"")
                + "[profile]\npresets = [\"memory\"]\n",
        ),
        (
            "metric power too short",
            format!("{SAW}[profile]\nmetric_power_ms = 50\n"),
        ),
        (
            "metric power without a timing-core metric",
            with("name = \"saw\"\nunit = \"MFlops\"", "pattern = \"mflops\"")
                + "[profile]\nmetric_power_ms = 1000\n",
        ),
    ]
}

#[test]
fn spec_errors() {
    let p = project();
    let mut out = String::new();
    for (case, text) in bad_specs() {
        std::fs::write(p.path().join("sweeps/bad.toml"), &text).unwrap();
        let o = sweep(p.path())
            .args(["plan", "sweeps/bad.toml"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(3), "{case}: {}", stderr(&o));
        out += &format!("{case}: {}", stderr(&o));
    }
    insta::assert_snapshot!(out);
}

#[test]
fn command_errors() {
    let p = project();
    let cases: [(&str, &[&str]); 8] = [
        ("missing spec", &["plan", "sweeps/none.toml"]),
        (
            "analyze a missing CSV",
            &["analyze", "output/none/results.csv"],
        ),
        ("report of a folder that is no run", &["report", "sweeps"]),
        ("export of a folder that is no run", &["export", "sweeps"]),
        (
            "bad axis override",
            &["plan", "sweeps/saw.toml", "-a", "threads=9:1"],
        ),
        (
            "override of an unknown axis",
            &["plan", "sweeps/saw.toml", "-a", "blocks=1:4"],
        ),
        (
            "override listing a value twice",
            &["plan", "sweeps/saw.toml", "-a", "threads=4,4"],
        ),
        (
            "bad timing override",
            &["plan", "sweeps/saw.toml", "--timing", "placements=0"],
        ),
    ];
    let mut out = String::new();
    for (case, args) in cases {
        let o = sweep(p.path()).args(args).output().unwrap();
        assert!(!o.status.success(), "{case}");
        out += &format!(
            "{case} (exit {}): {}",
            o.status.code().unwrap_or(-1),
            stderr(&o)
        );
    }
    insta::assert_snapshot!(out);
}

#[test]
fn plan_and_render() {
    let p = project();
    let plan = sweep(p.path())
        .args(["plan", "sweeps/saw.toml", "-a", "threads=15:17"])
        .output()
        .unwrap();
    assert!(plan.status.success(), "{}", stderr(&plan));
    let render = sweep(p.path())
        .args(["render", "sweeps/saw.toml", "--point", "1"])
        .output()
        .unwrap();
    assert!(render.status.success(), "{}", stderr(&render));
    insta::assert_snapshot!(format!(
        "$ sweep plan sweeps/saw.toml -a threads=15:17\n{}\n$ sweep render sweeps/saw.toml --point 1\n{}",
        stdout(&plan),
        stdout(&render)
    ));
}

/// pogorilyy's headers: the thread sweep's (no `layout`, no `kernels`) word for word as before
/// the pitch experiment, so that its committed runs and new ones measure the same binary; the
/// pitch experiment's three layouts at 40 threads; and the errors for values it does not know.
#[test]
fn pogorilyy_headers_by_layout() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let render = |args: &[&str]| {
        assert_cmd::Command::cargo_bin("sweep")
            .unwrap()
            .current_dir(root)
            .arg("render")
            .args(args)
            .output()
            .unwrap()
    };
    let mut out = String::new();
    let default = render(&["sweeps/threads_1_512.toml", "--point", "99"]);
    assert!(default.status.success(), "{}", stderr(&default));
    assert!(
        !stdout(&default).contains("LAYOUT") && !stdout(&default).contains("KERNELS"),
        "the thread sweep's header names no layout and no kernel set:\n{}",
        stdout(&default)
    );
    out += &format!(
        "$ sweep render sweeps/threads_1_512.toml --point 99\n{}",
        stdout(&default)
    );
    for point in ["3", "4", "5"] {
        let o = render(&["sweeps/threads_pitch.toml", "--point", point]);
        assert!(o.status.success(), "{}", stderr(&o));
        out += &format!(
            "$ sweep render sweeps/threads_pitch.toml --point {point}\n{}",
            stdout(&o)
        );
    }
    for (key, value) in [("-a", "layout=line64"), ("--set", "kernels=shared")] {
        let o = render(&["sweeps/threads_pitch.toml", "--point", "0", key, value]);
        assert_eq!(o.status.code(), Some(3), "{value}: {}", stderr(&o));
        out += &format!(
            "$ sweep render sweeps/threads_pitch.toml --point 0 {key} {value} (exit 3)\n{}",
            stderr(&o)
        );
    }
    insta::assert_snapshot!(out);
}
