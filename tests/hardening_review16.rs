//! Review 16 of issue 38 (review 15's findings left open): the cache and the output folder knew a
//! sweep only by a pid of this host. Two sweeps of one pid (containers, pid namespaces under
//! Slurm) shared their build folders and lists and removed each other's builds; a `cache clean`
//! that could not see a running sweep's pid (another host, another pid namespace) removed what it
//! held. Each sweep is now its pid, a random part and its host, and a running one holds a lock
//! on its list: only that lock, or an hour without a change where no lock can be seen, keeps
//! what it holds.

use crate::common::{project, rows, run_dirs, skip, stderr, sweep, sweep_process};
use crate::hardening::write;
use std::os::unix::process::CommandExt;
use std::path::Path;

/// How this host runs a command in a pid namespace of its own (as root, or through a user
/// namespace); None where it cannot.
fn pid_namespace() -> Option<Vec<&'static str>> {
    [
        vec!["unshare", "--pid", "--fork", "--mount-proc"],
        vec![
            "unshare",
            "--user",
            "--map-root-user",
            "--pid",
            "--fork",
            "--mount-proc",
        ],
    ]
    .into_iter()
    .find(|how| {
        std::process::Command::new(how[0])
            .args(&how[1..])
            .args(["sh", "-c", "test $$ = 1"])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// `sweep` with `args` in a pid namespace of its own (`how`), in `dir`, with its own locks.
fn isolated(how: &[&str], dir: &Path, locks: &str, args: &[&str]) -> std::process::Command {
    let mut c = std::process::Command::new(how[0]);
    c.args(&how[1..])
        .arg(assert_cmd::cargo::cargo_bin("sweep"))
        .args(args)
        .current_dir(dir)
        .env("SWEEP_LOCK_DIR", dir.join(locks))
        .env_remove("SWEEP_CACHE");
    c
}

/// A spec of `points` points of hostsaw that render alike (`pad` is in no template: one build,
/// the others from the cache), each running `slow_ms`.
fn padded(points: usize, slow_ms: u32, compiler: &str) -> String {
    let pads: Vec<String> = (1..=points).map(|i| i.to_string()).collect();
    format!(
        "bench = \"hostsaw\"\ncompiler = \"{compiler}\"\n[vars]\nmode = \"ok\"\nslow_ms = {slow_ms}\nthreads = 4\n[[axis]]\nname = \"pad\"\nvalues = [{}]\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n",
        pads.join(", ")
    )
}

/// Every row of the one run under `out` for spec `name`, as (pad, status).
fn statuses(out: &Path, name: &str) -> Vec<(String, String)> {
    let run = run_dirs(&out.join(name))[0].clone();
    rows(&run.join("results.csv"))
        .into_iter()
        .map(|r| (r["pad"].clone(), r["status"].clone()))
        .collect()
}

/// Review 15 F2: two sweeps of one pid (here both pid 1, each in a pid namespace of its own, as
/// two containers under Slurm are) building into one cache shared `.tmp-<key>-<pid>-<n>`: the
/// second removed the first's build folder mid-build, and its points were `build_failed`.
#[test]
fn two_sweeps_of_one_pid_sharing_a_cache_lose_no_build() {
    let Some(how) = pid_namespace() else {
        skip("no pid namespace can be made here (unshare refused)");
        return;
    };
    let p = project();
    // A compiler slow enough that the two builds of one key overlap.
    let cc = p.path().join("slow-cc");
    crate::common::script(&cc, "#!/bin/sh\nsleep 2\nexec cc \"$@\"\n");
    write(
        p.path(),
        "sweeps/pad.toml",
        &padded(2, 0, &cc.display().to_string()),
    );
    let cache = p.path().join("shared-cache");
    let start = |out: &str| {
        isolated(
            &how,
            p.path(),
            &format!("locks-{out}"),
            &[
                "run",
                "sweeps/pad.toml",
                "-q",
                "--no-analyze",
                "--output",
                out,
                "--cache",
            ],
        )
        .arg(&cache)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
    };
    let first = start("a");
    std::thread::sleep(std::time::Duration::from_millis(500));
    let second = start("b");
    for (out, child) in [("a", first), ("b", second)] {
        let done = child.wait_with_output().unwrap();
        assert_eq!(done.status.code(), Some(0), "{out}: {}", stderr(&done));
        let got = statuses(&p.path().join(out), "pad");
        assert_eq!(got.len(), 2, "{out}: {got:?}");
        assert!(got.iter().all(|(_, s)| s == "ok"), "{out}: {got:?}");
    }
}

/// Review 15 F1: a `sweep cache clean` that cannot see a running sweep's pid (run in another pid
/// namespace here; another host's is the same) took its list for a dead sweep's, removed it and
/// the entry the sweep was running from: the points left were `run_failed`. The sweep's lock on
/// its list tells it runs, whatever its pid.
#[test]
fn a_clean_that_cannot_see_a_running_sweeps_pid_keeps_what_it_holds() {
    let Some(how) = pid_namespace() else {
        skip("no pid namespace can be made here (unshare refused)");
        return;
    };
    let p = project();
    write(p.path(), "sweeps/pad.toml", &padded(4, 1000, "cc"));
    let cache = p.path().join("cache");
    let run = sweep_process(p.path())
        .args(["run", "sweeps/pad.toml", "-q", "--no-analyze", "--cache"])
        .arg(&cache)
        .env_remove("SWEEP_CACHE")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once the one build is in the cache, its first point is running from it.
    let built = || {
        std::fs::read_dir(&cache).is_ok_and(|d| {
            d.filter_map(Result::ok)
                .any(|e| e.path().join("deps.txt").exists())
        })
    };
    let waited = std::time::Instant::now();
    while !built() && waited.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(built(), "the build never reached the cache");
    let clean = isolated(
        &how,
        p.path(),
        "locks-clean",
        &["cache", "clean", "--cache"],
    )
    .arg(&cache)
    .output()
    .unwrap();
    assert_eq!(clean.status.code(), Some(0), "{}", stderr(&clean));
    let said = crate::common::stdout(&clean) + &stderr(&clean);
    let done = run.wait_with_output().unwrap();
    assert_eq!(
        done.status.code(),
        Some(0),
        "{}\nclean said: {said}",
        stderr(&done)
    );
    let got = statuses(&p.path().join("output"), "pad");
    assert_eq!(got.len(), 4, "{got:?}");
    assert!(
        got.iter().all(|(_, s)| s == "ok"),
        "{got:?}\nclean said: {said}"
    );
}

/// The same, with no namespace (so on every host): a list whose sweep's pid is no process here
/// (pid 2^30, another host's) and whose lock a running process holds (the `flock` tool, for that
/// sweep) keeps its entry from `sweep cache clean`; once the lock goes, the entry goes with
/// `clean` as any other. A list of another host that no lock holds protects while it changed
/// within the hour.
#[test]
fn a_list_is_held_by_its_lock_whatever_its_pid() {
    if !crate::common::on_path("flock") {
        skip("no `flock` tool on PATH");
        return;
    }
    let p = project();
    write(p.path(), "sweeps/pad.toml", &padded(1, 0, "cc"));
    let cache = p.path().join("cache");
    let out = sweep(p.path())
        .args(["run", "sweeps/pad.toml", "-q", "--no-analyze", "--cache"])
        .arg(&cache)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let key = std::fs::read_dir(&cache)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.len() == 32)
        .unwrap();
    let list = cache.join(format!(".in-use-1073741824-{:016x}-elsewhere-0", 7));
    std::fs::write(&list, format!("{key}\n")).unwrap();
    // In a group of its own: the lock is `sleep`'s too (it inherits the descriptor).
    let mut holder = std::process::Command::new("flock")
        .arg(&list)
        .args(["sleep", "60"])
        .process_group(0)
        .spawn()
        .unwrap();
    // Until `flock` holds it.
    let held = || {
        std::process::Command::new("flock")
            .args(["-n"])
            .arg(&list)
            .arg("true")
            .status()
            .is_ok_and(|s| !s.success())
    };
    let waited = std::time::Instant::now();
    while !held() && waited.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let clean = |p: &Path| {
        let out = sweep(p)
            .args(["cache", "clean", "--cache"])
            .arg(&cache)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        crate::common::stdout(&out)
    };
    let said = clean(p.path());
    assert!(cache.join(&key).join("bench").exists(), "{said}");
    assert!(list.exists(), "{said}");
    // SAFETY: a signal to the group the holder leads.
    unsafe { libc::kill(-(holder.id() as i32), libc::SIGKILL) };
    holder.wait().unwrap();
    assert!(!held());
    // Free now, but of another host: kept while it changed within the hour, then dropped.
    let said = clean(p.path());
    assert!(cache.join(&key).join("bench").exists(), "{said}");
    let then = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
    std::fs::File::open(&list)
        .unwrap()
        .set_modified(then)
        .unwrap();
    let said = clean(p.path());
    assert!(!cache.join(&key).exists() && !list.exists(), "{said}");
}

/// Review 15 F5: an entry holding what else its build wrote beside the binary (gcc's
/// `-gsplit-dwarf` `.dwo`, `-fstack-usage` `.su`) was used by runs and unseen by `cache stats`
/// ("0 builds") and `cache clean` (removed nothing).
#[test]
fn an_entry_with_the_builds_other_files_is_counted_and_cleaned() {
    let p = project();
    let spec = padded(1, 0, "cc").replace(
        "compiler = \"cc\"\n",
        "compiler = \"cc\"\nflags = [\"-g\", \"-gsplit-dwarf\", \"-fstack-usage\"]\n",
    );
    write(p.path(), "sweeps/pad.toml", &spec);
    let cache = p.path().join("cache");
    let out = sweep(p.path())
        .args(["run", "sweeps/pad.toml", "-q", "--no-analyze", "--cache"])
        .arg(&cache)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let entry = std::fs::read_dir(&cache)
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| e.file_name().len() == 32)
        .unwrap()
        .path();
    let extra = std::fs::read_dir(&entry)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            !["bench", "build.log", "deps.txt"].contains(&&*e.file_name().to_string_lossy())
        })
        .count();
    if extra == 0 {
        skip("this cc wrote no file beside the binary for -gsplit-dwarf or -fstack-usage");
        return;
    }
    let said = |what: &str| {
        let out = sweep(p.path())
            .args(["cache", what, "--cache"])
            .arg(&cache)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        crate::common::stdout(&out)
    };
    assert!(
        said("stats").contains("holds 1 build,"),
        "{}",
        said("stats")
    );
    let cleaned = said("clean");
    assert!(cleaned.contains("removed 1 build"), "{cleaned}");
    assert!(!entry.exists() && !cache.exists(), "{cleaned}");
}

/// Review 14b F4: a row of controls.csv under a point id the run's manifest does not list (an id
/// edited by hand, a row of another run) was read into the spread between processes. analyze and
/// compare refuse it as they refuse such a row of results.csv, naming the file and the row.
#[test]
fn a_control_rerun_of_a_point_the_manifest_does_not_list_is_refused() {
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
    let run = run_dirs(&p.path().join("output/saw"))[0].clone();
    let controls = run.join("controls.csv");
    let text = std::fs::read_to_string(&controls).expect("the saw spec re-runs controls");
    let (header, rest) = text.split_once('\n').unwrap();
    let forged = rest.replacen(',', "x,", 1);
    std::fs::write(&controls, format!("{header}\n{forged}")).unwrap();
    for args in [vec!["analyze"], vec!["compare", run.to_str().unwrap()]] {
        let out = sweep(p.path())
            .args(&args[..1])
            .arg(&run)
            .args(&args[1..])
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert!(
            err.contains("controls.csv` has a row of the point")
                && err.contains("which the run's manifest does not list"),
            "{args:?}: {err}"
        );
    }
}

/// Review 13b F9: a status no sweep writes (`OK` typed by hand) was read as a failure by one
/// reader and as a gap by another, and a resume took the point for done. Every reader of a run
/// and the resume refuse it, naming the word, the file and where.
#[test]
fn a_status_no_sweep_writes_is_refused_by_every_reader_and_the_resume() {
    let p = project();
    let out = sweep(p.path())
        .args([
            "run",
            "sweeps/saw.toml",
            "-q",
            "--no-analyze",
            "-a",
            "threads=1:4",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let run = run_dirs(&p.path().join("output/saw"))[0].clone();
    let csv = run.join("results.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let edited: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| match i {
            2 => l.replacen(",ok,", ",OK,", 1),
            _ => l.to_string(),
        })
        .collect();
    std::fs::write(&csv, edited.join("\n") + "\n").unwrap();
    let before = std::fs::read(&csv).unwrap();
    let run_s = run.to_str().unwrap();
    for args in [
        vec!["analyze", run_s],
        vec!["report", run_s],
        vec!["export", run_s, "--format", "json"],
        vec!["compare", run_s, run_s],
        vec!["resume", run_s],
    ] {
        let out = sweep(p.path()).args(&args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert!(
            err.contains("has the status `OK` in ") && err.contains("which is none of sweep's"),
            "{args:?}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
    assert_eq!(
        std::fs::read(&csv).unwrap(),
        before,
        "a reader wrote the run"
    );
}

/// Review 13b F10: compare keyed text values trimmed, so a text axis with `"ok"` and `"ok "`
/// (two values, two groups in analyze: text keeps its blanks) was refused as two rows of one
/// point. Its 8 points are compared as 8.
#[test]
fn compare_keeps_the_blanks_of_text_values_as_analyze_does() {
    let p = project();
    write(
        p.path(),
        "sweeps/txt.toml",
        "bench = \"hostsaw\"\ncompiler = \"cc\"\n[vars]\nslow_ms = 0\n[[axis]]\nname = \"mode\"\nvalues = [\"ok\", \"ok \"]\n[[axis]]\nname = \"threads\"\nrange = [1, 4]\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n",
    );
    let out = sweep(p.path())
        .args(["run", "sweeps/txt.toml", "-q", "--no-analyze"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let run = run_dirs(&p.path().join("output/txt"))[0].clone();
    let out = sweep(p.path())
        .arg("compare")
        .arg(&run)
        .arg(&run)
        .output()
        .unwrap();
    let said = crate::common::stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(said.contains("8 values compared: 8 same"), "{said}");
}

/// Review 13b F6 and F9 in `merge`: a shard holding one point's row twice was told as a point two
/// shards share ("in X and X", exit 1), and a status no sweep writes was merged in. Both are
/// refused as every reader of a run refuses them (exit 3, the shard's results.csv named).
#[test]
fn merge_refuses_a_shard_with_a_row_twice_or_an_unknown_status() {
    let p = project();
    write(
        p.path(),
        "sweeps/two.toml",
        "bench = \"hostsaw\"\ncompiler = \"cc\"\n[vars]\nslow_ms = 0\n[[axis]]\nname = \"mode\"\nvalues = [\"ok\", \"jitter\"]\n[[axis]]\nname = \"threads\"\nrange = [1, 2]\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n",
    );
    for shard in ["0/2", "1/2"] {
        let out = sweep(p.path())
            .args([
                "run",
                "sweeps/two.toml",
                "-q",
                "--no-analyze",
                "--shard",
                shard,
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let shards = run_dirs(&p.path().join("output/two"));
    let csv = shards[0].join("results.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let merge = || {
        let out = sweep(p.path()).arg("merge").args(&shards).output().unwrap();
        (out.status.code(), stderr(&out))
    };
    let last = text.lines().last().unwrap();
    std::fs::write(&csv, format!("{text}{last}\n")).unwrap();
    let (code, err) = merge();
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("results.csv` has two rows of the point"),
        "{err}"
    );
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let status = header.iter().position(|h| *h == "status").unwrap();
    let edited: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let mut cells: Vec<&str> = l.split(',').collect();
            if i == 1 {
                cells[status] = "done";
            }
            cells.join(",")
        })
        .collect();
    std::fs::write(&csv, edited.join("\n") + "\n").unwrap();
    let (code, err) = merge();
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("has the status `done` in its row 1"), "{err}");
    assert_eq!(
        run_dirs(&p.path().join("output/two")).len(),
        2,
        "a merge was written"
    );
}

/// Review 13b F8: a hand-edited manifest was read two ways. Its `columns` in another order than
/// the CSV's header were refused by export and report but read by analyze and compare; a metric's
/// `column` edited to another column of the CSV (its median's) was read as the metric's values by
/// analyze, export and report, and refused by compare. Every reader refuses both, naming them.
#[test]
fn a_hand_edited_manifest_header_or_metric_column_is_refused_by_every_reader() {
    let p = project();
    let out = sweep(p.path())
        .args([
            "run",
            "sweeps/saw.toml",
            "-q",
            "--no-analyze",
            "-a",
            "threads=1:4",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let run = run_dirs(&p.path().join("output/saw"))[0].clone();
    let path = run.join("manifest.json");
    let original = std::fs::read_to_string(&path).unwrap();
    type Edit = fn(&mut serde_json::Value);
    let edits: [(&str, Edit); 2] = [
        ("has another header than its run's manifest lists", |m| {
            let c = m["columns"].as_array_mut().unwrap();
            let i = c.iter().position(|v| v == "saw_mflops").unwrap();
            let j = c.iter().position(|v| v == "saw_median_mflops").unwrap();
            c.swap(i, j);
        }),
        ("metric `saw` has `column` = `saw_median_mflops`", |m| {
            m["metrics"][0]["column"] = "saw_median_mflops".into();
        }),
    ];
    let run_s = run.to_str().unwrap();
    for (said, edit) in edits {
        let mut m: serde_json::Value = serde_json::from_str(&original).unwrap();
        edit(&mut m);
        std::fs::write(&path, m.to_string()).unwrap();
        for args in [
            vec!["analyze", run_s],
            vec!["report", run_s],
            vec!["export", run_s, "--format", "json"],
            vec!["compare", run_s, run_s],
        ] {
            let out = sweep(p.path()).args(&args).output().unwrap();
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
            assert!(err.contains(said), "{args:?}: {err}");
        }
    }
}

/// Review 14b F1: with `--csv-dialect semicolon` (a decimal comma) the number `1.5` and the text
/// `"1,5"` are both written `1,5`: their two points were one point's rows to every reader,
/// averaged. Refused at plan, whatever dialect the run will take, naming the dialect.
#[test]
fn values_a_decimal_comma_writes_alike_are_refused() {
    let p = project();
    write(
        p.path(),
        "sweeps/semi.toml",
        "bench = \"hostsaw\"\ncompiler = \"cc\"\n[vars]\nslow_ms = 0\nmode = \"ok\"\n[[axis]]\nname = \"threads\"\nrange = [1, 2]\n[[axis]]\nname = \"tag\"\nvalues = [\"1,5\", 1.5]\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n",
    );
    for args in [
        vec!["plan", "sweeps/semi.toml"],
        vec![
            "run",
            "sweeps/semi.toml",
            "--csv-dialect",
            "semicolon",
            "-q",
        ],
    ] {
        let out = sweep(p.path()).args(&args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert!(
            err.contains(
                "in results.csv with --csv-dialect semicolon: their values differ only in type"
            ),
            "{args:?}: {err}"
        );
    }
    assert!(!p.path().join("output").exists());
}

/// `sweep` with `args` in `dir`, killed past `secs`: its exit code (None: it hung) and stderr.
fn within(dir: &Path, secs: u64, args: &[&str]) -> (Option<i32>, String) {
    let mut child = sweep_process(dir)
        .args(args)
        .env_remove("SWEEP_CACHE")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let waited = std::time::Instant::now();
    while waited.elapsed() < std::time::Duration::from_secs(secs) {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            return (status.code(), err);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    (None, String::new())
}

fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo with a NUL-terminated path we own.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o644) },
        0,
        "{}",
        path.display()
    );
}

/// Review 16a A1: a FIFO at a name sweep opens in the cache (an in-use list, the lock, the
/// marker, an entry's log or list) or in an unmeasured point's folder hung `run` and `cache
/// clean` for good. Such names are read only where they are files: the sweep finishes.
#[test]
fn a_fifo_at_a_name_sweep_reads_hangs_nothing() {
    let p = project();
    let cache = p.path().join("cache");
    let c = cache.to_str().unwrap().to_string();
    let run = [
        "run",
        "sweeps/saw.toml",
        "-q",
        "--no-analyze",
        "-a",
        "threads=1:2",
        "--cache",
        &c,
    ];
    assert_eq!(within(p.path(), 60, &run).0, Some(0));
    let key = std::fs::read_dir(&cache)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.len() == 32)
        .unwrap();
    for name in [
        ".in-use-1-0".to_string(),
        format!("{key}/build.log"),
        format!("{key}/deps.txt"),
        "CACHEDIR.TAG".to_string(),
        ".sweep.lock".to_string(),
    ] {
        mkfifo(&cache.join(&name));
        let (code, err) = within(p.path(), 60, &run);
        assert_eq!(code, Some(0), "run beside a FIFO at {name}: {err}");
        let (code, err) = within(p.path(), 30, &["cache", "stats", "--cache", &c]);
        assert_eq!(code, Some(0), "stats beside a FIFO at {name}: {err}");
        let (code, err) = within(p.path(), 30, &["cache", "clean", "--cache", &c]);
        assert!(code.is_some(), "clean hung on a FIFO at {name}: {err}");
        let _ = std::fs::remove_file(cache.join(&name));
        assert_eq!(within(p.path(), 60, &run).0, Some(0));
    }
}

/// Review 16a A2: a program that turned its own stdout.txt into a FIFO hung the sweep running
/// it, past every timeout, once it exited. Its point fails; the sweep goes on to the next.
#[test]
fn a_program_that_leaves_a_fifo_for_its_output_hangs_nothing() {
    let p = project();
    std::fs::create_dir_all(p.path().join("cuda/fifo")).unwrap();
    write(
        p.path(),
        "cuda/fifo/params.h.tera",
        "#define THREADS {{ threads }}\n",
    );
    write(
        p.path(),
        "cuda/fifo/fifo.c",
        "#include \"params.h\"\n#include <stdio.h>\n#include <unistd.h>\n#include <sys/stat.h>\nint main(void) {\n  printf(\"@sweep metric=saw unit=MFlops value=%d\\n\", THREADS * 10); fflush(stdout);\n  if (THREADS == 2) { unlink(\"stdout.txt\"); mkfifo(\"stdout.txt\", 0644); }\n  return 0;\n}\n",
    );
    write(
        p.path(),
        "sweeps/fifo.toml",
        "bench = \"fifo\"\ncompiler = \"cc\"\ncontrol_every = 0\n[[axis]]\nname = \"threads\"\nvalues = [1, 2, 3]\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n",
    );
    let (code, err) = within(
        p.path(),
        60,
        &["run", "sweeps/fifo.toml", "-q", "--no-analyze"],
    );
    assert!(code.is_some(), "the sweep hung");
    let got = statuses_by(&p.path().join("output/fifo"), "threads");
    assert_eq!(got.len(), 3, "{got:?} {err}");
    assert_eq!(got[0].1, "ok", "{got:?}");
    assert_ne!(got[1].1, "ok", "{got:?}");
    assert_eq!(got[2].1, "ok", "{got:?}");
}

/// Every row of the one run in `sweep_dir`, as (the `axis` cell, status).
fn statuses_by(sweep_dir: &Path, axis: &str) -> Vec<(String, String)> {
    let run = run_dirs(sweep_dir)[0].clone();
    rows(&run.join("results.csv"))
        .into_iter()
        .map(|r| (r[axis].clone(), r["status"].clone()))
        .collect()
}

/// Review 16a A6: `merge --out DIR` (and resume) removed a folder named `.new-<digits>` in the
/// folder beside, the user's, files and all. Only a name no one but a sweep makes (its pid, a
/// random part and its host) is removed there.
#[test]
fn merge_leaves_a_users_folder_beside_its_out_alone() {
    let p = project();
    for shard in ["0/2", "1/2"] {
        let out = sweep(p.path())
            .args([
                "run",
                "sweeps/saw.toml",
                "-q",
                "--no-analyze",
                "-a",
                "threads=1:4",
            ])
            .args(["--split", "points", "--shard", shard])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let papers = p.path().join("papers");
    let users = papers.join(".new-99999");
    std::fs::create_dir_all(&users).unwrap();
    std::fs::write(users.join("chapter1.tex"), "draft").unwrap();
    let then = std::time::SystemTime::now() - std::time::Duration::from_secs(600);
    std::fs::File::open(&users)
        .unwrap()
        .set_modified(then)
        .unwrap();
    let out = sweep(p.path())
        .args(["merge", "output/saw", "--out"])
        .arg(papers.join("merged"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        users.join("chapter1.tex").exists(),
        "the user's folder went"
    );
}

/// Review 16a A7: the compiler's `--version` ran unconfined when its folder's name
/// (`sweep-query-<pid>-<n>`) was taken. The name is sweep's owner's, and a taken one is skipped.
#[test]
fn the_version_query_stays_confined_when_its_folder_name_is_taken() {
    if !sweep::exec::confine::available() {
        skip("this kernel has no Landlock, so builds are not confined here");
        return;
    }
    let Some(how) = pid_namespace() else {
        skip("no pid namespace can be made here (unshare refused)");
        return;
    };
    let p = project();
    let victim = p.path().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    let cc = p.path().join("cc-ver");
    crate::common::script(
        &cc,
        &format!(
            "#!/bin/sh\ncase \"$1\" in --version) echo escaped >> {}/out.txt 2>/dev/null;; esac\nexec cc \"$@\"\n",
            victim.display()
        ),
    );
    write(
        p.path(),
        "sweeps/ver.toml",
        &padded(1, 0, &cc.display().to_string()),
    );
    let tmp = p.path().join("tmp");
    // In a pid namespace sweep is pid 1: the folder an older sweep would take is planted.
    for n in 0..4 {
        std::fs::create_dir_all(tmp.join(format!("sweep-query-1-{n}"))).unwrap();
    }
    let out = isolated(
        &how,
        p.path(),
        "locks",
        &["run", "sweeps/ver.toml", "-q", "--no-analyze"],
    )
    .env("TMPDIR", &tmp)
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!victim.join("out.txt").exists(), "the query wrote outside");
}

/// Review 16a A8: `cache clean` meeting a file where a build's folder goes stopped half-way,
/// exit 4, "Not a directory", naming no culprit. It removes the file as any unfinished build.
#[test]
fn clean_removes_a_file_at_a_builds_name() {
    let p = project();
    write(p.path(), "sweeps/pad.toml", &padded(1, 0, "cc"));
    let cache = p.path().join("cache");
    let out = sweep(p.path())
        .args(["run", "sweeps/pad.toml", "-q", "--no-analyze", "--cache"])
        .arg(&cache)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let file = cache.join(format!(".tmp-{}-99999-0", "a".repeat(32)));
    std::fs::write(&file, "x").unwrap();
    let then = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
    std::fs::File::open(&file)
        .unwrap()
        .set_modified(then)
        .unwrap();
    let out = sweep(p.path())
        .args(["cache", "clean", "--cache"])
        .arg(&cache)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!cache.exists(), "{}", crate::common::stdout(&out));
}

/// Review 16a A3: a process a build left behind with a made-up mark of this sweep's form
/// (`SWEEP_TREE=<sweep pid>-999999`) was spared to the end of the sweep; re-making `deps.txt` in
/// its build's folder as a link, it had sweep write the list through it, outside the output
/// folder and the cache. It is killed with the build it outlived, and sweep's own files there are
/// written only where no file is (`O_EXCL`): nothing is written outside.
#[test]
fn a_builds_leftover_with_a_made_up_mark_writes_nothing_outside() {
    let p = project();
    let victim = p.path().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    let cc = p.path().join("cc-linger");
    crate::common::script(
        &cc,
        &format!(
            "#!/bin/sh\nS=$(dirname \"$TMPDIR\")\nSWEEP_TREE=\"${{SWEEP_TREE%-*}}-999999\" setsid sh -c 'cd \"$0\"; end=$(( $(date +%s) + 20 )); while [ $(date +%s) -lt $end ]; do ln -sfn {}/deps-$$.txt deps.txt 2>/dev/null; done' \"$S\" </dev/null >/dev/null 2>&1 &\nexec cc \"$@\"\n",
            victim.display()
        ),
    );
    write(
        p.path(),
        "sweeps/linger.toml",
        &format!("bench = \"hostsaw\"\ncompiler = \"{}\"\n[vars]\nmode = \"ok\"\nslow_ms = 300\n[[axis]]\nname = \"threads\"\nvalues = [1, 2, 3]\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n", cc.display()),
    );
    let (code, err) = within(
        p.path(),
        60,
        &["run", "sweeps/linger.toml", "-q", "--no-analyze", "-j", "1"],
    );
    assert_eq!(code, Some(0), "{err}");
    let outside: Vec<_> = std::fs::read_dir(&victim).unwrap().collect();
    assert!(outside.is_empty(), "written outside: {outside:?} {err}");
    // No leftover lives on past the sweep (its command line names the victim folder).
    let named = victim.display().to_string().into_bytes();
    let left: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.parse::<i32>().is_ok())
        })
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| c.windows(named.len()).any(|w| w == named))
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(left.is_empty(), "leftovers live on: {left:?}");
}

/// Review 17 C5 and C6: a FIFO at a run's `analysis.csv` hung `export`, and one at
/// `build-inputs.txt` hung `resume` (read a second time, blocking). Neither waits on it.
#[test]
fn a_fifo_in_a_run_folder_hangs_neither_export_nor_resume() {
    let p = project();
    let (code, err) = within(
        p.path(),
        60,
        &["run", "sweeps/saw.toml", "-q", "-a", "threads=1:4"],
    );
    assert_eq!(code, Some(0), "{err}");
    let run = run_dirs(&p.path().join("output/saw"))[0].clone();
    let r = run.to_str().unwrap().to_string();
    mkfifo(&run.join("analysis.csv"));
    let (code, err) = within(p.path(), 30, &["export", &r, "--format", "csv"]);
    assert!(code.is_some(), "export hung on a FIFO at analysis.csv");
    assert_eq!(code, Some(0), "{err}");
    let _ = std::fs::remove_file(run.join("analysis.csv"));
    // A resume with points left, beside a FIFO at build-inputs.txt.
    let csv = run.join("results.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let kept: Vec<&str> = text.split_inclusive('\n').take(3).collect();
    std::fs::write(&csv, kept.concat()).unwrap();
    let m = std::fs::read_to_string(run.join("manifest.json")).unwrap();
    std::fs::write(
        run.join("manifest.json"),
        m.replace("\"state\": \"finished\"", "\"state\": \"interrupted\""),
    )
    .unwrap();
    mkfifo(&run.join("build-inputs.txt"));
    let (code, err) = within(p.path(), 60, &["resume", &r, "-q"]);
    assert!(code.is_some(), "resume hung on a FIFO at build-inputs.txt");
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(crate::common::rows(&csv).len(), 4, "{err}");
}
