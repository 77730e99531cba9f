//! The process groups sweep started, and the guard that kills them when sweep dies.

use std::collections::BTreeSet;
use std::sync::Mutex;

/// The process groups started and not yet reaped.
static GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

/// The write end of the guard's pipe (see [`start_guard`]); -1 without a guard.
static GUARD: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

/// Starts the guard: a process forked from sweep that outlives it, whatever ends it (SIGKILL
/// included), and then kills every process group sweep started and had not reaped. The kernel
/// kills a program when sweep dies (PR_SET_PDEATHSIG), but not what the program started itself
/// (nvcc's compilers, a bench's helpers); the guard does. sweep tells it each group as it starts
/// (pgid) and ends (-pgid) over a pipe; end of file on the pipe means sweep is gone. Call before
/// any thread starts (fork copies only the calling thread). Without a pipe or a fork, sweep runs
/// unguarded, as before. From here on sweep also reaps and kills its orphans (`tree.rs`).
pub fn start_guard() {
    super::tree::adopt_orphans();
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills two new descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return;
    }
    // SAFETY: called from main before any thread exists; the child runs `guard` and never returns.
    match unsafe { libc::fork() } {
        // SAFETY: getppid only reads; in the child it is sweep's pid.
        0 => guard(fds[0], unsafe { libc::getppid() }),
        -1 => unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        },
        pid => {
            // Sweep's own child: never reaped as an orphan.
            let _ = super::tree::own(|| Ok(pid), |p| vec![*p]);
            // SAFETY: the read end is the guard's.
            unsafe { libc::close(fds[0]) };
            GUARD.store(fds[1], std::sync::atomic::Ordering::SeqCst);
            super::tree::watch_escapes();
        }
    }
}

/// The guard's whole life: its own session (a Ctrl-C or a kill of sweep's group does not reach
/// it), no descriptor but the pipe (so nothing waiting for sweep's output waits for it), then
/// read group ids until end of file and kill the groups still open, and what sweep's programs
/// started out of their groups (marked with `sweep`'s pid, see `tree.rs`).
fn guard(pipe: i32, sweep: i32) -> ! {
    // SAFETY: a single-threaded child after fork; only descriptors, signals and killpg.
    unsafe {
        libc::setsid();
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        for fd in 0..3 {
            libc::dup2(null, fd);
        }
        let max = libc::sysconf(libc::_SC_OPEN_MAX).clamp(256, 65536) as i32;
        for fd in 3..max {
            if fd != pipe {
                libc::close(fd);
            }
        }
    }
    // A count per group: sweep may tell one group twice (a started program's, and the orphan
    // watcher's view of it), and untell it twice.
    let mut open: std::collections::BTreeMap<i32, u32> = std::collections::BTreeMap::new();
    let mut buf = [0u8; 4];
    let mut have = 0;
    loop {
        // SAFETY: reads into the rest of a local buffer.
        let n = unsafe { libc::read(pipe, buf[have..].as_mut_ptr().cast(), 4 - have) };
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        if n <= 0 {
            break;
        }
        have += n as usize;
        if have == 4 {
            let v = i32::from_le_bytes(buf);
            if v > 0 {
                *open.entry(v).or_default() += 1;
            } else if let Some(n) = open.get_mut(&-v) {
                *n -= 1;
                if *n == 0 {
                    open.remove(&-v);
                }
            }
            have = 0;
        }
    }
    for pgid in open.into_keys() {
        kill_group(pgid);
    }
    super::tree::kill_all_marked_by(sweep);
    // SAFETY: ends the guard without running sweep's exit handlers.
    unsafe { libc::_exit(0) }
}

/// Tells the guard that group `pgid` started (positive) or ended (negative); the guard counts,
/// so each start is matched by one end.
pub(super) fn tell_guard(message: i32) {
    let fd = GUARD.load(std::sync::atomic::Ordering::SeqCst);
    if fd >= 0 {
        let bytes = message.to_le_bytes();
        // SAFETY: a 4-byte write to a pipe is atomic (under PIPE_BUF); a failure (the guard gone)
        // only leaves sweep unguarded.
        unsafe { libc::write(fd, bytes.as_ptr().cast(), 4) };
    }
}

/// Group `pgid` started: the guard and [`kill_all`] know it from now on.
pub(super) fn opened(pgid: i32) {
    tell_guard(pgid);
    if let Ok(mut g) = GROUPS.lock() {
        g.insert(pgid);
    }
}

/// Group `pgid` was reaped: nothing kills it any more.
pub(super) fn closed(pgid: i32) {
    if let Ok(mut g) = GROUPS.lock() {
        g.remove(&pgid);
    }
    tell_guard(-pgid);
}

/// Whether group `pgid` is one this process started and has not reaped.
pub(super) fn knows(pgid: i32) -> bool {
    GROUPS.lock().is_ok_and(|g| g.contains(&pgid))
}

/// Kills every process group this process started and has not reaped (second Ctrl-C).
pub fn kill_all() {
    let groups = GROUPS.lock().map(|g| g.clone()).unwrap_or_default();
    for pgid in groups {
        kill_group(pgid);
    }
}

pub(super) fn kill_group(pgid: i32) {
    if pgid > 1 {
        // SAFETY: killpg only sends a signal; a stale group id at worst returns ESRCH.
        unsafe {
            libc::killpg(pgid, libc::SIGKILL);
        }
    }
}
