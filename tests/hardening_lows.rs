//! The lows the last hostile review of issue 38 left: a resume under a compiler from another
//! place or on another GPU, errors without a hint (read-only folder, full disk, unparsable
//! results.csv), `cache clean` of a folder that is no cache, SIGTERM during the charts at the end
//! of a run, and `report --out`. Real files, real compilers (cc), real signals.

use crate::common::{self, project, rows, run_dirs, stderr, sweep};
use crate::hardening::{including_bench, run_inc, unfinish};
use std::path::{Path, PathBuf};

/// The folder of PATH that holds `cc`, or None (the test skips).
fn cc_dir() -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?).find(|d| d.join("cc").is_file())
}

/// PATH with `dir` first.
fn path_with(dir: &Path) -> std::ffi::OsString {
    let mut path = dir.as_os_str().to_os_string();
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    path
}

/// The last run of `inc`, cut back to its first row and marked `interrupted`: a run to resume.
fn cut_to_one_row(p: &Path) -> PathBuf {
    let run = run_dirs(&p.join("output/inc")).pop().unwrap();
    unfinish(&run, 1);
    run
}

/// Low 1: a wrapper `cc` earlier on PATH that says the same `--version` (and adds `-DVALUE=7`)
/// was accepted by a resume, whose manifest held the compiler's name and release only: rows of two
/// programs in one results.csv. The manifest records where the compiler resolved; a resume whose
/// compiler resolves elsewhere is refused naming both paths; a manifest without the field (an
/// older sweep's) resumes as before.
#[test]
fn a_resume_under_a_compiler_of_the_same_release_from_elsewhere_is_refused() {
    let p = project();
    let Some(real) = cc_dir().map(|d| d.join("cc")) else {
        return common::skip("no cc on PATH");
    };
    let wrap = tempfile::tempdir().unwrap();
    let cc = wrap.path().join("cc");
    common::script(
        &cc,
        &format!("#!/bin/sh\nexec {} -DVALUE=7 \"$@\"\n", real.display()),
    );
    including_bench(
        p.path(),
        "c",
        "<stdlib.h>\n#ifndef VALUE\n#define VALUE 10\n#endif",
        "compiler = \"cc\"",
    );
    run_inc(p.path());
    let run = cut_to_one_row(p.path());
    let was = common::manifest(&run)["compiler_path"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(Path::new(&was), real.canonicalize().unwrap());
    let resume = |force: bool| {
        let mut c = sweep(p.path());
        c.env("PATH", path_with(wrap.path())).args([
            "run",
            "sweeps/inc.toml",
            "-q",
            "--no-analyze",
        ]);
        if force {
            c.arg("--force");
        }
        c.output().unwrap()
    };
    let out = resume(false);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains(&format!("was built with `cc` at `{was}`"))
            && err.contains(&format!("and `cc` is now `{}`", cc.display()))
            && err.contains("hint: put `"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(rows(&run.join("results.csv")).len(), 1, "nothing run");
    // --force starts a new run, built by the wrapper.
    let out = resume(true);
    assert!(out.status.success(), "{}", stderr(&out));
    let newest = run_dirs(&p.path().join("output/inc")).pop().unwrap();
    assert_ne!(newest, run);
    assert_eq!(rows(&newest.join("results.csv"))[1]["mflops"], "14");
    // An older sweep's manifest, without the field: resumed as before, and the field written.
    std::fs::remove_dir_all(&newest).unwrap();
    let mut m = common::manifest(&run);
    m.as_object_mut().unwrap().remove("compiler_path");
    std::fs::write(run.join("manifest.json"), m.to_string()).unwrap();
    let out = sweep(p.path())
        .args(["run", "sweeps/inc.toml", "-q", "--no-analyze"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(rows(&run.join("results.csv")).len(), 2);
    assert_eq!(common::manifest(&run)["compiler_path"], was.as_str());
}

/// A project whose PATH finds a stand-in `nvidia-smi` that lists the GPU written in
/// `fakebin/gpus.txt` (`gpu` there now), and `sweeps/g.toml`: the sawtooth over 4 points, on a GPU.
fn gpu_project(gpu: &str) -> (tempfile::TempDir, std::ffi::OsString) {
    let p = project();
    let bin = p.path().join("fakebin");
    std::fs::create_dir_all(&bin).unwrap();
    let smi = bin.join("nvidia-smi");
    common::script(&smi, "#!/bin/sh\ncat \"$(dirname \"$0\")/gpus.txt\"\n");
    std::fs::write(bin.join("gpus.txt"), gpu).unwrap();
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml"))
        .unwrap()
        .replace("compiler = \"cc\"", "compiler = \"cc\"\ngpu = true")
        .replace("range = [1, 64]", "range = [1, 4]");
    std::fs::write(p.path().join("sweeps/g.toml"), spec).unwrap();
    let path = path_with(&bin);
    (p, path)
}

/// Low 2: a resume on another GPU model (another node of a mixed partition, another `--gpus`)
/// measured the remaining points there: one curve of two GPUs, exit 0. It is refused naming both
/// (exit 4); a run that measured nothing on a GPU yet moves freely, and --force starts a new run.
#[test]
fn a_resume_on_another_gpu_model_is_refused_unless_nothing_was_measured_yet() {
    let h100 = "0, Stand-in H100, GPU-aaaa, 580.0, 9.0, 1980, 2619, 30\n";
    let a100 = "0, Stand-in A100, GPU-cccc, 580.0, 8.0, 1410, 1215, 30\n";
    let (p, path) = gpu_project(h100);
    let run_g = |extra: &[&str]| {
        sweep(p.path())
            .env("PATH", &path)
            .env_remove("CUDA_VISIBLE_DEVICES")
            .args(["run", "sweeps/g.toml", "-q", "--no-analyze"])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run_g(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let run = run_dirs(&p.path().join("output/g")).pop().unwrap();
    let csv = run.join("results.csv");
    let keep_rows = |n: usize| unfinish(&run, n);
    keep_rows(2);
    std::fs::write(p.path().join("fakebin/gpus.txt"), a100).unwrap();
    let out = run_g(&[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("measured its rows on `Stand-in H100`")
            && err.contains("would measure on gpu 0 (Stand-in A100)")
            && err.contains("(hint: finish it on a `Stand-in H100`"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(rows(&csv).len(), 2, "nothing run");
    // Back on the H100 the resume finishes it.
    std::fs::write(p.path().join("fakebin/gpus.txt"), h100).unwrap();
    let out = run_g(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(rows(&csv).iter().all(|r| r["gpu_name"] == "Stand-in H100"));
    assert_eq!(rows(&csv).len(), 4);
    // Nothing measured yet: it moves to the A100.
    keep_rows(0);
    std::fs::write(p.path().join("fakebin/gpus.txt"), a100).unwrap();
    let out = run_g(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        run_dirs(&p.path().join("output/g")),
        std::slice::from_ref(&run)
    );
    assert!(rows(&csv).iter().all(|r| r["gpu_name"] == "Stand-in A100"));
    // --force on the other model: a new run.
    keep_rows(1);
    std::fs::write(p.path().join("fakebin/gpus.txt"), h100).unwrap();
    let out = run_g(&["--force"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(run_dirs(&p.path().join("output/g")).len(), 2);
    assert_eq!(rows(&csv).len(), 1, "the old run untouched");
}

/// Low 4: `sweep cache clean` with SWEEP_CACHE (or --cache) at `$HOME` or `/` went through the
/// folder (removing what looked like builds, leaving its lock file there). A folder that carries
/// no marker of sweep's cache and holds other files is refused (exit 2, one line, a hint) and
/// nothing in it is removed or written; the cache a run made is marked and cleaned.
#[test]
fn cache_clean_of_a_folder_that_is_no_sweep_cache_is_refused() {
    let p = project();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join(".bashrc"), "keep\n").unwrap();
    // A folder named like a build, holding what a build holds: it looks like one, it is the user's.
    let look_alike = home.path().join("0123456789abcdef0123456789abcdef");
    std::fs::create_dir_all(&look_alike).unwrap();
    std::fs::write(look_alike.join("bench"), "keep\n").unwrap();
    let listing = |dir: &Path| {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        names
    };
    let before = listing(home.path());
    for (how, dir) in [
        ("env", home.path()),
        ("flag", home.path()),
        ("env", Path::new("/")),
    ] {
        let mut c = sweep(p.path());
        c.args(["cache", "clean"]);
        if how == "env" {
            c.env("SWEEP_CACHE", dir);
        } else {
            c.arg("--cache").arg(dir);
        }
        let out = c.output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{how} {}: {err}", dir.display());
        assert!(
            err.contains(&format!("`{}` is not a sweep build cache", dir.display()))
                && err.contains("(hint: point --cache or SWEEP_CACHE at the build cache"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    assert_eq!(listing(home.path()), before, "nothing removed or written");
    assert!(look_alike.join("bench").exists());
    // The cache a run makes carries the marker, and is cleaned.
    let out = sweep(p.path())
        .args([
            "run",
            "sweeps/saw.toml",
            "-q",
            "--no-analyze",
            "-a",
            "threads=1:2",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let cache = p.path().join("output/.cache");
    assert!(std::fs::read_to_string(cache.join("CACHEDIR.TAG"))
        .unwrap()
        .starts_with("Signature: 8a477f597d28d172789f06886806bc55\n"));
    let out = sweep(p.path())
        .args(["cache", "clean", "--cache"])
        .arg(&cache)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        common::stdout(&out).contains("removed 2 builds"),
        "{}",
        common::stdout(&out)
    );
}

/// `command` on `run` (its own folder written): its exit code and its stderr.
fn read_command(p: &Path, command: &str, run: &Path) -> (Option<i32>, String) {
    let out = sweep(p).arg(command).arg(run).output().unwrap();
    (out.status.code(), stderr(&out))
}

/// Low 3: a read-only or full disk under the run folder, and a results.csv that is not CSV, met by
/// `analyze`, `report`, `export` (and `plot`), said what went wrong without a hint. Each says it in
/// one line naming the file, with a hint; exit 4 for the disk, 3 for the file, as documented.
#[test]
fn a_read_only_or_full_disk_and_an_unparsable_results_csv_are_named_with_a_hint() {
    let p = project();
    let Some(disk) = crate::driver_faults::Tmpfs::mount(&p.path().join("output"), "2m") else {
        return;
    };
    let out = sweep(p.path())
        .args([
            "run",
            "sweeps/saw.toml",
            "-q",
            "--no-analyze",
            "-a",
            "threads=1:8",
        ])
        .arg("--cache")
        .arg(p.path().join("cache"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let run = run_dirs(&p.path().join("output/saw")).pop().unwrap();
    let shown = run.display().to_string();
    let check = |why: &str, hint: &str| {
        for command in ["analyze", "report", "export", "plot"] {
            let (code, err) = read_command(p.path(), command, &run);
            assert_eq!(code, Some(4), "{why} {command}: {err}");
            assert_eq!(err.lines().count(), 1, "{why} {command}: {err}");
            assert!(
                err.contains(&format!("`{shown}/")) && err.contains(hint),
                "{why} {command}: {err}"
            );
        }
    };
    disk.remount("ro");
    check(
        "read-only",
        "(hint: its file system is read-only: write elsewhere: --output for `run`, --out",
    );
    let out = sweep(p.path())
        .args(["run", "sweeps/saw.toml", "-q", "--force", "--output"])
        .arg(p.path().join("output/new"))
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("output/new`") && err.contains("(hint: its file system is read-only"),
        "{err}"
    );
    disk.remount("rw");
    crate::hardening::fill(&p.path().join("output"));
    check("full", "(hint: its file system is full: make room there");
    std::fs::remove_file(p.path().join("output/pad")).unwrap();
    // Not CSV: a header that is not UTF-8 (a file saved in another encoding).
    let csv = run.join("results.csv");
    let mut bytes = std::fs::read(&csv).unwrap();
    bytes[3] = 0xff;
    std::fs::write(&csv, &bytes).unwrap();
    for command in ["analyze", "report", "export"] {
        let (code, err) = read_command(p.path(), command, &run);
        assert_eq!(code, Some(3), "{command}: {err}");
        assert_eq!(err.lines().count(), 1, "{command}: {err}");
        assert!(
            err.contains(&format!("cannot read `{}`", csv.display()))
                && err.contains("(hint: it is not a CSV as sweep writes it"),
            "{command}: {err}"
        );
    }
}

/// Every file under `dir` with its bytes: what a command must leave as it was.
fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<_> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| (e.path().to_path_buf(), std::fs::read(e.path()).unwrap()))
        .collect();
    files.sort();
    files
}

/// Low 6: `sweep report` had no `--out` (export, analyze, plot and compare have one), so a
/// report of a read-only run, or one kept elsewhere, could not be made. `--out DIR` writes
/// DIR/report.html (made if missing) and nothing into the run folder; its links to the failed
/// points' logs name the run folder; another run's folder is refused (exit 2).
#[test]
fn report_out_writes_the_page_elsewhere_and_nothing_into_the_run() {
    let p = project();
    for force in [false, true] {
        let mut c = sweep(p.path());
        c.args([
            "run",
            "sweeps/saw.toml",
            "-q",
            "--no-analyze",
            "-a",
            "threads=1:2",
        ])
        .args(["--set", "mode=crash"]);
        if force {
            c.arg("--force");
        }
        assert_eq!(
            c.output().unwrap().status.code(),
            Some(1),
            "every point fails"
        );
    }
    let runs = run_dirs(&p.path().join("output/saw"));
    let (run, other) = (&runs[0], &runs[1]);
    let before = files_under(run);
    let elsewhere = p.path().join("pages/saw");
    let out = sweep(p.path())
        .arg("report")
        .arg(run)
        .arg("--out")
        .arg(&elsewhere)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).trim(),
        format!("wrote {}", elsewhere.join("report.html").display())
    );
    assert_eq!(
        files_under(run),
        before,
        "nothing written into the run folder"
    );
    let page = std::fs::read_to_string(elsewhere.join("report.html")).unwrap();
    let id = &rows(&run.join("results.csv"))[0]["point_id"];
    let log = run.join("points").join(id).join("stderr.txt");
    assert!(log.is_file());
    assert!(
        page.contains(&format!("<a href=\"{}\">", log.display())),
        "the page links the run's own log"
    );
    // Another run's folder: its page would be replaced.
    let other_page = std::fs::read(other.join("report.html")).unwrap();
    let out = sweep(p.path())
        .arg("report")
        .arg(run)
        .arg("--out")
        .arg(other)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is another run's folder: its report.html would be replaced"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(other.join("report.html")).unwrap(),
        other_page
    );
}

/// Whether `file` is whole: an SVG ends with its end tag, a PNG with its IEND chunk.
fn whole_chart(file: &Path) -> bool {
    let bytes = std::fs::read(file).unwrap();
    match file.extension().and_then(|e| e.to_str()) {
        Some("svg") => String::from_utf8_lossy(&bytes)
            .trim_end()
            .ends_with("</svg>"),
        Some("png") => bytes.ends_with(&[0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82]),
        _ => true,
    }
}

/// Low 5: SIGTERM (or Ctrl-C) while `run` drew its charts after the last point said
/// "finishing the current point", drew every chart anyway and exited 0. Once the sweep is over it
/// ends sweep at once with exit 130, as in the other stages; the manifest keeps its last word
/// (`finished`: every row is there), and every chart written is whole (temporary file, renamed).
#[test]
fn sigterm_while_the_charts_are_drawn_ends_the_run_at_once_with_whole_charts() {
    use std::time::{Duration, Instant};
    let p = project();
    // 8 points in each of 12 series: a chart stage of seconds after a sweep of one.
    let spec = std::fs::read_to_string(p.path().join("sweeps/saw.toml"))
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 8]")
        .replace(
            "[analyze]",
            "[[axis]]\nname = \"rep\"\nrange = [1, 12]\n[analyze]",
        );
    std::fs::write(p.path().join("sweeps/many.toml"), spec).unwrap();
    let mut child = common::sweep_process(p.path())
        .args(["run", "sweeps/many.toml", "-q"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out_dir = p.path().join("output/many");
    let deadline = Instant::now() + Duration::from_secs(120);
    let run = loop {
        assert!(Instant::now() < deadline, "the sweep never finished");
        let finished = out_dir
            .exists()
            .then(|| run_dirs(&out_dir).pop())
            .flatten()
            .filter(|r| {
                std::fs::read_to_string(r.join("manifest.json"))
                    .is_ok_and(|m| m.contains("\"state\": \"finished\""))
            });
        if let Some(r) = finished {
            break r;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // The charts are being drawn: the first is there.
    let listed = |dir: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .map(|d| d.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default()
    };
    let shown = |c: &&PathBuf| !c.file_name().unwrap().to_string_lossy().starts_with('.');
    while !listed(&run.join("charts")).iter().any(|c| shown(&c)) {
        assert!(Instant::now() < deadline, "no chart drawn");
        std::thread::sleep(Duration::from_millis(5));
    }
    let signalled = Instant::now();
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    let waited = signalled.elapsed();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(
        waited < Duration::from_secs(2),
        "ended at once, not after the charts: {waited:?}"
    );
    assert!(
        err.contains("interrupted after the sweep: every row and the manifest are written")
            && err.contains(&format!(
                "(hint: `sweep analyze {} --x threads`",
                run.strip_prefix(p.path()).unwrap().display()
            )),
        "{err}"
    );
    let m = common::manifest(&run);
    assert_eq!(m["state"], "finished");
    assert_eq!(rows(&run.join("results.csv")).len(), 96);
    let charts = listed(&run.join("charts"));
    let drawn: Vec<&PathBuf> = charts.iter().filter(shown).collect();
    assert!(
        drawn.len() < 24,
        "stopped before every chart: {}",
        drawn.len()
    );
    for c in drawn {
        assert!(whole_chart(c), "{} is torn", c.display());
    }
    // What was left is made by hand, as the hint says: a chart (SVG and PNG) per series.
    assert!(err.contains("`sweep plot output/many/"), "{err}");
    let out = sweep(p.path())
        .arg("plot")
        .arg(&run)
        .args(["--x", "threads"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    for rep in 1..=12 {
        for ext in ["svg", "png"] {
            let chart = run.join(format!("charts/saw_mflops__rep-{rep}.{ext}"));
            assert!(whole_chart(&chart), "{}", chart.display());
        }
    }
}
