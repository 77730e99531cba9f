//! Rendering within limits: Tera has none of its own, and a template that doubles a string in a
//! loop (`{% set_global s = s ~ s %}`) took every byte of the machine's memory, one with nested
//! `range`s ran for ever. Once [`isolate`] is called (the `sweep` binary does, first thing), every
//! template is rendered in one long-lived worker process, `sweep render-worker`, fed one request
//! per line: its address space is limited to [`MEMORY_LIMIT`], each answer to [`CPU_LIMIT`] of CPU
//! time (a timer of its own) and [`WALL_LIMIT`] of wall-clock time (sweep kills it).
//! A worker that dies or runs out of time is replaced for the next request; the template that
//! did it is named in one line, with the point's values and the limit.
//!
//! Without [`isolate`] (the library's own tests) templates are rendered in this process.

use super::fill::{self, Refusal, Var};
use super::RenderError;
use crate::exec::{Cmd, Exit, Gone, Worker};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// The most memory (address space) rendering may take: an honest header takes a few MiB.
pub const MEMORY_LIMIT: u64 = 1 << 30;
/// The most CPU time one template may take for one point: an honest one takes milliseconds.
/// CPU time, not wall-clock time: on a machine busy with builds a template gets less of the CPU,
/// and the doubling that runs out of memory in a second on an idle machine took over 10 s of
/// wall-clock time on two cores shared by nine.
pub const CPU_LIMIT: Duration = Duration::from_secs(10);
/// The most wall-clock time one template may take for one point, for a worker that gets no CPU.
pub const WALL_LIMIT: Duration = Duration::from_secs(60);

/// The hidden subcommand the worker runs as.
pub const WORKER_COMMAND: &str = "render-worker";

/// One template to render, as sent to the worker on one line.
#[derive(Serialize, Deserialize)]
struct Request {
    text: String,
    vars: Vec<(String, Var)>,
}

/// The worker, once [`isolate`] was called: started at the first template, replaced after one
/// that it died of.
static WORKER: OnceLock<Mutex<Option<Worker>>> = OnceLock::new();

/// From now on, this process renders templates in a worker with limits (see the module's doc).
pub fn isolate() {
    let _ = WORKER.set(Mutex::new(None));
}

/// `text` (template `template`) rendered with `vars`, in the worker if there is one.
pub(super) fn fill(
    template: &str,
    text: &str,
    vars: &[(String, Var)],
    point: &str,
) -> Result<String, RenderError> {
    let Some(worker) = WORKER.get() else {
        return fill::fill(text, vars).map_err(|r| super::refused(template, text, point, r));
    };
    let request = serde_json::to_string(&Request {
        text: text.to_string(),
        vars: vars.to_vec(),
    })
    .map_err(|e| RenderError::Worker {
        template: template.to_string(),
        point: point.to_string(),
        how: format!("could not be sent the template: {e}"),
    })?;
    // One template at a time: each takes milliseconds, and a runaway one holds the others back
    // for CPU_LIMIT of its CPU time (WALL_LIMIT at most).
    let mut slot = worker.lock().unwrap_or_else(|e| e.into_inner());
    let mut tries = 0;
    let answer = loop {
        let w = match slot.as_mut() {
            Some(w) => w,
            None => slot.insert(start()?),
        };
        match w.ask(&request, WALL_LIMIT) {
            Ok(answer) => break answer,
            Err(gone) => {
                *slot = None;
                tries += 1;
                // Killed from outside (SIGKILL by a user or the OOM killer, SIGTERM, SIGHUP),
                // between templates or in this one: no fault of the template's, which a new
                // worker renders. Killed again, it is named.
                if tries == 1 && killed_from_outside(&gone) {
                    continue;
                }
                return Err(why(gone, template, point));
            }
        }
    };
    let reply: Result<String, Refusal> = serde_json::from_str(&answer).map_err(|e| {
        // Out of step with its requests: the next one gets a new worker.
        *slot = None;
        RenderError::Worker {
            template: template.to_string(),
            point: point.to_string(),
            how: format!("answered what is no rendered header: {e}"),
        }
    })?;
    reply.map_err(|r| super::refused(template, text, point, r))
}

/// A new worker: this very binary (`/proc/self/exe`: the one running, even if the file was
/// replaced since), run as `sweep render-worker`.
fn start() -> Result<Worker, RenderError> {
    let own = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("sweep"));
    let program = match std::path::Path::new("/proc/self/exe") {
        p if p.exists() => p.to_path_buf(),
        _ => own.clone(),
    };
    let mut cmd = Cmd::new(program.display().to_string()).arg(WORKER_COMMAND);
    // A worker that runs out of memory says so in one line, not with a backtrace that takes
    // seconds to print.
    cmd.env.insert("RUST_BACKTRACE".into(), "0".into());
    Worker::start(&cmd, &own.display().to_string(), MEMORY_LIMIT).map_err(|source| {
        RenderError::NoWorker {
            program: own.display().to_string(),
            source,
        }
    })
}

/// The memory limit the worker runs under: [`MEMORY_LIMIT`], or sweep's own if it is lower.
fn memory_limit() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills a local struct.
    let own = match unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } {
        0 => lim.rlim_cur,
        _ => u64::MAX,
    };
    MEMORY_LIMIT.min(own)
}

/// Whether the worker was ended by a signal that neither its limits nor the template send: its
/// CPU timer is SIGPROF, running out of memory or stack SIGABRT or SIGSEGV, its wall-clock limit
/// [`Gone::TimedOut`].
fn killed_from_outside(gone: &Gone) -> bool {
    matches!(
        gone,
        Gone::Died {
            exit: Exit::Signal(libc::SIGKILL | libc::SIGTERM | libc::SIGHUP | libc::SIGINT),
            ..
        }
    )
}

/// Bytes in words: `1 GiB`, `512 MiB`.
fn size(bytes: u64) -> String {
    match bytes {
        b if b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b => format!("{} MiB", b >> 20),
    }
}

/// Why the worker gave no header, as the template's error.
fn why(gone: Gone, template: &str, point: &str) -> RenderError {
    let (template, point) = (template.to_string(), point.to_string());
    match gone {
        Gone::TimedOut(limit) => RenderError::TooSlow {
            template,
            point,
            limit: format!("{} s of wall-clock time", limit.as_secs()),
        },
        Gone::Died {
            exit: Exit::Signal(libc::SIGPROF),
            ..
        } => RenderError::TooSlow {
            template,
            point,
            limit: format!("{} s of CPU time", CPU_LIMIT.as_secs()),
        },
        Gone::Died { stderr, .. } if stderr.contains("memory allocation of") => {
            RenderError::TooMuchMemory {
                template,
                point,
                limit: size(memory_limit()),
            }
        }
        Gone::Died { stderr, .. } if stderr.contains("has overflowed its stack") => {
            RenderError::Worker {
                template,
                point,
                how: "overflowed its stack (does a macro call itself without end?)".into(),
            }
        }
        Gone::Died { exit, stderr } => {
            let signal = matches!(exit, Exit::Signal(_));
            let ended = crate::exec::Outcome {
                exit,
                elapsed: Duration::ZERO,
            }
            .describe();
            let ended = if signal {
                format!("was {ended}")
            } else {
                ended
            };
            let last = stderr
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map(|l| format!(": {}", l.trim()))
                .unwrap_or_default();
            RenderError::Worker {
                template,
                point,
                how: format!("{ended}{last}"),
            }
        }
    }
}

/// `sweep render-worker`: renders each request read from stdin (one a line) and writes its
/// answer on one line of stdout, until stdin ends. Exit code 0, or 3 for a line that is no request.
/// (A Ctrl-C meant for sweep does not reach it: it leads a process group of its own.)
pub fn serve() -> i32 {
    let stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lines() {
        let Ok(line) = line else {
            return crate::exit::BAD_INPUT;
        };
        let Ok(req) = serde_json::from_str::<Request>(&line) else {
            eprintln!("error: `{WORKER_COMMAND}` reads rendering requests of sweep's own, one a line (hint: it is no command for people)");
            return crate::exit::BAD_INPUT;
        };
        // Past CPU_LIMIT of CPU time, SIGPROF ends the worker (sweep names the template); so it
        // also ends should sweep die while a template runs away.
        cpu_timer(CPU_LIMIT);
        let reply = fill::fill(&req.text, &req.vars);
        cpu_timer(Duration::ZERO);
        let Ok(answer) = serde_json::to_string(&reply) else {
            return crate::exit::BAD_INPUT;
        };
        if writeln!(stdout, "{answer}")
            .and_then(|_| stdout.flush())
            .is_err()
        {
            return crate::exit::OK;
        }
    }
    crate::exit::OK
}

/// Arms this process's CPU-time timer (ITIMER_PROF: SIGPROF, which ends it, after `limit` of CPU
/// time), or disarms it (zero).
fn cpu_timer(limit: Duration) {
    let zero = libc::timeval {
        tv_sec: 0,
        tv_usec: 0,
    };
    let t = libc::itimerval {
        it_interval: zero,
        it_value: libc::timeval {
            tv_sec: limit.as_secs() as libc::time_t,
            tv_usec: limit.subsec_micros() as libc::suseconds_t,
        },
    };
    // SAFETY: setitimer reads a local struct; the old value is not asked for.
    unsafe {
        libc::setitimer(libc::ITIMER_PROF, &t, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_that_gave_no_header_is_told_by_how_it_ended() {
        let died = |exit, stderr: &str| Gone::Died {
            exit,
            stderr: stderr.into(),
        };
        for (gone, want) in [
            (
                Gone::TimedOut(Duration::from_secs(60)),
                "template `t.h.tera` renders for more than 60 s of wall-clock time for point n=1, the limit of rendering: it was stopped (hint: ",
            ),
            (
                died(Exit::Signal(libc::SIGPROF), ""),
                "template `t.h.tera` renders for more than 10 s of CPU time for point n=1, the limit of rendering: it was stopped (hint: ",
            ),
            (
                died(Exit::Signal(libc::SIGABRT), "memory allocation of 1073741824 bytes failed\n"),
                "template `t.h.tera` needs more than ",
            ),
            (
                died(Exit::Signal(libc::SIGABRT), "\nthread 'main' has overflowed its stack\nfatal runtime error: stack overflow\n"),
                "template `t.h.tera` could not be rendered for point n=1: the renderer overflowed its stack (does a macro call itself without end?) (hint: ",
            ),
            (
                died(Exit::Code(101), "thread 'main' panicked at x.rs:1:2:\nboom\n\n"),
                "template `t.h.tera` could not be rendered for point n=1: the renderer failed with exit code 101: boom (hint: ",
            ),
            (
                died(Exit::Signal(libc::SIGKILL), ""),
                "template `t.h.tera` could not be rendered for point n=1: the renderer was killed by signal 9 (SIGKILL) (hint: ",
            ),
        ] {
            let got = why(gone, "t.h.tera", "n=1").to_string();
            assert!(got.starts_with(want), "{got}");
            assert!(!got.contains('\n'), "one line: {got}");
        }
    }

    #[test]
    fn limits_are_said_in_words() {
        assert_eq!(size(1 << 30), "1 GiB");
        assert_eq!(size(3 << 30), "3 GiB");
        assert_eq!(size(512 << 20), "512 MiB");
        assert!(memory_limit() <= MEMORY_LIMIT);
    }
}
