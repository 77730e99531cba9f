//! Stage `export`: a run in long (tidy) form, `--format long`: one row per point and metric, as
//! `results_long.csv` (in the chosen dialect) and `results_long.json` (an array of objects with
//! the same keys as the CSV's columns; numbers are numbers, an empty cell is `null`).
//!
//! Columns: `point_id`, `index`, the axes (by name; an axis named like one of the columns below
//! is written `axis_<name>`), then [`COLUMNS`]: `metric`, `unit`, `value`, `rel_ci` (the 95 %
//! confidence half-width of the value / value), `ci` (that half-width in the value's unit,
//! `value × rel_ci`), `spread`, `placements`, `samples` and `status`: the metric's own
//! (`<metric>_status`) where the run has that column, else the row's.

use super::Typed;
use crate::store::manifest::MetricInfo;
use crate::store::schema::{ERROR_COLUMN, INDEX_COLUMN, POINT_ID_COLUMN, STATUS_COLUMN};
use crate::store::{Cell, Table};
use serde_json::Value;

/// The files of `--format long`.
pub const CSV: &str = "results_long.csv";
pub const JSON: &str = "results_long.json";

/// The columns after the point's id, index and axes.
pub const COLUMNS: [&str; 10] = [
    "metric",
    "unit",
    "value",
    "rel_ci",
    "ci",
    "spread",
    "placements",
    "samples",
    "status",
    "error",
];

/// The column of statistic `stat` of metric `info` in `header`: `<name>_<stat>_<unit slug>`
/// (`median`, `min`, ...) or `<name>_<stat>` (`rel_ci`, `samples`, ...).
pub fn stat_column(header: &[String], info: &MetricInfo, stat: &str) -> Option<usize> {
    let slug = info
        .column
        .strip_prefix(&format!("{}_", info.name))
        .unwrap_or(&info.column);
    [
        format!("{}_{stat}_{slug}", info.name),
        format!("{}_{stat}", info.name),
    ]
    .into_iter()
    .find_map(|c| header.iter().position(|h| *h == c))
}

/// The run in long form: a [`Table`] with one row per point and metric, points in sweep order,
/// metrics in the spec's order.
pub fn long_table(run: &Typed) -> Table {
    let r = &run.results;
    let m = &run.manifest;
    let fixed = [POINT_ID_COLUMN, INDEX_COLUMN]
        .into_iter()
        .chain(COLUMNS)
        .collect::<Vec<_>>();
    let mut header: Vec<String> = vec![POINT_ID_COLUMN.into(), INDEX_COLUMN.into()];
    header.extend(crate::schema::axis_columns(&m.axes, &fixed));
    header.extend(COLUMNS.iter().map(|c| c.to_string()));
    let col = |name: &str| r.column(name);
    let axes: Vec<Option<usize>> = m.axes.iter().map(|a| col(a)).collect();
    let (id, index, status, error) = (
        col(POINT_ID_COLUMN),
        col(INDEX_COLUMN),
        col(STATUS_COLUMN),
        col(ERROR_COLUMN),
    );
    struct Cols {
        value: Option<usize>,
        rel_ci: Option<usize>,
        spread: Option<usize>,
        placements: Option<usize>,
        samples: Option<usize>,
        status: Option<usize>,
    }
    let metrics: Vec<(&MetricInfo, Cols)> = m
        .metrics
        .iter()
        .map(|info| {
            let stat = |s: &str| stat_column(&r.header, info, s);
            let cols = Cols {
                value: col(&info.column),
                rel_ci: stat("rel_ci"),
                spread: stat("spread"),
                placements: stat("placements"),
                samples: stat("samples"),
                status: col(&format!("{}_status", info.name)),
            };
            (info, cols)
        })
        .collect();
    let mut rows = Vec::with_capacity(r.rows.len() * metrics.len());
    for row in &r.rows {
        let get = |c: Option<usize>| c.and_then(|c| row.get(c)).cloned().unwrap_or(Cell::Empty);
        for (info, c) in &metrics {
            let value = get(c.value);
            let rel_ci = get(c.rel_ci);
            let ci = match (&value, &rel_ci) {
                (Cell::Number(v), Cell::Number(u)) => Cell::Number(significant(v.abs() * u, 6)),
                _ => Cell::Empty,
            };
            let own = get(c.status);
            let status = if matches!(own, Cell::Text(_)) {
                own
            } else {
                get(status)
            };
            let mut out = vec![get(id), get(index)];
            out.extend(axes.iter().map(|&a| get(a)));
            out.extend([
                Cell::Text(info.name.clone()),
                Cell::Text(info.unit.clone()),
                value,
                rel_ci,
                ci,
                get(c.spread),
                get(c.placements),
                get(c.samples),
                status,
                get(error),
            ]);
            rows.push(out);
        }
    }
    Table { header, rows }
}

/// `table` as a JSON array of objects, one per row and one row per line, keyed by the table's
/// columns in their order (numbers are numbers, an empty cell is `null`).
pub fn to_json(table: &Table) -> String {
    let keys: Vec<String> = table
        .header
        .iter()
        .map(|h| Value::from(h.as_str()).to_string())
        .collect();
    let mut out = String::from("[\n");
    for (n, row) in table.rows.iter().enumerate() {
        let fields: Vec<String> = keys
            .iter()
            .zip(row)
            .map(|(k, c)| {
                let v = match c {
                    Cell::Empty => Value::Null,
                    Cell::Number(v) if v.fract() == 0.0 && v.abs() < 9.0e15 => {
                        Value::from(*v as i64)
                    }
                    Cell::Number(v) => Value::from(*v),
                    Cell::Text(t) => Value::from(t.as_str()),
                };
                format!("{k}: {v}")
            })
            .collect();
        let comma = if n + 1 < table.rows.len() { "," } else { "" };
        out += &format!("  {{{}}}{comma}\n", fields.join(", "));
    }
    out + "]\n"
}

/// `v` to `digits` significant digits: a product of two measured numbers without the float noise
/// of its last places (`0.5255081448000001` -> `0.525508`).
fn significant(v: f64, digits: i32) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let scale = 10f64.powi(digits - 1 - v.abs().log10().floor() as i32);
    // Near the ends of f64 (5e-324 needs a scale of 1e329, past f64): as it is.
    let rounded = (v * scale).round() / scale;
    match scale.is_finite() && rounded.is_finite() && scale != 0.0 {
        true => rounded,
        false => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Manifest;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    fn run(header: &[&str], rows: &[&[&str]], axes: &[&str]) -> Typed<'static> {
        let manifest = Manifest {
            axes: s(axes),
            metrics: ["a", "b"]
                .map(|n| MetricInfo {
                    name: n.into(),
                    unit: "GB/s".into(),
                    column: format!("{n}_gb_s"),
                    ..Default::default()
                })
                .into(),
            columns: s(header),
            ..Manifest::default()
        };
        let rows = rows.iter().map(|r| s(r)).collect();
        super::super::typed_for_test(manifest, s(header), rows, &["point_id", "status"])
    }

    #[test]
    fn a_metric_has_its_own_status_where_the_run_has_one_else_the_rows() {
        let header = [
            "point_id", "index", "metric", "status", "a_gb_s", "a_rel_ci", "a_status", "b_gb_s",
            "b_rel_ci", "b_status", "error",
        ];
        let t = long_table(&run(
            &header,
            &[
                &[
                    "p1", "0", "7", "unstable", "200", "0.01", "ok", "-4", "0.5", "unstable", "",
                ],
                &[
                    "p2",
                    "1",
                    "8",
                    "run_failed",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "exit 1",
                ],
            ],
            &["metric"],
        ));
        assert_eq!(
            t.header,
            s(&[
                "point_id",
                "index",
                "axis_metric",
                "metric",
                "unit",
                "value",
                "rel_ci",
                "ci",
                "spread",
                "placements",
                "samples",
                "status",
                "error"
            ]),
            "an axis named like a column of the long form is namespaced"
        );
        assert_eq!(t.rows.len(), 4);
        let status = |r: usize| t.rows[r][11].clone();
        assert_eq!(status(0), Cell::Text("ok".into()), "a's own");
        assert_eq!(status(1), Cell::Text("unstable".into()), "b's own");
        assert_eq!(
            status(2),
            Cell::Text("run_failed".into()),
            "the row's, none of its own"
        );
        assert_eq!(t.rows[0][7], Cell::Number(2.0), "ci = value x rel_ci");
        assert_eq!(t.rows[1][7], Cell::Number(2.0), "of a negative value too");
        assert_eq!(t.rows[2][5], Cell::Empty);
        assert_eq!(t.rows[3][12], Cell::Text("exit 1".into()));
        let json: serde_json::Value = serde_json::from_str(&to_json(&t)).unwrap();
        assert_eq!(json[0]["axis_metric"], 7);
        assert_eq!(json[1]["value"], -4);
        assert_eq!(json[2]["value"], serde_json::Value::Null);
    }
}
