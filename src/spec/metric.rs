//! A metric of a spec (`[[metric]]`: the timing core's line, a built-in pattern or a regex) and the
//! results.csv columns it fills; the columns every row has.

use super::axis::valid_ident;
use regex::Regex;
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MetricFile {
    pub(super) name: Option<String>,
    pub(super) unit: Option<String>,
    pub(super) pattern: Option<String>,
    pub(super) regex: Option<String>,
    /// Words for the metric on charts (read by [`super::Labels`]).
    #[allow(dead_code)]
    pub(super) label: Option<String>,
    /// The chart the metric is overlaid on with the others of this family (read by
    /// [`super::Labels`]).
    #[allow(dead_code)]
    pub(super) family: Option<String>,
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

/// Why a `[[metric]]` table is wrong (the spec adds its file and line).
#[derive(Debug, thiserror::Error)]
pub enum MetricError {
    #[error("a metric takes `pattern` or `regex`, not both")]
    PatternAndRegex,
    #[error("unknown metric pattern `{0}` (hint: one of `mflops`, `gflops`, `gb_per_s`)")]
    UnknownPattern(String),
    /// A built-in pattern's regex does not compile (a bug).
    #[error(transparent)]
    Builtin(regex::Error),
    #[error("a metric needs a `name` (or a built-in `pattern`)")]
    NoName,
    #[error("metric name `{0}` is not an identifier")]
    NotIdentifier(String),
    #[error("metric `{0}` needs a `unit` (it goes into the column name)")]
    NoUnit(String),
    /// regex's message spans lines (the pattern, a caret, the reason): only its last is shown.
    #[error("metric `{name}`: bad regex: {}", source.to_string().lines().last().unwrap_or(""))]
    BadRegex {
        name: String,
        #[source]
        source: regex::Error,
    },
    #[error("metric `{0}`: the regex needs a group `(?P<value>...)`")]
    NoValueGroup(String),
}

pub(super) fn read_metric(m: &MetricFile) -> Result<Metric, MetricError> {
    if let Some(p) = &m.pattern {
        if m.regex.is_some() {
            return Err(MetricError::PatternAndRegex);
        }
        let (name, unit, re) = builtin(p).ok_or_else(|| MetricError::UnknownPattern(p.clone()))?;
        return Ok(Metric {
            name: m.name.clone().unwrap_or_else(|| name.into()),
            unit: m.unit.clone().unwrap_or_else(|| unit.into()),
            source: MetricSource::Regex(Regex::new(re).map_err(MetricError::Builtin)?),
        });
    }
    let name = m.name.clone().ok_or(MetricError::NoName)?;
    if !valid_ident(&name) {
        return Err(MetricError::NotIdentifier(name));
    }
    let unit = m
        .unit
        .clone()
        .ok_or_else(|| MetricError::NoUnit(name.clone()))?;
    let source = match &m.regex {
        Some(r) => {
            let re = Regex::new(r).map_err(|source| MetricError::BadRegex {
                name: name.clone(),
                source,
            })?;
            if re.captures_len() < 2 {
                return Err(MetricError::NoValueGroup(name));
            }
            MetricSource::Regex(re)
        }
        None => MetricSource::Core,
    };
    Ok(Metric { name, unit, source })
}
