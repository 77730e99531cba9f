//! `[timing]` of a spec: the timing core's settings, kept typed on the spec and turned into the
//! program's SWEEP_* variables only when its command is built (`run::command`).

use serde::Deserialize;
use std::collections::BTreeMap;

/// The timing core's confidence target when the spec sets none (`Options::target_rel_ci` in
/// cuda/common/sweep.cuh has the same default).
pub const DEFAULT_TARGET_REL_CI: f64 = 0.01;

/// The `[timing]` table; a key left out keeps the timing core's own default.
#[derive(Deserialize, Default, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Timing {
    pub warmup: Option<u32>,
    pub min_samples: Option<u32>,
    pub min_time_ms: Option<f64>,
    pub max_time_ms: Option<f64>,
    pub target_rel_ci: Option<f64>,
    pub flush_l2: Option<bool>,
    pub rated_sm_mhz: Option<f64>,
    pub batch: Option<u32>,
    pub placements: Option<u32>,
}

impl Timing {
    /// The confidence target the timing core works to.
    pub fn target_rel_ci(&self) -> f64 {
        self.target_rel_ci.unwrap_or(DEFAULT_TARGET_REL_CI)
    }

    /// The program's environment: `SWEEP_<KEY>` for every key the table sets.
    pub fn env(&self) -> BTreeMap<String, String> {
        let mut env = BTreeMap::new();
        let mut put = |k: &str, v: Option<String>| {
            if let Some(v) = v {
                env.insert(format!("SWEEP_{k}"), v);
            }
        };
        put("WARMUP", self.warmup.map(|v| v.to_string()));
        put("MIN_SAMPLES", self.min_samples.map(|v| v.to_string()));
        put("MIN_TIME_MS", self.min_time_ms.map(|v| v.to_string()));
        put("MAX_TIME_MS", self.max_time_ms.map(|v| v.to_string()));
        put("TARGET_REL_CI", self.target_rel_ci.map(|v| v.to_string()));
        put(
            "FLUSH_L2",
            self.flush_l2.map(|v| if v { "1" } else { "0" }.to_string()),
        );
        put("RATED_SM_MHZ", self.rated_sm_mhz.map(|v| v.to_string()));
        put("BATCH", self.batch.map(|v| v.to_string()));
        put("PLACEMENTS", self.placements.map(|v| v.to_string()));
        env
    }
}
