//! The lows the last hostile review of issue 38 left: a resume under a compiler from another
//! place or on another GPU, errors without a hint (read-only folder, full disk, unparsable
//! results.csv), `cache clean` of a folder that is no cache, SIGTERM during the charts at the end
//! of a run, and `report --out`. Real files, real compilers (cc), real signals.

use crate::common::{self, project, rows, run_dirs, stderr, sweep};
use crate::hardening::{including_bench, run_inc};
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
    let csv = run.join("results.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    std::fs::write(&csv, lines[..2].concat()).unwrap();
    let m = std::fs::read_to_string(run.join("manifest.json"))
        .unwrap()
        .replace("\"state\": \"finished\"", "\"state\": \"interrupted\"");
    std::fs::write(run.join("manifest.json"), m).unwrap();
    run
}

/// Low 1: a wrapper `cc` earlier on PATH that says the same `--version` (and adds `-DVALUE=7`)
/// was accepted by a resume, whose manifest held the compiler's name and release only: rows of two
/// programs in one results.csv. The manifest records where the compiler resolved; a resume whose
/// compiler resolves elsewhere is refused naming both paths; a manifest without the field (an
/// older sweep's) resumes as before.
#[test]
fn a_resume_under_a_compiler_of_the_same_release_from_elsewhere_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let p = project();
    let Some(real) = cc_dir().map(|d| d.join("cc")) else {
        return common::skip("no cc on PATH");
    };
    let wrap = tempfile::tempdir().unwrap();
    let cc = wrap.path().join("cc");
    std::fs::write(
        &cc,
        format!("#!/bin/sh\nexec {} -DVALUE=7 \"$@\"\n", real.display()),
    )
    .unwrap();
    std::fs::set_permissions(&cc, std::fs::Permissions::from_mode(0o755)).unwrap();
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
        c.env("PATH", path_with(wrap.path()))
            .args(["run", "sweeps/inc.toml", "-q", "--no-analyze"]);
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
