//! The third round of issue 38's hostile review: headers the build reads from outside the bench
//! folder, links planted in a run folder, compare's exit code when B failed, and the small ones.
//! Real files, real compilers (cc; nvcc where it is on PATH), real runs.

use crate::common::{self, project, rows, run_dirs, stderr, stdout, sweep};
use std::path::{Path, PathBuf};

pub(crate) fn write(dir: &Path, rel: &str, text: &str) -> PathBuf {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

/// A bench `inc` whose program includes `value.h` through `include` (`"../shared/value.h"`, or
/// `<value.h>` found through a `-I` flag) and prints `THREADS * VALUE` MFlops, and its spec
/// A finished run made unfinished, as a killed one is: its results.csv cut back to the header
/// and its first `keep` rows, its manifest `interrupted`.
pub(crate) fn unfinish(run: &Path, keep: usize) {
    let csv = run.join("results.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    std::fs::write(&csv, lines[..1 + keep].concat()).unwrap();
    let m = std::fs::read_to_string(run.join("manifest.json"))
        .unwrap()
        .replace("\"state\": \"finished\"", "\"state\": \"interrupted\"");
    std::fs::write(run.join("manifest.json"), m).unwrap();
}

/// `sweeps/inc.toml` (threads 1..2, `extra` added to the spec's top).
pub(crate) fn including_bench(p: &Path, ext: &str, include: &str, extra: &str) {
    write(
        p,
        &format!("cuda/inc/inc.{ext}"),
        &format!("#include \"params.h\"\n#include {include}\n#include <stdio.h>\nint main(void) {{\n  printf(\"MFlops: %d\\n\", THREADS * VALUE);\n  return 0;\n}}\n"),
    );
    write(
        p,
        "cuda/inc/params.h.tera",
        "#define THREADS {{ threads }}\n",
    );
    write(
        p,
        "sweeps/inc.toml",
        &format!("bench = \"inc\"\n{extra}\n[[axis]]\nname = \"threads\"\nrange = [1, 2]\n[[metric]]\npattern = \"mflops\"\n"),
    );
}

/// `sweep run sweeps/inc.toml --force` (a new run each time); (cached, mflops) of its rows.
pub(crate) fn run_inc(p: &Path) -> Vec<(String, String)> {
    run_inc_with(p, &[])
}

/// [`run_inc`] with `env` (name, value) added to sweep's environment.
pub(crate) fn run_inc_with(p: &Path, env: &[(&str, &std::ffi::OsStr)]) -> Vec<(String, String)> {
    let out = sweep(p)
        .envs(env.iter().copied())
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
    let log = std::fs::read_to_string(
        run.join("points")
            .join(rows(&run.join("results.csv"))[0]["point_id"].as_str())
            .join("build.log"),
    )
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

/// `sweeps/saw4.toml` (saw.toml over threads 1..4) run to the end, then made unfinished as a
/// killed run is: its last two rows gone and its manifest `interrupted`. The run folder, and the
/// ids of the two points a resume measures.
fn unfinished_saw(p: &Path) -> (PathBuf, Vec<String>) {
    let spec = std::fs::read_to_string(p.join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 4]");
    write(p, "sweeps/saw4.toml", &spec);
    sweep(p)
        .args(["run", "sweeps/saw4.toml", "-q", "--no-analyze"])
        .assert()
        .success();
    let run = run_dirs(&p.join("output/saw4")).pop().unwrap();
    let csv = run.join("results.csv");
    let ids: Vec<String> = rows(&csv).iter().map(|r| r["point_id"].clone()).collect();
    unfinish(&run, 2);
    (run, ids[2..].to_vec())
}

/// M2: a symbolic link planted in a run folder (its results.csv, a point's stdout.txt, a point's
/// folder) was followed by the resume, which wrote through it outside the run folder. The resume
/// refuses with one line naming the link (exit 3, bad input) and writes nothing anywhere.
#[cfg(unix)]
#[test]
fn a_link_planted_in_a_run_folder_is_refused_by_the_resume_and_never_written_through() {
    let outside = tempfile::tempdir().unwrap();
    /// Where a link goes, from the run folder and the ids of the points left to measure.
    type Place = fn(&Path, &[String]) -> PathBuf;
    let plants: [(&str, Place); 3] = [
        ("results.csv", |run, _| run.join("results.csv")),
        ("a point's stdout.txt", |run, todo| {
            run.join("points").join(&todo[0]).join("stdout.txt")
        }),
        ("a point's folder", |run, todo| {
            run.join("points").join(&todo[1])
        }),
    ];
    for (what, place) in plants {
        let p = project();
        let (run, todo) = unfinished_saw(p.path());
        let link = place(&run, &todo);
        if what == "results.csv" {
            // A hard link too: another name of the file, which an append would change.
            let copy = outside.path().join("hard.csv");
            let _ = std::fs::remove_file(&copy);
            std::fs::hard_link(&link, &copy).unwrap();
            let out = sweep(p.path())
                .args(["run", "sweeps/saw4.toml", "-q", "--no-analyze"])
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
            assert!(
                stderr(&out).contains("(to a file of 2 names: a hard link)"),
                "{}",
                stderr(&out)
            );
            assert_eq!(rows(&copy).len(), 2, "nothing appended");
            std::fs::remove_file(&copy).unwrap();
        }
        // What the link points to: a copy of what it replaces, which a write through it changes.
        let victim = outside.path().join(what.replace(' ', "_"));
        if link.is_dir() {
            std::fs::rename(&link, &victim).unwrap();
        } else {
            std::fs::copy(&link, &victim).unwrap();
            std::fs::remove_file(&link).unwrap();
        }
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let snapshot = || -> Vec<(PathBuf, Vec<u8>)> {
            walkdir::WalkDir::new(&victim)
                .into_iter()
                .map(|e| e.unwrap().into_path())
                .filter(|f| f.is_file())
                .map(|f| (f.clone(), std::fs::read(&f).unwrap()))
                .collect()
        };
        let before = snapshot();
        let out = sweep(p.path())
            .args(["run", "sweeps/saw4.toml", "-q", "--no-analyze"])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{what}: {err}");
        assert_eq!(err.lines().count(), 1, "{what}: {err}");
        assert!(
            err.contains(&format!(
                "`{}`",
                link.strip_prefix(p.path()).unwrap().display()
            )) && err.contains("link"),
            "{what}: {err}"
        );
        assert_eq!(snapshot(), before, "{what}: written through the link");
        assert!(
            !run.join("run.lock").is_symlink() && link.is_symlink(),
            "{what}: the folder is left as it was"
        );
        // `--force` leaves that run alone and starts a new one.
        sweep(p.path())
            .args(["run", "sweeps/saw4.toml", "-q", "--no-analyze", "--force"])
            .assert()
            .success();
        assert_eq!(snapshot(), before, "{what}: written through the link");
        assert_eq!(run_dirs(&p.path().join("output/saw4")).len(), 2);
    }
}

/// M5: `compare --fail-on-slower` exited 0 when B failed at 11 of 12 points: the one value left
/// was not slower, and the 11 were only listed. A point that A measured and B failed at (or has
/// no value at) is one the check cannot clear: exit 1, saying how many and the first.
#[test]
fn compare_fail_on_slower_fails_when_b_failed_at_points_a_measured() {
    let p = project();
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 12]")
        .replace("[analyze]\nx = \"threads\"\n", "");
    write(p.path(), "sweeps/twelve.toml", &spec);
    sweep(p.path())
        .args(["run", "sweeps/twelve.toml", "-q", "--no-analyze"])
        .assert()
        .success();
    let a = run_dirs(&p.path().join("output/twelve")).pop().unwrap();
    // B: the same run, but its program failed at every point but the first (as a run of a
    // broken build does), written as sweep writes a failed row.
    let b = p.path().join("b.csv");
    let mut r = csv::Reader::from_path(a.join("results.csv")).unwrap();
    let header = r.headers().unwrap().clone();
    let mut w = csv::Writer::from_path(&b).unwrap();
    w.write_record(&header).unwrap();
    for (i, rec) in r.records().enumerate() {
        let rec = rec.unwrap();
        let row: Vec<String> = header
            .iter()
            .zip(rec.iter())
            .map(|(h, v)| match h {
                _ if i == 0 => v.to_string(),
                "status" => "run_failed".into(),
                "error" => "run exited 1 (log: stderr.txt)".into(),
                h if h.starts_with("saw") => String::new(),
                _ => v.to_string(),
            })
            .collect();
        w.write_record(&row).unwrap();
    }
    w.flush().unwrap();
    let out = sweep(p.path())
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .args(["--fail-on-slower", "5"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}{}", stdout(&out));
    assert_eq!(
        err,
        "error: --fail-on-slower: B failed or has no value at 11 of 12 matched points that A measured (first: threads=2, B run_failed); nothing shows they are not slower (hint: `sweep compare` without it lists them)\n"
    );
    // A failing where B measured is no loss of B's: that alone passes.
    let out = sweep(p.path())
        .arg("compare")
        .arg(&b)
        .arg(&a)
        .args(["--fail-on-slower", "5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// `sweeps/saw2.toml`: saw.toml over threads 1..2.
fn saw2(p: &Path) {
    let spec = std::fs::read_to_string(p.join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 2]")
        .replace("[analyze]\nx = \"threads\"\n", "");
    write(p, "sweeps/saw2.toml", &spec);
}

/// Low: Emacs's lock (`.#hostsaw.c`, a link to nowhere made while a file has unsaved changes)
/// stopped every run as a link that cannot be followed; an editor's backup and swap files
/// changed the build cache's key. They are no input.
#[cfg(unix)]
#[test]
fn an_editors_lock_and_backup_files_in_a_bench_are_no_input() {
    let p = project();
    saw2(p.path());
    let bench = p.path().join("cuda/hostsaw");
    let run = |force: bool| -> Vec<String> {
        let mut c = sweep(p.path());
        c.args(["run", "sweeps/saw2.toml", "-q", "--no-analyze"]);
        if force {
            c.arg("--force");
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let run = run_dirs(&p.path().join("output/saw2")).pop().unwrap();
        rows(&run.join("results.csv"))
            .into_iter()
            .map(|r| r["cached"].clone())
            .collect()
    };
    run(false);
    std::os::unix::fs::symlink("user@host.12345:1700000000", bench.join(".#hostsaw.c")).unwrap();
    write(&bench, "hostsaw.c~", "an older hostsaw.c");
    write(&bench, "#hostsaw.c#", "emacs auto-save");
    write(&bench, ".hostsaw.c.swp", "vim swap");
    write(&bench, "params.h.tera~", "#define OLD {{ nope }}\n");
    assert_eq!(run(true), ["1", "1"], "the same inputs: from the cache");
}

/// Low: `sweep list` echoed a line break or an escape (ANSI codes) in a spec's or a bench's file
/// name to the terminal: one entry took two lines, or recoloured or cleared the screen. They are
/// shown escaped, as errors show them.
#[test]
fn list_shows_control_characters_in_names_escaped() {
    let p = project();
    let saw = std::fs::read_to_string(p.path().join("sweeps/saw.toml")).unwrap();
    write(p.path(), "sweeps/two\nlines.toml", &saw);
    write(p.path(), "sweeps/red\u{1b}[31m.toml", &saw);
    let bench = "clear\u{1b}[2J";
    write(
        p.path(),
        &format!("cuda/{bench}/{bench}.c"),
        "int main(void) { return 0; }\n",
    );
    let out = sweep(p.path()).arg("list").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(!text.contains('\u{1b}'), "{text:?}");
    for shown in [
        "sweeps/two\\nlines.toml",
        "sweeps/red\\u{1b}[31m.toml",
        "clear\\u{1b}[2J",
    ] {
        let line = text.lines().find(|l| l.contains(shown));
        assert!(line.is_some(), "{shown} on a line of its own: {text}");
    }
    assert_eq!(
        text.lines().count(),
        2 + 5 + 7,
        "a line per bench and per spec, with their headings: {text}"
    );
}

/// Low: reading a run trimmed every cell, so the group values `"  lead"` and `"trail  "` (axis
/// values of their own) came out of analysis.csv as `lead` and `trail`, and two values that
/// differ only by blanks fell into one series. Text keeps its blanks; a padded number is read
/// as the number.
#[test]
fn group_values_keep_their_blanks_in_the_analysis() {
    let p = project();
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 8]")
        .replace(
            "[[axis]]\nname = \"threads\"",
            "[[axis]]\nname = \"variant\"\nvalues = [\"  lead\", \"lead\", \"trail  \"]\n[[axis]]\nname = \"threads\"",
        );
    write(p.path(), "sweeps/blank.toml", &spec);
    let out = sweep(p.path())
        .args(["run", "sweeps/blank.toml", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let run = run_dirs(&p.path().join("output/blank")).pop().unwrap();
    let groups: Vec<String> = rows(&run.join("analysis.csv"))
        .into_iter()
        .map(|r| r["variant"].clone())
        .collect();
    assert_eq!(groups, ["  lead", "lead", "trail  "]);
}

/// Low: `merge --out DIR` into a folder of the user's wrote its controls.csv over theirs (only a
/// results.csv or manifest.json there stopped it), and said "already holds a merged run" of any
/// run. `--out` takes a new or empty folder; anything else is refused, saying what it holds, and
/// left as it was.
#[test]
fn merge_out_into_a_folder_that_holds_files_refuses_and_overwrites_nothing() {
    let p = project();
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 8]")
        .replace("[analyze]\nx = \"threads\"\n", "");
    write(p.path(), "sweeps/s8.toml", &spec);
    for i in 0..2 {
        sweep(p.path())
            .args(["run", "sweeps/s8.toml", "-q", "--no-analyze"])
            .args(["--shard", &format!("{i}/2")])
            .assert()
            .success();
    }
    let mine = write(p.path(), "mine/controls.csv", "my own notes\n");
    let out = sweep(p.path())
        .args(["merge", "output/s8", "--out", "mine"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "error: --out `mine` is not empty (it holds `controls.csv`): a merge writes a run folder of its own (hint: --out takes a new or empty folder; without --out the merge goes to <sweep folder>/<stamp>-merged)\n"
    );
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "my own notes\n");
    assert_eq!(std::fs::read_dir(p.path().join("mine")).unwrap().count(), 1);
    // A shard's run folder is a run, not "a merged run".
    let shard = run_dirs(&p.path().join("output/s8")).pop().unwrap();
    let out = sweep(p.path())
        .args(["merge", "output/s8", "--out"])
        .arg(&shard)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("` already holds a run: "),
        "{}",
        stderr(&out)
    );
    // A new folder, or an empty one, takes the merge.
    std::fs::create_dir_all(p.path().join("empty")).unwrap();
    for dir in ["new", "empty"] {
        sweep(p.path())
            .args(["merge", "output/s8", "--out", dir])
            .assert()
            .success();
        assert_eq!(rows(&p.path().join(dir).join("results.csv")).len(), 8);
    }
}

/// Low: a build that failed for want of room in the build cache (its binary is written there)
/// was blamed on the run folder. The error names the cache's folder.
#[test]
fn a_full_build_cache_is_named_not_the_run_folder() {
    let p = project();
    let cache = p.path().join("cache");
    let Some(_disk) = crate::driver_faults::Tmpfs::mount(&cache, "1m") else {
        return;
    };
    // A program of 4 MB (an initialised array), more than the cache's disk holds.
    write(
        p.path(),
        "cuda/big/big.c",
        "#include \"params.h\"\n#include <stdio.h>\nstatic char big[4 << 20] = {1};\nint main(void) {\n  printf(\"MFlops: %d\\n\", THREADS + big[THREADS]);\n  return 0;\n}\n",
    );
    write(
        p.path(),
        "cuda/big/params.h.tera",
        "#define THREADS {{ threads }}\n",
    );
    write(
        p.path(),
        "sweeps/big.toml",
        "bench = \"big\"\ncompiler = \"cc\"\n[[axis]]\nname = \"threads\"\nrange = [1, 2]\n[[metric]]\npattern = \"mflops\"\n",
    );
    let out = sweep(p.path())
        .args(["run", "sweeps/big.toml", "-q", "--no-analyze", "--cache"])
        .arg(&cache)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains(&format!("the file system of `{}` is full", cache.display())),
        "{err}"
    );
}

/// Low: a run stopped by a full disk left `counts: {}` in its manifest although its results.csv
/// held rows; an interrupted run's manifest counts what it recorded, as one stopped by Ctrl-C does.
#[test]
fn the_manifest_of_a_run_stopped_by_a_full_disk_counts_its_rows() {
    let p = project();
    let Some(_disk) = crate::driver_faults::Tmpfs::mount(&p.path().join("output"), "3m") else {
        return;
    };
    crate::driver_faults::chatty(p.path(), 24, 300);
    let out = sweep(p.path())
        .args([
            "run",
            "sweeps/chatty.toml",
            "-q",
            "-j",
            "1",
            "--no-analyze",
            "--cache",
        ])
        .arg(p.path().join("cache"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let run = run_dirs(&p.path().join("output/chatty")).pop().unwrap();
    let m = common::manifest(&run);
    assert_eq!(m["state"], "interrupted");
    let recorded = rows(&run.join("results.csv")).len();
    assert!(recorded > 0, "the disk filled after some rows");
    assert_eq!(m["counts"], serde_json::json!({ "ok": recorded }), "{m}");
}

/// Found on the second look at H1: `CPATH` (or `NVCC_APPEND_FLAGS`, ...) changes which header a
/// build reads, or its flags, without a change to anything the key held: a build made under
/// another value was taken (cached=1, the other header's values).
#[test]
fn a_compilers_environment_is_part_of_the_cache_key() {
    let p = project();
    let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(one.path().join("value.h"), "#define VALUE 10\n").unwrap();
    std::fs::write(two.path().join("value.h"), "#define VALUE 7\n").unwrap();
    including_bench(p.path(), "c", "<value.h>", "compiler = \"cc\"");
    let run = |cpath: &Path| run_inc_with(p.path(), &[("CPATH", cpath.as_os_str())]);
    assert_eq!(run(one.path())[0].1, "10");
    assert_eq!(
        run(two.path()),
        [("0".into(), "7".into()), ("0".into(), "14".into())]
    );
    assert_eq!(
        run(one.path()),
        [("1".into(), "10".into()), ("1".into(), "20".into())]
    );
}

/// Found repeating H1: the resume's check that the bench did not change (its files' hash) missed
/// a header from outside the bench: after it changed, the resume built the remaining points from
/// it, and results.csv held rows of two programs (exit 0). The run keeps the list of what its
/// builds read (`build-inputs.txt`), and the resume refuses when one of them changed.
#[test]
fn a_resume_after_a_header_from_outside_the_bench_changed_is_refused() {
    let p = project();
    let value_h = p.path().join("cuda/shared/value.h");
    std::fs::create_dir_all(value_h.parent().unwrap()).unwrap();
    std::fs::write(&value_h, "#define VALUE 10\n").unwrap();
    including_bench(p.path(), "c", "\"../shared/value.h\"", "compiler = \"cc\"");
    let unfinished = || {
        let run = run_dirs(&p.path().join("output/inc")).pop().unwrap();
        unfinish(&run, 1);
        run
    };
    let resume = || {
        sweep(p.path())
            .args(["run", "sweeps/inc.toml", "-q", "--no-analyze"])
            .output()
            .unwrap()
    };
    run_inc(p.path());
    let run = unfinished();
    let listed = std::fs::read_to_string(run.join("build-inputs.txt")).unwrap();
    assert!(listed.contains("shared/value.h"), "{listed}");
    // Nothing changed: the resume finishes the run.
    let out = resume();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(rows(&run.join("results.csv")).len(), 2);
    unfinished();
    std::fs::write(&value_h, "#define VALUE 7\n").unwrap();
    let out = resume();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.starts_with(&format!(
            "error: `{}`, which the builds of the unfinished run `",
            p.path().join("cuda/inc/../shared/value.h").display()
        )) && err.contains("changed since (or is gone)"),
        "{err}"
    );
    assert_eq!(rows(&run.join("results.csv")).len(), 1, "nothing run");
    // --force starts a new run with the new header.
    let out = sweep(p.path())
        .args(["run", "sweeps/inc.toml", "-q", "--no-analyze", "--force"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let newest = run_dirs(&p.path().join("output/inc")).pop().unwrap();
    assert_ne!(newest, run);
    let values: Vec<String> = rows(&newest.join("results.csv"))
        .into_iter()
        .map(|r| r["mflops"].clone())
        .collect();
    assert_eq!(values, ["7", "14"]);
}

/// Found repeating M2: `plot` and `export` wrote their files through a `charts` or `export`
/// folder planted in a run as a symbolic link, into the folder it points to. They refuse it,
/// naming the link; a `--out` the user names may be a link.
#[cfg(unix)]
#[test]
fn plot_and_export_never_write_through_a_planted_folder_link() {
    let p = project();
    saw2(p.path());
    sweep(p.path())
        .args(["run", "sweeps/saw2.toml", "-q", "--no-analyze"])
        .assert()
        .success();
    let run = run_dirs(&p.path().join("output/saw2")).pop().unwrap();
    let outside = tempfile::tempdir().unwrap();
    for (folder, command) in [("charts", "plot"), ("export", "export")] {
        let target = outside.path().join(folder);
        std::fs::create_dir_all(&target).unwrap();
        let _ = std::fs::remove_dir_all(run.join(folder));
        std::os::unix::fs::symlink(&target, run.join(folder)).unwrap();
        let out = sweep(p.path()).arg(command).arg(&run).output().unwrap();
        let err = stderr(&out);
        assert_ne!(out.status.code(), Some(0), "{command}: {err}");
        assert!(
            err.contains(&format!(
                "`{}`: it is a symbolic link",
                run.join(folder).display()
            )),
            "{command}: {err}"
        );
        assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0, "{command}");
    }
    let mine = outside.path().join("mine");
    std::os::unix::fs::symlink(outside.path().join("export"), &mine).unwrap();
    let out = sweep(p.path())
        .arg("export")
        .arg(&run)
        .arg("--out")
        .arg(&mine)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

/// Fills the file system holding `dir` (a file `pad` there written until it is refused).
pub(crate) fn fill(dir: &Path) {
    use std::io::Write;
    let mut pad = std::fs::File::create(dir.join("pad")).unwrap();
    let block = vec![0u8; 64 << 10];
    while pad.write_all(&block).is_ok() {}
    let _ = pad.sync_all();
}

/// Found repeating item 4: `plot` (and compare's compare.md) wrote each file in place, so a full
/// disk or a kill mid-write left an empty or cut chart where a good one was, or a 0-byte one.
/// Charts are written through a temporary file and renamed: a failed plot leaves no torn file.
#[test]
fn a_plot_on_a_full_disk_leaves_no_empty_or_cut_chart() {
    let p = project();
    let Some(_disk) = crate::driver_faults::Tmpfs::mount(&p.path().join("output"), "2m") else {
        return;
    };
    let out = sweep(p.path())
        .args(["run", "sweeps/saw.toml", "-q", "--no-analyze", "--cache"])
        .arg(p.path().join("cache"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let run = run_dirs(&p.path().join("output/saw")).pop().unwrap();
    fill(&p.path().join("output"));
    let out = sweep(p.path()).arg("plot").arg(&run).output().unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let charts = run.join("charts");
    for e in std::fs::read_dir(&charts).into_iter().flatten() {
        let e = e.unwrap();
        assert!(
            e.file_name().to_string_lossy().starts_with('.') || e.metadata().unwrap().len() > 0,
            "{} is empty",
            e.path().display()
        );
    }
}

/// Found repeating H1: another `cc` first on PATH (here a wrapper that adds `-DVALUE=7`; also
/// another install of the same release) was taken for the one that built the cached binary, whose
/// key held the compiler's name and version only: cached=1 and the other program's values.
#[test]
fn another_compiler_of_the_same_name_on_path_is_part_of_the_cache_key() {
    let p = project();
    let wrap = tempfile::tempdir().unwrap();
    let cc = wrap.path().join("cc");
    if !common::on_path("cc") {
        return common::skip("no cc on PATH");
    }
    let cc_dir = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .find(|d| d.join("cc").is_file())
        .unwrap();
    common::script(
        &cc,
        &format!(
            "#!/bin/sh\nexec {} -DVALUE=7 \"$@\"\n",
            cc_dir.join("cc").display()
        ),
    );
    including_bench(
        p.path(),
        "c",
        "<stdlib.h>\n#ifndef VALUE\n#define VALUE 10\n#endif",
        "compiler = \"cc\"",
    );
    let run = |path: &std::ffi::OsStr| run_inc_with(p.path(), &[("PATH", path)]);
    let plain = std::env::var_os("PATH").unwrap();
    let mut wrapped = wrap.path().as_os_str().to_os_string();
    wrapped.push(":");
    wrapped.push(&plain);
    assert_eq!(run(&plain)[1], ("0".into(), "20".into()));
    assert_eq!(
        run(&wrapped),
        [("0".into(), "7".into()), ("0".into(), "14".into())]
    );
    assert_eq!(run(&plain)[1], ("1".into(), "20".into()));
}

/// Found repeating H1: a resume under another compiler release (another toolkit loaded, another
/// `cc` first on PATH) built the remaining points with it, its headers lying elsewhere unchanged,
/// and results.csv held rows of two compilers (exit 0). The resume is refused, naming both
/// releases; --force starts a new run.
#[test]
fn a_resume_under_another_compiler_release_is_refused() {
    let p = project();
    if !common::on_path("cc") {
        return common::skip("no cc on PATH");
    }
    let real = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .find(|d| d.join("cc").is_file())
        .unwrap()
        .join("cc");
    let wrap = tempfile::tempdir().unwrap();
    let cc = wrap.path().join("cc");
    common::script(&cc, &format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'cc (other) 99.1.0'; exit 0; fi\nexec {} -DVALUE=7 \"$@\"\n",
            real.display()
        ));
    including_bench(
        p.path(),
        "c",
        "<stdlib.h>\n#ifndef VALUE\n#define VALUE 10\n#endif",
        "compiler = \"cc\"",
    );
    run_inc(p.path());
    let run = run_dirs(&p.path().join("output/inc")).pop().unwrap();
    let csv = run.join("results.csv");
    unfinish(&run, 1);
    let mut path = wrap.path().as_os_str().to_os_string();
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap());
    let out = sweep(p.path())
        .env("PATH", &path)
        .args(["run", "sweeps/inc.toml", "-q", "--no-analyze"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("was built with `") && err.contains("and `cc` is now `cc (other) 99.1.0`"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(rows(&csv).len(), 1, "nothing run");
    let out = sweep(p.path())
        .env("PATH", &path)
        .args(["run", "sweeps/inc.toml", "-q", "--no-analyze", "--force"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let newest = run_dirs(&p.path().join("output/inc")).pop().unwrap();
    assert_ne!(newest, run);
    assert_eq!(rows(&newest.join("results.csv"))[1]["mflops"], "14");
}

/// Found repeating item 5: `compare A B --out A` wrote its charts over the run's own
/// (`charts/saw.png` became the A/B chart, which the run's report then showed). A run folder as
/// `--out` is refused, as export refuses one.
#[test]
fn compare_out_into_a_run_folder_is_refused() {
    let p = project();
    let out = sweep(p.path())
        .args(["run", "sweeps/saw.toml", "-q", "-a", "threads=1:8"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let run = run_dirs(&p.path().join("output/saw")).pop().unwrap();
    let charts: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(run.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|f| (f.clone(), std::fs::read(&f).unwrap()))
        .collect();
    assert!(!charts.is_empty());
    let out = sweep(p.path())
        .arg("compare")
        .args([&run, &run])
        .arg("--out")
        .arg(&run)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is a run folder: compare's charts would replace"),
        "{err}"
    );
    for (f, bytes) in charts {
        assert_eq!(std::fs::read(&f).unwrap(), bytes, "{}", f.display());
    }
    assert!(!run.join("compare.csv").exists());
}

/// Found repeating item 5: `analyze A --out B` (or `plot`), B another run's folder, replaced B's
/// analysis.json, analysis.csv, analysis.md and charts with A's, which B's report then showed as
/// its own. Another run's folder as `--out` is refused; the run's own folder is as without --out.
#[test]
fn analyze_or_plot_out_into_another_run_is_refused() {
    let p = project();
    for _ in 0..2 {
        let out = sweep(p.path())
            .args([
                "run",
                "sweeps/saw.toml",
                "-q",
                "--force",
                "-a",
                "threads=1:8",
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let runs = run_dirs(&p.path().join("output/saw"));
    let (a, b) = (&runs[0], &runs[1]);
    let before = std::fs::read(b.join("analysis.json")).unwrap();
    for command in ["analyze", "plot"] {
        let out = sweep(p.path())
            .args([command, &a.display().to_string(), "--out"])
            .arg(b)
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{command}: {err}");
        assert!(err.contains("is another run's folder"), "{err}");
    }
    assert_eq!(std::fs::read(b.join("analysis.json")).unwrap(), before);
    let out = sweep(p.path())
        .args(["analyze", &a.display().to_string(), "--out"])
        .arg(a)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

/// `sweeps/<name>.toml`: saw.toml over threads 1..2 with `extra` at its top.
fn saw2_with(p: &Path, name: &str, extra: &str) {
    let spec = std::fs::read_to_string(p.join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 2]")
        .replace("[analyze]\nx = \"threads\"\n", "");
    write(
        p,
        &format!("sweeps/{name}.toml"),
        &format!("{extra}\n{spec}"),
    );
}

/// Review 4: numbers at the edge of what a spec holds. `run_timeout_s = 9223372036854775807`
/// passed the spec's check (a Duration holds it) and panicked where the run took its deadline
/// (exit 101, the manifest left `running`); `repeat = 4294967295` planned that many passes up
/// front and took memory without bound (8 GB in 2 minutes); a range from i64::MIN to i64::MAX
/// with a step of i64::MAX panicked on an overflow (debug builds). Refused in one line with the
/// key, or expanded.
#[test]
fn timeouts_repeat_and_ranges_at_the_edge_of_64_bits_are_refused_or_expanded_without_a_panic() {
    let p = project();
    for (extra, key) in [
        ("run_timeout_s = 9223372036854775807", "run_timeout_s"),
        ("build_timeout_s = 9223372036854775807", "build_timeout_s"),
        ("run_timeout_s = 2e9", "run_timeout_s"),
        ("repeat = 4294967295", "repeat"),
        ("repeat = 1001", "repeat"),
    ] {
        saw2_with(p.path(), "edge", extra);
        let out = sweep(p.path())
            .args(["run", "sweeps/edge.toml", "-q", "--no-analyze"])
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{extra}: {err}");
        assert_eq!(err.lines().count(), 1, "{extra}: {err}");
        assert!(
            err.starts_with("error: sweeps/edge.toml:1: `") && err.contains(&format!("`{key}`")),
            "{extra}: {err}"
        );
        assert!(err.contains("(hint: at most "), "{extra}: {err}");
        assert!(!p.path().join("output/edge").exists(), "{extra}: no run");
    }
    saw2_with(p.path(), "edge", "repeat = 1000\nrun_timeout_s = 1e9");
    sweep(p.path())
        .args(["plan", "sweeps/edge.toml"])
        .assert()
        .success();
    let out = sweep(p.path())
        .args(["plan", "sweeps/edge.toml", "-a"])
        .arg("threads=-9223372036854775808:9223372036854775807:9223372036854775807")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for v in [
        "threads=-9223372036854775808",
        "threads=-1",
        "threads=9223372036854775806",
    ] {
        assert!(text.contains(v), "{v}: {text}");
    }
}

/// Review 4: a control character in an axis value, a label or `plot --title` (`"a\u0001b"` in a
/// spec) went raw into the chart's SVG, which XML forbids: the SVG was unreadable, its PNG
/// failed, the run's charts ended in a warning and `plot` exited 4 (environment) naming a chart,
/// not the text. It is written as its escape (`\u{1}`), as the terminal shows it.
#[test]
fn control_characters_in_names_make_readable_charts() {
    let p = project();
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 3]\nlabel = \"threads\\u001b[31m\"")
        .replace(
            "[[axis]]\nname = \"threads\"",
            "[[axis]]\nname = \"variant\"\nvalues = [\"a\\u0001b\", \"c\"]\n[[axis]]\nname = \"threads\"",
        );
    write(p.path(), "sweeps/ctl.toml", &spec);
    let out = sweep(p.path())
        .args(["run", "sweeps/ctl.toml", "-q"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("warning"), "{err}");
    let run = run_dirs(&p.path().join("output/ctl")).pop().unwrap();
    let check = |charts: &Path| {
        let (mut svgs, mut shown) = (0, 0);
        for e in std::fs::read_dir(charts).unwrap() {
            let f = e.unwrap().path();
            if f.extension().is_some_and(|x| x == "svg") {
                svgs += 1;
                let text = std::fs::read_to_string(&f).unwrap();
                assert!(
                    !text.contains(['\u{1}', '\u{1b}']),
                    "{}: a raw control character",
                    f.display()
                );
                shown += usize::from(text.contains("a\\u{1}b"));
                assert!(f.with_extension("png").is_file(), "{}", f.display());
            }
        }
        assert!(svgs >= 2, "{}", charts.display());
        assert!(shown >= 1, "{}: the value shown escaped", charts.display());
    };
    check(&run.join("charts"));
    let out = sweep(p.path())
        .arg("plot")
        .arg(&run)
        .args(["--title", "two\nlines \u{7} and \u{1b}[2J", "--out"])
        .arg(p.path().join("titled"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    check(&p.path().join("titled/charts"));
}

/// A bench `name` whose C program prints one line, `line` with its `%s` filled by the value of
/// axis `x` (a string macro `X`), swept over `values` with one metric `copy` in `unit`: the rows of
/// the run, which ends with exit 1 (some points failed).
fn one_line_bench(
    p: &Path,
    name: &str,
    line: &str,
    values: &[&str],
    unit: &str,
) -> crate::common::Rows {
    write(
        p,
        &format!("cuda/{name}/{name}.c"),
        &format!(
            "#include \"params.h\"\n#include <stdio.h>\nint main(void) {{\n  printf(\"{line}\\n\", X);\n  return 0;\n}}\n"
        ),
    );
    write(
        p,
        &format!("cuda/{name}/params.h.tera"),
        "#define X \"{{ x }}\"\n",
    );
    let values: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
    write(
        p,
        &format!("sweeps/{name}.toml"),
        &format!(
            "bench = \"{name}\"\ncompiler = \"cc\"\n[[axis]]\nname = \"x\"\nvalues = [{}]\n[[metric]]\nname = \"copy\"\nunit = \"{unit}\"\n",
            values.join(", ")
        ),
    );
    let out = sweep(p)
        .args(["run", &format!("sweeps/{name}.toml"), "-q", "--no-analyze"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let run = run_dirs(&p.join(format!("output/{name}"))).pop().unwrap();
    rows(&run.join("results.csv"))
}

/// Review 4: the `@sweep` line's unit was never read: a program that reports `unit=GB/s` for a
/// metric the spec calls `MB/s` (a unit changed in the bench, not in the spec) had its value
/// written into the `_mb_per_s` column, off by 1000, status ok. That metric is missing, and the
/// error names both units; a unit that only differs in case or spelling of its slug is the same.
#[test]
fn a_timing_core_line_in_another_unit_than_the_specs_is_no_value_of_it() {
    let p = project();
    let rows = one_line_bench(
        p.path(),
        "units",
        "@sweep metric=copy unit=%s value=2.5 median=2.5 stddev=0 min=2.5 max=2.5 rel_ci=0.001 samples=10 noisy=0 throttled=0",
        &["GB/s", "MB/s", "mb/S"],
        "MB/s",
    );
    let got: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r["status"].as_str(), r["copy_mb_per_s"].as_str()))
        .collect();
    assert_eq!(got, [("no_metric", ""), ("ok", "2.5"), ("ok", "2.5")]);
    assert!(
        rows[0]["error"].starts_with(
            "no metric `copy_mb_per_s` in the output: `copy_mb_per_s` printed in `GB/s`, not the spec's `MB/s` (hint: make the spec's unit the program's)"
        ),
        "{}",
        rows[0]["error"]
    );
}

/// Review 4: `--export-json` on a resume. `--export-json RUN/results.csv` replaced the run's
/// results with the JSON document (exit 0; the next report failed on "another header"); a
/// relative path was taken from the folder the run started in, not the user's (a file written
/// into the project folder, none where asked). A file inside a run folder is refused (exit 2,
/// nothing run); a relative path is the user's.
#[test]
fn export_json_never_replaces_a_runs_file_and_lands_where_the_user_is() {
    let p = project();
    let (run, _) = unfinished_saw(p.path());
    let csv = run.join("results.csv");
    let before = std::fs::read(&csv).unwrap();
    for inside in [csv.clone(), run.join("points/x.json")] {
        let out = sweep(p.path())
            .arg("resume")
            .arg(&run)
            .args(["-q", "--no-analyze", "--export-json"])
            .arg(&inside)
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("is inside the run folder") && err.lines().count() == 1,
            "{err}"
        );
        assert_eq!(
            std::fs::read(&csv).unwrap(),
            before,
            "nothing run or replaced"
        );
    }
    // A folder, or a file in a folder that is not there: said before the sweep (it was a
    // warning after it, exit 0 and no file).
    for bad in [
        p.path().to_path_buf(),
        p.path().join("no/such/folder/x.json"),
    ] {
        let out = sweep(p.path())
            .arg("resume")
            .arg(&run)
            .args(["-q", "--no-analyze", "--export-json"])
            .arg(&bad)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert_eq!(std::fs::read(&csv).unwrap(), before, "nothing run");
    }
    let elsewhere = tempfile::tempdir().unwrap();
    let out = sweep(elsewhere.path())
        .arg("resume")
        .arg(&run)
        .args(["-q", "--no-analyze", "--export-json", "mine.json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(elsewhere.path().join("mine.json").is_file());
    assert!(!p.path().join("mine.json").exists());
    assert_eq!(rows(&csv).len(), 4);
}

/// Review 4: a run killed with SIGKILL (or the OOM killer, a node lost) keeps `running` in its
/// manifest, and `sweep report` wrote a page that said "Running" and reloaded itself every 10 s,
/// forever. A run whose lock no sweep holds is shown interrupted; one a sweep holds, running.
#[cfg(unix)]
#[test]
fn the_report_of_a_run_killed_with_sigkill_says_interrupted_not_running() {
    let p = project();
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml"))
        .unwrap()
        .replace("slow_ms = 0", "slow_ms = 300")
        .replace("range = [1, 64]", "range = [1, 20]");
    write(p.path(), "sweeps/slow.toml", &spec);
    let mut child = common::sweep_process(p.path())
        .args(["run", "sweeps/slow.toml", "-q", "--no-analyze"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let sweep_dir = p.path().join("output/slow");
    let csv = || {
        sweep_dir
            .is_dir()
            .then(|| run_dirs(&sweep_dir))
            .and_then(|mut r| r.pop())
            .map(|r| r.join("results.csv"))
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while csv().is_none_or(|c| rows_or_none(&c) < 2) {
        assert!(std::time::Instant::now() < deadline, "no rows");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let run = run_dirs(&p.path().join("output/slow")).pop().unwrap();
    let page = |run: &Path| {
        let out = sweep(p.path()).arg("report").arg(run).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        std::fs::read_to_string(run.join("report.html")).unwrap()
    };
    let live = page(&run);
    assert!(
        live.contains("<title>sweep: slow (running)</title>"),
        "{live}"
    );
    assert!(live.contains("http-equiv=\"refresh\""));
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        common::manifest(&run)["state"],
        "running",
        "SIGKILL: no word"
    );
    let dead = page(&run);
    assert!(
        dead.contains("<title>sweep: slow (interrupted)</title>"),
        "{dead}"
    );
    assert!(!dead.contains("http-equiv=\"refresh\""));
    assert!(!dead.contains("Running: this page"));
}

/// The rows of a CSV that may not be there yet or may be half written: 0 then.
fn rows_or_none(csv: &Path) -> usize {
    std::fs::read_to_string(csv)
        .map(|t| t.lines().count().saturating_sub(1))
        .unwrap_or(0)
}

/// Review 4: `merge` made its `<stamp>-merged` folder with a manifest saying `running` first and
/// wrote the CSVs into it after: killed between (Ctrl-C twice, SIGKILL, a node's time limit), it
/// left a run folder with no results.csv that said `running` for good (the report reloaded
/// itself forever; `sweep resume` of it measured every point again). The merge is written into
/// a hidden folder and renamed: SIGKILL at any moment leaves a whole merge or none.
#[cfg(unix)]
#[test]
fn a_merge_killed_at_any_moment_leaves_a_whole_merged_run_or_none() {
    let p = project();
    // One build for every point (the header names no axis): a run of 1000 points in seconds.
    write(
        p.path(),
        "cuda/flat/flat.c",
        "#include \"params.h\"\n#include <stdio.h>\nint main(void) { printf(\"MFlops: %d\\n\", FLAT); return 0; }\n",
    );
    write(p.path(), "cuda/flat/params.h.tera", "#define FLAT 1\n");
    write(
        p.path(),
        "sweeps/flat.toml",
        "bench = \"flat\"\ncompiler = \"cc\"\ncontrol_every = 0\n[[axis]]\nname = \"threads\"\nrange = [1, 1000]\n[[metric]]\npattern = \"mflops\"\n",
    );
    sweep(p.path())
        .args(["run", "sweeps/flat.toml", "-q", "--no-analyze"])
        .assert()
        .success();
    let sweep_dir = p.path().join("output/flat");
    let run = run_dirs(&sweep_dir).pop().unwrap();
    for i in 0..40u64 {
        let mut child = common::sweep_process(p.path())
            .arg("merge")
            .arg(&run)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_micros(5000 * i));
        let _ = child.kill();
        child.wait().unwrap();
    }
    // One more, left to end: the check below sees at least one whole merge.
    sweep(p.path()).arg("merge").arg(&run).assert().success();
    let mut merged = 0;
    for dir in run_dirs(&sweep_dir) {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with('.') || dir == run {
            continue;
        }
        merged += 1;
        let m = common::manifest(&dir);
        assert_eq!(m["state"], "finished", "{name}: a torn merge");
        assert_eq!(rows(&dir.join("results.csv")).len(), 1000, "{name}");
    }
    assert!(merged > 0);
}

/// Review 4: `-j` made that many build threads whatever the points: `run -j 1000000` of 6 points
/// spent 37 s making threads that found nothing to build, and `-j 1000000000` would take hours,
/// printing nothing. No more threads than points.
#[test]
fn a_huge_jobs_count_makes_no_more_threads_than_points() {
    let p = project();
    saw2(p.path());
    for command in ["run", "build"] {
        let out = sweep(p.path())
            .args([command, "sweeps/saw2.toml", "-j", "1000000000"])
            .timeout(std::time::Duration::from_secs(30))
            .output()
            .unwrap();
        assert!(out.status.success(), "{command}: {}", stderr(&out));
    }
}

/// Review 4 (low): an axis value `<!--<script>` went as is into the report's JSON data element;
/// after it the HTML parser no longer took `</script>` as the element's end, so the tooltip's
/// script and the page's footer became text of the data (the hover died, the footer vanished).
/// The data holds no `<` (JSON's `\u003c`).
#[test]
fn an_axis_value_that_opens_a_comment_leaves_the_reports_scripts_whole() {
    let p = project();
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 3]")
        .replace(
            "[[axis]]\nname = \"threads\"",
            "[[axis]]\nname = \"variant\"\nvalues = [\"<!--<script>\", \"b\"]\n[[axis]]\nname = \"threads\"",
        );
    write(p.path(), "sweeps/cmt.toml", &spec);
    let out = sweep(p.path())
        .args(["run", "sweeps/cmt.toml", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let run = run_dirs(&p.path().join("output/cmt")).pop().unwrap();
    let page = std::fs::read_to_string(run.join("report.html")).unwrap();
    let start = page.find("id=\"sweep-points\">").expect("the hover data") + 18;
    let data = &page[start..start + page[start..].find("</script>").unwrap()];
    assert!(!data.contains('<'), "{data}");
    assert!(data.contains("\\u003c!--\\u003cscript>"), "{data}");
    let value: serde_json::Value = serde_json::from_str(data).unwrap();
    assert!(value.to_string().contains("<!--<script>"));
}

/// Review 4: `compare` keyed B's rows by their axis values and kept the first of two rows of one
/// point, saying nothing: a B with a second, 1000 times slower row of `threads=1` (two runs'
/// CSVs put together) compared "same", and `--fail-on-slower` passed on a row it never read.
/// Two rows of one point are refused, naming the point and the rows (exit 3).
#[test]
fn compare_refuses_a_results_csv_with_two_rows_of_one_point() {
    let p = project();
    saw2(p.path());
    sweep(p.path())
        .args(["run", "sweeps/saw2.toml", "-q", "--no-analyze"])
        .assert()
        .success();
    let a = run_dirs(&p.path().join("output/saw2")).pop().unwrap();
    let text = std::fs::read_to_string(a.join("results.csv")).unwrap();
    let first = text.lines().nth(1).unwrap().replace(",1000,", ",1,");
    assert_ne!(
        first,
        text.lines().nth(1).unwrap(),
        "a slower copy of row 1"
    );
    let b = p.path().join("b.csv");
    std::fs::write(&b, format!("{text}{first}\n")).unwrap();
    for (x, y) in [
        (a.join("results.csv"), b.clone()),
        (b.clone(), a.join("results.csv")),
    ] {
        let out = sweep(p.path())
            .arg("compare")
            .args([&x, &y])
            .args(["--fail-on-slower", "5"])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{err}{}", stdout(&out));
        assert_eq!(
            err,
            format!(
                "error: `{}` has two rows of the point threads=1 (its rows 1 and 3 after the header) (hint: a run's results.csv has one row per point; keep one of them)\n",
                b.display()
            )
        );
    }
}

/// Review 4: more flags that make the compiler write outside the output folder, each of which a
/// real run followed: `-Wp,-MD,FILE` (the preprocessor's dependency file), a linker's
/// `--dependency-file=FILE` and `--out-implib,FILE`, `-fprofile-generate=DIR` (where the program
/// writes its counts when it runs). Refused in one line naming the flag; nothing written there.
#[test]
fn flags_that_write_dependency_files_or_profiles_elsewhere_are_refused() {
    let p = project();
    let outside = tempfile::tempdir().unwrap();
    let o = outside.path().display();
    for (flags, named) in [
        (format!("\"-Wp,-MD,{o}/a.d\""), "-Wp,-MD".to_string()),
        (
            format!("\"-Wl,--dependency-file={o}/b.d\""),
            format!("--dependency-file={o}/b.d"),
        ),
        (
            format!("\"-Wl,--out-implib,{o}/c\""),
            "--out-implib".to_string(),
        ),
        (
            format!("\"-fprofile-generate={o}/prof\""),
            format!("-fprofile-generate={o}/prof"),
        ),
    ] {
        saw2_with(p.path(), "flagged", "");
        let spec = std::fs::read_to_string(p.path().join("sweeps/flagged.toml"))
            .unwrap()
            .replace(
                "compiler = \"cc\"",
                &format!("compiler = \"cc\"\nflags = [{flags}]"),
            );
        write(p.path(), "sweeps/flagged.toml", &spec);
        let out = sweep(p.path())
            .args(["run", "sweeps/flagged.toml", "-q", "--no-analyze"])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{flags}: {err}");
        assert!(
            err.contains(&format!("`flags` has `{named}`, which names an output")),
            "{flags}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(
            std::fs::read_dir(outside.path()).unwrap().count(),
            0,
            "{flags}: written outside"
        );
    }
}

/// Review 4: `sweep resume` of a shard's run ignored the shard it was: without `--shard` it
/// measured every point of the sweep into that shard's folder (the other shards' too; the
/// merge then refused them as duplicates), exit 0; and `sweep resume` of a `sweep build` folder
/// ran the sweep into it. A resume measures its run's own shard, dealt as it was; another
/// `--shard`, or a build folder, is refused (exit 2).
#[test]
fn a_resume_of_a_shards_run_measures_that_shard_only() {
    let p = project();
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 8]")
        .replace("[analyze]\nx = \"threads\"\n", "");
    write(p.path(), "sweeps/s8.toml", &spec);
    for i in 0..2 {
        sweep(p.path())
            .args([
                "run",
                "sweeps/s8.toml",
                "-q",
                "--no-analyze",
                "--split",
                "points",
            ])
            .args(["--shard", &format!("{i}/2")])
            .assert()
            .success();
    }
    let shard0 = run_dirs(&p.path().join("output/s8"))
        .into_iter()
        .find(|d| d.to_string_lossy().ends_with("-shard-0-of-2"))
        .unwrap();
    let csv = shard0.join("results.csv");
    let ids: Vec<String> = rows(&csv).iter().map(|r| r["point_id"].clone()).collect();
    assert_eq!(ids.len(), 4);
    // Unfinished, as a killed run is: its last row gone, its manifest interrupted.
    unfinish(&shard0, 3);
    let out = sweep(p.path())
        .args(["resume", "-q", "--no-analyze", "--shard", "1/2"])
        .arg(&shard0)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is the run of shard 0/2"),
        "{}",
        stderr(&out)
    );
    let out = sweep(p.path())
        .args(["resume", "-q", "--no-analyze"])
        .arg(&shard0)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let after: Vec<String> = rows(&csv).iter().map(|r| r["point_id"].clone()).collect();
    assert_eq!(after, ids, "the shard's own points, each once");
    sweep(p.path())
        .args(["merge", "output/s8"])
        .assert()
        .success();
    sweep(p.path())
        .args(["build", "sweeps/s8.toml"])
        .assert()
        .success();
    let build = run_dirs(&p.path().join("output/s8"))
        .into_iter()
        .find(|d| d.to_string_lossy().ends_with("-build"))
        .unwrap();
    let out = sweep(p.path())
        .args(["resume", "-q"])
        .arg(&build)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is a `sweep build` folder, not a run"),
        "{}",
        stderr(&out)
    );
    assert!(!build.join("results.csv").exists());
}

/// Review 4: `sweep run --shard 0/2 --split points` resumed the unfinished run of shard 0/2 that
/// was dealt `--split series`: it took the other shard's points beside its own (merge then
/// refused the duplicates) and, with every point of the new deal done, ended `interrupted`,
/// exit 130. Another split than the run's is refused (exit 3); --force starts a new run.
#[test]
fn a_shards_run_is_not_resumed_under_another_split() {
    let p = project();
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 4]")
        .replace("[analyze]\nx = \"threads\"\n", "")
        .replace(
            "[[axis]]\nname = \"threads\"",
            "[[axis]]\nname = \"variant\"\nvalues = [\"a\", \"b\"]\n[[axis]]\nname = \"threads\"",
        );
    write(p.path(), "sweeps/split.toml", &spec);
    let run = |split: &str, force: bool| {
        let mut c = sweep(p.path());
        c.args([
            "run",
            "sweeps/split.toml",
            "-q",
            "--no-analyze",
            "--shard",
            "0/2",
        ])
        .args(["--split", split]);
        if force {
            c.arg("--force");
        }
        c.output().unwrap()
    };
    assert!(run("series", false).status.success());
    let dir = run_dirs(&p.path().join("output/split")).pop().unwrap();
    let csv = dir.join("results.csv");
    let ids: Vec<String> = rows(&csv).iter().map(|r| r["point_id"].clone()).collect();
    unfinish(&dir, ids.len() - 1);
    let out = run("points", false);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "deals its points by series; --split points would give it another shard's points"
        ),
        "{err}"
    );
    assert_eq!(rows(&csv).len(), ids.len() - 1, "nothing run");
    let out = run("series", false);
    assert!(out.status.success(), "{}", stderr(&out));
    let after: Vec<String> = rows(&csv).iter().map(|r| r["point_id"].clone()).collect();
    assert_eq!(after, ids);
    assert!(run("points", true).status.success(), "--force: a new run");
    assert_eq!(run_dirs(&p.path().join("output/split")).len(), 2);
}

/// `sweeps/saw4.toml` (saw.toml over threads 1..4) run to the end; its run folder.
fn finished_saw4(p: &Path) -> PathBuf {
    let spec = std::fs::read_to_string(p.join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 4]");
    write(p, "sweeps/saw4.toml", &spec);
    sweep(p)
        .args(["run", "sweeps/saw4.toml", "-q", "--no-analyze"])
        .assert()
        .success();
    run_dirs(&p.join("output/saw4")).pop().unwrap()
}

/// Review 5, 1: a row of results.csv with a field more or less than the header (not the last
/// row), or with a field that is not UTF-8, was left out by analyze, export, report and compare,
/// saying nothing: a point lost unsaid. Refused in one line naming the file and the line, with a
/// hint (exit 3); a last row cut short (a crash) is still left out.
#[test]
fn a_row_of_another_width_or_not_utf8_is_refused_by_every_reader() {
    let p = project();
    let run = finished_saw4(p.path());
    let csv = run.join("results.csv");
    let good = std::fs::read(&csv).unwrap();
    let text = String::from_utf8(good.clone()).unwrap();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    // Rows end in CRLF, as sweep writes them.
    let row = lines[2].strip_suffix("\r\n").unwrap();
    let short = row.rsplit_once(',').unwrap().0.to_string() + "\r\n";
    let long = row.to_string() + ",extra\r\n";
    let mut bad_utf8 = lines[2].as_bytes().to_vec();
    bad_utf8.splice(bad_utf8.len() - 2..bad_utf8.len() - 2, [0xff_u8]);
    let edits: [(&str, Vec<u8>); 3] = [
        ("fields where the header has", short.into_bytes()),
        ("fields where the header has", long.into_bytes()),
        ("a field is not UTF-8", bad_utf8),
    ];
    let out_dir = tempfile::tempdir().unwrap();
    for (want, row) in edits {
        let mut bytes = [lines[0], lines[1]].concat().into_bytes();
        bytes.extend(&row);
        bytes.extend([lines[3], lines[4]].concat().as_bytes());
        std::fs::write(&csv, &bytes).unwrap();
        let o = out_dir.path().display().to_string();
        let commands: [Vec<String>; 4] = [
            vec!["analyze".into(), run.display().to_string()],
            vec![
                "export".into(),
                run.display().to_string(),
                "--out".into(),
                format!("{o}/x"),
            ],
            vec![
                "report".into(),
                run.display().to_string(),
                "--out".into(),
                format!("{o}/r"),
            ],
            vec![
                "compare".into(),
                run.display().to_string(),
                csv.display().to_string(),
            ],
        ];
        for command in commands {
            let out = sweep(p.path()).args(&command).output().unwrap();
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(3), "{command:?} {want}: {err}");
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(
                err.contains(&format!("`{}`: line 3: ", csv.display())) && err.contains(want),
                "{command:?}: {err}"
            );
            assert!(err.contains("(hint: "), "{err}");
        }
        assert_eq!(
            std::fs::read(&csv).unwrap(),
            bytes,
            "the file is left as it was"
        );
    }
    // A last row cut short (a crash mid-write) is left out, as before.
    std::fs::write(&csv, &text[..text.len() - 10]).unwrap();
    let out = sweep(p.path())
        .args([
            "export",
            &run.display().to_string(),
            "--format",
            "csv",
            "--out",
        ])
        .arg(out_dir.path().join("t"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let exported = std::fs::read(out_dir.path().join("t/results.csv")).unwrap();
    assert_eq!(
        common::rows_of(&exported, b',').len(),
        3,
        "the torn row left out"
    );
}

/// `sweep` with `args` in `dir`, stdin from `stdin`, killed if it runs past 30 s (a FIFO read
/// blocks for ever): its output.
fn sweep_within_30s(dir: &Path, args: &[&str], stdin: std::process::Stdio) -> std::process::Output {
    let mut child = common::sweep_process(dir)
        .args(args)
        .stdin(stdin)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("sweep {args:?} still running after 30 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// Review 5, 2: `sweep analyze /dev/stdin < results.csv` wrote analysis.* into /dev (beside the
/// link), `analyze <(cat f)` failed writing into /dev/fd, and analyze of a FIFO blocked for
/// ever, of /dev/zero read until memory ran out. Only files are read (a pipe or a device is
/// refused naming it, exit 3); without --out nothing is written beside a link (exit 2).
#[test]
fn analyze_reads_only_files_and_never_writes_beside_a_link() {
    let p = project();
    let run = finished_saw4(p.path());
    let csv = run.join("results.csv");
    let dev = Path::new("/dev/analysis.json");
    let existed = dev.exists();
    let out = sweep_within_30s(
        p.path(),
        &["analyze", "/dev/stdin"],
        std::fs::File::open(&csv).unwrap().into(),
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("`/dev/stdin` is a link") && err.contains("--out"),
        "{err}"
    );
    assert_eq!(dev.exists(), existed, "nothing written into /dev");
    let o = p.path().join("o");
    let out = sweep_within_30s(
        p.path(),
        &["analyze", "/dev/stdin", "--out", &o.display().to_string()],
        std::fs::File::open(&csv).unwrap().into(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(o.join("analysis.json").is_file());

    let fifo = p.path().join("fifo.csv");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.unwrap().success());
    for target in [fifo.display().to_string(), "/dev/zero".to_string()] {
        for command in ["analyze", "plot", "compare"] {
            let mut args = vec![command, target.as_str(), "--out"];
            let dir = o.display().to_string();
            args.push(&dir);
            if command == "compare" {
                args = vec![command, target.as_str(), target.as_str()];
            }
            let out = sweep_within_30s(p.path(), &args, std::process::Stdio::null());
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
            assert_eq!(
                err,
                format!("error: `{target}` is not a regular file (a folder, a pipe, a device or a socket): sweep reads its CSVs from files (hint: save it to a file first and give that)\n")
            );
        }
    }
    // A run folder whose results.csv is a FIFO: export, report and resume refuse it too.
    std::fs::remove_file(&csv).unwrap();
    std::fs::rename(&fifo, &csv).unwrap();
    let r = run.display().to_string();
    let x = p.path().join("x").display().to_string();
    for args in [
        vec!["export", r.as_str(), "--out", x.as_str()],
        vec!["report", r.as_str(), "--out", x.as_str()],
        vec!["resume", r.as_str()],
    ] {
        let out = sweep_within_30s(p.path(), &args, std::process::Stdio::null());
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert!(
            err.contains("is not a regular file (a folder, a pipe"),
            "{args:?}: {err}"
        );
    }
}

/// Review 5, 3: an `@sweep` line with `rel_ci=-1` or `samples=-3` (a statistic that cannot be)
/// was taken as a measurement, status ok; a `stddev=nan` left its cell empty, status ok. That
/// metric gets no value, and the point's reason names the field (no_metric, as for a bad value);
/// a negative value, median, min and max stay a measurement (a difference can be negative).
#[test]
fn a_timing_core_line_with_a_statistic_that_cannot_be_is_no_measurement() {
    let p = project();
    let rows = one_line_bench(
        p.path(),
        "stats",
        "@sweep metric=copy unit=GB/s value=-2.5 median=-2.5 stddev=0 min=-3 max=-2 rel_ci=0.001 samples=10 noisy=0 throttled=0 %s",
        &["rel_ci=-1", "samples=-3", "stddev=nan", "placements=inf", "sm_mhz=1980"],
        "GB/s",
    );
    let got: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r["status"].as_str(), r["copy_gb_per_s"].as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("no_metric", ""),
            ("no_metric", ""),
            ("no_metric", ""),
            ("no_metric", ""),
            ("ok", "-2.5")
        ]
    );
    for (row, field, why) in [
        (0, "rel_ci=-1", "never negative"),
        (1, "samples=-3", "never negative"),
        (2, "stddev=nan", "not a finite number"),
        (3, "placements=inf", "not a finite number"),
    ] {
        let want = format!(
            "no metric `copy_gb_per_s` in the output: `copy_gb_per_s` printed `{field}`, {why} (log: "
        );
        assert!(
            rows[row]["error"].starts_with(&want),
            "{}",
            rows[row]["error"]
        );
        assert_eq!(rows[row]["copy_rel_ci"], "", "no statistic kept either");
    }
}

/// Review 5, 4: a NUL byte in `args` or an `[env]` value (`\u0000` in TOML), or an `[env]` name
/// with `=`, passed the spec's check and failed every point at run time ("nul byte found").
/// Refused at the spec's check, naming the key and its line (exit 3), before anything runs.
#[test]
fn a_nul_byte_in_args_or_env_is_refused_by_the_spec_check() {
    let p = project();
    for (extra, want) in [
        (
            "args = [\"-n\", \"a\\u0000b\"]",
            "nul.toml:1: `args` has a NUL byte (`a\\0b`), which no program can be given (hint: remove the `\\u0000`)",
        ),
        (
            "flags = [\"-O2\\u0000\"]",
            "nul.toml:1: `flags` has a NUL byte (`-O2\\0`)",
        ),
        (
            "[env]\nFOO = \"x\\u0000y\"",
            "nul.toml:14: [env] `FOO` has a NUL byte (`x\\0y`)",
        ),
        (
            "[env]\n\"A=B\" = \"x\"",
            "[env] `A=B` is no name of an environment variable",
        ),
    ] {
        let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml"))
            .unwrap()
            .replace("range = [1, 64]", "range = [1, 2]")
            .replace("[analyze]\nx = \"threads\"\n", "");
        // Top-level keys first, tables after.
        let text = if extra.starts_with('[') {
            format!("{spec}{extra}\n")
        } else {
            format!("{extra}\n{spec}")
        };
        write(p.path(), "sweeps/nul.toml", &text);
        for command in ["plan", "run"] {
            let out = sweep(p.path())
                .args([command, "sweeps/nul.toml"])
                .output()
                .unwrap();
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(3), "{command} {extra}: {err}");
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(err.contains(want), "{command} {extra}: {err}");
        }
        assert!(!p.path().join("output/nul").exists(), "nothing ran");
    }
}

/// Review 5, 5: an `--export` that failed at the end of a run (here a file `export` in the run
/// folder, where the export's folder goes) was a warning, and the run exited 0: a script read
/// success and found no export. The rows are whole; the run exits with the export's failure's
/// code (4: the folder cannot be written), saying so.
#[test]
fn an_export_that_fails_at_the_end_of_a_run_is_not_exit_0() {
    let p = project();
    let (run, _) = unfinished_saw(p.path());
    std::fs::write(run.join("export"), "in the way").unwrap();
    let out = sweep(p.path())
        .arg("resume")
        .arg(&run)
        .args(["-q", "--no-analyze", "--export", "csv"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("the export at the end of the run failed: ") && err.contains("/export`"),
        "{err}"
    );
    assert_eq!(
        rows(&run.join("results.csv")).len(),
        4,
        "the rows are whole"
    );
}

/// Found in review 5: `--export-json` wrote a temporary file beside the path and renamed it over
/// it, so `--export-json /dev/null` (or `/dev/stdout`) run as root replaced the device (or the
/// link) with a regular file, for every program after it, and a link of the user's with a file.
/// A device is written into (`/dev/full` refuses: exit 4), a link into what it points to.
#[test]
fn export_json_writes_into_a_device_or_a_link_and_never_replaces_it() {
    use std::os::unix::fs::FileTypeExt;
    let p = project();
    saw2(p.path());
    let dir = tempfile::tempdir().unwrap();
    let null = dir.path().join("null");
    let full = dir.path().join("full");
    let made = |path: &Path, minor: &str| {
        std::process::Command::new("mknod")
            .arg(path)
            .args(["c", "1", minor])
            .status()
            .is_ok_and(|s| s.success())
    };
    if !(made(&null, "3") && made(&full, "7")) {
        common::skip("needs root to make a device node (mknod)");
        return;
    }
    let run = |json: &Path| {
        sweep(p.path())
            .args(["run", "sweeps/saw2.toml", "-q", "--no-analyze", "--force"])
            .arg("--export-json")
            .arg(json)
            .output()
            .unwrap()
    };
    let out = run(&null);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::metadata(&null)
        .unwrap()
        .file_type()
        .is_char_device());
    let out = run(&full);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("--export-json at the end of the run failed: "),
        "{err}"
    );
    assert!(std::fs::metadata(&full)
        .unwrap()
        .file_type()
        .is_char_device());
    // A link of the user's stays a link; the file it points to gets the document.
    let target = dir.path().join("target.json");
    std::fs::write(&target, "old").unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = run(&link);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(link.is_symlink());
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&target).unwrap()).unwrap();
    assert_eq!(doc["sweep"], "saw2");
}

/// Found in review 5: `compare` of a run over `threads` with one over `threads` and `tag` read
/// B's rows by A's axes first and refused B as holding "two rows of the point threads=1 (hint:
/// keep one of them)": two points, told to delete one. The axes are checked first, naming `tag`.
#[test]
fn compare_of_runs_with_other_axes_names_the_axis_not_two_rows() {
    let p = project();
    saw2(p.path());
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw2.toml")).unwrap();
    write(
        p.path(),
        "sweeps/tagged.toml",
        &format!("{spec}[[axis]]\nname = \"tag\"\nvalues = [\"a\", \"b\"]\n"),
    );
    for spec in ["saw2", "tagged"] {
        sweep(p.path())
            .args(["run", &format!("sweeps/{spec}.toml"), "-q", "--no-analyze"])
            .assert()
            .success();
    }
    let a = run_dirs(&p.path().join("output/saw2")).pop().unwrap();
    let b = run_dirs(&p.path().join("output/tagged")).pop().unwrap();
    for (x, y) in [(&a, &b), (&b, &a)] {
        let out = sweep(p.path())
            .arg("compare")
            .args([x, y])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{err}");
        assert!(err.contains("has no axis `tag` of"), "{err}");
        assert!(!err.contains("two rows"), "{err}");
    }
}

/// Found in review 5: a metric's column removed from results.csv by hand (the manifest still
/// lists the metric) was left out of analyze, plot, export, report and compare, saying nothing:
/// the analysis of a run of three metrics held two, exit 0. Refused naming the column (exit 3).
#[test]
fn a_metric_column_removed_by_hand_is_named_not_left_out() {
    let p = project();
    let run = finished_saw4(p.path());
    let csv = run.join("results.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|c| *c == "saw_mflops").unwrap();
    let cut: String = text
        .split_inclusive("\r\n")
        .map(|line| {
            let body = line.strip_suffix("\r\n").unwrap();
            let mut cells: Vec<&str> = body.split(',').collect();
            cells.remove(col);
            cells.join(",") + "\r\n"
        })
        .collect();
    std::fs::write(&csv, cut).unwrap();
    let r = run.display().to_string();
    let o = p.path().join("o").display().to_string();
    for args in [
        vec!["analyze", r.as_str()],
        vec!["plot", r.as_str()],
        vec!["export", r.as_str(), "--out", o.as_str()],
        vec!["report", r.as_str(), "--out", o.as_str()],
        vec!["compare", r.as_str(), r.as_str()],
    ] {
        let out = sweep(p.path()).args(&args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert!(
            err.contains(
                "has no column `saw_mflops` of the metric `saw` its manifest lists (hint: "
            ),
            "{args:?}: {err}"
        );
    }
}

/// Found in review 5: a CSV whose header names two columns alike (edited by hand) was read by
/// the first alone: the analysis showed the first column's series twice and the second's values
/// nowhere, exit 0. Refused naming the column and both places (exit 3).
#[test]
fn a_csv_with_two_columns_of_one_name_is_refused() {
    let p = project();
    let run = finished_saw4(p.path());
    let text = std::fs::read_to_string(run.join("results.csv")).unwrap();
    let (header, rest) = text.split_once("\r\n").unwrap();
    let edited = header.replacen("saw_median_mflops", "saw_mflops", 1);
    let csv = p.path().join("dup.csv");
    std::fs::write(&csv, format!("{edited}\r\n{rest}")).unwrap();
    let c = csv.display().to_string();
    let o = p.path().join("o").display().to_string();
    for args in [
        vec!["analyze", c.as_str(), "--out", o.as_str()],
        vec!["plot", c.as_str(), "--out", o.as_str()],
        vec!["compare", c.as_str(), c.as_str()],
    ] {
        let out = sweep(p.path()).args(&args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert_eq!(
            err,
            format!("error: `{c}` has two columns named `saw_mflops` (columns 5 and 6) (hint: was the header edited? rename or remove one)\n")
        );
    }
}

/// Found in review 5: a quote opened in a middle row of results.csv and never closed made every
/// line after it one field of that row: analyze and compare read the rows before it and left
/// the others out unsaid (exit 0; export already refused it). Every reader refuses it, naming
/// the line (exit 3).
#[test]
fn a_quote_left_open_in_a_middle_row_is_refused_by_every_reader() {
    let p = project();
    let run = finished_saw4(p.path());
    let csv = run.join("results.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines: Vec<String> = text.split_inclusive("\r\n").map(String::from).collect();
    lines[2] = lines[2].replacen(",ok,", ",\"ok,", 1);
    std::fs::write(&csv, lines.concat()).unwrap();
    let r = run.display().to_string();
    let c = csv.display().to_string();
    let o = p.path().join("o").display().to_string();
    for args in [
        vec!["analyze", r.as_str()],
        vec!["compare", c.as_str(), c.as_str()],
        vec!["export", r.as_str(), "--out", o.as_str()],
    ] {
        let out = sweep(p.path()).args(&args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert!(
            err.contains(&format!("`{c}` line 3: a quote opened there never closes")),
            "{args:?}: {err}"
        );
    }
}
