//! Stage `run`: runs a built program for one point, its output kept in the point's folder.

use crate::exec::{self, Cmd, Sink};
use crate::spec::Spec;
use std::path::Path;

pub const STDOUT: &str = "stdout.txt";
pub const STDERR: &str = "stderr.txt";

/// The program's command: the binary and the spec's `args`, in the point's folder, with the
/// spec's environment (its `[timing]` included) and, when a GPU is named, only that GPU visible.
pub fn command(spec: &Spec, binary: &Path, point_dir: &Path, gpu: Option<&str>) -> Cmd {
    let mut cmd = Cmd::new(binary.display().to_string()).args(spec.args.iter().cloned());
    cmd.env = spec.env.clone();
    if let Some(g) = gpu {
        cmd.env.insert("CUDA_VISIBLE_DEVICES".into(), g.to_string());
    }
    cmd.cwd = Some(point_dir.to_path_buf());
    cmd
}

pub fn run(cmd: &Cmd, spec: &Spec, point_dir: &Path) -> Result<exec::Outcome, exec::ExecError> {
    exec::run(
        cmd,
        spec.run_timeout,
        Sink::Split {
            stdout: &point_dir.join(STDOUT),
            stderr: &point_dir.join(STDERR),
        },
    )
}

/// The last non-empty line of the program's stderr, for one-line messages.
pub fn last_error_line(point_dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(point_dir.join(STDERR)).ok()?;
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| l.chars().take(200).collect())
}
