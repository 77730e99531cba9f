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
    pub(super) better: Option<String>,
    pub(super) model: Option<String>,
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
    /// `better = "higher" | "lower" | "neither"`; `None`: from the name and unit
    /// ([`Better::for_metric`]).
    pub better: Option<Better>,
    /// `model = "..."`: the mechanism the bench expects along its swept axis, which the analysis
    /// fits and names when it explains the steps ([`Model`]).
    pub model: Option<Model>,
}

/// Which way a metric is better (`better = ...` of a `[[metric]]`). `Neither` (a count, a
/// configuration value): the analysis names no best x.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
    Neither,
}

impl Better {
    pub const WORDS: &'static str = "`higher`, `lower` or `neither`";

    pub fn parse(s: &str) -> Option<Better> {
        match s {
            "higher" => Some(Better::Higher),
            "lower" => Some(Better::Lower),
            "neither" => Some(Better::Neither),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Better::Higher => "higher",
            Better::Lower => "lower",
            Better::Neither => "neither",
        }
    }

    /// The default: times (`s`, `ms`, `us`, `ns`, `cycles`, ...) lower; counts (`ways`, `bytes`,
    /// `registers`, `blocks`, `threads`, `warps`, `requests`, `sectors`, `wavefronts`,
    /// `conflicts`, `count`, ...) neither; everything else (throughputs, fractions) higher.
    pub fn for_unit(unit: &str) -> Better {
        let u = unit.trim().to_ascii_lowercase();
        const TIMES: [&str; 10] = [
            "s", "sec", "ms", "us", "µs", "μs", "ns", "cycles", "clocks", "ticks",
        ];
        const COUNTS: [&str; 16] = [
            "ways",
            "way",
            "bytes",
            "b",
            "registers",
            "regs",
            "blocks",
            "threads",
            "warps",
            "requests",
            "sectors",
            "wavefronts",
            "conflicts",
            "count",
            "elements",
            "instructions",
        ];
        if TIMES.contains(&u.as_str()) {
            Better::Lower
        } else if COUNTS.contains(&u.as_str()) {
            Better::Neither
        } else {
            Better::Higher
        }
    }

    /// The default of a metric without `better`: [`Better::for_unit`], but a share (`fraction`,
    /// `%`, `ratio` or no unit) of something counted is no performance either: the fraction of
    /// `divergent_warps` (its name ends in a count's unit) or an `occupancy`. The most divergent
    /// warps is not the best, and a full SM is not the fastest tile (a run of `matmul_tile` on
    /// an H100 read "best at tile = 8 (100 %)" for occupancy where the tile of 32 ran fastest).
    pub fn for_metric(name: &str, unit: &str) -> Better {
        let by_unit = Better::for_unit(unit);
        let share = ["fraction", "%", "percent", "ratio", ""]
            .contains(&unit.trim().to_ascii_lowercase().as_str());
        let name = name.to_ascii_lowercase();
        let counted = name
            .rsplit('_')
            .next()
            .is_some_and(|last| Better::for_unit(last) == Better::Neither)
            || name.contains("occupancy");
        if by_unit == Better::Higher && share && counted {
            Better::Neither
        } else {
            by_unit
        }
    }
}

/// A named model of what the cost of a point should be along the swept axis (`model = ...` of a
/// `[[metric]]`): `whole_warps`, `scheduler_busiest`, `wavefronts_per_request[:stride=S,words=W]`,
/// `lines_per_request[:words=W]` or `sectors_per_request[:words=W]`. See docs/analysis.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Model {
    pub kind: ModelKind,
    /// 4-byte words between neighbouring lanes' first words (wavefronts_per_request on a thread
    /// axis); never taken as less than `words`.
    pub stride: u32,
    /// 4-byte words each lane accesses (2 for a float2, 4 for a float4).
    pub words: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelKind {
    /// A grid: every started warp costs a whole one (steps every 32 threads).
    WholeWarps,
    /// One block on one SM: its warps go round-robin to the 4 sub-partition schedulers; the
    /// busiest one sets the time (steps every 128 threads).
    SchedulerBusiest,
    /// Shared memory: a warp's request takes as many wavefronts as its most loaded bank holds
    /// distinct words (32 banks of 4 bytes).
    WavefrontsPerRequest,
    /// Global stores: a warp's request covers this many 128-byte lines.
    LinesPerRequest,
    /// Global accesses along an offset: a warp's request touches this many 32-byte sectors.
    SectorsPerRequest,
}

impl ModelKind {
    pub fn name(self) -> &'static str {
        match self {
            ModelKind::WholeWarps => "whole_warps",
            ModelKind::SchedulerBusiest => "scheduler_busiest",
            ModelKind::WavefrontsPerRequest => "wavefronts_per_request",
            ModelKind::LinesPerRequest => "lines_per_request",
            ModelKind::SectorsPerRequest => "sectors_per_request",
        }
    }
}

impl Model {
    pub const NAMES: &'static str =
        "`whole_warps`, `scheduler_busiest`, `wavefronts_per_request`, \
         `lines_per_request` or `sectors_per_request`";

    /// `name` or `name:key=value,key=value` (keys `stride`, `words`: whole numbers 1..=32).
    pub fn parse(s: &str) -> Result<Model, ModelError> {
        let (name, params) = s.split_once(':').unwrap_or((s, ""));
        let kind = match name.trim() {
            "whole_warps" => ModelKind::WholeWarps,
            "scheduler_busiest" => ModelKind::SchedulerBusiest,
            "wavefronts_per_request" => ModelKind::WavefrontsPerRequest,
            "lines_per_request" => ModelKind::LinesPerRequest,
            "sectors_per_request" => ModelKind::SectorsPerRequest,
            other => {
                return Err(ModelError::Unknown {
                    name: other.to_string(),
                })
            }
        };
        let mut m = Model {
            kind,
            stride: 1,
            words: 1,
        };
        for kv in params.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| ModelError::NotKeyValue(kv.to_string()))?;
            let n: u32 = v
                .trim()
                .parse()
                .ok()
                .filter(|n| (1..=32).contains(n))
                .ok_or_else(|| ModelError::BadValue(kv.to_string()))?;
            let takes = match k.trim() {
                "stride" => kind == ModelKind::WavefrontsPerRequest,
                "words" => matches!(
                    kind,
                    ModelKind::WavefrontsPerRequest
                        | ModelKind::LinesPerRequest
                        | ModelKind::SectorsPerRequest
                ),
                _ => false,
            };
            if !takes {
                return Err(ModelError::NoParameter {
                    kind,
                    parameter: k.trim().to_string(),
                });
            }
            if k.trim() == "stride" {
                m.stride = n;
            } else {
                m.words = n;
            }
        }
        Ok(m)
    }
}

impl std::fmt::Display for Model {
    /// The form `parse` reads, parameters only where they differ from 1.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.kind.name())?;
        let mut params = Vec::new();
        if self.stride != 1 {
            params.push(format!("stride={}", self.stride));
        }
        if self.words != 1 {
            params.push(format!("words={}", self.words));
        }
        if !params.is_empty() {
            write!(f, ":{}", params.join(","))?;
        }
        Ok(())
    }
}

/// Why a `model` (of a spec's `[[metric]]` or a manifest's metric) cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    #[error("unknown model `{name}` (hint: one of {})", Model::NAMES)]
    Unknown { name: String },
    #[error("model parameter `{0}` is not `key=value`")]
    NotKeyValue(String),
    #[error("model parameter `{0}`: the value must be a whole number 1..32")]
    BadValue(String),
    #[error("model `{}` takes no parameter `{parameter}` (hint: `stride` goes with wavefronts_per_request, `words` with the *_per_request models)", kind.name())]
    NoParameter { kind: ModelKind, parameter: String },
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

/// `GB/s` -> `gb_per_s`, `MFlops` -> `mflops`, `%` -> `percent`, `µs` -> `us`. A letter of
/// another script is kept, lower case (review 21 F5: `µs` lost its `µ` and named the column of
/// seconds, `saw_s`, which every reader of the CSV then took for seconds).
pub fn unit_slug(unit: &str) -> String {
    let mut out = String::new();
    let spelled = unit
        .replace('/', "_per_")
        .replace('%', "_percent_")
        .replace(['µ', 'μ'], "u")
        .replace('°', "deg");
    for c in spelled.chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_string()
}

fn builtin(pattern: &str) -> Option<(&'static str, &'static str, &'static str)> {
    // (name, unit, regex). The value is the whole token after the unit, with any digit groups
    // after it (`12 345`), so that `12,345.6`, `1,5`, `0x10` or `100abc` are refused as not a
    // number instead of read as their leading digits.
    match pattern {
        "mflops" => Some((
            "mflops",
            "MFlops",
            r"(?mi)^\s*MFlops\s*[:=][ \t]*(?P<value>\S+(?:[ \t]+[0-9]\S*)*)",
        )),
        "gflops" => Some((
            "gflops",
            "GFlops",
            r"(?mi)^\s*GFlops\s*[:=][ \t]*(?P<value>\S+(?:[ \t]+[0-9]\S*)*)",
        )),
        "gb_per_s" => Some((
            "gb_per_s",
            "GB/s",
            r"(?mi)^\s*GB/s\s*[:=][ \t]*(?P<value>\S+(?:[ \t]+[0-9]\S*)*)",
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
    #[error("metric `{name}`: `unit = {unit:?}` has no letter or digit for its column's name (hint: a unit such as `MFlops`, `GB/s`, `ms`, `percent`)")]
    UnitOfNoName { name: String, unit: String },
    /// regex's message spans lines (the pattern, a caret, the reason): only its last is shown.
    #[error("metric `{name}`: bad regex: {}", source.to_string().lines().last().unwrap_or(""))]
    BadRegex {
        name: String,
        #[source]
        source: regex::Error,
    },
    #[error("metric `{0}`: the regex needs a group `(?P<value>...)`")]
    NoValueGroup(String),
    #[error("metric `{name}`: `better = \"{value}\"` (hint: {})", Better::WORDS)]
    BadBetter { name: String, value: String },
    #[error("metric `{name}`: `model = \"{value}\"`: {source}")]
    BadModel {
        name: String,
        value: String,
        /// Boxed: it would make every `SpecError` larger.
        #[source]
        source: Box<ModelError>,
    },
}

/// `better` and `model` of a `[[metric]]` named `name`.
fn read_analysis_keys(
    m: &MetricFile,
    name: &str,
) -> Result<(Option<Better>, Option<Model>), MetricError> {
    let better = match &m.better {
        Some(b) => Some(Better::parse(b).ok_or_else(|| MetricError::BadBetter {
            name: name.to_string(),
            value: b.clone(),
        })?),
        None => None,
    };
    let model = match &m.model {
        Some(v) => Some(Model::parse(v).map_err(|source| MetricError::BadModel {
            name: name.to_string(),
            value: v.clone(),
            source: Box::new(source),
        })?),
        None => None,
    };
    Ok((better, model))
}

pub(super) fn read_metric(m: &MetricFile) -> Result<Metric, MetricError> {
    if let Some(p) = &m.pattern {
        if m.regex.is_some() {
            return Err(MetricError::PatternAndRegex);
        }
        let (name, unit, re) = builtin(p).ok_or_else(|| MetricError::UnknownPattern(p.clone()))?;
        let name = m.name.clone().unwrap_or_else(|| name.into());
        let (better, model) = read_analysis_keys(m, &name)?;
        let unit = m.unit.clone().unwrap_or_else(|| unit.into());
        if unit_slug(&unit).is_empty() {
            return Err(MetricError::UnitOfNoName { name, unit });
        }
        return Ok(Metric {
            name,
            unit,
            source: MetricSource::Regex(Regex::new(re).map_err(MetricError::Builtin)?),
            better,
            model,
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
    // A unit of no letter or digit (`""`, `%`) names no column: `m_`, `m_median_` (review 20a L4).
    if unit_slug(&unit).is_empty() {
        return Err(MetricError::UnitOfNoName { name, unit });
    }
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
    let (better, model) = read_analysis_keys(m, &name)?;
    Ok(Metric {
        name,
        unit,
        source,
        better,
        model,
    })
}

#[cfg(test)]
mod tests {
    use super::unit_slug;

    #[test]
    fn a_units_column_name_keeps_its_letters() {
        assert_eq!(unit_slug("GB/s"), "gb_per_s");
        assert_eq!(unit_slug("%"), "percent");
        // `µs` was `s`: the column of seconds (review 21 F5).
        assert_eq!(unit_slug("µs"), "us");
        assert_eq!(unit_slug("μs"), "us");
        assert_eq!(unit_slug("°C"), "degc");
        assert_eq!(unit_slug("Ωs"), "ωs");
    }
}
