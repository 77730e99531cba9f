//! Each metric's own status (`ok`, `noisy`, `unstable`), and the one reading of it every reader
//! of a run shares (analysis, charts, report, export, compare).
//!
//! A run writes `<metric>_status` right after the metric's other columns; the row's `status` is
//! the worst of them (kept for readers that know only that column). Runs written before that
//! column existed carry only the row's status; [`metric_status`] then derives a metric's status
//! conservatively from the row's status and the metric's own numbers:
//!
//! - `unstable` only if the row is unstable AND the metric's placement spread (`<metric>_spread`)
//!   exceeds the run's confidence target (`[timing] target_rel_ci`). The timing core calls a
//!   metric unstable when its spread exceeds the target and the within-placement noise; this is the
//!   half of that rule the CSV can still check;
//! - `noisy` if the row is noisy or unstable AND the metric's confidence half-width
//!   (`<metric>_rel_ci`) exceeds the target;
//! - else `ok`.
//!
//! What the words mean, for people: [`UNSTABLE_MEANS`] and [`NOISY_MEANS`].

use super::schema::{metric_status_column, Dialect, Status, STATUS_COLUMN};
use std::path::Path;

/// What `unstable` means, in one plain phrase, wherever it is shown to users.
pub const UNSTABLE_MEANS: &str =
    "the placements of the kernel's buffers in memory gave values further apart than the target allows";
/// What `noisy` means, in one plain phrase.
pub const NOISY_MEANS: &str =
    "its confidence interval stayed wider than the target within the time allowed";

/// What one row says of one metric, as a reader found it.
#[derive(Clone, Copy, Debug, Default)]
pub struct MetricCells<'a> {
    /// The row's `status` cell.
    pub row_status: &'a str,
    /// The `<metric>_status` cell; `None` where the CSV has no such column (an older run).
    pub own: Option<&'a str>,
    /// `<metric>_spread`: the timing core's spread over placements, where the row has one.
    pub spread: Option<f64>,
    /// `<metric>_rel_ci`: the confidence half-width within a placement, where the row has one.
    pub rel_ci: Option<f64>,
}

/// A metric's status in one row: its `<metric>_status` cell where there is one, else derived
/// from the row's status as the module says; `None` for a row that measured nothing (failed).
/// `target_rel_ci`: the run's confidence target ([`target_rel_ci`]).
pub fn metric_status(cells: MetricCells, target_rel_ci: f64) -> Option<Status> {
    let row = Status::parse(cells.row_status).filter(|s| s.measured())?;
    if let Some(own) = cells.own.and_then(Status::parse).filter(|s| s.measured()) {
        return Some(own);
    }
    let above = |v: Option<f64>| v.is_some_and(|v| v > target_rel_ci);
    Some(match row {
        Status::Unstable if above(cells.spread) => Status::Unstable,
        Status::Unstable | Status::Noisy if above(cells.rel_ci) => Status::Noisy,
        _ => Status::Ok,
    })
}

/// [`metric_status`] of metric `metric_name` in a row of a CSV with `header`, its cells found by
/// their exact names (`status`, `<metric>_status`, `<metric>_spread`, `<metric>_rel_ci`).
pub fn metric_status_in_row(
    header: &[String],
    fields: &[String],
    metric_name: &str,
    dialect: Dialect,
    target_rel_ci: f64,
) -> Option<Status> {
    let cell = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .and_then(|i| fields.get(i))
            .map(String::as_str)
    };
    let number = |name: String| cell(&name).and_then(|c| dialect.parse_number(c));
    metric_status(
        MetricCells {
            row_status: cell(STATUS_COLUMN).unwrap_or_default(),
            own: cell(&metric_status_column(metric_name)),
            spread: number(format!("{metric_name}_spread")),
            rel_ci: number(format!("{metric_name}_rel_ci")),
        },
        target_rel_ci,
    )
}

/// The confidence target of the run in `run_dir`: `[timing] target_rel_ci` of the spec its
/// `manifest.json` keeps, else the timing core's default (a CSV without a manifest, or a spec that
/// sets none).
pub fn target_rel_ci(run_dir: &Path) -> f64 {
    super::Manifest::load(run_dir).map_or(crate::spec::DEFAULT_TARGET_REL_CI, |m| {
        target_rel_ci_of(Some(&m))
    })
}

/// [`target_rel_ci`] of a run's manifest (none: a CSV alone, the default).
pub fn target_rel_ci_of(manifest: Option<&super::Manifest>) -> f64 {
    let default = crate::spec::DEFAULT_TARGET_REL_CI;
    let Some(m) = manifest else {
        return default;
    };
    m.spec
        .parse::<toml::Table>()
        .ok()
        .and_then(|t| t.get("timing")?.get("target_rel_ci")?.as_float())
        .filter(|v| v.is_finite() && *v > 0.0)
        .unwrap_or(default)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells<'a>(row: &'a str, own: Option<&'a str>, spread: f64, ci: f64) -> MetricCells<'a> {
        MetricCells {
            row_status: row,
            own,
            spread: Some(spread),
            rel_ci: Some(ci),
        }
    }

    #[test]
    fn the_own_column_wins_and_older_rows_are_read_conservatively() {
        let t = 0.01;
        // (row status, own cell, spread, rel_ci, status)
        let cases = [
            ("unstable", Some("ok"), 0.5, 0.5, Some(Status::Ok)),
            ("ok", Some("ok"), 0.5, 0.5, Some(Status::Ok)),
            ("noisy", Some("noisy"), 0.0, 0.0, Some(Status::Noisy)),
            // Older runs: no own column.
            ("unstable", None, 0.02, 0.001, Some(Status::Unstable)),
            ("unstable", None, 0.005, 0.02, Some(Status::Noisy)),
            ("unstable", None, 0.005, 0.001, Some(Status::Ok)),
            ("noisy", None, 0.5, 0.02, Some(Status::Noisy)),
            ("noisy", None, 0.5, 0.005, Some(Status::Ok)),
            ("ok", None, 0.5, 0.5, Some(Status::Ok)),
            // An empty own cell on a measured row (a column the writer left empty) is derived.
            ("unstable", Some(""), 0.02, 0.0, Some(Status::Unstable)),
            // Failed rows have no metric status, whatever the cells say.
            ("timeout", Some("ok"), 0.0, 0.0, None),
            ("", None, 0.0, 0.0, None),
        ];
        for (row, own, spread, ci, want) in cases {
            assert_eq!(
                metric_status(cells(row, own, spread, ci), t),
                want,
                "{row} {own:?} {spread} {ci}"
            );
        }
        // Without the numbers (a regex metric), an older row's metric is ok.
        let bare = MetricCells {
            row_status: "unstable",
            ..MetricCells::default()
        };
        assert_eq!(metric_status(bare, t), Some(Status::Ok));
    }

    #[test]
    fn a_row_is_read_by_the_exact_column_names() {
        let header: Vec<String> = [
            "status", "g_x", "g_spread", "g_rel_ci", "g_status", "s_x", "s_spread", "s_rel_ci",
        ]
        .map(String::from)
        .into();
        let fields: Vec<String> = ["unstable", "1", "0,2", "0,001", "unstable", "2", "0,2", "0"]
            .map(String::from)
            .into();
        let of = |m| metric_status_in_row(&header, &fields, m, Dialect::Semicolon, 0.01);
        assert_eq!(of("g"), Some(Status::Unstable));
        // No `s_status`: derived from the row and its spread (read with a decimal comma).
        assert_eq!(of("s"), Some(Status::Unstable));
    }

    #[test]
    fn the_target_comes_from_the_manifests_spec() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(target_rel_ci(dir.path()), 0.01, "no manifest");
        let spec = "bench = \"b\"\n[timing]\ntarget_rel_ci = 0.007\n";
        let manifest = crate::store::Manifest {
            spec: spec.into(),
            ..Default::default()
        };
        manifest.save(dir.path()).unwrap();
        assert_eq!(target_rel_ci(dir.path()), 0.007);
    }
}
