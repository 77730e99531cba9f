//! End-to-end tests of the `sweep` command on real programs built with the host C compiler
//! (tests/project/cuda/hostsaw), the faulty ones included.

use crate::common;

use crate::common::{
    manifest, on_path, project, rows, run_dirs, stderr, stdout, sweep, sweep_process,
};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn write(dir: &Path, rel: &str, text: &str) -> PathBuf {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

/// The only run folder of a sweep.
fn run_dir(dir: &Path, sweep: &str) -> PathBuf {
    let runs = run_dirs(&dir.join("output").join(sweep));
    assert_eq!(runs.len(), 1, "{runs:?}");
    runs[0].clone()
}

#[test]
fn every_fault_gets_its_status_and_a_one_line_reason() {
    let p = project();
    let out = sweep(p.path())
        .args(["run", "sweeps/faults.toml"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "some points failed: {}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("panicked"));
    let rows = rows(&run_dir(p.path(), "faults").join("results.csv"));
    assert_eq!(rows.len(), 18);
    let want = [
        ("ok", "ok"),
        ("crash", "run_failed"),
        ("hang", "timeout"),
        ("garbage", "no_metric"),
        ("fail", "run_failed"),
        ("wrong", "wrong_result"),
        ("compile_error", "build_failed"),
        ("noisy", "noisy"),
        ("unstable", "unstable"),
    ];
    for row in &rows {
        let (_, status) = want.iter().find(|(m, _)| *m == row["mode"]).unwrap();
        assert_eq!(&row["status"], status, "{row:?}");
        let error = &row["error"];
        assert!(!error.contains('\n'));
        match row["status"].as_str() {
            "ok" | "noisy" | "unstable" => {
                assert!(error.is_empty());
                let t: f64 = row["threads"].parse().unwrap();
                let want = 1000.0 * t / (t / 16.0).ceil();
                assert_eq!(row["mflops"].parse::<f64>().unwrap(), want);
                assert_eq!(row["saw_mflops"].parse::<f64>().unwrap(), want);
            }
            _ => {
                assert!(
                    row["mflops"].is_empty(),
                    "failed points have no metric: {row:?}"
                );
                let log = error.rsplit("(log: ").next().unwrap().trim_end_matches(')');
                assert!(
                    p.path().join(log).is_file(),
                    "the message names a log that exists: {error}"
                );
            }
        }
    }
    let by_mode = |m: &str| rows.iter().find(|r| r["mode"] == m).unwrap()["error"].clone();
    assert!(by_mode("crash").starts_with("program killed by signal 11 (SIGSEGV) (log: "));
    assert!(by_mode("fail")
        .starts_with("program failed with exit code 1: cudaMalloc failed: out of memory (log: "));
    assert!(by_mode("hang").starts_with("program timed out after 1 s"));
    assert!(by_mode("wrong").starts_with("wrong result: sum is 41, expected 42"));
    assert!(by_mode("compile_error").contains("this point does not build"));
    assert!(by_mode("garbage").starts_with("no metric `mflops`, `saw_mflops` in the output"));
    let unstable = rows.iter().find(|r| r["mode"] == "unstable").unwrap();
    assert_eq!(unstable["saw_spread"], "0.25");
    assert_eq!(unstable["saw_placements"], "8");
    assert_eq!(unstable["saw_sm_mhz"], "1980");
    let ok = rows.iter().find(|r| r["mode"] == "ok").unwrap();
    assert_eq!(
        (ok["saw_spread"].as_str(), ok["saw_placements"].as_str()),
        ("0", "1")
    );
    // The report lists each failed point with its reason, and links its logs beside it rather
    // than naming them again in the reason.
    let html = std::fs::read_to_string(run_dir(p.path(), "faults").join("report.html")).unwrap();
    let crash = rows.iter().find(|r| r["mode"] == "crash").unwrap();
    let id = &crash["point_id"];
    assert!(
        html.contains(&format!(
            "<td>run_failed</td><td>program killed by signal 11 (SIGSEGV)</td><td><a href=\"points/{id}/"
        )),
        "{html}"
    );
}

#[test]
fn a_line_that_is_not_utf8_hides_no_metric() {
    let p = project();
    let out = sweep(p.path())
        .args([
            "run",
            "sweeps/saw.toml",
            "-a",
            "threads=16:17",
            "--set",
            "mode=latin1",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let rows = rows(&run_dir(p.path(), "saw").join("results.csv"));
    let got: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r["status"].as_str(), r["saw_mflops"].as_str()))
        .collect();
    assert_eq!(got, [("ok", "16000"), ("ok", "8500")]);
}

#[test]
fn csv_header_comes_from_the_spec_and_the_manifest_records_the_run() {
    let p = project();
    sweep(p.path())
        .args(["run", "sweeps/saw.toml", "--no-analyze"])
        .assert()
        .success();
    let dir = run_dir(p.path(), "saw");
    let text = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    assert!(text.starts_with(
        "point_id,index,threads,status,saw_mflops,saw_median_mflops,saw_stddev_mflops,saw_min_mflops,saw_max_mflops,saw_rel_ci,saw_samples,saw_throttled,saw_spread,saw_placements,saw_sm_mhz,saw_repeat_spread,saw_status,build_s,run_s,cached,gpu_index,gpu_name,gpu_uuid,error\r\n"
    ));
    let rows = rows(&dir.join("results.csv"));
    assert_eq!(
        rows.iter()
            .map(|r| r["threads"].parse::<i64>().unwrap())
            .collect::<Vec<_>>(),
        (1..=64).collect::<Vec<_>>()
    );
    let m = manifest(&dir);
    assert_eq!(m["state"], "finished");
    assert_eq!(m["spec_hash"].as_str().unwrap().len(), 64);
    assert!(m["spec"].as_str().unwrap().contains("bench = \"hostsaw\""));
    assert!(m["compiler_version"].as_str().unwrap().len() > 3);
    assert!(!m["host"].as_str().unwrap().is_empty());
    assert!(m["finished"].is_string() && m["started"].is_string());
    // The sweep that made the run: its version, and the commit of its source (build.rs).
    assert_eq!(m["sweep_version"], env!("CARGO_PKG_VERSION"));
    let commit = m["sweep_commit"].as_str().unwrap();
    assert_eq!(commit, env!("SWEEP_COMMIT"));
    let sha = commit.strip_suffix("-dirty").unwrap_or(commit);
    assert!(
        commit == "unknown" || (sha.len() == 40 && sha.chars().all(|c| c.is_ascii_hexdigit())),
        "{commit}"
    );
    let point = dir.join("points").join(&rows[0]["point_id"]);
    for f in [
        "params.h",
        "build.log",
        "stdout.txt",
        "stderr.txt",
        "run.cmd",
    ] {
        assert!(point.join(f).is_file(), "{f} kept in the point's folder");
    }
    assert!(std::fs::read_to_string(point.join("build.log"))
        .unwrap()
        .starts_with("$ cc "));
}

#[test]
fn semicolon_dialect_for_decimal_comma_locales() {
    let p = project();
    write(p.path(), "cuda/hostsaw/extra.txt", "");
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "values = [3]");
    write(
        p.path(),
        "sweeps/one.toml",
        &spec.replace("[analyze]\nx = \"threads\"\n", ""),
    );
    sweep(p.path())
        .args(["run", "sweeps/one.toml", "--csv-dialect", "semicolon"])
        .assert()
        .success();
    let text = std::fs::read_to_string(run_dir(p.path(), "one").join("results.csv")).unwrap();
    let line = text.lines().nth(1).unwrap();
    assert!(text
        .lines()
        .next()
        .unwrap()
        .starts_with("point_id;index;threads;status;saw_mflops;"));
    assert!(
        line.contains(";3;ok;3000;3000;0;3000;3000;0,001;10;0;"),
        "{line}"
    );
}

#[test]
fn a_resumed_run_keeps_its_dialect_and_old_id_runs_are_not_resumed() {
    let p = project();
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "values = [3, 4]")
        .replace("[analyze]\nx = \"threads\"\n", "");
    write(p.path(), "sweeps/two.toml", &spec);
    sweep(p.path())
        .args(["run", "sweeps/two.toml", "-q"])
        .assert()
        .success();
    let run = run_dir(p.path(), "two");
    let edit = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut m = manifest(&run);
        f(&mut m);
        std::fs::write(run.join("manifest.json"), m.to_string()).unwrap();
    };
    // Unfinished, so that `run` resumes it.
    edit(&|m| m["state"] = "interrupted".into());
    let out = sweep(p.path())
        .args(["run", "sweeps/two.toml", "-q", "--csv-dialect", "semicolon"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("writes the comma CSV dialect; --csv-dialect semicolon would mix"),
        "{}",
        stderr(&out)
    );
    // Ids of the scheme before the `p` prefix: refused, and --force starts a new run.
    edit(&|m| {
        let ids = m["point_ids"].as_array_mut().unwrap();
        for id in ids.iter_mut() {
            *id = id.as_str().unwrap().trim_start_matches('p').into();
        }
    });
    let out = sweep(p.path())
        .args(["run", "sweeps/two.toml", "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("lack the `p` prefix"),
        "{}",
        stderr(&out)
    );
    sweep(p.path())
        .args(["run", "sweeps/two.toml", "-q", "--force"])
        .assert()
        .success();
    assert_eq!(run_dirs(&p.path().join("output/two")).len(), 2);
    // `export` of a folder that is no run says so in one line.
    let out = sweep(p.path()).args(["export", "sweeps"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("is not a run folder"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn export_csv_into_a_run_folder_is_refused_and_the_run_kept() {
    let p = project();
    sweep(p.path())
        .args(["run", "sweeps/saw.toml", "-a", "threads=1:4", "-q"])
        .assert()
        .success();
    let run = run_dir(p.path(), "saw");
    let before = std::fs::read(run.join("results.csv")).unwrap();
    // It wrote a semicolon results.csv with a byte-order mark over the run's own, which resume
    // then appended comma rows to.
    let out = sweep(p.path())
        .arg("export")
        .arg(&run)
        .args(["--format", "csv", "--dialect", "semicolon", "--out"])
        .arg(&run)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out)
            .contains("is a run folder: the export's results.csv would replace that run's own"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read(run.join("results.csv")).unwrap(), before);
    sweep(p.path())
        .arg("export")
        .arg(&run)
        .args(["--format", "json,xlsx", "--out"])
        .arg(&run)
        .assert()
        .success();
}

#[test]
fn plan_lists_what_run_does_and_render_prints_headers() {
    let p = project();
    let out = sweep(p.path())
        .args(["plan", "sweeps/faults.toml"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.ends_with("18 points (recheck: one whose samples fall into two groups runs in 2 more processes at the end)\n"),
        "{text}"
    );
    assert!(text.contains("threads=17 mode=noisy"));
    let out = sweep(p.path())
        .args(["render", "sweeps/faults.toml", "--point", "10"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(
            "#define THREADS 17\n#define MODE crash\n#define MODE_CRASH 1\n#define SLOW_MS 0\n"
        ),
        "{text}"
    );
    let out = sweep(p.path())
        .args(["render", "sweeps/faults.toml", "--point", "99"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        stderr(&out),
        "error: point 99 does not exist (hint: the sweep has points 0..17)\n"
    );
    let out = sweep(p.path())
        .args([
            "plan",
            "sweeps/faults.toml",
            "--shard",
            "1/2",
            "--split",
            "points",
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8(out.stdout).unwrap().ends_with(
        "9 points (recheck: one whose samples fall into two groups runs in 2 more processes at the end)\n"
    ));
    let out = sweep(p.path())
        .args([
            "render",
            "sweeps/faults.toml",
            "--point",
            "10",
            "--out",
            "hand",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(p.path().join("hand/params.h")).unwrap(),
        "#define THREADS 17\n#define MODE crash\n#define MODE_CRASH 1\n#define SLOW_MS 0\n"
    );
}

#[test]
fn bad_input_gets_one_line_naming_the_culprit() {
    let p = project();
    let base = "bench = \"hostsaw\"\ncompiler = \"cc\"\n[vars]\nmode = \"ok\"\nslow_ms = 0\n[[axis]]\nname = \"threads\"\nrange = [1, 4]\n[[metric]]\npattern = \"mflops\"\n";
    let cases: Vec<(&str, String, i32, &str)> = vec![
        ("malformed.toml", "bench = \"hostsaw\n".into(), 3, "sweeps/malformed.toml:1:"),
        ("unknown.toml", format!("{base}colour = \"red\"\n"), 3, "sweeps/unknown.toml:11: unknown key `colour`"),
        ("inverted.toml", base.replace("[1, 4]", "[10, 1]"), 3, "sweeps/inverted.toml:6: axis `threads` is empty: 10..1 step 1 (hint: start must be <= end)"),
        ("dropall.toml", format!("filter = \"threads > 99\"\n{base}"), 3, "filter `threads > 99` drops every one of the 4 points"),
        ("undefined.toml", base.replace("mode = \"ok\"\n", ""), 3, "template `params.h.tera` line 2: variable `mode` is not defined for point threads=1"),
        ("nobench.toml", base.replace("hostsaw", "nosuch"), 3, "bench `nosuch` not found: no folder `cuda/nosuch`"),
        ("nocc.toml", base.replace("\"cc\"", "\"no-such-nvcc\"\ngpu = false"), 4, "compiler `no-such-nvcc` not found"),
    ];
    for (file, text, code, want) in cases {
        write(p.path(), &format!("sweeps/{file}"), &text);
        let out = sweep(p.path())
            .args(["run", &format!("sweeps/{file}")])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(code), "{file}: {err}");
        assert!(
            err.starts_with("error: ") && err.contains(want),
            "{file}: got {err:?}, want {want:?}"
        );
        assert_eq!(err.lines().count(), 1, "{file}: one line: {err:?}");
        assert!(!err.contains("panicked"));
    }
    let out = sweep(p.path())
        .args(["run", "sweeps/missing.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).starts_with("error: cannot read spec `sweeps/missing.toml`"));
}

#[test]
fn no_gpu_is_said_before_building_and_build_still_works() {
    if on_path("nvidia-smi") {
        common::skip("this host has nvidia-smi");
        return;
    }
    let p = project();
    // nvcc is the default compiler: running needs a GPU, which this host lacks.
    let text = "bench = \"hostsaw\"\n[vars]\nmode = \"ok\"\nslow_ms = 0\n[[axis]]\nname = \"threads\"\nrange = [1, 2]\n[[metric]]\npattern = \"mflops\"\n";
    write(p.path(), "sweeps/gpu.toml", text);
    let out = sweep(p.path())
        .args(["run", "sweeps/gpu.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    assert!(stderr(&out).starts_with("error: no GPU visible: `nvidia-smi` lists none (hint: `sweep build` compiles without a GPU"));
    assert!(
        !p.path().join("output/gpu").exists(),
        "nothing was built or written"
    );
    // `sweep build` on the same spec with a host compiler standing in for nvcc.
    write(
        p.path(),
        "sweeps/gpu.toml",
        &text.replace("[vars]", "compiler = \"cc\"\ngpu = true\n[vars]"),
    );
    let out = sweep(p.path())
        .args(["build", "sweeps/gpu.toml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("built 2 points, 0 from cache, 0 failed"));
}

#[test]
fn identical_renders_share_a_build_and_later_runs_hit_the_cache() {
    let p = project();
    // `rep` is not used by the template: two points per render.
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 4]")
        .replace(
            "[analyze]\nx = \"threads\"\n",
            "[[axis]]\nname = \"rep\"\nvalues = [1, 2]\n",
        );
    write(p.path(), "sweeps/reps.toml", &spec);
    sweep(p.path())
        .args(["run", "sweeps/reps.toml", "-j", "1"])
        .assert()
        .success();
    let first = rows(&run_dir(p.path(), "reps").join("results.csv"));
    assert_eq!(first.len(), 8);
    assert_eq!(
        first.iter().filter(|r| r["cached"] == "1").count(),
        4,
        "one build per render"
    );
    let out = sweep(p.path()).args(["cache", "stats"]).output().unwrap();
    assert!(stdout(&out).contains("holds 4 builds"), "{}", stdout(&out));
    // A new run (the first finished): every point from the cache.
    sweep(p.path())
        .args(["run", "sweeps/reps.toml"])
        .assert()
        .success();
    let runs = run_dirs(&p.path().join("output/reps"));
    let second = rows(&runs[1].join("results.csv"));
    assert!(
        second
            .iter()
            .all(|r| r["cached"] == "1" && r["build_s"] == "0"),
        "{second:?}"
    );
    // A changed source is a miss.
    let src = p.path().join("cuda/hostsaw/hostsaw.c");
    let text = std::fs::read_to_string(&src).unwrap();
    std::fs::write(&src, format!("{text}\n/* changed */\n")).unwrap();
    sweep(p.path())
        .args(["run", "sweeps/reps.toml"])
        .assert()
        .success();
    let runs = run_dirs(&p.path().join("output/reps"));
    let third = rows(&runs[2].join("results.csv"));
    assert_eq!(third.iter().filter(|r| r["cached"] == "0").count(), 4);
    let out = sweep(p.path()).args(["cache", "clean"]).output().unwrap();
    assert!(stdout(&out).contains("removed 8 builds"));
}

#[test]
fn cache_clean_of_a_folder_that_is_no_cache_removes_nothing() {
    let p = project();
    // `--cache .` (or SWEEP_CACHE=$HOME): clean used to remove the whole folder; a folder
    // without the cache's marker that holds other files is refused now (exit 2).
    let out = sweep(p.path())
        .args(["cache", "clean", "--cache", "sweeps"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("`sweeps` is not a sweep build cache"),
        "{}",
        stderr(&out)
    );
    assert!(p.path().join("sweeps/saw.toml").is_file());
    let out = sweep(p.path())
        .args(["cache", "stats", "--cache", "."])
        .output()
        .unwrap();
    assert!(stdout(&out).contains("holds 0 builds"), "{}", stdout(&out));
}

#[test]
fn builds_overlap_runs() {
    let p = project();
    // Each run sleeps 150 ms; with 2 build jobs the next builds happen during the runs. 16 points,
    // not 6: under load one slow first build (0.39 s) once let the other job build all 5 others
    // before the first run began (each build ~0.07 s).
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 16]")
        .replace("slow_ms = 0", "slow_ms = 150");
    write(p.path(), "sweeps/slow.toml", &spec);
    sweep(p.path())
        .args(["run", "sweeps/slow.toml", "-j", "2", "--no-analyze"])
        .assert()
        .success();
    let m = manifest(&run_dir(p.path(), "slow"));
    let t = m["timeline"].as_array().unwrap();
    assert_eq!(t.len(), 16);
    let f = |e: &serde_json::Value, k: &str| e[k].as_f64().unwrap();
    let overlapping = t.iter().any(|run| {
        t.iter().any(|b| {
            b != run
                && f(b, "build_start") < f(run, "run_end")
                && f(b, "build_end") > f(run, "run_start")
        })
    });
    assert!(overlapping, "some build ran while another point ran: {t:?}");
    // Runs never overlap each other, and follow sweep order.
    let mut runs: Vec<(f64, f64)> = t
        .iter()
        .map(|e| (f(e, "run_start"), f(e, "run_end")))
        .collect();
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert!(runs.windows(2).all(|w| w[0].1 <= w[1].0), "{runs:?}");
}

#[test]
fn shuffled_order_runs_the_same_points_in_another_order() {
    let p = project();
    sweep(p.path())
        .args([
            "run",
            "sweeps/saw.toml",
            "--order",
            "shuffled",
            "--seed",
            "7",
            "--no-analyze",
        ])
        .assert()
        .success();
    let rows = rows(&run_dir(p.path(), "saw").join("results.csv"));
    let idx: Vec<usize> = rows.iter().map(|r| r["index"].parse().unwrap()).collect();
    assert_ne!(idx, (0..64).collect::<Vec<_>>());
    let mut sorted = idx.clone();
    sorted.sort();
    assert_eq!(sorted, (0..64).collect::<Vec<_>>());
}

/// sweeps/<name>.toml: the host saw at threads = 5 alone, in `mode`, with `extra` lines after
/// the compiler's (e.g. a timeout).
fn one_point_saw(dir: &Path, name: &str, mode: &str, extra: &str) {
    let spec = std::fs::read_to_string(dir.join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "values = [5]")
        .replace("mode = \"ok\"", &format!("mode = \"{mode}\""))
        .replace("[analyze]\nx = \"threads\"\n", "")
        .replace("compiler = \"cc\"", &format!("compiler = \"cc\"\n{extra}"));
    write(dir, &format!("sweeps/{name}.toml"), &spec);
}

#[test]
fn timeouts_leave_no_stray_process() {
    let p = project();
    one_point_saw(p.path(), "spawn", "spawn", "run_timeout_s = 0.5");
    let out = sweep(p.path())
        .args(["run", "sweeps/spawn.toml"])
        .output()
        .unwrap();
    let rows = rows(&run_dir(p.path(), "spawn").join("results.csv"));
    assert_eq!(rows[0]["status"], "timeout", "{}", stderr(&out));
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        !running("sleep 4242"),
        "the program's child outlived the timeout"
    );
}

#[test]
fn a_sigkill_of_sweep_takes_what_its_programs_started_with_it() {
    let p = project();
    one_point_saw(p.path(), "spawn2", "spawn2", "");
    let mut child = sweep_process(p.path())
        .args(["run", "sweeps/spawn2.toml", "-q"])
        .spawn()
        .unwrap();
    // The program forks `sleep 4343` and hangs; wait for the grandchild.
    let t0 = std::time::Instant::now();
    while !running("sleep 4343") {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the program never started its child"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap(); // SIGKILL: sweep runs no handler of its own
    child.wait().unwrap();
    let t1 = std::time::Instant::now();
    while running("sleep 4343") {
        assert!(
            t1.elapsed() < Duration::from_secs(5),
            "the program's child outlived a SIGKILL of sweep"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A process whose command line is `cmd` is running (not a zombie).
fn running(cmd: &str) -> bool {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .any(|e| {
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            let state = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .next()
                .unwrap_or("");
            String::from_utf8_lossy(&cmdline).replace('\0', " ").trim() == cmd && state != "Z"
        })
}

#[test]
fn a_changed_spec_is_refused_for_resume_unless_forced() {
    let p = project();
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml")).unwrap();
    let path = write(
        p.path(),
        "sweeps/chg.toml",
        &spec.replace("slow_ms = 0", "slow_ms = 300"),
    );
    let mut child = sweep_process(p.path())
        .args(["run", "sweeps/chg.toml", "-q"])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::write(&path, spec.replace("slow_ms = 0", "slow_ms = 1")).unwrap();
    let out = sweep(p.path())
        .args(["run", "sweeps/chg.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(
        err.contains("the spec changed since the unfinished run")
            && err.contains("`vars` differ (hint: --force starts a new run)"),
        "{err}"
    );
    sweep(p.path())
        .args(["run", "sweeps/chg.toml", "--force", "--no-analyze"])
        .assert()
        .success();
}

#[test]
fn a_changed_bench_is_refused_for_resume_so_no_run_mixes_two_programs() {
    let p = project();
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml")).unwrap();
    write(
        p.path(),
        "sweeps/bchg.toml",
        &spec.replace("slow_ms = 0", "slow_ms = 300"),
    );
    let mut child = sweep_process(p.path())
        .args(["run", "sweeps/bchg.toml", "-q"])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    child.kill().unwrap();
    child.wait().unwrap();
    let program = p.path().join("cuda/hostsaw/hostsaw.c");
    let text = std::fs::read_to_string(&program).unwrap();
    std::fs::write(&program, format!("{text}\n/* another program */\n")).unwrap();
    let out = sweep(p.path())
        .args(["run", "sweeps/bchg.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(
        err.contains("the bench `hostsaw` changed since the unfinished run")
            && err.lines().count() == 1,
        "{err}"
    );
    // The same program again: the run resumes and finishes.
    std::fs::write(&program, text).unwrap();
    let out = sweep(p.path())
        .args(["run", "sweeps/bchg.toml", "--no-analyze"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("resum") || stdout(&out).contains("resum"));
}

#[test]
fn first_ctrl_c_finishes_the_current_point_and_keeps_the_rows() {
    let p = project();
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml")).unwrap();
    let spec = spec
        .replace("slow_ms = 0", "slow_ms = 200")
        .replace("range = [1, 64]", "range = [1, 20]");
    write(
        p.path(),
        "sweeps/int.toml",
        &spec.replace("[analyze]\nx = \"threads\"\n", ""),
    );
    let child = sweep_process(p.path())
        .args(["run", "sweeps/int.toml", "-q"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: sends SIGINT to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let dir = run_dir(p.path(), "int");
    let done = rows(&dir.join("results.csv"));
    assert!(!done.is_empty() && done.len() < 20, "{}", done.len());
    assert!(
        done.iter().all(|r| r["status"] == "ok"),
        "the point running at Ctrl-C finished normally"
    );
    let m = manifest(&dir);
    assert_eq!(m["state"], "interrupted");
    // Running again resumes the same run folder.
    let out = sweep(p.path())
        .args(["run", "sweeps/int.toml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let all = rows(&run_dir(p.path(), "int").join("results.csv"));
    assert_eq!(all.len(), 20);
}

/// (start, go, end) wall-clock times the gated program printed, in run order.
fn gate_times(dir: &Path) -> Vec<(f64, f64, f64)> {
    lock_times(dir)
        .into_iter()
        .map(|v| (v[0], v[1], v[2]))
        .collect()
}

/// Every time the gated program printed (start, go, end, context from, context to, measuring
/// from), in run order.
fn lock_times(dir: &Path) -> Vec<Vec<f64>> {
    let mut t: Vec<Vec<f64>> = rows(&dir.join("results.csv"))
        .iter()
        .map(|r| {
            let out =
                std::fs::read_to_string(dir.join("points").join(&r["point_id"]).join("stdout.txt"))
                    .unwrap();
            let line = out.lines().find(|l| l.starts_with("times ")).unwrap();
            let v: Vec<f64> = line
                .split(' ')
                .skip(1)
                .map(|kv| kv.split('=').nth(1).unwrap().parse().unwrap())
                .collect();
            v
        })
        .collect();
    t.sort_by(|a, b| a[1].total_cmp(&b[1]));
    t
}

#[test]
fn prestart_overlaps_start_up_but_never_measurements() {
    let p = project();
    let out = sweep(p.path())
        .args(["run", "sweeps/gated.toml", "-j", "2", "--prestart", "1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "warning: `--prestart 1`: a program waits at its gate beside each measurement"
        ),
        "{}",
        stderr(&out)
    );
    let t = gate_times(&run_dir(p.path(), "gated"));
    assert_eq!(t.len(), 8);
    for w in t.windows(2) {
        assert!(
            w[1].1 >= w[0].2,
            "a measurement began before the previous one ended: {w:?}"
        );
    }
    let overlapped = t.windows(2).filter(|w| w[1].0 < w[0].2).count();
    assert!(
        overlapped >= 5,
        "start-up overlapped the previous point in {overlapped} of 7 cases: {t:?}"
    );
    // The measure lock: no program created its "context" while another measured. The run folder
    // is relative (`output/...`) and the program runs in its point folder, so the lock path it
    // gets must be absolute.
    let all = lock_times(&run_dir(p.path(), "gated"));
    for (i, a) in all.iter().enumerate() {
        for (j, b) in all.iter().enumerate() {
            let (ctx0, ctx1, m0, m1) = (a[3], a[4], b[5], b[2]);
            assert!(
                i == j || ctx1 <= m0 || ctx0 >= m1,
                "point {i} created its context while point {j} measured: {a:?} {b:?}"
            );
        }
    }

    // The default starts none ahead: each program starts after the previous one ended.
    let out = sweep(p.path())
        .args(["run", "sweeps/gated.toml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("--prestart"), "{}", stderr(&out));
    let runs = run_dirs(&p.path().join("output/gated"));
    let t = gate_times(&runs[1]);
    assert!(
        t.windows(2).all(|w| w[1].0 >= w[0].2),
        "by default each program starts after the previous ended: {t:?}"
    );
    // The manifest says how each run measured (a resumed run keeps it).
    let prestart = |dir: &Path| {
        let m: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap())
                .unwrap();
        m["prestart"].as_u64()
    };
    assert_eq!(prestart(&runs[0]), Some(1));
    assert_eq!(prestart(&runs[1]), Some(0));
}

#[test]
fn prestart_two_starts_two_programs_ahead_and_still_never_overlaps_measurements() {
    let p = project();
    // Start-up (300 ms) longer than a measurement (100 ms): one program ahead cannot hide it.
    let spec = std::fs::read_to_string(p.path().join("sweeps/gated.toml")).unwrap();
    write(
        p.path(),
        "sweeps/slow_start.toml",
        &spec.replace("startup_ms = 150", "startup_ms = 300"),
    );
    sweep(p.path())
        .args([
            "run",
            "sweeps/slow_start.toml",
            "-j",
            "2",
            "--prestart",
            "2",
        ])
        .assert()
        .success();
    let t = gate_times(&run_dir(p.path(), "slow_start"));
    assert_eq!(t.len(), 8);
    for w in t.windows(2) {
        assert!(
            w[1].1 >= w[0].2,
            "a measurement began before the previous one ended: {w:?}"
        );
    }
    // Point i+2 was started before point i finished measuring: two programs ahead.
    let two_ahead = t.windows(3).filter(|w| w[2].0 < w[0].2).count();
    assert!(
        two_ahead >= 3,
        "point i+2 started during point i in {two_ahead} of 6 cases: {t:?}"
    );
}

#[test]
fn sweep_trace_records_when_each_gate_opened_and_each_exit_was_seen() {
    let p = project();
    let spec = std::fs::read_to_string(p.path().join("sweeps/gated.toml"))
        .unwrap()
        .replace("range = [1, 8]", "range = [1, 2]");
    write(p.path(), "sweeps/traced.toml", &spec);
    sweep(p.path())
        .args(["run", "sweeps/traced.toml"])
        .env("SWEEP_TRACE", "1")
        .assert()
        .success();
    let dir = run_dir(p.path(), "traced");
    for r in rows(&dir.join("results.csv")) {
        let t = std::fs::read_to_string(
            dir.join("points")
                .join(&r["point_id"])
                .join("harness.trace"),
        )
        .unwrap();
        let phases: Vec<&str> = t.lines().map(|l| l.split(' ').nth(2).unwrap()).collect();
        assert_eq!(phases, ["go", "reaped"], "{t}");
    }
    sweep(p.path())
        .args(["run", "sweeps/traced.toml", "--force"])
        .env_remove("SWEEP_TRACE")
        .assert()
        .success();
    let runs = run_dirs(&p.path().join("output/traced"));
    assert!(
        !runs[1].join("points").read_dir().unwrap().any(|e| e
            .unwrap()
            .path()
            .join("harness.trace")
            .exists()),
        "no harness.trace without SWEEP_TRACE"
    );
}

#[test]
fn timing_core_programs_get_one_hardware_queue_unless_the_spec_says_otherwise() {
    let p = project();
    let connections = |dir: &Path| -> Vec<String> {
        rows(&dir.join("results.csv"))
            .iter()
            .map(|r| {
                let out = std::fs::read_to_string(
                    dir.join("points").join(&r["point_id"]).join("stdout.txt"),
                )
                .unwrap();
                let line = out.lines().find(|l| l.starts_with("connections ")).unwrap();
                line["connections ".len()..].to_string()
            })
            .collect()
    };
    let spec = std::fs::read_to_string(p.path().join("sweeps/gated.toml"))
        .unwrap()
        .replace("range = [1, 8]", "range = [1, 2]");
    write(p.path(), "sweeps/two.toml", &spec);
    sweep(p.path())
        .args(["run", "sweeps/two.toml"])
        .env_remove("CUDA_DEVICE_MAX_CONNECTIONS")
        .assert()
        .success();
    assert_eq!(connections(&run_dir(p.path(), "two")), ["1", "1"]);
    write(
        p.path(),
        "sweeps/queues.toml",
        &format!("{spec}[env]\nCUDA_DEVICE_MAX_CONNECTIONS = \"8\"\n"),
    );
    sweep(p.path())
        .args(["run", "sweeps/queues.toml"])
        .env_remove("CUDA_DEVICE_MAX_CONNECTIONS")
        .assert()
        .success();
    assert_eq!(connections(&run_dir(p.path(), "queues")), ["8", "8"]);
}

/// Processes whose executable lies under `dir` (zombies aside).
fn processes_under(dir: &Path) -> Vec<String> {
    let dir = dir.canonicalize().unwrap();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| {
            let exe = std::fs::read_link(e.path().join("exe")).ok()?;
            exe.starts_with(&dir).then(|| exe.display().to_string())
        })
        .collect()
}

#[test]
fn second_ctrl_c_kills_the_running_program_and_exits_130() {
    let p = project();
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml")).unwrap();
    let spec = spec
        .replace("mode = \"ok\"", "mode = \"hang\"")
        .replace("compiler = \"cc\"", "compiler = \"cc\"\nrun_timeout_s = 60")
        .replace("[analyze]\nx = \"threads\"\n", "");
    write(p.path(), "sweeps/hang.toml", &spec);
    let child = sweep_process(p.path())
        .args(["run", "sweeps/hang.toml", "-q"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the first program hangs.
    let t0 = std::time::Instant::now();
    while processes_under(p.path()).is_empty() && t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !processes_under(p.path()).is_empty(),
        "the hanging program started"
    );
    let pid = child.id() as i32;
    // SAFETY: sends SIGINT to our own child, twice.
    unsafe { libc::kill(pid, libc::SIGINT) };
    std::thread::sleep(Duration::from_millis(300));
    unsafe { libc::kill(pid, libc::SIGINT) };
    let t1 = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(
        t1.elapsed() < Duration::from_secs(5),
        "exited at once, not at the 60 s timeout"
    );
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        processes_under(p.path()),
        Vec::<String>::new(),
        "no program left running"
    );
}

/// `saw.toml` over threads 1..64 in the given mode, a control re-run every `every` points.
fn controls_spec(p: &Path, mode: &str, every: u32) {
    let spec = std::fs::read_to_string(p.join("sweeps/saw.toml"))
        .unwrap()
        .replace("mode = \"ok\"", &format!("mode = \"{mode}\""))
        .replace(
            "compiler = \"cc\"",
            &format!("compiler = \"cc\"\ncontrol_every = {every}"),
        );
    write(p, "sweeps/ctl.toml", &spec);
}

#[test]
fn controls_re_run_points_in_fresh_processes_and_measure_the_spread_between_them() {
    let p = project();
    controls_spec(p.path(), "jitter", 8);
    let out = sweep(p.path())
        .args(["run", "sweeps/ctl.toml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let dir = run_dir(p.path(), "ctl");
    assert_eq!(rows(&dir.join("results.csv")).len(), 64);
    let controls = rows(&dir.join("controls.csv"));
    // After every 8 points the middle of the 8 again: threads 5, 13, ..., 61.
    let threads: Vec<&str> = controls.iter().map(|r| r["threads"].as_str()).collect();
    assert_eq!(threads, ["5", "13", "21", "29", "37", "45", "53", "61"]);
    for (n, r) in controls.iter().enumerate() {
        assert_eq!(r["status"], "ok", "{r:?}");
        let log = dir
            .join("points")
            .join(&r["point_id"])
            .join(format!("control-{n}"))
            .join("stdout.txt");
        assert!(log.is_file(), "{log:?}");
    }
    // Every process is off by one of -1, -0.5, 0, 0.5, 1 %: pairs differ by at most about 2 %.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("analysis.json")).unwrap()).unwrap();
    let b = &json["between_processes"][0];
    assert_eq!(b["column"], "saw_mflops");
    assert_eq!(b["pairs"], 8);
    let max = b["max_diff"].as_f64().unwrap();
    assert!(max > 0.0 && max < 0.021, "{b}");
    let u95 = b["u95"].as_f64().unwrap();
    assert!(u95 < 0.05, "{b}");
    // The run's end names the readings; they are in analysis.md.
    assert!(stdout(&out).contains("analysis.md"), "{}", stdout(&out));
    let md = std::fs::read_to_string(dir.join("analysis.md")).unwrap();
    assert!(
        md.contains("Between processes (8 points measured again"),
        "{md}"
    );
    assert!(
        common::squeeze(&md).contains("| saw_mflops | 8 | ±"),
        "{md}"
    );
    assert!(
        md.contains("between processes a value scatters by ±"),
        "{md}"
    );

    // The same program without jitter: the pairs agree, and so the spread is 0.
    let q = project();
    controls_spec(q.path(), "ok", 8);
    sweep(q.path())
        .args(["run", "sweeps/ctl.toml"])
        .assert()
        .success();
    let dir = run_dir(q.path(), "ctl");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("analysis.json")).unwrap()).unwrap();
    assert_eq!(json["between_processes"][0]["u95"].as_f64(), Some(0.0));
    assert_eq!(json["between_processes"][0]["max_diff"].as_f64(), Some(0.0));
}

#[test]
fn controls_off_write_no_file_and_compare_counts_the_spread_between_processes() {
    let p = project();
    controls_spec(p.path(), "ok", 0);
    sweep(p.path())
        .args(["run", "sweeps/ctl.toml", "--no-analyze"])
        .assert()
        .success();
    let off = run_dir(p.path(), "ctl");
    assert!(!off.join("controls.csv").exists());

    // A run whose processes differ by up to +-1 %: compare gives its points the spread between
    // processes on top of their rel_ci (0.1 %); the run without controls keeps rel_ci alone.
    let q = project();
    controls_spec(q.path(), "jitter", 4);
    sweep(q.path())
        .args(["run", "sweeps/ctl.toml", "--no-analyze"])
        .assert()
        .success();
    let jit = run_dir(q.path(), "ctl");
    let text = std::fs::read_to_string(jit.join("controls.csv")).unwrap();
    assert_eq!(text.lines().count(), 1 + 16);
    let out = sweep(q.path())
        .args(["compare"])
        .arg(&jit)
        .arg(&off)
        .arg("--out")
        .arg(q.path().join("cmp"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let cmp = rows(&q.path().join("cmp/compare.csv"));
    assert_eq!(cmp.len(), 64);
    let u_a: f64 = cmp[0]["u_a"].parse().unwrap();
    assert!(
        u_a > 0.001,
        "the controls widen A's uncertainty: {:?}",
        cmp[0]
    );
    let u_b: f64 = cmp[0]["u_b"].parse().unwrap();
    assert!(
        (u_b - 0.001).abs() < 1e-9,
        "B has no controls: {:?}",
        cmp[0]
    );
}

/// `saw.toml` over threads 1..8 in `mode`, with `extra` lines after the compiler, as `sweeps/<name>`.
fn saw_1_8_spec(p: &Path, name: &str, mode: &str, extra: &str) {
    let spec = std::fs::read_to_string(p.join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 8]")
        .replace("mode = \"ok\"", &format!("mode = \"{mode}\""))
        .replace("compiler = \"cc\"", &format!("compiler = \"cc\"\n{extra}"));
    write(p, &format!("sweeps/{name}"), &spec);
}

/// `saw.toml` over threads 1..8 with `repeat = 3` and the given mode.
fn repeat_spec(p: &Path, mode: &str) {
    saw_1_8_spec(p, "rep.toml", mode, "repeat = 3");
}

#[test]
fn repeat_runs_every_point_in_k_processes_and_keeps_the_median() {
    let p = project();
    repeat_spec(p.path(), "varies");
    let out = sweep(p.path())
        .args(["run", "sweeps/rep.toml", "--no-analyze"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    for pass in 1..=3 {
        assert!(
            stderr(&out).contains(&format!("pass {pass} of 3")),
            "{}",
            stderr(&out)
        );
    }
    let plan = sweep(p.path())
        .args(["plan", "sweeps/rep.toml"])
        .output()
        .unwrap();
    assert!(
        stdout(&plan).ends_with(
            "8 points, each in 3 processes (repeat: pass 1 in this order, the others shuffled)\n"
        ),
        "{}",
        stdout(&plan)
    );
    let dir = run_dir(p.path(), "rep");
    let table = rows(&dir.join("results.csv"));
    assert_eq!(table.len(), 8);
    for r in &table {
        // Three processes gave v, 1.1 v and 1.2 v: the median is 1.1 v, the spread 0.2 / 1.1.
        let t: f64 = r["threads"].parse().unwrap();
        let v = 1000.0 * t / (t / 16.0).ceil();
        let got: f64 = r["saw_mflops"].parse().unwrap();
        assert!((got / (1.1 * v) - 1.0).abs() < 1e-6, "{r:?}");
        let spread: f64 = r["saw_repeat_spread"].parse().unwrap();
        assert!((spread - 0.2 / 1.1).abs() < 1e-6, "{r:?}");
        assert_eq!(r["status"], "unstable", "processes 18 % apart: {r:?}");
        assert_eq!(r["saw_samples"], "30", "samples add up over the passes");
        let count =
            std::fs::read_to_string(dir.join("points").join(&r["point_id"]).join("runs.count"));
        assert_eq!(
            count.unwrap().trim(),
            "3",
            "each point ran in three processes"
        );
    }
    for pass in 0..3 {
        let raw = rows(&dir.join(format!("passes/pass-{pass}.csv")));
        assert_eq!(raw.len(), 8, "pass {pass}");
    }
    // Passes after the first run in shuffled orders of their own.
    let order = |pass: usize| -> Vec<String> {
        rows(&dir.join(format!("passes/pass-{pass}.csv")))
            .iter()
            .map(|r| r["threads"].clone())
            .collect()
    };
    assert_eq!(order(0), (1..=8).map(|t| t.to_string()).collect::<Vec<_>>());
    assert_ne!(order(1), order(0));
    assert_ne!(order(1), order(2));
}

#[test]
fn repeat_of_a_steady_program_is_ok_and_a_failure_in_any_pass_fails_the_point() {
    let p = project();
    repeat_spec(p.path(), "ok");
    sweep(p.path())
        .args(["run", "sweeps/rep.toml", "--no-analyze"])
        .assert()
        .success();
    let table = rows(&run_dir(p.path(), "rep").join("results.csv"));
    assert!(table
        .iter()
        .all(|r| r["status"] == "ok" && r["saw_repeat_spread"] == "0"));

    // A program that fails in its second run only: a crash is never hidden behind a median.
    let q = project();
    repeat_spec(q.path(), "flaky");
    let out = sweep(q.path())
        .args(["run", "sweeps/rep.toml", "--no-analyze"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let table = rows(&run_dir(q.path(), "rep").join("results.csv"));
    assert_eq!(table.len(), 8);
    for r in &table {
        assert_eq!(r["status"], "run_failed", "{r:?}");
        assert!(r["saw_mflops"].is_empty(), "{r:?}");
        assert!(
            r["error"].starts_with("pass 2 of 3: program failed with exit code 1: second run died"),
            "{r:?}"
        );
    }
}

/// `saw.toml` over threads 1..8 in mode `twostate` (even threads: the first process reports two
/// groups of samples), with `extra` lines after the compiler.
fn twostate_spec(p: &Path, extra: &str) {
    saw_1_8_spec(p, "two.toml", "twostate", extra);
}

#[test]
fn recheck_holds_a_point_whose_samples_fall_into_two_groups_and_keeps_the_median_of_three() {
    let p = project();
    twostate_spec(p.path(), "");
    let out = sweep(p.path())
        .args(["run", "sweeps/two.toml", "--no-analyze"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("held threads=2 for more processes: two groups of samples in `saw`: samples 8.4 % apart, stddev 0.50 of that, placements 1.0 %"),
        "{err}"
    );
    assert!(
        err.contains("recheck 1 of 2: 4 held points in a fresh process each, shuffled"),
        "{err}"
    );
    // At 4 and 8 the second process agrees with the first: only 2 and 6 need a third.
    assert!(err.contains("recheck 2 of 2: 2 held points"), "{err}");
    assert!(
        stdout(&out).contains("recheck: 4 points had two groups of samples in one process; each was measured in more processes"),
        "{}",
        stdout(&out)
    );
    let dir = run_dir(p.path(), "two");
    let table = rows(&dir.join("results.csv"));
    assert_eq!(table.len(), 8, "every point once");
    for r in &table {
        let t: f64 = r["threads"].parse().unwrap();
        let v = 1000.0 * t / (t / 16.0).ceil();
        let got: f64 = r["saw_mflops"].parse().unwrap();
        let runs =
            std::fs::read_to_string(dir.join("points").join(&r["point_id"]).join("runs.count"))
                .unwrap();
        // Odd: one process gave v. 2 mod 4: 0.95 v (two groups), then v and v: the median is
        // v. Multiples of 4: v (two groups), then v: the two agree, the median is v.
        assert!((got / v - 1.0).abs() < 1e-6, "{r:?}");
        if (t as u32).is_multiple_of(4) {
            assert_eq!(runs.trim(), "2", "{r:?}");
            assert_eq!(r["saw_repeat_spread"], "0", "{r:?}");
            assert_eq!(r["status"], "ok", "{r:?}");
            assert_eq!(r["saw_samples"], "20", "{r:?}");
        } else if (t as u32).is_multiple_of(2) {
            assert_eq!(runs.trim(), "3", "{r:?}");
            let spread: f64 = r["saw_repeat_spread"].parse().unwrap();
            assert!((spread - 0.05).abs() < 1e-6, "{r:?}");
            assert_eq!(r["status"], "unstable", "processes 5 % apart: {r:?}");
            assert_eq!(r["saw_samples"], "30", "{r:?}");
        } else {
            assert_eq!(runs.trim(), "1", "{r:?}");
            assert_eq!(r["saw_repeat_spread"], "", "one process: {r:?}");
            assert_eq!(r["status"], "ok", "{r:?}");
        }
    }
    // Every process of a held point is kept, the two-group one first.
    let raw = rows(&dir.join("passes/recheck.csv"));
    assert_eq!(raw.len(), 10, "2 held points x 3 processes, 2 x 2");
    for (t, n, first_of_v) in [("2", 3, 0.95), ("4", 2, 1.0), ("6", 3, 0.95), ("8", 2, 1.0)] {
        let of_t: Vec<&std::collections::BTreeMap<String, String>> =
            raw.iter().filter(|r| r["threads"] == t).collect();
        assert_eq!(of_t.len(), n, "threads {t}");
        let first: f64 = of_t[0]["saw_mflops"].parse().unwrap();
        let v: f64 = 1000.0 * t.parse::<f64>().unwrap();
        assert!(
            (first / (first_of_v * v) - 1.0).abs() < 1e-6,
            "{:?}",
            of_t[0]
        );
    }
    // `plan` says so.
    let plan = sweep(p.path())
        .args(["plan", "sweeps/two.toml"])
        .output()
        .unwrap();
    assert!(
        stdout(&plan).ends_with("8 points (recheck: one whose samples fall into two groups runs in 2 more processes at the end)\n"),
        "{}",
        stdout(&plan)
    );
}

#[test]
fn recheck_zero_keeps_the_first_process_and_repeat_leaves_no_point_to_recheck() {
    let p = project();
    twostate_spec(p.path(), "recheck = 0");
    let out = sweep(p.path())
        .args(["run", "sweeps/two.toml", "--no-analyze"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("held"), "{}", stderr(&out));
    let dir = run_dir(p.path(), "two");
    let table = rows(&dir.join("results.csv"));
    assert_eq!(table.len(), 8);
    assert!(
        !table[0].contains_key("saw_repeat_spread"),
        "{:?}",
        table[0]
    );
    let two = table.iter().find(|r| r["threads"] == "2").unwrap();
    assert_eq!(
        two["saw_mflops"], "1900",
        "the two-group process's value stands: {two:?}"
    );
    assert!(!dir.join("passes").exists());

    // `repeat = 3` measures every point in three processes already: nothing is held.
    let q = project();
    twostate_spec(q.path(), "repeat = 3");
    let out = sweep(q.path())
        .args(["run", "sweeps/two.toml", "--no-analyze"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("held"), "{}", stderr(&out));
    assert!(!run_dir(q.path(), "two").join("passes/recheck.csv").exists());
}

#[test]
fn repeat_zero_is_a_spec_error() {
    let p = project();
    repeat_spec(p.path(), "ok");
    let spec = std::fs::read_to_string(p.path().join("sweeps/rep.toml"))
        .unwrap()
        .replace("repeat = 3", "repeat = 0");
    write(p.path(), "sweeps/rep.toml", &spec);
    let out = sweep(p.path())
        .args(["plan", "sweeps/rep.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("`repeat` is 0 (hint: 1 runs each point once, 3 in three processes)"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn recheck_beyond_its_bound_or_beside_repeat_is_a_spec_error() {
    for (extra, want) in [
        (
            "recheck = 3000000000",
            "`recheck` is 3000000000 (hint: at most 8 more processes for a held point; 2 is the default)",
        ),
        (
            "recheck = 2\nrepeat = 3",
            "`recheck` is 2 with `repeat = 3` (hint: with repeat every point runs in 3 processes already; drop one of them)",
        ),
    ] {
        let p = project();
        twostate_spec(p.path(), extra);
        let out = sweep(p.path())
            .args(["plan", "sweeps/two.toml"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{extra}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{extra}: {}", stderr(&out));
        assert!(stderr(&out).contains("sweeps/two.toml:"), "names the file and line: {}", stderr(&out));
    }
}

#[test]
fn a_held_point_stops_once_the_processes_after_it_agree() {
    // recheck = 4: at 2 mod 4 the held process gave 0.95 v and every later one v, so the second
    // and third agree and the point ends at three processes, not five.
    let p = project();
    twostate_spec(p.path(), "recheck = 4");
    let out = sweep(p.path())
        .args(["run", "sweeps/two.toml", "--no-analyze"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("recheck 2 of 4: 2 held points"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("recheck 3 of 4"), "{}", stderr(&out));
    let dir = run_dir(p.path(), "two");
    for r in rows(&dir.join("results.csv")) {
        let t: u32 = r["threads"].parse().unwrap();
        let runs =
            std::fs::read_to_string(dir.join("points").join(&r["point_id"]).join("runs.count"))
                .unwrap();
        let want = match t % 4 {
            0 => "2",
            2 => "3",
            _ => "1",
        };
        assert_eq!(runs.trim(), want, "{r:?}");
        assert_eq!(r["saw_mflops"], (1000 * t).to_string(), "{r:?}");
    }
}

/// A results CSV written by hand: axes `threads` and `variant`, the metric `mflops` with its
/// uncertainty columns and the time metric `lat_us` (its uncertainty in `lat_rel_ci`, found by the
/// prefix of its column, as in a CSV without a manifest). Each row: (id, threads, variant, status,
/// mflops, rel_ci, spread, repeat_spread, lat_us).
type Pt<'a> = (&'a str, u32, &'a str, &'a str, f64, f64, f64, f64, f64);

fn results_csv(dir: &Path, rel: &str, points: &[Pt]) -> PathBuf {
    let mut text = String::from("point_id,index,threads,variant,status,mflops,mflops_rel_ci,mflops_spread,mflops_repeat_spread,lat_us,lat_rel_ci,build_s,run_s,cached,gpu_index,gpu_name,gpu_uuid,error\r\n");
    for (i, (id, t, v, status, m, ci, sp, rs, lat)) in points.iter().enumerate() {
        let (m, lat) = if ["ok", "noisy", "unstable"].contains(status) {
            (m.to_string(), lat.to_string())
        } else {
            (String::new(), String::new())
        };
        text += &format!(
            "{id},{i},{t},{v},{status},{m},{ci},{sp},{rs},{lat},0,0.1,0.1,false,0,GPU,u,\r\n"
        );
    }
    write(dir, rel, &text)
}

/// compare.csv as (threads, variant, metric) -> row.
fn compare_rows(
    dir: &Path,
) -> std::collections::BTreeMap<(String, String, String), std::collections::BTreeMap<String, String>>
{
    rows(&dir.join("compare.csv"))
        .into_iter()
        .map(|r| {
            (
                (
                    r["threads"].clone(),
                    r["variant"].clone(),
                    r["metric"].clone(),
                ),
                r,
            )
        })
        .collect()
}

#[test]
fn compare_matches_points_by_axis_values_not_ids_or_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = Vec::new();
    let mut b = Vec::new();
    for (i, t) in [1u32, 2, 3, 4].into_iter().enumerate() {
        for v in ["plain", "double"] {
            let m = 100.0 * t as f64;
            a.push(("", t, v, "ok", m, 0.001, 0.0, 0.0, 5.0));
            let k = if v == "double" { 2.0 } else { 1.0 };
            b.push(("", t, v, "ok", m * k, 0.001, 0.0, 0.0, 5.0 + i as f64));
        }
    }
    let ids_a: Vec<String> = (0..a.len()).map(|i| format!("a{i}")).collect();
    let ids_b: Vec<String> = (0..b.len()).map(|i| format!("other-build-{i}")).collect();
    for (p, id) in a.iter_mut().zip(&ids_a) {
        p.0 = id;
    }
    for (p, id) in b.iter_mut().zip(&ids_b) {
        p.0 = id;
    }
    b.reverse();
    let ra = results_csv(dir.path(), "a/results.csv", &a);
    let rb = results_csv(dir.path(), "b/results.csv", &b);
    let out = sweep(dir.path())
        .args(["compare", "a", "b/results.csv", "--out", "cmp"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(ra.is_file() && rb.is_file());
    let text = stdout(&out);
    assert!(
        text.contains("8 points matched by `threads`, `variant`; only in A: 0; only in B: 0."),
        "{text}"
    );
    let rows = compare_rows(&dir.path().join("cmp"));
    assert_eq!(rows.len(), 16, "8 points, 2 metrics: {rows:?}");
    // An overlay chart of A and B per series (2 metrics x 2 variants), SVG and PNG.
    let charts: Vec<String> = std::fs::read_dir(dir.path().join("cmp/charts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(charts.len(), 8, "{charts:?}");
    assert!(
        charts.iter().any(|c| c.ends_with(".png")) && charts.iter().any(|c| c.ends_with(".svg"))
    );
    for t in 1..=4 {
        for (v, k) in [("plain", 1.0), ("double", 2.0)] {
            let r = &rows[&(t.to_string(), v.to_string(), "mflops".to_string())];
            assert_eq!(r["a"].parse::<f64>().unwrap(), 100.0 * t as f64, "{r:?}");
            assert_eq!(r["ratio"].parse::<f64>().unwrap(), k, "{r:?}");
            let want = if k > 1.0 { "faster" } else { "same" };
            assert_eq!(r["verdict"], want, "{r:?}");
            let lat = &rows[&(t.to_string(), v.to_string(), "lat_us".to_string())];
            assert_eq!(
                lat["b"].parse::<f64>().unwrap(),
                5.0 + (t - 1) as f64,
                "{lat:?}"
            );
        }
    }
    // The series: the variant doubled is 2x, the other the same; time went up (slower).
    assert!(
        common::squeeze(&text).contains("| mflops [variant=double] | 4 | 2.000 | 0 | 4 | 0 | 0 |"),
        "{text}"
    );
    assert!(
        common::squeeze(&text).contains("| mflops [variant=plain] | 4 | 1.000 | 4 | 0 | 0 | 0 |"),
        "{text}"
    );
    assert!(
        common::squeeze(&text).contains("| lat_us [variant=plain] | 4 | "),
        "{text}"
    );
    let md = std::fs::read_to_string(dir.path().join("cmp/compare.md")).unwrap();
    assert_eq!(md, text, "compare.md holds what stdout shows");
    let csv = std::fs::read_to_string(dir.path().join("cmp/compare.csv")).unwrap();
    assert!(
        csv.starts_with("threads,variant,metric,a,b,ratio,u_a,u_b,verdict\r\n"),
        "{csv}"
    );
}

#[test]
fn compare_verdicts_respect_both_sides_uncertainty_and_spreads() {
    let dir = tempfile::tempdir().unwrap();
    // (threads, A: mflops, rel_ci, spread, repeat_spread; B: the same; want)
    let cases = [
        (
            1,
            (100.0, 0.01, 0.0, 0.0),
            (103.0, 0.01, 0.0, 0.0),
            "faster",
        ),
        (
            2,
            (100.0, 0.001, 0.06, 0.0),
            (103.0, 0.001, 0.0, 0.0),
            "same",
        ),
        (
            3,
            (100.0, 0.005, 0.0, 0.02),
            (97.0, 0.005, 0.0, 0.0),
            "slower",
        ),
        (4, (100.0, 0.0, 0.0, 0.0), (97.0, 0.005, 0.0, 0.08), "same"),
        (5, (100.0, 0.0, 0.03, 0.0), (90.0, 0.0, 0.03, 0.0), "slower"),
        (6, (100.0, 0.0, 0.22, 0.0), (90.0, 0.0, 0.0, 0.0), "same"),
    ];
    let a: Vec<Pt> = cases
        .iter()
        .map(|&(t, (m, ci, sp, rs), _, _)| ("a", t, "x", "ok", m, ci, sp, rs, 10.0))
        .collect();
    let b: Vec<Pt> = cases
        .iter()
        .map(|&(t, _, (m, ci, sp, rs), _)| {
            (
                "b",
                t,
                "x",
                "unstable",
                m,
                ci,
                sp,
                rs,
                10.0 + t as f64 / 2.0,
            )
        })
        .collect();
    results_csv(dir.path(), "a/results.csv", &a);
    results_csv(dir.path(), "b/results.csv", &b);
    let out = sweep(dir.path())
        .args(["compare", "a", "b", "--out", "cmp"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rows = compare_rows(&dir.path().join("cmp"));
    for (t, _, _, want) in cases {
        let r = &rows[&(t.to_string(), "x".to_string(), "mflops".to_string())];
        assert_eq!(r["verdict"], want, "threads={t}: {r:?}");
    }
    let r = &rows[&("5".to_string(), "x".to_string(), "mflops".to_string())];
    assert_eq!(
        (r["u_a"].as_str(), r["u_b"].as_str()),
        ("0.015", "0.015"),
        "spread / 2"
    );
    let r = &rows[&("4".to_string(), "x".to_string(), "mflops".to_string())];
    assert_eq!(r["u_b"], "0.04", "repeat_spread / 2 beats rel_ci");
    // A time: 10 us -> 10.5 us with no uncertainty is slower, not faster.
    let r = &rows[&("1".to_string(), "x".to_string(), "lat_us".to_string())];
    assert_eq!(
        (r["ratio"].as_str(), r["verdict"].as_str()),
        ("1.05", "slower")
    );
}

#[test]
fn compare_names_points_of_one_run_only_and_failed_points() {
    let dir = tempfile::tempdir().unwrap();
    let pts = |ts: &[u32], failed: u32| -> Vec<Pt> {
        ts.iter()
            .map(|&t| {
                let s = if t == failed { "run_failed" } else { "ok" };
                ("p", t, "x", s, 100.0, 0.001, 0.0, 0.0, 1.0)
            })
            .collect()
    };
    results_csv(
        dir.path(),
        "a/results.csv",
        &pts(&[1, 2, 3, 4, 5, 6, 7, 8, 9], 2),
    );
    results_csv(
        dir.path(),
        "b/results.csv",
        &pts(&[3, 4, 5, 6, 7, 8, 9, 10], 4),
    );
    let out = sweep(dir.path())
        .args(["compare", "a", "b"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("7 points matched by `threads`, `variant`; only in A: 2 (threads=1, variant=x; threads=2, variant=x); only in B: 1 (threads=10, variant=x)."),
        "{text}"
    );
    assert!(
        text.contains("Failed (not compared): 1 (threads=4, variant=x (B run_failed))."),
        "{text}"
    );
    assert!(
        common::squeeze(&text).contains("| mflops [variant=x] | 6 | 1.000 | 6 | 0 | 0 | 1 |"),
        "{text}"
    );
}

#[test]
fn compare_fail_on_slower_exits_5_only_beyond_the_allowed_loss() {
    let dir = tempfile::tempdir().unwrap();
    let a: Vec<Pt> = (1..=4)
        .map(|t| ("a", t, "x", "ok", 100.0, 0.001, 0.0, 0.0, 1.0))
        .collect();
    // threads=2 loses 10 %, threads=3 loses 30 % but within its spread (0.8 / 2 = 40 %).
    let b: Vec<Pt> = (1..=4)
        .map(|t| match t {
            2 => ("b", t, "x", "ok", 90.0, 0.001, 0.0, 0.0, 1.0),
            3 => ("b", t, "x", "unstable", 70.0, 0.001, 0.8, 0.0, 1.0),
            _ => ("b", t, "x", "ok", 100.0, 0.001, 0.0, 0.0, 1.0),
        })
        .collect();
    results_csv(dir.path(), "a/results.csv", &a);
    results_csv(dir.path(), "b/results.csv", &b);
    let run = |pct: &str| {
        sweep(dir.path())
            .args(["compare", "a", "b", &format!("--fail-on-slower{pct}")])
            .output()
            .unwrap()
    };
    let out = run("=5");
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "error: 1 of 8 compared values slower than A by more than 5 % (worst: `mflops` at threads=2, variant=x, 10.0 % slower)\n"
    );
    assert!(
        stdout(&out).contains("| mflops [variant=x] |"),
        "the table is still printed"
    );
    let out = run("=15");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = sweep(dir.path())
        .args(["compare", "a", "b"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "without the option, slower is no failure"
    );
    let out = run("=-1");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--fail-on-slower `-1` is not a percentage"));
}

#[test]
fn compare_bad_input_gets_one_line_naming_the_culprit() {
    let dir = tempfile::tempdir().unwrap();
    let pt: Pt = ("a", 1, "x", "ok", 100.0, 0.0, 0.0, 0.0, 1.0);
    results_csv(dir.path(), "a/results.csv", &[pt]);
    write(
        dir.path(),
        "noaxis/results.csv",
        "point_id,index,threads,status,mflops,error\na,0,1,ok,5,\n",
    );
    write(
        dir.path(),
        "other/results.csv",
        "point_id,index,threads,variant,status,gflops,error\na,0,1,x,ok,5,\n",
    );
    std::fs::create_dir_all(dir.path().join("empty")).unwrap();
    let cases = [
        (
            vec!["a", "nope"],
            "error: run `nope` not found (hint: give a run folder or its results.csv)",
        ),
        (
            vec!["a", "empty"],
            "error: `empty` holds no results.csv (hint: give a run folder of `sweep run`, or a results CSV)",
        ),
        (
            vec!["a", "noaxis"],
            "error: `noaxis/results.csv` has no axis `variant` of `a/results.csv` (hint: points are matched by their axis values; `a/results.csv` has `threads`, `variant`, `noaxis/results.csv` has `threads`)",
        ),
        (
            vec!["a", "other"],
            "error: no metric common to `a/results.csv` and `other/results.csv` (hint: `a/results.csv` has `mflops`, `lat_us`; `other/results.csv` has `gflops`)",
        ),
        (
            vec!["a", "a", "--y", "gflops"],
            "error: no metric `gflops` in both runs (hint: the metrics of both are `mflops`, `lat_us`)",
        ),
    ];
    for (args, want) in cases {
        let out = sweep(dir.path())
            .arg("compare")
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), format!("{want}\n"), "{args:?}");
        assert!(stdout(&out).is_empty(), "{args:?}");
    }
}

#[test]
fn compare_help_lists_its_exit_codes() {
    let out = sweep(Path::new("."))
        .args(["compare", "--help"])
        .output()
        .unwrap();
    let help = stdout(&out);
    assert!(help.contains("  5    --fail-on-slower PCT"), "{help}");
    let out = sweep(Path::new(".")).arg("--help").output().unwrap();
    assert!(
        stdout(&out).contains("  5    slower than allowed"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn compare_reads_either_dialect_and_any_axis_order() {
    let dir = tempfile::tempdir().unwrap();
    // A: semicolon dialect, decimal commas; B: commas, the axes in the other order, 2.0 for 2.
    write(
        dir.path(),
        "a/results.csv",
        "point_id;index;threads;variant;status;mflops;mflops_rel_ci;lat_us;error\r\n\
         a0;0;1;x;ok;100,5;0,001;2;\r\na1;1;2;x;ok;200;0,001;2;\r\n",
    );
    write(
        dir.path(),
        "b/results.csv",
        "point_id,index,variant,threads,status,mflops,mflops_rel_ci,lat_us,error\r\n\
         b0,0,x,2.0,ok,100,0.001,2,\r\nb1,1,x,1,ok,201,0.001,2,\r\n",
    );
    let out = sweep(dir.path())
        .args(["compare", "a", "b", "--y", "mflops", "--out", "cmp"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let csv = std::fs::read_to_string(dir.path().join("cmp/compare.csv")).unwrap();
    assert_eq!(
        csv,
        "threads;variant;metric;a;b;ratio;u_a;u_b;verdict\r\n\
         1;x;mflops;100,5;201;2;0,001;0,001;faster\r\n\
         2;x;mflops;200;100;0,5;0,001;0,001;slower\r\n",
        "A's dialect, only the metric --y names"
    );
}

#[test]
fn compare_of_the_committed_h200_and_h100_thread_sweeps_gives_the_readme_numbers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = sweep(root)
        .args([
            "compare",
            "tests/fixtures/h200x2/one_warm.csv",
            "tests/fixtures/h100/threads_1_512",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    for want in [
        "512 points matched by `threads`; only in A: 0; only in B: 0.",
        "6144 values compared: 2099 same, 3476 faster, 569 slower",
        "| shared_nc_1blk_mflops | 512 | 1.021 | 39 | 473 | 0 | 0 | 128 / 128 | 128 / 128 | 512 / 512 |",
        "| global_all_grid_mflops | 512 | 0.974 | 254 | 16 | 242 | 0 | 32 / 32 | 32 / 32 | 32 / 64 |",
        "| threads=57 | global_even_grid_mflops | 8.104 TFLOP/s | 13.86 TFLOP/s | 1.711 | 1.0 % | 36.1 % | faster |",
    ] {
        assert!(common::squeeze(&text).contains(want), "want {want:?} in\n{text}");
    }
}

#[test]
fn overrides_shape_plan_and_run_and_resume_keeps_or_refuses_them() {
    let p = project();
    let plan = sweep(p.path())
        .args([
            "plan",
            "sweeps/saw.toml",
            "-a",
            "threads=5:8",
            "--set",
            "slow_ms=1",
        ])
        .output()
        .unwrap();
    assert!(plan.status.success(), "{}", stderr(&plan));
    let text = stdout(&plan);
    assert!(
        text.ends_with("4 points (recheck: one whose samples fall into two groups runs in 2 more processes at the end)\n"),
        "{text}"
    );
    assert!(
        text.contains("threads=5") && text.contains("threads=8") && !text.contains("threads=9")
    );
    let render = sweep(p.path())
        .args([
            "render",
            "sweeps/saw.toml",
            "-a",
            "threads=5:8",
            "--set",
            "slow_ms=1",
            "--point",
            "0",
        ])
        .output()
        .unwrap();
    assert!(
        stdout(&render).contains("#define THREADS 5\n"),
        "{}",
        stdout(&render)
    );
    assert!(
        stdout(&render).contains("#define SLOW_MS 1\n"),
        "{}",
        stdout(&render)
    );

    let run = |extra: &[&str]| {
        sweep(p.path())
            .args([
                "run",
                "sweeps/saw.toml",
                "--no-analyze",
                "--set",
                "slow_ms=1",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run(&["-a", "threads=5:8"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let dir = run_dir(p.path(), "saw");
    let threads: Vec<String> = rows(&dir.join("results.csv"))
        .iter()
        .map(|r| r["threads"].clone())
        .collect();
    assert_eq!(threads, ["5", "6", "7", "8"]);
    let m = manifest(&dir);
    assert_eq!(
        m["overrides"],
        serde_json::json!(["-a threads=5:8", "--set slow_ms=1"])
    );
    assert!(m["spec"].as_str().unwrap().starts_with(
        "# sweeps/saw.toml with the command-line overrides: -a threads=5:8 --set slow_ms=1\n"
    ));

    // Make the run unfinished: a changed override is refused like a changed spec, the same one
    // resumes it, and `sweep resume` applies the overrides its manifest lists.
    let mut m = m;
    m["state"] = "interrupted".into();
    std::fs::write(dir.join("manifest.json"), m.to_string()).unwrap();
    let out = run(&["-a", "threads=5:9"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the spec changed since the unfinished run")
            && stderr(&out).contains("`axis` differ (hint: --force starts a new run)"),
        "{}",
        stderr(&out)
    );
    let out = sweep(p.path())
        .args(["resume", &dir.display().to_string(), "--no-analyze"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(manifest(&dir)["state"], "finished");
    assert_eq!(
        run_dirs(&p.path().join("output/saw")).len(),
        1,
        "no second run"
    );

    let bad = sweep(p.path())
        .args(["plan", "sweeps/saw.toml", "-a", "thread=1:2"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(3));
    assert_eq!(
        stderr(&bad),
        "error: sweeps/saw.toml: `-a thread=1:2`: the spec has no axis `thread` (hint: its axes are `threads`)\n"
    );
}

#[test]
fn every_positional_argument_is_described_in_help() {
    let p = project();
    for cmd in [
        "run", "resume", "plan", "render", "build", "analyze", "plot", "merge", "slurm", "compare",
        "cache", "list",
    ] {
        let out = sweep(p.path()).args([cmd, "--help"]).output().unwrap();
        let help = stdout(&out);
        let args = help
            .split("Arguments:\n")
            .nth(1)
            .and_then(|s| s.split("\nOptions:").next())
            .unwrap_or_else(|| panic!("{cmd}: no Arguments section: {help}"));
        // Each argument's line, or the line after it, carries words.
        let lines: Vec<&str> = args.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            let t = l.trim();
            if t.starts_with('<') || t.starts_with('[') {
                let after = t.split_once(['>', ']']).map(|x| x.1).unwrap_or("");
                let described = after.trim().trim_start_matches("...").trim().len() > 3
                    || lines.get(i + 1).is_some_and(|n| n.trim().len() > 3);
                assert!(described, "{cmd}: `{t}` has no description:\n{help}");
            }
        }
    }
}

#[test]
fn export_json_has_the_machine_and_every_point_with_its_statistics() {
    let p = project();
    let out = sweep(p.path())
        .args(["run", "sweeps/faults.toml", "--export-json", "run.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.path().join("run.json")).unwrap()).unwrap();
    assert_eq!(v["schema"], 1);
    assert_eq!(v["sweep"], "faults");
    assert_eq!(v["axes"], serde_json::json!(["threads", "mode"]));
    assert!(v["machine"]["host"].is_string() && v["machine"]["compiler_version"].is_string());
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 18);
    let indices: Vec<u64> = points
        .iter()
        .map(|p| p["index"].as_u64().unwrap())
        .collect();
    assert_eq!(indices, (0..18).collect::<Vec<u64>>(), "in sweep order");
    let csv = rows(&run_dir(p.path(), "faults").join("results.csv"));
    for (pt, row) in points.iter().zip(&csv) {
        assert_eq!(pt["id"], row["point_id"].as_str());
        assert_eq!(pt["status"], row["status"].as_str());
        assert_eq!(
            pt["axes"]["threads"],
            row["threads"].parse::<i64>().unwrap()
        );
        assert_eq!(pt["axes"]["mode"], row["mode"].as_str());
        if row["saw_mflops"].is_empty() {
            assert!(pt["metrics"].as_object().unwrap().is_empty(), "{pt}");
            assert!(!pt["error"].as_str().unwrap().is_empty());
            continue;
        }
        let saw = &pt["metrics"]["saw"];
        assert_eq!(saw["unit"], "MFlops");
        assert_eq!(
            saw["value"].as_f64().unwrap(),
            row["saw_mflops"].parse::<f64>().unwrap()
        );
        assert_eq!(saw["rel_ci"].as_f64().unwrap(), 0.001);
        assert_eq!(saw["samples"].as_f64().unwrap(), 10.0);
        assert_eq!(
            saw["median"].as_f64().unwrap(),
            row["saw_median_mflops"].parse::<f64>().unwrap()
        );
        assert_eq!(
            saw["placements"].as_f64().unwrap(),
            row["saw_placements"].parse::<f64>().unwrap()
        );
        let keys: Vec<&String> = saw.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "max",
                "median",
                "min",
                "placements",
                "rel_ci",
                "samples",
                "sm_mhz",
                "spread",
                "status",
                "stddev",
                "throttled",
                "unit",
                "value"
            ]
        );
        assert_eq!(saw["status"], row["saw_status"].as_str());
        assert_eq!(pt["metrics"]["mflops"]["unit"], "MFlops");
    }
}

/// `saw.toml` with each (from, to) replaced, written as `sweeps/<name>.toml`; returns its text.
fn saw_as(p: &Path, name: &str, changes: &[(&str, &str)]) -> String {
    let mut spec = std::fs::read_to_string(p.join("sweeps/saw.toml")).unwrap();
    for (from, to) in changes {
        assert!(spec.contains(from), "saw.toml has no {from:?}");
        spec = spec.replace(from, to);
    }
    write(p, &format!("sweeps/{name}.toml"), &spec);
    spec
}

#[test]
fn build_then_run_runs_from_the_cache_instead_of_resuming_the_build_folder() {
    let p = project();
    saw_as(p.path(), "b", &[("range = [1, 64]", "range = [1, 8]")]);
    sweep(p.path())
        .args(["build", "sweeps/b.toml"])
        .assert()
        .success();
    let out = sweep(p.path())
        .args(["run", "sweeps/b.toml", "--no-analyze"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("builds: 0 compiled, 8 from cache"),
        "every point built by `sweep build` comes from the cache: {}",
        stdout(&out)
    );
    let runs = run_dirs(&p.path().join("output/b"));
    assert_eq!(runs.len(), 2, "{runs:?}");
    let (build, run): (Vec<_>, Vec<_>) = runs
        .iter()
        .partition(|d| d.display().to_string().ends_with("-build"));
    assert_eq!((build.len(), run.len()), (1, 1), "{runs:?}");
    assert_eq!(rows(&run[0].join("results.csv")).len(), 8);
}

#[test]
fn a_second_sweep_of_a_run_in_progress_is_refused_and_writes_nothing() {
    let p = project();
    saw_as(
        p.path(),
        "slow",
        &[
            ("range = [1, 64]", "range = [1, 6]"),
            ("slow_ms = 0", "slow_ms = 400"),
        ],
    );
    let mut first = sweep_process(p.path())
        .args(["run", "sweeps/slow.toml", "--no-analyze"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the first has rows, so that its run folder exists and is unfinished.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let csv = loop {
        let found = std::fs::read_dir(p.path().join("output/slow"))
            .ok()
            .and_then(|mut d| d.next())
            .map(|e| e.unwrap().path().join("results.csv"));
        if let Some(c) =
            found.filter(|c| std::fs::read_to_string(c).is_ok_and(|t| t.lines().count() >= 2))
        {
            break c;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the first sweep wrote no row"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = sweep(p.path())
        .args(["run", "sweeps/slow.toml", "--no-analyze"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is in use by another sweep (hint: wait for it to end"),
        "{}",
        stderr(&out)
    );
    assert!(first.wait().unwrap().success());
    assert_eq!(rows(&csv).len(), 6, "one row per point, none twice");
}

#[test]
fn resume_works_from_another_folder() {
    let p = project();
    saw_as(p.path(), "r", &[("range = [1, 64]", "range = [1, 4]")]);
    sweep(p.path())
        .args(["run", "sweeps/r.toml", "--no-analyze"])
        .assert()
        .success();
    let run = run_dir(p.path(), "r");
    // Make it unfinished: drop the last row and mark the manifest interrupted.
    let csv = run.join("results.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let keep: Vec<&str> = text.split_inclusive('\n').collect();
    std::fs::write(&csv, keep[..keep.len() - 1].concat()).unwrap();
    let m = std::fs::read_to_string(run.join("manifest.json"))
        .unwrap()
        .replace("\"state\": \"finished\"", "\"state\": \"interrupted\"");
    std::fs::write(run.join("manifest.json"), m).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let out = sweep(elsewhere.path())
        .args(["resume"])
        .arg(&run)
        .arg("--no-analyze")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(rows(&csv).len(), 4);
}

#[test]
fn resume_force_after_an_edit_starts_a_new_run_and_leaves_the_old_one() {
    let p = project();
    let spec = saw_as(p.path(), "e", &[("range = [1, 64]", "range = [1, 4]")]);
    sweep(p.path())
        .args(["run", "sweeps/e.toml", "--no-analyze"])
        .assert()
        .success();
    let old = run_dir(p.path(), "e");
    let before = std::fs::read_to_string(old.join("results.csv")).unwrap();
    write(
        p.path(),
        "sweeps/e.toml",
        &spec.replace("range = [1, 4]", "range = [1, 6]"),
    );
    let out = sweep(p.path())
        .args(["resume"])
        .arg(&old)
        .args(["--force", "--no-analyze"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(old.join("results.csv")).unwrap(),
        before,
        "the old run is left as it was"
    );
    let runs = run_dirs(&p.path().join("output/e"));
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!(rows(&runs[1].join("results.csv")).len(), 6);
}

#[test]
fn a_second_sigterm_leaves_the_manifest_interrupted_not_running() {
    let p = project();
    saw_as(
        p.path(),
        "h",
        &[
            ("range = [1, 64]", "range = [1, 4]"),
            ("mode = \"ok\"", "mode = \"hang\""),
            ("compiler = \"cc\"", "compiler = \"cc\"\nrun_timeout_s = 60"),
        ],
    );
    let mut child = sweep_process(p.path())
        .args(["run", "sweeps/h.toml", "--no-analyze"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the first (hanging) program runs.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while processes_under(p.path()).is_empty() {
        assert!(std::time::Instant::now() < deadline, "no program started");
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = child.id() as i32;
    for _ in 0..2 {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        std::thread::sleep(Duration::from_millis(300));
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let m = manifest(&run_dir(p.path(), "h"));
    assert_eq!(m["state"], "interrupted");
}

/// `[profile]` with a stand-in ncu and nvidia-smi (tests/project/tools): the counters of each
/// metric's range land in `<metric>__<counter>` columns (thousands separators read), the ratio of
/// the preset is computed, the power columns are filled from the samples of the point's window,
/// and no profile run overlaps a measurement.
#[test]
fn profile_counters_and_power_land_in_the_row_and_never_overlap_a_measurement() {
    let p = project();
    let tools = p.path().join("tools");
    sweep(p.path())
        .args(["run", "sweeps/profiled.toml", "--export-json", "run.json"])
        .env("SWEEP_NCU", tools.join("ncu"))
        .env("SWEEP_NVIDIA_SMI", tools.join("nvidia-smi"))
        .assert()
        .success();
    let run = run_dir(p.path(), "profiled");
    let rows = rows(&run.join("results.csv"));
    assert_eq!(rows.len(), 6);
    let wf = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum";
    // The JSON export carries them too, as numbers: counters under their metric, power per point.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.path().join("run.json")).unwrap()).unwrap();
    for (point, r) in json["points"].as_array().unwrap().iter().zip(&rows) {
        let k: f64 = r["k"].parse().unwrap();
        assert_eq!(
            point["metrics"]["slow"]["counters"][wf],
            2000.0 + k,
            "{point}"
        );
        assert_eq!(
            point["metrics"]["fast"]["counters"]["shared_wavefronts_per_request"],
            1.0
        );
        assert_eq!(point["power"]["power_w"], 250.5, "{point}");
        assert!(point["power"]["energy_j"].as_f64().unwrap() > 0.0);
    }
    for r in &rows {
        let k: f64 = r["k"].parse().unwrap();
        assert_eq!(r["status"], "ok", "{r:?}");
        assert_eq!(r["error"], "", "{r:?}");
        // range 0 is `fast`, range 1 `slow`: 1,000 x (range + 1) + k
        assert_eq!(
            r[&format!("fast__{wf}")].parse::<f64>().unwrap(),
            1000.0 + k
        );
        assert_eq!(
            r[&format!("slow__{wf}")].parse::<f64>().unwrap(),
            2000.0 + k
        );
        // (wavefronts st + ld) / (requests st + ld): every counter has the same value here
        assert_eq!(r["slow__shared_wavefronts_per_request"], "1");
        assert_eq!(r["power_w"], "250.5");
        assert_eq!(r["power_sm_mhz"], "1980");
        assert!(r["power_samples"].parse::<f64>().unwrap() >= 1.0, "{r:?}");
        let energy: f64 = r["energy_j"].parse().unwrap();
        let run_s: f64 = r["run_s"].parse().unwrap();
        assert!(
            energy > 0.0 && energy <= 250.5 * (run_s + 0.05),
            "{energy} J in {run_s} s"
        );
    }
    // Every measurement's window, and every profile run's (ncu.times): none overlap.
    let mut measuring = Vec::new();
    let mut profiling = Vec::new();
    for e in std::fs::read_dir(run.join("points")).unwrap() {
        let dir = e.unwrap().path();
        let out = std::fs::read_to_string(dir.join("stdout.txt")).unwrap();
        let line = out.lines().find(|l| l.starts_with("measured ")).unwrap();
        let t: Vec<f64> = line
            .split(' ')
            .skip(1)
            .map(|x| x.parse().unwrap())
            .collect();
        measuring.push((t[0], t[1]));
        let nt = std::fs::read_to_string(dir.join("ncu.times")).unwrap();
        let t: Vec<f64> = nt.split_whitespace().map(|x| x.parse().unwrap()).collect();
        profiling.push((t[0], t[1]));
        assert!(std::fs::read_to_string(dir.join("profile.cmd"))
            .unwrap()
            .contains("SWEEP_PROFILE=1"));
    }
    assert_eq!(profiling.len(), 6);
    for (a0, a1) in &profiling {
        for (m0, m1) in &measuring {
            assert!(
                a1 <= m0 || a0 >= m1,
                "profile {a0}..{a1} overlaps measurement {m0}..{m1}"
            );
        }
    }
}

/// `metric_power_ms`: after the timed run, a power pass (the program in the timing core's power
/// mode, each metric looped for 200 ms) gives every metric its own watts and value per watt from
/// the samples inside its window; the pass never overlaps a measurement; a program that prints no
/// window leaves the cells empty and says why, and the measurement stands.
#[test]
fn metric_power_gives_each_metric_its_watts_and_value_per_watt() {
    let p = project();
    let tools = p.path().join("tools");
    let spec = std::fs::read_to_string(p.path().join("sweeps/profiled.toml")).unwrap();
    std::fs::write(
        p.path().join("sweeps/profiled.toml"),
        spec.replace(
            "presets = [\"shared_banks\"]\npower = true\n",
            "metric_power_ms = 200\n",
        )
        .replace("range = [1, 6]", "range = [1, 3]"),
    )
    .unwrap();
    sweep(p.path())
        .args(["run", "sweeps/profiled.toml", "--export-json", "run.json"])
        .env("SWEEP_NVIDIA_SMI", tools.join("nvidia-smi"))
        .assert()
        .success();
    let run = run_dir(p.path(), "profiled");
    let rows = rows(&run.join("results.csv"));
    assert_eq!(rows.len(), 3);
    // The JSON export puts them under the metric's `power`, not among its counters.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.path().join("run.json")).unwrap()).unwrap();
    for point in json["points"].as_array().unwrap() {
        assert_eq!(
            point["metrics"]["fast"]["power"]["power_w"], 250.5,
            "{point}"
        );
        assert!(point["metrics"]["fast"]["counters"].is_null(), "{point}");
        assert!(
            point["metrics"]["slow"]["power"]["s_per_w"]
                .as_f64()
                .unwrap()
                > 0.0
        );
    }
    for r in &rows {
        let k: f64 = r["k"].parse().unwrap();
        assert_eq!(r["status"], "ok", "{r:?}");
        assert_eq!(r["error"], "", "{r:?}");
        assert!(
            !r.contains_key("power_w"),
            "no per-point columns without `power`: {r:?}"
        );
        assert_eq!(r["fast__power_w"], "250.5", "{r:?}");
        assert_eq!(r["slow__power_w"], "250.5", "{r:?}");
        let per_w: f64 = r["slow__s_per_w"].parse().unwrap();
        assert!((per_w - 2.0 * k / 250.5).abs() < 1e-9, "{per_w}");
    }
    let mut measuring = Vec::new();
    let mut powering = Vec::new();
    for e in std::fs::read_dir(run.join("points")).unwrap() {
        let dir = e.unwrap().path();
        let times = |file: &str, tag: &str| -> (f64, f64) {
            let out = std::fs::read_to_string(dir.join(file)).unwrap();
            let line = out.lines().find(|l| l.starts_with(tag)).unwrap();
            let t: Vec<f64> = line
                .split(' ')
                .skip(1)
                .map(|x| x.parse().unwrap())
                .collect();
            (t[0], t[1])
        };
        measuring.push(times("stdout.txt", "measured "));
        powering.push(times("power.stdout.txt", "powered "));
        assert!(std::fs::read_to_string(dir.join("power.cmd"))
            .unwrap()
            .contains("SWEEP_POWER_MS=200"));
    }
    assert_eq!(powering.len(), 3);
    for (a0, a1) in &powering {
        assert!(a1 - a0 >= 0.4, "two metrics of 200 ms: {a0}..{a1}");
        for (m0, m1) in &measuring {
            assert!(
                a1 <= m0 || a0 >= m1,
                "power pass {a0}..{a1} overlaps measurement {m0}..{m1}"
            );
        }
    }

    // A program with no power mode: it measures again and prints no window.
    let q = project();
    std::fs::copy(
        p.path().join("sweeps/profiled.toml"),
        q.path().join("sweeps/profiled.toml"),
    )
    .unwrap();
    let src = std::fs::read_to_string(q.path().join("cuda/profiled/profiled.c")).unwrap();
    std::fs::write(
        q.path().join("cuda/profiled/profiled.c"),
        src.replace("getenv(\"SWEEP_POWER_MS\")", "getenv(\"NO_SUCH_VARIABLE\")"),
    )
    .unwrap();
    sweep(q.path())
        .args(["run", "sweeps/profiled.toml"])
        .env("SWEEP_NVIDIA_SMI", tools.join("nvidia-smi"))
        .assert()
        .success();
    let again = common::rows(&run_dir(q.path(), "profiled").join("results.csv"));
    assert_eq!(again.len(), 3);
    for r in &again {
        assert_eq!(r["status"], "ok", "{r:?}");
        assert_eq!(r["fast_s"], r["k"], "{r:?}");
        assert_eq!(r["fast__power_w"], "", "{r:?}");
        assert!(
            r["error"].starts_with(
                "power: no power window for `fast`; no power window for `slow` (log: "
            ) && r["error"].ends_with("power.stdout.txt)"),
            "{}",
            r["error"]
        );
    }
}

#[test]
fn metric_power_without_samples_says_why_nvidia_smi_gave_none() {
    let p = project();
    let spec = std::fs::read_to_string(p.path().join("sweeps/profiled.toml")).unwrap();
    std::fs::write(
        p.path().join("sweeps/profiled.toml"),
        spec.replace(
            "presets = [\"shared_banks\"]\npower = true\n",
            "metric_power_ms = 200\n",
        )
        .replace("range = [1, 6]", "range = [1, 1]"),
    )
    .unwrap();
    let smi = write(
        p.path(),
        "tools/broken-smi",
        "#!/bin/sh\necho 'NVIDIA-SMI has failed because it could not communicate' >&2\nexit 9\n",
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&smi, std::fs::Permissions::from_mode(0o755)).unwrap();
    sweep(p.path())
        .args(["run", "sweeps/profiled.toml"])
        .env("SWEEP_NVIDIA_SMI", &smi)
        .assert()
        .success();
    let rows = rows(&run_dir(p.path(), "profiled").join("results.csv"));
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(r["status"], "ok", "{r:?}");
    assert_eq!(r["fast_s"], "1", "the timed value stays: {r:?}");
    assert_eq!(r["fast__power_w"], "", "{r:?}");
    assert!(
        r["error"].contains("ended with exit code 9: NVIDIA-SMI has failed"),
        "{r:?}"
    );
}

/// A failing ncu leaves the counter cells empty with the reason in `error`; the measurement stands.
#[test]
fn a_failing_ncu_leaves_the_counters_empty_and_keeps_the_measurement() {
    let p = project();
    let tools = p.path().join("tools");
    let spec = std::fs::read_to_string(p.path().join("sweeps/profiled.toml")).unwrap();
    std::fs::write(
        p.path().join("sweeps/profiled.toml"),
        spec.replace("power = true\n", ""),
    )
    .unwrap();
    sweep(p.path())
        .args(["run", "sweeps/profiled.toml"])
        .env("SWEEP_NCU", tools.join("ncu"))
        .env("FAKE_NCU_FAIL", "1")
        .assert()
        .success();
    let rows = rows(&run_dir(p.path(), "profiled").join("results.csv"));
    assert_eq!(rows.len(), 6);
    for r in &rows {
        assert_eq!(r["status"], "ok");
        assert_eq!(r["fast_s"], r["k"], "{r:?}");
        assert_eq!(r["fast__smsp__inst_executed_op_shared_st.sum"], "");
        assert!(!r.contains_key("power_w"), "{r:?}");
        assert!(
            r["error"].starts_with("profile: ncu failed with exit code 1 (log: ")
                && r["error"].ends_with("profile.stderr.txt)"),
            "{}",
            r["error"]
        );
    }
}

/// An ncu that hangs (and starts a child that would outlive it) is killed at `[profile] timeout_s`:
/// the row keeps its measurement, the counters stay empty, `error` says it timed out and how to
/// give it longer, and nothing it started is left running.
#[test]
fn a_hanging_ncu_is_killed_at_its_timeout_and_the_row_stands() {
    let p = project();
    let hang = write(
        p.path(),
        "tools/ncu-hang",
        "#!/bin/sh\nsleep 600 &\necho $! >> \"$0.pids\"\nsleep 600\n",
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hang, std::fs::Permissions::from_mode(0o755)).unwrap();
    let spec = std::fs::read_to_string(p.path().join("sweeps/profiled.toml")).unwrap();
    std::fs::write(
        p.path().join("sweeps/profiled.toml"),
        spec.replace("power = true\n", "timeout_s = 0.5\n")
            .replace("range = [1, 6]", "range = [1, 2]"),
    )
    .unwrap();
    let t0 = std::time::Instant::now();
    sweep(p.path())
        .args(["run", "sweeps/profiled.toml"])
        .env("SWEEP_NCU", &hang)
        .assert()
        .success();
    assert!(t0.elapsed() < Duration::from_secs(30), "{:?}", t0.elapsed());
    let rows = rows(&run_dir(p.path(), "profiled").join("results.csv"));
    assert_eq!(rows.len(), 2);
    for r in &rows {
        assert_eq!(r["status"], "ok");
        assert_eq!(r["fast_s"], r["k"], "{r:?}");
        assert_eq!(r["fast__smsp__inst_executed_op_shared_st.sum"], "");
        assert!(
            r["error"].starts_with(
                "profile: ncu timed out after 0.5 s (hint: a longer `[profile] timeout_s`; log: "
            ) && r["error"].ends_with("profile.stderr.txt)"),
            "{}",
            r["error"]
        );
    }
    let pids = std::fs::read_to_string(p.path().join("tools/ncu-hang.pids")).unwrap();
    assert_eq!(pids.lines().count(), 2, "one ncu run per point");
    for pid in pids.lines() {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        assert!(
            stat.is_empty() || stat.contains(") Z "),
            "ncu's child {pid} still runs: {stat}"
        );
    }
}

/// With `repeat = 2` the counters are the last process's (they are no measurement to median), so
/// ncu runs once per point, in the last pass: profiling is ~2 s a point on the H100, not to be
/// paid once per pass for cells nobody reads. The combined row has them, with the power columns.
#[test]
fn with_repeat_ncu_profiles_each_point_once_in_the_last_pass() {
    let p = project();
    let tools = p.path().join("tools");
    let counting = write(
        p.path(),
        "tools/ncu-counting",
        &format!(
            "#!/bin/sh\necho run >> \"$0.runs\"\nexec {} \"$@\"\n",
            tools.join("ncu").display()
        ),
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&counting, std::fs::Permissions::from_mode(0o755)).unwrap();
    let spec = std::fs::read_to_string(p.path().join("sweeps/profiled.toml")).unwrap();
    std::fs::write(
        p.path().join("sweeps/profiled.toml"),
        spec.replace("compiler = \"cc\"\n", "compiler = \"cc\"\nrepeat = 2\n")
            .replace("range = [1, 6]", "range = [1, 3]"),
    )
    .unwrap();
    sweep(p.path())
        .args(["run", "sweeps/profiled.toml"])
        .env("SWEEP_NCU", &counting)
        .env("SWEEP_NVIDIA_SMI", tools.join("nvidia-smi"))
        .assert()
        .success();
    let runs = std::fs::read_to_string(p.path().join("tools/ncu-counting.runs")).unwrap();
    assert_eq!(runs.lines().count(), 3, "one ncu run per point");
    let run = run_dir(p.path(), "profiled");
    let wf = "fast__l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum";
    for r in rows(&run.join("results.csv")) {
        let k: f64 = r["k"].parse().unwrap();
        assert_eq!(r["status"], "ok", "{r:?}");
        assert_eq!(r["error"], "", "{r:?}");
        assert_eq!(r[wf].parse::<f64>().unwrap(), 1000.0 + k, "{r:?}");
        assert_eq!(r["power_w"], "250.5", "{r:?}");
    }
    for r in rows(&run.join("passes/pass-0.csv")) {
        assert_eq!(r[wf], "", "{r:?}");
    }
}

/// An nvidia-smi that cannot sample (an old driver refuses `power.draw.instant` and exits at once;
/// a GPU without a power sensor prints `[N/A]`) leaves the power cells empty, and `error` says
/// what nvidia-smi said rather than only that no sample came.
#[test]
fn a_failing_nvidia_smi_says_why_the_power_cells_are_empty() {
    let p = project();
    let spec = std::fs::read_to_string(p.path().join("sweeps/profiled.toml")).unwrap();
    std::fs::write(
        p.path().join("sweeps/profiled.toml"),
        spec.replace("presets = [\"shared_banks\"]\n", "")
            .replace("range = [1, 6]", "range = [1, 2]"),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    let cases = [
        (
            "#!/bin/sh\necho 'Field \"power.draw.instant\" is not a valid field to query.' >&2\nexit 2\n",
            "power: `nvidia-smi` ended with exit code 2: Field \"power.draw.instant\" is not a valid field to query.",
        ),
        (
            "#!/bin/bash\nwhile :; do printf '%(%Y/%m/%d %H:%M:%S)T.000, [N/A], [N/A], 40\\n' -1; sleep 0.02; done\n",
            "power: nvidia-smi printed no reading: `",
        ),
    ];
    for (i, (script, want)) in cases.iter().enumerate() {
        let smi = write(p.path(), &format!("tools/smi-{i}"), script);
        std::fs::set_permissions(&smi, std::fs::Permissions::from_mode(0o755)).unwrap();
        sweep(p.path())
            .args(["run", "--force", "sweeps/profiled.toml"])
            .env("SWEEP_NVIDIA_SMI", &smi)
            .assert()
            .success();
        let runs = run_dirs(&p.path().join("output/profiled"));
        let rows = rows(&runs.last().unwrap().join("results.csv"));
        assert_eq!(rows.len(), 2);
        for r in &rows {
            assert_eq!(r["status"], "ok");
            assert_eq!(r["power_w"], "");
            assert!(r["error"].starts_with(want), "{}", r["error"]);
        }
    }
}

#[test]
fn the_manifest_says_when_the_bench_differs_from_its_git_commit() {
    let p = project();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(p.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
        String::from_utf8(out.stdout).unwrap()
    };
    // A shared header folder beside the benches, as cuda/common/ (the timing core) is.
    std::fs::create_dir_all(p.path().join("cuda/common")).unwrap();
    std::fs::write(p.path().join("cuda/common/core.h"), "/* core */\n").unwrap();
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "bench"]);
    let head = git(&["rev-parse", "HEAD"]).trim().to_string();
    let run = |nth: usize| {
        sweep(p.path())
            .args([
                "run",
                "sweeps/saw.toml",
                "-a",
                "threads=1:2",
                "--no-analyze",
                "-q",
            ])
            .assert()
            .success();
        let runs = run_dirs(&p.path().join("output/saw"));
        assert_eq!(runs.len(), nth);
        manifest(&runs[nth - 1])
    };
    let clean = run(1);
    assert_eq!(clean["git_commit"], head.as_str());
    assert_eq!(clean["git_dirty"], false, "{clean}");
    // A tracked file of the bench changed since the commit: the commit alone is not what ran.
    let c = p.path().join("cuda/hostsaw/hostsaw.c");
    let text = std::fs::read_to_string(&c).unwrap();
    std::fs::write(&c, format!("{text}/* edited */\n")).unwrap();
    let dirty = run(2);
    assert_eq!(dirty["git_commit"], head.as_str());
    assert_eq!(dirty["git_dirty"], true, "{dirty}");
    // The bench as committed, but cuda/common/ changed: that goes into the binary too.
    std::fs::write(&c, text).unwrap();
    std::fs::write(p.path().join("cuda/common/core.h"), "/* core, edited */\n").unwrap();
    let core = run(3);
    assert_eq!(core["git_dirty"], true, "{core}");
}

/// Issue 33: each metric has its own status. A real program (hostsaw, mode `mixed`) whose
/// `global_x` placements differ beyond the noise (`unstable=1`) and whose `shared_x` is steady
/// writes `global_x_status=unstable`, `shared_x_status=ok` and the row's `status=unstable`, the
/// worst of them; in one process, over `repeat` passes, in shards merged, and in the JSON export.
#[test]
fn a_row_with_one_unstable_metric_keeps_the_other_metrics_ok() {
    let p = project();
    let spec = "bench = \"hostsaw\"\ncompiler = \"cc\"\n[vars]\nmode = \"mixed\"\nslow_ms = 0\n[[axis]]\nname = \"threads\"\nrange = [16, 19]\n[[metric]]\nname = \"global_x\"\nunit = \"MFlops\"\n[[metric]]\nname = \"shared_x\"\nunit = \"MFlops\"\n";
    write(p.path(), "sweeps/mixed.toml", spec);
    write(
        p.path(),
        "sweeps/mixed2.toml",
        &spec.replace("compiler", "repeat = 2\ncompiler"),
    );
    let check = |csv: &Path| {
        let text = std::fs::read_to_string(csv).unwrap();
        let header = text.lines().next().unwrap();
        // Right after each metric's own columns.
        assert!(
            header.contains(",global_x_sm_mhz,global_x_status,shared_x_mflops,")
                || header.contains(",global_x_repeat_spread,global_x_status,shared_x_mflops,"),
            "{header}"
        );
        assert!(header.contains(",shared_x_status,build_s,"), "{header}");
        let rows = rows(csv);
        assert_eq!(rows.len(), 4, "{}", csv.display());
        for r in &rows {
            assert_eq!(
                (
                    r["global_x_status"].as_str(),
                    r["shared_x_status"].as_str(),
                    r["status"].as_str()
                ),
                ("unstable", "ok", "unstable"),
                "{r:?}"
            );
        }
    };
    for name in ["mixed", "mixed2"] {
        let out = sweep(p.path())
            .args(["run", &format!("sweeps/{name}.toml"), "--no-analyze", "-q"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let run = run_dir(p.path(), name);
        check(&run.join("results.csv"));
        if name == "mixed2" {
            // Each pass's raw rows carry the statuses too.
            check(&run.join("passes/pass-0.csv"));
        }
    }
    // The JSON export gives each metric its own status.
    let run = run_dir(p.path(), "mixed");
    let exported = p.path().join("exported");
    let out = sweep(p.path())
        .arg("export")
        .arg(&run)
        .args(["--format", "json", "--out"])
        .arg(&exported)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(exported.join("run.json")).unwrap()).unwrap();
    let point = &v["points"][0];
    assert_eq!(point["status"], "unstable");
    assert_eq!(point["metrics"]["global_x"]["status"], "unstable");
    assert_eq!(point["metrics"]["shared_x"]["status"], "ok");
    // Shards merged keep every metric's status.
    for i in 0..2 {
        let out = sweep(p.path())
            .args(["run", "sweeps/mixed.toml", "--no-analyze", "-q"])
            .args(["--shard", &format!("{i}/2"), "--split", "points"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let shards: Vec<PathBuf> = run_dirs(&p.path().join("output/mixed"))
        .into_iter()
        .filter(|d| d.to_string_lossy().contains("-shard-"))
        .collect();
    assert_eq!(shards.len(), 2);
    let out = sweep(p.path())
        .arg("merge")
        .args(&shards)
        .args(["--out", "joined"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    check(&p.path().join("joined/results.csv"));
}

#[test]
fn nvbench_axis_forms_plan_their_points_and_bad_values_exit_3_in_one_line() {
    let p = project();
    for (arg, points) in [
        ("threads=[32,64]", "2 points"),
        ("threads=[1:64:8]", "8 points"),
    ] {
        let out = sweep(p.path())
            .args(["plan", "sweeps/saw.toml", "-a", arg])
            .output()
            .unwrap();
        assert!(out.status.success(), "{arg}: {}", stderr(&out));
        assert!(stdout(&out).contains(points), "{arg}: {}", stdout(&out));
    }
    for (args, want) in [
        (["-a", "threads=[32,64"], "error: sweeps/saw.toml: `-a threads=[32,64`: a bracket that is not closed (hint: a list V1,V2,... or [V1,V2,...], a range LO:HI[:STEP] or [LO:HI:STEP]; quote the argument in the shell)\n"),
        (["-a", "threads=32,big"], "error: sweeps/saw.toml: `-a threads=32,big`: axis `threads` takes numbers, and `big` is not a number (hint: a list V1,V2,... or [V1,V2,...], a range LO:HI[:STEP] or [LO:HI:STEP])\n"),
        (["--set", "slow_ms=1e999"], "error: sweeps/saw.toml: `--set slow_ms=1e999`: [vars] `slow_ms` is a number, and `1e999` is not a finite number (hint: an integer or a float such as 4096 or 1.5e3)\n"),
        (["--set", "slow_ms=0x10"], "error: sweeps/saw.toml: `--set slow_ms=0x10`: [vars] `slow_ms` is a number, and `0x10` is not a decimal number, which is all sweep reads (hint: write it as 16)\n"),
    ] {
        let out = sweep(p.path())
            .args(["plan", "sweeps/saw.toml"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{args:?}");
        assert_eq!(stderr(&out), want);
    }
}

#[cfg(unix)]
#[test]
fn fifos_named_like_specs_or_templates_do_not_block_list_plan_or_render() {
    let p = project();
    for fifo in ["sweeps/stuck.toml", "cuda/hostsaw/stuck.h.tera"] {
        let made = std::process::Command::new("mkfifo")
            .arg(p.path().join(fifo))
            .status()
            .unwrap();
        assert!(made.success());
    }
    let out = sweep(p.path())
        .arg("list")
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("sweeps/stuck.toml: not a regular file (hint: a spec is a TOML file; a folder, FIFO or device is none)"),
        "{}",
        stdout(&out)
    );
    for args in [
        &["plan", "sweeps/saw.toml"][..],
        &["render", "sweeps/saw.toml", "--point", "0"],
    ] {
        let out = sweep(p.path())
            .args(args)
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    }
    let out = sweep(p.path())
        .args(["plan", "sweeps/stuck.toml"])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        stderr(&out),
        "error: sweeps/stuck.toml: not a regular file (hint: a spec is a TOML file; a folder, FIFO or device is none)\n"
    );
}

#[test]
fn line_breaks_and_terminal_escapes_in_spec_names_are_escaped_in_one_line_errors() {
    let p = project();
    for (name, text, want) in [
        (
            "axis",
            "bench = \"hostsaw\"\n[[axis]]\nname = \"a\\n\\u001b[31mred\"\nrange = [1, 2]\n[[metric]]\nname = \"m\"\nunit = \"u\"\n",
            "error: sweeps/axis.toml:2: axis name `a\\n\\u{1b}[31mred` is not an identifier (hint: letters, digits and `_`, not starting with a digit)\n",
        ),
        (
            "metric",
            "bench = \"hostsaw\"\n[[axis]]\nname = \"a\"\nrange = [1, 2]\n[[metric]]\nname = \"m\\u001b[2J\\r\\nx\"\nunit = \"u\"\n",
            "error: sweeps/metric.toml:5: metric name `m\\u{1b}[2J\\r\\nx` is not an identifier",
        ),
    ] {
        std::fs::write(p.path().join(format!("sweeps/{name}.toml")), text).unwrap();
        let out = sweep(p.path())
            .args(["plan", &format!("sweeps/{name}.toml")])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3));
        let err = stderr(&out);
        assert!(err.starts_with(want), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!err.contains('\u{1b}'), "{err}");
    }
}

#[test]
fn compare_with_a_run_that_has_only_its_header_says_it_has_no_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h100/threads_1_512");
    let (full, empty, bare) = (
        tmp.path().join("full"),
        tmp.path().join("empty"),
        tmp.path().join("bare"),
    );
    for d in [&full, &empty, &bare] {
        std::fs::create_dir(d).unwrap();
    }
    std::fs::copy(src.join("results.csv"), full.join("results.csv")).unwrap();
    std::fs::copy(src.join("manifest.json"), full.join("manifest.json")).unwrap();
    std::fs::copy(src.join("manifest.json"), empty.join("manifest.json")).unwrap();
    let text = std::fs::read_to_string(src.join("results.csv")).unwrap();
    let header = &text[..text.find('\n').unwrap() + 1];
    std::fs::write(empty.join("results.csv"), header).unwrap();
    std::fs::write(bare.join("results.csv"), header).unwrap();
    for (a, b, culprit) in [
        (&full, &empty, &empty),
        (&empty, &full, &empty),
        (&full, &bare, &bare),
    ] {
        let out = sweep(tmp.path())
            .arg("compare")
            .arg(a)
            .arg(b)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
        assert_eq!(
            stderr(&out),
            format!(
                "error: `{}` has no rows yet (hint: compare it once its run has measured some points)\n",
                culprit.join("results.csv").display()
            )
        );
    }
}

#[cfg(unix)]
#[test]
fn a_program_linked_into_a_bench_rebuilds_when_its_target_changes() {
    let p = project();
    let shared = p.path().join("shared");
    let bench = p.path().join("cuda/lnk");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::create_dir_all(&bench).unwrap();
    let program = p.path().join("cuda/hostsaw/hostsaw.c");
    std::fs::copy(&program, shared.join("prog.c")).unwrap();
    std::os::unix::fs::symlink(shared.join("prog.c"), bench.join("lnk.c")).unwrap();
    std::fs::copy(
        p.path().join("cuda/hostsaw/params.h.tera"),
        bench.join("params.h.tera"),
    )
    .unwrap();
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml"))
        .unwrap()
        .replace("bench = \"hostsaw\"", "bench = \"lnk\"")
        .replace("range = [1, 64]", "range = [1, 2]");
    std::fs::write(p.path().join("sweeps/lnk.toml"), spec).unwrap();
    let cached = |p: &Path| -> Vec<String> {
        let run = run_dirs(&p.join("output/lnk")).pop().unwrap();
        common::rows(&run.join("results.csv"))
            .into_iter()
            .map(|r| r["cached"].clone())
            .collect()
    };
    let run = || {
        sweep(p.path())
            .args(["run", "sweeps/lnk.toml", "-q", "--force"])
            .assert()
            .success();
    };
    run();
    run();
    assert_eq!(
        cached(p.path()),
        ["1", "1"],
        "nothing changed: from the cache"
    );
    let mut text = std::fs::read_to_string(shared.join("prog.c")).unwrap();
    text.push_str("\n/* edited through the link's target */\n");
    std::fs::write(shared.join("prog.c"), text).unwrap();
    run();
    assert_eq!(
        cached(p.path()),
        ["0", "0"],
        "the target changed: built again"
    );
}
