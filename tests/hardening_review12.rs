//! Review 12 of issue 38 (run side and inputs, the round after 11): what a hostile user still
//! found, each fixed with a test that failed before. Real programs built with `cc`, real runs,
//! real limits.

use crate::common::{self, project, stderr, sweep};
use crate::hardening::write;
use std::path::Path;

/// The saw spec built by `compiler` with `flags` (a TOML list's items), over threads 1 and 2.
pub(crate) fn spec_with_flags(compiler: &str, flags: &str) -> String {
    format!("bench = \"hostsaw\"\ncompiler = \"{compiler}\"\nflags = [{flags}]\n[vars]\nmode = \"ok\"\nslow_ms = 0\n[[axis]]\nname = \"threads\"\nrange = [1, 2]\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n")
}

/// Review 12a, H1: nvcc's `--time FILE` (a CSV of each phase's time) and `-fdevice-time-trace
/// FILE` (a JSON trace), and gcc's `-fdump-ada-spec` (Ada specs in the folder the build runs in),
/// wrote outside the output folder, exit 0. They are refused with the flag named, in `flags` and
/// in a `compiler_flags` axis alike.
#[test]
fn flags_that_write_a_file_outside_the_run_are_refused() {
    let p = project();
    let cases = [
        ("nvcc", "\"--time\", \"/tmp/x.csv\"", "--time"),
        ("nvcc", "\"-time=/tmp/x.csv\"", "-time=/tmp/x.csv"),
        (
            "nvcc",
            "\"-fdevice-time-trace\", \"/tmp/t.json\"",
            "-fdevice-time-trace",
        ),
        ("cc", "\"-fdump-ada-spec\"", "-fdump-ada-spec"),
        ("cc", "\"-time=/tmp/x.txt\"", "-time=/tmp/x.txt"),
        (
            "nvcc",
            "\"-Xcompiler\", \"-fdump-ada-spec\"",
            "-fdump-ada-spec",
        ),
    ];
    for (compiler, flags, named) in cases {
        write(p.path(), "sweeps/f.toml", &spec_with_flags(compiler, flags));
        let out = sweep(p.path())
            .args(["plan", "sweeps/f.toml"])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{compiler} {flags}: {err}");
        assert!(
            err.contains(&format!("`flags` has `{named}`, which names an output")),
            "{compiler} {flags}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    // Through a `compiler_flags` axis and `-a` too.
    write(
        p.path(),
        "sweeps/ax.toml",
        "bench = \"hostsaw\"\ncompiler = \"nvcc\"\n[vars]\nmode = \"ok\"\nslow_ms = 0\nthreads = 1\n[[axis]]\nname = \"opt\"\nvalues = [\"-O1\"]\ncompiler_flags = true\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n",
    );
    let out = sweep(p.path())
        .args(["plan", "sweeps/ax.toml", "-a", "opt=-O1 --time /tmp/x.csv"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("`--time`"), "{}", stderr(&out));
}

/// Review 12a, M3: nvcc's own `-opt-info inline` (optimisation remarks, no file), `-objtemp` and
/// `-optix-ir` were refused as "an output of the compiler" because they start with `-o`, while
/// the long spelling passed. To nvcc they pass; to gcc `-opt-info` is `-o pt-info` and stays
/// refused.
#[test]
fn nvcc_short_options_that_start_with_o_but_name_no_file_pass() {
    let p = project();
    for flags in [
        "\"-opt-info\", \"inline\"",
        "\"-opt-info=inline\"",
        "\"-objtemp\"",
        "\"-optix-ir\"",
    ] {
        write(p.path(), "sweeps/f.toml", &spec_with_flags("nvcc", flags));
        let out = sweep(p.path())
            .args(["plan", "sweeps/f.toml"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{flags}: {}", stderr(&out));
    }
    write(
        p.path(),
        "sweeps/f.toml",
        &spec_with_flags("cc", "\"-opt-info\""),
    );
    let out = sweep(p.path())
        .args(["plan", "sweeps/f.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("`-opt-info`"), "{}", stderr(&out));
    // nvcc's -odir and -optf still name an output folder and an options file.
    for (flags, named) in [
        ("\"-odir\", \"/tmp\"", "-odir"),
        ("\"-optf\", \"f\"", "-optf"),
    ] {
        write(p.path(), "sweeps/f.toml", &spec_with_flags("nvcc", flags));
        let out = sweep(p.path())
            .args(["plan", "sweeps/f.toml"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{flags}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!("`{named}`")),
            "{}",
            stderr(&out)
        );
    }
}

/// The run folder of the one run under `p/output/<name>`.
fn only_run(p: &Path, name: &str) -> std::path::PathBuf {
    let runs = common::run_dirs(&p.join("output").join(name));
    assert_eq!(runs.len(), 1, "{runs:?}");
    runs[0].clone()
}

/// Review 12a, H2: under a small address-space limit a thread could not be started (EAGAIN), and
/// `std::thread::spawn` (sweep's own, and duct's reader of `cc --version`) panicked: exit 101, a
/// backtrace note, the manifest left `running` with no sweep. At every limit from too little to
/// start to enough to finish, sweep now ends with no panic: exit 0, or 4 (the environment) in one
/// line with the manifest `interrupted`. (Where an allocation itself fails, Rust aborts the
/// process, as the kernel's OOM killer would kill it: a resume measures what is missing.)
#[test]
fn a_small_address_space_stops_the_run_as_the_environment_not_a_panic() {
    use std::os::unix::process::ExitStatusExt;
    let p = project();
    // Built once with room, so that the limits below fall on the run, not on cc.
    let cache = p.path().join("cache");
    let out = sweep(p.path())
        .args(["build", "sweeps/saw.toml", "-a", "threads=1:4", "--cache"])
        .arg(&cache)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let mut seen = std::collections::BTreeSet::new();
    for mb in (45..=140).step_by(5) {
        let dir = p.path().join(format!("out{mb}"));
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!("ulimit -v {} && exec \"$0\" \"$@\"", mb * 1024))
            .arg(assert_cmd::cargo::cargo_bin("sweep"))
            .args([
                "run",
                "sweeps/saw.toml",
                "-q",
                "--no-analyze",
                "-a",
                "threads=1:4",
            ])
            .arg("--cache")
            .arg(&cache)
            .arg("--output")
            .arg(&dir)
            .current_dir(p.path())
            .env("SWEEP_LOCK_DIR", p.path().join("locks"))
            .env_remove("SWEEP_CACHE")
            .output()
            .unwrap();
        let err = stderr(&out);
        let code = out.status.code();
        seen.insert(code);
        let aborted = out.status.signal() == Some(libc::SIGABRT);
        assert!(
            !err.contains("panicked") && (matches!(code, Some(0) | Some(4)) || aborted),
            "ulimit -v {mb} MB: {:?}: {err}",
            out.status
        );
        if code == Some(4) {
            assert_eq!(err.trim().lines().count(), 1, "ulimit -v {mb} MB: {err}");
            // (Stopped before its run folder, at the compiler's start: no manifest to say so.)
            let runs = match dir.join("saw").is_dir() {
                true => common::run_dirs(&dir.join("saw")),
                false => vec![],
            };
            for run in runs {
                let state = common::manifest(&run)["state"].clone();
                assert_eq!(state, "interrupted", "ulimit -v {mb} MB: {err}");
            }
        }
    }
    assert!(seen.contains(&Some(0)), "{seen:?}");
}

/// Review 12a, M1: a results.csv that cannot be read back at the run's end (the program appended
/// a row of its own to it) stopped sweep with exit 3 and the manifest left `running`. It stops
/// the same way, with the manifest `interrupted`.
#[test]
fn a_results_csv_torn_under_the_run_leaves_the_manifest_interrupted() {
    let p = project();
    write(p.path(), "cuda/w/params.h.tera", "#define N {{ n }}\n");
    write(
        p.path(),
        "cuda/w/w.c",
        "#include \"params.h\"\n#include <stdio.h>\nint main(void){FILE*f=fopen(\"../../results.csv\",\"a\");if(f){fprintf(f,\"evil,row\\r\\n\");fclose(f);}printf(\"MFlops: %d\\n\", N);return 0;}\n",
    );
    write(
        p.path(),
        "sweeps/w.toml",
        "bench = \"w\"\ncompiler = \"cc\"\n[[axis]]\nname = \"n\"\nvalues = [1, 2]\n[[metric]]\npattern = \"mflops\"\n",
    );
    let out = sweep(p.path())
        .args(["run", "sweeps/w.toml", "-q", "--no-analyze"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("results.csv"), "{err}");
    let run = only_run(p.path(), "w");
    assert_eq!(common::manifest(&run)["state"], "interrupted", "{err}");
}

/// Review 12a, M2: a program's last stderr line went raw into the terminal's failure line, the
/// row's `error` cell and report.html: an OSC title, a screen clear, colours, a carriage return
/// and a backspace acted on the terminal. They are shown escaped, as axis values are.
#[test]
fn control_characters_a_program_prints_on_stderr_are_shown_escaped() {
    let p = project();
    write(p.path(), "cuda/e/params.h.tera", "#define X {{ n }}\n");
    write(
        p.path(),
        "cuda/e/e.c",
        "#include <stdio.h>\nint main(void){fprintf(stderr,\"\\033]0;TITLE\\007\\033[2J\\033[31mboom\\rX\\bY\\n\");return 1;}\n",
    );
    write(
        p.path(),
        "sweeps/e.toml",
        "bench = \"e\"\ncompiler = \"cc\"\n[[axis]]\nname = \"n\"\nvalues = [1]\n[[metric]]\npattern = \"mflops\"\n",
    );
    let out = sweep(p.path())
        .args(["run", "sweeps/e.toml", "--no-analyze"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let said = format!("{}{}", common::stdout(&out), stderr(&out));
    assert!(said.contains("boom"), "{said}");
    for c in ['\u{1b}', '\u{7}', '\r', '\u{8}'] {
        assert!(!said.contains(c), "{c:?} reached the terminal: {said:?}");
    }
    assert!(said.contains("\\u{1b}[31mboom\\rX\\u{8}Y"), "{said:?}");
    let run = only_run(p.path(), "e");
    let rows = common::rows(&run.join("results.csv"));
    let error = &rows[0]["error"];
    assert!(
        error.contains("boom") && !error.contains('\u{1b}') && !error.contains('\r'),
        "{error:?}"
    );
    let report = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(!report.contains('\u{1b}'), "report.html holds an escape");
}

/// Review 12b, H1: an axis of `0.0` and `-0.0` ran as two points that analyze, plot and the
/// closing summary read as one x and averaged ("best at z = 0 (8.500 GFLOP/s)", a value no point
/// measured). The spec is refused naming both; a results CSV that writes one number apart (`1`
/// and `1.0`, `0` and `-0`) is refused by analyze naming both cells and their lines.
#[test]
fn two_values_that_are_one_number_are_never_averaged_into_one_point() {
    let p = project();
    write(
        p.path(),
        "sweeps/z.toml",
        "bench = \"hostsaw\"\ncompiler = \"cc\"\n[vars]\nmode = \"ok\"\nslow_ms = 0\nthreads = 1\n[[axis]]\nname = \"z\"\nvalues = [0.0, -0.0, 1.0]\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n",
    );
    let out = sweep(p.path())
        .args(["plan", "sweeps/z.toml"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("axis `z` has `0` and `-0`, two values that are one number"),
        "{err}"
    );
    for (a, b) in [("1", "1.0"), ("0", "-0"), ("100", "1e2")] {
        let csv = write(
            p.path(),
            "r.csv",
            &format!("point_id,index,z,status,saw_mflops\np1,0,{a},ok,5000\np2,1,{b},ok,16000\np3,2,3,ok,7000\n"),
        );
        let out = sweep(p.path()).arg("analyze").arg(&csv).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{a} {b}: {err}");
        assert!(
            err.contains(&format!("`{a}` (line 2) and `{b}` (line 3)")),
            "{a} {b}: {err}"
        );
    }
    // One text twice is a repeat of one x, as before (series grouped by fewer axes).
    let csv = write(
        p.path(),
        "r.csv",
        "point_id,index,z,status,saw_mflops\np1,0,1,ok,5000\np2,1,1,ok,16000\np3,2,3,ok,7000\n",
    );
    let out = sweep(p.path()).arg("analyze").arg(&csv).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// Review 12b, H2: a run's results.csv with two rows of one point got three answers: analyze and
/// the report took their median (a value no row holds), export kept the last, compare refused.
/// Every reader refuses it alike, naming the point and its rows (exit 3).
#[test]
fn two_rows_of_one_point_are_refused_by_every_reader_alike() {
    let p = project();
    let out = sweep(p.path())
        .args([
            "run",
            "sweeps/saw.toml",
            "-q",
            "--no-analyze",
            "-a",
            "threads=1:8",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let run = only_run(p.path(), "saw");
    let csv = run.join("results.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let last = text.lines().last().unwrap().to_string();
    let id = last.split(',').next().unwrap().to_string();
    std::fs::write(&csv, format!("{text}{last}\n")).unwrap();
    let before = std::fs::read(&csv).unwrap();
    for args in [
        vec!["analyze"],
        vec!["plot"],
        vec!["report"],
        vec!["export", "--format", "csv"],
        vec!["export", "--format", "xlsx"],
        vec!["compare", run.to_str().unwrap()],
    ] {
        let out = sweep(p.path())
            .args(&args[..1])
            .arg(&run)
            .args(&args[1..])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert!(err.contains("two rows of the point"), "{args:?}: {err}");
        assert!(
            err.contains("(its rows 8 and 9 after the header)"),
            "{args:?}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
    assert!(
        stderr(&sweep(p.path()).arg("analyze").arg(&csv).output().unwrap())
            .contains(&format!("`{id}`")),
        "analyze names the point's id"
    );
    assert_eq!(
        std::fs::read(&csv).unwrap(),
        before,
        "a reader changed results.csv"
    );
}
