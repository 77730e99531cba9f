//! Review 13 of issue 38 (the round after 12): builds that wrote outside the output folder
//! through flags sweep's list did not know. Each fixed with a test that failed before: the flags
//! are refused by name, and every build is confined by the kernel (Landlock) to its scratch
//! folder, whatever its flags or its compiler do.

use crate::common::{project, stderr, sweep};
use crate::hardening::write;

fn spec(compiler: &str, flags: &str) -> String {
    format!("bench = \"hostsaw\"\ncompiler = \"{compiler}\"\nflags = [{flags}]\n[vars]\nmode = \"ok\"\nslow_ms = 0\n[[axis]]\nname = \"threads\"\nrange = [1, 2]\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n")
}

/// Review 13a, F1-F4: `-Xassembler -adhln=FILE` and `-Xpreprocessor -MD -Xpreprocessor FILE`
/// (the next word goes to the tool), gold's `--print-symbol-counts=FILE`, nvcc's
/// `-Xfatbin --create=FILE` and `--run` (the program runs during its build) passed the spec, exit
/// 0, and wrote outside the output folder. They are refused with the flag named.
#[test]
fn flags_handed_to_a_tool_that_write_a_file_are_refused() {
    let p = project();
    let cases = [
        ("cc", "\"-Xassembler\", \"-adhln=/tmp/l.txt\"", "-adhln=/tmp/l.txt"),
        ("cc", "\"-Xassembler\", \"--MD\", \"-Xassembler\", \"/tmp/a.d\"", "--MD"),
        ("cc", "\"-Xpreprocessor\", \"-MD\", \"-Xpreprocessor\", \"/tmp/x.d\"", "-Wp,-MD"),
        ("cc", "\"-Wl,--print-symbol-counts=/tmp/sc\"", "--print-symbol-counts=/tmp/sc"),
        ("nvcc", "\"-Xfatbin\", \"--create=/tmp/x.fatbin\"", "--create=/tmp/x.fatbin"),
        ("nvcc", "\"-Xfatbin=--create=/tmp/z.fatbin\"", "--create=/tmp/z.fatbin"),
        ("nvcc", "\"--run\"", "--run"),
    ];
    for (compiler, flags, named) in cases {
        write(p.path(), "sweeps/f.toml", &spec(compiler, flags));
        let out = sweep(p.path()).args(["plan", "sweeps/f.toml"]).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{compiler} {flags}: {err}");
        assert!(
            err.contains(&format!("has `{named}`, which names an output")),
            "{compiler} {flags}: {err}"
        );
    }
}

/// Review 13a's class of finding, closed for good: a build writes beneath its scratch folder
/// alone. A compiler (here a wrapper of cc, as ccache or a site's script would be) that writes a
/// file outside the output folder and the cache, into the project and into /tmp, cannot: the
/// kernel refuses it, the point builds and measures, and no file appears there. Its temporary
/// files go to its own TMPDIR, removed before the entry is kept.
#[test]
fn a_build_cannot_write_outside_its_scratch_folder() {
    if !sweep::exec::confine::available() {
        eprintln!("skipped: this kernel has no Landlock, so builds are not confined here");
        return;
    }
    let p = project();
    let outside = tempfile::tempdir().unwrap();
    let wrapper = write(
        p.path(),
        "tools/writer-cc",
        &format!(
            "#!/bin/sh\necho x > {0}/outside.txt 2>/dev/null\necho x > written-here.txt 2>/dev/null\necho x > \"$TMPDIR/mine.txt\" || exit 9\nexec cc \"$@\"\n",
            outside.path().display()
        ),
    );
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    write(
        p.path(),
        "sweeps/w.toml",
        &spec(&wrapper.display().to_string(), ""),
    );
    let cache = p.path().join("cache");
    let out = sweep(p.path())
        .args(["run", "sweeps/w.toml", "-q", "--no-analyze", "--cache"])
        .arg(&cache)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!outside.path().join("outside.txt").exists(), "wrote outside");
    assert!(!p.path().join("written-here.txt").exists(), "wrote in sweep's folder");
    for entry in std::fs::read_dir(&cache).unwrap() {
        let entry = entry.unwrap().path();
        assert!(!entry.join("tmp").exists(), "{}: the TMPDIR was kept", entry.display());
    }
}
