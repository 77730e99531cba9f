//! Sharded sweeps: `sweep merge` on real shard runs of tests/project/sweeps/saw.toml, the job
//! script of `sweep slurm` run by hand, and a real job array on a private single-node Slurm
//! (scripts/slurm-up.sh installs and starts it; skipped only where Slurm cannot be had).

use crate::common::{manifest, project, run_dirs, skip, stderr, stdout, sweep};
use assert_cmd::Command;
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

/// `sweep run sweeps/saw.toml --shard i/n --split points` (plus `extra`); returns its run folder.
fn shard(dir: &Path, i: usize, n: usize, extra: &[&str]) -> PathBuf {
    let out = sweep(dir)
        .args([
            "run",
            "sweeps/saw.toml",
            "--no-analyze",
            "-q",
            "--split",
            "points",
        ])
        .args(["--shard", &format!("{i}/{n}")])
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "shard {i}/{n}: {}", stderr(&out));
    latest(&dir.join("output/saw"), &format!("-shard-{i}-of-{n}"))
}

/// The latest run folder in `sweep_dir` whose name ends with `suffix`.
fn latest(sweep_dir: &Path, suffix: &str) -> PathBuf {
    run_dirs(sweep_dir)
        .into_iter()
        .rfind(|p| p.is_dir() && p.file_name().unwrap().to_string_lossy().ends_with(suffix))
        .unwrap_or_else(|| panic!("no run `*{suffix}` in {}", sweep_dir.display()))
}

/// `sweep merge` with `args`.
fn merge<I, S>(dir: &Path, args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    sweep(dir).arg("merge").args(args).output().unwrap()
}

/// `sweep slurm sweeps/saw.toml --shards 4 --split points`, for the caller to add to and run.
fn slurm_saw(dir: &Path) -> Command {
    let mut c = sweep(dir);
    c.args([
        "slurm",
        "sweeps/saw.toml",
        "--shards",
        "4",
        "--split",
        "points",
    ]);
    c
}

/// A single local run of saw.toml into `local/`: the reference.
fn reference(dir: &Path) -> Rows {
    sweep(dir)
        .args([
            "run",
            "sweeps/saw.toml",
            "--no-analyze",
            "-q",
            "--output",
            "local",
        ])
        .assert()
        .success();
    rows(&latest(&dir.join("local/saw"), "Z").join("results.csv"))
}

/// (point_id, index, threads, status, saw_mflops) of each row, in file order.
type Rows = Vec<[String; 5]>;

fn rows(csv: &Path) -> Rows {
    let text = std::fs::read_to_string(csv).unwrap();
    let delimiter = if text.lines().next().unwrap().contains(';') {
        b';'
    } else {
        b','
    };
    let mut r = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .from_reader(text.as_bytes());
    let h: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    let cols = ["point_id", "index", "threads", "status", "saw_mflops"].map(col);
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            assert_eq!(rec.len(), h.len(), "{}: a short row", csv.display());
            // Numbers compared in one dialect.
            cols.map(|c| {
                if delimiter == b';' {
                    rec[c].replace(',', ".")
                } else {
                    rec[c].to_string()
                }
            })
        })
        .collect()
}

/// The merged run folders in `output/saw`.
fn merged_runs(dir: &Path) -> Vec<PathBuf> {
    run_dirs(&dir.join("output/saw"))
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with("-merged"))
        .collect()
}

/// The run folders of shards `order` of `n` (`shard`, no extra options), relative to `dir`.
fn shard_runs(dir: &Path, order: &[usize], n: usize) -> Vec<PathBuf> {
    order
        .iter()
        .map(|&i| {
            shard(dir, i, n, &[])
                .strip_prefix(dir)
                .unwrap()
                .to_path_buf()
        })
        .collect()
}

/// A stale copy of `run` in `dir/stale` that lost its rows but not what it keeps beside them:
/// `files` copied, its results.csv only the header line, which it returns.
fn stale_copy(dir: &Path, run: &Path, files: &[&str]) -> String {
    let stale = dir.join("stale");
    std::fs::create_dir_all(stale.join("passes")).unwrap();
    for f in files {
        std::fs::copy(dir.join(run).join(f), stale.join(f)).unwrap();
    }
    let results = std::fs::read_to_string(dir.join(run).join("results.csv")).unwrap();
    let header_line = results[..=results.find('\n').unwrap()].to_string();
    std::fs::write(stale.join("results.csv"), &header_line).unwrap();
    header_line
}

/// What merge says of a CSV kept beside a run's results.csv (`kept`, as the merge was given it)
/// whose header says `saw_gflops` for `saw_mflops`.
fn edited_header_refusal(kept: &Path) -> String {
    let folder = kept.parent().unwrap();
    let run = match folder.file_name().is_some_and(|f| f == "passes") {
        true => folder.parent().unwrap(),
        false => folder,
    };
    format!(
        "error: `{}` has another CSV header than the results.csv of its run: column 5 is `saw_gflops` in `{}` and `saw_mflops` in `{}` (hint: was it edited? nothing was written)\n",
        kept.display(),
        kept.display(),
        run.join("results.csv").display()
    )
}

#[test]
fn merging_every_shard_gives_the_rows_of_a_single_run_in_sweep_order() {
    let p = project();
    let want = reference(p.path());
    assert_eq!(want.len(), 64);
    // Shards in another order than their index: the merge orders rows by point.
    let runs = shard_runs(p.path(), &[2, 0, 3, 1], 4);
    let out = merge(p.path(), &runs);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("merged 4 runs: 64 of 64 points (64 ok) into output/saw/"),
        "{}",
        stdout(&out)
    );
    let merged = merged_runs(p.path());
    assert_eq!(merged.len(), 1);
    assert_eq!(
        rows(&merged[0].join("results.csv")),
        want,
        "same points, statuses and values, in sweep order"
    );
    let header = |d: &Path| {
        std::fs::read_to_string(d.join("results.csv"))
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(header(&merged[0]), header(&p.path().join(&runs[0])));
    let m = manifest(&merged[0]);
    assert_eq!(m["state"], "finished");
    assert_eq!(m["points_total"], 64);
    assert_eq!(m["point_ids"].as_array().unwrap().len(), 64);
    assert_eq!(m["counts"]["ok"], 64);
    let shards: Vec<&str> = m["merged_from"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["shard"].as_str().unwrap())
        .collect();
    assert_eq!(shards, ["2/4", "0/4", "3/4", "1/4"]);
    assert!(m["missing"].as_array().unwrap().is_empty());
    assert!(
        !merged[0].join("points").exists(),
        "the logs stay in the shard runs"
    );
    // Each shard of 16 points re-ran 4 in fresh processes; the merge keeps all 16 controls.
    assert_eq!(rows(&merged[0].join("controls.csv")).len(), 16);

    // Made by this sweep, as each shard was.
    assert_eq!(m["sweep_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(m["sweep_commit"], env!("SWEEP_COMMIT"));

    // --out names the folder, and a folder that holds a merge is not overwritten.
    // (A shard made by another build of sweep: the merge names no commit.)
    let edited = p.path().join(&runs[0]);
    let mut other = manifest(&edited);
    other["sweep_commit"] = "0123456789abcdef0123456789abcdef01234567".into();
    std::fs::write(edited.join("manifest.json"), other.to_string()).unwrap();
    let out = merge(p.path(), ["output/saw", "--out", "joined"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(rows(&p.path().join("joined/results.csv")), want);
    let m = manifest(&p.path().join("joined"));
    assert_eq!(m["sweep_version"], env!("CARGO_PKG_VERSION"));
    assert!(m.get("sweep_commit").is_none(), "{m}");
    let out = merge(p.path(), ["output/saw", "--out", "joined"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        stderr(&out),
        "error: --out `joined` already holds a run: a merge writes a run folder of its own (hint: --out takes a new or empty folder; without --out the merge goes to <sweep folder>/<stamp>-merged)\n"
    );
}

#[test]
fn missing_points_are_named_and_the_rest_is_merged() {
    let p = project();
    for i in 0..3 {
        shard(p.path(), i, 4, &[]);
    }
    // The sweep folder stands for the latest run of each shard.
    let out = merge(p.path(), ["output/saw"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: 16 of 64 points missing: `")
            && err.contains("` (threads=4), `")
            && err.contains("and 11 more; the other 48 are merged into `output/saw/"),
        "{err}"
    );
    assert!(
        err.contains("(hint: they belong to shard 3/4 (no run given); `sweep run sweeps/saw.toml --shard 3/4 --split points`, or `sweep slurm sweeps/saw.toml --shards 4 --split points --submit`, runs them; then merge again)"),
        "{err}"
    );
    let merged = merged_runs(p.path());
    let got = rows(&merged[0].join("results.csv"));
    assert_eq!(got.len(), 48);
    assert!(
        got.iter().all(|r| r[2].parse::<usize>().unwrap() % 4 != 0),
        "shard 3/4 holds threads 4, 8, ..."
    );
    let idx: Vec<usize> = got.iter().map(|r| r[1].parse().unwrap()).collect();
    assert!(idx.windows(2).all(|w| w[0] < w[1]), "rows in sweep order");
    let m = manifest(&merged[0]);
    assert_eq!(m["state"], "incomplete");
    assert!(m["finished"].is_null());
    let missing = m["missing"].as_array().unwrap();
    assert_eq!(missing.len(), 16);
    assert_eq!(missing[0]["point"], "threads=4");
    assert_eq!(missing[0]["shard"], "3/4");

    // Run the missing shard as the hint says; merging again is complete.
    shard(p.path(), 3, 4, &[]);
    let out = merge(p.path(), ["output/saw"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("merged 4 runs: 64 of 64 points"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn points_found_in_two_runs_stop_the_merge() {
    let p = project();
    let a = shard(p.path(), 0, 2, &[]);
    let b = shard(p.path(), 1, 2, &[]);
    let c = shard(p.path(), 1, 4, &[]);
    let out = merge(p.path(), [&a, &b, &c]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    let (b, c) = (b.display(), c.display());
    assert!(
        err.starts_with("error: 16 points appear more than once: `"),
        "{err}"
    );
    assert!(
        err.contains(&format!("(threads=2; in `{}` and `{}`)", b, c)),
        "{err}"
    );
    assert!(
        err.ends_with("(hint: the runs come from several shardings (2 shards split by points, 4 shards split by points): pass the shards of one `--shard I/N --split`, one run each; nothing was written)\n"),
        "{err}"
    );
    assert!(merged_runs(p.path()).is_empty());
    // A sweep folder with runs of two shardings does not guess.
    let out = merge(p.path(), ["output/saw"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        stderr(&out),
        "error: `output/saw` holds shard runs of several shardings: 2 shards split by points, 4 shards split by points (hint: pass the run folders to merge)\n"
    );
}

#[test]
fn runs_of_another_spec_or_header_are_refused_by_name() {
    let p = project();
    let a = shard(p.path(), 0, 2, &[]);
    let spec = p.path().join("sweeps/saw.toml");
    let text = std::fs::read_to_string(&spec).unwrap();
    std::fs::write(&spec, text.replace("slow_ms = 0", "slow_ms = 1")).unwrap();
    let b = shard(p.path(), 1, 2, &[]);
    let out = merge(p.path(), [&a, &b]);
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1);
    assert!(
        err.starts_with(&format!(
            "error: run `{}` is of another spec than `{}` (spec sha256 ",
            b.display(),
            a.display()
        )),
        "{err}"
    );
    assert!(merged_runs(p.path()).is_empty());

    // Same spec, a CSV whose header was edited.
    std::fs::write(&spec, &text).unwrap();
    let c = shard(p.path(), 1, 2, &[]);
    let csv = c.join("results.csv");
    let edited = std::fs::read_to_string(&csv)
        .unwrap()
        .replacen("saw_mflops", "saw_gflops", 1);
    std::fs::write(&csv, edited).unwrap();
    let out = merge(p.path(), [&a, &c]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        stderr(&out),
        format!(
            "error: run `{}` has another CSV header than `{}`: column 5 is `saw_gflops` in `{}` and `saw_mflops` in `{}`\n",
            c.display(),
            a.display(),
            c.display(),
            a.display()
        )
    );
}

#[test]
fn a_controls_csv_of_another_header_or_unreadable_is_refused_before_anything_is_written() {
    let p = project();
    let runs = shard_runs(p.path(), &[0, 1], 2);
    let controls = p.path().join(&runs[1]).join("controls.csv");
    let text = std::fs::read_to_string(&controls).unwrap();
    assert!(text.lines().count() > 1, "shard 1 re-ran points: {text}");
    std::fs::write(&controls, text.replacen("saw_mflops", "saw_gflops", 1)).unwrap();
    let out = merge(p.path(), &runs);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        edited_header_refusal(&runs[1].join("controls.csv"))
    );
    assert!(merged_runs(p.path()).is_empty(), "no merged folder");

    // One that cannot be read stops the merge before its folder is made, too.
    std::fs::remove_file(&controls).unwrap();
    std::fs::create_dir(&controls).unwrap();
    let out = merge(p.path(), &runs);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "error: `{}` is not a regular file",
            runs[1].join("controls.csv").display()
        )),
        "{err}"
    );
    assert!(merged_runs(p.path()).is_empty(), "no merged folder");

    // Mended, the merge keeps both shards' controls under the one header.
    std::fs::remove_dir(&controls).unwrap();
    std::fs::write(&controls, &text).unwrap();
    let out = merge(p.path(), &runs);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let want = rows(&p.path().join(&runs[0]).join("controls.csv")).len() + rows(&controls).len();
    assert_eq!(
        rows(&merged_runs(p.path())[0].join("controls.csv")).len(),
        want
    );
}

#[test]
fn merge_carries_the_processes_recheck_kept_from_the_run_that_gives_each_row() {
    let p = project();
    // saw.toml over threads 1..8 in mode twostate: the first process of an even point shows two
    // groups of samples, so recheck (2 by default) measures it again; a run keeps every process
    // of such a point in passes/recheck.csv.
    let spec = p.path().join("sweeps/saw.toml");
    let text = std::fs::read_to_string(&spec)
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 8]")
        .replace("mode = \"ok\"", "mode = \"twostate\"");
    std::fs::write(&spec, text).unwrap();
    sweep(p.path())
        .args(["run", "sweeps/saw.toml", "--no-analyze", "-q"])
        .args(["--output", "local"])
        .assert()
        .success();
    let single = latest(&p.path().join("local/saw"), "Z").join("passes/recheck.csv");
    // One run keeps them in the order they ran; the merge in sweep order, each point's processes
    // in the order they ran.
    let mut want = rows(&single);
    want.sort_by_key(|r| r[1].parse::<usize>().unwrap());
    assert_eq!(want.len(), 10, "2 and 6 in 3 processes, 4 and 8 in 2");

    // Split by points into 4: shard 1 holds threads 2 and 6, shard 3 threads 4 and 8.
    let runs = shard_runs(p.path(), &[0, 1, 2, 3], 4);
    // A stale copy of shard 1 that lost its rows but not its processes: the rows come from the
    // finished shard 1, and so do their processes, once each.
    let header_line = stale_copy(p.path(), &runs[1], &["manifest.json", "passes/recheck.csv"]);

    let out = merge(p.path(), runs.iter().chain([&PathBuf::from("stale")]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let merged = merged_runs(p.path());
    let csv = merged[0].join("passes/recheck.csv");
    assert_eq!(rows(&csv), want);
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with(&header_line), "{text}");

    // A recheck.csv whose header differs from its run's results.csv stops the merge.
    let edited = p.path().join(&runs[3]).join("passes/recheck.csv");
    let text = std::fs::read_to_string(&edited).unwrap();
    std::fs::write(&edited, text.replacen("saw_mflops", "saw_gflops", 1)).unwrap();
    let out = merge(
        p.path(),
        runs.iter()
            .map(|r| r.as_os_str())
            .chain(["--out".as_ref(), "joined".as_ref()]),
    );
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        edited_header_refusal(&runs[3].join("passes/recheck.csv"))
    );
    assert!(!p.path().join("joined").exists());
}

#[test]
fn merge_carries_each_pass_of_repeat_from_the_run_that_gives_each_row() {
    let p = project();
    // saw.toml over threads 1..8 in mode varies with `repeat = 3`: the n-th process of a point
    // gives 1 + 0.1 n times its value, so each pass's rows differ; a run keeps every pass's own
    // row of each point in passes/pass-<p>.csv, and its results row is their median.
    let spec = p.path().join("sweeps/saw.toml");
    let text = std::fs::read_to_string(&spec)
        .unwrap()
        .replace("range = [1, 64]", "range = [1, 8]")
        .replace("mode = \"ok\"", "mode = \"varies\"")
        .replace("compiler = \"cc\"", "compiler = \"cc\"\nrepeat = 3");
    std::fs::write(&spec, text).unwrap();
    sweep(p.path())
        .args(["run", "sweeps/saw.toml", "--no-analyze", "-q"])
        .args(["--output", "local"])
        .assert()
        .success();
    let single = latest(&p.path().join("local/saw"), "Z");
    // A run keeps passes after the first in shuffled orders; the merge in sweep order.
    let want: Vec<Rows> = (0..3)
        .map(|pass| {
            let mut r = rows(&single.join(format!("passes/pass-{pass}.csv")));
            r.sort_by_key(|r| r[1].parse::<usize>().unwrap());
            r
        })
        .collect();
    assert!(want.iter().all(|w| w.len() == 8));
    assert_ne!(want[0], want[1], "the passes differ");

    let runs = shard_runs(p.path(), &[0, 1, 2, 3], 4);
    // A stale copy of shard 1 that lost its rows but not its passes: the rows come from the
    // finished shard 1, and so do their passes, once each.
    let header_line = stale_copy(
        p.path(),
        &runs[1],
        &[
            "manifest.json",
            "passes/pass-0.csv",
            "passes/pass-1.csv",
            "passes/pass-2.csv",
        ],
    );
    // Shard 2's last pass as a run resumed after a kill between a process's row and its point's
    // leaves it: an earlier process of its first point, then the one its results row combined.
    let last = p.path().join(&runs[2]).join("passes/pass-2.csv");
    let text = std::fs::read_to_string(&last).unwrap();
    let (head, body) = text.split_at(text.find('\n').unwrap() + 1);
    let row = &body[..=body.find('\n').unwrap()];
    let mflops = row.split(',').nth(4).unwrap();
    let orphan = row.replacen(&format!(",{mflops},"), ",1,", 1);
    assert_ne!(orphan, row);
    std::fs::write(&last, format!("{head}{orphan}{body}")).unwrap();

    let out = merge(p.path(), runs.iter().chain([&PathBuf::from("stale")]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let merged = merged_runs(p.path());
    for (pass, want) in want.iter().enumerate() {
        let csv = merged[0].join(format!("passes/pass-{pass}.csv"));
        assert_eq!(&rows(&csv), want, "pass {pass}");
        let text = std::fs::read_to_string(&csv).unwrap();
        assert!(text.starts_with(&header_line), "{text}");
    }
    assert!(!merged[0].join("passes/recheck.csv").exists());

    // A pass CSV whose header differs from its run's results.csv stops the merge.
    let edited = p.path().join(&runs[3]).join("passes/pass-1.csv");
    let text = std::fs::read_to_string(&edited).unwrap();
    std::fs::write(&edited, text.replacen("saw_mflops", "saw_gflops", 1)).unwrap();
    let out = merge(
        p.path(),
        runs.iter()
            .map(|r| r.as_os_str())
            .chain(["--out".as_ref(), "joined".as_ref()]),
    );
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        edited_header_refusal(&runs[3].join("passes/pass-1.csv"))
    );
    assert!(!p.path().join("joined").exists());
}

#[test]
fn merge_keeps_the_semicolon_dialect() {
    let p = project();
    let want = reference(p.path());
    for i in 0..2 {
        shard(p.path(), i, 2, &["--csv-dialect", "semicolon"]);
    }
    let out = merge(p.path(), ["output/saw"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let csv = merged_runs(p.path())[0].join("results.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(
        text.starts_with("point_id;index;threads;status;saw_mflops;"),
        "{text}"
    );
    assert!(
        text.lines().nth(1).unwrap().contains(";0,001;10;"),
        "decimal commas kept: {text}"
    );
    assert_eq!(rows(&csv), want);
}

#[test]
fn a_spec_path_with_a_line_break_writes_no_script() {
    let p = project();
    // The script's comment names the spec unquoted: the second line would run on every node.
    let dir = p.path().join("sweeps/x\ntouch HACKED\n");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(p.path().join("sweeps/saw.toml"), dir.join("saw.toml")).unwrap();
    let out = sweep(p.path())
        .arg("slurm")
        .arg(dir.join("saw.toml"))
        .args(["--shards", "2", "--split", "points"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(
            "touch HACKED\\n/saw.toml\" in the job: the script names it on a comment line"
        ),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!p.path().join("output/saw").exists(), "no script written");
}

#[test]
fn slurm_writes_a_job_array_script_that_runs_each_shard() {
    let p = project();
    let out = slurm_saw(p.path())
        .args([
            "--partition",
            "gpu",
            "--gres",
            "gpu:1",
            "--time",
            "00:10:00",
            "--cache",
            "shared-cache",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let root = p.path().canonicalize().unwrap();
    let script = root.join("output/saw/slurm-array-4.sh");
    let lines = stdout(&out);
    assert!(
        lines.starts_with(&format!(
            "wrote {} (4 array tasks, one per shard of the 64 points of `saw`)\n",
            script.display()
        )),
        "{lines}"
    );
    assert!(
        lines.contains(&format!("submit: sbatch {}\n", script.display())),
        "{lines}"
    );
    assert!(lines.ends_with(&format!(
        "merge when every task has ended: sweep merge {}\n",
        root.join("output/saw").display()
    )));
    let text = std::fs::read_to_string(&script).unwrap();
    for want in [
        "#SBATCH --array=0-3\n".to_string(),
        "#SBATCH --job-name=sweep-saw\n".into(),
        format!("#SBATCH --output={}/output/saw/slurm-%A_%a.out\n", root.display()),
        "#SBATCH --partition=gpu\n#SBATCH --gres=gpu:1\n#SBATCH --time=00:10:00\n".into(),
        format!(
            "exec {} run {}/sweeps/saw.toml --output {}/output --cache {}/shared-cache --split points --csv-dialect comma -q --shard \"$shard\"\n",
            assert_cmd::cargo::cargo_bin("sweep").display(),
            root.display(),
            root.display(),
            root.display()
        ),
    ] {
        assert!(text.contains(&want), "{want:?} in\n{text}");
    }

    // What Slurm does, by hand: every task, from another working folder.
    let elsewhere = tempfile::tempdir().unwrap();
    for i in 0..4 {
        let out = std::process::Command::new("bash")
            .arg(&script)
            .current_dir(elsewhere.path())
            .env("SLURM_ARRAY_TASK_ID", i.to_string())
            .env("SWEEP_LOCK_DIR", p.path().join("locks"))
            .output()
            .unwrap();
        assert!(out.status.success(), "task {i}: {}", stderr(&out));
        assert!(
            stdout(&out).starts_with(&format!("sweep: shard {i}/4 of saw on ")),
            "{}",
            stdout(&out)
        );
    }
    assert!(
        p.path().join("shared-cache").is_dir(),
        "the tasks build into the cache named"
    );
    let out = merge(p.path(), ["output/saw"]);
    assert!(out.status.success(), "{}", stderr(&out));

    // Every shard finished: nothing is submitted again (no sbatch is needed to say so).
    let out = slurm_saw(p.path()).arg("--submit").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("shard 0/4, 1/4, 2/4, 3/4 already finished"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("nothing to submit"),
        "{}",
        stdout(&out)
    );

    // A series never spans two shards: saw.toml is one series, so --split series fills shard 0.
    let out = sweep(p.path())
        .args(["slurm", "sweeps/saw.toml", "--shards", "2"])
        .output()
        .unwrap();
    assert!(
        stderr(&out).starts_with("warning: shard 1/2 holds no point"),
        "{}",
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("submit: sbatch --array=0 "),
        "{}",
        stdout(&out)
    );

    let out = sweep(p.path())
        .args([
            "slurm",
            "sweeps/saw.toml",
            "--shards",
            "4",
            "--time",
            "ten minutes",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: `--time ten minutes` cannot go into an #SBATCH line: not a Slurm time (hint: HH:MM:SS, MM, or D-HH:MM:SS)\n"
    );
}

/// Stops the daemons of scripts/slurm-up.sh when dropped, the test failing or not.
struct SlurmGuard(PathBuf);

impl Drop for SlurmGuard {
    fn drop(&mut self) {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm-down.sh");
        let _ = std::process::Command::new(script).arg(&self.0).status();
    }
}

const DONE: [&str; 9] = [
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "TIMEOUT",
    "NODE_FAIL",
    "OUT_OF_MEMORY",
    "BOOT_FAIL",
    "DEADLINE",
    "PREEMPTED",
];

#[test]
fn a_real_slurm_job_array_gives_the_rows_of_a_single_run() {
    let t0 = Instant::now();
    let p = project();
    let cluster = p.path().join("slurm");
    let _guard = SlurmGuard(cluster.clone());
    let up = std::process::Command::new(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm-up.sh"),
    )
    .arg(&cluster)
    .output()
    .unwrap();
    match up.status.code() {
        Some(0) => {}
        Some(77) => {
            skip(stderr(&up).trim());
            return;
        }
        _ => panic!("scripts/slurm-up.sh failed:\n{}", stderr(&up)),
    }
    let conf = stdout(&up)
        .lines()
        .find_map(|l| l.strip_prefix("SLURM_CONF=").map(String::from))
        .unwrap();
    let slurm_up = t0.elapsed();
    let want = reference(p.path());

    let out = slurm_saw(p.path())
        .env("SLURM_CONF", &conf)
        .arg("--submit")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let id = text
        .lines()
        .find_map(|l| l.strip_prefix("submitted job array "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no job id in {text}"))
        .to_string();

    // Wait for the four tasks to end.
    let deadline = Instant::now() + Duration::from_secs(90);
    let states = loop {
        let q = std::process::Command::new("squeue")
            .env("SLURM_CONF", &conf)
            .args(["--states=all", "-r", "-h", "-j", &id, "-o", "%i %T"])
            .output()
            .unwrap();
        let states: Vec<(String, String)> = stdout(&q)
            .lines()
            .filter_map(|l| {
                l.split_once(' ')
                    .map(|(a, b)| (a.to_string(), b.trim().to_string()))
            })
            .collect();
        if states.len() == 4 && states.iter().all(|(_, s)| DONE.contains(&s.as_str())) {
            break states;
        }
        if Instant::now() > deadline {
            let log = std::fs::read_to_string(cluster.join("slurmctld.log")).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(20).collect();
            panic!("job array {id} did not end in 90 s: {states:?}\nslurmctld.log (last lines, newest first):\n{}", tail.join("\n"));
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    let logs = |task: usize| {
        let out = p.path().join(format!("output/saw/slurm-{id}_{task}.out"));
        let err = p.path().join(format!("output/saw/slurm-{id}_{task}.err"));
        format!(
            "{}{}",
            std::fs::read_to_string(out).unwrap_or_default(),
            std::fs::read_to_string(err).unwrap_or_default()
        )
    };
    for (task, state) in &states {
        let i: usize = task.rsplit('_').next().unwrap().parse().unwrap();
        assert_eq!(state, "COMPLETED", "task {task}: {}", logs(i));
        assert!(
            logs(i).starts_with(&format!("sweep: shard {i}/4 of saw on ")),
            "{}",
            logs(i)
        );
    }

    let out = merge(p.path(), ["output/saw"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let merged = merged_runs(p.path());
    assert_eq!(
        rows(&merged[0].join("results.csv")),
        want,
        "the array's rows are those of a single local run"
    );
    let m = manifest(&merged[0]);
    assert_eq!(m["state"], "finished");
    assert_eq!(m["merged_from"].as_array().unwrap().len(), 4);

    // Submitting again submits nothing: every shard has a finished run.
    let out = slurm_saw(p.path())
        .env("SLURM_CONF", &conf)
        .arg("--submit")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("nothing to submit") && !stdout(&out).contains("submitted job array"),
        "{}",
        stdout(&out)
    );
    let _ = writeln!(
        std::io::stderr(),
        "real Slurm: up in {:.1} s, array of 4 shards run and merged in {:.1} s in all",
        slurm_up.as_secs_f64(),
        t0.elapsed().as_secs_f64()
    );
}
