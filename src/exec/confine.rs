//! A build that writes only beneath its own folder, by the kernel's Landlock (Linux 5.13 and
//! later, no privilege needed): whatever flag a compiler is given (`--time FILE`,
//! `-Xassembler -adhln=FILE`, `-Xfatbin --create=FILE`, gold's `--print-symbol-counts=FILE`, `--run`
//! and what the program it runs writes), it cannot create, change or remove a file outside the
//! build's scratch folder, where its temporary files go too (`TMPDIR`). Reading stays free. Where
//! the kernel has no Landlock, builds run as before, guarded by the spec's refusal of the flags
//! sweep knows to name an output (`spec::axis::output_flag`).
//!
//! The ruleset is made in sweep, before the child is started; the child only enforces it (two
//! system calls between fork and exec, async-signal-safe).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

// Access rights of the file system (linux/landlock.h).
const WRITE_FILE: u64 = 1 << 1;
const REMOVE_DIR: u64 = 1 << 4;
const REMOVE_FILE: u64 = 1 << 5;
const MAKE_CHAR: u64 = 1 << 6;
const MAKE_DIR: u64 = 1 << 7;
const MAKE_REG: u64 = 1 << 8;
const MAKE_SOCK: u64 = 1 << 9;
const MAKE_FIFO: u64 = 1 << 10;
const MAKE_BLOCK: u64 = 1 << 11;
const MAKE_SYM: u64 = 1 << 12;
const REFER: u64 = 1 << 13;
const TRUNCATE: u64 = 1 << 14;

const CREATE_RULESET_VERSION: u32 = 1;
const RULE_PATH_BENEATH: libc::c_int = 1;

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
}

#[repr(C, packed)]
struct PathBeneath {
    allowed_access: u64,
    parent_fd: i32,
}

/// The rights a confined build is refused outside its folder, for the kernel's Landlock `abi`.
fn write_rights(abi: i64) -> u64 {
    let mut rights = WRITE_FILE
        | REMOVE_DIR
        | REMOVE_FILE
        | MAKE_CHAR
        | MAKE_DIR
        | MAKE_REG
        | MAKE_SOCK
        | MAKE_FIFO
        | MAKE_BLOCK
        | MAKE_SYM;
    if abi >= 2 {
        rights |= REFER;
    }
    if abi >= 3 {
        rights |= TRUNCATE;
    }
    rights
}

/// The kernel's Landlock ABI version; `None` where it has none (or it is disabled).
fn abi() -> Option<i64> {
    // SAFETY: with a null attribute and size 0, the call only returns the ABI version.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    (v > 0).then_some(v)
}

/// Whether builds are confined here (the kernel has Landlock).
pub fn available() -> bool {
    abi().is_some()
}

/// A Landlock ruleset that lets writes happen beneath `dir`, to `/dev/null` and to the `files`
/// the command's output goes to (its log: a shell's `echo >/dev/stderr` opens it anew, review 14a
/// F4) only; `None` where the kernel has no Landlock. Enforced in a child by [`enforce`].
pub(super) fn ruleset(dir: &Path, files: &[&Path]) -> std::io::Result<Option<OwnedFd>> {
    let Some(abi) = abi() else {
        return Ok(None);
    };
    let rights = write_rights(abi);
    let attr = RulesetAttr {
        handled_access_fs: rights,
    };
    // SAFETY: a live attribute of the size given; the result is a new descriptor or -1.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            &attr as *const RulesetAttr,
            std::mem::size_of::<RulesetAttr>(),
            0u32,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the descriptor was just made and is ours alone (close-on-exec).
    let ruleset = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    let allow = |path: &Path, access: u64| -> std::io::Result<()> {
        let target = std::fs::File::options()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_CLOEXEC)
            .open(path)?;
        let rule = PathBeneath {
            allowed_access: access,
            parent_fd: target.as_raw_fd(),
        };
        // SAFETY: a live rule of the kind named, on the ruleset above.
        let r = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset.as_raw_fd(),
                RULE_PATH_BENEATH,
                &rule as *const PathBeneath,
                0u32,
            )
        };
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    };
    allow(dir, rights)?;
    // A file's rule takes only the rights of files.
    allow(Path::new("/dev/null"), rights & (WRITE_FILE | TRUNCATE))?;
    for file in files {
        allow(file, rights & (WRITE_FILE | TRUNCATE))?;
    }
    Ok(Some(ruleset))
}

use std::os::unix::fs::OpenOptionsExt;

/// In the child, between fork and exec: the ruleset `fd` holds for it and all it starts.
///
/// # Safety
/// Only system calls (async-signal-safe); `fd` is a ruleset made by [`ruleset`].
pub(super) unsafe fn enforce(fd: i32) -> std::io::Result<()> {
    if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A confined child writes beneath its folder and to /dev/null, and nowhere else.
    #[test]
    fn a_confined_child_writes_only_beneath_its_folder() {
        if !available() {
            eprintln!("skipped: this kernel has no Landlock");
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let inside = tmp.path().join("in");
        std::fs::create_dir(&inside).unwrap();
        let rules = ruleset(&inside, &[]).unwrap().unwrap();
        let fd = rules.as_raw_fd();
        let script = format!(
            "echo a > {0}/ok && echo b > /dev/null && ! echo c > {1}/out 2>/dev/null && ! mkdir {1}/d 2>/dev/null",
            inside.display(),
            tmp.path().display()
        );
        let mut c = std::process::Command::new("sh");
        c.arg("-c").arg(script);
        // SAFETY: enforce only makes system calls.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut c, move || enforce(fd));
        }
        let status = c.status().unwrap();
        assert!(status.success(), "{status:?}");
        assert!(inside.join("ok").exists());
        assert!(!tmp.path().join("out").exists());
        assert!(!tmp.path().join("d").exists());
    }
}
