//! Stage `run`: runs a built program for one point, its output kept in the point's folder.

use crate::exec::{self, Cmd, Sink};
use crate::spec::Spec;
use std::path::Path;

pub const STDOUT: &str = "stdout.txt";
pub const STDERR: &str = "stderr.txt";

/// Hardware work queues of a timing-core program's CUDA context, unless the spec's `[env]` or
/// sweep's own environment sets `CUDA_DEVICE_MAX_CONNECTIONS`. The timing core times work on the
/// legacy default stream only, which uses one queue; the driver's default of 8 makes every context
/// creation cost more (H200, 2 GPUs: 103 -> 54 ms, and 4.15 -> 7.08 processes/s host-wide with
/// four at once; docs/measurements.md).
pub const TIMING_CORE_CONNECTIONS: &str = "1";

/// The program's command: the binary and the spec's `args`, in the point's folder, with the
/// spec's environment (its `[timing]` included) and, when a GPU is named, only that GPU visible.
/// A timing-core program (one that honours the start gate) is given its GPU's `measure_lock`
/// (`SWEEP_MEASURE_LOCK`, see `store::RunDir::measure_lock`) and gets
/// [`TIMING_CORE_CONNECTIONS`].
pub fn command(
    spec: &Spec,
    binary: &Path,
    point_dir: &Path,
    gpu: Option<&str>,
    measure_lock: Option<&Path>,
) -> Cmd {
    let timing_core = measure_lock.is_some();
    const CONNECTIONS: &str = "CUDA_DEVICE_MAX_CONNECTIONS";
    let mut cmd = Cmd::new(binary.display().to_string()).args(spec.args.iter().cloned());
    cmd.env = spec.env.clone();
    // `[timing]` after `[env]`: the table's settings win, as they always did.
    cmd.env.extend(spec.timing.env());
    if let Some(g) = gpu {
        cmd.env.insert("CUDA_VISIBLE_DEVICES".into(), g.to_string());
    }
    if timing_core && !cmd.env.contains_key(CONNECTIONS) && std::env::var_os(CONNECTIONS).is_none()
    {
        cmd.env
            .insert(CONNECTIONS.into(), TIMING_CORE_CONNECTIONS.into());
    }
    if let Some(lock) = measure_lock {
        cmd.env
            .insert("SWEEP_MEASURE_LOCK".into(), lock.display().to_string());
    }
    cmd.cwd = Some(point_dir.to_path_buf());
    cmd
}

/// Starts the program; a `gated` one waits at its start gate until [`exec::Started::go`].
pub fn start(cmd: &Cmd, point_dir: &Path, gated: bool) -> Result<exec::Started, exec::ExecError> {
    exec::start(
        cmd,
        Sink::Split {
            stdout: &point_dir.join(STDOUT),
            stderr: &point_dir.join(STDERR),
        },
        gated,
    )
}

/// The program honours the start gate: its binary holds the timing core's `SWEEP_GATE_FD`
/// (`options_from_env()` waits at the gate after creating its CUDA context). Read from the binary,
/// not the sources, so a bench that does not use the timing core is never started early.
pub fn honours_gate(binary: &Path) -> bool {
    let needle = b"SWEEP_GATE_FD";
    std::fs::read(binary)
        .map(|bytes| bytes.windows(needle.len()).any(|w| w == needle))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_gets_env_then_timing_which_wins() {
        let spec = Spec::parse(
            Path::new("t.toml"),
            "bench = \"b\"\ncompiler = \"cc\"\n[env]\nFOO = \"1\"\nSWEEP_BATCH = \"9\"\n[timing]\nbatch = 4\ntarget_rel_ci = 0.02\n[[axis]]\nname = \"k\"\nrange = [1, 2]\n[[metric]]\npattern = \"mflops\"\n",
        )
        .unwrap();
        let cmd = command(
            &spec,
            Path::new("/p/bench"),
            Path::new("/p"),
            Some("GPU-1"),
            None,
        );
        assert_eq!(cmd.env["FOO"], "1");
        assert_eq!(cmd.env["SWEEP_BATCH"], "4");
        assert_eq!(cmd.env["SWEEP_TARGET_REL_CI"], "0.02");
        assert_eq!(cmd.env["CUDA_VISIBLE_DEVICES"], "GPU-1");
        assert!(!cmd.env.contains_key("SWEEP_MEASURE_LOCK"));
        assert_eq!(spec.target_rel_ci(), 0.02);
    }
}
