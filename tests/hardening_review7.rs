//! Review 7 of issue 38: what a hostile user found on the tree after the sixth round, each fixed
//! with a test that failed before. Real specs, real runs of the host sawtooth, real edits of a
//! run folder as a user makes them by hand.

use crate::common::{project, run_dirs, stderr, sweep};
use crate::hardening::write;
use std::path::{Path, PathBuf};

/// `sweeps/<name>.toml`: saw.toml with its `range = [1, 64]` line replaced by `axis`, no
/// `[analyze]`.
fn saw_with_axis(p: &Path, name: &str, axis: &str) {
    let spec = std::fs::read_to_string(p.join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", axis)
        .replace("[analyze]\nx = \"threads\"\n", "");
    write(p, &format!("sweeps/{name}.toml"), &spec);
}

/// `sweeps/saw4.toml` (threads 1..4) run to the end; its run folder.
fn finished_saw4(p: &Path) -> PathBuf {
    saw_with_axis(p, "saw4", "range = [1, 4]");
    sweep(p)
        .args(["run", "sweeps/saw4.toml", "-q", "--no-analyze"])
        .assert()
        .success();
    run_dirs(&p.join("output/saw4")).pop().unwrap()
}

/// The run's results.csv with the column `name` taken out of every line, as a spreadsheet's
/// "delete column" does.
fn remove_column(run: &Path, name: &str) {
    let csv = run.join("results.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let at = header.iter().position(|h| *h == name).unwrap();
    let cut: String = text
        .split_inclusive("\r\n")
        .map(|line| {
            let body = line.trim_end_matches("\r\n");
            let mut fields: Vec<&str> = body.split(',').collect();
            fields.remove(at);
            format!("{}\r\n", fields.join(","))
        })
        .collect();
    std::fs::write(&csv, cut).unwrap();
}

/// `sweep` with `args` in `p`: its exit code and its stderr.
fn code_and_stderr(p: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = sweep(p).args(args).output().unwrap();
    (out.status.code(), stderr(&out))
}

/// Review 7, M1: `values = [1, "1", 1.0]` passed the check of a point that comes twice (the three
/// have ids of their own: the type is hashed) and ran three points that results.csv writes alike,
/// `threads=1` thrice; `sweep compare` then refused the run as "two rows of the point threads=1"
/// and told the user to delete one. Values that differ only in type are refused by `plan` and
/// `run` (exit 3), naming the point and both indices, before anything runs.
#[test]
fn values_that_differ_only_in_type_are_refused_before_anything_runs() {
    let p = project();
    for (values, first, second) in [
        ("values = [1, \"1\"]", 0, 1),
        ("values = [2, 1, 1.0]", 1, 2),
    ] {
        saw_with_axis(p.path(), "typed", values);
        for command in [&["plan"][..], &["run", "-q"]] {
            let args = [command, &["sweeps/typed.toml"]].concat();
            let (code, err) = code_and_stderr(p.path(), &args);
            assert_eq!(code, Some(3), "{values}: {command:?}: {err}");
            assert!(
                err.contains(&format!(
                    "points {first} and {second} are both `threads=1` in results.csv"
                )) && err.contains("hint:")
                    && err.lines().count() == 1,
                "{values}: {command:?}: {err}"
            );
        }
        assert!(
            !p.path().join("output/typed").exists(),
            "{values}: nothing ran"
        );
    }
    saw_with_axis(p.path(), "typed", "values = [1, 1.5, 2]");
    sweep(p.path())
        .args(["plan", "sweeps/typed.toml"])
        .assert()
        .success();
}

/// Review 7, M2: the axis column `threads` deleted from a run's results.csv by hand (its
/// manifest still lists it) made `compare` match nothing and call B's four rows one point
/// `threads=` (exit 0, "0 values compared"), `plot` draw and `analyze` say "every axis is a
/// category (`threads`)". Every reader refuses it naming the column (exit 3), as it refuses a
/// removed metric column.
#[test]
fn an_axis_column_removed_by_hand_is_named_by_every_reader() {
    let p = project();
    let a = finished_saw4(p.path());
    let b = finished_saw4(p.path());
    assert_ne!(a, b);
    remove_column(&b, "threads");
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let csv = format!("{b}/results.csv");
    let out = p.path().join("elsewhere");
    let out = out.to_str().unwrap();
    for args in [
        vec!["compare", a, b, "--out", out],
        vec!["compare", b, a, "--out", out],
        vec!["analyze", &csv, "--out", out],
        vec!["plot", &csv, "--out", out],
        vec!["export", b, "--format", "csv", "--out", out],
        vec!["report", b, "--out", out],
    ] {
        let (code, err) = code_and_stderr(p.path(), &args);
        assert_eq!(code, Some(3), "{args:?}: {err}");
        assert!(
            err.contains("`threads`") && err.contains("hint:") && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
}

/// Review 7, M3: a column other than an axis or a metric's value deleted by hand (here
/// `saw_rel_ci`) made `export`, `report` and `resume` say "has another header than this spec
/// gives (hint: ... use --force to start a new run)": no column named, and a hint to start a new
/// run for a file that was edited. The message names the first column that differs, and asks
/// whether the file was edited.
#[test]
fn a_header_edited_by_hand_is_refused_naming_the_column_that_differs() {
    let p = project();
    let run = finished_saw4(p.path());
    remove_column(&run, "saw_rel_ci");
    let r = run.to_str().unwrap();
    let out = p.path().join("elsewhere");
    let out = out.to_str().unwrap();
    for args in [
        vec!["export", r, "--format", "csv", "--out", out],
        vec!["report", r, "--out", out],
        vec!["resume", r, "-q"],
    ] {
        let (code, err) = code_and_stderr(p.path(), &args);
        assert_eq!(code, Some(3), "{args:?}: {err}");
        assert!(
            err.contains("column 10 is `saw_samples` here and `saw_rel_ci` there")
                && err.contains("was the file edited?")
                && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
}

/// `sweeps/hang.toml`: saw.toml over threads 1..2 built by `tools/hangcc`, a compiler that on
/// `--version` writes its pid to `hangcc.pid` in its TMPDIR and then never answers;
/// `build_timeout_s` as given. The query may write in its own folder alone (it is confined, as
/// builds are): sweep runs with TMPDIR `<p>/tmpd`, the folder returned, where [`pid_in`] finds it.
fn hanging_compiler(p: &Path, build_timeout_s: u32) -> PathBuf {
    let cc = p.join("tools/hangcc");
    let tmpd = p.join("tmpd");
    std::fs::create_dir_all(&tmpd).unwrap();
    crate::common::script(
        &cc,
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo $$ > \"$TMPDIR/hangcc.pid\"; exec sleep 1000; fi\nexec cc \"$@\"\n",
    );
    saw_with_axis(p, "hang", "range = [1, 2]");
    let spec = std::fs::read_to_string(p.join("sweeps/hang.toml"))
        .unwrap()
        .replace(
            "compiler = \"cc\"",
            &format!(
                "compiler = \"{}\"\nbuild_timeout_s = {build_timeout_s}",
                cc.display()
            ),
        );
    write(p, "sweeps/hang.toml", &spec);
    tmpd
}

/// The pid that `hangcc.pid` holds, in a folder under `tmpd`, once it is there (at most 20 s).
fn pid_in(tmpd: &Path) -> i32 {
    let t0 = std::time::Instant::now();
    loop {
        let pid = std::fs::read_dir(tmpd).ok().and_then(|dirs| {
            dirs.filter_map(Result::ok).find_map(|d| {
                std::fs::read_to_string(d.path().join("hangcc.pid"))
                    .ok()
                    .and_then(|s| s.trim().parse().ok())
            })
        });
        if let Some(pid) = pid {
            return pid;
        }
        assert!(
            t0.elapsed().as_secs() < 20,
            "no hangcc.pid under {}",
            tmpd.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Whether process `pid` is gone (or a zombie, dead but not yet reaped), within 5 s.
fn gone(pid: i32) -> bool {
    let t0 = std::time::Instant::now();
    while t0.elapsed().as_secs() < 5 {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat)
                if stat
                    .rsplit(')')
                    .next()
                    .is_some_and(|s| s.trim_start().starts_with('Z')) =>
            {
                return true
            }
            Ok(_) => std::thread::sleep(std::time::Duration::from_millis(50)),
        }
    }
    false
}

/// Review 7, H1: `<compiler> --version`, which sweep runs before its first point, had no time
/// limit: a compiler that never answers (a wrapper waiting on a licence server, a toolkit on a
/// stuck network mount) hung `sweep run` for ever, saying nothing. It has the spec's
/// `build_timeout_s`: past it the run stops with one line naming the compiler (exit 4, the
/// environment), and the compiler's process is killed.
#[test]
fn a_compiler_that_never_answers_its_version_stops_the_run_at_the_build_timeout() {
    let p = project();
    let tmpd = hanging_compiler(p.path(), 2);
    let mut child = crate::common::sweep_process(p.path())
        .args(["run", "sweeps/hang.toml", "-q"])
        .env("TMPDIR", &tmpd)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read while the query runs: its folder goes with it.
    let pid = pid_in(&tmpd);
    let t0 = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed().as_secs() > 30 {
            child.kill().unwrap();
            panic!("sweep still waits for the compiler after 30 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let (code, err) = (out.status.code(), stderr(&out));
    assert_eq!(code, Some(4), "{err}");
    assert!(
        err.contains("hangcc --version` within 2 s") && err.lines().count() == 1,
        "{err}"
    );
    assert!(gone(pid), "the compiler's process was killed");
}

/// Review 7, H1 (the second half): a second Ctrl-C while sweep waited for `--version` ended
/// sweep but left the compiler running, orphaned: the query was no process group of sweep's,
/// which a second Ctrl-C kills. It is one now.
#[test]
fn a_second_ctrl_c_while_the_compiler_is_asked_its_version_kills_it() {
    let p = project();
    let tmpd = hanging_compiler(p.path(), 300);
    let mut child = crate::common::sweep_process(p.path())
        .args(["run", "sweeps/hang.toml", "-q"])
        .env("TMPDIR", &tmpd)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = pid_in(&tmpd);
    for _ in 0..2 {
        // SAFETY: signals the child this test started.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(gone(pid), "the compiler asked for its version was killed");
}

/// Review 7, M4: a template named after a file sweep writes in each point's folder rendered
/// into it: `stdout.txt.tera`'s header was replaced by the program's output once the point ran
/// (exit 0: the folder no longer held what the point was built from), `run.cmd.tera`'s by the
/// run's command; `control-1.tera` stopped the run at its first control re-run with "File
/// exists" and a hint to make room (exit 4). Such a template is refused before anything runs,
/// naming it (exit 3).
#[test]
fn a_template_named_after_a_file_sweep_writes_in_a_point_is_refused() {
    let p = project();
    saw_with_axis(p.path(), "saw2", "range = [1, 2]");
    for template in [
        "stdout.txt.tera",
        "run.cmd.tera",
        "build.log.tera",
        "control-1.tera",
    ] {
        let t = write(
            p.path(),
            &format!("cuda/hostsaw/{template}"),
            "// {{ threads }}\n",
        );
        let (code, err) = code_and_stderr(p.path(), &["run", "sweeps/saw2.toml", "-q"]);
        std::fs::remove_file(&t).unwrap();
        assert_eq!(code, Some(3), "{template}: {err}");
        assert!(
            err.contains(&format!("template `{template}`"))
                && err.contains("a file sweep writes itself in each point's folder")
                && err.lines().count() == 1,
            "{template}: {err}"
        );
        assert!(
            !p.path().join("output/saw2").exists(),
            "{template}: nothing ran"
        );
    }
    sweep(p.path())
        .args(["run", "sweeps/saw2.toml", "-q"])
        .assert()
        .success();
}

/// Review 7, M5: `sweep run ../../sweeps/x.toml` started in `cuda/<bench>/` made its `output/`
/// there, inside the bench folder, whose every file is the bench's input: the run's own files
/// changed the bench, so after a Ctrl-C the run could never be resumed ("the bench `hostsaw`
/// changed since the unfinished run started", exit 3) and no build ever came from the cache.
/// The same for a build cache there (`--cache`, SWEEP_CACHE): every build changed the bench. An
/// output folder or a cache inside the bench folder is refused before anything is written
/// (exit 3).
#[test]
fn an_output_folder_inside_the_bench_folder_is_refused() {
    let p = project();
    saw_with_axis(p.path(), "saw2", "range = [1, 2]");
    let bench = p.path().join("cuda/hostsaw");
    for (cwd, args) in [
        (bench.clone(), vec!["run", "../../sweeps/saw2.toml", "-q"]),
        (
            p.path().to_path_buf(),
            vec![
                "run",
                "sweeps/saw2.toml",
                "-q",
                "--output",
                "cuda/hostsaw/out",
            ],
        ),
        (
            p.path().to_path_buf(),
            vec![
                "run",
                "sweeps/saw2.toml",
                "-q",
                "--cache",
                "cuda/hostsaw/cache",
            ],
        ),
    ] {
        let (code, err) = code_and_stderr(&cwd, &args);
        assert_eq!(code, Some(3), "{args:?}: {err}");
        assert!(
            err.contains("lies inside the bench folder") && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
    let mut left: Vec<String> = std::fs::read_dir(&bench)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["hostsaw.c", "params.h.tera"],
        "nothing written there"
    );
    sweep(p.path())
        .args(["run", "sweeps/saw2.toml", "-q"])
        .assert()
        .success();
}

/// Review 7, M6: two spec files of one name (`sweeps/saw2.toml` and `other/saw2.toml`) share
/// `output/saw2/`; with a run of the first unfinished, `sweep run other/saw2.toml` said "the spec
/// changed since the unfinished run started" of a spec that never changed. It names the other
/// file, and how to finish its run or keep the two apart.
#[test]
fn a_spec_of_the_same_name_in_another_folder_is_not_told_it_changed() {
    let p = project();
    saw_with_axis(p.path(), "saw2", "range = [1, 2]");
    saw_with_axis(p.path(), "../other/saw2", "range = [1, 3]");
    sweep(p.path())
        .args(["run", "sweeps/saw2.toml", "-q", "--no-analyze"])
        .assert()
        .success();
    let run = run_dirs(&p.path().join("output/saw2")).pop().unwrap();
    crate::hardening::unfinish(&run, 1);
    let (code, err) = code_and_stderr(p.path(), &["run", "other/saw2.toml", "-q"]);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("is of another spec file of the same name")
            && err.contains("sweeps/saw2.toml")
            && err.lines().count() == 1,
        "{err}"
    );
    sweep(p.path())
        .args(["run", "sweeps/saw2.toml", "-q", "--no-analyze"])
        .assert()
        .success();
}

/// Review 7, M7: a file of the bench that cannot be read (no read permission for the user; here
/// a link to `/proc/self/mem`, which even root cannot read through `read`) failed every point
/// with "cannot read the bench's files: Input/output error": which file, it did not say. The
/// error names the file.
#[test]
fn a_bench_file_that_cannot_be_read_is_named() {
    let p = project();
    saw_with_axis(p.path(), "saw2", "range = [1, 2]");
    std::os::unix::fs::symlink("/proc/self/mem", p.path().join("cuda/hostsaw/mem.h")).unwrap();
    let (code, err) = code_and_stderr(p.path(), &["run", "sweeps/saw2.toml", "-q"]);
    assert_eq!(code, Some(1), "{err}");
    let run = run_dirs(&p.path().join("output/saw2")).pop().unwrap();
    let rows = crate::common::rows(&run.join("results.csv"));
    assert_eq!(rows.len(), 2);
    for r in rows {
        assert_eq!(r["status"], "build_failed");
        assert!(
            r["error"].contains("cannot read the bench's files: `")
                && r["error"].contains("cuda/hostsaw/mem.h`"),
            "{}",
            r["error"]
        );
    }
}
