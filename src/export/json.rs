//! Stage `export`: a run as one JSON document (`--export-json`), in the spirit of hyperfine's and
//! nvbench's JSON: the sweep, the machine, and every point with its axis values, status, timings
//! and each metric with its statistics.
//!
//! Schema (`"schema": 1`): `sweep`, `bench`, `spec_hash`, `overrides`, `state`, `started`,
//! `finished`, `machine` {`host`, `git_commit`, `compiler`, `compiler_version`, `arch`, `gpus`},
//! `axes` [names], `metrics` [{`name`, `unit`, `column`}], `points` [{`id`, `index`, `axes`
//! {name: value}, `status`, `error`, `build_s`, `run_s`, `cached`, `gpu` {`index`, `name`,
//! `uuid`}, `metrics` {name: {`unit`, `value`, `status` (the metric's own: `ok`, `noisy` or
//! `unstable`, from `<metric>_status` or, for older runs, `store::metric_status`), and each statistic the CSV has: `median`,
//! `stddev`, `min`, `max`, `rel_ci`, `samples`, `throttled`, `spread`, `placements`, `sm_mhz`,
//! `repeat_spread`, and with `[profile]` counters `counters` {counter: value}, with `[profile]
//! metric_power_ms` `power` {`power_w`, `<unit>_per_w`}}}, with `[profile]
//! power` `power` {`power_w`, `power_max_w`, `energy_j`, `power_sm_mhz`, `power_temp_c`,
//! `power_samples`}}]. Numbers are JSON numbers; an empty cell is left out.

use crate::spec::{CORE_FIELDS, CORE_STATS};
use crate::store::schema::{
    BUILD_S_COLUMN, CACHED_COLUMN, ERROR_COLUMN, GPU_INDEX_COLUMN, GPU_NAME_COLUMN,
    GPU_UUID_COLUMN, INDEX_COLUMN, POINT_ID_COLUMN, RUN_S_COLUMN, STATUS_COLUMN,
};
use crate::store::{self, Dialect, StoreError};
use serde_json::{json, Map, Value};
use std::path::Path;

pub const SCHEMA: u32 = 1;

/// The statistics a metric may have beside its value, as `<name>_<stat>[_<unit slug>]` columns:
/// the timing core's, and the spread over processes of `repeat`.
fn stat_names() -> impl Iterator<Item = &'static str> {
    CORE_STATS
        .into_iter()
        .chain(CORE_FIELDS)
        .chain(["repeat_spread"])
}

/// A CSV cell as JSON: an integer or a number where it reads as one, else the text.
fn cell(text: &str, dialect: Dialect) -> Value {
    if let Ok(i) = text.parse::<i64>() {
        return json!(i);
    }
    match dialect.parse_number(text) {
        Some(v) if v.is_finite() => json!(v),
        _ => json!(text),
    }
}

/// A run folder read (its `results.csv` and `manifest.json`) as JSON.
pub fn run_json(run: &store::Run) -> Result<Value, StoreError> {
    let m = run.manifest.as_ref().ok_or_else(|| StoreError::NotARun {
        dir: run.path.parent().map(Path::to_path_buf).unwrap_or_default(),
    })?;
    let rows = run.done()?;
    let col = |name: &str| m.columns.iter().position(|c| c == name);
    let target = run.target_rel_ci();
    let mut points: Vec<(usize, Value)> = Vec::new();
    for fields in rows.values() {
        let get = |name: &str| col(name).map(|i| fields[i].as_str()).unwrap_or_default();
        let mut axes = Map::new();
        for a in &m.axes {
            axes.insert(a.clone(), cell(get(a), m.dialect));
        }
        let mut metrics = Map::new();
        for info in &m.metrics {
            let value = get(&info.column);
            if value.is_empty() {
                continue;
            }
            let mut stats = Map::new();
            stats.insert("unit".into(), json!(info.unit));
            stats.insert("value".into(), cell(value, m.dialect));
            if let Some(st) =
                store::metric_status_in_row(&m.columns, fields, &info.name, m.dialect, target)
            {
                stats.insert("status".into(), json!(st.as_str()));
            }
            for stat in stat_names() {
                let found = super::long::stat_column(&m.columns, info, stat);
                if let Some(i) = found.filter(|&i| !fields[i].is_empty()) {
                    stats.insert(stat.into(), cell(&fields[i], m.dialect));
                }
            }
            // `[profile]` counters of the metric (`<metric>__<counter>` columns), by counter.
            let prefix = format!("{}{}", info.name, crate::schema::COUNTER_SEP);
            // `metric_power_ms`: its watts and value per watt, under `power`.
            let (mut counters, mut power) = (Map::new(), Map::new());
            for (i, c) in m.columns.iter().enumerate() {
                if let Some(counter) = c.strip_prefix(&prefix) {
                    if !fields[i].is_empty() {
                        let to = if crate::profile::metric_power::is_column(c) {
                            &mut power
                        } else {
                            &mut counters
                        };
                        to.insert(counter.into(), cell(&fields[i], m.dialect));
                    }
                }
            }
            if !counters.is_empty() {
                stats.insert("counters".into(), Value::Object(counters));
            }
            if !power.is_empty() {
                stats.insert("power".into(), Value::Object(power));
            }
            metrics.insert(info.name.clone(), Value::Object(stats));
        }
        // `[profile] power`: the point's power columns.
        let mut power = Map::new();
        for c in crate::profile::power::COLUMNS {
            if let Some(i) = col(c).filter(|&i| !fields[i].is_empty()) {
                power.insert(c.into(), cell(&fields[i], m.dialect));
            }
        }
        let index: usize = get(INDEX_COLUMN).parse().unwrap_or(0);
        let number = |name: &str| m.dialect.parse_number(get(name));
        let mut point = json!({
                "id": get(POINT_ID_COLUMN),
                "index": index,
                "axes": axes,
                "status": get(STATUS_COLUMN),
                "error": get(ERROR_COLUMN),
                "build_s": number(BUILD_S_COLUMN),
                "run_s": number(RUN_S_COLUMN),
                "cached": get(CACHED_COLUMN) == "1",
                "gpu": {"index": get(GPU_INDEX_COLUMN), "name": get(GPU_NAME_COLUMN), "uuid": get(GPU_UUID_COLUMN)},
                "metrics": metrics,
        });
        if !power.is_empty() {
            point["power"] = Value::Object(power);
        }
        points.push((index, point));
    }
    points.sort_by_key(|(i, _)| *i);
    Ok(json!({
        "schema": SCHEMA,
        "sweep": m.sweep,
        "bench": m.bench,
        "spec_hash": m.spec_hash,
        "overrides": m.overrides,
        "state": m.state.as_str(),
        "started": m.started,
        "finished": m.finished,
        "machine": {
            "host": m.host,
            "git_commit": m.git_commit,
            "compiler": m.compiler,
            "compiler_version": m.compiler_version,
            "arch": m.arch,
            "gpus": m.gpus_start,
        },
        "axes": m.axes,
        "metrics": m.metrics,
        "points": points.into_iter().map(|(_, p)| p).collect::<Vec<_>>(),
    }))
}

/// Writes [`run_json`] of `run` to `path` (through a temporary file: never a torn one).
pub fn write_json(run: &store::Run, path: &Path) -> Result<(), StoreError> {
    write_json_as(run, path, true)
}

/// [`write_json`]; `named_by_user`: the user named `path` (`--export-json FILE`: a device, a pipe
/// or a link is written through), else sweep did (`export/run.json`), and whatever is there is
/// replaced whole, a link too (review 14b F2: a link planted at `export/run.json` made export
/// write over the file it pointed to, outside the run).
pub fn write_json_as(run: &store::Run, path: &Path, named_by_user: bool) -> Result<(), StoreError> {
    let v = run_json(run)?;
    let text = serde_json::to_string_pretty(&v).map_err(|e| StoreError::Write {
        path: path.to_path_buf(),
        cause: e.into(),
    })?;
    let bytes = (text + "\n").into_bytes();
    let written = match named_by_user {
        true => write_named(path, &bytes),
        false => store::write_atomic(path, &bytes),
    };
    written.map_err(|e| StoreError::Write {
        path: path.to_path_buf(),
        cause: e.into(),
    })
}

/// Writes `bytes` to the file a user named: a device or a pipe (`/dev/stdout`, `/dev/null`) is
/// written into, and a link into the file it points to; only a file (or nothing) there is
/// replaced whole ([`store::write_atomic`]). A rename over `/dev/null` replaced the device with
/// a regular file (as root), and over a link the link.
pub fn write_named(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() && !m.is_dir() => std::fs::OpenOptions::new()
            .write(true)
            .open(path)?
            .write_all(bytes),
        _ if path.is_symlink() => {
            let target = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
            store::write_atomic(&target, bytes)
        }
        _ => store::write_atomic(path, bytes),
    }
}
