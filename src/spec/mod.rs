//! Stage `spec`: reads a sweep spec (TOML) into a checked [`Spec`].
//!
//! Every error names the file, the line and the key at fault.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use toml::Spanned;

mod axis;
mod labels;
mod metric;
pub mod nfc;
pub mod profile;
mod timing;

pub use axis::Axis;
pub use axis::AxisError;
use axis::{expand_axis, AxisFile};
pub use labels::Labels;
use metric::{read_metric, MetricFile};
pub use metric::{
    unit_slug, Better, Metric, MetricSource, Model, ModelKind, CORE_FIELDS, CORE_STATS,
};
pub use metric::{MetricError, ModelError};
pub use timing::{Timing, DEFAULT_TARGET_REL_CI};

/// The longest `filter`, and its deepest nesting of parentheses: the expression parser recurses
/// (50,000 nested parentheses overflowed its stack).
pub const MAX_FILTER_LEN: usize = 4096;
pub const MAX_FILTER_DEPTH: i64 = 64;

/// `recheck` when the spec sets none: a point whose samples fell into two groups gets two more
/// processes, so that the median of three outvotes the one (docs/measurements.md).
pub const DEFAULT_RECHECK: u32 = 2;

/// The largest `recheck`: a held point whose processes never agree stops there.
pub const MAX_RECHECK: u32 = 8;

/// `control_every` when the spec sets none: 16 control re-runs in a sweep of 512 points.
pub const DEFAULT_CONTROL_EVERY: u32 = 32;

/// The most processes per point (`repeat`): each is a pass over the sweep with a CSV of its own,
/// planned before the first starts (4,294,967,295 passes took sweep's memory without bound).
pub const MAX_REPEAT: u32 = 1000;

/// The longest `build_timeout_s`/`run_timeout_s`, about 31 years: a deadline past it overflows
/// the clock (`i64::MAX` seconds panicked where the deadline was taken).
pub const MAX_TIMEOUT_S: f64 = 1e9;

/// One value of an axis or a template constant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    Int(i64),
    Float(f64),
    Str(String),
}

impl Value {
    /// Whether results.csv's readers read this value as a number: every int and float, and a
    /// text that is a finite number (`"1e0"`; not `"inf"` or `"nan"`: review 19a M1).
    pub fn reads_as_number(&self) -> bool {
        match self {
            Value::Str(s) => s.trim().parse::<f64>().is_ok_and(f64::is_finite),
            _ => true,
        }
    }
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
    #[error("cannot read spec `{path}`: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
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
    #[error("{path}:{line}: {source}")]
    Axis {
        path: PathBuf,
        line: usize,
        #[source]
        source: AxisError,
    },
    #[error("{path}:{line}: {source}")]
    Metric {
        path: PathBuf,
        line: usize,
        #[source]
        source: MetricError,
    },
    /// A count key (`repeat`, `recheck`) that holds no integer.
    #[error("{path}:{line}: {source}")]
    Count {
        path: PathBuf,
        line: usize,
        #[source]
        source: CountError,
    },
}

/// Why a count key (`repeat`, `recheck`) holds no integer: the key, what it holds instead, and
/// the key's hint.
#[derive(Debug, thiserror::Error)]
pub enum CountError {
    #[error("`{key}` is the string {text:?}, not a number (hint: write it without quotes, `{key} = {number}`; {hint})")]
    Quoted {
        key: &'static str,
        text: String,
        number: i64,
        hint: String,
    },
    /// `what` in words: `the string "x"`, `1.5`, `true`, `a list`.
    #[error("`{key}` is {what}, not an integer (hint: {hint})")]
    NotInteger {
        key: &'static str,
        what: String,
        hint: String,
    },
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
    /// Read as any value and checked in [`Spec::parse`], so that a value of the wrong type is
    /// named with its key (serde's message names neither).
    repeat: Option<Spanned<toml::Value>>,
    recheck: Option<Spanned<toml::Value>>,
    control_every: Option<u32>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    vars: BTreeMap<String, Value>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    timing: Option<Timing>,
    #[serde(default, rename = "axis")]
    axes: Vec<Spanned<AxisFile>>,
    #[serde(default, rename = "metric")]
    metrics: Vec<Spanned<MetricFile>>,
    analyze: Option<AnalyzeCfg>,
    profile: Option<profile::ProfileFile>,
    headline: Option<Spanned<String>>,
}

/// The top-level keys that take a value (not a table): one of them found inside a table was
/// written below a `[table]` line, so TOML put it there.
const TOP_LEVEL_VALUES: [&str; 16] = [
    "name",
    "description",
    "bench",
    "compiler",
    "flags",
    "arch",
    "gpu",
    "filter",
    "zip",
    "build_timeout_s",
    "run_timeout_s",
    "repeat",
    "recheck",
    "control_every",
    "args",
    "headline",
];

/// The hint of an error about `repeat`.
const REPEAT_HINT: &str = "1 runs each point once, 3 in three processes";

/// The hint of an error about `recheck`.
fn recheck_hint() -> String {
    format!(
        "at most {MAX_RECHECK} more processes for a held point; {DEFAULT_RECHECK} is the default"
    )
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
    /// `[env]`: the program's environment as the spec gives it (the timing core's settings are
    /// in `timing`, added when a command is built).
    pub env: BTreeMap<String, String>,
    /// `[timing]`, typed.
    pub timing: Timing,
    pub axes: Vec<Axis>,
    pub metrics: Vec<Metric>,
    pub analyze: Option<AnalyzeCfg>,
    /// Each point runs in this many independent processes, one per pass over the sweep (pass 0
    /// in the sweep's order, later passes shuffled); its row holds the median over them.
    pub repeat: u32,
    /// With `repeat = 1`: a point whose samples fall into two groups inside its process (see
    /// `driver::recheck`) is measured in this many more processes at the end of the sweep, and its
    /// row holds the median over them all (0: never).
    pub recheck: u32,
    /// After every this many points (fewer in a sweep of under 4 times as many, so that it gets
    /// four) a runner re-runs one it measured, in a fresh process, into `controls.csv`: the pairs
    /// measure how much a value moves between processes (0: never).
    pub control_every: u32,
    /// The command-line overrides applied (`sweep::overrides`), as arguments; empty for a file
    /// read as it is.
    pub overrides: Vec<String>,
    /// `[profile]`: counters (Nsight Compute) and power read per point after/while it measures.
    pub profile: Option<profile::Profile>,
    /// `headline`: the metric (its name or column) that the progress line shows for each point;
    /// `None`: the first metric. Checked to name a metric; see [`Spec::headline`].
    pub headline: Option<String>,
}

/// The metric called `name`, or whose column is `name` (`saw` or `saw_mflops`).
fn find_metric<'a>(metrics: &'a [Metric], name: &str) -> Option<&'a Metric> {
    metrics
        .iter()
        .find(|m| m.name == name)
        .or_else(|| metrics.iter().find(|m| m.column() == name))
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

/// The line of `key = ...` in the `[vars]` table of `text`.
fn vars_key_line(text: &str, key: &str) -> Option<usize> {
    table_key_line(text, "[vars]", key)
}

/// The line of `key = ...` in the table headed `table` (`[analyze]`) of `text`.
fn table_key_line(text: &str, table: &str, key: &str) -> Option<usize> {
    let start = text.lines().position(|l| l.trim() == table)?;
    text.lines()
        .enumerate()
        .skip(start + 1)
        .take_while(|(_, l)| !l.trim_start().starts_with('['))
        .find(|(_, l)| {
            l.trim_start()
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map(|(i, _)| i + 1)
}

impl Spec {
    /// Whether held points are rechecked: `recheck` > 0, one process per point (`repeat = 1`), and
    /// a metric of the timing core (only its statistics can show two groups of samples).
    pub fn rechecks(&self) -> bool {
        self.repeat == 1
            && self.recheck > 0
            && self
                .metrics
                .iter()
                .any(|m| matches!(m.source, MetricSource::Core))
    }

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
        // Regular files only (through links): reading a FIFO named `x.toml` would block.
        if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
            return Err(SpecError::Whole {
                path: path.to_path_buf(),
                message: "not a regular file (hint: a spec is a TOML file; a folder, FIFO or device is none)".into(),
            });
        }
        let text = std::fs::read_to_string(path).map_err(|source| SpecError::Read {
            path: path.to_path_buf(),
            source,
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
        let count = |offset: usize, source: CountError| SpecError::Count {
            path: path.to_path_buf(),
            line: line_of(offset),
            source,
        };
        // An error at `line` when the text has one, else about the whole file.
        let at_line = |line: Option<usize>, message: String| match line {
            Some(line) => SpecError::Invalid {
                path: path.to_path_buf(),
                line,
                message,
            },
            None => SpecError::Whole {
                path: path.to_path_buf(),
                message,
            },
        };
        // An error about key `key` (a top-level or [timing] key), at its line when the text has it.
        let at_key = |key: &str, message: String| at_line(key_line(text, key), message);

        // A flag that names the compiler's output would write outside the run's folders.
        let nvcc = names_nvcc(file.compiler.as_deref().unwrap_or("nvcc"));
        if let Some(flag) =
            axis::output_flag(file.flags.iter().flat_map(|f| f.split_whitespace()), nvcc)
        {
            return Err(at_key(
                "flags",
                format!(
                    "`flags` has `{flag}`, which names an output of the compiler (hint: {})",
                    axis::OUTPUT_HINT
                ),
            ));
        }
        // A program's arguments and environment are C strings: with a NUL byte in one (a
        // `\u0000` in TOML), every point would fail to start. An environment variable's name
        // holds no `=` either, and is not empty.
        let nul = |key: &str, value: &str| {
            at_key(
                key,
                format!(
                    "`{key}` has a NUL byte (`{}`), which no program can be given (hint: remove the `\\u0000`)",
                    value.escape_debug()
                ),
            )
        };
        let strings = (file.compiler.iter().map(|c| ("compiler", c)))
            .chain(file.flags.iter().map(|f| ("flags", f)))
            .chain(file.args.iter().map(|a| ("args", a)));
        for (key, value) in strings {
            if value.contains('\0') {
                return Err(nul(key, value));
            }
        }
        for (name, value) in &file.env {
            let message = if name.is_empty() || name.contains(['=', '\0']) {
                format!(
                    "[env] `{}` is no name of an environment variable: it is empty or holds `=` or a NUL byte (hint: a name such as `CUDA_VISIBLE_DEVICES`)",
                    name.escape_debug()
                )
            } else if value.contains('\0') {
                format!(
                    "[env] `{name}` has a NUL byte (`{}`), which no program can be given (hint: remove the `\\u0000`)",
                    value.escape_debug()
                )
            } else {
                continue;
            };
            return Err(at_line(key_line(text, name), message));
        }
        // `nan` and `inf` are TOML floats, but no C constant: `#define N ` would build.
        if let Some((key, value)) = file
            .vars
            .iter()
            .find(|(_, v)| matches!(v, Value::Float(x) if !x.is_finite()))
        {
            let message = format!(
                "[vars] `{key}` is `{value}`, not a finite number (hint: a number a C constant can hold, or a string in quotes)"
            );
            return Err(at_line(vars_key_line(text, key), message));
        }
        let mut axes: Vec<Axis> = Vec::new();
        for spanned in &file.axes {
            let at = spanned.span().start;
            let axis = expand_axis(spanned.get_ref(), nvcc).map_err(|source| SpecError::Axis {
                path: path.to_path_buf(),
                line: line_of(at),
                source,
            })?;
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
        // Text written decomposed looks like another value's composed text in every output
        // (src/spec/nfc.rs): two points, or two series, that no one can tell apart.
        for (spanned, axis) in file.axes.iter().zip(&axes) {
            let values = axis.values.iter().filter_map(|v| match v {
                Value::Str(s) => Some(("value", s)),
                _ => None,
            });
            let label = spanned.get_ref().label.iter().map(|l| ("label", l));
            for (what, text) in values.chain(label) {
                if let Some(points) = nfc::decomposed(text) {
                    let what = format!("axis `{}` has the {what}", axis.name);
                    return Err(invalid(
                        spanned.span().start,
                        nfc::refusal(&what, text, &points),
                    ));
                }
            }
        }
        for spanned in &file.metrics {
            let m = spanned.get_ref();
            let texts = [
                ("unit", &m.unit),
                ("label", &m.label),
                ("family", &m.family),
            ];
            for (what, text) in texts.iter().filter_map(|(w, t)| Some((w, t.as_ref()?))) {
                if let Some(points) = nfc::decomposed(text) {
                    let name = (m.name.as_ref().or(m.pattern.as_ref()).or(m.regex.as_ref()))
                        .map_or(String::new(), |n| n.escape_debug().to_string());
                    let what = format!("metric `{name}` has the {what}");
                    return Err(invalid(
                        spanned.span().start,
                        nfc::refusal(&what, text, &points),
                    ));
                }
            }
        }
        // An axis must not take the name of a column the CSV has anyway.
        for (spanned, axis) in file.axes.iter().zip(&axes) {
            if crate::schema::reserved(&axis.name) {
                return Err(invalid(
                    spanned.span().start,
                    format!(
                        "axis `{}` has the name of a results.csv column (hint: rename it; taken: {})",
                        axis.name,
                        crate::schema::fixed_columns().collect::<Vec<_>>().join(", ")
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
            let metric = read_metric(spanned.get_ref()).map_err(|source| SpecError::Metric {
                path: path.to_path_buf(),
                line: line_of(at),
                source,
            })?;
            if metrics
                .iter()
                .any(|m: &Metric| m.column() == metric.column())
            {
                return Err(invalid(
                    at,
                    format!("metric column `{}` is defined twice", metric.column()),
                ));
            }
            // Every column the metric fills, its status and repeat spread too, is its own: a
            // metric `a_median` in the unit of `a` writes `a`'s median column, two metrics `a`
            // of two units the same `a_rel_ci`; the CSV would have two columns of one name, that
            // every reader refuses.
            if let Some((other, column)) = metrics.iter().find_map(|m: &Metric| {
                let theirs = own_columns(m);
                own_columns(&metric)
                    .into_iter()
                    .find(|c| theirs.contains(c))
                    .map(|c| (m.name.clone(), c))
            }) {
                let hint = "hint: rename one of them: a metric writes `<name>_<unit>`, `<name>_median_<unit>`, `<name>_rel_ci` and more";
                return Err(invalid(
                    at,
                    match other == metric.name {
                        true => format!("metric `{other}` is defined twice ({hint})"),
                        false => format!(
                            "metric `{}` writes the column `{column}`, which metric `{other}` writes too ({hint})",
                            metric.name
                        ),
                    },
                ));
            }
            // One word, two metrics: `--y` and `[analyze] y` take a column's name first, and
            // `headline` a metric's name: `saw_mflops` (metric `saw`'s column) beside a metric
            // named `saw_mflops` was one metric to the analysis and the other to the headline
            // (review 19a M2).
            if let Some((name, other)) = metrics.iter().find_map(|m: &Metric| {
                if m.column() == metric.name {
                    Some((metric.name.clone(), m.name.clone()))
                } else if metric.column() == m.name {
                    Some((m.name.clone(), metric.name.clone()))
                } else {
                    None
                }
            }) {
                return Err(invalid(
                    at,
                    format!(
                        "metric `{name}` has the name of metric `{other}`'s column: `--y`, `[analyze] y` and `headline` could mean either (hint: rename one of them)"
                    ),
                ));
            }
            if let Some(line) = metric.columns().iter().find_map(|c| {
                crate::schema::refuse_reserved(&format!("metric `{}`", metric.name), c)
            }) {
                return Err(invalid(at, line));
            }
            if let Some(axis) = axes.iter().find(|a| {
                metric.columns().contains(&a.name)
                    || a.name == crate::schema::repeat_spread_column(&metric.name)
                    || a.name == crate::schema::metric_status_column(&metric.name)
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
        // `[analyze] x` and `by` name axes: a typo was found only after the whole sweep had run
        // ("the analysis at the end of the run failed"), while `sweep analyze` passed it over.
        if let Some(cfg) = &file.analyze {
            let named = cfg
                .x
                .iter()
                .map(|x| ("x", x))
                .chain(cfg.by.iter().flatten().map(|b| ("by", b)));
            for (key, name) in named {
                if !axes.iter().any(|a| &a.name == name) {
                    let known: Vec<String> = axes.iter().map(|a| format!("`{}`", a.name)).collect();
                    return Err(at_line(
                        table_key_line(text, "[analyze]", key),
                        format!(
                            "`[analyze] {key}` names `{}`, which is not an axis of this spec (hint: one of {})",
                            name.escape_debug(),
                            known.join(", ")
                        ),
                    ));
                }
            }
            // A series runs along x: a `by` that names it was dropped without a word, and the
            // axes left out merged into medians (review 19a M3).
            if let Some(x) = cfg
                .x
                .as_ref()
                .filter(|x| cfg.by.iter().flatten().any(|b| b == *x))
            {
                return Err(at_line(
                    table_key_line(text, "[analyze]", "by"),
                    format!(
                        "`[analyze] by` names `{}`, the x the series run along (hint: group by the other axes)",
                        x.escape_debug()
                    ),
                ));
            }
            // `x` naming an axis of text while another axis is of numbers: the analysis at the
            // end of every run failed ("name one with --x", an option `run` does not have). With
            // every axis of text (sweeps/l1_cache.toml) it is the category of the bars, and
            // passes.
            let number = Value::reads_as_number;
            let numeric: Vec<String> = axes
                .iter()
                .filter(|a| a.values.iter().all(number))
                .map(|a| format!("`{}`", a.name))
                .collect();
            if let Some(axis) = cfg
                .x
                .as_ref()
                .and_then(|x| axes.iter().find(|a| &a.name == x))
            {
                if let (Some(word), false) =
                    (axis.values.iter().find(|v| !number(v)), numeric.is_empty())
                {
                    return Err(at_line(
                        table_key_line(text, "[analyze]", "x"),
                        format!(
                            "`[analyze] x` names `{}`, whose value `{}` is not a number (hint: an axis of numbers: {})",
                            axis.name,
                            word.to_string().escape_debug(),
                            numeric.join(", ")
                        ),
                    ));
                }
            }
            // `y` names metrics (names or columns, as `sweep analyze --y`): a typo too ran the
            // whole sweep and then warned that the analysis at its end failed.
            for y in &cfg.y {
                if find_metric(&metrics, y).is_none() {
                    let known: Vec<String> =
                        metrics.iter().map(|m| format!("`{}`", m.name)).collect();
                    return Err(at_line(
                        table_key_line(text, "[analyze]", "y"),
                        format!(
                            "`[analyze] y` names `{}`, which is not a metric of this spec (hint: one of {})",
                            y.escape_debug(),
                            known.join(", ")
                        ),
                    ));
                }
            }
        }
        if let Some(h) = &file.headline {
            if find_metric(&metrics, h.get_ref()).is_none() {
                let known: Vec<String> = metrics.iter().map(|m| format!("`{}`", m.name)).collect();
                return Err(invalid(
                    h.span().start,
                    format!(
                        "`headline` = {:?} is not a metric of this spec (hint: one of {})",
                        h.get_ref(),
                        known.join(", ")
                    ),
                ));
            }
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
            if file.name.is_none() {
                // No `name` key to point at (the first `name =` line is an axis's or a metric's).
                return Err(SpecError::Whole {
                    path: path.to_path_buf(),
                    message: format!(
                        "the run folder's name {name:?}, taken from the file name, is not a folder name (hint: set `name = \"...\"`: ASCII letters, digits, `_`, `-` and `.`, not `.` or `..`; runs go to --output/<name>/)"
                    ),
                });
            }
            return Err(at_key(
                "name",
                format!(
                    "`name` = {name:?} is not a folder name (hint: ASCII letters, digits, `_`, `-` and `.`, not `.` or `..`; runs go to --output/<name>/)"
                ),
            ));
        }
        let compiler = file.compiler.clone().unwrap_or_else(|| "nvcc".into());
        let is_nvcc = names_nvcc(&compiler);
        if file.timing.as_ref().and_then(|t| t.placements) == Some(0) {
            return Err(at_key(
                "placements",
                "`[timing] placements` is 0 (hint: 1 measures the buffers where cudaMalloc put them, 8 is the default)".into(),
            ));
        }
        if let Some(t) = &file.timing {
            // (key, value, the least it may be, whether that least is allowed, what the key means)
            let numbers = [
                (
                    "target_rel_ci",
                    t.target_rel_ci,
                    0.0,
                    false,
                    "0.01 is 1 %, the default",
                ),
                (
                    "min_time_ms",
                    t.min_time_ms,
                    0.0,
                    true,
                    "milliseconds, 0 or more",
                ),
                (
                    "max_time_ms",
                    t.max_time_ms,
                    0.0,
                    false,
                    "milliseconds, more than 0",
                ),
                ("rated_sm_mhz", t.rated_sm_mhz, 0.0, true, "MHz, 0 for none"),
            ];
            for (key, value, least, least_ok, hint) in numbers {
                let Some(v) = value else { continue };
                if !(v.is_finite() && (v > least || (least_ok && v == least))) {
                    return Err(at_key(
                        key,
                        format!("`[timing] {key}` is {v} (hint: {hint})"),
                    ));
                }
            }
        }
        let env = file.env.clone();
        let timing = file.timing.clone().unwrap_or_default();
        let timeout = |secs: Option<f64>, default: f64, key: &str| -> Result<Duration, SpecError> {
            let s = secs.unwrap_or(default);
            if !(s.is_finite() && s > 0.0) {
                return Err(at_key(
                    key,
                    format!("`{key}` must be a positive number of seconds, not {s}"),
                ));
            }
            Duration::try_from_secs_f64(s)
                .ok()
                .filter(|_| s <= MAX_TIMEOUT_S)
                .ok_or_else(|| {
                    at_key(
                        key,
                        format!("`{key}` = {s:e} is too large (hint: at most {MAX_TIMEOUT_S:e} seconds; e.g. 600)"),
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
            Some(r) => {
                let at = r.span().start;
                let n =
                    whole_number("repeat", r.get_ref(), REPEAT_HINT).map_err(|e| count(at, e))?;
                if n < 1 {
                    return Err(invalid(
                        at,
                        format!("`repeat` is {n} (hint: {REPEAT_HINT})"),
                    ));
                }
                match u32::try_from(n) {
                    Ok(n) if n <= MAX_REPEAT => n,
                    _ => {
                        return Err(invalid(
                            at,
                            format!("`repeat` is {n} (hint: at most {MAX_REPEAT}; {REPEAT_HINT})"),
                        ))
                    }
                }
            }
            None => 1,
        };
        let recheck = match &file.recheck {
            Some(r) => {
                let at = r.span().start;
                let n = whole_number("recheck", r.get_ref(), &recheck_hint())
                    .map_err(|e| count(at, e))?;
                let n = u32::try_from(n)
                    .ok()
                    .filter(|n| *n <= MAX_RECHECK)
                    .ok_or_else(|| {
                        invalid(at, format!("`recheck` is {n} (hint: {})", recheck_hint()))
                    })?;
                if n > 0 && repeat > 1 {
                    return Err(invalid(
                        at,
                        format!("`recheck` is {n} with `repeat = {repeat}` (hint: with repeat every point runs in {repeat} processes already; drop one of them)"),
                    ));
                }
                n
            }
            None => DEFAULT_RECHECK,
        };
        let profile = match &file.profile {
            Some(f) => profile::Profile::from_file(f).map_err(|e| at_key(e.key, e.message))?,
            None => None,
        };
        if let (Some(p), Some(f)) = (&profile, &file.profile) {
            profile::check(f, p, &file.metrics, &metrics, &axes).map_err(
                |(at, message)| match at {
                    profile::At::Key(key) => at_key(key, message),
                    profile::At::Offset(offset) => invalid(offset, message),
                },
            )?;
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
            timing,
            axes,
            metrics,
            analyze: file.analyze,
            repeat,
            recheck,
            control_every: file.control_every.unwrap_or(DEFAULT_CONTROL_EVERY),
            overrides: Vec::new(),
            profile,
            headline: file.headline.map(|h| h.into_inner()),
        })
    }

    /// The metric the progress line shows for each point: the one `headline` names, else the first.
    pub fn headline(&self) -> Option<&Metric> {
        self.headline
            .as_deref()
            .and_then(|h| find_metric(&self.metrics, h))
            .or_else(|| self.metrics.first())
    }

    /// Compiler is nvcc (gets `-arch`).
    pub fn is_nvcc(&self) -> bool {
        names_nvcc(&self.compiler)
    }

    /// The timing core's confidence target: `[timing] target_rel_ci`, else its default 1 %.
    pub fn target_rel_ci(&self) -> f64 {
        self.timing.target_rel_ci()
    }

    /// The profile columns of a metric (`<metric>__<counter>`, none without `[profile]` counters
    /// or for a metric that does not come from the timing core).
    pub fn profile_columns(&self, m: &Metric) -> Vec<String> {
        match (&self.profile, &m.source) {
            (Some(p), MetricSource::Core) => p.metric_columns(&m.name, &metric::unit_slug(&m.unit)),
            _ => Vec::new(),
        }
    }

    pub fn axis_names(&self) -> Vec<String> {
        self.axes.iter().map(|a| a.name.clone()).collect()
    }
}

/// Every column of results.csv that metric `m` fills: its value and statistics, its repeat
/// spread and its own status.
fn own_columns(m: &Metric) -> Vec<String> {
    let mut columns = m.columns();
    columns.push(crate::schema::repeat_spread_column(&m.name));
    columns.push(crate::schema::metric_status_column(&m.name));
    columns
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

/// The integer a count key (`repeat`, `recheck`) holds, or why it holds none: the key, what it
/// holds instead, and `hint`.
fn whole_number(key: &'static str, value: &toml::Value, hint: &str) -> Result<i64, CountError> {
    let what = match value {
        toml::Value::Integer(n) => return Ok(*n),
        toml::Value::String(s) => {
            if let Ok(number) = s.trim().parse::<i64>() {
                return Err(CountError::Quoted {
                    key,
                    text: s.clone(),
                    number,
                    hint: hint.to_string(),
                });
            }
            format!("the string {s:?}")
        }
        toml::Value::Float(x) => format!("{x:?}"),
        toml::Value::Boolean(b) => format!("{b}"),
        toml::Value::Datetime(d) => format!("the date {d}"),
        toml::Value::Array(_) => "a list".into(),
        toml::Value::Table(_) => "a table".into(),
    };
    Err(CountError::NotInteger {
        key,
        what,
        hint: hint.to_string(),
    })
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
    // A top-level key below a `[table]` line is that table's in TOML.
    if let Some(key) = TOP_LEVEL_VALUES.iter().find(|k| {
        m.strip_prefix("unknown key `")
            .and_then(|rest| rest.strip_prefix(**k))
            .is_some_and(|rest| rest.starts_with('`'))
    }) {
        return format!(
            "unknown key `{key}` in the table above it (hint: `{key}` is a top-level key: write it above the first `[table]` line; below one, TOML reads it as that table's)"
        );
    }
    match m.split_once(", expected") {
        Some((head, rest)) => format!("{head} (hint: expected{rest})"),
        None => m,
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A compiler whose file name holds `nvcc` is nvcc: it gets `-arch`, and its own options are read
/// as nvcc's.
fn names_nvcc(compiler: &str) -> bool {
    Path::new(compiler)
        .file_name()
        .map(|f| f.to_string_lossy().contains("nvcc"))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests;
