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
            .input_files()
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::NotFound, e.to_string()))?;
        for file in files {
            let rel = file
                .strip_prefix(bench.dir.parent().unwrap_or(&bench.dir))
                .unwrap_or(&file);
            field("file", rel.to_string_lossy().as_bytes());
            field("content", &std::fs::read(&file)?);
        }
        Ok(crate::spec::hex(&h.finalize()[..16]))
    }

    pub fn entry(&self, key: &str) -> PathBuf {
        self.dir.join(key)
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
            let bytes = walkdir::WalkDir::new(e.path())
                .into_iter()
                .filter_map(Result::ok)
                .filter_map(|f| f.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum::<u64>();
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
            let pid = rest.rsplit('-').nth(1).and_then(|p| p.parse::<i32>().ok());
            // SAFETY: kill with signal 0 only asks whether the process exists.
            let alive = pid.is_some_and(|p| p > 0 && unsafe { libc::kill(p, 0) } == 0);
            if !alive {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }

    pub fn clean(&self) -> std::io::Result<Stats> {
        let s = self.stats();
        let Ok(read) = std::fs::read_dir(&self.dir) else {
            return Ok(s);
        };
        for e in read.filter_map(Result::ok) {
            let name = e.file_name().to_string_lossy().into_owned();
            if is_key(&name) || is_scratch(&name) {
                std::fs::remove_dir_all(e.path())?;
            }
        }
        // The folder goes too when nothing else is in it.
        let _ = std::fs::remove_dir(&self.dir);
        Ok(s)
    }
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
