//! Which profiler counter steps with a curve's period (issue 16): with `[profile]`, a metric has
//! counter columns `<metric>__<counter>`; the one whose value changes right where the curve drops
//! after its peaks, and hardly anywhere else, is named in the reading ("wavefronts per request go
//! 1 -> 2 at threads = 17"). A counter that grows with every point (a raw count of requests) or never
//! moves says nothing about the steps and is never named.

/// A counter that steps with the curve.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Stepping {
    /// The counter's name (the column without `<metric>__`).
    pub counter: String,
    /// Drops after a peak where the counter changes, of all such drops.
    pub matched: usize,
    pub drops: usize,
    /// Points where the counter changes at all.
    pub changes: usize,
    /// The first matched drop: x, the counter before and at it.
    pub x: f64,
    pub before: f64,
    pub after: f64,
}

/// A change of more than this fraction of the larger value is a step.
const STEP: f64 = 0.02;
/// At least this share of the drops must coincide with a change, and of the changes with a drop.
const RECALL: f64 = 0.8;
const PRECISION: f64 = 0.5;

/// The counter of `counters` (name, its (x, value) points) that changes at the drops after `peaks`
/// (the first x after each peak) and seldom elsewhere; `None` when none does, or fewer than two
/// drops can be checked.
pub fn stepping(peaks: &[f64], counters: &[(String, Vec<(f64, f64)>)]) -> Option<Stepping> {
    let mut best: Option<(f64, Stepping)> = None;
    for (name, points) in counters {
        let mut pts: Vec<(f64, f64)> = points.iter().copied().filter(|p| p.1.is_finite()).collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        pts.dedup_by(|a, b| a.0 == b.0);
        if pts.len() < 3 {
            continue;
        }
        let changed = |i: usize| {
            let (a, b) = (pts[i - 1].1, pts[i].1);
            (b - a).abs() > STEP * a.abs().max(b.abs()) && (b - a).abs() > 1e-12
        };
        let changes: Vec<usize> = (1..pts.len()).filter(|&i| changed(i)).collect();
        // The first point after each peak, where the counter has one.
        let drops: Vec<usize> = peaks
            .iter()
            .filter_map(|&p| pts.iter().position(|q| q.0 > p))
            .filter(|&i| i > 0)
            .collect();
        if drops.len() < 2 || changes.is_empty() {
            continue;
        }
        let hits: Vec<usize> = drops
            .iter()
            .copied()
            .filter(|i| changes.contains(i))
            .collect();
        let (recall, precision) = (
            hits.len() as f64 / drops.len() as f64,
            hits.len() as f64 / changes.len() as f64,
        );
        if recall < RECALL || precision < PRECISION {
            continue;
        }
        let first = hits[0];
        let s = Stepping {
            counter: name.clone(),
            matched: hits.len(),
            drops: drops.len(),
            changes: changes.len(),
            x: pts[first].0,
            before: pts[first - 1].1,
            after: pts[first].1,
        };
        // A ratio of the presets (no `.` in its name, e.g. wavefronts per request) before a raw
        // count that steps at the same places: it says what one request costs.
        let score = recall + precision + if name.contains('.') { 0.0 } else { 1e-6 };
        if best.as_ref().is_none_or(|(b, _)| score > *b) {
            best = Some((score, s));
        }
    }
    best.map(|(_, s)| s)
}

/// The reading's clause for a stepping counter; `nested`: it steps with the nested period.
pub fn clause(axis: &str, s: &Stepping, nested: bool) -> String {
    let whose = if nested {
        " with the nested period"
    } else {
        " with it"
    };
    format!(
        "; ncu: `{}` steps{whose} ({} of {} drops; {} -> {} at {axis} = {})",
        s.counter,
        s.matched,
        s.drops,
        super::reading::human(s.before),
        super::reading::human(s.after),
        super::reading::human(s.x),
    )
}

/// A per-request counter (a ratio of the presets: no `.` in its name) that rises as a curve falls
/// from its first x and then holds (copy at a stride on an H100: `global_sectors_per_request`
/// 4 at stride 1, 32 from stride 8 on, one sector for each lane): the reading's clause for it,
/// `None` when none rises at least twofold and holds to the end within [`STEP`].
pub fn rising(axis: &str, counters: &[(String, Vec<(f64, f64)>)]) -> Option<String> {
    counters
        .iter()
        .filter(|(name, _)| !name.contains('.'))
        .find_map(|(name, points)| {
            let mut pts: Vec<(f64, f64)> =
                points.iter().copied().filter(|p| p.1.is_finite()).collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let &(x0, first) = pts.first()?;
            let top = pts.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
            let near = |v: f64| (top - v).abs() <= STEP * top;
            // Never falls by more than a step, reaches the top and holds it to the end.
            let climbs = pts.windows(2).all(|w| w[1].1 >= w[0].1 - STEP * top);
            let at = pts.iter().position(|p| near(p.1))?;
            let holds = pts[at..].iter().all(|p| near(p.1));
            (first > 0.0 && top >= 2.0 * first && climbs && holds && at > 0 && at + 1 < pts.len())
                .then(|| {
                    let h = super::reading::human;
                    format!(
                        "; ncu: `{name}` rises as it falls, from {} at {axis} = {} to {} at {axis} \
                         = {}, and holds there",
                        h(first),
                        h(x0),
                        h(pts[at].1),
                        h(pts[at].0)
                    )
                })
        })
}

/// The `[profile]` counter columns of the analysed metrics (`<metric>__<counter>`), as series
/// grouped like the metrics' own.
pub(super) fn counter_series(
    table: &crate::store::Run,
    x: &str,
    by: &[String],
    metrics: &[super::load::MetricColumn],
) -> Result<Vec<super::load::RawSeries>, super::AnalyzeError> {
    use crate::schema::COUNTER_SEP as SEP;
    let cols: Vec<super::load::MetricColumn> = table
        .header
        .iter()
        .filter(|h| {
            metrics
                .iter()
                .any(|m| h.starts_with(&format!("{}{SEP}", m.name)))
                && !crate::profile::metric_power::is_column(h)
        })
        .map(|h| super::load::MetricColumn {
            name: h.clone(),
            unit: String::new(),
            column: h.clone(),
            ..Default::default()
        })
        .collect();
    if cols.is_empty() {
        return Ok(Vec::new());
    }
    use super::load::Series as _;
    table.series(x, by, &cols)
}

/// The counters of series `r` (same group, columns `<its metric>__<counter>`), by counter name,
/// with the points that have a value.
pub(super) fn counters_of(
    all: &[super::load::RawSeries],
    r: &super::load::RawSeries,
) -> Vec<(String, Vec<(f64, f64)>)> {
    let prefix = format!("{}{}", r.metric.name, crate::schema::COUNTER_SEP);
    all.iter()
        .filter(|c| c.group == r.group)
        .filter_map(|c| {
            let name = c.metric.column.strip_prefix(&prefix)?;
            let pts = c
                .points
                .iter()
                .filter_map(|&(x, v)| Some((x, v?)))
                .collect();
            Some((name.to_string(), pts))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wavefronts per request of a block of t threads storing at stride k (32 banks): a warp of w
    /// lanes needs ceil(w / (32 / k)) wavefronts; the block's mean over its warps.
    fn wavefronts(t: u32, k: u32) -> f64 {
        let lanes = 32 / k;
        let warps: Vec<u32> = (0..t.div_ceil(32)).map(|i| (t - 32 * i).min(32)).collect();
        warps.iter().map(|w| w.div_ceil(lanes) as f64).sum::<f64>() / warps.len() as f64
    }

    fn series(f: impl Fn(u32) -> f64) -> Vec<(f64, f64)> {
        (1..=96).map(|t| (t as f64, f(t))).collect()
    }

    #[test]
    fn wavefronts_per_request_are_named_where_the_curve_drops_every_16() {
        let peaks = [16.0, 32.0, 48.0, 64.0, 80.0];
        let counters = vec![
            // a raw count: more requests with every thread
            ("requests".to_string(), series(|t| 8192.0 * t as f64)),
            ("conflicts".to_string(), series(|_| 0.0)),
            // a raw count that steps at the same places (one warp of requests up to 32 threads)
            (
                "wavefronts.sum".to_string(),
                series(|t| 512.0 * wavefronts(t, 2) * t.div_ceil(32) as f64),
            ),
            (
                "wavefronts_per_request".to_string(),
                series(|t| wavefronts(t, 2)),
            ),
        ];
        let s = stepping(&peaks, &counters).unwrap();
        assert_eq!(s.counter, "wavefronts_per_request");
        assert_eq!((s.matched, s.drops), (5, 5));
        assert_eq!((s.x, s.before, s.after), (17.0, 1.0, 2.0));
        assert_eq!(
            clause("threads", &s, false),
            "; ncu: `wavefronts_per_request` steps with it (5 of 5 drops; 1 -> 2 at threads = 17)"
        );
    }

    /// copy_stride_counters on an H100: sectors per request 4 * stride up to 32 at stride 8, the
    /// raw sector count growing with it (a `.` in its name: not a per-request ratio).
    #[test]
    fn a_per_request_counter_that_rises_and_holds_is_named_with_a_falling_curve() {
        let strides = [1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 9.0, 16.0, 32.0, 1024.0];
        let sectors = |s: f64| (4.0 * s).min(32.0) * if s == 9.0 { 0.99999 } else { 1.0 };
        let counters = vec![
            (
                "lts__t_sectors.sum".to_string(),
                strides.iter().map(|&s| (s, 1e6 * s)).collect(),
            ),
            (
                "global_sectors_per_request".to_string(),
                strides.iter().map(|&s| (s, sectors(s))).collect(),
            ),
        ];
        assert_eq!(
            rising("stride", &counters).as_deref(),
            Some(
                "; ncu: `global_sectors_per_request` rises as it falls, from 4 at stride = 1 to \
                 32 at stride = 8, and holds there"
            )
        );
        // One that rises to the end does not hold; one that never doubles says little.
        let ramp = vec![(
            "per_request".to_string(),
            strides.iter().map(|&s| (s, s)).collect(),
        )];
        assert_eq!(rising("stride", &ramp), None);
        let mild = vec![(
            "per_request".to_string(),
            strides.iter().map(|&s| (s, 4.0 + s.min(2.0))).collect(),
        )];
        assert_eq!(rising("stride", &mild), None);
    }

    #[test]
    fn no_counter_is_named_when_none_steps_with_the_peaks() {
        // stride 4 changes every 8 threads: at all 5 drops of a 16-period, but at 6 other places
        let counters = vec![("wf4".to_string(), series(|t| wavefronts(t, 4)))];
        assert_eq!(stepping(&[16.0, 32.0, 48.0, 64.0, 80.0], &counters), None);
        // and against its own period of 8 it is named
        let peaks8: Vec<f64> = (1..12).map(|i| 8.0 * i as f64).collect();
        assert_eq!(
            stepping(&peaks8, &counters).map(|s| (s.matched, s.changes)),
            Some((11, 11))
        );
        // one drop is not enough to say anything
        let wf2 = vec![("wf2".to_string(), series(|t| wavefronts(t, 2)))];
        assert_eq!(stepping(&[16.0], &wf2), None);
        assert_eq!(stepping(&[16.0, 32.0], &[]), None);
    }
}
