//! The build cache: binaries addressed by everything that makes them (rendered headers, the bench's
//! sources and `cuda/common/`, compiler, where its program is, its version, target arch and flags,
//! where the bench is and where the build ran from). A point built in any earlier run is not
//! rebuilt, and identical renders across points share one binary.
//!
//! What a build reads from elsewhere (a header found through `-I/elsewhere` or included as
//! `"../shared/x.h"`, the toolkit's headers) is known only once it has built: the compiler writes
//! the list (`-MD -MF`), and the entry keeps each file of it with the hash of its content
//! ([`DEPS`]). An entry whose listed file changed or is gone is stale: the point is built again
//! and the new build replaces it.

use crate::compile::Toolchain;
use crate::render::{Bench, Rendered};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::SystemTime;

pub const BINARY: &str = "bench";
pub const LOG: &str = "build.log";
/// An entry's list of the files its build read beside the rendered headers, `<hash>  <path>` a
/// line (the hash of the content when it built): a lookup checks them. Also what marks a folder
/// as an entry of this cache.
pub const DEPS: &str = "deps.txt";
/// Where the compiler writes its dependency list (make's format) in the build's folder.
pub const MAKE_DEPS: &str = "deps.d";
/// The line of [`DEPS`] that holds the hash of the binary the build made (a comment to the
/// readers of the list): a lookup checks that the entry's binary is still that one.
const BINARY_LINE: &str = "# binary ";
/// The hash of a file that cannot be vouched for (it changed while the build read it, or the
/// compiler wrote no list): never matches, so the entry is stale.
const UNKNOWN: &str = "unknown";
/// The names an entry's folder holds: `clean` removes a folder of 32 hex digits only when it holds
/// nothing else (a `--cache` pointed at a user's folder loses none of the user's).
const ENTRY_FILES: [&str; 3] = [BINARY, LOG, DEPS];

#[derive(Clone, Debug)]
pub struct Cache {
    pub dir: PathBuf,
    /// The content hash of each file a lookup checked, by path, with the file's size, time and
    /// inode when hashed: every point of a sweep checks the same toolkit headers, hashed once.
    hashes: std::sync::Arc<std::sync::Mutex<HashMap<PathBuf, (Stamp, String)>>>,
    /// The folder was looked at for its [`MARKER`] (once per process: a folder of other files
    /// would otherwise be listed before every lookup).
    looked_at: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// What tells a file that changed from one that did not without reading it: its size, its
/// modification time (to the nanosecond), its inode and device.
type Stamp = (u64, i64, i64, u64, u64);

fn stamp(m: &std::fs::Metadata) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    (m.len(), m.mtime(), m.mtime_nsec(), m.ino(), m.dev())
}

/// The environment variables that change what gcc, clang or nvcc read or do (an include folder,
/// flags added to every nvcc command, the host compiler): part of the key, so that a build made
/// under other values is not taken for this one.
const COMPILER_ENV: [&str; 9] = [
    "CPATH",
    "C_INCLUDE_PATH",
    "CPLUS_INCLUDE_PATH",
    "LIBRARY_PATH",
    "GCC_EXEC_PREFIX",
    "COMPILER_PATH",
    "NVCC_PREPEND_FLAGS",
    "NVCC_APPEND_FLAGS",
    "NVCC_CCBIN",
];

/// Where a build goes before [`Cache::commit`] publishes it: `<SCRATCH><key>-<pid>-<n>`.
const SCRATCH: &str = ".tmp-";

/// The cache's lock file (flock): a sweep holds it shared while it marks an entry in use and
/// looks it up, `clean` exclusively while it reads what is in use and removes the rest.
const LOCK: &str = ".sweep.lock";

/// `<IN_USE><pid>-<n>`: the keys a running sweep uses, one a line; `clean` keeps their entries
/// while that process lives.
const IN_USE: &str = ".in-use-";

/// The cache's own marker, made with the folder: a Cache Directory Tag (backup tools skip the
/// folder), whose comment line says it is sweep's. `clean` empties only a folder that carries it
/// (or an older sweep's cache: builds and nothing else), never `SWEEP_CACHE=$HOME` or `/`.
pub const MARKER: &str = "CACHEDIR.TAG";
const MARKER_TEXT: &str = "Signature: 8a477f597d28d172789f06886806bc55\n\
# This folder is sweep's build cache (`sweep cache clean` empties it).\n\
# For information about cache directory tags, see https://bford.info/cachedir/\n";
/// What in [`MARKER`] says the tag is sweep's (cargo's `target/` carries one too).
const MARKER_LINE: &str = "# This folder is sweep's build cache";

/// Why `sweep cache clean` removed nothing.
#[derive(Debug, thiserror::Error)]
pub enum CleanError {
    #[error("`{}` is not a sweep build cache: it has no `{MARKER}` of sweep's and holds {}, which no build made (hint: point --cache or SWEEP_CACHE at the build cache, by default `<output>/.cache`)", dir.display(), other.as_deref().map_or("nothing".to_string(), |o| format!("`{o}`")))]
    NotCache { dir: PathBuf, other: Option<String> },
    #[error("cannot clean the build cache `{}`: {source} (hint: check its permissions and that its disk is mounted)", dir.display())]
    Io {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

use crate::owner::{alive, owner, pid_and_host};

/// The owner part of a `.in-use-<owner>-<n>` name, or of what follows `.tmp-<key>-`: all but the
/// last `-<n>`. Older sweeps wrote the pid alone.
fn owner_of(rest: &str) -> Option<&str> {
    rest.rsplit_once('-')
        .filter(|(owner, n)| !owner.is_empty() && n.parse::<u64>().is_ok())
        .map(|(owner, _)| owner)
}

/// What the cache can tell of the sweep that owns a name.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Owner {
    /// It holds the lock on one of its lists, or (an older sweep's, or one that could make no
    /// list) its pid lives here.
    Running,
    /// Its list is there and no process of this kernel holds it: the sweep is gone.
    Gone,
    /// Nothing tells (a host whose locks this one cannot see, a file system without them): what
    /// changed within the hour is taken for under way.
    Unknown,
}

/// Whether the list at `path` is locked by its sweep: Some(true) held, Some(false) free, None
/// where the file system tells nothing (no lock could be tried).
fn list_held(path: &Path) -> Option<bool> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    // Opened for writing: NFS emulates flock with locks that need it. A FIFO at the name is no
    // list, never waited on (review 16a A1).
    let f = std::fs::OpenOptions::new()
        .append(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .ok()
        .filter(|f| f.metadata().is_ok_and(|m| m.is_file()))?;
    // SAFETY: flock on a descriptor we own; what it takes goes when `f` closes.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Some(false);
    }
    (std::io::Error::last_os_error().raw_os_error() == Some(libc::EWOULDBLOCK)).then_some(true)
}

/// How sure a name's recent change must be for an [`Owner::Unknown`] to count as under way.
const RECENT: std::time::Duration = std::time::Duration::from_secs(3600);

/// Whether `path` changed within [`RECENT`]. A time in the future (another host's clock, on a
/// shared file system) is recent too (review 15 F3: it read as old, and the build in progress
/// was removed).
fn recent(path: &Path) -> bool {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .is_ok_and(|t| t.elapsed().map_or(true, |age| age < RECENT))
}

/// What a running sweep holds of the cache: the entries it looked up or built, listed in its
/// `.in-use-<pid>-<n>` file (removed when this is dropped), so that a `sweep cache clean` beside
/// it removes none of them (its points would turn into failed builds or runs).
pub struct Holder {
    path: PathBuf,
    /// The list's file, locked while this lives (None: it could not be made, and nothing is
    /// protected), its keys, and when it was last changed.
    list: std::sync::Mutex<HolderList>,
}

type HolderList = (
    Option<std::fs::File>,
    std::collections::HashSet<String>,
    std::time::Instant,
);

impl Holder {
    /// Lists `key`; the list's time is kept recent while the sweep uses it, for the hosts that
    /// cannot see its lock ([`Owner::Unknown`]).
    fn add(&self, key: &str) {
        use std::io::Write;
        if let Ok(mut l) = self.list.lock() {
            let (file, keys, touched) = &mut *l;
            let Some(f) = file.as_mut() else {
                return;
            };
            if keys.insert(key.to_string()) {
                let _ = f.write_all(format!("{key}\n").as_bytes());
            } else if touched.elapsed() > RECENT / 12 {
                let _ = f.set_modified(SystemTime::now());
            } else {
                return;
            }
            *touched = std::time::Instant::now();
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

/// Whether the folder at `path`, named `name`, is an entry: a key, holding no file but an
/// entry's ([`ENTRY_FILES`]), or sweep's list of what its build read ([`DEPS`], with the
/// binary's line) beside what else the build wrote there (`-gsplit-dwarf`'s `.dwo`,
/// `-fstack-usage`'s `.su`: such entries were used by runs and unseen by stats and `clean`,
/// review 15 F5).
fn is_entry(name: &str, path: &Path) -> bool {
    is_key(name)
        && (std::fs::read_dir(path).is_ok_and(|read| {
            read.filter_map(Result::ok)
                .all(|e| ENTRY_FILES.iter().any(|f| e.file_name() == *f))
        }) || std::fs::symlink_metadata(path.join(DEPS)).is_ok_and(|m| m.is_file())
            && crate::parse::read_part(&path.join(DEPS), 1 << 12, true)
                .is_some_and(|(text, _)| text.lines().any(|l| l.starts_with(BINARY_LINE))))
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
    /// `stats`: unfinished builds that running sweeps are making (review 19b F6: they were
    /// counted as killed sweeps').
    pub building: usize,
}

impl Cache {
    pub fn new(dir: impl Into<PathBuf>) -> Cache {
        Cache {
            dir: dir.into(),
            hashes: Default::default(),
            looked_at: Default::default(),
        }
    }

    /// The key of one build. The bench's input files are hashed by content, not by name alone.
    /// Where the bench is and where the build runs from are part of it: what an include or a
    /// relative `-I` finds depends on them, so two checkouts sharing one cache (`SWEEP_CACHE`)
    /// never take each other's binaries.
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
        if let Some(program) = tc.program() {
            field("program", program.as_os_str().as_encoded_bytes());
        }
        field("arch", tc.arch.as_deref().unwrap_or("").as_bytes());
        let place = |p: &Path| {
            p.canonicalize()
                .unwrap_or_else(|_| p.to_path_buf())
                .into_os_string()
        };
        field("bench_dir", place(&bench.dir).as_encoded_bytes());
        let cwd = std::env::current_dir()
            .map(|d| place(&d))
            .unwrap_or_default();
        field("cwd", cwd.as_encoded_bytes());
        for var in COMPILER_ENV {
            if let Some(v) = std::env::var_os(var) {
                field(var, v.as_encoded_bytes());
            }
        }
        for f in flags {
            field("flag", f.as_bytes());
        }
        for r in rendered {
            field("header", r.file.as_bytes());
            field("text", r.text.as_bytes());
        }
        // Out of descriptors or memory, the error itself: its OS code stops the run (a resume
        // measures the point), where a message alone recorded it `build_failed` for good.
        let scarce = |e: &std::io::Error| {
            matches!(
                e.raw_os_error(),
                Some(libc::EMFILE | libc::ENFILE | libc::ENOMEM)
            )
        };
        let files = bench.named_inputs().map_err(|e| match e {
            crate::render::RenderError::Io { source, .. }
            | crate::render::RenderError::BadLink {
                cause: crate::render::LinkError::Io(source),
                ..
            } if scarce(&source) => source,
            e => std::io::Error::new(std::io::ErrorKind::NotFound, e.to_string()),
        })?;
        for (rel, file) in files {
            field("file", rel.as_bytes());
            // The file named: "permission denied" alone left the user to guess which of the
            // bench's files it was.
            let content = std::fs::read(&file).map_err(|e| match scarce(&e) {
                true => e,
                false => std::io::Error::new(e.kind(), format!("`{}`: {e}", file.display())),
            })?;
            field("content", &content);
        }
        Ok(crate::spec::hex(&h.finalize()[..16]))
    }

    /// Makes the cache's folder, marked as the cache's ([`MARKER`]) when it holds nothing but a
    /// cache's files (a folder sweep made now, or an older sweep's cache): a folder of other
    /// files given as the cache (`SWEEP_CACHE=$HOME`) is used but never marked, so `clean`
    /// refuses it.
    fn make_dir(&self) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        if self.looked_at.swap(true, Ordering::Relaxed) {
            return Ok(());
        }
        if !self.is_marked() && self.first_stranger().is_ok_and(|s| s.is_none()) {
            crate::store::write_atomic(&self.dir.join(MARKER), MARKER_TEXT.as_bytes())?;
        }
        Ok(())
    }

    /// Whether the folder carries sweep's [`MARKER`].
    pub fn is_marked(&self) -> bool {
        crate::store::read_regular(&self.dir.join(MARKER)).is_ok_and(|t| t.contains(MARKER_LINE))
    }

    /// The first name in the folder that no build of sweep's made (None: only a cache's files).
    fn first_stranger(&self) -> std::io::Result<Option<String>> {
        let mut names: Vec<_> = std::fs::read_dir(&self.dir)?
            .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect::<std::io::Result<_>>()?;
        names.sort();
        Ok(names.into_iter().find(|name| {
            !(is_entry(name, &self.dir.join(name))
                || is_scratch(name)
                || name == LOCK
                || name.starts_with(IN_USE)
                || (name == MARKER && self.is_marked())
                // The marker being written (store::write_atomic's temporary file): a sweep
                // making the cache beside this `clean`.
                || (name.starts_with(&format!(".{MARKER}.")) && name.ends_with(".tmp")))
        }))
    }

    /// Whether `clean` may empty the folder: it carries the marker, or it holds builds and
    /// nothing else (an older sweep's cache, made before the marker).
    fn check_is_cache(&self) -> Result<(), CleanError> {
        if self.is_marked() {
            return Ok(());
        }
        let io = |source| CleanError::Io {
            dir: self.dir.clone(),
            source,
        };
        match self.first_stranger().map_err(io)? {
            None if std::fs::read_dir(&self.dir).map_err(io)?.next().is_some() => Ok(()),
            other => Err(CleanError::NotCache {
                dir: self.dir.clone(),
                other,
            }),
        }
    }

    pub fn entry(&self, key: &str) -> PathBuf {
        self.dir.join(key)
    }

    /// The cache's lock, taken exclusively as `clean` takes it, for probing the sweeps' lists
    /// ([`Cache::lists`]): a list is probed (flock) only where no sweep is between making its list
    /// and locking it (review 16a A4: the probe made that sweep's own lock fail, and it ran
    /// unprotected). Where no lock file is, no sweep made a list under it: none is taken (nor the
    /// file made in a folder of other files, `SWEEP_CACHE=$HOME`).
    fn lock_to_probe(&self) -> Option<std::fs::File> {
        self.dir
            .join(LOCK)
            .is_file()
            .then(|| self.locked(libc::LOCK_EX))
            .flatten()
    }

    /// The cache's lock, taken (`how`: `LOCK_SH` or `LOCK_EX`) until the file is dropped; None
    /// where the folder cannot hold it.
    fn locked(&self, how: libc::c_int) -> Option<std::fs::File> {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        self.make_dir().ok()?;
        // Not waiting on a FIFO planted at the name (review 16a A1).
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(self.dir.join(LOCK))
            .ok()
            .filter(|f| f.metadata().is_ok_and(|m| m.is_file()))?;
        // SAFETY: flock on a descriptor we own; released when it closes.
        (unsafe { libc::flock(f.as_raw_fd(), how) } == 0).then_some(f)
    }

    /// What this process will hold of the cache (see [`Holder`]).
    pub fn holder(&self) -> Holder {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = self.dir.join(format!("{IN_USE}{}-{n}", owner()));
        // A `clean` removes the folder when it holds nothing else: made again until the list is
        // in it (the list keeps the folder from then on). Locked as it is made, under the
        // cache's lock: a `clean` sees no list or a held one.
        let file = (0..20).find_map(|_| {
            use std::os::fd::AsRawFd;
            let _shared = self.locked(libc::LOCK_SH);
            let f = self
                .make_dir()
                .and_then(|()| std::fs::File::create(&path))
                .ok()?;
            // SAFETY: flock on a descriptor we own; released when the file closes with the holder.
            // Blocking: a probe of the list (under the cache's lock elsewhere) holds it a moment.
            unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) };
            Some(f)
        });
        // (Where the cache is no folder at all, the builds fail saying so: no warning first.)
        if file.is_none() && self.dir.is_dir() {
            // Nothing this run uses is kept from a `clean` beside it: said, not silent (review
            // 16a A5: its binaries were removed and its points failed as not found).
            eprintln!(
                "warning: cannot mark the builds this run uses in the cache `{}` (`{}` cannot be made): a `sweep cache clean` beside the run may remove them (hint: free space or inodes there, or point --cache at a folder this user may write)",
                self.dir.display(),
                path.file_name().unwrap_or_default().to_string_lossy()
            );
        }
        Holder {
            path,
            list: std::sync::Mutex::new((file, Default::default(), std::time::Instant::now())),
        }
    }

    /// The binary of `key` when it was built before, its entry held by `holder` from now on:
    /// marked in use under the shared lock, so that a `clean` either saw the mark or was over
    /// before the lookup.
    pub fn use_entry(&self, holder: &Holder, key: &str) -> Option<PathBuf> {
        let _shared = self.locked(libc::LOCK_SH);
        holder.add(key);
        self.lookup(key).filter(|_| self.fresh(key))
    }

    /// Whether every file the entry's build read beside the rendered headers is as it was then
    /// (an entry without the list, as older sweeps made them, cannot tell: it is built again).
    ///
    /// The binary must be the one the build made, and executable: one cut short or replaced by
    /// hand (it crashed, blamed on the program, `cached=1` run after run) or made not executable
    /// (`cannot start` for good) is built again, as a changed source is.
    fn fresh(&self, key: &str) -> bool {
        crate::store::read_regular(&self.entry(key).join(DEPS)).is_ok_and(|text| {
            self.first_changed(&text, false).is_none() && self.binary_as_built(key, &text)
        })
    }

    /// Whether entry `key`'s binary is executable and has the content its list ([`DEPS`]'s
    /// text `list`) recorded when it was built (a list without it cannot tell: built again).
    fn binary_as_built(&self, key: &str, list: &str) -> bool {
        use std::os::unix::fs::PermissionsExt;
        let bin = self.entry(key).join(BINARY);
        let executable = std::fs::metadata(&bin).is_ok_and(|m| m.permissions().mode() & 0o100 != 0);
        let recorded = list.lines().find_map(|l| l.strip_prefix(BINARY_LINE));
        executable && recorded.is_some_and(|h| self.content_hash(&bin).as_deref() == Some(h.trim()))
    }

    /// The first file of a list ([`DEPS`]'s format) whose content is not the one listed, or that
    /// is gone; a file listed as [`UNKNOWN`] counts as changed unless `skip_unknown`.
    pub fn first_changed(&self, list: &str, skip_unknown: bool) -> Option<String> {
        list.lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .find(|l| match l.split_once("  ") {
                Some((UNKNOWN, _)) => !skip_unknown,
                Some((hash, path)) => self.content_hash(Path::new(path)).as_deref() != Some(hash),
                None => true,
            })
            .map(|l| l.split_once("  ").map_or(l, |(_, path)| path).to_string())
    }

    /// The files entry `key`'s build read, by path, with their hashes (none listed as unknown).
    pub fn inputs(&self, key: &str) -> Vec<(String, String)> {
        read_list(&crate::store::read_regular(&self.entry(key).join(DEPS)).unwrap_or_default())
    }

    /// The hash of a regular file's content (through links), remembered while the file stays
    /// as it was; None where it is gone or no regular file.
    fn content_hash(&self, path: &Path) -> Option<String> {
        let meta = std::fs::metadata(path).ok().filter(|m| m.is_file())?;
        let now = stamp(&meta);
        if let Some((was, hash)) = self.hashes.lock().ok()?.get(path) {
            if *was == now {
                return Some(hash.clone());
            }
        }
        let hash = crate::spec::hex(&Sha256::digest(std::fs::read(path).ok()?)[..16]);
        if let Ok(mut memo) = self.hashes.lock() {
            memo.insert(path.to_path_buf(), (now, hash.clone()));
        }
        Some(hash)
    }

    /// Turns the dependency list the compiler wrote into `scratch` ([`MAKE_DEPS`]) into the
    /// entry's [`DEPS`]: each file with the hash of its content, but the rendered headers (in
    /// `header_dir`, part of the key). A file changed since the build started (`since`), or no
    /// list at all, is recorded as [`UNKNOWN`]: the entry is stale at its first lookup.
    pub fn record_deps(
        &self,
        scratch: &Path,
        header_dir: &Path,
        since: SystemTime,
    ) -> std::io::Result<()> {
        let made = scratch.join(MAKE_DEPS);
        let mut text = String::from(
            "# the files this build read beside its rendered headers: the sha256 of their content (first 16 bytes) and their path\n",
        );
        match std::fs::read(&made) {
            Ok(list) => {
                let cwd = std::env::current_dir()?;
                let headers = header_dir.canonicalize().ok();
                let mut seen = std::collections::HashSet::new();
                for dep in make_deps(&String::from_utf8_lossy(&list)) {
                    let path = cwd.join(&dep);
                    if !seen.insert(path.clone()) {
                        continue;
                    }
                    if path.to_str().is_none_or(|p| p.contains('\n')) {
                        // No line of the list can name it: the entry cannot be vouched for.
                        text.push_str(&format!("{UNKNOWN}  (a path that is no line of text)\n"));
                        continue;
                    }
                    let real = path.canonicalize().ok();
                    if real
                        .as_ref()
                        .zip(headers.as_ref())
                        .is_some_and(|(r, h)| r.starts_with(h))
                    {
                        continue;
                    }
                    let changed = std::fs::metadata(&path)
                        .and_then(|m| m.modified())
                        .map_or(true, |t| t > since);
                    let hash = match self.content_hash(&path) {
                        Some(h) if !changed => h,
                        _ => UNKNOWN.to_string(),
                    };
                    text.push_str(&format!("{hash}  {}\n", path.display()));
                }
                std::fs::remove_file(&made)?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                text.push_str(&format!(
                    "{UNKNOWN}  (the compiler wrote no `{MAKE_DEPS}`)\n"
                ));
            }
            Err(e) => return Err(e),
        }
        let binary = std::fs::read(scratch.join(BINARY))?;
        text.push_str(&format!(
            "{BINARY_LINE}{}\n",
            crate::spec::hex(&Sha256::digest(binary)[..16])
        ));
        write_new(&scratch.join(DEPS), text.as_bytes())
    }

    /// The lists in the folder by owner, with what they tell of it ([`Owner`]).
    fn lists(&self) -> HashMap<String, (Owner, Vec<PathBuf>)> {
        let mut lists: HashMap<String, (Option<bool>, Vec<PathBuf>)> = HashMap::new();
        let Ok(read) = std::fs::read_dir(&self.dir) else {
            return HashMap::new();
        };
        for e in read.filter_map(Result::ok) {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(owner) = name.strip_prefix(IN_USE).and_then(owner_of) else {
                continue;
            };
            let (held, paths) = lists.entry(owner.to_string()).or_default();
            *held = match (*held, list_held(&e.path())) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), _) | (_, Some(false)) => Some(false),
                _ => None,
            };
            paths.push(e.path());
        }
        lists
            .into_iter()
            .map(|(owner, (held, paths))| {
                let host = pid_and_host(&owner).1;
                let state = match (held, owner_without_list(&owner)) {
                    (Some(true), _) => Owner::Running,
                    (Some(false), _) if host.is_some() && crate::owner::of_this_host(&owner) => {
                        Owner::Gone
                    }
                    // An older sweep's list (a pid alone, never locked) went with its pid.
                    (_, Owner::Unknown) if host.is_none() => Owner::Gone,
                    (_, state) => state,
                };
                (owner, (state, paths))
            })
            .collect()
    }

    /// The keys running sweeps hold; the lists of sweeps that are gone are removed (of an
    /// [`Owner::Unknown`], once they did not change for an hour).
    fn held_keys(
        &self,
        lists: &HashMap<String, (Owner, Vec<PathBuf>)>,
    ) -> std::collections::HashSet<String> {
        let mut keys = std::collections::HashSet::new();
        for (state, paths) in lists.values() {
            let state = *state;
            for path in paths {
                if state == Owner::Gone || (state == Owner::Unknown && !recent(path)) {
                    let _ = std::fs::remove_file(path);
                    continue;
                }
                let text = crate::store::read_regular(path).unwrap_or_default();
                keys.extend(text.lines().map(str::to_string));
            }
        }
        keys
    }

    /// Whether the unfinished build `name` (`.tmp-<key>-<owner>-<n>`) at `path` may still be
    /// under way, its owner's state looked up in `lists`: its sweep runs, or nothing tells and
    /// the folder or its TMPDIR changed within the hour. A cache on a file system that several
    /// hosts share (Slurm shards, `--cache /shared/cache`) holds builds of other hosts' sweeps
    /// (review 14a F3: they were removed mid-build, and their points recorded `build_failed`).
    fn building(
        &self,
        name: &str,
        path: &Path,
        lists: &HashMap<String, (Owner, Vec<PathBuf>)>,
    ) -> bool {
        let owner = name
            .strip_prefix(SCRATCH)
            .and_then(|rest| rest.get(33..))
            .and_then(owner_of)
            .unwrap_or_default();
        let state = lists
            .get(owner)
            .map_or_else(|| owner_without_list(owner), |(state, _)| *state);
        match state {
            Owner::Running => true,
            Owner::Gone => false,
            Owner::Unknown => recent(path) || recent(&path.join("tmp")),
        }
    }

    /// The binary of `key` when it was built before. An empty binary (cut by a full disk or by
    /// hand) or one that is no regular file (a folder, a link sweep never makes) is none: the
    /// point is built again and replaces it, where running it gave every point `no_metric` for
    /// good.
    pub fn lookup(&self, key: &str) -> Option<PathBuf> {
        let bin = self.entry(key).join(BINARY);
        std::fs::symlink_metadata(&bin)
            .is_ok_and(|m| m.is_file() && m.len() > 0)
            .then_some(bin)
    }

    /// A fresh private folder to build into; [`Cache::commit`] moves it into place.
    pub fn scratch(&self, key: &str) -> std::io::Result<PathBuf> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        self.make_dir()?;
        // A folder of the name that is there already is no build of this one's: left alone.
        let mut n = NEXT.fetch_add(1, Ordering::Relaxed);
        loop {
            let dir = self.dir.join(format!("{SCRATCH}{key}-{}-{n}", owner()));
            match std::fs::create_dir(&dir) {
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    n = NEXT.fetch_add(1, Ordering::Relaxed);
                }
                made => return made.map(|()| dir),
            }
        }
    }

    /// Publishes a finished build atomically. When another build of the same key won the race,
    /// that one stays and this one is dropped; either way the returned binary is complete. A
    /// stale entry of the key is replaced file by file, its list of files last: a lookup
    /// meanwhile finds the old list, stale, and builds again, never an old binary passed as new.
    ///
    /// An entry that is broken (its binary empty, a folder, or gone; the entry itself a file:
    /// cut by a full disk or by hand) is replaced as a stale one is, never kept as the winner.
    pub fn commit(&self, key: &str, scratch: &Path) -> std::io::Result<PathBuf> {
        let entry = self.entry(key);
        if std::fs::symlink_metadata(&entry).is_ok_and(|m| !m.is_dir()) {
            std::fs::remove_file(&entry)?;
        }
        if std::fs::rename(scratch, &entry).is_err() {
            if !self.fresh(key) || self.lookup(key).is_none() {
                for f in ENTRY_FILES {
                    let old = entry.join(f);
                    if std::fs::symlink_metadata(&old).is_ok_and(|m| m.is_dir()) {
                        std::fs::remove_dir_all(&old)?;
                    }
                    match std::fs::rename(scratch.join(f), old) {
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                            let _ = std::fs::remove_file(entry.join(f));
                        }
                        done => done?,
                    }
                }
            }
            let _ = std::fs::remove_dir_all(scratch);
        }
        self.lookup(key).ok_or_else(|| {
            std::io::Error::other(format!("cache entry `{}` has no binary", entry.display()))
        })
    }

    pub fn stats(&self) -> Stats {
        let mut s = Stats::default();
        // Whose unfinished builds are whose, told as `remove_stale_scratch` tells them.
        let _exclusive = self.lock_to_probe();
        let Ok(read) = std::fs::read_dir(&self.dir) else {
            return s;
        };
        let lists = self.lists();
        for e in read.filter_map(Result::ok) {
            let name = e.file_name().to_string_lossy().into_owned();
            let entry = is_entry(&name, &e.path());
            if !entry && !is_scratch(&name) {
                continue;
            }
            if is_scratch(&name) && self.building(&name, &e.path(), &lists) {
                s.building += 1;
                continue;
            }
            let bytes = size(&e.path());
            if is_scratch(&name) {
                s.partial += 1;
                s.partial_bytes += bytes;
            } else if entry {
                s.entries += 1;
                s.bytes += bytes;
            }
        }
        s
    }

    /// Removes the unfinished builds (`.tmp-<key>-<pid>-<n>`) of processes that are gone (see
    /// [`building`]): a sweep
    /// killed mid-build leaves them behind. Those of running sweeps stay.
    pub fn remove_stale_scratch(&self) {
        let _exclusive = self.lock_to_probe();
        let Ok(read) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let lists = self.lists();
        for e in read.filter_map(Result::ok) {
            let name = e.file_name().to_string_lossy().into_owned();
            if is_scratch(&name) && !self.building(&name, &e.path(), &lists) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }

    /// Removes every build but those running sweeps hold (their entries, and the builds they
    /// are making); says what it removed, and how many it kept in use.
    /// Refused, writing nothing, for a folder that is no cache of sweep's ([`MARKER`]).
    pub fn clean(&self) -> Result<Stats, CleanError> {
        if !self.dir.is_dir() {
            return Ok(Stats::default());
        }
        self.check_is_cache()?;
        self.remove_builds().map_err(|source| CleanError::Io {
            dir: self.dir.clone(),
            source,
        })
    }

    fn remove_builds(&self) -> std::io::Result<Stats> {
        let _exclusive = self.locked(libc::LOCK_EX);
        let lists = self.lists();
        let held = self.held_keys(&lists);
        let mut removed = Stats::default();
        for e in std::fs::read_dir(&self.dir)?.filter_map(Result::ok) {
            let name = e.file_name().to_string_lossy().into_owned();
            let entry = is_entry(&name, &e.path());
            let in_use = if entry {
                held.contains(&name)
            } else if is_scratch(&name) {
                self.building(&name, &e.path(), &lists)
            } else {
                continue;
            };
            if in_use {
                removed.in_use += 1;
                continue;
            }
            let bytes = size(&e.path());
            if entry {
                removed.entries += 1;
                removed.bytes += bytes;
            } else {
                removed.partial += 1;
                removed.partial_bytes += bytes;
            }
            // A file or link at the name (planted, a broken copy) goes as a file: removing it as a
            // folder stopped `clean` half-way, naming no culprit (review 16a A8).
            let path = e.path();
            let gone = match std::fs::symlink_metadata(&path) {
                Ok(m) if m.is_dir() => std::fs::remove_dir_all(&path),
                Ok(_) => std::fs::remove_file(&path),
                Err(e) => Err(e),
            };
            gone.map_err(|err| {
                std::io::Error::new(err.kind(), format!("`{}`: {err}", path.display()))
            })?;
        }
        // The folder goes too when nothing else is in it (but the lock this made).
        let rest: Vec<_> = std::fs::read_dir(&self.dir)?
            .filter_map(Result::ok)
            .map(|e| e.file_name())
            .collect();
        if rest.iter().all(|n| *n == *LOCK || *n == *MARKER) {
            let _ = std::fs::remove_file(self.dir.join(LOCK));
            let _ = std::fs::remove_file(self.dir.join(MARKER));
            let _ = std::fs::remove_dir(&self.dir);
        }
        Ok(removed)
    }
}

/// Writes a file that must not be there yet (`O_EXCL`: a link or FIFO put at the name since it
/// was cleared, by a process the build left behind, is never written through, review 16a A3).
pub fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?
        .write_all(bytes)
}

/// The lines of a list in [`DEPS`]'s format, as (path, hash), but those of [`UNKNOWN`] hash.
pub fn read_list(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once("  "))
        .filter(|(hash, _)| *hash != UNKNOWN)
        .map(|(hash, path)| (path.to_string(), hash.to_string()))
        .collect()
}

/// A list in [`DEPS`]'s format of `files` (path -> hash), headed by `what`.
pub fn write_list<'a>(
    what: &str,
    files: impl IntoIterator<Item = (&'a String, &'a String)>,
) -> String {
    let mut text =
        format!("# {what}: the sha256 of their content (first 16 bytes) and their path\n");
    for (path, hash) in files {
        text.push_str(&format!("{hash}  {path}\n"));
    }
    text
}

/// The files of a make rule as gcc, clang and nvcc write it (`-MD`): what follows the first
/// `target:`, split on blanks, with `\ ` a blank of a name, `\#` a `#`, `$$` a `$`, and a
/// backslash at a line's end joining the next. A later rule's target (`-MP`) is skipped.
fn make_deps(text: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.peek() {
                Some('\n') => {
                    chars.next();
                    words.extend((!word.is_empty()).then(|| std::mem::take(&mut word)));
                }
                Some('\r') => {
                    chars.next();
                    chars.next_if_eq(&'\n');
                    words.extend((!word.is_empty()).then(|| std::mem::take(&mut word)));
                }
                Some(&n @ (' ' | '#')) => {
                    chars.next();
                    word.push(n);
                }
                _ => word.push('\\'),
            },
            '$' if chars.peek() == Some(&'$') => {
                chars.next();
                word.push('$');
            }
            c if c.is_whitespace() => {
                words.extend((!word.is_empty()).then(|| std::mem::take(&mut word)));
            }
            c => word.push(c),
        }
    }
    words.extend((!word.is_empty()).then_some(word));
    let Some(first_rule) = words.iter().position(|w| w.ends_with(':')) else {
        return Vec::new();
    };
    words
        .into_iter()
        .skip(first_rule + 1)
        .filter(|w| !w.ends_with(':'))
        .collect()
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

/// What tells of an owner that has no list in the folder (an older sweep's, or one whose list
/// could not be made): its pid, where it is this host's.
fn owner_without_list(owner: &str) -> Owner {
    if crate::owner::of_this_host(owner) && alive(pid_and_host(owner).0) {
        Owner::Running
    } else {
        Owner::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `dir` as last changed two hours ago: a build no process of any host is making.
    fn two_hours_old(dir: &Path) {
        let then = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
        std::fs::File::open(dir)
            .unwrap()
            .set_modified(then)
            .unwrap();
    }

    #[test]
    fn an_entry_whose_listed_file_changed_or_went_is_stale_and_a_new_build_replaces_it() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache::new(tmp.path().join("cache"));
        let key = "0123456789abcdef0123456789abcdef";
        let header = tmp.path().join("x.h");
        let point = tmp.path().join("point");
        std::fs::create_dir_all(&point).unwrap();
        std::fs::write(&header, "#define X 1\n").unwrap();
        std::fs::write(point.join("params.h"), "#define N 1\n").unwrap();
        let build = |text: &str| {
            let scratch = cache.scratch(key).unwrap();
            let since = SystemTime::now();
            std::fs::write(scratch.join(BINARY), text).unwrap();
            executable(&scratch.join(BINARY));
            std::fs::write(
                scratch.join(MAKE_DEPS),
                format!("bench: {}/params.h {}\n", point.display(), header.display()),
            )
            .unwrap();
            cache.record_deps(&scratch, &point, since).unwrap();
            cache.commit(key, &scratch).unwrap()
        };
        let holder = cache.holder();
        build("old");
        let deps = std::fs::read_to_string(cache.entry(key).join(DEPS)).unwrap();
        assert!(
            !deps.contains("params.h"),
            "the rendered header is the key's: {deps}"
        );
        assert!(cache.use_entry(&holder, key).is_some());
        std::fs::write(&header, "#define X 2\n").unwrap();
        assert!(cache.use_entry(&holder, key).is_none(), "x.h changed");
        let bin = build("new");
        assert_eq!(std::fs::read_to_string(bin).unwrap(), "new");
        assert!(
            cache.use_entry(&holder, key).is_some(),
            "the new build is fresh"
        );
        std::fs::remove_file(&header).unwrap();
        assert!(cache.use_entry(&holder, key).is_none(), "x.h is gone");
        // An entry that an older sweep made has no list: it cannot tell, and is built again.
        std::fs::remove_file(cache.entry(key).join(DEPS)).unwrap();
        assert!(cache.lookup(key).is_some() && cache.use_entry(&holder, key).is_none());
    }

    fn executable(path: &Path) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn an_entry_whose_binary_was_cut_replaced_or_made_not_executable_is_stale() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache::new(tmp.path().join("cache"));
        let key = "0123456789abcdef0123456789abcdef";
        let point = tmp.path().join("point");
        std::fs::create_dir_all(&point).unwrap();
        let build = || {
            let scratch = cache.scratch(key).unwrap();
            std::fs::write(scratch.join(BINARY), "the binary as built").unwrap();
            executable(&scratch.join(BINARY));
            std::fs::write(scratch.join(MAKE_DEPS), "bench:\n").unwrap();
            cache
                .record_deps(&scratch, &point, SystemTime::now())
                .unwrap();
            cache.commit(key, &scratch).unwrap()
        };
        let holder = cache.holder();
        let bin = build();
        assert!(cache.use_entry(&holder, key).is_some());
        std::fs::write(&bin, "the binary").unwrap();
        assert!(cache.use_entry(&holder, key).is_none(), "cut short");
        let bin = build();
        assert!(cache.use_entry(&holder, key).is_some(), "built again");
        std::fs::write(&bin, "another binary, same size").unwrap();
        assert!(cache.use_entry(&holder, key).is_none(), "replaced");
        let bin = build();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(cache.use_entry(&holder, key).is_none(), "not executable");
        build();
        assert!(cache.use_entry(&holder, key).is_some());
        // A list without the binary's hash (made by an older sweep) cannot tell.
        let list = std::fs::read_to_string(cache.entry(key).join(DEPS)).unwrap();
        let older: String = list
            .lines()
            .filter(|l| !l.starts_with(BINARY_LINE))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(cache.entry(key).join(DEPS), older).unwrap();
        assert!(
            cache.use_entry(&holder, key).is_none(),
            "no hash of the binary"
        );
    }

    #[test]
    fn make_rules_of_gcc_and_nvcc_give_their_files() {
        let cases: [(&str, &[&str]); 5] = [
            // gcc: `target: deps`, continued lines.
            (
                "/c/.tmp-k-1-0/bench: a.c /usr/include/stdio.h \\\n inc/x.h\n",
                &["a.c", "/usr/include/stdio.h", "inc/x.h"],
            ),
            // nvcc: a blank before the colon.
            (
                "bench : a.cu \\\n    /cuda/bin/../include/cuda_runtime.h \\\n    inc/x.h\n",
                &["a.cu", "/cuda/bin/../include/cuda_runtime.h", "inc/x.h"],
            ),
            // Escaped blanks, `#` and `$`; a folder with a colon in the target.
            (
                "/a:b/bench: my\\ dir/x.h c\\#1.h d$$.h\r\n",
                &["my dir/x.h", "c#1.h", "d$.h"],
            ),
            // `-MP` adds a rule per header: their targets are no files.
            ("bench: a.c x.h\n\nx.h:\n", &["a.c", "x.h"]),
            ("", &[]),
        ];
        for (text, want) in cases {
            assert_eq!(make_deps(text), want, "{text:?}");
        }
    }

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
        // And one of a dead pid changed a minute ago: another host's build in a shared cache.
        let elsewhere = tmp
            .path()
            .join(format!(".tmp-{}-1073741823-0", "4".repeat(32)));
        for d in [&dead, &ours, &elsewhere] {
            std::fs::create_dir_all(d).unwrap();
            std::fs::write(d.join("half.o"), b"123").unwrap();
        }
        two_hours_old(&dead);
        let s = cache.stats();
        // This process's build and the recent one of another host's are under way.
        assert_eq!(
            (s.entries, s.bytes, s.partial, s.partial_bytes, s.building),
            (1, 5, 1, 3, 2)
        );
        cache.remove_stale_scratch();
        assert!(!dead.exists(), "a dead sweep's scratch goes");
        assert!(ours.exists(), "a running sweep's scratch stays");
        assert!(
            elsewhere.exists(),
            "a build of another host's stays while it changes"
        );
        assert!(done.exists());
        // Changed "in the future" by a clock ahead of this host's: still under way.
        let ahead = tmp
            .path()
            .join(format!(".tmp-{}-1073741822-0", "5".repeat(32)));
        std::fs::create_dir_all(&ahead).unwrap();
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(30);
        std::fs::File::open(&ahead)
            .unwrap()
            .set_modified(later)
            .unwrap();
        cache.remove_stale_scratch();
        assert!(
            ahead.exists(),
            "a build changed by a clock ahead of ours stays"
        );
    }

    #[test]
    fn clean_keeps_what_a_running_sweep_holds_and_drops_the_lists_of_dead_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache::new(tmp.path().join("cache"));
        let (held, free) = ("1".repeat(32), "2".repeat(32));
        for k in [&held, &free] {
            std::fs::create_dir_all(cache.entry(k)).unwrap();
            std::fs::write(cache.entry(k).join(BINARY), b"12345").unwrap();
            executable(&cache.entry(k).join(BINARY));
            let hash = crate::spec::hex(&Sha256::digest(b"12345")[..16]);
            std::fs::write(
                cache.entry(k).join(DEPS),
                format!("# read nothing\n{BINARY_LINE}{hash}\n"),
            )
            .unwrap();
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

    /// An entry of `key` as a build leaves it: an executable binary and its list.
    fn built(cache: &Cache, key: &str) {
        std::fs::create_dir_all(cache.entry(key)).unwrap();
        std::fs::write(cache.entry(key).join(BINARY), b"12345").unwrap();
        executable(&cache.entry(key).join(BINARY));
        let hash = crate::spec::hex(&Sha256::digest(b"12345")[..16]);
        std::fs::write(
            cache.entry(key).join(DEPS),
            format!("# read nothing\n{BINARY_LINE}{hash}\n"),
        )
        .unwrap();
    }

    /// The list `.in-use-<owner>-0` of `keys`, locked (as its sweep does) while the file lives.
    fn running(cache: &Cache, owner: &str, keys: &[&str]) -> std::fs::File {
        use std::os::fd::AsRawFd;
        let path = cache.dir.join(format!("{IN_USE}{owner}-0"));
        let f = std::fs::File::create(&path).unwrap();
        std::fs::write(&path, keys.join("\n") + "\n").unwrap();
        // SAFETY: flock on a descriptor we own.
        assert_eq!(unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) }, 0);
        f
    }

    #[test]
    fn sweeps_are_told_apart_by_their_lock_not_by_their_pid() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache::new(tmp.path().join("cache"));
        let me = owner();
        let (pid, host) = pid_and_host(me);
        assert_eq!(pid, Some(std::process::id() as i32));
        assert_eq!(host.map(str::to_string), Some(crate::owner::host_name()));
        // Another sweep of this very pid (in another pid namespace: review 15 F2) and one of
        // another host, whose pid means nothing here (F1): both running.
        let twin = format!("{}-{:016x}-{}", std::process::id(), 1, host.unwrap());
        let far = format!("1073741824-{:016x}-elsewhere", 2);
        let keys: Vec<String> = (1..=5).map(|d| d.to_string().repeat(32)).collect();
        for k in &keys[..3] {
            built(&cache, k);
        }
        let twin_lock = running(&cache, &twin, &[&keys[0]]);
        let far_lock = running(&cache, &far, &[&keys[1]]);
        let twin_build = cache.dir.join(format!("{SCRATCH}{}-{twin}-0", keys[3]));
        let far_build = cache.dir.join(format!("{SCRATCH}{}-{far}-0", keys[4]));
        for d in [&twin_build, &far_build] {
            std::fs::create_dir_all(d).unwrap();
            two_hours_old(d);
        }
        cache.remove_stale_scratch();
        assert!(
            twin_build.exists() && far_build.exists(),
            "builds under way stay"
        );
        let s = cache.clean().unwrap();
        assert_eq!((s.entries, s.in_use), (1, 4), "{s:?}");
        assert!(cache.lookup(&keys[0]).is_some() && cache.lookup(&keys[1]).is_some());
        // The twin ends: its list and build go at once (its lock, free, is this kernel's).
        drop(twin_lock);
        let s = cache.clean().unwrap();
        assert_eq!((s.entries, s.partial, s.in_use), (1, 1, 2), "{s:?}");
        assert!(!twin_build.exists() && cache.lookup(&keys[0]).is_none());
        // A lock this host cannot see (another host's, on a file system without shared locks):
        // its list protects while it changed within the hour, its old build does not.
        drop(far_lock);
        let s = cache.clean().unwrap();
        assert_eq!((s.entries, s.partial, s.in_use), (0, 1, 1), "{s:?}");
        assert!(cache.lookup(&keys[1]).is_some() && !far_build.exists());
        two_hours_old(&cache.dir.join(format!("{IN_USE}{far}-0")));
        assert_eq!(cache.clean().unwrap().entries, 1);
        assert!(!cache.dir.exists(), "nothing of any sweep is left");
    }

    #[test]
    fn a_build_folder_is_never_one_that_was_there() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache::new(tmp.path());
        let key = "6".repeat(32);
        for n in 0..300 {
            let d = tmp.path().join(format!("{SCRATCH}{key}-{}-{n}", owner()));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("theirs"), b"x").unwrap();
        }
        let mine = cache.scratch(&key).unwrap();
        assert!(std::fs::read_dir(&mine).unwrap().next().is_none());
        for n in 0..300 {
            let d = tmp.path().join(format!("{SCRATCH}{key}-{}-{n}", owner()));
            assert!(d.join("theirs").exists(), "{n}");
        }
    }

    #[test]
    fn an_entry_holding_what_else_its_build_wrote_is_seen_and_cleaned() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache::new(tmp.path().join("cache"));
        let key = "7".repeat(32);
        built(&cache, &key);
        std::fs::write(cache.entry(&key).join("bench.dwo"), b"123").unwrap();
        assert_eq!(cache.stats().entries, 1);
        assert_eq!(cache.clean().unwrap().entries, 1);
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
        two_hours_old(&scratch);
        // What `--cache ~` would find: none of it is the cache's (a folder named like a key
        // holds a file no entry has).
        for d in [
            "notes",
            ".tmp-notes-1-0",
            "0123",
            "fedcba9876543210fedcba9876543210",
        ] {
            std::fs::create_dir_all(tmp.path().join(d)).unwrap();
            std::fs::write(tmp.path().join(d).join("precious.txt"), b"keep").unwrap();
        }
        std::fs::write(tmp.path().join("thesis.tex"), b"keep").unwrap();
        let s = cache.stats();
        assert_eq!((s.entries, s.bytes, s.partial), (1, 5, 1));
        cache.remove_stale_scratch();
        assert!(tmp.path().join(".tmp-notes-1-0/precious.txt").exists());
        // Unmarked, with files no build made: refused, nothing removed or written.
        let refused = cache.clean().unwrap_err().to_string();
        assert!(
            refused.contains("is not a sweep build cache")
                && refused.contains("holds `.tmp-notes-1-0`"),
            "{refused}"
        );
        assert!(entry.exists() && !tmp.path().join(LOCK).exists());
        // A folder a sweep marked as its cache, into which the user put files since.
        std::fs::write(tmp.path().join(MARKER), MARKER_TEXT).unwrap();
        assert_eq!(cache.clean().unwrap().entries, 1);
        assert!(!entry.exists() && !scratch.exists());
        for f in [
            "notes/precious.txt",
            ".tmp-notes-1-0/precious.txt",
            "0123/precious.txt",
            "fedcba9876543210fedcba9876543210/precious.txt",
            "thesis.tex",
        ] {
            assert!(tmp.path().join(f).exists(), "{f} is kept");
        }
        let only_builds = tmp.path().join("cache");
        let cache = Cache::new(&only_builds);
        std::fs::create_dir_all(cache.entry(key)).unwrap();
        // An older sweep's cache (no marker, builds only) is cleaned, and goes with its builds.
        cache.clean().unwrap();
        assert!(
            !only_builds.exists(),
            "a folder of builds only goes with them"
        );
    }

    #[test]
    fn a_cache_folder_sweep_makes_is_marked_and_a_folder_of_other_files_never() {
        let tmp = tempfile::tempdir().unwrap();
        let made = Cache::new(tmp.path().join("made"));
        drop(made.holder());
        assert!(made.is_marked());
        assert_eq!(
            std::fs::read_to_string(made.dir.join(MARKER)).unwrap(),
            MARKER_TEXT
        );
        // `SWEEP_CACHE=$HOME`: used, never marked, never cleaned.
        let home = Cache::new(tmp.path().join("home"));
        std::fs::create_dir_all(&home.dir).unwrap();
        std::fs::write(home.dir.join(".bashrc"), b"keep").unwrap();
        drop(home.holder());
        assert!(!home.is_marked());
        assert!(matches!(home.clean(), Err(CleanError::NotCache { .. })));
        // Cargo's `target/` carries a cache tag too; it is not sweep's.
        let target = Cache::new(tmp.path().join("target"));
        std::fs::create_dir_all(&target.dir).unwrap();
        std::fs::write(
            target.dir.join(MARKER),
            "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by cargo.\n",
        )
        .unwrap();
        assert!(!target.is_marked());
        assert!(matches!(target.clean(), Err(CleanError::NotCache { .. })));
        // An empty folder is no cache either (clean would remove it).
        let empty = Cache::new(tmp.path().join("empty"));
        std::fs::create_dir_all(&empty.dir).unwrap();
        assert!(matches!(
            empty.clean(),
            Err(CleanError::NotCache { other: None, .. })
        ));
        assert!(empty.dir.exists());
    }
}
