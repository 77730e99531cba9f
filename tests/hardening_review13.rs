//! Reviews 13 and 14 of issue 38 (the rounds after 12), each finding fixed with a test that
//! failed before: builds that wrote outside the output folder through flags sweep's list did not
//! know (refused by name, and every build confined by the kernel, Landlock, to its scratch
//! folder), what a build leaves at sweep's own names, and the read side's compare senses and
//! units, rows no manifest lists, texts with edge blanks, x of inf or nan, links at export names.

use crate::common::{project, stderr, sweep};
use crate::hardening::write;
use crate::hardening_review12::spec_with_flags as spec;

/// Review 13a, F1-F4: `-Xassembler -adhln=FILE` and `-Xpreprocessor -MD -Xpreprocessor FILE`
/// (the next word goes to the tool), gold's `--print-symbol-counts=FILE`, nvcc's
/// `-Xfatbin --create=FILE` and `--run` (the program runs during its build) passed the spec, exit
/// 0, and wrote outside the output folder. They are refused with the flag named.
#[test]
fn flags_handed_to_a_tool_that_write_a_file_are_refused() {
    let p = project();
    let cases = [
        (
            "cc",
            "\"-Xassembler\", \"-adhln=/tmp/l.txt\"",
            "-adhln=/tmp/l.txt",
        ),
        (
            "cc",
            "\"-Xassembler\", \"--MD\", \"-Xassembler\", \"/tmp/a.d\"",
            "--MD",
        ),
        (
            "cc",
            "\"-Xpreprocessor\", \"-MD\", \"-Xpreprocessor\", \"/tmp/x.d\"",
            "-Wp,-MD",
        ),
        (
            "cc",
            "\"-Wl,--print-symbol-counts=/tmp/sc\"",
            "--print-symbol-counts=/tmp/sc",
        ),
        (
            "nvcc",
            "\"-Xfatbin\", \"--create=/tmp/x.fatbin\"",
            "--create=/tmp/x.fatbin",
        ),
        (
            "nvcc",
            "\"-Xfatbin=--create=/tmp/z.fatbin\"",
            "--create=/tmp/z.fatbin",
        ),
        ("nvcc", "\"--run\"", "--run"),
    ];
    for (compiler, flags, named) in cases {
        write(p.path(), "sweeps/f.toml", &spec(compiler, flags));
        let out = sweep(p.path())
            .args(["plan", "sweeps/f.toml"])
            .output()
            .unwrap();
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
    assert!(
        !outside.path().join("outside.txt").exists(),
        "wrote outside"
    );
    assert!(
        !p.path().join("written-here.txt").exists(),
        "wrote in sweep's folder"
    );
    for entry in std::fs::read_dir(&cache).unwrap() {
        let entry = entry.unwrap().path();
        assert!(
            !entry.join("tmp").exists(),
            "{}: the TMPDIR was kept",
            entry.display()
        );
    }
}

/// `sweep run SPEC -q --no-analyze --output p/<out>` (it must succeed): its run folder.
fn run_into(p: &std::path::Path, spec: &str, out: &str) -> std::path::PathBuf {
    let o = sweep(p)
        .args(["run", spec, "-q", "--no-analyze", "--output"])
        .arg(p.join(out))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(p.join(spec)).unwrap();
    // The spec's own `name`, before its first table (a metric's or an axis's is not it).
    let name = text
        .lines()
        .take_while(|l| !l.starts_with('['))
        .find_map(|l| l.strip_prefix("name = \""))
        .map(|n| n.trim_end_matches('"').to_string())
        .unwrap_or_else(|| {
            let stem = std::path::Path::new(spec).file_stem().unwrap();
            stem.to_string_lossy().into_owned()
        });
    crate::common::run_dirs(&p.join(out).join(name))[0].clone()
}

/// Two runs of `spec`, into `p/a` and `p/b`.
fn two_runs(p: &std::path::Path, spec: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    (run_into(p, spec, "a"), run_into(p, spec, "b"))
}

/// `sweep compare A B`: its exit code and stderr.
fn compare(p: &std::path::Path, a: &std::path::Path, b: &std::path::Path) -> (Option<i32>, String) {
    let out = sweep(p).arg("compare").arg(a).arg(b).output().unwrap();
    (out.status.code(), stderr(&out))
}

/// A run of the saw spec over `threads`, in `p/output/saw`: its run folder.
fn saw_run(p: &std::path::Path, threads: &str) -> std::path::PathBuf {
    let out = sweep(p)
        .args([
            "run",
            "sweeps/saw.toml",
            "-q",
            "--no-analyze",
            "-a",
            threads,
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    crate::common::run_dirs(&p.join("output/saw"))[0].clone()
}

/// Every value of `column` in the CSVs of `run` (results and controls) scaled by `by`.
fn scale(run: &std::path::Path, column: &str, by: f64) {
    for f in ["results.csv", "controls.csv"] {
        let path = run.join(f);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let mut lines = text.lines();
        let header = lines.next().unwrap();
        let i = header.split(',').position(|h| h == column).unwrap();
        let mut out = vec![header.to_string()];
        for l in lines {
            let mut cells: Vec<String> = l.split(',').map(String::from).collect();
            if let Ok(v) = cells[i].parse::<f64>() {
                cells[i] = format!("{}", v * by);
            }
            out.push(cells.join(","));
        }
        std::fs::write(&path, out.join("\n") + "\n").unwrap();
    }
}

/// Review 13b, F1: compare read a metric's sense from its unit alone: with `better = "lower"`
/// (joules), B at half the energy was "8 of 8 slower, 50.0 % slower", exit 5, and a real doubling
/// would pass as faster. It reads the spec's `better` from the manifest, as the analysis does.
#[test]
fn compare_reads_which_way_is_better_from_the_spec() {
    let p = project();
    write(
        p.path(),
        "sweeps/energy.toml",
        "bench = \"hostsaw\"\ncompiler = \"cc\"\n[vars]\nmode = \"ok\"\nslow_ms = 0\n[[axis]]\nname = \"threads\"\nrange = [1, 8]\n[[metric]]\nname = \"energy\"\nunit = \"J\"\nbetter = \"lower\"\nregex = 'MFlops: (?P<value>[0-9.]+)'\n",
    );
    let (a, b) = two_runs(p.path(), "sweeps/energy.toml");
    scale(&b, "energy_j", 0.5);
    let out = sweep(p.path())
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .args(["--fail-on-slower", "10"])
        .output()
        .unwrap();
    let said = crate::common::stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{said}{}", stderr(&out));
    assert!(said.contains("faster"), "{said}");
    scale(&b, "energy_j", 4.0);
    let out = sweep(p.path())
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .args(["--fail-on-slower", "10"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
}

/// Review 13b, F3: `MB/s` and `Mb/s` share the column `_mb_per_s`, and compare read 1000 Mb/s as
/// 1000 MB/s ("8 same", B/A 1.000). Runs whose units of one column differ are refused naming both.
#[test]
fn compare_refuses_one_column_in_two_units() {
    let p = project();
    let spec = |unit: &str| {
        format!("name = \"bw\"\nbench = \"hostsaw\"\ncompiler = \"cc\"\n[vars]\nmode = \"ok\"\nslow_ms = 0\n[[axis]]\nname = \"threads\"\nrange = [1, 4]\n[[metric]]\nname = \"bw\"\nunit = \"{unit}\"\nregex = 'MFlops: (?P<value>[0-9.]+)'\n")
    };
    write(p.path(), "sweeps/bw.toml", &spec("MB/s"));
    let a = run_into(p.path(), "sweeps/bw.toml", "a");
    write(p.path(), "sweeps/bw.toml", &spec("Mb/s"));
    let b = run_into(p.path(), "sweeps/bw.toml", "b");
    let (code, err) = compare(p.path(), &a, &b);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("is in MB/s in") && err.contains("and in Mb/s in"),
        "{err}"
    );
}

/// Review 13b, F2: a second row of a point under an id the manifest does not list (a blank after
/// it, a new one) passed where the same id was refused: analyze took the median of the two rows,
/// export wrote 9 points for a run of 8. Every reader refuses a row the manifest does not list.
#[test]
fn a_row_of_a_point_the_manifest_does_not_list_is_refused() {
    let p = project();
    let run = saw_run(p.path(), "threads=1:8");
    let csv = run.join("results.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let last = text.lines().last().unwrap().to_string();
    let forged = last.replacen(",", "x,", 1);
    std::fs::write(&csv, format!("{text}{forged}\n")).unwrap();
    for args in [
        vec!["analyze"],
        vec!["report"],
        vec!["export", "--format", "json"],
    ] {
        let out = sweep(p.path())
            .args(&args[..1])
            .arg(&run)
            .args(&args[1..])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert!(
            err.contains("which the run's manifest does not list"),
            "{args:?}: {err}"
        );
        assert!(
            err.contains("(its row 9 after the header)"),
            "{args:?}: {err}"
        );
    }
}

/// Review 13b, F11: `"1"` and `" 1"` ran as two points that every reader of results.csv, which
/// reads a padded number as the number, took for one x: analyze averaged them. A number written
/// with blanks at its edge is refused at spec read with the axis named; text keeps its blanks
/// (`"  lead"` and `"lead"` are two groups: hardening::group_values_keep_their_blanks_in_the_analysis).
#[test]
fn an_axis_number_with_blanks_at_its_edge_is_refused() {
    let p = project();
    for values in ["[\"1\", \" 1\", \"2\"]", "[\"2.5 \", \"3\"]"] {
        write(
            p.path(),
            "sweeps/b.toml",
            &format!("bench = \"hostsaw\"\ncompiler = \"cc\"\n[vars]\nmode = \"ok\"\nslow_ms = 0\nthreads = 1\n[[axis]]\nname = \"k\"\nvalues = {values}\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n"),
        );
        let out = sweep(p.path())
            .args(["plan", "sweeps/b.toml"])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{values}: {err}");
        assert!(
            err.contains("axis `k` has the value")
                && err.contains("a number with blanks at its edge"),
            "{err}"
        );
    }
}

/// Review 13b, F4: a row whose x is `inf` or `nan` vanished from the readings unsaid ("the same at
/// all 2 points" of 3; the best named among the others). It is named as no number, with its line.
#[test]
fn an_x_of_inf_or_nan_is_named_not_dropped() {
    let p = project();
    for bad in ["inf", "nan"] {
        let csv = write(
            p.path(),
            "r.csv",
            &format!("point_id,index,z,status,saw_mflops\np1,0,1,ok,1000\np2,1,2,ok,2000\np3,2,{bad},ok,9000\n"),
        );
        let out = sweep(p.path()).arg("analyze").arg(&csv).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{bad}: {err}");
        assert!(
            err.contains(&format!("`{bad}`")) && err.contains("line 4"),
            "{bad}: {err}"
        );
    }
}

/// Review 13b, F7: a manifest that lists one metric twice was read: compare counted every value
/// twice ("16 values compared" for 8 points), export's long form wrote every row twice. It is
/// refused naming the metric, as an emptied list is.
#[test]
fn a_manifest_that_lists_a_metric_twice_is_refused() {
    let p = project();
    let run = saw_run(p.path(), "threads=1:4");
    let mut m = crate::common::manifest(&run);
    let metric = m["metrics"][0].clone();
    m["metrics"].as_array_mut().unwrap().push(metric);
    std::fs::write(
        run.join("manifest.json"),
        serde_json::to_string_pretty(&m).unwrap(),
    )
    .unwrap();
    for args in [vec!["analyze"], vec!["export", "--format", "long"]] {
        let out = sweep(p.path())
            .args(&args[..1])
            .arg(&run)
            .args(&args[1..])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert!(
            err.contains("lists the metric `saw_mflops` twice"),
            "{args:?}: {err}"
        );
    }
}

/// Review 14b, F2: a link planted at `<run>/export/run.json` made `export --format json` write
/// over the file it pointed to, outside the run (every other export replaced such a link). The
/// link is replaced; the file it pointed to is left alone.
#[test]
fn export_json_replaces_a_link_in_its_place_and_writes_nothing_through_it() {
    let p = project();
    let run = saw_run(p.path(), "threads=1:4");
    let victim = p.path().join("victim.txt");
    std::fs::write(&victim, "mine\n").unwrap();
    std::fs::create_dir_all(run.join("export")).unwrap();
    std::os::unix::fs::symlink(&victim, run.join("export/run.json")).unwrap();
    let out = sweep(p.path())
        .arg("export")
        .arg(&run)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine\n");
    assert!(!run.join("export/run.json").is_symlink());
}

/// Review 14b, F3: with `better = "lower"` in A's spec and `"higher"` in B's, compare used A's
/// alone, both ways ("4 slower", exit 5). Runs whose specs disagree on it are refused.
#[test]
fn compare_refuses_runs_whose_specs_disagree_on_which_way_is_better() {
    let p = project();
    let spec = |better: &str| {
        format!("name = \"en\"\nbench = \"hostsaw\"\ncompiler = \"cc\"\n[vars]\nmode = \"ok\"\nslow_ms = 0\n[[axis]]\nname = \"threads\"\nrange = [1, 4]\n[[metric]]\nname = \"energy\"\nunit = \"J\"\nbetter = \"{better}\"\nregex = 'MFlops: (?P<value>[0-9.]+)'\n")
    };
    write(p.path(), "sweeps/en.toml", &spec("lower"));
    let a = run_into(p.path(), "sweeps/en.toml", "a");
    write(p.path(), "sweeps/en.toml", &spec("higher"));
    let b = run_into(p.path(), "sweeps/en.toml", "b");
    let (code, err) = compare(p.path(), &a, &b);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("their specs' `better` differ"), "{err}");
}

/// A compiler wrapper `tools/<name>` of `script` (sh), then `exec cc "$@"`.
fn wrapper(p: &std::path::Path, name: &str, script: &str) -> std::path::PathBuf {
    let w = write(
        p,
        &format!("tools/{name}"),
        &format!("#!/bin/sh\n{script}\nexec cc \"$@\"\n"),
    );
    std::fs::set_permissions(&w, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    w
}

/// Review 14a, F1 and F2: after the build, sweep itself wrote the log and the dependency list
/// into the build's folder and read its binary and make list there, through whatever the build
/// left at those names: links to files outside were written over, a FIFO hung sweep past every
/// timeout. Such a build fails by name (`build_failed`), nothing outside is touched, nothing hangs.
#[test]
fn what_a_build_leaves_at_sweeps_own_names_is_never_written_or_read_through() {
    let p = project();
    let victim = p.path().join("precious.txt");
    std::fs::write(&victim, "precious\n").unwrap();
    // The make list (`-MF <folder>/deps.d`) as a FIFO: the compiler writes nothing there.
    let fifo = wrapper(
        p.path(),
        "fifo-cc",
        "dir=$(dirname \"$(echo \"$@\" | sed 's/.*-MF \\([^ ]*\\).*/\\1/')\")\ncc \"$@\" || exit 1\nrm -f \"$dir/deps.d\" && mkfifo \"$dir/deps.d\"\nexit 0",
    );
    let link = wrapper(
        p.path(),
        "link-cc",
        &format!(
            "dir=$(dirname \"$(echo \"$@\" | sed 's/.*-MF \\([^ ]*\\).*/\\1/')\")\nln -s {} \"$dir/build.log\"",
            victim.display()
        ),
    );
    for (w, status) in [(&fifo, "build_failed"), (&link, "ok")] {
        write(
            p.path(),
            "sweeps/w.toml",
            &spec(&w.display().to_string(), ""),
        );
        let out = sweep(p.path())
            .args(["run", "sweeps/w.toml", "-q", "--no-analyze", "--force"])
            .timeout(std::time::Duration::from_secs(120))
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_ne!(
            out.status.code(),
            None,
            "{}: sweep hung: {err}",
            w.display()
        );
        let run = crate::common::run_dirs(&p.path().join("output/w"))
            .pop()
            .unwrap();
        let rows = crate::common::rows(&run.join("results.csv"));
        assert!(
            rows.iter().all(|r| r["status"] == status),
            "{}: {rows:?}",
            w.display()
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    }
}

/// Review 14a, F4: a wrapper that says something on `/dev/stderr` (dash opens it anew: the build's
/// log) failed every build under the confinement, "cannot create /dev/stderr: Permission denied".
/// The log is the build's to write.
#[test]
fn a_confined_build_may_write_to_its_own_log() {
    if !sweep::exec::confine::available() {
        eprintln!("skipped: this kernel has no Landlock, so builds are not confined here");
        return;
    }
    let p = project();
    let w = wrapper(
        p.path(),
        "say-cc",
        "echo 'wrapper: building' >/dev/stderr || exit 7",
    );
    write(
        p.path(),
        "sweeps/w.toml",
        &spec(&w.display().to_string(), ""),
    );
    let out = sweep(p.path())
        .args(["run", "sweeps/w.toml", "-q", "--no-analyze"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// Review 15, F4: a Ctrl-C while the compiler answered `--version` ended sweep at once (exit 130,
/// as it should before the run has its folder) and left the query's own folder,
/// `sweep-query-<pid>-<n>/`, under TMPDIR. It goes with sweep.
#[test]
fn an_interrupt_during_the_compilers_version_leaves_no_folder_under_tmpdir() {
    let p = project();
    let w = write(
        p.path(),
        "tools/slowv-cc",
        "#!/bin/sh\ncase \"$1\" in --version) echo hi > \"$TMPDIR/x\"; sleep 30; exec cc --version;; esac\nexec cc \"$@\"\n",
    );
    std::fs::set_permissions(&w, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    write(
        p.path(),
        "sweeps/v.toml",
        &spec(&w.display().to_string(), ""),
    );
    let tmpd = p.path().join("tmpd");
    std::fs::create_dir(&tmpd).unwrap();
    let mut child = crate::common::sweep_process(p.path())
        .args(["run", "sweeps/v.toml", "-q", "--no-analyze"])
        .env("TMPDIR", &tmpd)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Until the query is under way (its folder holds the wrapper's file).
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::fs::read_dir(&tmpd).unwrap().next().is_none() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    // SAFETY: kill only sends a signal to the child started above.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    let left: Vec<_> = std::fs::read_dir(&tmpd).unwrap().collect();
    assert!(left.is_empty(), "left under TMPDIR: {left:?}");
}
