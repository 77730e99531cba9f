//! Room on the file system of a run folder: whether a failed write was the disk's fault (full,
//! over quota, read-only) rather than the point's, and a reserve that keeps room for the manifest,
//! so that a run stopped by a full disk can still say `interrupted`.

use std::path::{Path, PathBuf};

/// The reserve's file in a run folder (hidden: no reader lists it; gone when the run ends).
pub const RESERVE: &str = ".reserve";

/// Below this many free bytes the file system of a point's folder counts as full: a program's
/// output written there may have been cut, so its failure is not the point's own.
pub const FULL_BELOW: u64 = 256 * 1024;

/// Whether `e` says the file system has no room or takes no writes (ENOSPC, EDQUOT, EROFS).
pub fn no_room(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ENOSPC) | Some(libc::EDQUOT) | Some(libc::EROFS)
    )
}

/// ` (hint: ...)` for a write that failed because of where it writes (a full or read-only file
/// system, a folder the user may not write), else nothing: the one line says what to do.
pub fn write_hint(e: &std::io::Error) -> &'static str {
    match e.raw_os_error() {
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => {
            " (hint: its file system is full: make room there, or write elsewhere: --output for `run`, --out for the other commands)"
        }
        Some(libc::EROFS) => {
            " (hint: its file system is read-only: write elsewhere: --output for `run`, --out for the other commands)"
        }
        Some(libc::EACCES) | Some(libc::EPERM) => {
            " (hint: you may not write there: check its permissions, or write elsewhere: --output for `run`, --out for the other commands)"
        }
        Some(libc::EBADF) => {
            " (hint: stdout is closed: send it somewhere, `> run.json`, or name a file: --export-json FILE)"
        }
        Some(libc::EPIPE) => {
            " (hint: what reads stdout stopped before the end: let it read it all, or name a file: --export-json FILE)"
        }
        _ => "",
    }
}

/// The bytes an unprivileged writer may still use on the file system of `path`, or None when it
/// cannot be asked.
pub fn free_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs fills the struct it is given from a NUL-terminated path.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::statvfs(c.as_ptr(), &mut s) } == 0;
    #[allow(clippy::unnecessary_cast)]
    ok.then(|| s.f_bavail as u64 * s.f_frsize as u64)
}

/// Whether the file system of `path` is full (fewer than [`FULL_BELOW`] bytes free).
pub fn full(path: &Path) -> bool {
    free_bytes(path).is_some_and(|b| b < FULL_BELOW)
}

/// The error a write meets on a full file system (for a fullness seen by [`full`], not by a write).
pub fn full_error() -> std::io::Error {
    std::io::Error::from_raw_os_error(libc::ENOSPC)
}

/// Room held for the run's last manifest: a file of `bytes` in the run folder, given back
/// ([`Reserve::release`]) just before the manifest is saved at the run's end, however it ends.
pub struct Reserve(PathBuf);

impl Reserve {
    /// Holds `bytes` in `run_dir` (allocated, not a sparse file).
    pub fn make(run_dir: &Path, bytes: u64) -> std::io::Result<Reserve> {
        use std::os::fd::AsRawFd;
        let path = run_dir.join(RESERVE);
        let file = std::fs::File::create(&path)?;
        // SAFETY: posix_fallocate on a descriptor we own.
        let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, bytes as libc::off_t) };
        let made = match rc {
            0 => Ok(()),
            // A file system that cannot allocate ahead gets zeros written.
            rc if !no_room(&std::io::Error::from_raw_os_error(rc)) => zeros(&file, bytes),
            rc => Err(std::io::Error::from_raw_os_error(rc)),
        };
        match made {
            Ok(()) => Ok(Reserve(path)),
            Err(e) => {
                drop(file);
                let _ = std::fs::remove_file(&path);
                Err(e)
            }
        }
    }

    /// Gives the room back.
    pub fn release(&self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Writes `bytes` zeros to `file`, flushed to the disk (so that they hold room there).
fn zeros(mut file: &std::fs::File, bytes: u64) -> std::io::Result<()> {
    use std::io::Write;
    let block = [0u8; 64 * 1024];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(block.len() as u64) as usize;
        file.write_all(&block[..n])?;
        left -= n as u64;
    }
    file.sync_all()
}

impl Drop for Reserve {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reserve_takes_room_until_released_and_errors_of_the_disk_are_told_apart() {
        let tmp = tempfile::tempdir().unwrap();
        let r = Reserve::make(tmp.path(), 100_000).unwrap();
        let meta = std::fs::metadata(tmp.path().join(RESERVE)).unwrap();
        use std::os::unix::fs::MetadataExt;
        assert!(meta.blocks() * 512 >= 100_000, "allocated, not sparse");
        r.release();
        assert!(!tmp.path().join(RESERVE).exists());
        assert!(no_room(&full_error()));
        assert!(no_room(&std::io::Error::from_raw_os_error(libc::EROFS)));
        assert!(!no_room(&std::io::Error::from_raw_os_error(libc::EACCES)));
        assert!(free_bytes(tmp.path()).is_some());
    }
}
