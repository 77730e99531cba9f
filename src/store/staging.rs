//! The hidden folders a run (`.new-<pid>`) or a merge (`.merge-<pid>`) is made in beside the
//! runs before it gets its name: a sweep killed in that moment leaves one behind. They are never
//! runs (no reader lists or opens one), and the next run, resume or merge beside them removes
//! those whose sweep is dead.

use std::path::Path;
use std::time::Duration;

/// The prefixes of the hidden folders, each followed by the pid of the sweep that made it.
const PREFIXES: [&str; 2] = [".new-", ".merge-"];

/// How old a hidden folder of a dead pid must be before it is removed. A folder shared by
/// several hosts (the shards of a Slurm array) holds the hidden folders of sweeps on other
/// hosts, whose pids mean nothing here; such a folder lives milliseconds (a run's) or as long as
/// a merge writes, never this long without a change.
pub const STALE_AFTER: Duration = Duration::from_secs(60);

/// The pid in the name of a hidden folder (`.new-1234`), or None for any other name.
pub fn pid_of(name: &str) -> Option<i32> {
    PREFIXES.iter().find_map(|p| {
        let digits = name.strip_prefix(p)?;
        let valid = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
        valid.then(|| digits.parse::<i32>().ok()).flatten()
    })
}

/// Whether `path` is a hidden folder of a run or merge being made, or a file in one.
pub fn is_staging(path: &Path) -> bool {
    let name_of = |p: &Path| p.file_name().and_then(|n| n.to_str()).and_then(pid_of);
    name_of(path).is_some() || (path.is_file() && path.parent().and_then(name_of).is_some())
}

/// Whether process `pid` is alive on this host (a process of another user counts: EPERM).
fn alive(pid: i32) -> bool {
    if pid <= 0 {
        return true;
    }
    // SAFETY: signal 0 only checks that the process exists.
    let found = unsafe { libc::kill(pid, 0) } == 0;
    found || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Removes the hidden folders in `dir` that sweeps now dead left there ([`STALE_AFTER`] old at
/// least), and only those: this sweep's own, a live sweep's and any other name stay. Best
/// effort: one that cannot be removed stays, as before.
pub fn remove_dead(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let ours = std::process::id() as i32;
    for e in entries.filter_map(Result::ok) {
        let Some(pid) = e.file_name().to_str().and_then(pid_of) else {
            continue;
        };
        // A link of that name is no folder of ours: left alone, never followed.
        let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        let old = meta
            .modified()
            .ok()
            .and_then(|m| m.elapsed().ok())
            .is_some_and(|age| age >= STALE_AFTER);
        if meta.is_dir() && pid != ours && old && !alive(pid) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_hidden_names_with_a_pid_are_staging() {
        for (name, pid) in [
            (".new-1234", Some(1234)),
            (".merge-7", Some(7)),
            (".new-", None),
            (".new-12a", None),
            ("new-12", None),
            (".merge-99999999999", None),
            ("20261127T034737Z", None),
        ] {
            assert_eq!(pid_of(name), pid, "{name}");
        }
    }

    #[test]
    fn a_dead_sweeps_old_folder_goes_and_the_rest_stays() {
        let tmp = tempfile::tempdir().unwrap();
        // A pid that is dead: a child that ended and was reaped.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id() as i32;
        child.wait().unwrap();
        let old = std::time::SystemTime::now() - STALE_AFTER * 2;
        let make = |name: &str, age: Option<std::time::SystemTime>| {
            let d = tmp.path().join(name);
            std::fs::create_dir(&d).unwrap();
            std::fs::write(d.join("manifest.json"), "{}").unwrap();
            if let Some(t) = age {
                std::fs::File::open(&d).unwrap().set_modified(t).unwrap();
            }
            d
        };
        let gone = [
            make(&format!(".new-{dead}"), Some(old)),
            make(&format!(".merge-{dead}"), Some(old)),
        ];
        let kept = [
            make(&format!(".new-{}", std::process::id()), Some(old)),
            make(".new-1", Some(old)),
            make(&format!(".merge-{dead}-x"), Some(old)),
            make(&format!("run-{dead}"), Some(old)),
            make(&format!(".new-{}", dead + 100_000_000), None),
        ];
        remove_dead(tmp.path());
        for d in gone {
            assert!(!d.exists(), "{}", d.display());
        }
        for d in kept {
            assert!(d.exists(), "{}", d.display());
        }
    }
}
