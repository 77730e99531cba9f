//! `[timing]` of a spec: the timing core's settings, passed to every program as SWEEP_* variables.

use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct TimingFile {
    pub(super) warmup: Option<u32>,
    pub(super) min_samples: Option<u32>,
    pub(super) min_time_ms: Option<f64>,
    pub(super) max_time_ms: Option<f64>,
    pub(super) target_rel_ci: Option<f64>,
    pub(super) flush_l2: Option<bool>,
    pub(super) rated_sm_mhz: Option<f64>,
    pub(super) batch: Option<u32>,
    pub(super) placements: Option<u32>,
}

pub(super) fn timing_env(t: &TimingFile) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    let mut put = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            env.insert(format!("SWEEP_{k}"), v);
        }
    };
    put("WARMUP", t.warmup.map(|v| v.to_string()));
    put("MIN_SAMPLES", t.min_samples.map(|v| v.to_string()));
    put("MIN_TIME_MS", t.min_time_ms.map(|v| v.to_string()));
    put("MAX_TIME_MS", t.max_time_ms.map(|v| v.to_string()));
    put("TARGET_REL_CI", t.target_rel_ci.map(|v| v.to_string()));
    put(
        "FLUSH_L2",
        t.flush_l2.map(|v| if v { "1" } else { "0" }.to_string()),
    );
    put("RATED_SM_MHZ", t.rated_sm_mhz.map(|v| v.to_string()));
    put("BATCH", t.batch.map(|v| v.to_string()));
    put("PLACEMENTS", t.placements.map(|v| v.to_string()));
    env
}
