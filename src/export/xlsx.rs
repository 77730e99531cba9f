//! The xlsx workbook of a run (`sweep export RUN --format xlsx`): typed cells that every locale's
//! spreadsheet reads as numbers (no decimal mark or separator to guess), ids and names as text.
//!
//! Sheets: `results` (every row in sweep order, header frozen, autofilter); `analysis` (when the
//! run was analysed); one `chart <unit>` sheet per family of metrics (the metrics of one unit,
//! with a series per metric and value of the other axes) holding the family's table, x = the swept
//! axis, and a native line chart of it; `manifest` (sweep, machine, GPUs, toolchain, commit,
//! spec, times).

use super::Typed;
use crate::store::{Cell, Table};
use rust_xlsxwriter::{
    Chart, ChartErrorBars, ChartErrorBarsType, ChartLegendPosition, ChartRange, ChartType, Format,
    Workbook, Worksheet, XlsxError,
};
use std::collections::BTreeMap;

/// At most this many series share a chart; more go into further charts below it.
const SERIES_PER_CHART: usize = 24;

/// The columns of an xlsx sheet (A..XFD) and its rows.
const MAX_COLUMNS: usize = 16_384;
const MAX_ROWS: usize = 1_048_576;

/// What the workbook cannot hold: a sheet past xlsx's columns or rows, a chart past its series.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TooBig {
    #[error("its {sheet} have {columns} columns, more than the {MAX_COLUMNS} of an xlsx sheet")]
    Columns { sheet: &'static str, columns: usize },
    #[error("its {sheet} have {rows} rows, more than the {} of an xlsx sheet below its header", MAX_ROWS - 1)]
    Rows { sheet: &'static str, rows: usize },
    #[error("the chart of unit `{unit}` has {series} series ({metrics} metrics x {} values of {others}), more than the {} that fit an xlsx sheet beside x (two columns each: value and ±)", series / (*metrics).max(1), (MAX_COLUMNS - 1) / 2)]
    Series {
        unit: String,
        series: usize,
        metrics: usize,
        /// The other axes, listed: `` `g`, `v` ``.
        others: String,
    },
}

/// What the workbook cannot hold, named. `None` when it fits. (A text past a cell's 32,767
/// characters is cut with a note instead; see [`fit`].)
pub fn too_big(run: &Typed) -> Option<TooBig> {
    let tables = [
        ("results", Some(&run.results)),
        ("analysis", run.analysis.as_ref()),
    ];
    for (sheet, t) in tables.into_iter().filter_map(|(n, t)| Some((n, t?))) {
        if t.header.len() > MAX_COLUMNS {
            return Some(TooBig::Columns {
                sheet,
                columns: t.header.len(),
            });
        }
        if t.rows.len() + 1 > MAX_ROWS {
            return Some(TooBig::Rows {
                sheet,
                rows: t.rows.len(),
            });
        }
    }
    for f in families(run) {
        // Column A holds x; two columns per series after it (its value and its ±).
        if 2 * f.series.len() + 1 > MAX_COLUMNS {
            let others: Vec<String> = run
                .manifest
                .axes
                .iter()
                .filter(|a| **a != f.x)
                .map(|a| format!("`{a}`"))
                .collect();
            let metrics = run
                .manifest
                .metrics
                .iter()
                .filter(|m| m.unit == f.unit)
                .count();
            return Some(TooBig::Series {
                unit: f.unit.clone(),
                series: f.series.len(),
                metrics,
                others: others.join(", "),
            });
        }
    }
    None
}

/// The workbook's bytes.
pub fn workbook(run: &Typed) -> Result<Vec<u8>, XlsxError> {
    build(run)
}

fn build(run: &Typed) -> Result<Vec<u8>, XlsxError> {
    let mut wb = Workbook::new();
    let bold = Format::new().set_bold();
    table_sheet(wb.add_worksheet(), "results", &run.results, &bold)?;
    if let Some(a) = &run.analysis {
        table_sheet(wb.add_worksheet(), "analysis", a, &bold)?;
    }
    let families = families(run);
    let names = sheet_names(&families);
    for (family, name) in families.iter().zip(&names) {
        chart_sheet(wb.add_worksheet(), run, family, name, &bold)?;
    }
    // A unit whose sheet name had to change is named beside it in the manifest sheet.
    let renamed: Vec<(String, Cell)> = families
        .iter()
        .zip(&names)
        .filter(|(f, n)| **n != format!("chart {}", f.unit))
        .map(|(f, n)| {
            let note = format!("the chart of unit `{}`", f.unit);
            (format!("sheet {n}"), Cell::Text(note))
        })
        .collect();
    manifest_sheet(wb.add_worksheet(), run, &renamed, &bold)?;
    wb.save_to_buffer()
}

fn table_sheet(ws: &mut Worksheet, name: &str, t: &Table, bold: &Format) -> Result<(), XlsxError> {
    ws.set_name(name)?;
    for (c, h) in t.header.iter().enumerate() {
        ws.write_string_with_format(0, c as u16, fit(h), bold)?;
        ws.set_column_width(c as u16, (h.len().clamp(8, 40) + 2) as f64)?;
    }
    for (r, row) in t.rows.iter().enumerate() {
        for (c, cell) in row.iter().enumerate() {
            write_cell(ws, r as u32 + 1, c as u16, cell)?;
        }
    }
    ws.set_freeze_panes(1, 0)?;
    if !t.header.is_empty() {
        ws.autofilter(0, 0, t.rows.len() as u32, t.header.len() as u16 - 1)?;
    }
    Ok(())
}

fn write_cell(ws: &mut Worksheet, r: u32, c: u16, cell: &Cell) -> Result<(), XlsxError> {
    match cell {
        Cell::Empty => {}
        Cell::Number(v) => {
            ws.write_number(r, c, *v)?;
        }
        Cell::Text(t) => {
            ws.write_string(r, c, fit(t))?;
        }
    }
    Ok(())
}

/// At most the 32,767 characters a cell holds (a long error message or spec is cut, marked).
fn fit(s: &str) -> String {
    const MAX: usize = 32_000;
    if s.chars().count() <= MAX {
        return s.to_string();
    }
    let mut cut: String = s.chars().take(MAX).collect();
    cut.push_str(" [cut: see the run folder]");
    cut
}

/// The other axes' (name, value) pairs that pick one curve out of a family.
pub type Group = Vec<(String, String)>;

/// The metrics of one unit, charted against the swept axis.
#[derive(Debug, PartialEq)]
pub struct Family {
    pub unit: String,
    pub x: String,
    /// (series name, metric column, its group) in the order they are drawn.
    pub series: Vec<(String, String, Group)>,
}

/// The families of `run`: x is the numeric axis with the most distinct values (as `sweep
/// analyze` picks it); none when no axis is numeric (a categorical sweep has its table only).
pub fn families(run: &Typed) -> Vec<Family> {
    let t = &run.results;
    let numeric_axis = |a: &str| {
        t.column(a).is_some_and(|c| {
            t.rows
                .iter()
                .all(|r| matches!(r[c], Cell::Number(_) | Cell::Empty))
        })
    };
    let distinct = |a: &str| {
        let c = t.column(a).unwrap_or(0);
        let mut v: Vec<String> = t.rows.iter().map(|r| format!("{:?}", r[c])).collect();
        v.sort();
        v.dedup();
        v.len()
    };
    let Some(x) = run
        .manifest
        .axes
        .iter()
        .filter(|a| numeric_axis(a) && distinct(a) > 1)
        .max_by_key(|a| distinct(a))
        .cloned()
    else {
        return Vec::new();
    };
    let others: Vec<&String> = run.manifest.axes.iter().filter(|a| **a != x).collect();
    // The other axes' value combinations, in the order they first appear.
    let mut groups: Vec<Group> = Vec::new();
    let mut seen: std::collections::HashSet<Group> = std::collections::HashSet::new();
    let columns: Vec<(&String, usize)> = others
        .iter()
        .map(|a| (*a, t.column(a).unwrap_or(0)))
        .collect();
    for r in &t.rows {
        let g: Group = columns
            .iter()
            .map(|(a, c)| (a.to_string(), text(&r[*c])))
            .collect();
        if seen.insert(g.clone()) {
            groups.push(g);
        }
    }
    let mut by_unit: BTreeMap<&str, Family> = BTreeMap::new();
    for m in &run.manifest.metrics {
        if t.column(&m.column).is_none() {
            continue;
        }
        let f = by_unit.entry(&m.unit).or_insert_with(|| Family {
            unit: m.unit.clone(),
            x: x.clone(),
            series: Vec::new(),
        });
        for g in &groups {
            let label = std::iter::once(m.name.clone())
                .chain(g.iter().map(|(a, v)| format!("{a}={v}")))
                .collect::<Vec<_>>()
                .join(" ");
            f.series.push((label, m.column.clone(), g.clone()));
        }
    }
    by_unit.into_values().collect()
}

fn text(c: &Cell) -> String {
    match c {
        Cell::Empty => String::new(),
        Cell::Number(v) => format!("{v}"),
        Cell::Text(t) => t.clone(),
    }
}

/// A sheet name Excel accepts: at most 31 characters, none of `[]:*?/\`.
fn sheet_name(unit: &str) -> String {
    let clean: String = format!("chart {unit}")
        .chars()
        .map(|c| if "[]:*?/\\'".contains(c) { '_' } else { c })
        .collect();
    clean.chars().take(31).collect()
}

/// The chart sheets' names, one per family: [`sheet_name`], made unique where two units give
/// the same one (`GB/s` and `GB_s`; units alike in their first 25 characters; Excel's names
/// ignore case) by a ` (2)`, ` (3)`, ... within the 31 characters.
fn sheet_names(families: &[Family]) -> Vec<String> {
    let mut taken: Vec<String> = ["results", "analysis", "manifest"].map(String::from).into();
    let mut out = Vec::new();
    for f in families {
        let base = sheet_name(&f.unit);
        let mut name = base.clone();
        let mut n = 2;
        while taken
            .iter()
            .any(|t| t.to_lowercase() == name.to_lowercase())
        {
            let suffix = format!(" ({n})");
            let keep = 31 - suffix.chars().count();
            name = base.chars().take(keep).collect::<String>() + &suffix;
            n += 1;
        }
        taken.push(name.clone());
        out.push(name);
    }
    out
}

/// The sheet of a family: x in column A, then for each series its value and the half-width of
/// its uncertainty (95 % CI within a placement, or half the placements' spread, the larger), in
/// the unit of its chart ([`crate::units::Scale`]: TFLOP/s rather than 20849700 MFlops). Its
/// charts: the spec's families (a title each, `label`s as series names), else series grouped by
/// scale ([`chart_groups`]); error bars from the uncertainty columns.
fn chart_sheet(
    ws: &mut Worksheet,
    run: &Typed,
    f: &Family,
    name: &str,
    bold: &Format,
) -> Result<(), XlsxError> {
    let name = name.to_string();
    ws.set_name(&name)?;
    let labels = crate::spec::Labels::from_text(&run.manifest.spec);
    let t = &run.results;
    let xc = t.column(&f.x).unwrap_or(0);
    let mut xs: Vec<f64> = t
        .rows
        .iter()
        .filter_map(|r| match r[xc] {
            Cell::Number(v) => Some(v),
            _ => None,
        })
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    ws.write_string_with_format(0, 0, fit(&f.x), bold)?;
    for (i, x) in xs.iter().enumerate() {
        ws.write_number(i as u32 + 1, 0, *x)?;
    }
    let row_of: BTreeMap<u64, u32> = xs
        .iter()
        .enumerate()
        .map(|(i, x)| (x.to_bits(), i as u32 + 1))
        .collect();
    let metric_of = |column: &str| {
        run.manifest
            .metrics
            .iter()
            .find(|m| m.column == column)
            .map_or(column.to_string(), |m| m.name.clone())
    };
    let number = |r: &Vec<Cell>, c: Option<usize>| match c.map(|c| &r[c]) {
        Some(Cell::Number(v)) if v.is_finite() => Some(*v),
        _ => None,
    };
    // Each series' points: (row, value, relative uncertainty).
    let mut points: Vec<Vec<(u32, f64, f64)>> = Vec::new();
    let mut medians: Vec<f64> = Vec::new();
    for (_, column, group) in &f.series {
        let metric = metric_of(column);
        let vc = t.column(column);
        let ci = t.column(&format!("{metric}_rel_ci"));
        let spread = t.column(&format!("{metric}_spread"));
        let status = t.column(crate::store::schema::STATUS_COLUMN);
        let mut pts = Vec::new();
        for r in &t.rows {
            let in_group = group
                .iter()
                .all(|(a, v)| t.column(a).is_some_and(|ac| text(&r[ac]) == *v));
            // Failed points have no value; the chart leaves a gap there.
            let measured = status.is_none_or(|sc| {
                matches!(&r[sc], Cell::Text(st) if matches!(st.as_str(), "ok" | "noisy" | "unstable"))
            });
            let (Cell::Number(x), Some(v)) = (&r[xc], number(r, vc)) else {
                continue;
            };
            if let (true, true, Some(&row)) = (in_group, measured, row_of.get(&x.to_bits())) {
                let u = number(r, ci)
                    .unwrap_or(0.0)
                    .max(number(r, spread).unwrap_or(0.0) / 2.0);
                pts.push((row, v, u));
            }
        }
        let values: Vec<f64> = pts.iter().map(|p| p.1.abs()).collect();
        medians.push(crate::analyze::fit::median(&values).unwrap_or(0.0));
        points.push(pts);
    }
    // The charts: the spec's families (per group), then the rest grouped by scale.
    let family_of = |s: usize| {
        let (_, column, group) = &f.series[s];
        labels.family(&metric_of(column)).map(|fam| {
            let g: Vec<String> = group.iter().map(|(a, v)| format!("{a}={v}")).collect();
            if g.is_empty() {
                fam.to_string()
            } else {
                format!("{fam} [{}]", g.join(", "))
            }
        })
    };
    let mut charts: Vec<(Option<String>, Vec<usize>)> = Vec::new();
    for s in 0..f.series.len() {
        if let Some(fam) = family_of(s) {
            match charts.iter_mut().find(|(k, _)| k.as_ref() == Some(&fam)) {
                Some((_, v)) => v.push(s),
                None => charts.push((Some(fam), vec![s])),
            }
        }
    }
    let rest: Vec<usize> = (0..f.series.len())
        .filter(|&s| family_of(s).is_none())
        .collect();
    let rest_medians: Vec<f64> = rest.iter().map(|&s| medians[s]).collect();
    for g in chart_groups(&rest_medians) {
        charts.push((None, g.into_iter().map(|k| rest[k]).collect()));
    }
    // Columns: each series' value, then its uncertainty, in its chart's unit.
    let col = |s: usize| 1 + 2 * s as u16;
    let mut units = vec![crate::units::Scale::for_max(&f.unit, 0.0); f.series.len()];
    for (_, members) in &charts {
        let (divisor, unit) = crate::units::scale_for(
            &f.unit,
            members.iter().flat_map(|&s| points[s].iter().map(|p| p.1)),
        );
        for &s in members {
            units[s] = crate::units::Scale {
                divisor,
                unit: unit.clone(),
            };
        }
    }
    for (s, (label, column, _)) in f.series.iter().enumerate() {
        let c = col(s);
        let metric = metric_of(column);
        let shown = labels
            .metric(&metric)
            .map_or(label.clone(), |l| label.replacen(&metric, l, 1));
        let unit = &units[s];
        ws.write_string_with_format(0, c, fit(&format!("{shown} ({})", unit.unit)), bold)?;
        ws.write_string_with_format(0, c + 1, format!("± ({})", unit.unit), bold)?;
        ws.set_column_width(c, 16)?;
        for &(row, v, u) in &points[s] {
            ws.write_number(row, c, v / unit.divisor)?;
            ws.write_number(row, c + 1, (v * u).abs() / unit.divisor)?;
        }
    }
    ws.set_freeze_panes(1, 1)?;
    let log2 = crate::report::log_axis(&xs);
    let last = xs.len() as u32;
    let anchor = 2 * f.series.len() as u16 + 2;
    let x_words = labels.axis(&f.x);
    let quantity = crate::units::quantity(&f.unit).unwrap_or(&f.unit);
    for (k, (family, members)) in charts.iter().enumerate() {
        let mut chart = Chart::new(if xs.len() <= 40 {
            ChartType::ScatterStraightWithMarkers
        } else {
            ChartType::ScatterStraight
        });
        for &s in members {
            let c = col(s);
            let band = ChartRange::new_from_range(name.as_str(), 1, c + 1, last, c + 1);
            let mut bars = ChartErrorBars::new();
            bars.set_type(ChartErrorBarsType::Custom(band.clone(), band));
            chart
                .add_series()
                .set_name((name.as_str(), 0, c))
                .set_categories((name.as_str(), 1, 0, last, 0))
                .set_values((name.as_str(), 1, c, last, c))
                .set_y_error_bars(&bars);
        }
        let title = match family {
            Some(fam) => format!("{fam} — {x_words}"),
            None => format!("{}: {quantity} against {x_words}", run.manifest.sweep),
        };
        chart.title().set_name(&title);
        chart.x_axis().set_name(&x_words);
        if log2 {
            chart.x_axis().set_log_base(2);
        }
        let unit = members
            .first()
            .map_or(f.unit.clone(), |&s| units[s].unit.clone());
        chart.y_axis().set_name(&format!("{quantity} ({unit})"));
        chart.legend().set_position(ChartLegendPosition::Bottom);
        chart.set_width(960).set_height(540);
        ws.insert_chart(1 + 30 * k as u32, anchor, &chart)?;
    }
    Ok(())
}

/// The series (by index) of each chart of a family: by falling median, a new chart where a
/// series' median is more than 10x below the chart's first (so none is flattened at the bottom of
/// another's axis: the thread sweep's one-block and full-grid stores are 200x apart), and at most
/// [`SERIES_PER_CHART`] per chart.
pub fn chart_groups(medians: &[f64]) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..medians.len()).collect();
    order.sort_by(|&a, &b| medians[b].total_cmp(&medians[a]).then(a.cmp(&b)));
    let mut out: Vec<Vec<usize>> = Vec::new();
    for i in order {
        match out.last_mut() {
            Some(g) if g.len() < SERIES_PER_CHART && medians[i] * 10.0 >= medians[g[0]] => {
                g.push(i)
            }
            _ => out.push(vec![i]),
        }
    }
    for g in &mut out {
        g.sort_unstable();
    }
    out
}

fn manifest_sheet(
    ws: &mut Worksheet,
    run: &Typed,
    notes: &[(String, Cell)],
    bold: &Format,
) -> Result<(), XlsxError> {
    ws.set_name("manifest")?;
    let m = &run.manifest;
    let mut rows: Vec<(String, Cell)> = vec![
        ("sweep".into(), Cell::Text(m.sweep.clone())),
        ("bench".into(), Cell::Text(m.bench.clone())),
        ("spec path".into(), Cell::Text(m.spec_path.clone())),
        ("spec sha256".into(), Cell::Text(m.spec_hash.clone())),
        ("overrides".into(), Cell::Text(m.overrides.join(" "))),
        ("state".into(), Cell::Text(m.state.as_str().into())),
        ("started".into(), Cell::Text(m.started.clone())),
        (
            "finished".into(),
            Cell::Text(m.finished.clone().unwrap_or_default()),
        ),
        ("host".into(), Cell::Text(m.host.clone())),
        ("git commit".into(), Cell::Text(m.git_commit.clone())),
        ("compiler".into(), Cell::Text(m.compiler.clone())),
        (
            "compiler version".into(),
            Cell::Text(m.compiler_version.clone()),
        ),
        (
            "arch".into(),
            Cell::Text(m.arch.clone().unwrap_or_default()),
        ),
        (
            "csv dialect".into(),
            Cell::Text(m.dialect.name().to_string()),
        ),
        ("points".into(), Cell::Number(m.points_total as f64)),
        ("command".into(), Cell::Text(m.command.join(" "))),
    ];
    for (when, gpus) in [("start", &m.gpus_start), ("end", &m.gpus_end)] {
        for g in gpus {
            rows.push((
                format!("gpu {} at {when}", g.index),
                Cell::Text(format!(
                    "{} (uuid {}, driver {}, compute {}, SM {} MHz, memory {} MHz, {} C)",
                    g.name,
                    g.uuid,
                    g.driver,
                    g.compute_cap,
                    g.sm_clock_mhz,
                    g.mem_clock_mhz,
                    g.temperature_c
                )),
            ));
        }
    }
    for (status, n) in &m.counts {
        rows.push((format!("points {status}"), Cell::Number(*n as f64)));
    }
    rows.extend(notes.iter().cloned());
    rows.push(("spec".into(), Cell::Text(m.spec.clone())));
    ws.write_string_with_format(0, 0, "key", bold)?;
    ws.write_string_with_format(0, 1, "value", bold)?;
    for (i, (k, v)) in rows.iter().enumerate() {
        ws.write_string(i as u32 + 1, 0, fit(k))?;
        write_cell(ws, i as u32 + 1, 1, v)?;
    }
    ws.set_column_width(0, 22)?;
    ws.set_column_width(1, 100)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::report::log_axis;

    #[test]
    fn sparse_wide_axes_are_log2_and_dense_ones_linear() {
        let threads: Vec<f64> = (1..=512).map(f64::from).collect();
        assert!(!log_axis(&threads));
        let strides: Vec<f64> = (1..=32)
            .chain([64, 128, 256, 512, 1024])
            .map(f64::from)
            .collect();
        assert!(log_axis(&strides));
        assert!(log_axis(&[1.0, 2.0, 4.0, 8.0, 16.0, 32.0]));
        assert!(!log_axis(&[0.0, 1.0, 2.0, 4.0, 1024.0]), "0 has no log");
        assert!(!log_axis(&[]));
    }

    #[test]
    fn series_tenfold_apart_get_charts_of_their_own() {
        assert_eq!(
            chart_groups(&[1e5, 2e7, 1.2e5, 1.9e7, 0.0]),
            vec![vec![1, 3], vec![0, 2], vec![4]]
        );
        assert_eq!(
            chart_groups(&[1.0; 30])
                .iter()
                .map(Vec::len)
                .collect::<Vec<_>>(),
            [24, 6]
        );
        assert!(chart_groups(&[]).is_empty());
    }

    /// A run of `metrics` (name, unit) over axes `x` and `v` with the given rows (x, v, value).
    fn run(metrics: &[(&str, &str)], rows: Vec<(f64, String, f64)>) -> Typed<'static> {
        use crate::store::{Manifest, MetricInfo};
        let mut header: Vec<String> = ["point_id", "index", "x", "v", "status"]
            .map(String::from)
            .into();
        header.extend(metrics.iter().map(|(n, _)| format!("{n}_col")));
        let cells = rows
            .into_iter()
            .enumerate()
            .map(|(i, (x, v, value))| {
                let mut r = vec![
                    format!("p{i}"),
                    i.to_string(),
                    x.to_string(),
                    v,
                    "ok".into(),
                ];
                r.extend(metrics.iter().map(|_| value.to_string()));
                r
            })
            .collect();
        let manifest = Manifest {
            sweep: "s".into(),
            axes: vec!["x".into(), "v".into()],
            metrics: metrics
                .iter()
                .map(|(n, u)| MetricInfo {
                    name: n.to_string(),
                    unit: u.to_string(),
                    column: format!("{n}_col"),
                    ..Default::default()
                })
                .collect(),
            columns: header.clone(),
            ..Manifest::default()
        };
        super::super::typed_for_test(manifest, header, cells, &["point_id", "status", "v"])
    }

    #[test]
    fn units_whose_sheet_names_collide_get_sheets_of_their_own() {
        let units = [
            "GB/s",
            "GB_s",
            "gb_s",
            &format!("{}a", "u".repeat(30)),
            &format!("{}b", "u".repeat(30)),
        ];
        let families: Vec<Family> = units
            .iter()
            .map(|u| Family {
                unit: u.to_string(),
                x: "x".into(),
                series: Vec::new(),
            })
            .collect();
        let names = sheet_names(&families);
        let long = format!("chart {}", "u".repeat(25));
        assert_eq!(
            names,
            [
                "chart GB_s".to_string(),
                "chart GB_s (2)".into(),
                "chart gb_s (3)".into(),
                long.clone(),
                format!("{} (2)", &long[..27]),
            ]
        );
        assert!(names.iter().all(|n| n.chars().count() <= 31));
        let metrics: Vec<(String, &str)> = units
            .iter()
            .enumerate()
            .map(|(i, u)| (format!("m{i}"), *u))
            .collect();
        let metrics: Vec<(&str, &str)> = metrics.iter().map(|(m, u)| (m.as_str(), *u)).collect();
        let r = run(
            &metrics,
            (1..=4)
                .map(|x| (x as f64, "a".into(), 2.0 * x as f64))
                .collect(),
        );
        assert!(workbook(&r).is_ok(), "{:?}", workbook(&r).err());
    }

    #[test]
    fn a_text_past_a_cells_limit_is_cut_with_a_note() {
        let long = "y".repeat(40_000);
        let r = run(
            &[("m", "GB/s")],
            (1..=3).map(|x| (x as f64, long.clone(), 1.0)).collect(),
        );
        assert!(workbook(&r).is_ok(), "{:?}", workbook(&r).err());
        let cut = fit(&long);
        assert!(cut.chars().count() <= 32_767 && cut.ends_with(" [cut: see the run folder]"));
    }

    #[test]
    fn a_chart_past_the_columns_of_a_sheet_is_refused_naming_it() {
        let rows = (0..8_191)
            .flat_map(|v| [(1.0, format!("v{v}"), 1.0), (2.0, format!("v{v}"), 2.0)])
            .collect();
        let r = run(&[("m", "GB/s")], rows);
        assert_eq!(
            too_big(&r),
            None,
            "8,191 series fit beside x, two columns each"
        );
        let rows = (0..8_192)
            .flat_map(|v| [(1.0, format!("v{v}"), 1.0), (2.0, format!("v{v}"), 2.0)])
            .collect();
        let r = run(&[("m", "GB/s")], rows);
        assert_eq!(
            too_big(&r).map(|e| e.to_string()).as_deref(),
            Some("the chart of unit `GB/s` has 8192 series (1 metrics x 8192 values of `v`), more than the 8191 that fit an xlsx sheet beside x (two columns each: value and ±)")
        );
    }

    #[test]
    fn sheet_names_are_ones_excel_accepts() {
        assert_eq!(sheet_name("GB/s"), "chart GB_s");
        assert!(sheet_name(&"x".repeat(40)).chars().count() <= 31);
    }
}
