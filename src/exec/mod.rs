//! The one module that starts processes (through duct).
//!
//! Commands are values ([`Cmd`]): built elsewhere, run here, logged with their exact command line.
//! Every child leads its own process group, and the whole group is killed when it times out,
//! when it exits (no orphaned grandchildren), and on the second Ctrl-C; what it started out of its
//! group (`setsid`) is found by its mark and killed too (`tree.rs`).
//!
//! `cmd.rs` holds the command values, `outcome.rs` how a process ended, `guard.rs` the process
//! groups and the guard that outlives sweep, `tree.rs` what a command left outside its group,
//! `worker.rs` a child that answers line by line within limits (the Tera renderer); this file
//! starts, gates, waits for and captures.

mod cmd;
mod guard;
mod outcome;
mod tree;
mod worker;

pub use cmd::Cmd;
pub mod confine;
pub use guard::{kill_all, start_guard};
pub use outcome::{Exit, Outcome};
pub use tree::{disown, own, TREE_ENV};
pub use worker::{Gone, Worker};

use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Where a command's output goes.
pub enum Sink<'a> {
    /// stdout and stderr to two files.
    Split { stdout: &'a Path, stderr: &'a Path },
    /// both into one log file, after a first line `$ <command line>`.
    Merged(&'a Path),
}

#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("`{program}` not found (hint: put it on PATH or name it with a full path)")]
    NotFound { program: String },
    #[error("cannot start `{line}`: {source}")]
    Spawn {
        line: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot start `{line}`: cannot write log `{}`: {source}", log.display())]
    Log {
        line: String,
        log: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Starts `cmd` (ungated) and waits for its end or `timeout`, with its output in `sink`.
pub fn start_and_wait(cmd: &Cmd, timeout: Duration, sink: Sink) -> Result<Outcome, ExecError> {
    start(cmd, sink, false)?.wait(timeout)
}

/// [`start_and_wait`], also ended (its group killed, [`Exit::Signal`] SIGKILL) as soon as `stop`
/// says so: a build that an interrupted sweep will not use is not waited for (a SIGTERM waited
/// up to the build timeout, past Slurm's grace before its SIGKILL).
pub fn start_and_wait_unless(
    cmd: &Cmd,
    timeout: Duration,
    sink: Sink,
    stop: &dyn Fn() -> bool,
) -> Result<Outcome, ExecError> {
    start(cmd, sink, false)?.wait_unless(timeout, stop)
}

/// The file descriptor on which a gated child finds its start gate.
pub const GATE_FD: i32 = 3;

/// A started child. A gated child has `SWEEP_GATE_FD=3` in its environment: the timing core
/// creates its CUDA context, then blocks reading fd 3 until [`Started::go`], so its start-up can
/// overlap the previous point's measurement while no two measurements share the GPU.
pub struct Started {
    done: mpsc::Receiver<()>,
    waiter: Option<std::thread::JoinHandle<Option<std::io::Result<std::process::ExitStatus>>>>,
    pgid: i32,
    /// The value of [`TREE_ENV`] that the child and everything it starts carry.
    mark: String,
    gate: Option<std::fs::File>,
    go_at: Option<Instant>,
}

/// A thread of sweep's own (a child's waiter, a worker), with a small stack; an error, not a
/// panic, where none can be started (EAGAIN: the address space or the process count is at its
/// limit).
pub fn thread<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<T>> {
    std::thread::Builder::new().stack_size(256 << 10).spawn(f)
}

/// Starts `cmd` without waiting for it.
pub fn start(cmd: &Cmd, sink: Sink, gated: bool) -> Result<Started, ExecError> {
    let spawn_err = |source: std::io::Error| ExecError::Spawn {
        line: cmd.line(),
        source,
    };
    tree::become_subreaper();
    // The thread that waits for the child starts before the child does: where no thread can be
    // had (EAGAIN under a memory or process limit), no child is left without its waiter.
    let (give, handed) = mpsc::channel::<duct::Handle>();
    let (tx, done) = mpsc::channel();
    let waiter = thread(move || {
        let handle = handed.recv().ok()?;
        let status = handle.wait().map(|o| o.status);
        let _ = tx.send(());
        Some(status)
    })
    .map_err(spawn_err)?;
    let mark = tree::new_mark();
    let mut expr = duct::cmd(&cmd.program, &cmd.args).unchecked().stdin_null();
    for (k, v) in &cmd.env {
        expr = expr.env(k, v);
    }
    // Not in `cmd.env`: no part of the logged line, nor of a build's cache key.
    expr = expr.env(tree::TREE_ENV, &mark);
    // Where its output goes: a confined command may write there too (made by then).
    let logs: Vec<std::path::PathBuf> = match &sink {
        Sink::Merged(log) => vec![log.to_path_buf()],
        Sink::Split { stdout, stderr } => vec![stdout.to_path_buf(), stderr.to_path_buf()],
    };
    if let Some(dir) = &cmd.cwd {
        expr = expr.dir(dir);
    }
    expr = match sink {
        Sink::Split { stdout, stderr } => expr.stdout_path(stdout).stderr_path(stderr),
        Sink::Merged(log) => {
            let mut file = std::fs::File::create(log).map_err(|source| ExecError::Log {
                line: cmd.line(),
                log: log.to_path_buf(),
                source,
            })?;
            let _ = writeln!(file, "$ {}", cmd.line());
            expr.stderr_to_stdout().stdout_file(file)
        }
    };
    // A confined command writes beneath its folder alone, its temporary files too.
    let rules = match &cmd.confine {
        Some(dir) => {
            let tmp = dir.join("tmp");
            std::fs::create_dir_all(&tmp).map_err(spawn_err)?;
            expr = expr.env("TMPDIR", &tmp);
            let logs: Vec<&std::path::Path> = logs
                .iter()
                .map(std::path::PathBuf::as_path)
                .filter(|l| l.exists())
                .collect();
            confine::ruleset(dir, &logs).map_err(spawn_err)?
        }
        None => None,
    };
    let rules_fd = rules.as_ref().map_or(-1, std::os::fd::AsRawFd::as_raw_fd);
    // The gate: a socket pair whose one end the child finds as fd 3 (a socket, not a pipe, so
    // that opening the gate of a child that already died cannot raise SIGPIPE in sweep).
    let (gate_read, gate) = if gated {
        let mut fds = [0i32; 2];
        // SAFETY: socketpair fills two new descriptors, both close-on-exec.
        let made = unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        };
        if made != 0 {
            return Err(spawn_err(std::io::Error::last_os_error()));
        }
        expr = expr.env("SWEEP_GATE_FD", GATE_FD.to_string());
        // SAFETY: fds[1] is a new descriptor that nothing else owns.
        (
            fds[0],
            Some(unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fds[1]) }),
        )
    } else {
        (-1, None)
    };
    let nice = cmd.nice;
    let expr = expr.before_spawn(move |c| {
        c.process_group(0);
        // SAFETY: prctl, dup2 and fcntl are async-signal-safe. If sweep itself is killed
        // (SIGKILL included), the kernel kills the child too instead of leaving it orphaned.
        unsafe {
            c.pre_exec(move || {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if nice != 0 {
                    // Best effort: a failure leaves the child at sweep's own priority.
                    libc::setpriority(
                        libc::PRIO_PROCESS,
                        0,
                        libc::getpriority(libc::PRIO_PROCESS, 0) + nice,
                    );
                }
                if rules_fd >= 0 {
                    confine::enforce(rules_fd)?;
                }
                if gate_read >= 0 {
                    if gate_read == GATE_FD {
                        libc::fcntl(GATE_FD, libc::F_SETFD, 0);
                    } else if libc::dup2(gate_read, GATE_FD) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        Ok(())
    });
    let started = tree::own(|| expr.start(), pids);
    drop(rules);
    if gate_read >= 0 {
        // SAFETY: the parent's copy of the read end is ours to close.
        unsafe { libc::close(gate_read) };
    }
    let handle = started.map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            ExecError::NotFound {
                program: cmd.program.clone(),
            }
        } else {
            spawn_err(e)
        }
    })?;
    let pgid = handle.pids().first().map(|p| *p as i32).unwrap_or(0);
    guard::opened(pgid);
    tree::started();
    let _ = give.send(handle);
    Ok(Started {
        done,
        waiter: Some(waiter),
        pgid,
        mark,
        gate,
        go_at: None,
    })
}

impl Started {
    /// Opens the gate: the child may measure now. Its timeout counts from here.
    pub fn go(&mut self) {
        if self.go_at.is_some() {
            return;
        }
        if let Some(gate) = self.gate.take() {
            // A child that already died makes this fail; its exit tells what happened.
            // SAFETY: sends one byte from a live buffer on a socket we own; no SIGPIPE.
            unsafe {
                libc::send(
                    gate.as_raw_fd(),
                    b"g".as_ptr().cast(),
                    1,
                    libc::MSG_NOSIGNAL,
                );
            }
        }
        self.go_at = Some(Instant::now());
    }

    /// Waits for the child's end, at most `timeout` after [`Started::go`] (or the start); then
    /// kills its whole process group, whatever it left behind included.
    pub fn wait(self, timeout: Duration) -> Result<Outcome, ExecError> {
        self.wait_unless(timeout, &|| false)
    }

    /// [`Started::wait`], and kills the child's group as soon as `stop` says so (looked at every
    /// 50 ms); its exit then reads as the SIGKILL it got.
    pub fn wait_unless(
        mut self,
        timeout: Duration,
        stop: &dyn Fn() -> bool,
    ) -> Result<Outcome, ExecError> {
        self.go();
        let go_at = self.go_at.unwrap_or_else(Instant::now);
        let deadline = go_at + timeout;
        let mut timed_out = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.done.recv_timeout(left.min(Duration::from_millis(50))) {
                Err(mpsc::RecvTimeoutError::Timeout) if left > Duration::from_millis(50) => {
                    if stop() {
                        guard::kill_group(self.pgid);
                        let _ = self.done.recv();
                        break false;
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => break true,
                _ => break false,
            }
        };
        if timed_out && ended(self.pgid) {
            // sweep itself was stopped past the deadline (SIGSTOP, Ctrl-Z and `fg`) and the
            // program was not: it ended in time, and its waiter is about to say so.
            timed_out = self.done.recv_timeout(Duration::from_secs(5)).is_err();
        }
        if timed_out {
            guard::kill_group(self.pgid);
        }
        let status = self
            .waiter
            .take()
            .and_then(|w| w.join().ok())
            .flatten()
            .and_then(|r| r.ok());
        let elapsed = go_at.elapsed();
        let exit = if timed_out {
            Exit::TimedOut(timeout)
        } else {
            match status {
                Some(s) => match (s.code(), s.signal()) {
                    (Some(c), _) => Exit::Code(c),
                    (None, Some(sig)) => Exit::Signal(sig),
                    _ => Exit::Code(-1),
                },
                None => Exit::Code(-1),
            }
        };
        Ok(Outcome { exit, elapsed })
    }
}

impl Drop for Started {
    /// The leader is gone or abandoned; whatever is left in its group goes too, and what it
    /// started out of its group (its mark tells).
    fn drop(&mut self) {
        guard::kill_group(self.pgid);
        if let Some(w) = self.waiter.take() {
            let _ = w.join();
        }
        tree::disown(self.pgid);
        tree::kill_left_behind(&self.mark);
        guard::closed(self.pgid);
    }
}

/// Whether child `pid` has ended: a zombie not reaped yet (looked at, left for its waiter), or
/// already reaped by it.
fn ended(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: waitid fills the zeroed struct it is given; WNOWAIT leaves the child unreaped.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let r = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    if r != 0 {
        return std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD);
    }
    // SAFETY: si_pid is set by a successful waitid (0 when no child has changed state).
    unsafe { info.si_pid() != 0 }
}

/// The pids of a started duct expression (one: sweep runs no pipelines).
fn pids(h: &duct::Handle) -> Vec<i32> {
    h.pids().into_iter().map(|p| p as i32).collect()
}

/// The file `name` in the first folder of PATH that has it.
pub fn on_path(name: &str) -> Option<std::path::PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// How long a short query ([`query`]) may take: `hostname`, `git`, `nvidia-smi`.
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs a short query (like `hostname`) and returns its stdout, or None when it fails or takes
/// longer than [`QUERY_TIMEOUT`].
pub fn query(program: &str, args: &[&str]) -> Option<String> {
    query_within(program, args, QUERY_TIMEOUT).ok()
}

/// [`query_within`] of a program the spec names (the compiler's `--version`), confined as its
/// builds are (see [`confine`]): to a fresh folder under TMPDIR, removed after, where it may
/// write alone. (Review 13: a compiler wrapper wrote outside the output folder while it
/// answered `--version`, which no build's confinement covered.) Where that folder cannot be
/// made (TMPDIR full or read-only), the query runs as before.
pub fn query_confined(program: &str, args: &[&str], timeout: Duration) -> Result<String, NoAnswer> {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    // Under TMPDIR where it is an absolute folder that exists, else /tmp; only the query's own
    // folder is made (review 14a F5: a TMPDIR that did not exist was made, folders and all).
    let tmp = std::env::temp_dir();
    let base = if tmp.is_absolute() && tmp.is_dir() {
        tmp
    } else {
        std::path::PathBuf::from("/tmp")
    };
    // Named by this process among all sweeps ([`crate::owner`]), a name that is there already
    // (planted, a killed sweep's) skipped: the query ran unconfined in it (review 16a A7).
    let mut made = None;
    for _ in 0..100 {
        let dir = base.join(format!(
            "sweep-query-{}-{}",
            crate::owner::owner(),
            N.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        ));
        match std::fs::create_dir(&dir) {
            Ok(()) => made = Some(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(_) => {}
        }
        break;
    }
    let confined = made.is_some();
    let dir = made.unwrap_or_default();
    if confined {
        if let Ok(mut dirs) = QUERY_DIRS.lock() {
            dirs.push(dir.clone());
        }
    }
    let answer = query_in(program, args, timeout, confined.then_some(dir.as_path()));
    if confined {
        let _ = std::fs::remove_dir_all(&dir);
        if let Ok(mut dirs) = QUERY_DIRS.lock() {
            dirs.retain(|d| *d != dir);
        }
    }
    answer
}

/// The folders of the confined queries under way ([`query_confined`]).
static QUERY_DIRS: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Removes the folders of the confined queries under way: sweep is ending at once (an interrupt
/// before the run has its folder), and the query would not remove its own (review 15 F4: a Ctrl-C
/// during the compiler's `--version` left `sweep-query-<pid>-<n>/` under TMPDIR).
pub fn remove_query_folders() {
    let dirs = QUERY_DIRS
        .lock()
        .map(|mut d| std::mem::take(&mut *d))
        .unwrap_or_default();
    for dir in dirs {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Why a [`query_within`] gave no answer.
#[derive(Debug, PartialEq)]
pub enum NoAnswer {
    /// It is on no path (not found).
    NotFound,
    /// It was found but could not start (too many open files, no memory, not executable):
    /// the operating system's reason.
    CannotStart(String),
    /// It exited non-zero (or was killed).
    Failed,
    /// It ran past its limit; its process group was killed.
    TimedOut(Duration),
}

/// Runs a short query (like `nvcc --version`) in a process group of its own, as every child of
/// sweep, and returns its stdout. Past `timeout` the group is killed: a compiler that hangs on
/// `--version` (a wrapper waiting on a licence server, a toolkit on a stuck network mount) hung
/// sweep before its first point, and a second Ctrl-C left it running orphaned.
pub fn query_within(program: &str, args: &[&str], timeout: Duration) -> Result<String, NoAnswer> {
    query_in(program, args, timeout, None)
}

/// [`query_within`], confined to write beneath `confine` (and TMPDIR there) when given.
fn query_in(
    program: &str,
    args: &[&str],
    timeout: Duration,
    confine: Option<&std::path::Path>,
) -> Result<String, NoAnswer> {
    // std's Command, not duct's capture: that reads the pipe on a thread of its own, which
    // panicked where no thread could be had (review 12a H2, EAGAIN under `ulimit -v`); the
    // waiter, started first, reads it here.
    let mut c = std::process::Command::new(program);
    c.args(args)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .process_group(0);
    let rules = match confine {
        Some(dir) => {
            c.env("TMPDIR", dir);
            confine::ruleset(dir, &[]).map_err(|e| NoAnswer::CannotStart(e.to_string()))?
        }
        None => None,
    };
    let rules_fd = rules.as_ref().map_or(-1, std::os::fd::AsRawFd::as_raw_fd);
    // SAFETY: prctl and the confinement's two calls are async-signal-safe; the child dies with
    // sweep, SIGKILL included.
    unsafe {
        c.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if rules_fd >= 0 {
                confine::enforce(rules_fd)?;
            }
            Ok(())
        });
    }
    let (give, handed) = mpsc::channel::<std::process::Child>();
    let (tx, done) = mpsc::channel();
    let waiter = thread(move || {
        let out = handed.recv().ok()?.wait_with_output();
        let _ = tx.send(());
        Some(out)
    })
    .map_err(|e| NoAnswer::CannotStart(e.to_string()))?;
    let child = tree::own(|| c.spawn(), |c| vec![c.id() as i32]);
    drop(rules);
    let child = child.map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => NoAnswer::NotFound,
        _ => NoAnswer::CannotStart(e.to_string()),
    })?;
    let pgid = child.id() as i32;
    guard::opened(pgid);
    let _ = give.send(child);
    let timed_out = done.recv_timeout(timeout).is_err();
    // Whatever it left in its group goes too (a grandchild holding its stdout included).
    guard::kill_group(pgid);
    let out = waiter.join().ok().flatten().and_then(|r| r.ok());
    tree::disown(pgid);
    guard::closed(pgid);
    match (timed_out, out) {
        (true, _) => Err(NoAnswer::TimedOut(timeout)),
        (false, Some(out)) if out.status.success() => {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        }
        _ => Err(NoAnswer::Failed),
    }
}

/// What a short command printed, and its exit code (None: killed by a signal).
#[derive(Clone, Debug)]
pub struct Captured {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs a short command (like `sbatch`) to its end, keeping stdout and stderr: unlike
/// [`query`], the caller can say why it failed.
pub fn capture(cmd: &Cmd) -> Result<Captured, ExecError> {
    // std's Command reads both pipes on this thread (poll); duct's capture wants a thread each.
    let mut c = std::process::Command::new(&cmd.program);
    c.args(&cmd.args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (k, v) in &cmd.env {
        c.env(k, v);
    }
    if let Some(dir) = &cmd.cwd {
        c.current_dir(dir);
    }
    let out = tree::own(|| c.spawn(), |c| vec![c.id() as i32]).and_then(|child| {
        let pid = child.id() as i32;
        let out = child.wait_with_output();
        tree::disown(pid);
        out
    });
    let out = out.map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ExecError::NotFound {
            program: cmd.program.clone(),
        },
        _ => ExecError::Spawn {
            line: cmd.line(),
            source: e,
        },
    })?;
    Ok(Captured {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nice_command_runs_at_a_lower_priority() {
        let tmp = tempfile::tempdir().unwrap();
        let log = tmp.path().join("log");
        // SAFETY: getpriority only reads this process's niceness.
        let ours = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
        let out = start_and_wait(
            &Cmd::new("nice").nice(7),
            Duration::from_secs(10),
            Sink::Merged(&log),
        )
        .unwrap();
        assert!(out.success());
        let text = std::fs::read_to_string(&log).unwrap();
        let printed: i32 = text.lines().last().unwrap().trim().parse().unwrap();
        assert_eq!(printed, (ours + 7).min(19), "{text}");
    }

    #[test]
    fn timeout_kills_the_whole_group() {
        let tmp = tempfile::tempdir().unwrap();
        let pidfile = tmp.path().join("child.pid");
        // The shell starts a grandchild that would outlive a plain kill of the shell.
        let script = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
        let log = tmp.path().join("log");
        let out = start_and_wait(
            &Cmd::new("sh").args(["-c", &script]),
            Duration::from_millis(300),
            Sink::Merged(&log),
        )
        .unwrap();
        assert_eq!(out.exit, Exit::TimedOut(Duration::from_millis(300)));
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        std::thread::sleep(Duration::from_millis(100));
        // Gone, or a zombie waiting for its new parent to reap it: either way not running.
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .next()
            .unwrap_or("");
        let alive = !stat.is_empty() && state != "Z" && state != "X";
        assert!(!alive, "grandchild {pid} survived the timeout");
    }

    /// Whether `pid` runs (not gone, not a zombie).
    fn running(pid: i32) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .next();
        !stat.is_empty() && !matches!(state, Some("Z" | "X"))
    }

    /// The pid a script wrote into `file`, waited for (5 s at most).
    fn pid_in(file: &Path) -> i32 {
        let until = Instant::now() + Duration::from_secs(5);
        loop {
            let text = std::fs::read_to_string(file).unwrap_or_default();
            if let Ok(pid) = text.trim().parse() {
                return pid;
            }
            assert!(Instant::now() < until, "no pid in {}", file.display());
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn what_a_program_started_out_of_its_group_dies_with_it_and_a_neighbours_lives() {
        if on_path("setsid").is_none() {
            return eprintln!("SKIPPED: no setsid on PATH");
        }
        let tmp = tempfile::tempdir().unwrap();
        let (log_a, log_b) = (tmp.path().join("a.log"), tmp.path().join("b.log"));
        let (pid_a, pid_b) = (tmp.path().join("a.pid"), tmp.path().join("b.pid"));
        // A neighbour still running (a build beside the point), with its own escaped child.
        let a = start(
            &Cmd::new("sh").args([
                "-c",
                &format!("setsid sleep 1001 & echo $! > {}; wait", pid_a.display()),
            ]),
            Sink::Merged(&log_a),
            false,
        )
        .unwrap();
        let neighbours = pid_in(&pid_a);
        // The point: starts a daemon in a session of its own, and exits at once.
        let out = start_and_wait(
            &Cmd::new("sh").args([
                "-c",
                &format!("setsid sleep 1002 & echo $! > {}", pid_b.display()),
            ]),
            Duration::from_secs(10),
            Sink::Merged(&log_b),
        )
        .unwrap();
        assert_eq!(out.exit, Exit::Code(0));
        let left = pid_in(&pid_b);
        assert!(
            !running(left),
            "the point's `setsid sleep` {left} outlived it"
        );
        assert!(
            running(neighbours),
            "a neighbour's process {neighbours} was killed"
        );
        drop(a);
        assert!(
            !running(neighbours),
            "the neighbour's `setsid sleep` outlived it"
        );
    }

    #[test]
    fn opening_the_gate_of_a_dead_child_is_harmless() {
        // As in `sweep` itself, where SIGPIPE has its default disposition (it would kill us).
        // SAFETY: sets one signal's disposition.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
        let tmp = tempfile::tempdir().unwrap();
        let log = tmp.path().join("log");
        let mut child = start(
            &Cmd::new("sh").args(["-c", "exit 7"]),
            Sink::Merged(&log),
            true,
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(200));
        child.go();
        assert_eq!(
            child.wait(Duration::from_secs(5)).unwrap().exit,
            Exit::Code(7)
        );
    }

    #[test]
    fn a_gated_child_waits_for_go() {
        let tmp = tempfile::tempdir().unwrap();
        let (log, mark) = (tmp.path().join("log"), tmp.path().join("went"));
        let script = format!(
            "head -c 1 <&$SWEEP_GATE_FD >/dev/null; touch {}",
            mark.display()
        );
        let mut child = start(
            &Cmd::new("sh").args(["-c", &script]),
            Sink::Merged(&log),
            true,
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(300));
        assert!(!mark.exists(), "the child went before the gate opened");
        child.go();
        assert_eq!(
            child.wait(Duration::from_secs(5)).unwrap().exit,
            Exit::Code(0)
        );
        assert!(mark.exists());
    }

    #[test]
    fn exit_codes_and_signals_are_told_apart() {
        let tmp = tempfile::tempdir().unwrap();
        let log = tmp.path().join("log");
        let code = start_and_wait(
            &Cmd::new("sh").args(["-c", "exit 3"]),
            Duration::from_secs(5),
            Sink::Merged(&log),
        )
        .unwrap();
        assert_eq!(code.exit, Exit::Code(3));
        let sig = start_and_wait(
            &Cmd::new("sh").args(["-c", "kill -SEGV $$"]),
            Duration::from_secs(5),
            Sink::Merged(&log),
        )
        .unwrap();
        assert_eq!(sig.exit, Exit::Signal(libc::SIGSEGV));
        let missing = start_and_wait(
            &Cmd::new("no-such-program-xyz"),
            Duration::from_secs(5),
            Sink::Merged(&log),
        )
        .unwrap_err();
        assert_eq!(
            missing.to_string(),
            "`no-such-program-xyz` not found (hint: put it on PATH or name it with a full path)"
        );
    }
}
