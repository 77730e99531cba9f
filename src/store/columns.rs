//! Which columns of a results CSV are axes and which are metrics: from `manifest.json`, or
//! guessed from the header of a CSV without one; and the columns that go with a metric (its unit,
//! its statistics).

use super::schema::{self, Dialect, INDEX_COLUMN, POINT_ID_COLUMN, STATUS_COLUMN};
use super::{Manifest, StoreError};
use crate::spec::{Better, Model, CORE_FIELDS, CORE_STATS};
use std::path::Path;

/// One metric column.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MetricColumn {
    pub name: String,
    pub unit: String,
    pub column: String,
    /// The spec's `better` and `model` (from the manifest); `None` where it has none.
    pub better: Option<Better>,
    pub model: Option<Model>,
}

/// The column `<metric>_<suffix>`: by the metric's name, else by the longest prefix of its column
/// cut at a `_` (a CSV without a manifest names metrics by their column: `copy_gb_per_s` ->
/// `copy_rel_ci`).
///
/// The prefix leaves a unit behind it (`mflops`, `gb_per_s`), never more: `saw_plain_mflops`
/// borrowed `saw_spread` of the metric `saw` (review 16b B9: a 20 % drop was `same`). A metric
/// named by a manifest is found by its name alone.
pub fn stat_column(header: &[String], m: &MetricColumn, suffix: &str) -> Option<usize> {
    let find = |name: String| header.iter().position(|h| *h == name);
    let unit_alone = |rest: &str| {
        !rest.is_empty()
            && (!rest.contains('_')
                || ["_per_s", "_per_ms", "_per_us", "_per_ns"]
                    .iter()
                    .any(|per| {
                        rest.strip_suffix(per)
                            .is_some_and(|r| !r.is_empty() && !r.contains('_'))
                    }))
    };
    find(format!("{}_{suffix}", m.name)).or_else(|| {
        (m.name == m.column).then_some(())?;
        m.column
            .rmatch_indices('_')
            .filter(|(i, _)| unit_alone(&m.column[i + 1..]))
            .find_map(|(i, _)| find(format!("{}_{suffix}", &m.column[..i])))
    })
}

/// Whether a column after `status` of a CSV without a manifest holds a metric's value: not a
/// fixed column, nor a statistic the timing core writes beside a value (`<metric>_median_<unit>`,
/// `<metric>_rel_ci`, ...: see `Metric::columns`), nor a repeat spread.
fn holds_metric_value(column: &str) -> bool {
    !schema::reserved(column)
        && !CORE_STATS
            .iter()
            .any(|s| column.contains(&format!("_{s}_")))
        && !CORE_FIELDS
            .iter()
            .any(|f| column.ends_with(&format!("_{f}")))
}

/// The metrics of a run's manifest that its header has, with the spec's `better` and `model`.
pub(super) fn from_manifest(
    path: &Path,
    manifest: &Manifest,
    csv: &Path,
    header: &[String],
) -> Result<Vec<MetricColumn>, StoreError> {
    let mut metrics: Vec<MetricColumn> = Vec::new();
    for m in &manifest.metrics {
        if !header.contains(&m.column) {
            // The manifest's header has it and this one not: a column removed or renamed by
            // hand, whose metric every reader would leave out unsaid.
            if manifest.columns.contains(&m.column) {
                return Err(StoreError::MissingColumn {
                    path: csv.to_path_buf(),
                    column: m.column.clone(),
                    metric: m.name.clone(),
                });
            }
            continue;
        }
        let bad = |key: &'static str, value: &str, hint: String| {
            StoreError::BadMetric(Box::new(super::BadMetric {
                path: path.to_path_buf(),
                metric: m.name.clone(),
                key,
                value: value.to_string(),
                hint,
            }))
        };
        // The column its name and unit make (`<name>_<unit slug>`): one edited to another
        // column of the CSV (its median's, another metric's) was read as the metric's values
        // by analyze, export and report alike, unsaid (review 13b F8).
        let slug = crate::spec::unit_slug(&m.unit);
        let made = if slug == m.name {
            slug
        } else {
            format!("{}_{slug}", m.name)
        };
        if m.column != made {
            return Err(bad(
                "column",
                &m.column,
                format!(
                    "the metric `{}` in {} is written to `{made}`",
                    m.name, m.unit
                ),
            ));
        }
        let better = match m.better.as_deref() {
            Some(b) => {
                Some(Better::parse(b).ok_or_else(|| bad("better", b, Better::WORDS.to_string()))?)
            }
            None => None,
        };
        let model = match m.model.as_deref() {
            Some(text) => Some(Model::parse(text).map_err(|e| bad("model", text, e.to_string()))?),
            None => None,
        };
        metrics.push(MetricColumn {
            name: m.name.clone(),
            unit: m.unit.clone(),
            column: m.column.clone(),
            better,
            model,
        });
    }
    Ok(metrics)
}

/// Without a manifest: axes are the columns between `index` (or the start) and `status`; metrics
/// are the numeric columns after `status`, less the timing core's statistics, `[profile]` counters
/// and power, and the bookkeeping.
pub(super) fn guess_columns(
    path: &Path,
    header: &[String],
    rows: &[super::run::Row],
    dialect: Dialect,
) -> Result<(Vec<String>, Vec<MetricColumn>), StoreError> {
    let status = header
        .iter()
        .position(|h| h == STATUS_COLUMN)
        .ok_or_else(|| StoreError::NoStatus {
            path: path.to_path_buf(),
        })?;
    let start = header
        .iter()
        .position(|h| h == INDEX_COLUMN)
        .map_or(0, |i| i + 1);
    let axes: Vec<String> = header[start.min(status)..status]
        .iter()
        .filter(|h| *h != POINT_ID_COLUMN)
        .cloned()
        .collect();
    // `[profile] power` writes all its columns; a header with them all is a profiled run's.
    let power = schema::POWER_COLUMNS
        .iter()
        .all(|c| header.iter().any(|h| h == c));
    // `<metric>__<counter>`: a `[profile]` counter when `<metric>` has columns of its own
    // (`<metric>_<unit>`, `<metric>_rel_ci`, ...), else a metric whose name holds `__`.
    let counter = |h: &str| {
        h.find(schema::COUNTER_SEP).is_some_and(|i| {
            let own = format!("{}_", &h[..i]);
            header.iter().any(|c| {
                c.strip_prefix(&own)
                    .is_some_and(|rest| !rest.is_empty() && !rest.starts_with('_'))
            })
        })
    };
    let profiled = |h: &str| counter(h) || (power && schema::POWER_COLUMNS.contains(&h));
    let metrics = header
        .iter()
        .enumerate()
        .skip(status + 1)
        .filter(|(_, h)| !profiled(h))
        .filter(|(_, h)| holds_metric_value(h))
        .filter(|(c, _)| {
            rows.iter()
                .any(|r| r.get(*c).and_then(|v| dialect.parse_number(v)).is_some())
        })
        .map(|(_, h)| MetricColumn {
            name: h.clone(),
            unit: unit_of_column(h).to_string(),
            column: h.clone(),
            ..Default::default()
        })
        .collect();
    Ok((axes, metrics))
}

/// The unit a column name ends with (the design's slugs), or "" when it does not say.
pub fn unit_of_column(column: &str) -> &'static str {
    // Rates before seconds: `mb_per_s` ends in `_s` too (review 16b B5: every throughput but
    // GB/s was read as seconds, lower is better). A column keeps no case: `mb_per_s` may be Mb/s.
    // And a rate per any time: `ops_per_ms` is no time either (review 17 C4).
    const SLUGS: [(&str, &str); 22] = [
        ("gb_per_s", "GB/s"),
        ("mb_per_s", "MB/s"),
        ("kb_per_s", "kB/s"),
        ("tb_per_s", "TB/s"),
        ("gib_per_s", "GiB/s"),
        ("mib_per_s", "MiB/s"),
        ("kib_per_s", "KiB/s"),
        ("tib_per_s", "TiB/s"),
        ("gflop_per_s", "GFLOP/s"),
        ("tflop_per_s", "TFLOP/s"),
        ("gflops", "GFlops"),
        ("mflops", "MFlops"),
        ("fraction", "fraction"),
        ("cycles", "cycles"),
        ("_per_ns", "/ns"),
        ("_per_us", "/us"),
        ("_per_ms", "/ms"),
        ("_ns", "ns"),
        ("_us", "us"),
        ("_ms", "ms"),
        ("_per_s", "/s"),
        ("_s", "s"),
    ];
    SLUGS
        .iter()
        .find(|(slug, _)| column.ends_with(slug))
        .map_or("", |(_, unit)| unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uncertainty_columns_are_found_by_name_or_by_a_prefix_of_the_column() {
        let header: Vec<String> = [
            "copy_gb_per_s",
            "copy_rel_ci",
            "copy_spread",
            "copy_repeat_spread",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let guessed = MetricColumn {
            name: "copy_gb_per_s".into(),
            unit: String::new(),
            column: "copy_gb_per_s".into(),
            ..Default::default()
        };
        let from_manifest = MetricColumn {
            name: "copy".into(),
            unit: "GB/s".into(),
            column: "copy_gb_per_s".into(),
            ..Default::default()
        };
        for m in [&guessed, &from_manifest] {
            assert_eq!(stat_column(&header, m, "rel_ci"), Some(1));
            assert_eq!(stat_column(&header, m, "spread"), Some(2));
            assert_eq!(stat_column(&header, m, "repeat_spread"), Some(3));
        }
        let other = MetricColumn {
            name: "mflops".into(),
            unit: String::new(),
            column: "mflops".into(),
            ..Default::default()
        };
        assert_eq!(stat_column(&header, &other, "rel_ci"), None);
    }
}
