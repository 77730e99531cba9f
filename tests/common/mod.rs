//! Helpers shared by the integration tests (the modules of tests/lib.rs).

use assert_cmd::Command;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A private copy of tests/project, so runs, caches and edits don't meet.
pub fn project() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/project");
    for e in walkdir::WalkDir::new(&src)
        .into_iter()
        .filter_map(Result::ok)
    {
        let dst = tmp.path().join(e.path().strip_prefix(&src).unwrap());
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&dst).unwrap();
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
    tmp
}

/// `sweep` run in `dir`, with a lock folder of its own there and no cache from the environment.
pub fn sweep(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("sweep").unwrap();
    c.current_dir(dir)
        .env("SWEEP_LOCK_DIR", dir.join("locks"))
        .env_remove("SWEEP_CACHE");
    c
}

/// `sweep` run in `dir` with a lock folder of its own there, as a plain `std::process::Command`:
/// for runs the test spawns and then kills or signals.
pub fn sweep_process(dir: &Path) -> std::process::Command {
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("sweep"));
    c.current_dir(dir).env("SWEEP_LOCK_DIR", dir.join("locks"));
    c
}

pub fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The rows of a CSV file, each as column name -> value.
pub type Rows = Vec<BTreeMap<String, String>>;

pub fn rows(csv: &Path) -> Rows {
    rows_of(&std::fs::read(csv).unwrap(), b',')
}

/// The rows of CSV text written with `delimiter`, each as column name -> value.
pub fn rows_of(bytes: &[u8], delimiter: u8) -> Rows {
    let mut r = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .from_reader(bytes);
    let h: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records()
        .map(|rec| {
            h.iter()
                .cloned()
                .zip(rec.unwrap().iter().map(String::from))
                .collect()
        })
        .collect()
}

/// The manifest.json of a run folder.
pub fn manifest(run: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap()
}

/// What a sweep's output folder holds, sorted by name (run folders are named by their start).
pub fn run_dirs(sweep_dir: &Path) -> Vec<PathBuf> {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(sweep_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    runs.sort();
    runs
}

/// Says on the test run's own stderr that the running test skips, and why: a test that returns
/// early passes, and libtest would swallow an `eprintln!` of a passing test. For what only some
/// hosts lack (a tool that cannot be installed there, or a host that has a GPU), where a static
/// `#[ignore]` would also skip the test where it can run, CI included.
pub fn skip(why: &str) {
    use std::io::Write;
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
}

/// A file named `program` is in a folder of PATH.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
        .unwrap_or(false)
}

/// Writes `text` to `path` as an executable script (mode 755): a stand-in tool or compiler.
pub fn script(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// What analysis.md says `series` reads (the list after its table: "- `name`: reading").
pub fn reading(md: &str, series: &str) -> Option<String> {
    let head = format!("- `{series}`: ");
    md.lines()
        .find_map(|l| l.strip_prefix(&head))
        .map(str::to_string)
}

/// `md` with its Markdown tables' padding taken out (`| a   | 32 |` as `| a | 32 |`), so a test
/// can look for a run of cells whatever the widths of the columns.
pub fn squeeze(md: &str) -> String {
    md.lines()
        .map(|l| {
            if l.starts_with("| ") {
                let c: Vec<&str> = l.split('|').map(str::trim).collect();
                format!("{} |", c[..c.len() - 1].join(" | ").trim_start())
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `sweep analyze`'s Markdown with each row of the series table unpadded and its series' reading
/// (the list under the table) added as a last cell: one line per series holds all that is said
/// of it, for tests that look a series up by its line.
pub fn with_readings(md: &str) -> String {
    squeeze(md)
        .lines()
        .map(|l| {
            let name = l.strip_prefix("| ").and_then(|r| r.split(" | ").next());
            match name.and_then(|n| reading(md, n)) {
                Some(r) => format!("{l} {} |", r.replace('|', "\\|")),
                None => l.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The state letter of process `pid` (`Z` for a zombie), and its parent.
pub fn state_and_parent(pid: i32) -> Option<(char, i32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut rest = stat.rsplit_once(')')?.1.split_whitespace();
    let state = rest.next()?.chars().next()?;
    Some((state, rest.next()?.parse().ok()?))
}

/// The running `sleep <secs>` processes (found by their command line: no other test's).
pub fn sleeps(secs: &str) -> Vec<i32> {
    let want = format!("sleep\0{secs}\0").into_bytes();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == want))
        .filter(|&pid| running(pid))
        .collect()
}

/// Whether process `pid` still runs (not gone, not a zombie).
pub fn running(pid: i32) -> bool {
    !matches!(state_and_parent(pid), Some(('Z' | 'X', _)) | None)
}

/// A run of `spec` (written as `sweeps/<name>.toml`) into `output/<name>`: its folder (the newest).
pub fn run_of(p: &Path, name: &str, spec: &str) -> PathBuf {
    crate::hardening::write(p, &format!("sweeps/{name}.toml"), spec);
    let out = sweep(p)
        .args([
            "run",
            &format!("sweeps/{name}.toml"),
            "-q",
            "--no-analyze",
            "--force",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let mut runs = run_dirs(&p.join("output").join(name));
    runs.sort();
    runs.pop().unwrap()
}

/// `f(header, cells)` applied to every row of a CSV (CRLF kept as sweep writes it).
pub fn edit_rows(csv: &Path, f: impl Fn(&[&str], &mut Vec<String>)) {
    let text = std::fs::read_to_string(csv).unwrap();
    let mut lines = text.split("\r\n").filter(|l| !l.is_empty());
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let mut out = vec![header.join(",")];
    for l in lines {
        let mut cells: Vec<String> = l.split(',').map(str::to_string).collect();
        f(&header, &mut cells);
        out.push(cells.join(","));
    }
    std::fs::write(csv, out.join("\r\n") + "\r\n").unwrap();
}

pub fn col(header: &[&str], name: &str) -> usize {
    header.iter().position(|h| *h == name).unwrap()
}

/// The exit code, stderr and stdout of `sweep` with `args` in `p`.
pub fn code_and_err(p: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = sweep(p).args(args).output().unwrap();
    (out.status.code(), stderr(&out), stdout(&out))
}
