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

    pub fn describe(&self) -> String {
        match self.exit {
            Exit::Code(c) => format!("exit code {c}"),
            Exit::Signal(s) => format!("killed by signal {s} ({})", signal_name(s)),
            Exit::TimedOut(limit) => format!("timed out after {} s", limit.as_secs_f64()),
        }
    }
}

fn signal_name(s: i32) -> &'static str {
    match s {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGKILL => "SIGKILL",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        _ => "signal",
    }
}
