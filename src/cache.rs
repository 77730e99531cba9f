//! The build cache: binaries addressed by everything that makes them (rendered headers, the bench's
//! sources and `cuda/common/`, compiler, its version, target arch and flags). A point built in any
//! earlier run is not rebuilt, and identical renders across points share one binary.

use crate::compile::Toolchain;
use crate::render::{Bench, Rendered};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

pub const BINARY: &str = "bench";
pub const LOG: &str = "build.log";

#[derive(Clone, Debug)]
pub struct Cache {
    pub dir: PathBuf,
}

/// Where a build goes before [`Cache::commit`] publishes it: `<SCRATCH><key>-<pid>-<n>`.
const SCRATCH: &str = ".tmp-";

/// The cache's lock file (flock): a sweep holds it shared while it marks an entry in use and
/// looks it up, `clean` exclusively while it reads what is in use and removes the rest.
const LOCK: &str = ".sweep.lock";

/// `<IN_USE><pid>-<n>`: the keys a running sweep uses, one a line; `clean` keeps their entries
/// while that process lives.
const IN_USE: &str = ".in-use-";

/// The process a `.tmp-<key>-<pid>-<n>` or `.in-use-<pid>-<n>` name belongs to.
fn pid_of(rest: &str) -> Option<i32> {
    rest.rsplit('-').nth(1).and_then(|p| p.parse::<i32>().ok())
}

/// Whether process `pid` exists (one of another user's counts).
fn alive(pid: Option<i32>) -> bool {
    // SAFETY: kill with signal 0 only asks whether the process exists.
    pid.is_some_and(|p| {
        p > 0
            && (unsafe { libc::kill(p, 0) } == 0
                || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
    })
}

/// What a running sweep holds of the cache: the entries it looked up or built, listed in its
/// `.in-use-<pid>-<n>` file (removed when this is dropped), so that a `sweep cache clean` beside
/// it removes none of them (its points would turn into failed builds or runs).
pub struct Holder {
    path: PathBuf,
    /// The list's file (None: it could not be made, and nothing is protected) and its keys.
    list: std::sync::Mutex<(Option<std::fs::File>, std::collections::HashSet<String>)>,
}

impl Holder {
    fn add(&self, key: &str) {
        use std::io::Write;
        if let Ok(mut l) = self.list.lock() {
            let (file, keys) = &mut *l;
            if let (Some(f), true) = (file.as_mut(), keys.insert(key.to_string())) {
                let _ = f.write_all(format!("{key}\n").as_bytes());
            }
        }
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Whether `name` is a cache entry's (a key: 32 hex digits) or an unfinished build's
/// (`.tmp-<key>-<pid>-<n>`): stats count and clean removes these only, so `--cache` pointed at
/// a folder of other files (`--cache .`, `SWEEP_CACHE=$HOME`) loses none of them.
fn is_key(name: &str) -> bool {
    name.len() == 32 && name.bytes().all(|b| b.is_ascii_hexdigit())
}

fn is_scratch(name: &str) -> bool {
    name.strip_prefix(SCRATCH)
        .and_then(|rest| rest.get(..32).filter(|k| is_key(k)).map(|_| &rest[32..]))
        .is_some_and(|rest| rest.starts_with('-'))
}

#[derive(Debug, Default, PartialEq)]
pub struct Stats {
    pub entries: usize,
    pub bytes: u64,
    /// Unfinished builds (`.tmp-*` folders) of sweeps that were killed mid-build, and their bytes
    /// (counted apart from `entries`; `clean` removes them too).
    pub partial: usize,
    pub partial_bytes: u64,
    /// `clean`: entries and builds of running sweeps, kept.
    pub in_use: usize,
}

impl Cache {
    pub fn new(dir: impl Into<PathBuf>) -> Cache {
        Cache { dir: dir.into() }
    }

    /// The key of one build. The bench's input files are hashed by content, not by name alone.
    pub fn key(
        tc: &Toolchain,
        bench: &Bench,
        rendered: &[Rendered],
        flags: &[String],
    ) -> std::io::Result<String> {
        let mut h = Sha256::new();
        let mut field = |tag: &str, bytes: &[u8]| {
            h.update(tag.as_bytes());
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        };
        field("compiler", tc.compiler.as_bytes());
        field("version", tc.version.as_bytes());
        field("arch", tc.arch.as_deref().unwrap_or("").as_bytes());
        for f in flags {
            field("flag", f.as_bytes());
        }
        for r in rendered {
            field("header", r.file.as_bytes());
            field("text", r.text.as_bytes());
        }
        let files = bench
            .named_inputs()
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::NotFound, e.to_string()))?;
        for (rel, file) in files {
            field("file", rel.as_bytes());
            field("content", &std::fs::read(&file)?);
        }
        Ok(crate::spec::hex(&h.finalize()[..16]))
    }

    pub fn entry(&self, key: &str) -> PathBuf {
        self.dir.join(key)
    }

    /// The cache's lock, taken (`how`: `LOCK_SH` or `LOCK_EX`) until the file is dropped; None
    /// where the folder cannot hold it.
    fn locked(&self, how: libc::c_int) -> Option<std::fs::File> {
        use std::os::fd::AsRawFd;
        std::fs::create_dir_all(&self.dir).ok()?;
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join(LOCK))
            .ok()?;
        // SAFETY: flock on a descriptor we own; released when it closes.
        (unsafe { libc::flock(f.as_raw_fd(), how) } == 0).then_some(f)
    }

    /// What this process will hold of the cache (see [`Holder`]).
    pub fn holder(&self) -> Holder {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = self.dir.join(format!("{IN_USE}{}-{n}", std::process::id()));
        // A `clean` removes the folder when it holds nothing else: made again until the list is
        // in it (the list keeps the folder from then on).
        let file = (0..20).find_map(|_| {
            std::fs::create_dir_all(&self.dir)
                .and_then(|()| std::fs::File::create(&path))
                .ok()
        });
        Holder {
            path,
            list: std::sync::Mutex::new((file, Default::default())),
        }
    }

    /// The binary of `key` when it was built before, its entry held by `holder` from now on:
    /// marked in use under the shared lock, so that a `clean` either saw the mark or was over
    /// before the lookup.
    pub fn use_entry(&self, holder: &Holder, key: &str) -> Option<PathBuf> {
        let _shared = self.locked(libc::LOCK_SH);
        holder.add(key);
        self.lookup(key)
    }

    /// The keys running sweeps hold; the lists of sweeps that are gone are removed.
    fn held_keys(&self) -> std::collections::HashSet<String> {
        let mut keys = std::collections::HashSet::new();
        let Ok(read) = std::fs::read_dir(&self.dir) else {
            return keys;
        };
        for e in read.filter_map(Result::ok) {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(rest) = name.strip_prefix(IN_USE) else {
                continue;
            };
            if !alive(pid_of(rest)) {
                let _ = std::fs::remove_file(e.path());
                continue;
            }
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            keys.extend(text.lines().map(str::to_string));
        }
        keys
    }

    /// The binary of `key` when it was built before.
    pub fn lookup(&self, key: &str) -> Option<PathBuf> {
        let bin = self.entry(key).join(BINARY);
        bin.is_file().then_some(bin)
    }

    /// A fresh private folder to build into; [`Cache::commit`] moves it into place.
    pub fn scratch(&self, key: &str) -> std::io::Result<PathBuf> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = self
            .dir
            .join(format!("{SCRATCH}{key}-{}-{n}", std::process::id()));
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        std::fs::create_dir_all(&dir)?;
        Ok(dir)
    }

    /// Publishes a finished build atomically. When another build of the same key won the race,
    /// that one stays and this one is dropped; either way the returned binary is complete.
    pub fn commit(&self, key: &str, scratch: &Path) -> std::io::Result<PathBuf> {
        let entry = self.entry(key);
        if std::fs::rename(scratch, &entry).is_err() {
            let _ = std::fs::remove_dir_all(scratch);
        }
        self.lookup(key).ok_or_else(|| {
            std::io::Error::other(format!("cache entry `{}` has no binary", entry.display()))
        })
    }

    pub fn stats(&self) -> Stats {
        let mut s = Stats::default();
        let Ok(read) = std::fs::read_dir(&self.dir) else {
            return s;
        };
        for e in read.filter_map(Result::ok) {
            let name = e.file_name().to_string_lossy().into_owned();
            if !is_key(&name) && !is_scratch(&name) {
                continue;
            }
            let bytes = size(&e.path());
            if is_scratch(&name) {
                s.partial += 1;
                s.partial_bytes += bytes;
            } else if is_key(&name) {
                s.entries += 1;
                s.bytes += bytes;
            }
        }
        s
    }

    /// Removes the unfinished builds (`.tmp-<key>-<pid>-<n>`) of processes that are gone: a sweep
    /// killed mid-build leaves them behind. Those of running sweeps stay.
    pub fn remove_stale_scratch(&self) {
        let Ok(read) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for e in read.filter_map(Result::ok) {
            let name = e.file_name().to_string_lossy().into_owned();
            if !is_scratch(&name) {
                continue;
            }
            let Some(rest) = name.strip_prefix(SCRATCH) else {
                continue;
            };
            if !alive(pid_of(rest)) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }

    /// Removes every build but those running sweeps hold (their entries, and the builds they
    /// are making); says what it removed, and how many it kept in use.
    pub fn clean(&self) -> std::io::Result<Stats> {
        if !self.dir.is_dir() {
            return Ok(Stats::default());
        }
        let _exclusive = self.locked(libc::LOCK_EX);
        let held = self.held_keys();
        let mut removed = Stats::default();
        for e in std::fs::read_dir(&self.dir)?.filter_map(Result::ok) {
            let name = e.file_name().to_string_lossy().into_owned();
            let in_use = if is_key(&name) {
                held.contains(&name)
            } else if is_scratch(&name) {
                alive(name.strip_prefix(SCRATCH).and_then(pid_of))
            } else {
                continue;
            };
            if in_use {
                removed.in_use += 1;
                continue;
            }
            let bytes = size(&e.path());
            if is_key(&name) {
                removed.entries += 1;
                removed.bytes += bytes;
            } else {
                removed.partial += 1;
                removed.partial_bytes += bytes;
            }
            std::fs::remove_dir_all(e.path())?;
        }
        // The folder goes too when nothing else is in it (but the lock this made).
        let rest: Vec<_> = std::fs::read_dir(&self.dir)?
            .filter_map(Result::ok)
            .map(|e| e.file_name())
            .collect();
        if rest.len() == 1 && rest[0] == LOCK {
            let _ = std::fs::remove_file(self.dir.join(LOCK));
            let _ = std::fs::remove_dir(&self.dir);
        }
        Ok(removed)
    }
}

/// The bytes of the files under `dir`.
fn size(dir: &Path) -> u64 {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter_map(|f| f.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unfinished_builds_are_counted_apart_and_those_of_dead_sweeps_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache::new(tmp.path());
        let (k1, k2, k3) = ("1".repeat(32), "2".repeat(32), "3".repeat(32));
        let done = cache.entry(&k1);
        std::fs::create_dir_all(&done).unwrap();
        std::fs::write(done.join(BINARY), b"12345").unwrap();
        // One of a process that cannot exist (pid 2^30), one of this very process.
        let dead = tmp.path().join(format!(".tmp-{k2}-1073741824-0"));
        let ours = tmp
            .path()
            .join(format!(".tmp-{k3}-{}-0", std::process::id()));
        for d in [&dead, &ours] {
            std::fs::create_dir_all(d).unwrap();
            std::fs::write(d.join("half.o"), b"123").unwrap();
        }
        let s = cache.stats();
        assert_eq!(
            (s.entries, s.bytes, s.partial, s.partial_bytes),
            (1, 5, 2, 6)
        );
        cache.remove_stale_scratch();
        assert!(!dead.exists(), "a dead sweep's scratch goes");
        assert!(ours.exists(), "a running sweep's scratch stays");
        assert!(done.exists());
    }

    #[test]
    fn clean_keeps_what_a_running_sweep_holds_and_drops_the_lists_of_dead_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache::new(tmp.path().join("cache"));
        let (held, free) = ("1".repeat(32), "2".repeat(32));
        for k in [&held, &free] {
            std::fs::create_dir_all(cache.entry(k)).unwrap();
            std::fs::write(cache.entry(k).join(BINARY), b"12345").unwrap();
        }
        let holder = cache.holder();
        assert!(cache.use_entry(&holder, &held).is_some());
        // The list of a sweep that is gone (pid 2^30 cannot exist) protects nothing.
        let dead = cache.dir.join(format!("{IN_USE}1073741824-0"));
        std::fs::write(&dead, format!("{free}\n")).unwrap();
        let s = cache.clean().unwrap();
        assert_eq!((s.entries, s.in_use), (1, 1));
        assert!(cache.lookup(&held).is_some() && cache.lookup(&free).is_none());
        assert!(!dead.exists());
        drop(holder);
        assert_eq!(cache.clean().unwrap().entries, 1, "its sweep ended");
        assert!(!cache.dir.exists());
    }

    #[test]
    fn clean_removes_builds_and_nothing_else_of_the_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache::new(tmp.path());
        let key = "0123456789abcdef0123456789abcdef";
        let entry = cache.entry(key);
        std::fs::create_dir_all(&entry).unwrap();
        std::fs::write(entry.join(BINARY), b"12345").unwrap();
        let scratch = tmp.path().join(format!(".tmp-{key}-1073741824-0"));
        std::fs::create_dir_all(&scratch).unwrap();
        // What `--cache ~` would find: none of it is the cache's.
        for d in ["notes", ".tmp-notes-1-0", "0123"] {
            std::fs::create_dir_all(tmp.path().join(d)).unwrap();
            std::fs::write(tmp.path().join(d).join("precious.txt"), b"keep").unwrap();
        }
        std::fs::write(tmp.path().join("thesis.tex"), b"keep").unwrap();
        let s = cache.stats();
        assert_eq!((s.entries, s.bytes, s.partial), (1, 5, 1));
        cache.remove_stale_scratch();
        assert!(tmp.path().join(".tmp-notes-1-0/precious.txt").exists());
        assert_eq!(cache.clean().unwrap().entries, 1);
        assert!(!entry.exists() && !scratch.exists());
        for f in [
            "notes/precious.txt",
            ".tmp-notes-1-0/precious.txt",
            "0123/precious.txt",
            "thesis.tex",
        ] {
            assert!(tmp.path().join(f).exists(), "{f} is kept");
        }
        let only_builds = tmp.path().join("cache");
        let cache = Cache::new(&only_builds);
        std::fs::create_dir_all(cache.entry(key)).unwrap();
        cache.clean().unwrap();
        assert!(
            !only_builds.exists(),
            "a folder of builds only goes with them"
        );
    }
}
