//! Issue 38's last high item: Tera has no limits of its own. A template that doubles a string
//! with `set_global` took the machine's memory (sweep killed by the OOM killer, or aborted, its
//! manifest left `running`); nested `range`s ran for ever. Templates are rendered in a worker
//! process with a memory limit (1 GiB) and a time limit (10 s of CPU time per template and point,
//! 60 s of wall-clock time). sweep
//! itself runs here under `ulimit -v` (4 GB), so that the tree before the fix could not take the
//! machine down: there it aborted (exit 134) instead of naming the template.

use crate::common::{manifest, project, rows, run_dirs, stderr, sweep};
use crate::hardening::{unfinish, write};
use std::path::Path;
use std::time::{Duration, Instant};

/// A template whose string doubles 60 times: 2^60 bytes, were there no limit.
const DOUBLING: &str = "{% set_global s = \"x\" %}{% for i in range(end=60) %}{% set_global s = s ~ s %}{% endfor %}#define LEN {{ s | length }}\n";

/// Nested ranges: 10^12 turns that render nothing.
const ENDLESS: &str =
    "{% for i in range(end=1000000) %}{% for j in range(end=1000000) %}{% endfor %}{% endfor %}\n";

/// A bench `tpl` (a C program printing `THREADS` MFlops, and `extra.h` from `extra`, a template)
/// and its spec `sweeps/tpl.toml` (threads 1..`last`).
fn bench(p: &Path, extra: &str, last: u32) {
    write(
        p,
        "cuda/tpl/tpl.c",
        "#include \"params.h\"\n#include \"extra.h\"\n#include <stdio.h>\nint main(void) {\n  printf(\"MFlops: %d\\n\", THREADS);\n  return 0;\n}\n",
    );
    write(
        p,
        "cuda/tpl/params.h.tera",
        "#define THREADS {{ threads }}\n",
    );
    write(p, "cuda/tpl/extra.h.tera", extra);
    write(
        p,
        "sweeps/tpl.toml",
        &format!("bench = \"tpl\"\ncompiler = \"cc\"\n[[axis]]\nname = \"threads\"\nrange = [1, {last}]\n[[metric]]\npattern = \"mflops\"\n"),
    );
}

/// `sweep ARGS` in `p` (as [`crate::common::sweep`] runs it) under a 4 GB address-space limit
/// and a 120 s timeout: (exit code, stderr, time taken).
fn bounded_sweep(p: &Path, args: &[&str]) -> (Option<i32>, String, Duration) {
    let t0 = Instant::now();
    let out = std::process::Command::new("bash")
        .args([
            "-c",
            "ulimit -v 4000000 && exec timeout -s KILL 120 \"$0\" \"$@\"",
        ])
        .arg(assert_cmd::cargo::cargo_bin("sweep"))
        .args(args)
        .current_dir(p)
        .env("SWEEP_LOCK_DIR", p.join("locks"))
        .env("RUST_BACKTRACE", "0")
        .env_remove("SWEEP_CACHE")
        .output()
        .unwrap();
    (out.status.code(), stderr(&out), t0.elapsed())
}

/// No run folder of `sweep` under `output/` says `running`.
fn none_running(p: &Path, sweep: &str) {
    let dir = p.join("output").join(sweep);
    if !dir.exists() {
        return;
    }
    for run in run_dirs(&dir) {
        if run.join("manifest.json").exists() {
            assert_ne!(manifest(&run)["state"], "running", "{}", run.display());
        }
    }
}

#[test]
fn a_template_that_doubles_a_string_is_stopped_at_the_memory_limit_and_named() {
    let p = project();
    bench(p.path(), DOUBLING, 2);
    for args in [
        &["run", "sweeps/tpl.toml", "-q", "--no-analyze"][..],
        &["build", "sweeps/tpl.toml"],
        &["render", "sweeps/tpl.toml", "--point", "1"],
    ] {
        let (code, err, took) = bounded_sweep(p.path(), args);
        let point = if args[0] == "render" { 2 } else { 1 };
        assert_eq!(
            err,
            format!("error: template `extra.h.tera` needs more than 1 GiB of memory for point threads={point}, the limit of rendering: it was stopped (hint: a header holds constants; does a loop grow a string or a list without end, e.g. `{{% set_global s = s ~ s %}}`?)\n"),
            "{args:?}"
        );
        assert_eq!(code, Some(3), "{args:?}: bad input");
        assert!(took < Duration::from_secs(60), "{args:?} took {took:?}");
        none_running(p.path(), "tpl");
    }
}

#[test]
fn a_template_that_never_ends_is_stopped_at_the_time_limit_and_named() {
    let p = project();
    bench(p.path(), ENDLESS, 2);
    let (code, err, took) =
        bounded_sweep(p.path(), &["run", "sweeps/tpl.toml", "-q", "--no-analyze"]);
    // 10 s of CPU time; on a machine too busy to give it that within a minute, the 60 s of
    // wall-clock time stop it first.
    let limits = ["10 s of CPU time", "60 s of wall-clock time"].map(|limit| {
        format!("error: template `extra.h.tera` renders for more than {limit} for point threads=1, the limit of rendering: it was stopped (hint: a header holds constants; does a loop run away, e.g. nested `range`s?)\n")
    });
    assert!(limits.contains(&err), "{err}");
    assert_eq!(code, Some(3));
    assert!(took < Duration::from_secs(75), "took {took:?}");
    none_running(p.path(), "tpl");
}

/// A point that runs away past the first (which the run checks before it starts) fails alone,
/// with the reason in its row; the worker is replaced, the next point renders, no row is lost.
#[test]
fn a_later_point_that_runs_away_fails_alone_and_the_run_goes_on() {
    let p = project();
    bench(
        p.path(),
        &format!("{{% if threads == 2 %}}{DOUBLING}{{% endif %}}#define SEEN {{{{ threads }}}}\n"),
        3,
    );
    let (code, err, took) =
        bounded_sweep(p.path(), &["run", "sweeps/tpl.toml", "-q", "--no-analyze"]);
    assert_eq!(code, Some(1), "some points failed: {err}");
    assert!(took < Duration::from_secs(60), "took {took:?}");
    let run = run_dirs(&p.path().join("output/tpl")).pop().unwrap();
    assert_eq!(manifest(&run)["state"], "finished");
    let got: Vec<(String, String, String)> = rows(&run.join("results.csv"))
        .into_iter()
        .map(|r| {
            (
                r["threads"].clone(),
                r["status"].clone(),
                r["mflops"].clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("1".into(), "ok".into(), "1".into()),
            ("2".into(), "build_failed".into(), "".into()),
            ("3".into(), "ok".into(), "3".into()),
        ]
    );
    let row = &rows(&run.join("results.csv"))[1];
    assert!(
        row["error"].starts_with(
            "template `extra.h.tera` needs more than 1 GiB of memory for point threads=2"
        ),
        "{}",
        row["error"]
    );
}

/// A resumed run renders through the worker too: a template made to run away since is refused
/// before anything runs, and the run stays as it was (interrupted, its rows kept).
#[test]
fn a_resume_whose_template_runs_away_is_refused_and_the_run_kept() {
    let p = project();
    bench(p.path(), "#define FINE 1\n", 2);
    let out = sweep(p.path())
        .args(["run", "sweeps/tpl.toml", "-q", "--no-analyze"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let run = run_dirs(&p.path().join("output/tpl")).pop().unwrap();
    unfinish(&run, 1);
    write(p.path(), "cuda/tpl/extra.h.tera", DOUBLING);
    let (code, err, _) = bounded_sweep(p.path(), &["resume", &run.display().to_string()]);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.starts_with(
            "error: template `extra.h.tera` needs more than 1 GiB of memory for point threads=1"
        ),
        "{err}"
    );
    assert_eq!(manifest(&run)["state"], "interrupted");
    assert_eq!(rows(&run.join("results.csv")).len(), 1);
}

/// The worker renders byte for byte what Tera renders in this process: integers, strings with
/// every kind of character, floats that need all their digits.
#[test]
fn an_honest_template_renders_in_the_worker_exactly_as_in_process() {
    let p = project();
    bench(
        p.path(),
        "#define A {{ a }}\n#define B {{ b }}\n#define C {{ c }}\n#define S \"{{ s }}\"\n// {{ point_id }} {{ bench }}\n{% for i in range(end=3) %}{{ i }}{% endfor %}\n",
    2);
    write(
        p.path(),
        "sweeps/tpl.toml",
        "bench = \"tpl\"\ncompiler = \"cc\"\n[vars]\na = 0.1\nb = 1e-300\nc = 3.141592653589793\ns = \"é \\\\ \\\" \\t ü\"\n[[axis]]\nname = \"threads\"\nvalues = [1, 9223372036854775807]\n[[metric]]\npattern = \"mflops\"\n",
    );
    let spec = sweep::spec::Spec::load(&p.path().join("sweeps/tpl.toml")).unwrap();
    let bench = sweep::render::Bench::locate(&spec).unwrap();
    for (i, point) in sweep::points::expand(&spec).unwrap().iter().enumerate() {
        let out_dir = p.path().join(format!("headers{i}"));
        let out = sweep(p.path())
            .args([
                "render",
                "sweeps/tpl.toml",
                "--point",
                &i.to_string(),
                "--out",
            ])
            .arg(&out_dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let here = sweep::render::render(&bench, &spec, point).unwrap();
        assert_eq!(here.len(), 2);
        for r in here {
            let there = std::fs::read_to_string(out_dir.join(&r.file)).unwrap();
            assert_eq!(there, r.text, "{}", r.file);
        }
    }
}

/// The worker is no command for people: a line that is no request of sweep's is refused in one
/// line (exit 3), and it is not listed in `sweep --help`.
#[test]
fn the_render_worker_refuses_what_is_no_request_and_is_hidden() {
    let p = project();
    let out = sweep(p.path())
        .arg("render-worker")
        .write_stdin("{% for %}\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        stderr(&out),
        "error: `render-worker` reads rendering requests of sweep's own, one a line (hint: it is no command for people)\n"
    );
    let out = sweep(p.path()).arg("--help").output().unwrap();
    assert!(!crate::common::stdout(&out).contains("render-worker"));
}

/// A macro that calls itself without end overflowed sweep's stack (SIGABRT, exit 134): the
/// worker's stack overflows instead, and the template is named.
#[test]
fn a_macro_that_calls_itself_without_end_is_named_not_a_crash() {
    let p = project();
    bench(
        p.path(),
        "{% macro f(n) %}{{ self::f(n=n+1) }}{% endmacro f %}{{ self::f(n=1) }}\n",
        2,
    );
    let (code, err, _) = bounded_sweep(p.path(), &["run", "sweeps/tpl.toml", "-q", "--no-analyze"]);
    assert_eq!(
        err,
        "error: template `extra.h.tera` could not be rendered for point threads=1: the renderer overflowed its stack (does a macro call itself without end?) (hint: `sweep render SPEC --point N` renders one point alone)\n"
    );
    assert_eq!(code, Some(3));
    none_running(p.path(), "tpl");
}
