//! Stage `spec`: reads a sweep spec (TOML) into a checked [`Spec`].
//!
//! Every error names the file, the line and the key at fault.

use regex::Regex;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use toml::Spanned;

/// One value of an axis or a template constant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    Int(i64),
    Float(f64),
    Str(String),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Str(s) => f.write_str(s),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    #[error("cannot read spec `{path}`: {reason}")]
    Read { path: PathBuf, reason: String },
    #[error("{path}:{line}: {message}")]
    Syntax {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{path}:{line}: {message}")]
    Invalid {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{path}: {message}")]
    Whole { path: PathBuf, message: String },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SpecFile {
    name: Option<String>,
    description: Option<String>,
    bench: Spanned<String>,
    compiler: Option<String>,
    #[serde(default)]
    flags: Vec<String>,
    arch: Option<String>,
    gpu: Option<bool>,
    filter: Option<Spanned<String>>,
    zip: Option<Spanned<Vec<Vec<String>>>>,
    build_timeout_s: Option<f64>,
    run_timeout_s: Option<f64>,
    repeat: Option<Spanned<u32>>,
    control_every: Option<u32>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    vars: BTreeMap<String, Value>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    timing: Option<TimingFile>,
    #[serde(default, rename = "axis")]
    axes: Vec<Spanned<AxisFile>>,
    #[serde(default, rename = "metric")]
    metrics: Vec<Spanned<MetricFile>>,
    analyze: Option<AnalyzeCfg>,
    profile: Option<crate::profile::config::ProfileFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AxisFile {
    name: String,
    range: Option<Vec<i64>>,
    step: Option<i64>,
    pow2: Option<Vec<i64>>,
    values: Option<Vec<Value>>,
    #[serde(default)]
    compiler_flags: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MetricFile {
    name: Option<String>,
    unit: Option<String>,
    pattern: Option<String>,
    regex: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct TimingFile {
    warmup: Option<u32>,
    min_samples: Option<u32>,
    min_time_ms: Option<f64>,
    max_time_ms: Option<f64>,
    target_rel_ci: Option<f64>,
    flush_l2: Option<bool>,
    rated_sm_mhz: Option<f64>,
    batch: Option<u32>,
    placements: Option<u32>,
}

/// What `sweep run` analyses and plots when it ends.
#[derive(Deserialize, Serialize, Clone, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct AnalyzeCfg {
    pub x: Option<String>,
    pub by: Option<Vec<String>>,
    #[serde(default)]
    pub y: Vec<String>,
    #[serde(default = "yes")]
    pub plot: bool,
}

fn yes() -> bool {
    true
}

#[derive(Clone, Debug)]
pub struct Axis {
    pub name: String,
    pub values: Vec<Value>,
    /// The value is split on spaces and added to the build command.
    pub compiler_flags: bool,
}

#[derive(Clone, Debug)]
pub enum MetricSource {
    /// The timing core's `@sweep metric=NAME ...` line.
    Core,
    /// A regex whose group `value` (or first group) is the number.
    Regex(Regex),
}

#[derive(Clone, Debug)]
pub struct Metric {
    pub name: String,
    pub unit: String,
    pub source: MetricSource,
}

/// Extra statistics the timing core reports for each metric, in column order.
pub const CORE_STATS: [&str; 4] = ["median", "stddev", "min", "max"];

/// The columns every results.csv has besides the axes and the metrics, in header order: these
/// before the axes, `STATUS_COLUMN` between the axes and the metrics, the trailing ones last (see
/// `store::header`). An axis must not take one of these names.
pub const LEADING_COLUMNS: [&str; 2] = ["point_id", "index"];
pub const STATUS_COLUMN: &str = "status";
pub const TRAILING_COLUMNS: [&str; 7] = [
    "build_s",
    "run_s",
    "cached",
    "gpu_index",
    "gpu_name",
    "gpu_uuid",
    "error",
];

/// Every name in [`LEADING_COLUMNS`], [`STATUS_COLUMN`] and [`TRAILING_COLUMNS`], in that order.
pub fn row_columns() -> impl Iterator<Item = &'static str> {
    LEADING_COLUMNS
        .into_iter()
        .chain([STATUS_COLUMN])
        .chain(TRAILING_COLUMNS)
}

/// The longest `filter`, and its deepest nesting of parentheses: the expression parser recurses
/// (50,000 nested parentheses overflowed its stack).
pub const MAX_FILTER_LEN: usize = 4096;
pub const MAX_FILTER_DEPTH: i64 = 64;

/// `control_every` when the spec sets none: 16 control re-runs in a sweep of 512 points.
pub const DEFAULT_CONTROL_EVERY: u32 = 32;

/// Unitless fields of a timing-core line that get a column `<metric>_<field>`, after [`CORE_STATS`]:
/// the within-placement confidence half-width, the sample count, the clock flag, the spread of the
/// placements' mean times, how many placements were sampled, and the SM clock (the lower of two
/// readings, before and after the samples).
pub const CORE_FIELDS: [&str; 6] = [
    "rel_ci",
    "samples",
    "throttled",
    "spread",
    "placements",
    "sm_mhz",
];

impl Metric {
    /// Column of the metric's value: `<name>_<unit slug>`, or the slug alone when they agree.
    pub fn column(&self) -> String {
        let slug = unit_slug(&self.unit);
        if slug == self.name {
            slug
        } else {
            format!("{}_{}", self.name, slug)
        }
    }

    /// Every column this metric fills, the value first.
    pub fn columns(&self) -> Vec<String> {
        let mut cols = vec![self.column()];
        if let MetricSource::Core = self.source {
            let slug = unit_slug(&self.unit);
            for stat in CORE_STATS {
                cols.push(format!("{}_{stat}_{slug}", self.name));
            }
            for extra in CORE_FIELDS {
                cols.push(format!("{}_{extra}", self.name));
            }
        }
        cols
    }
}

/// `GB/s` -> `gb_per_s`, `MFlops` -> `mflops`.
pub fn unit_slug(unit: &str) -> String {
    let mut out = String::new();
    for c in unit.replace('/', "_per_").chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_string()
}

fn builtin(pattern: &str) -> Option<(&'static str, &'static str, &'static str)> {
    // (name, unit, regex)
    match pattern {
        "mflops" => Some((
            "mflops",
            "MFlops",
            r"(?mi)^\s*MFlops\s*[:=]\s*(?P<value>[-+0-9.eE]+)",
        )),
        "gflops" => Some((
            "gflops",
            "GFlops",
            r"(?mi)^\s*GFlops\s*[:=]\s*(?P<value>[-+0-9.eE]+)",
        )),
        "gb_per_s" => Some((
            "gb_per_s",
            "GB/s",
            r"(?mi)^\s*GB/s\s*[:=]\s*(?P<value>[-+0-9.eE]+)",
        )),
        _ => None,
    }
}

#[derive(Clone, Debug)]
pub struct Spec {
    pub path: PathBuf,
    pub name: String,
    pub text: String,
    /// sha256 of the spec text.
    pub hash: String,
    pub description: Option<String>,
    pub bench: String,
    pub compiler: String,
    pub flags: Vec<String>,
    pub arch: Option<String>,
    /// Running it needs a GPU (default: the compiler is nvcc).
    pub gpu: bool,
    pub filter: Option<String>,
    pub zip: Vec<Vec<String>>,
    pub build_timeout: Duration,
    pub run_timeout: Duration,
    pub args: Vec<String>,
    pub vars: BTreeMap<String, Value>,
    pub env: BTreeMap<String, String>,
    pub axes: Vec<Axis>,
    pub metrics: Vec<Metric>,
    pub analyze: Option<AnalyzeCfg>,
    /// Each point runs in this many independent processes, one per pass over the sweep (pass 0
    /// in the sweep's order, later passes shuffled); its row holds the median over them.
    pub repeat: u32,
    /// After every this many points (fewer in a sweep of under 4 times as many, so that it gets
    /// four) a runner re-runs one it measured, in a fresh process, into `controls.csv`: the pairs
    /// measure how much a value moves between processes (0: never).
    pub control_every: u32,
    /// The command-line overrides applied (`crate::overrides`), as arguments; empty for a file
    /// read as it is.
    pub overrides: Vec<String>,
    /// `[profile]`: counters (Nsight Compute) and power read per point after/while it measures.
    pub profile: Option<crate::profile::Profile>,
}

/// The line (1-based) of the first `key = ...` in a spec's text.
fn key_line(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|line| {
            line.trim_start()
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map(|i| i + 1)
}

impl Spec {
    /// Where the spec sets top-level `key`, for a message about it: `path:line` (the line of
    /// `key = ...`), or `path (with <overrides>)` when command-line overrides edited the spec (the
    /// edited text's lines mean nothing to the user), or `path` when the key is not in the file.
    pub fn locate(&self, key: &str) -> String {
        let path = self.path.display();
        if !self.overrides.is_empty() {
            return format!("{path} (with {})", self.overrides.join(" "));
        }
        match key_line(&self.text, key) {
            Some(line) => format!("{path}:{line}"),
            None => path.to_string(),
        }
    }

    pub fn load(path: &Path) -> Result<Spec, SpecError> {
        let text = std::fs::read_to_string(path).map_err(|e| SpecError::Read {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        Spec::parse(path, &text)
    }

    pub fn parse(path: &Path, text: &str) -> Result<Spec, SpecError> {
        let line_of = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
        let file: SpecFile = toml::from_str(text).map_err(|e| {
            let line = e.span().map(|s| line_of(s.start)).unwrap_or(1);
            SpecError::Syntax {
                path: path.to_path_buf(),
                line,
                message: tidy_toml_message(e.message()),
            }
        })?;
        let invalid = |offset: usize, message: String| SpecError::Invalid {
            path: path.to_path_buf(),
            line: line_of(offset),
            message,
        };
        // An error about key `key` (a top-level or [timing] key), at its line when the text has it.
        let at_key = |key: &str, message: String| {
            if let Some(line) = key_line(text, key) {
                return SpecError::Invalid {
                    path: path.to_path_buf(),
                    line,
                    message,
                };
            }
            SpecError::Whole {
                path: path.to_path_buf(),
                message,
            }
        };

        let mut axes: Vec<Axis> = Vec::new();
        for spanned in &file.axes {
            let at = spanned.span().start;
            let axis = expand_axis(spanned.get_ref()).map_err(|m| invalid(at, m))?;
            if axes.iter().any(|a| a.name == axis.name) {
                return Err(invalid(
                    at,
                    format!("axis `{}` is defined twice", axis.name),
                ));
            }
            if file.vars.contains_key(&axis.name) {
                return Err(invalid(
                    at,
                    format!(
                        "axis `{}` has the name of a [vars] constant (hint: rename one of them)",
                        axis.name
                    ),
                ));
            }
            axes.push(axis);
        }
        // An axis must not take the name of a column the CSV has anyway.
        for (spanned, axis) in file.axes.iter().zip(&axes) {
            if row_columns().any(|c| c == axis.name) {
                return Err(invalid(
                    spanned.span().start,
                    format!(
                        "axis `{}` has the name of a results.csv column (hint: rename it; taken: {})",
                        axis.name,
                        row_columns().collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
        }
        if axes.is_empty() {
            return Err(SpecError::Whole {
                path: path.to_path_buf(),
                message: "no axis defined (hint: add an [[axis]] table with a name and range, pow2 or values)".into(),
            });
        }
        if let Some(zip) = &file.zip {
            let mut seen: Vec<&String> = Vec::new();
            for name in zip.get_ref().iter().flat_map(|g| {
                let mut g: Vec<&String> = g.iter().collect();
                g.sort();
                g.dedup();
                g
            }) {
                if seen.contains(&name) {
                    return Err(invalid(
                        zip.span().start,
                        format!("axis `{name}` is in two zip groups (hint: put the axes that advance together into one group)"),
                    ));
                }
                seen.push(name);
            }
            for name in zip.get_ref().iter().flatten() {
                if !axes.iter().any(|a| &a.name == name) {
                    return Err(invalid(
                        zip.span().start,
                        format!("zip names axis `{name}`, which is not defined"),
                    ));
                }
            }
        }

        let mut metrics = Vec::new();
        for spanned in &file.metrics {
            let at = spanned.span().start;
            let metric = read_metric(spanned.get_ref()).map_err(|m| invalid(at, m))?;
            if metrics
                .iter()
                .any(|m: &Metric| m.column() == metric.column())
            {
                return Err(invalid(
                    at,
                    format!("metric column `{}` is defined twice", metric.column()),
                ));
            }
            if let Some(axis) = axes.iter().find(|a| {
                metric.columns().contains(&a.name)
                    || a.name == format!("{}_repeat_spread", metric.name)
            }) {
                return Err(invalid(
                    at,
                    format!(
                        "metric `{}` writes a column `{}`, which is also an axis (hint: rename the axis or the metric)",
                        metric.name, axis.name
                    ),
                ));
            }
            metrics.push(metric);
        }
        if metrics.is_empty() {
            return Err(SpecError::Whole {
                path: path.to_path_buf(),
                message: "no metric defined (hint: add [[metric]] with pattern = \"mflops\", or a name and unit)".into(),
            });
        }

        if !folder_name(file.bench.get_ref()) {
            return Err(invalid(
                file.bench.span().start,
                format!("`bench` = {:?} is not a bench name (hint: the name of a folder under cuda/, e.g. \"pogorilyy\"; `sweep list` shows them)", file.bench.get_ref()),
            ));
        }
        let name = file.name.clone().unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "sweep".into())
        });
        // The run folder is output/<name>/...: a name must stay one folder inside --output.
        if !folder_name(&name) {
            return Err(at_key(
                "name",
                format!(
                    "`name` = {name:?} is not a folder name (hint: letters, digits, `_`, `-` and `.`, not `.` or `..`; runs go to --output/<name>/)"
                ),
            ));
        }
        let compiler = file.compiler.clone().unwrap_or_else(|| "nvcc".into());
        let is_nvcc = Path::new(&compiler)
            .file_name()
            .map(|f| f.to_string_lossy().contains("nvcc"))
            .unwrap_or(false);
        if file.timing.as_ref().and_then(|t| t.placements) == Some(0) {
            return Err(at_key(
                "placements",
                "`[timing] placements` is 0 (hint: 1 measures the buffers where cudaMalloc put them, 8 is the default)".into(),
            ));
        }
        let mut env = file.env.clone();
        env.extend(timing_env(&file.timing.unwrap_or_default()));
        let timeout = |secs: Option<f64>, default: f64, key: &str| -> Result<Duration, SpecError> {
            let s = secs.unwrap_or(default);
            if !(s.is_finite() && s > 0.0) {
                return Err(at_key(
                    key,
                    format!("`{key}` must be a positive number of seconds, not {s}"),
                ));
            }
            Duration::try_from_secs_f64(s).map_err(|_| {
                at_key(
                    key,
                    format!("`{key}` = {s:e} is too large (hint: seconds, e.g. 600)"),
                )
            })
        };
        if let Some(f) = &file.filter {
            let text = f.get_ref();
            if text.trim().is_empty() {
                return Err(invalid(f.span().start, "`filter` is empty".into()));
            }
            // The expression parser recurses: bound what it is given.
            let depth = text
                .chars()
                .scan(0i64, |d, c| {
                    *d += match c {
                        '(' => 1,
                        ')' => -1,
                        _ => 0,
                    };
                    Some(*d)
                })
                .max()
                .unwrap_or(0);
            if text.len() > MAX_FILTER_LEN || depth > MAX_FILTER_DEPTH {
                return Err(invalid(
                    f.span().start,
                    format!(
                        "`filter` is {} characters long with {depth} nested parentheses (hint: at most {MAX_FILTER_LEN} characters and {MAX_FILTER_DEPTH} levels)",
                        text.len()
                    ),
                ));
            }
        }
        let repeat = match &file.repeat {
            Some(r) if *r.get_ref() == 0 => {
                return Err(invalid(
                    r.span().start,
                    "`repeat` is 0 (hint: 1 runs each point once, 3 in three processes)".into(),
                ))
            }
            Some(r) => *r.get_ref(),
            None => 1,
        };
        let profile = match &file.profile {
            Some(f) => crate::profile::Profile::from_file(f).map_err(|e| at_key(e.key, e.message))?,
            None => None,
        };
        if profile.as_ref().is_some_and(|p| !p.counters.is_empty())
            && !metrics.iter().any(|m| matches!(m.source, MetricSource::Core))
        {
            return Err(at_key(
                "ncu_metrics",
                "`[profile]` asks for counters, but no metric comes from the timing core (hint: counters are read per timing-core metric, inside the NVTX range sweep.cuh opens for it)".into(),
            ));
        }
        Ok(Spec {
            path: path.to_path_buf(),
            name,
            hash: hex(&Sha256::digest(text.as_bytes())),
            text: text.to_string(),
            description: file.description,
            bench: file.bench.into_inner(),
            gpu: file.gpu.unwrap_or(is_nvcc),
            compiler,
            flags: file.flags,
            arch: file.arch,
            filter: file.filter.map(|f| f.into_inner()),
            zip: file.zip.map(|z| z.into_inner()).unwrap_or_default(),
            build_timeout: timeout(file.build_timeout_s, 300.0, "build_timeout_s")?,
            run_timeout: timeout(file.run_timeout_s, 120.0, "run_timeout_s")?,
            args: file.args,
            vars: file.vars,
            env,
            axes,
            metrics,
            analyze: file.analyze,
            repeat,
            control_every: file.control_every.unwrap_or(DEFAULT_CONTROL_EVERY),
            overrides: Vec::new(),
            profile,
        })
    }

    /// Compiler is nvcc (gets `-arch`).
    pub fn is_nvcc(&self) -> bool {
        Path::new(&self.compiler)
            .file_name()
            .map(|f| f.to_string_lossy().contains("nvcc"))
            .unwrap_or(false)
    }

    /// The timing core's confidence target: `[timing] target_rel_ci`, else its default 1 %.
    pub fn target_rel_ci(&self) -> f64 {
        self.env
            .get("SWEEP_TARGET_REL_CI")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.01)
    }

    /// The profile columns of a metric (`<metric>__<counter>`, none without `[profile]` counters
    /// or for a metric that does not come from the timing core).
    pub fn profile_columns(&self, m: &Metric) -> Vec<String> {
        match (&self.profile, &m.source) {
            (Some(p), MetricSource::Core) => p.metric_columns(&m.name),
            _ => Vec::new(),
        }
    }

    pub fn axis_names(&self) -> Vec<String> {
        self.axes.iter().map(|a| a.name.clone()).collect()
    }
}

/// One plain folder name: letters, digits, `_`, `-` and `.`, not `.` or `..` (the bench's
/// folder under cuda/, the run's under --output).
fn folder_name(s: &str) -> bool {
    !s.is_empty()
        && s != "."
        && s != ".."
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
}

fn tidy_toml_message(m: &str) -> String {
    let m = m
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(": ")
        .replace("unknown field", "unknown key");
    // serde's words for what a user wrote wrong, in a spec's words.
    if m.contains("did not match any variant of untagged enum Value") {
        return "a value must be an integer, a float or a string (hint: not a boolean, table or array; write `\"true\"` for a string)".into();
    }
    if m.starts_with("invalid type: map, expected a sequence") {
        return "a table where a list of tables is expected (hint: write `[[axis]]` and `[[metric]]`, with double brackets)".into();
    }
    match m.split_once(", expected") {
        Some((head, rest)) => format!("{head} (hint: expected{rest})"),
        None => m,
    }
}

fn timing_env(t: &TimingFile) -> BTreeMap<String, String> {
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

fn valid_ident(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn expand_axis(a: &AxisFile) -> Result<Axis, String> {
    let name = &a.name;
    if !valid_ident(name) {
        return Err(format!(
            "axis name `{name}` is not an identifier (hint: letters, digits and `_`, not starting with a digit)"
        ));
    }
    let given = [a.range.is_some(), a.pow2.is_some(), a.values.is_some()];
    if given.iter().filter(|g| **g).count() != 1 {
        return Err(format!(
            "axis `{name}` needs exactly one of `range`, `pow2`, `values`"
        ));
    }
    if a.step.is_some() && a.range.is_none() {
        return Err(format!("axis `{name}`: `step` only goes with `range`"));
    }
    let bounds =
        |key: &str, v: &Option<Vec<i64>>| -> Result<Option<[i64; 2]>, String> {
            match v.as_deref() {
                None => Ok(None),
                Some(&[from, to]) => Ok(Some([from, to])),
                Some(other) => {
                    Err(format!(
                "axis `{name}`: `{key}` has {} items (hint: two, `{key} = [first, last]`{})",
                other.len(),
                if key == "range" { ", and `step = n` for a step" } else { "" }
            ))
                }
            }
        };
    let (range, pow2) = (bounds("range", &a.range)?, bounds("pow2", &a.pow2)?);
    let values = if let Some([from, to]) = range {
        let step = a.step.unwrap_or(1);
        if step <= 0 {
            return Err(format!(
                "axis `{name}` has step {step} (hint: step must be > 0)"
            ));
        }
        if from > to {
            return Err(format!(
                "axis `{name}` is empty: {from}..{to} step {step} (hint: start must be <= end)"
            ));
        }
        let count = (to as i128 - from as i128) / step as i128 + 1;
        if count > 1_000_000 {
            return Err(format!(
                "axis `{name}` has {count} values (hint: at most 1000000)"
            ));
        }
        (0..count as i64)
            .map(|i| Value::Int(from + i * step))
            .collect()
    } else if let Some([from, to]) = pow2 {
        let pow = |v: i64| v > 0 && (v & (v - 1)) == 0;
        if !pow(from) || !pow(to) {
            return Err(format!(
                "axis `{name}`: pow2 bounds {from} and {to} must be powers of two"
            ));
        }
        if from > to {
            return Err(format!(
                "axis `{name}` is empty: pow2 {from}..{to} (hint: start must be <= end)"
            ));
        }
        let mut v = Vec::new();
        let mut x = Some(from);
        while let Some(p) = x.filter(|&p| p <= to) {
            v.push(Value::Int(p));
            x = p.checked_mul(2);
        }
        v
    } else {
        let values = a.values.clone().unwrap_or_default();
        if values.is_empty() {
            return Err(format!(
                "axis `{name}` is empty: values = [] (hint: list at least one value)"
            ));
        }
        values
    };
    if a.compiler_flags && values.iter().any(|v| !matches!(v, Value::Str(_))) {
        return Err(format!(
            "axis `{name}` has compiler_flags = true, so its values must be strings"
        ));
    }
    Ok(Axis {
        name: name.clone(),
        values,
        compiler_flags: a.compiler_flags,
    })
}

fn read_metric(m: &MetricFile) -> Result<Metric, String> {
    if let Some(p) = &m.pattern {
        if m.regex.is_some() {
            return Err("a metric takes `pattern` or `regex`, not both".into());
        }
        let (name, unit, re) = builtin(p).ok_or_else(|| {
            format!("unknown metric pattern `{p}` (hint: one of `mflops`, `gflops`, `gb_per_s`)")
        })?;
        return Ok(Metric {
            name: m.name.clone().unwrap_or_else(|| name.into()),
            unit: m.unit.clone().unwrap_or_else(|| unit.into()),
            source: MetricSource::Regex(Regex::new(re).map_err(|e| e.to_string())?),
        });
    }
    let name = m
        .name
        .clone()
        .ok_or("a metric needs a `name` (or a built-in `pattern`)")?;
    if !valid_ident(&name) {
        return Err(format!("metric name `{name}` is not an identifier"));
    }
    let unit = m
        .unit
        .clone()
        .ok_or_else(|| format!("metric `{name}` needs a `unit` (it goes into the column name)"))?;
    let source = match &m.regex {
        Some(r) => {
            let re = Regex::new(r).map_err(|e| {
                format!(
                    "metric `{name}`: bad regex: {}",
                    e.to_string().lines().last().unwrap_or("")
                )
            })?;
            if re.captures_len() < 2 {
                return Err(format!(
                    "metric `{name}`: the regex needs a group `(?P<value>...)`"
                ));
            }
            MetricSource::Regex(re)
        }
        None => MetricSource::Core,
    };
    Ok(Metric { name, unit, source })
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Spec, String> {
        Spec::parse(Path::new("sweeps/t.toml"), text).map_err(|e| e.to_string())
    }

    const OK: &str = "bench = \"b\"\n[[axis]]\nname = \"threads\"\nrange = [1, 8]\n[[metric]]\npattern = \"mflops\"\n";

    #[test]
    fn range_pow2_and_values_expand() {
        let s = parse(&format!(
            "{OK}[[axis]]\nname = \"n\"\npow2 = [4, 32]\n[[axis]]\nname = \"v\"\nvalues = [\"a\", 3]\n[[axis]]\nname=\"r\"\nrange=[0,10]\nstep=5\n"
        ))
        .unwrap();
        let vals: Vec<String> = s.axes[1].values.iter().map(|v| v.to_string()).collect();
        assert_eq!(vals, ["4", "8", "16", "32"]);
        assert_eq!(s.axes[0].values.len(), 8);
        assert_eq!(
            s.axes[2].values,
            vec![Value::Str("a".into()), Value::Int(3)]
        );
        assert_eq!(
            s.axes[3].values,
            vec![Value::Int(0), Value::Int(5), Value::Int(10)]
        );
    }

    #[test]
    fn errors_name_file_line_and_culprit() {
        let cases = [
            (
                format!("{OK}colour = 1\n"),
                "sweeps/t.toml:7: unknown key `colour`",
            ),
            (
                "bench = \"b\"\n[[axis]]\nname = \"threads\"\nrange = [10, 1]\n[[metric]]\npattern=\"mflops\"\n".into(),
                "sweeps/t.toml:2: axis `threads` is empty: 10..1 step 1 (hint: start must be <= end)",
            ),
            (
                "bench = \"b\"\n[[axis]]\nname = \"v\"\nvalues = []\n[[metric]]\npattern=\"mflops\"\n".into(),
                "axis `v` is empty: values = []",
            ),
            ("bench = \"b\"\n[[axis]\n".into(), "sweeps/t.toml:2:"),
            (
                "bench = \"b\"\n[[axis]]\nname = \"t\"\nrange=[1,2]\n[[metric]]\npattern=\"tflops\"\n".into(),
                "unknown metric pattern `tflops`",
            ),
            (
                "bench = \"b\"\n[[axis]]\nname = \"t\"\nrange=[1,2]\n".into(),
                "no metric defined",
            ),
            (
                format!("{OK}[[axis]]\nname = \"threads\"\nvalues = [1]\n"),
                "sweeps/t.toml:7: axis `threads` is defined twice",
            ),
            (
                format!("{OK}[timing]\nplacements = 0\n"),
                "sweeps/t.toml:8: `[timing] placements` is 0 (hint: 1 measures the buffers where cudaMalloc put them, 8 is the default)",
            ),
            (
                "bench = \"b\"\n[[axis]]\nname = \"t\"\nrange=[1,2]\n[[metric]]\nname=\"x\"\n".into(),
                "metric `x` needs a `unit`",
            ),
            (
                format!("run_timeout_s = 1e300\n{OK}"),
                "sweeps/t.toml:1: `run_timeout_s` = 1e300 is too large",
            ),
            (
                "bench = \"b\"\n[[axis]]\nname = \"t\"\nrange=[-9223372036854775808, 9223372036854775807]\n[[metric]]\npattern=\"mflops\"\n".into(),
                "axis `t` has 18446744073709551616 values (hint: at most 1000000)",
            ),
        ];
        let more = [
            (
                "bench = \"b\"\n[[axis]]\nname = \"t\"\nrange = [1, 10, 3]\n[[metric]]\npattern=\"mflops\"\n".to_string(),
                "sweeps/t.toml:2: axis `t`: `range` has 3 items (hint: two, `range = [first, last]`, and `step = n` for a step)",
            ),
            (
                "bench = \"b\"\n[[axis]]\nname = \"t\"\npow2 = [4]\n[[metric]]\npattern=\"mflops\"\n".to_string(),
                "axis `t`: `pow2` has 1 items",
            ),
            (
                "bench = \"b\"\n[[axis]]\nname = \"status\"\nvalues = [1]\n[[metric]]\npattern=\"mflops\"\n".to_string(),
                "sweeps/t.toml:2: axis `status` has the name of a results.csv column (hint: rename it; taken: point_id, index, status,",
            ),
            (
                "bench = \"b\"\n[[axis]]\nname = \"gpu_uuid\"\nvalues = [1]\n[[metric]]\npattern=\"mflops\"\n".to_string(),
                "axis `gpu_uuid` has the name of a results.csv column",
            ),
            (
                "bench = \"b\"\n[[axis]]\nname = \"mflops\"\nvalues = [1]\n[[metric]]\npattern=\"mflops\"\n".to_string(),
                "sweeps/t.toml:5: metric `mflops` writes a column `mflops`, which is also an axis",
            ),
            (
                "bench = \"b\"\n[[axis]]\nname = \"copy_rel_ci\"\nvalues = [1]\n[[metric]]\nname=\"copy\"\nunit=\"GB/s\"\n".to_string(),
                "metric `copy` writes a column `copy_rel_ci`, which is also an axis",
            ),
            (
                "bench = \"b\"\nzip = [[\"a\", \"b\"], [\"a\", \"c\"]]\n[[axis]]\nname = \"a\"\nvalues = [1, 2, 3]\n[[axis]]\nname = \"b\"\nvalues = [4, 5, 6]\n[[axis]]\nname = \"c\"\nvalues = [7]\n[[metric]]\npattern=\"mflops\"\n".to_string(),
                "sweeps/t.toml:2: axis `a` is in two zip groups (hint: put the axes that advance together into one group)",
            ),
            (
                format!("filter = \"{}threads > 1{}\"\n{OK}", "(".repeat(65), ")".repeat(65)),
                "sweeps/t.toml:1: `filter` is 141 characters long with 65 nested parentheses (hint: at most 4096 characters and 64 levels)",
            ),
            (
                format!("filter = \"{}threads > 1\"\n{OK}", "!".repeat(5000)),
                "`filter` is 5011 characters long with 0 nested parentheses",
            ),
            (
                "bench = \"b\"\n[[axis]]\nname = \"t\"\nvalues = [true]\n[[metric]]\npattern=\"mflops\"\n".to_string(),
                "sweeps/t.toml:4: a value must be an integer, a float or a string (hint: not a boolean, table or array",
            ),
            (
                format!("{OK}[vars]\nx = {{a = 1}}\n"),
                "sweeps/t.toml:8: a value must be an integer, a float or a string",
            ),
            (
                "bench = \"b\"\n[axis]\nname = \"t\"\nrange = [1, 2]\n[[metric]]\npattern=\"mflops\"\n".to_string(),
                "sweeps/t.toml:2: a table where a list of tables is expected (hint: write `[[axis]]` and `[[metric]]`, with double brackets)",
            ),
            (
                OK.replace("bench = \"b\"", "bench = \"\""),
                "sweeps/t.toml:1: `bench` = \"\" is not a bench name (hint: the name of a folder under cuda/",
            ),
            (
                OK.replace("bench = \"b\"", "bench = \"../x\""),
                "`bench` = \"../x\" is not a bench name",
            ),
            (format!("name = \"../../x\"\n{OK}"), "sweeps/t.toml:1: `name` = \"../../x\" is not a folder name"),
            (format!("name = \"/tmp/x\"\n{OK}"), "`name` = \"/tmp/x\" is not a folder name"),
            (format!("name = \"..\"\n{OK}"), "`name` = \"..\" is not a folder name"),
            (format!("name = \"\"\n{OK}"), "`name` = \"\" is not a folder name"),
        ];
        for (text, want) in cases.into_iter().chain(more) {
            let err = parse(&text).unwrap_err();
            assert!(err.contains(want), "got {err:?}, want {want:?}");
            assert!(!err.contains('\n'), "one line: {err:?}");
        }
    }

    #[test]
    fn pow2_stops_before_overflow() {
        let s = parse("bench = \"b\"\n[[axis]]\nname = \"n\"\npow2 = [1073741824, 4611686018427387904]\n[[metric]]\npattern=\"mflops\"\n").unwrap();
        assert_eq!(s.axes[0].values.len(), 33);
    }

    #[test]
    fn columns_carry_units() {
        let s = parse(&format!(
            "{OK}[[metric]]\nname = \"copy\"\nunit = \"GB/s\"\n"
        ))
        .unwrap();
        assert_eq!(s.metrics[0].columns(), ["mflops"]);
        assert_eq!(
            s.metrics[1].columns(),
            [
                "copy_gb_per_s",
                "copy_median_gb_per_s",
                "copy_stddev_gb_per_s",
                "copy_min_gb_per_s",
                "copy_max_gb_per_s",
                "copy_rel_ci",
                "copy_samples",
                "copy_throttled",
                "copy_spread",
                "copy_placements",
                "copy_sm_mhz"
            ]
        );
        assert!(s.gpu, "nvcc is the default compiler, so a GPU is needed");
    }

    #[test]
    fn timing_table_becomes_environment() {
        let s = parse(&format!(
            "{OK}[timing]\nmin_samples = 20\nflush_l2 = true\nbatch = 4\n"
        ))
        .unwrap();
        assert_eq!(s.env["SWEEP_MIN_SAMPLES"], "20");
        assert_eq!(s.env["SWEEP_FLUSH_L2"], "1");
        assert_eq!(s.env["SWEEP_BATCH"], "4");
    }

    /// Seeded mutations of every spec in sweeps/ (bytes cut, lines doubled or swapped, TOML
    /// pieces and extreme numbers put in): each gives a spec error or a plan, never a panic.
    #[test]
    fn fuzzed_specs_give_an_error_or_a_plan_never_a_panic() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("sweeps");
        let mut seeds: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.path().extension().is_some_and(|x| x == "toml"))
            .map(|e| std::fs::read_to_string(e.path()).unwrap())
            .collect();
        seeds.sort();
        assert!(seeds.len() >= 10);
        const PIECES: [&str; 24] = [
            "[[axis]]\n",
            "[[metric]]\n",
            "[timing]\n",
            "[vars]\n",
            "[analyze]\n",
            "name = \"",
            "range = [",
            "pow2 = [",
            "values = [",
            "]",
            "\"",
            "=",
            ",",
            "zip = [[\"threads\", \"n\"]]\n",
            "filter = \"((threads",
            "-1",
            "0",
            "1e308",
            "9223372036854775807",
            "-9223372036854775808",
            "step = 0\n",
            "repeat = 0\n",
            "placements = 4294967295\n",
            "\u{0}",
        ];
        let mut state: u64 = std::env::var("SWEEP_FUZZ_SEED")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0x5EED_F022)
            .max(1);
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n.max(1) as u64) as usize
        };
        let (mut ok, mut errors) = (0, 0);
        // SWEEP_FUZZ_CASES for a longer campaign (SWEEP_FUZZ_SEED for another sequence).
        let cases: usize = std::env::var("SWEEP_FUZZ_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(3000);
        for case in 0..cases {
            let mut text = seeds[case % seeds.len()].clone();
            for _ in 0..1 + next(4) {
                let lines: Vec<&str> = text.lines().collect();
                text = match next(5) {
                    0 if !text.is_empty() => {
                        let a = next(text.len());
                        let b = (a + next(40)).min(text.len());
                        let (a, b) = (floor(&text, a), floor(&text, b));
                        format!("{}{}", &text[..a], &text[b..])
                    }
                    1 if !lines.is_empty() => {
                        let k = next(lines.len());
                        let mut l = lines.clone();
                        l.insert(k, lines[k]);
                        l.join("\n")
                    }
                    2 if lines.len() > 1 => {
                        let mut l = lines.clone();
                        let (a, b) = (next(l.len()), next(l.len()));
                        l.swap(a, b);
                        l.join("\n")
                    }
                    _ => {
                        let at = floor(&text, next(text.len() + 1));
                        format!(
                            "{}{}{}",
                            &text[..at],
                            PIECES[next(PIECES.len())],
                            &text[at..]
                        )
                    }
                };
            }
            let outcome =
                std::panic::catch_unwind(|| match Spec::parse(Path::new("f.toml"), &text) {
                    Ok(spec) => {
                        let size: f64 = spec.axes.iter().map(|a| a.values.len() as f64).product();
                        if size <= 20_000.0 {
                            let _ = crate::points::expand(&spec);
                        }
                        true
                    }
                    Err(e) => {
                        assert!(!e.to_string().contains('\n'), "one line: {e}");
                        false
                    }
                });
            match outcome {
                Ok(true) => ok += 1,
                Ok(false) => errors += 1,
                Err(_) => panic!("case {case} panicked on:\n{text}"),
            }
        }
        assert!(ok > 100 && errors > 100, "{ok} parsed, {errors} refused");
    }

    /// The largest char boundary at or below `i`.
    fn floor(s: &str, mut i: usize) -> usize {
        while !s.is_char_boundary(i) {
            i -= 1;
        }
        i
    }
}
