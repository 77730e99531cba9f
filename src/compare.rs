//! `sweep compare`: two runs of one sweep, point by point and series by series.
//!
//! Points are matched by their axis values, not their ids, so runs of other builds, GPUs or days
//! compare. For each matched point and metric: B/A and a verdict that respects both sides'
//! uncertainty, after nvbench's `nvbench_compare.py` (which calls two timings the same when they
//! differ by less than their noise). A point's relative uncertainty u is the largest of
//! `<m>_rel_ci`, `<m>_spread`/2 and `<m>_repeat_spread`/2, of the columns the CSV has; A and B are
//! `same` when |B/A - 1| <= u_A + u_B, else `faster` or `slower` by the metric's sense. Per series
//! (`analyze`'s series: one metric at one combination of the other axes): the geometric mean of
//! B/A, the verdict counts, and period, knee and best x of both sides.

use crate::analyze::load::{number, unit_of_column, MetricColumn, Table};
use crate::analyze::reading::{human, percent};
use crate::analyze::{self, Analysis, AnalyzeError, AnalyzeOptions, Sense};
use crate::store::Dialect;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// `sweep compare --help`, after the options.
pub const HELP: &str = "\
RUN_A and RUN_B are run folders or results CSVs. Points are matched by their axis values, so runs
of other builds or GPUs compare. A point's relative uncertainty u is the largest of <m>_rel_ci,
<m>_spread/2 and <m>_repeat_spread/2 (of those the CSV has); B is `same` as A when
|B/A - 1| <= u_A + u_B, else `faster` or `slower` (GB/s, MFlops: higher is better; s, ms, us:
lower is better). Only rows with status ok, noisy or unstable are compared; the others are named
as failed. A point is slower by PCT % when its throughput is PCT % below A's, or its time PCT %
above A's.

Exit codes:
  0    compared (with --fail-on-slower: no point slower than allowed)
  2    usage error
  3    bad input: a run missing or unreadable, runs with other axes, no common metric
  5    --fail-on-slower PCT: some point is `slower` by more than PCT %";

/// How many points a line names before it says "and N more".
const NAMED: usize = 5;
/// How many points the table of the largest changes shows.
const LARGEST: usize = 10;
/// Statuses whose rows carry metric values.
const MEASURED: [&str; 3] = ["ok", "noisy", "unstable"];
/// The columns of `compare.csv` after the axes.
const CSV_COLUMNS: [&str; 7] = ["metric", "a", "b", "ratio", "u_a", "u_b", "verdict"];

#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error("run `{path}` not found (hint: give a run folder or its results.csv)")]
    NotFound { path: PathBuf },
    #[error(
        "`{path}` holds no results.csv (hint: give a run folder of `sweep run`, or a results CSV)"
    )]
    NoResults { path: PathBuf },
    #[error(transparent)]
    Read(#[from] AnalyzeError),
    #[error("`{lacking}` has no axis {axes} of `{other}` (hint: points are matched by their axis values; {both})")]
    Axes {
        lacking: PathBuf,
        other: PathBuf,
        axes: String,
        /// What each run has: "`A` has `x`, `B` has `x`, `y`".
        both: String,
    },
    #[error(
        "no metric common to `{a}` and `{b}` (hint: `{a}` has {metrics_a}; `{b}` has {metrics_b})"
    )]
    NoCommonMetric {
        a: PathBuf,
        b: PathBuf,
        metrics_a: String,
        metrics_b: String,
    },
    #[error("no metric `{name}` in both runs (hint: the metrics of both are {common})")]
    UnknownMetric { name: String, common: String },
    #[error("cannot write `{path}`: {reason}")]
    Write { path: PathBuf, reason: String },
}

/// What to compare: `y` the metric names or columns (default: every metric both runs have).
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub y: Vec<String>,
}

/// One run of the two.
#[derive(Debug, Clone)]
pub struct Side {
    /// Its results CSV.
    pub path: PathBuf,
    /// The GPU of its first row, when the CSV says.
    pub gpu: Option<String>,
    pub rows: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Same,
    Faster,
    Slower,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Same => "same",
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
        }
    }

    /// B against A, given both relative uncertainties and whether higher is better.
    pub fn of(a: f64, b: f64, u_a: f64, u_b: f64, sense: Sense) -> Verdict {
        let change = b / a - 1.0;
        if change.abs() <= u_a + u_b {
            return Verdict::Same;
        }
        match (sense, change > 0.0) {
            (Sense::HigherIsBetter, true) | (Sense::LowerIsBetter, false) => Verdict::Faster,
            _ => Verdict::Slower,
        }
    }
}

/// One metric at one point matched in both runs.
#[derive(Debug, Clone)]
pub struct PointCmp {
    /// The axis values, in the order of `Comparison::axes`.
    pub axes: Vec<String>,
    /// The metric's column.
    pub metric: String,
    pub a: f64,
    pub b: f64,
    /// B / A.
    pub ratio: f64,
    /// Relative uncertainties.
    pub u_a: f64,
    pub u_b: f64,
    pub verdict: Verdict,
    pub sense: Sense,
    /// Index into `Comparison::series`.
    pub series: usize,
}

impl PointCmp {
    /// How much worse B is than A, as a fraction of A (negative: better): the throughput lost,
    /// or the time added.
    pub fn loss(&self) -> f64 {
        match self.sense {
            Sense::HigherIsBetter => 1.0 - self.ratio,
            Sense::LowerIsBetter => self.ratio - 1.0,
        }
    }
}

/// Period, knee and best x of one side's curve.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Shape {
    pub period: Option<f64>,
    pub knee: Option<f64>,
    pub best_x: Option<f64>,
}

/// One series (one metric at one combination of the axes other than x), both runs.
#[derive(Debug, Clone)]
pub struct SeriesCmp {
    /// For people: `mflops` or `mflops [variant=shared]`.
    pub name: String,
    pub metric: String,
    pub unit: String,
    /// Values of the grouping axes.
    pub group: Vec<String>,
    pub same: usize,
    pub faster: usize,
    pub slower: usize,
    /// Points of this series failed in A or B.
    pub failed: usize,
    /// Geometric mean of B/A over the compared points.
    pub geomean: Option<f64>,
    pub a: Option<Shape>,
    pub b: Option<Shape>,
}

impl SeriesCmp {
    pub fn compared(&self) -> usize {
        self.same + self.faster + self.slower
    }
}

/// The comparison of two runs.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub a: Side,
    pub b: Side,
    /// A's axes (B has the same ones).
    pub axes: Vec<String>,
    /// The swept axis of the series, when there is a numeric one.
    pub x: Option<String>,
    pub points: Vec<PointCmp>,
    pub series: Vec<SeriesCmp>,
    /// Points matched by their axis values.
    pub matched: usize,
    /// Labels (`threads=3, variant=a`) of points found in one run only.
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
    /// Points, or metrics at points, not compared because a side failed or has no value, with why.
    pub failed: Vec<String>,
    /// The dialect `compare.csv` is written in: A's.
    pub dialect: Dialect,
}

/// The results CSV of a run folder, or the CSV itself.
pub fn resolve(path: &Path) -> Result<PathBuf, CompareError> {
    if path.is_dir() {
        let csv = path.join(crate::store::RESULTS);
        if csv.is_file() {
            Ok(csv)
        } else {
            Err(CompareError::NoResults {
                path: path.to_path_buf(),
            })
        }
    } else if path.is_file() {
        Ok(path.to_path_buf())
    } else {
        Err(CompareError::NotFound {
            path: path.to_path_buf(),
        })
    }
}

fn listed(names: &[String]) -> String {
    if names.is_empty() {
        return "none".to_string();
    }
    names
        .iter()
        .map(|a| format!("`{a}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A cell as a key: numbers in one spelling (`32`, `32.0` and `3.2e1` match), text trimmed.
fn key(cell: &str, semicolon: bool) -> String {
    match number(cell, semicolon) {
        Some(v) => format!("{v}"),
        None => cell.trim().to_string(),
    }
}

/// The column `<metric>_<suffix>`: by the metric's name, else by the longest prefix of its column
/// cut at a `_` (a CSV without a manifest names metrics by their column: `copy_gb_per_s` ->
/// `copy_rel_ci`).
fn stat_column(header: &[String], m: &MetricColumn, suffix: &str) -> Option<usize> {
    let find = |name: String| header.iter().position(|h| *h == name);
    find(format!("{}_{suffix}", m.name)).or_else(|| {
        m.column
            .rmatch_indices('_')
            .find_map(|(i, _)| find(format!("{}_{suffix}", &m.column[..i])))
    })
}

/// One run read for comparison.
struct Run {
    table: Table,
    /// Row of each point, by its axis values in the order of A's axes.
    by_key: HashMap<Vec<String>, usize>,
    /// Keys in row order (first appearance).
    keys: Vec<Vec<String>>,
    status: Option<usize>,
}

impl Run {
    fn read(path: &Path, axes: Option<&[String]>) -> Result<Run, CompareError> {
        let table = Table::read(path)?;
        let axes = axes.unwrap_or(&table.axes).to_vec();
        let cols: Vec<Option<usize>> = axes
            .iter()
            .map(|a| table.header.iter().position(|h| h == a))
            .collect();
        let mut by_key = HashMap::new();
        let mut keys = Vec::new();
        for (i, row) in table.rows.iter().enumerate() {
            let k: Vec<String> = cols
                .iter()
                .map(|c| {
                    let cell = c.and_then(|c| row.get(c)).map_or("", String::as_str);
                    key(cell, table.semicolon)
                })
                .collect();
            if !by_key.contains_key(&k) {
                by_key.insert(k.clone(), i);
                keys.push(k);
            }
        }
        let status = table.header.iter().position(|h| h == "status");
        Ok(Run {
            table,
            by_key,
            keys,
            status,
        })
    }

    fn cell(&self, row: usize, col: Option<usize>) -> &str {
        col.and_then(|c| self.table.rows[row].get(c))
            .map_or("", String::as_str)
    }

    fn value(&self, row: usize, col: Option<usize>) -> Option<f64> {
        number(self.cell(row, col), self.table.semicolon).filter(|v| v.is_finite())
    }

    /// The status of a row that was not measured, or `None` for ok, noisy and unstable.
    fn failed_status(&self, row: usize) -> Option<&str> {
        let s = self.cell(row, self.status);
        (self.status.is_some() && !MEASURED.contains(&s)).then_some(s)
    }

    fn side(&self) -> Side {
        let gpu = self
            .table
            .header
            .iter()
            .position(|h| h == "gpu_name")
            .and_then(|c| {
                self.table
                    .rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .find(|v| !v.is_empty())
            })
            .cloned();
        Side {
            path: self.table.path.clone(),
            gpu,
            rows: self.table.rows.len(),
        }
    }
}

/// Where a metric's value and uncertainty lie in one run.
struct MetricCols {
    value: Option<usize>,
    rel_ci: Option<usize>,
    spread: Option<usize>,
    repeat_spread: Option<usize>,
}

impl MetricCols {
    fn of(header: &[String], m: &MetricColumn) -> MetricCols {
        MetricCols {
            value: header.iter().position(|h| *h == m.column),
            rel_ci: stat_column(header, m, "rel_ci"),
            spread: stat_column(header, m, "spread"),
            repeat_spread: stat_column(header, m, "repeat_spread"),
        }
    }

    /// max(rel_ci, spread / 2, repeat_spread / 2) of a row, 0 when it has none.
    fn uncertainty(&self, run: &Run, row: usize) -> f64 {
        [
            (self.rel_ci, 1.0),
            (self.spread, 0.5),
            (self.repeat_spread, 0.5),
        ]
        .iter()
        .filter_map(|&(c, f)| run.value(row, c).map(|v| v.abs() * f))
        .fold(0.0, f64::max)
    }
}

/// The metrics both runs have (by column), or those `y` names.
fn common_metrics(a: &Run, b: &Run, y: &[String]) -> Result<Vec<MetricColumn>, CompareError> {
    let common: Vec<MetricColumn> = a
        .table
        .metrics
        .iter()
        .filter(|m| b.table.metrics.iter().any(|n| n.column == m.column))
        .cloned()
        .collect();
    let columns =
        |ms: &[MetricColumn]| listed(&ms.iter().map(|m| m.column.clone()).collect::<Vec<_>>());
    if common.is_empty() {
        return Err(CompareError::NoCommonMetric {
            a: a.table.path.clone(),
            b: b.table.path.clone(),
            metrics_a: columns(&a.table.metrics),
            metrics_b: columns(&b.table.metrics),
        });
    }
    if y.is_empty() {
        return Ok(common);
    }
    y.iter()
        .map(|name| {
            common
                .iter()
                .find(|m| m.column == *name || m.name == *name)
                .cloned()
                .ok_or_else(|| CompareError::UnknownMetric {
                    name: name.clone(),
                    common: columns(&common),
                })
        })
        .collect()
}

/// Both runs must have the same axes, in any order.
fn same_axes(a: &Table, b: &Table) -> Result<(), CompareError> {
    let missing = |from: &Table, other: &Table| -> Vec<String> {
        other
            .axes
            .iter()
            .filter(|x| !from.axes.contains(x))
            .cloned()
            .collect()
    };
    for (lacking, other) in [(b, a), (a, b)] {
        let m = missing(lacking, other);
        if !m.is_empty() {
            return Err(CompareError::Axes {
                lacking: lacking.path.clone(),
                other: other.path.clone(),
                axes: listed(&m),
                both: format!(
                    "`{}` has {}, `{}` has {}",
                    a.path.display(),
                    listed(&a.axes),
                    b.path.display(),
                    listed(&b.axes)
                ),
            });
        }
    }
    Ok(())
}

fn shape(a: &Analysis, metric: &str, group: &[String], semicolon: bool) -> Option<Shape> {
    a.series
        .iter()
        .find(|s| {
            s.column == metric
                && s.group.len() == group.len()
                && s.group
                    .iter()
                    .zip(group)
                    .all(|((_, v), g)| key(v, semicolon) == *g)
        })
        .map(|s| Shape {
            period: s.curve.period.as_ref().map(|p| p.period),
            knee: s.curve.knee,
            best_x: s.curve.best.as_ref().map(|b| b.x),
        })
}

/// `threads=3, variant=a`.
fn label(axes: &[String], values: &[String]) -> String {
    axes.iter()
        .zip(values)
        .map(|(a, v)| format!("{a}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Compares run B with run A (run folders or results CSVs).
pub fn compare(a: &Path, b: &Path, opts: &Options) -> Result<Comparison, CompareError> {
    let (path_a, path_b) = (resolve(a)?, resolve(b)?);
    let run_a = Run::read(&path_a, None)?;
    let run_b = Run::read(&path_b, Some(&run_a.table.axes))?;
    same_axes(&run_a.table, &run_b.table)?;
    let metrics = common_metrics(&run_a, &run_b, &opts.y)?;
    let axes = run_a.table.axes.clone();

    // The series and their shapes, from the analysis of each side; without a numeric axis to
    // put on x, one series per metric and no shapes.
    let columns: Vec<String> = metrics.iter().map(|m| m.column.clone()).collect();
    let analysis_a = analyze::analyze_csv(
        &path_a,
        &AnalyzeOptions {
            x: None,
            y: columns.clone(),
            by: None,
        },
    )
    .ok();
    let analysis_b = analysis_a.as_ref().and_then(|an| {
        analyze::analyze_csv(
            &path_b,
            &AnalyzeOptions {
                x: Some(an.x.clone()),
                y: columns.clone(),
                by: Some(an.by.clone()),
            },
        )
        .ok()
    });
    let x = analysis_a.as_ref().map(|an| an.x.clone());
    let by: Vec<usize> = match &analysis_a {
        Some(an) => an
            .by
            .iter()
            .filter_map(|g| axes.iter().position(|a| a == g))
            .collect(),
        None => Vec::new(),
    };

    let cols_a: Vec<MetricCols> = metrics
        .iter()
        .map(|m| MetricCols::of(&run_a.table.header, m))
        .collect();
    let cols_b: Vec<MetricCols> = metrics
        .iter()
        .map(|m| MetricCols::of(&run_b.table.header, m))
        .collect();
    let units: Vec<String> = metrics
        .iter()
        .map(|m| {
            if m.unit.is_empty() {
                unit_of_column(&m.column).to_string()
            } else {
                m.unit.clone()
            }
        })
        .collect();

    let mut series: Vec<SeriesCmp> = Vec::new();
    let mut series_index: HashMap<(usize, Vec<String>), usize> = HashMap::new();
    let mut logs: Vec<Vec<f64>> = Vec::new();
    let mut points = Vec::new();
    let mut failed = Vec::new();
    let mut only_a = Vec::new();
    let mut matched = 0;
    for k in &run_a.keys {
        let ra = run_a.by_key[k];
        let Some(&rb) = run_b.by_key.get(k) else {
            only_a.push(label(&axes, k));
            continue;
        };
        matched += 1;
        let group: Vec<String> = by.iter().map(|&i| k[i].clone()).collect();
        let status = match (run_a.failed_status(ra), run_b.failed_status(rb)) {
            (None, None) => None,
            (Some(s), None) => Some(format!("A {s}")),
            (None, Some(s)) => Some(format!("B {s}")),
            (Some(s), Some(t)) => Some(format!("A {s}, B {t}")),
        };
        if let Some(s) = &status {
            failed.push(format!("{} ({s})", label(&axes, k)));
        }
        for (m, metric) in metrics.iter().enumerate() {
            let si = *series_index.entry((m, group.clone())).or_insert_with(|| {
                let groups: Vec<String> = by
                    .iter()
                    .zip(&group)
                    .map(|(&i, v)| format!("{}={v}", axes[i]))
                    .collect();
                let name = if groups.is_empty() {
                    metric.column.clone()
                } else {
                    format!("{} [{}]", metric.column, groups.join(", "))
                };
                let semicolon_a = run_a.table.semicolon;
                let semicolon_b = run_b.table.semicolon;
                series.push(SeriesCmp {
                    name,
                    metric: metric.column.clone(),
                    unit: units[m].clone(),
                    group: group.clone(),
                    same: 0,
                    faster: 0,
                    slower: 0,
                    failed: 0,
                    geomean: None,
                    a: analysis_a
                        .as_ref()
                        .and_then(|an| shape(an, &metric.column, &group, semicolon_a)),
                    b: analysis_b
                        .as_ref()
                        .and_then(|an| shape(an, &metric.column, &group, semicolon_b)),
                });
                logs.push(Vec::new());
                series.len() - 1
            });
            if status.is_some() {
                series[si].failed += 1;
                continue;
            }
            let va = run_a.value(ra, cols_a[m].value);
            let vb = run_b.value(rb, cols_b[m].value);
            let (a, b) = match (va, vb) {
                (Some(a), Some(b)) if a > 0.0 && b > 0.0 => (a, b),
                _ => {
                    let why = |v: Option<f64>, side: &str| match v {
                        None => Some(format!("{side} no value")),
                        Some(v) if v <= 0.0 => Some(format!("{side} {}", human(v))),
                        Some(_) => None,
                    };
                    let whys: Vec<String> =
                        [why(va, "A"), why(vb, "B")].into_iter().flatten().collect();
                    failed.push(format!(
                        "{} `{}` ({})",
                        label(&axes, k),
                        metric.column,
                        whys.join(", ")
                    ));
                    series[si].failed += 1;
                    continue;
                }
            };
            let (u_a, u_b) = (
                cols_a[m].uncertainty(&run_a, ra),
                cols_b[m].uncertainty(&run_b, rb),
            );
            let sense = Sense::from_unit(&units[m]);
            let verdict = Verdict::of(a, b, u_a, u_b, sense);
            let s = &mut series[si];
            match verdict {
                Verdict::Same => s.same += 1,
                Verdict::Faster => s.faster += 1,
                Verdict::Slower => s.slower += 1,
            }
            logs[si].push((b / a).ln());
            points.push(PointCmp {
                axes: k.clone(),
                metric: metric.column.clone(),
                a,
                b,
                ratio: b / a,
                u_a,
                u_b,
                verdict,
                sense,
                series: si,
            });
        }
    }
    for (s, l) in series.iter_mut().zip(&logs) {
        if !l.is_empty() {
            s.geomean = Some((l.iter().sum::<f64>() / l.len() as f64).exp());
        }
    }
    let only_b = run_b
        .keys
        .iter()
        .filter(|k| !run_a.by_key.contains_key(*k))
        .map(|k| label(&axes, k))
        .collect();
    Ok(Comparison {
        a: run_a.side(),
        b: run_b.side(),
        axes,
        x,
        points,
        series,
        matched,
        only_a,
        only_b,
        failed,
        dialect: if run_a.table.semicolon {
            Dialect::Semicolon
        } else {
            Dialect::Comma
        },
    })
}

/// `3 (threads=1, threads=2, and 1 more)`.
fn named(labels: &[String]) -> String {
    if labels.is_empty() {
        return "0".to_string();
    }
    let mut s = labels
        .iter()
        .take(NAMED)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    if labels.len() > NAMED {
        s += &format!("; and {} more", labels.len() - NAMED);
    }
    format!("{} ({s})", labels.len())
}

fn opt(v: Option<f64>) -> String {
    v.map_or("-".to_string(), human)
}

impl Comparison {
    /// The points `slower` by more than `pct` percent, the worst first.
    pub fn slower_than(&self, pct: f64) -> Vec<&PointCmp> {
        let mut v: Vec<&PointCmp> = self
            .points
            .iter()
            .filter(|p| p.verdict == Verdict::Slower && p.loss() > pct / 100.0)
            .collect();
        v.sort_by(|a, b| b.loss().total_cmp(&a.loss()));
        v
    }

    /// How many compared values have each verdict: (same, faster, slower).
    pub fn counts(&self) -> (usize, usize, usize) {
        self.series.iter().fold((0, 0, 0), |(s, f, l), c| {
            (s + c.same, f + c.faster, l + c.slower)
        })
    }

    pub fn label(&self, p: &PointCmp) -> String {
        label(&self.axes, &p.axes)
    }

    /// The Markdown: a summary, a table per series, then the largest changes.
    pub fn to_markdown(&self) -> String {
        let side = |s: &Side| {
            let gpu = s.gpu.as_ref().map_or(String::new(), |g| format!(", {g}"));
            format!("`{}` ({} rows{gpu})", s.path.display(), s.rows)
        };
        let mut out = format!(
            "## Compare B with A\n\nA: {}  \nB: {}\n\n",
            side(&self.a),
            side(&self.b)
        );
        let (same, faster, slower) = self.counts();
        out += &format!(
            "{} points matched by {}; only in A: {}; only in B: {}.  \n",
            self.matched,
            listed(&self.axes),
            named(&self.only_a),
            named(&self.only_b)
        );
        out += &format!("Failed (not compared): {}.  \n", named(&self.failed));
        out += &format!(
            "{} values compared: {same} same, {faster} faster, {slower} slower \
             (same: |B/A - 1| <= u_A + u_B, u = max(rel_ci, spread/2, repeat_spread/2)).\n\n",
            same + faster + slower
        );
        let x = self.x.as_deref().unwrap_or("x");
        out += &format!(
            "| series | compared | B/A (geomean) | same | faster | slower | failed | period A / B | knee A / B | best {x} A / B |\n"
        );
        out += "|---|---|---|---|---|---|---|---|---|---|\n";
        for s in &self.series {
            let both = |f: fn(&Shape) -> Option<f64>| {
                format!(
                    "{} / {}",
                    opt(s.a.as_ref().and_then(f)),
                    opt(s.b.as_ref().and_then(f))
                )
            };
            out += &format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                s.name.replace('|', "\\|"),
                s.compared(),
                s.geomean.map_or("-".to_string(), |g| format!("{g:.3}")),
                s.same,
                s.faster,
                s.slower,
                s.failed,
                both(|c| c.period),
                both(|c| c.knee),
                both(|c| c.best_x),
            );
        }
        let mut changed: Vec<&PointCmp> = self
            .points
            .iter()
            .filter(|p| p.verdict != Verdict::Same)
            .collect();
        changed.sort_by(|a, b| b.ratio.ln().abs().total_cmp(&a.ratio.ln().abs()));
        out += "\n### Largest changes beyond the uncertainty\n\n";
        if changed.is_empty() {
            out += "None: every compared value is the same within u_A + u_B.\n";
            return out;
        }
        out += "| point | metric | A | B | B/A | u_A | u_B | verdict |\n";
        out += "|---|---|---|---|---|---|---|---|\n";
        for p in changed.iter().take(LARGEST) {
            let unit = &self.series[p.series].unit;
            out += &format!(
                "| {} | {} | {} {unit} | {} {unit} | {:.3} | {} | {} | {} |\n",
                self.label(p).replace('|', "\\|"),
                p.metric,
                human(p.a),
                human(p.b),
                p.ratio,
                percent(p.u_a),
                percent(p.u_b),
                p.verdict.as_str()
            );
        }
        if changed.len() > LARGEST {
            out += &format!(
                "\n{} more beyond the uncertainty: see compare.csv (--out).\n",
                changed.len() - LARGEST
            );
        }
        out
    }

    /// `compare.csv`: one row per compared point and metric, in A's dialect, RFC 4180.
    pub fn to_csv(&self) -> String {
        let mut header: Vec<String> = self
            .axes
            .iter()
            .map(|a| {
                if CSV_COLUMNS.contains(&a.as_str()) {
                    format!("axis_{a}")
                } else {
                    a.clone()
                }
            })
            .collect();
        header.extend(CSV_COLUMNS.iter().map(|c| c.to_string()));
        let d = self.dialect;
        let mut out = crate::store::record(&header, d);
        for p in &self.points {
            let mut row = p.axes.clone();
            row.extend([
                p.metric.clone(),
                d.number(p.a),
                d.number(p.b),
                d.number(p.ratio),
                d.number(p.u_a),
                d.number(p.u_b),
                p.verdict.as_str().to_string(),
            ]);
            out.extend(crate::store::record(&row, d));
        }
        String::from_utf8(out).unwrap_or_default()
    }

    /// Writes `compare.csv` and `compare.md` into `dir` (created if missing).
    pub fn write_files(&self, dir: &Path) -> Result<Vec<PathBuf>, CompareError> {
        let err = |path: &Path, e: std::io::Error| CompareError::Write {
            path: path.to_path_buf(),
            reason: e.to_string(),
        };
        std::fs::create_dir_all(dir).map_err(|e| err(dir, e))?;
        let csv = dir.join("compare.csv");
        std::fs::write(&csv, self.to_csv()).map_err(|e| err(&csv, e))?;
        let md = dir.join("compare.md");
        std::fs::write(&md, self.to_markdown()).map_err(|e| err(&md, e))?;
        Ok(vec![csv, md])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_respect_both_uncertainties_and_the_sense() {
        use Sense::{HigherIsBetter as Hi, LowerIsBetter as Lo};
        use Verdict::{Faster, Same, Slower};
        // (a, b, u_a, u_b, sense, verdict)
        let cases = [
            (100.0, 103.0, 0.01, 0.01, Hi, Faster),
            (100.0, 103.0, 0.02, 0.011, Hi, Same),
            (100.0, 97.0, 0.01, 0.01, Hi, Slower),
            (100.0, 97.0, 0.0, 0.031, Hi, Same),
            (10.0, 11.0, 0.0, 0.0, Lo, Slower),
            (10.0, 9.0, 0.0, 0.0, Lo, Faster),
            (10.0, 9.0, 0.05, 0.06, Lo, Same),
            (10.0, 10.0, 0.0, 0.0, Hi, Same),
        ];
        for (a, b, u_a, u_b, sense, want) in cases {
            assert_eq!(
                Verdict::of(a, b, u_a, u_b, sense),
                want,
                "{a} -> {b}, u {u_a} + {u_b}, {sense:?}"
            );
        }
    }

    #[test]
    fn loss_is_throughput_lost_or_time_added() {
        let p = |ratio: f64, sense| PointCmp {
            axes: vec![],
            metric: "m".into(),
            a: 1.0,
            b: ratio,
            ratio,
            u_a: 0.0,
            u_b: 0.0,
            verdict: Verdict::Slower,
            sense,
            series: 0,
        };
        assert!((p(0.9, Sense::HigherIsBetter).loss() - 0.1).abs() < 1e-12);
        assert!((p(1.25, Sense::LowerIsBetter).loss() - 0.25).abs() < 1e-12);
        assert!(p(1.1, Sense::HigherIsBetter).loss() < 0.0);
    }

    #[test]
    fn axis_values_match_whatever_their_spelling() {
        assert_eq!(key("32", false), key("32.0", false));
        assert_eq!(key("32", false), key("3.2e1", false));
        assert_eq!(key("0,5", true), key("0.5", false));
        assert_eq!(key(" shared ", false), "shared");
        assert_ne!(key("32", false), key("33", false));
    }

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
        };
        let from_manifest = MetricColumn {
            name: "copy".into(),
            unit: "GB/s".into(),
            column: "copy_gb_per_s".into(),
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
        };
        assert_eq!(stat_column(&header, &other, "rel_ci"), None);
    }
}
