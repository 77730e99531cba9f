//! The hidden folders a run (`.new-<owner>`) or a merge (`.merge-<owner>`) is made in beside the
//! runs before it gets its name: a sweep killed in that moment leaves one behind. They are never
//! runs (no reader lists or opens one), and the next run, resume or merge beside them removes
//! those whose sweep is dead. The owner is the sweep's pid, a random part and its host
//! ([`crate::owner`]): two sweeps of one pid (containers) never share one.

use std::path::Path;
use std::time::Duration;

/// The prefixes of the hidden folders, each followed by the sweep that made it.
const PREFIXES: [&str; 2] = [".new-", ".merge-"];

/// How old a hidden folder of a dead pid must be before it is removed. A folder shared by
/// several hosts (the shards of a Slurm array) holds the hidden folders of sweeps on other
/// hosts, whose pids mean nothing here; such a folder lives milliseconds (a run's) or as long as
/// a merge writes, never this long without a change.
pub const STALE_AFTER: Duration = Duration::from_secs(60);

/// The owner in the name of a hidden folder (`.new-<pid>-<nonce>-<host>`, or an older sweep's
/// `.new-1234`), or None for any other name.
pub fn owner_of(name: &str) -> Option<&str> {
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    PREFIXES.iter().find_map(|p| {
        let owner = name.strip_prefix(p)?;
        let mut parts = owner.splitn(3, '-');
        let pid = parts
            .next()
            .filter(|p| digits(p) && p.parse::<i32>().is_ok());
        let valid = match (pid, parts.next(), parts.next()) {
            (Some(_), None, None) => true,
            (Some(_), Some(nonce), Some(host)) => {
                nonce.len() == 16
                    && nonce.bytes().all(|b| b.is_ascii_hexdigit())
                    && !host.is_empty()
            }
            _ => false,
        };
        valid.then_some(owner)
    })
}

/// The hidden folder a run (`.new-`) or a merge (`.merge-`) of this process is made in.
pub fn name(prefix: &str) -> String {
    format!("{prefix}{}", crate::owner::owner())
}

/// Whether `path` is a hidden folder of a run or merge being made, or a file in one.
pub fn is_staging(path: &Path) -> bool {
    let staging = |p: &Path| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| owner_of(n).is_some())
    };
    staging(path) || (path.is_file() && path.parent().is_some_and(staging))
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
    for e in entries.filter_map(Result::ok) {
        let file_name = e.file_name();
        let Some(owner) = file_name.to_str().and_then(owner_of) else {
            continue;
        };
        // Only a name no one but a sweep makes (its pid, random part and host): the folder
        // beside a run or `--out` may be the user's, and a `.new-99999` there theirs (review 16a
        // A6: resume and `merge --out` removed it). An older sweep's `.new-<pid>` stays.
        if crate::owner::pid_and_host(owner).1.is_none() {
            continue;
        }
        // A link of that name is no folder of ours: left alone, never followed.
        let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        let old = meta
            .modified()
            .ok()
            .and_then(|m| m.elapsed().ok())
            .is_some_and(|age| age >= STALE_AFTER);
        // Another host's pid tells nothing here: its folder goes once old.
        let pid = crate::owner::pid_and_host(owner).0.unwrap_or(0);
        let gone = !crate::owner::of_this_host(owner) || !alive(pid);
        if meta.is_dir() && owner != crate::owner::owner() && old && gone {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_hidden_names_with_a_pid_are_staging() {
        for (name, owner) in [
            (".new-1234", Some("1234")),
            (".merge-7", Some("7")),
            (
                ".new-7-0123456789abcdef-gpu-node-01",
                Some("7-0123456789abcdef-gpu-node-01"),
            ),
            (".new-", None),
            (".new-12a", None),
            ("new-12", None),
            (".merge-99999999999", None),
            (".merge-7-x", None),
            (".new-7-0123456789abcdef-", None),
            ("20261127T034737Z", None),
        ] {
            assert_eq!(owner_of(name), owner, "{name}");
        }
        assert_eq!(owner_of(&name(".new-")), Some(crate::owner::owner()));
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
        let me = crate::owner::owner();
        let twin = format!(
            "{}-{:016x}-{}",
            std::process::id(),
            1,
            crate::owner::host_name()
        );
        let gone = [
            make(
                &format!(".merge-{dead}-{:016x}-{}", 5, crate::owner::host_name()),
                Some(old),
            ),
            make(
                &format!(".new-{dead}-{:016x}-{}", 2, crate::owner::host_name()),
                Some(old),
            ),
            // Another host's, whose pid means nothing here: once old.
            make(
                &format!(".new-{}-{:016x}-elsewhere", std::process::id(), 3),
                Some(old),
            ),
        ];
        let kept = [
            make(&format!(".new-{me}"), Some(old)),
            // A sweep of this pid in another pid namespace, alive.
            make(&format!(".new-{twin}"), Some(old)),
            make(&format!(".new-{}-{:016x}-elsewhere", dead, 4), None),
            make(".new-1", Some(old)),
            // An older sweep's name, or a user's folder of that name: left alone.
            make(&format!(".new-{dead}"), Some(old)),
            make(&format!(".merge-{dead}"), Some(old)),
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
