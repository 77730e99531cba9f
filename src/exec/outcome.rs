//! How a process ended, in words for messages.

use std::time::Duration;

/// How a process ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    /// Killed after this limit.
    TimedOut(Duration),
}

#[derive(Clone, Debug)]
pub struct Outcome {
    pub exit: Exit,
    pub elapsed: Duration,
}

impl Outcome {
    pub fn success(&self) -> bool {
        self.exit == Exit::Code(0)
    }

    /// How it ended, as what follows the name of what ran (`program`, `build`, `ncu`):
    /// `failed with exit code 1`, `killed by signal 11 (SIGSEGV)`, `timed out after 2 s`.
    pub fn describe(&self) -> String {
        match self.exit {
            Exit::Code(c) => format!("failed with exit code {c}"),
            Exit::Signal(s) => match signal_name(s) {
                Some(name) => format!("killed by signal {s} ({name})"),
                None => format!("killed by signal {s}"),
            },
            Exit::TimedOut(limit) => format!("timed out after {} s", limit.as_secs_f64()),
        }
    }
}

/// The name of the signals a crashed or stopped program meets; `None` for the others (their
/// number alone is printed).
fn signal_name(s: i32) -> Option<&'static str> {
    Some(match s {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGKILL => "SIGKILL",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGHUP => "SIGHUP",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGXCPU => "SIGXCPU",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_end_reads_after_the_name_of_what_ran() {
        let cases = [
            (Exit::Code(1), "failed with exit code 1"),
            (Exit::Code(-1), "failed with exit code -1"),
            (Exit::Signal(libc::SIGSEGV), "killed by signal 11 (SIGSEGV)"),
            (Exit::Signal(libc::SIGKILL), "killed by signal 9 (SIGKILL)"),
            // A real-time signal: its number alone.
            (Exit::Signal(40), "killed by signal 40"),
            (
                Exit::TimedOut(Duration::from_secs(2)),
                "timed out after 2 s",
            ),
            (
                Exit::TimedOut(Duration::from_millis(300)),
                "timed out after 0.3 s",
            ),
        ];
        for (exit, want) in cases {
            let o = Outcome {
                exit: exit.clone(),
                elapsed: Duration::ZERO,
            };
            assert_eq!(o.describe(), want, "{exit:?}");
        }
    }
}
