//! `[profile]` against the rest of a spec: counters need timing-core metrics, a metric name must not
//! read as `<metric>__<counter>`, and every column the profile adds must be new.

use super::{Profile, ProfileFile, SEP};
use crate::spec::{Axis, Metric, MetricFile, MetricSource};
use toml::Spanned;

/// Where in the spec a problem lies: at a key of `[profile]`, or at a byte offset.
pub(in crate::spec) enum At {
    Key(&'static str),
    Offset(usize),
}

/// Checks a spec's `[profile]` (`file` as written, `p` checked) against its metrics and axes.
pub(in crate::spec) fn check(
    file: &ProfileFile,
    p: &Profile,
    metric_files: &[Spanned<MetricFile>],
    metrics: &[Metric],
    axes: &[Axis],
) -> Result<(), (At, String)> {
    // The key that asks for the columns: `presets` when there are any, else `ncu_metrics`, else
    // `metric_power_ms` (the power pass alone).
    let counters_key = if !file.presets.is_empty() {
        "presets"
    } else if !file.ncu_metrics.is_empty() || p.metric_power.is_none() {
        "ncu_metrics"
    } else {
        "metric_power_ms"
    };
    let no_core = !metrics
        .iter()
        .any(|m| matches!(m.source, MetricSource::Core));
    if !p.counters.is_empty() && no_core {
        return Err((
            At::Key(counters_key),
            "`[profile]` asks for counters, but no metric comes from the timing core (hint: counters are read per timing-core metric, inside the NVTX range sweep.cuh opens for it)".into(),
        ));
    }
    if p.metric_power.is_some() && no_core {
        return Err((
            At::Key("metric_power_ms"),
            "`[profile] metric_power_ms` asks for each metric's power, but no metric comes from the timing core (hint: the power pass loops each timing-core metric's call; `power = true` gives the point's power)".into(),
        ));
    }
    if !p.counters.is_empty() || p.metric_power.is_some() {
        // `<metric>__<counter>`: a metric `fast__x` beside `fast` would read as a counter of it.
        if let Some((spanned, m)) = metric_files
            .iter()
            .zip(metrics)
            .find(|(_, m)| m.name.contains(SEP) || m.name.ends_with('_'))
        {
            let mut plain = m.name.trim_end_matches('_').to_string();
            while plain.contains(SEP) {
                plain = plain.replace(SEP, "_");
            }
            return Err((
                At::Offset(spanned.span().start),
                format!(
                    "metric name `{}` makes columns with `{SEP}`, which separates a metric from its counter in `[profile]` columns (hint: rename it, e.g. `{plain}`)",
                    m.name,
                ),
            ));
        }
    }
    // A column the profile adds must be new: the store writes a row's values by column name, so
    // a metric `power` in W would be overwritten by the sampled power.
    let added = metrics
        .iter()
        .filter(|m| matches!(m.source, MetricSource::Core))
        .flat_map(|m| p.metric_columns(&m.name, &crate::spec::metric::unit_slug(&m.unit)))
        .map(|c| (counters_key, c))
        .chain(p.point_columns().into_iter().map(|c| ("power", c)));
    let taken: Vec<(String, String, &str)> = axes
        .iter()
        .map(|a| (a.name.clone(), format!("axis `{}`", a.name), "axis"))
        .chain(metrics.iter().flat_map(|m| {
            m.columns()
                .into_iter()
                .chain([crate::schema::repeat_spread_column(&m.name)])
                .map(|c| (c, format!("metric `{}`", m.name), "metric"))
        }))
        .collect();
    for (key, col) in added {
        if let Some((_, owner, kind)) = taken.iter().find(|(c, _, _)| *c == col) {
            return Err((
                At::Key(key),
                format!("`[profile] {key}` adds a column `{col}`, which {owner} writes too (hint: rename the {kind})"),
            ));
        }
    }
    Ok(())
}
