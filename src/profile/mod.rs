//! Stage `profile` (opt-in, `[profile]` in a spec): why a curve steps. After a point's timed run,
//! never during it, its binary runs once more under Nsight Compute (`ncu`) in the timing core's
//! profile mode (one call per metric inside an NVTX range), and the counters land in the point's
//! row as `<metric>__<counter>` columns; while it measures, the GPU's power and SM clock are
//! sampled (nvidia-smi) into per-point columns, and with `metric_power_ms` a power pass gives each
//! metric its own watts and value per watt.
//!
//! - the `[profile]` table, its presets and the columns it adds: [`crate::spec::profile`].
//! - [`ncu`]: the ncu command, and its CSV read back into per-metric counters.
//! - [`power`]: power and clock samples, behind a trait (nvidia-smi on a GPU host, a fake in tests).
//! - [`metric_power`]: `metric_power_ms`, each metric's own watts from a power pass of the program.

pub mod metric_power;
pub mod ncu;
pub mod power;

pub use crate::spec::profile::Profile;

use crate::exec::{Cmd, Exit, Outcome, Sink};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why an extra pass of a measured point (under ncu, or the power pass) gave nothing: its
/// program could not start, timed out or failed; named as the pass, with its stderr log.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    #[error(transparent)]
    Start(#[from] crate::exec::ExecError),
    #[error("{name} timed out after {} s ({}log: {})", after.as_secs_f64(), hint.as_ref().map(|h| format!("hint: {h}; ")).unwrap_or_default(), log.display())]
    TimedOut {
        name: String,
        after: Duration,
        hint: Option<String>,
        log: PathBuf,
    },
    #[error("{name} {} (log: {})", outcome.describe(), log.display())]
    Failed {
        name: String,
        outcome: Outcome,
        log: PathBuf,
    },
}

/// Runs the program of an extra pass of a measured point (under ncu, or the power pass) to its end
/// within `limit`, its stdout and stderr into two files. When it cannot start, times out or fails,
/// says why: the pass named as `name`, a time-out with `timeout_hint` when there is one, and the
/// stderr file as the log.
pub fn run_program(
    cmd: &Cmd,
    limit: Duration,
    stdout: &Path,
    stderr: &Path,
    name: &str,
    timeout_hint: Option<&str>,
) -> Result<(), PassError> {
    let outcome = crate::exec::start_and_wait(cmd, limit, Sink::Split { stdout, stderr })?;
    if let Exit::TimedOut(after) = outcome.exit {
        return Err(PassError::TimedOut {
            name: name.to_string(),
            after,
            hint: timeout_hint.map(str::to_string),
            log: stderr.to_path_buf(),
        });
    }
    if !outcome.success() {
        return Err(PassError::Failed {
            name: name.to_string(),
            outcome,
            log: stderr.to_path_buf(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words of a pass that fails or times out: the pass's name, the hint, the stderr log.
    #[test]
    fn a_pass_that_fails_or_times_out_says_so_with_its_log() {
        let tmp = tempfile::tempdir().unwrap();
        let (out, err) = (tmp.path().join("out.txt"), tmp.path().join("err.txt"));
        let run = |script: &str, name: &str, hint: Option<&str>| {
            let cmd = Cmd::new("sh").args(["-c", script]);
            run_program(&cmd, Duration::from_millis(300), &out, &err, name, hint)
                .map_err(|e| e.to_string())
        };
        let log = err.display();
        assert_eq!(run("exit 0", "ncu", None), Ok(()));
        assert_eq!(
            run("exit 1", "the power pass", None),
            Err(format!(
                "the power pass failed with exit code 1 (log: {log})"
            ))
        );
        assert_eq!(
            run("exec sleep 5", "the power pass", None),
            Err(format!("the power pass timed out after 0.3 s (log: {log})"))
        );
        assert_eq!(
            run(
                "exec sleep 5",
                "ncu",
                Some("a longer `[profile] timeout_s`")
            ),
            Err(format!(
                "ncu timed out after 0.3 s (hint: a longer `[profile] timeout_s`; log: {log})"
            ))
        );
    }
}
