//! Stage `profile` (opt-in, `[profile]` in a spec): why a curve steps. After a point's timed run,
//! never during it, its binary runs once more under Nsight Compute (`ncu`) in the timing core's
//! profile mode (one call per metric inside an NVTX range), and the counters land in the point's
//! row as `<metric>__<counter>` columns; while it measures, the GPU's power and SM clock are
//! sampled (nvidia-smi) into per-point columns, and with `metric_power_ms` a power pass gives each
//! metric its own watts and value per watt.
//!
//! - [`config`]: the `[profile]` table, its presets and the columns it adds.
//! - [`ncu`]: the ncu command, and its CSV read back into per-metric counters.
//! - [`power`]: power and clock samples, behind a trait (nvidia-smi on a GPU host, a fake in tests).
//! - [`metric_power`]: `metric_power_ms`, each metric's own watts from a power pass of the program.

pub mod config;
pub mod metric_power;
pub mod ncu;
pub mod power;

pub use config::Profile;
