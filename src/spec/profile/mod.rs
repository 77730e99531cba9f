//! The `[profile]` table of a spec: which Nsight Compute counters to read per metric, and whether
//! to sample power.
//!
//! ```toml
//! [profile]
//! presets = ["shared_banks"]                 # named sets of counters (see PRESETS)
//! ncu_metrics = ["dram__bytes_read.sum"]     # raw ncu metric names, added to the presets'
//! power = true                               # mean/max watts, SM clock, energy per point
//! metric_power_ms = 1000                     # each metric's own watts and <unit> per watt
//! timeout_s = 300                            # one point's ncu run (default 300 s)
//! ```
//!
//! The table lives with the spec, which holds it; the `profile` stage measures what it asks for.
//! [`check`] checks it against the rest of the spec.

mod check;
pub(super) use check::{check, At};

use serde::Deserialize;
use std::time::Duration;

/// A counter computed from two others: `num` summed over its names / `den` summed over its names.
#[derive(Clone, Debug, PartialEq)]
pub struct Ratio {
    pub name: &'static str,
    pub num: &'static [&'static str],
    pub den: &'static [&'static str],
}

/// A named set of ncu metrics (names checked with `ncu --query-metrics --chip gh100`, ncu 2025.3,
/// H100) and the ratios read from them.
pub struct Preset {
    pub name: &'static str,
    pub what: &'static str,
    pub metrics: &'static [&'static str],
    pub ratios: &'static [Ratio],
}

const SHARED_WAVEFRONTS: [&str; 2] = [
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
];
const SHARED_REQUESTS: [&str; 2] = [
    "smsp__inst_executed_op_shared_st.sum",
    "smsp__inst_executed_op_shared_ld.sum",
];
const GLOBAL_SECTORS: [&str; 2] = [
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
];
const GLOBAL_REQUESTS: [&str; 2] = [
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
];

pub const PRESETS: [Preset; 3] = [
    Preset {
        name: "shared_banks",
        what: "shared-memory wavefronts, requests and bank conflicts (loads and stores)",
        metrics: &[
            SHARED_WAVEFRONTS[0],
            SHARED_WAVEFRONTS[1],
            SHARED_REQUESTS[0],
            SHARED_REQUESTS[1],
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        ],
        ratios: &[Ratio {
            name: "shared_wavefronts_per_request",
            num: &SHARED_WAVEFRONTS,
            den: &SHARED_REQUESTS,
        }],
    },
    Preset {
        name: "memory",
        what: "DRAM bytes, L2 sectors from L1, global requests and sectors (loads and stores)",
        metrics: &[
            "dram__bytes_read.sum",
            "dram__bytes_write.sum",
            "lts__t_sectors_srcunit_tex_op_read.sum",
            "lts__t_sectors_srcunit_tex_op_write.sum",
            GLOBAL_SECTORS[0],
            GLOBAL_SECTORS[1],
            GLOBAL_REQUESTS[0],
            GLOBAL_REQUESTS[1],
        ],
        ratios: &[Ratio {
            name: "global_sectors_per_request",
            num: &GLOBAL_SECTORS,
            den: &GLOBAL_REQUESTS,
        }],
    },
    Preset {
        name: "occupancy",
        what: "achieved occupancy (active warps per cycle, % of the peak)",
        metrics: &[
            "sm__warps_active.avg.pct_of_peak_sustained_active",
            "sm__warps_active.avg.per_cycle_active",
        ],
        ratios: &[],
    },
];

/// The `[profile]` table as written.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct ProfileFile {
    #[serde(default)]
    pub presets: Vec<String>,
    #[serde(default)]
    pub ncu_metrics: Vec<String>,
    #[serde(default)]
    pub power: bool,
    pub metric_power_ms: Option<f64>,
    pub timeout_s: Option<f64>,
}

/// The checked `[profile]` table.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// ncu metric names, each once, in the order given (presets first).
    pub counters: Vec<String>,
    pub ratios: Vec<Ratio>,
    pub power: bool,
    /// `metric_power_ms`: after the timed run, each timing-core metric's call looped this long
    /// while power is sampled (the timing core's power mode; [`super::metric_power`]).
    pub metric_power: Option<Duration>,
    pub timeout: Duration,
}

/// Default limit of one point's ncu run: ncu replays every profiled launch once per pass.
pub const DEFAULT_TIMEOUT_S: f64 = 300.0;

/// Bounds of `metric_power_ms`: below 200 ms a window holds one or two distinct power readings.
pub const MIN_METRIC_POWER_MS: f64 = 200.0;
pub const MAX_METRIC_POWER_MS: f64 = 60_000.0;

/// Separates a metric's name from its counter's in a column: `<metric>__<counter>`.
pub const SEP: &str = crate::schema::COUNTER_SEP;

/// The two columns `metric_power_ms` gives a metric: its watts, and its value per watt.
pub fn metric_power_columns(metric: &str, unit_slug: &str) -> [String; 2] {
    [
        format!("{metric}{SEP}power_w"),
        format!("{metric}{SEP}{unit_slug}_per_w"),
    ]
}

/// A bad `[profile]` table: the key at fault and the message.
#[derive(Debug, PartialEq)]
pub struct ProfileError {
    pub key: &'static str,
    pub message: String,
}

fn err(key: &'static str, message: String) -> ProfileError {
    ProfileError { key, message }
}

/// An ncu metric name: letters, digits, `_` and `.` (ncu's names are `unit__counter.rollup`).
fn is_metric_name(s: &str) -> bool {
    s.contains("__")
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

impl Profile {
    /// Checks a `[profile]` table; `None` when it asks for nothing.
    pub fn from_file(f: &ProfileFile) -> Result<Option<Profile>, ProfileError> {
        let mut counters: Vec<String> = Vec::new();
        let mut ratios = Vec::new();
        for p in &f.presets {
            let Some(preset) = PRESETS.iter().find(|x| x.name == p) else {
                let names: Vec<&str> = PRESETS.iter().map(|x| x.name).collect();
                return Err(err(
                    "presets",
                    format!(
                        "`[profile] presets` has no preset `{p}` (hint: one of {})",
                        names.join(", ")
                    ),
                ));
            };
            counters.extend(preset.metrics.iter().map(|m| m.to_string()));
            ratios.extend(preset.ratios.iter().cloned());
        }
        for m in &f.ncu_metrics {
            if !is_metric_name(m) {
                return Err(err(
                    "ncu_metrics",
                    format!("`[profile] ncu_metrics` has `{m}`, which is not an Nsight Compute metric name (hint: e.g. `dram__bytes_read.sum`; `ncu --query-metrics` lists them)"),
                ));
            }
            counters.push(m.clone());
        }
        let mut seen = std::collections::BTreeSet::new();
        counters.retain(|c| seen.insert(c.clone()));
        let secs = f.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S);
        if !(secs.is_finite() && secs > 0.0 && secs < 1e9) {
            return Err(err(
                "timeout_s",
                format!("`[profile] timeout_s` must be a positive number of seconds, not {secs}"),
            ));
        }
        let metric_power = match f.metric_power_ms {
            None => None,
            Some(ms) if ms.is_finite() && (MIN_METRIC_POWER_MS..=MAX_METRIC_POWER_MS).contains(&ms) => {
                Some(Duration::from_secs_f64(ms / 1e3))
            }
            Some(ms) => {
                return Err(err(
                    "metric_power_ms",
                    format!("`[profile] metric_power_ms` must be {MIN_METRIC_POWER_MS} to {MAX_METRIC_POWER_MS} ms, not {ms} (hint: nvidia-smi's power reading changes about every 100 ms; 1000 gives each metric several)"),
                ))
            }
        };
        if counters.is_empty() && !f.power && metric_power.is_none() {
            return Ok(None);
        }
        Ok(Some(Profile {
            counters,
            ratios,
            power: f.power,
            metric_power,
            timeout: Duration::from_secs_f64(secs),
        }))
    }

    /// The columns a timed metric gets: one per counter, then one per ratio, then with
    /// `metric_power_ms` its watts and its value per watt (`unit_slug`: the metric's unit as its
    /// value column spells it, e.g. `mflops`).
    pub fn metric_columns(&self, metric: &str, unit_slug: &str) -> Vec<String> {
        self.counters
            .iter()
            .map(|c| format!("{metric}{SEP}{c}"))
            .chain(
                self.ratios
                    .iter()
                    .map(|r| format!("{metric}{SEP}{}", r.name)),
            )
            .chain(
                self.metric_power
                    .iter()
                    .flat_map(|_| metric_power_columns(metric, unit_slug)),
            )
            .collect()
    }

    /// Power is sampled: for the per-point columns, the per-metric power pass, or both.
    pub fn samples_power(&self) -> bool {
        self.power || self.metric_power.is_some()
    }

    /// The per-point columns of power sampling (empty without `power = true`).
    pub fn point_columns(&self) -> Vec<String> {
        if self.power {
            crate::schema::POWER_COLUMNS
                .iter()
                .map(|c| c.to_string())
                .collect()
        } else {
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(t: &str) -> Result<Option<Profile>, ProfileError> {
        Profile::from_file(&toml::from_str::<ProfileFile>(t).unwrap())
    }

    #[test]
    fn presets_and_raw_metrics_make_the_counters_each_once() {
        let p = table("presets = [\"shared_banks\"]\nncu_metrics = [\"dram__bytes_read.sum\", \"smsp__inst_executed_op_shared_st.sum\"]\n")
            .unwrap()
            .unwrap();
        assert_eq!(p.counters.len(), 7);
        assert_eq!(p.counters[6], "dram__bytes_read.sum");
        assert_eq!(p.ratios.len(), 1);
        let cols = p.metric_columns("stride2", "mflops");
        assert_eq!(
            cols[0],
            "stride2__l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
        );
        assert_eq!(cols[7], "stride2__shared_wavefronts_per_request");
        assert!(p.point_columns().is_empty());
        assert_eq!(p.timeout, Duration::from_secs(300));
    }

    #[test]
    fn an_empty_table_asks_for_nothing() {
        assert_eq!(table("").unwrap(), None);
        let p = table("power = true\n").unwrap().unwrap();
        assert!(p.counters.is_empty());
        assert_eq!(p.point_columns()[0], "power_w");
    }

    #[test]
    fn bad_tables_name_the_key_and_give_a_hint() {
        let e = table("presets = [\"banks\"]\n").unwrap_err();
        assert_eq!(e.key, "presets");
        assert_eq!(
            e.message,
            "`[profile] presets` has no preset `banks` (hint: one of shared_banks, memory, occupancy)"
        );
        let e = table("ncu_metrics = [\"dram bytes; rm -rf\"]\n").unwrap_err();
        assert_eq!(e.key, "ncu_metrics");
        assert!(
            e.message.contains("not an Nsight Compute metric name"),
            "{}",
            e.message
        );
        let e = table("power = true\ntimeout_s = -1\n").unwrap_err();
        assert_eq!(e.key, "timeout_s");
        let e = table("metric_power_ms = 50\n").unwrap_err();
        assert_eq!(e.key, "metric_power_ms");
        assert!(
            e.message.contains("200 to 60000 ms, not 50"),
            "{}",
            e.message
        );
    }

    #[test]
    fn metric_power_adds_watts_and_value_per_watt_to_each_metric() {
        let p = table("metric_power_ms = 1000\n").unwrap().unwrap();
        assert!(p.samples_power() && !p.power);
        assert_eq!(p.metric_power, Some(Duration::from_secs(1)));
        assert_eq!(
            p.metric_columns("copy", "gb_s"),
            ["copy__power_w", "copy__gb_s_per_w"]
        );
        assert!(p.point_columns().is_empty());
    }
}
