//! A long-lived child that answers one line for each line it is sent, within a memory limit
//! (RLIMIT_AS, set before it starts) and a time limit per answer (then it is killed).
//!
//! Its stdin and stdout are one end of a socket pair: a line sent to a child that died raises no
//! SIGPIPE in sweep (MSG_NOSIGNAL), it fails, and the child's exit says why. The child leads its
//! own process group, so a Ctrl-C meant for sweep does not kill it mid-answer; sweep's end is the
//! end of its stdin, and the guard kills it should sweep die mid-answer.

use super::{Cmd, Exit};
use std::io::{BufRead, Read};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The most of a dead child's stderr kept for its message.
const STDERR_KEPT: u64 = 64 << 10;

/// A started worker.
pub struct Worker {
    child: Child,
    socket: UnixStream,
    /// Each line the child wrote, read by a thread of its own (so an answer can be waited for
    /// with a deadline); closed at the child's end of file.
    lines: mpsc::Receiver<std::io::Result<String>>,
}

/// Why a worker gave no answer: it is gone (killed, or dead), and a new one must be started.
#[derive(Debug)]
pub enum Gone {
    /// No answer within the limit: killed.
    TimedOut(Duration),
    /// It ended: how, and the end of what it wrote on stderr.
    Died { exit: Exit, stderr: String },
}

impl Worker {
    /// Starts `cmd` with its address space limited to `memory` bytes (or the limit sweep already
    /// runs under, if lower), its `argv[0]` (what `ps` shows) `shown_as`.
    pub fn start(cmd: &Cmd, shown_as: &str, memory: u64) -> std::io::Result<Worker> {
        let (socket, theirs) = UnixStream::pair()?;
        let mut c = std::process::Command::new(&cmd.program);
        c.arg0(shown_as)
            .args(&cmd.args)
            .envs(&cmd.env)
            .stdin(Stdio::from(std::os::fd::OwnedFd::from(theirs.try_clone()?)))
            .stdout(Stdio::from(std::os::fd::OwnedFd::from(theirs)))
            .stderr(Stdio::piped())
            .process_group(0);
        if let Some(dir) = &cmd.cwd {
            c.current_dir(dir);
        }
        // No PR_SET_PDEATHSIG: it fires when the thread that started the child ends, and a
        // worker outlives the build thread that may start it. A worker sees sweep's end as the
        // end of its stdin, and bounds its own time per answer.
        // SAFETY: getrlimit and setrlimit are async-signal-safe.
        unsafe {
            c.pre_exec(move || {
                let mut lim = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                if libc::getrlimit(libc::RLIMIT_AS, &mut lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                lim.rlim_cur = lim.rlim_cur.min(memory as libc::rlim_t);
                if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = super::tree::own(|| c.spawn(), |c| vec![c.id() as i32])?;
        // The guard kills it should sweep die (SIGKILL included) while it renders: it would
        // otherwise render on to the end of its CPU time, minutes on a busy machine.
        super::guard::opened(child.id() as i32);
        // `c` goes here, and with it sweep's copies of the child's end: the child's death is an
        // end of file.
        drop(c);
        let (tx, lines) = mpsc::channel();
        let mut reader = std::io::BufReader::new(socket.try_clone()?);
        let reading = super::thread(move || loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) => break,
                Ok(_) => {
                    if tx.send(Ok(line)).is_err() {
                        break;
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                    break;
                }
            }
        });
        if let Err(e) = reading {
            // No thread to read its answers (EAGAIN at a memory or process limit): the worker
            // goes, reaped here, and the render fails as the environment's.
            let mut child = child;
            let _ = child.kill();
            let _ = child.wait();
            super::tree::disown(child.id() as i32);
            super::guard::closed(child.id() as i32);
            return Err(e);
        }
        Ok(Worker {
            child,
            socket,
            lines,
        })
    }

    /// Sends `line` (one line, no newline in it) and waits at most `timeout` for the answer's line.
    pub fn ask(&mut self, line: &str, timeout: Duration) -> Result<String, Gone> {
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        let mut sent = 0;
        while sent < bytes.len() {
            // SAFETY: sends from a live buffer on a socket we own; no SIGPIPE.
            let n = unsafe {
                libc::send(
                    self.socket.as_raw_fd(),
                    bytes[sent..].as_ptr().cast(),
                    bytes.len() - sent,
                    libc::MSG_NOSIGNAL,
                )
            };
            if n < 0 {
                if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                // The child is gone: its exit says why.
                return Err(self.died());
            }
            sent += n as usize;
        }
        match self.lines.recv_timeout(timeout) {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(_)) | Err(mpsc::RecvTimeoutError::Disconnected) => Err(self.died()),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                self.kill();
                Err(Gone::TimedOut(timeout))
            }
        }
    }

    /// How the child ended (waited for; killed first if it still runs), and the end of its stderr.
    fn died(&mut self) -> Gone {
        // Its end of the socket closed: it has ended, or is ending; one that lingers is killed.
        for _ in 0..100 {
            if !matches!(self.child.try_wait(), Ok(None)) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if matches!(self.child.try_wait(), Ok(None)) {
            self.kill();
        }
        let status = self.child.wait();
        super::tree::disown(self.child.id() as i32);
        super::guard::closed(self.child.id() as i32);
        let mut stderr = String::new();
        if let Some(err) = self.child.stderr.as_mut() {
            let _ = err.take(STDERR_KEPT).read_to_string(&mut stderr);
        }
        let exit = match status {
            Ok(s) => match (s.code(), s.signal()) {
                (Some(c), _) => Exit::Code(c),
                (None, Some(sig)) => Exit::Signal(sig),
                _ => Exit::Code(-1),
            },
            Err(_) => Exit::Code(-1),
        };
        Gone::Died { exit, stderr }
    }

    /// Kills its whole group (what it started too, which may hold its socket) and reaps it.
    fn kill(&mut self) {
        super::guard::kill_group(self.child.id() as i32);
        let _ = self.child.wait();
        super::tree::disown(self.child.id() as i32);
        super::guard::closed(self.child.id() as i32);
    }
}

impl Drop for Worker {
    /// A worker is not left behind: killed and reaped (it has no children of its own).
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.kill();
        } else {
            super::tree::disown(self.child.id() as i32);
            super::guard::closed(self.child.id() as i32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Cmd {
        Cmd::new("sh").args(["-c", script])
    }

    #[test]
    fn a_worker_answers_line_by_line_and_is_killed_past_its_time() {
        let mut w = Worker::start(
            &sh("while read l; do if [ \"$l\" = hang ]; then sleep 30; fi; echo \"got $l\"; done"),
            "sh",
            1 << 30,
        )
        .unwrap();
        assert_eq!(w.ask("a", Duration::from_secs(5)).unwrap(), "got a\n");
        assert_eq!(w.ask("b", Duration::from_secs(5)).unwrap(), "got b\n");
        let t0 = std::time::Instant::now();
        let gone = w.ask("hang", Duration::from_millis(300)).unwrap_err();
        assert!(matches!(gone, Gone::TimedOut(_)), "{gone:?}");
        assert!(t0.elapsed() < Duration::from_secs(5));
        // Killed: asked again, it says it is gone, and sweep gets no SIGPIPE.
        let gone = w.ask("c", Duration::from_secs(5)).unwrap_err();
        assert!(
            matches!(
                gone,
                Gone::Died {
                    exit: Exit::Signal(libc::SIGKILL),
                    ..
                }
            ),
            "{gone:?}"
        );
    }

    #[test]
    fn a_worker_that_dies_says_how_with_its_stderr() {
        let mut w =
            Worker::start(&sh("read l; echo \"no: $l\" >&2; exit 7"), "sh", 1 << 30).unwrap();
        match w.ask("x", Duration::from_secs(5)).unwrap_err() {
            Gone::Died { exit, stderr } => {
                assert_eq!(exit, Exit::Code(7));
                assert_eq!(stderr, "no: x\n");
            }
            gone => panic!("{gone:?}"),
        }
    }

    #[test]
    fn a_worker_runs_under_its_memory_limit() {
        let mut w = Worker::start(&sh("read l; ulimit -v"), "sh", 300 << 20).unwrap();
        let kib: u64 = w
            .ask("x", Duration::from_secs(5))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(kib, 300 << 10);
    }
}
