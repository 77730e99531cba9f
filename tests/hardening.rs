//! The third round of issue 38's hostile review: headers the build reads from outside the bench
//! folder, links planted in a run folder, compare's exit code when B failed, and the small ones.
//! Real files, real compilers (cc; nvcc where it is on PATH), real runs.

use crate::common::{self, project, rows, run_dirs, stderr, stdout, sweep};
use std::path::{Path, PathBuf};

fn write(dir: &Path, rel: &str, text: &str) -> PathBuf {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

/// A bench `inc` whose program includes `value.h` through `include` (`"../shared/value.h"`, or
/// `<value.h>` found through a `-I` flag) and prints `THREADS * VALUE` MFlops, and its spec
/// `sweeps/inc.toml` (threads 1..2, `extra` added to the spec's top).
fn including_bench(p: &Path, ext: &str, include: &str, extra: &str) {
    write(
        p,
        &format!("cuda/inc/inc.{ext}"),
        &format!("#include \"params.h\"\n#include {include}\n#include <stdio.h>\nint main(void) {{\n  printf(\"MFlops: %d\\n\", THREADS * VALUE);\n  return 0;\n}}\n"),
    );
    write(p, "cuda/inc/params.h.tera", "#define THREADS {{ threads }}\n");
    write(
        p,
        "sweeps/inc.toml",
        &format!("bench = \"inc\"\n{extra}\n[[axis]]\nname = \"threads\"\nrange = [1, 2]\n[[metric]]\npattern = \"mflops\"\n"),
    );
}

/// `sweep run sweeps/inc.toml --force` (a new run each time); (cached, mflops) of its rows.
fn run_inc(p: &Path) -> Vec<(String, String)> {
    let out = sweep(p)
        .args(["run", "sweeps/inc.toml", "-q", "--force", "--no-analyze"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let run = run_dirs(&p.join("output/inc")).pop().unwrap();
    rows(&run.join("results.csv"))
        .into_iter()
        .map(|r| (r["cached"].clone(), r["mflops"].clone()))
        .collect()
}

/// Issue 38, review 3, H1: a header outside the bench folder and `cuda/common/` (reached by a
/// relative include, or by a `-I` flag) was no part of the build cache's key: after it changed,
/// `run --force` ran the old binary (cached=1, the old values).
#[test]
fn a_header_from_outside_the_bench_rebuilds_when_it_changes() {
    let p = project();
    let elsewhere = tempfile::tempdir().unwrap();
    for (include, value_h, extra) in [
        (
            "\"../shared/value.h\"",
            p.path().join("cuda/shared/value.h"),
            "compiler = \"cc\"".to_string(),
        ),
        (
            "<value.h>",
            elsewhere.path().join("value.h"),
            format!(
                "compiler = \"cc\"\nflags = [\"-I{}\"]",
                elsewhere.path().display()
            ),
        ),
    ] {
        std::fs::create_dir_all(value_h.parent().unwrap()).unwrap();
        std::fs::write(&value_h, "#define VALUE 10\n").unwrap();
        including_bench(p.path(), "c", include, &extra);
        let first = run_inc(p.path());
        assert_eq!(
            run_inc(p.path()),
            [("1".into(), "10".into()), ("1".into(), "20".into())],
            "{include}: nothing changed, from the cache (first run {first:?})"
        );
        std::fs::write(&value_h, "#define VALUE 7\n").unwrap();
        assert_eq!(
            run_inc(p.path()),
            [("0".into(), "7".into()), ("0".into(), "14".into())],
            "{include}: the header changed, built again"
        );
        assert_eq!(
            run_inc(p.path()),
            [("1".into(), "7".into()), ("1".into(), "14".into())],
            "{include}: the new build is the cache's now"
        );
        std::fs::remove_file(&value_h).unwrap();
        let out = sweep(p.path())
            .args(["run", "sweeps/inc.toml", "-q", "--force", "--no-analyze"])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{include}: a header that is gone is no hit: the build fails"
        );
        let _ = std::fs::remove_dir_all(p.path().join("output"));
    }
}

/// H1 with real nvcc: a host-only `.cu` (no GPU needed) whose header comes through `-I`.
#[test]
fn with_nvcc_a_header_through_a_flag_rebuilds_when_it_changes() {
    if crate::nvcc::skip_without_nvcc() {
        return;
    }
    let p = project();
    let elsewhere = tempfile::tempdir().unwrap();
    let value_h = elsewhere.path().join("value.h");
    std::fs::write(&value_h, "#define VALUE 10\n").unwrap();
    including_bench(
        p.path(),
        "cu",
        "<value.h>",
        &format!(
            "compiler = \"nvcc\"\ngpu = false\nflags = [\"-I{}\"]",
            elsewhere.path().display()
        ),
    );
    run_inc(p.path());
    let run = run_dirs(&p.path().join("output/inc")).pop().unwrap();
    let log = std::fs::read_to_string(run.join("points").join(
        rows(&run.join("results.csv"))[0]["point_id"].as_str(),
    ).join("build.log"))
    .unwrap();
    assert!(log.contains("-MD -MF "), "{log}");
    assert_eq!(
        run_inc(p.path()),
        [("1".into(), "10".into()), ("1".into(), "20".into())]
    );
    std::fs::write(&value_h, "#define VALUE 7\n").unwrap();
    assert_eq!(
        run_inc(p.path()),
        [("0".into(), "7".into()), ("0".into(), "14".into())],
        "the header changed, built again"
    );
}
