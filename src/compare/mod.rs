//! `sweep compare`: two runs of one sweep, point by point and series by series.
//!
//! Points are matched by their axis values, not their ids, so runs of other builds, GPUs or days
//! compare. For each matched point and metric: B/A and a verdict that respects both sides'
//! uncertainty, after nvbench's `nvbench_compare.py` (which calls two timings the same when they
//! differ by less than their noise). A point's relative uncertainty u is the largest of
//! sqrt(`<m>_rel_ci`^2 + b^2) (b: the run's 95 % spread between processes, from its control
//! re-runs in `controls.csv`, 0 without), `<m>_spread`/2 and `<m>_repeat_spread`/2; A and B are
//! `same` when |B/A - 1| <= u_A + u_B, else `faster` or `slower` by the metric's sense. Per series
//! (`analyze`'s series: one metric at one combination of the other axes): the geometric mean of
//! B/A, the verdict counts, and period, knee and best x of both sides.

mod conditions;
mod output;
mod read;

use crate::analyze::load::unit_of_column;
use crate::analyze::reading::human;
use crate::analyze::{self, Analysis, AnalyzeError, AnalyzeOptions, Sense};
use crate::store::{self, Dialect};
use read::{common_metrics, key, listed, same_axes, Keys, MetricCols, Run};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// `sweep compare --help`, after the options.
pub const HELP: &str = "\
RUN_A and RUN_B are run folders or results CSVs. Points are matched by their axis values, so runs
of other builds or GPUs compare. A point's relative uncertainty u is the largest of
sqrt(<m>_rel_ci^2 + b^2) (b: the run's spread between processes, 95 %, from its control re-runs
in controls.csv; 0 without), <m>_spread/2 and <m>_repeat_spread/2 (of those the CSV has); B is
`same` as A when |B/A - 1| <= u_A + u_B, else `faster` or `slower` (GB/s, MFlops: higher is
better; s, ms, us: lower is better). Only rows with status ok, noisy or unstable are compared; the others are named
as failed. A point is slower by PCT % when its throughput is PCT % below A's, or its time PCT %
above A's.

Exit codes:
  0    compared (with --fail-on-slower: no point slower than allowed)
  2    usage error
  3    bad input: a run missing or unreadable or without rows, runs with other axes, no common
       metric
  5    --fail-on-slower PCT: some point is `slower` by more than PCT %";

/// How many points a line names before it says "and N more".
const NAMED: usize = 5;
/// How many points the table of the largest changes shows.
const LARGEST: usize = 10;
/// The columns of `compare.csv` after the axes.
const CSV_COLUMNS: [&str; 7] = ["metric", "a", "b", "ratio", "u_a", "u_b", "verdict"];

#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error("`{path}` has no rows yet (hint: compare it once its run has measured some points)")]
    NoRows { path: PathBuf },
    /// Two rows of one point: which one to compare is no choice to make silently.
    #[error("`{path}` has two rows of the point {point} (its rows {first} and {second} after the header) (hint: a run's results.csv has one row per point; keep one of them)")]
    TwoRows {
        path: PathBuf,
        point: String,
        first: usize,
        second: usize,
    },
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
    /// One column whose specs say opposite things of which way is better.
    #[error("metric `{column}` is better one way in `{a}` and another in `{b}` (their specs' `better` differ) (hint: compare runs of one spec, or name other metrics with --y)")]
    BetterDiffers {
        column: String,
        a: PathBuf,
        b: PathBuf,
    },
    /// One column in both runs whose units are not one (`MB/s` and `Mb/s` share the column
    /// `_mb_per_s`): their ratio would read 1000 Mb/s as 1000 MB/s (review 13b F3).
    #[error("metric `{column}` is in {unit_a} in `{a}` and in {unit_b} in `{b}` (hint: compare runs of one spec, or name other metrics with --y)")]
    UnitDiffers {
        column: String,
        unit_a: String,
        unit_b: String,
        a: PathBuf,
        b: PathBuf,
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
    #[error(
        "cannot write `{path}`: {source}{}",
        crate::store::space::write_hint(source)
    )]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("`--out {out}` is a run folder: compare's charts would replace that run's own (hint: pick a folder of its own)")]
    OutIsARun { out: PathBuf },
    /// `--out DIR/charts` is a link: the charts would land where it points (review 16b B6), a
    /// run's own among them. Refused as the run-folder case is (review 17 C9: exit 4 before).
    #[error("`{charts}` is a symbolic link (to `{to}`), which sweep never makes: compare's charts would land where it points (hint: remove the link, or pick a folder of its own with --out)")]
    OutLink { charts: PathBuf, to: PathBuf },
    /// A chart of A against B cannot be drawn or written.
    #[error("cannot write `{path}`: {source}")]
    Chart {
        path: PathBuf,
        #[source]
        source: Box<crate::report::ReportError>,
    },
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

impl Side {
    /// For a chart's legend: the GPU and the run folder (or CSV) name.
    pub fn label(&self) -> String {
        let run = self
            .path
            .parent()
            .filter(|_| {
                self.path
                    .file_name()
                    .is_some_and(|f| f == crate::store::RESULTS)
            })
            .unwrap_or(&self.path);
        let name = run
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        match &self.gpu {
            Some(g) => format!("{g}, {name}"),
            None => name,
        }
    }
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

/// One metric at one point matched in both runs. Its axis values are
/// [`Comparison::axis_values`], its metric's column that of its series.
#[derive(Debug, Clone)]
pub struct PointCmp {
    /// The point, in order of A's rows: the index of its key in `Comparison`.
    pub point: usize,
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
    /// Each side's curve (x, value) when the series has an x axis, for the overlay chart.
    pub curve_a: Vec<(f64, f64)>,
    pub curve_b: Vec<(f64, f64)>,
    /// For file names: the analysis' stem of the series.
    pub file_stem: String,
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
    /// Points not compared because a side failed, with why.
    pub failed: Vec<String>,
    /// Metrics at points measured on both sides, not compared because a side has no value or one
    /// of 0 or less, with why (review 19a M6: they were listed as failed).
    pub unvalued: Vec<String>,
    /// Points that A measured and B failed at, or has no value of a metric at (one each, the
    /// first reason): what `--fail-on-slower` cannot clear.
    pub lost_in_b: Vec<String>,
    /// The dialect `compare.csv` is written in: A's.
    pub dialect: Dialect,
    /// Conditions the two runs were measured in that differ (`prestart: A 1 / B 0`), from their
    /// manifests.
    pub differences: Vec<String>,
    /// The axis values of the points: numbers (`Keys`), `axes.len()` a point, one key per
    /// matched point.
    keys: Keys,
    point_keys: Vec<u32>,
}

impl Comparison {
    /// A point's axis values, in the order of `axes`.
    pub fn axis_values<'a>(&'a self, p: &PointCmp) -> impl Iterator<Item = &'a str> + 'a {
        let width = self.axes.len();
        self.keys
            .values(&self.point_keys[p.point * width..(p.point + 1) * width])
    }

    /// The metric column of a point.
    pub fn metric_of(&self, p: &PointCmp) -> &str {
        &self.series[p.series].metric
    }
}

/// What a comparison takes from one side's analysis of a series: its shape, its observed points
/// (x, value) and its file stem.
struct Taken {
    shape: Shape,
    curve: Vec<(f64, f64)>,
    file_stem: String,
}

/// The series of an analysis by metric column and group (its axis values as keys, [`key`]); the
/// first of equals, as a scan would find it. Made from the analysis, which is let go: the rest of
/// it (readings, fits) need not stay while the other side is analysed.
type SeriesIndex = HashMap<(String, Vec<String>), Taken>;

fn series_index(a: Analysis, dialect: Dialect) -> SeriesIndex {
    let mut index = SeriesIndex::new();
    for s in a.series {
        let group = s.group.iter().map(|(_, v)| key(v, dialect)).collect();
        index.entry((s.column, group)).or_insert_with(|| Taken {
            shape: Shape {
                period: s.curve.period.as_ref().map(|p| p.period),
                knee: s.curve.knee,
                best_x: s.curve.best.as_ref().map(|b| b.x),
            },
            curve: s
                .data
                .iter()
                .filter_map(|&(x, y)| y.map(|v| (x, v)))
                .collect(),
            file_stem: s.file_stem,
        });
    }
    index
}

/// `threads=3, variant=a`.
fn label<'a>(axes: &[String], values: impl Iterator<Item = &'a str>) -> String {
    axes.iter()
        .zip(values)
        .map(|(a, v)| format!("{a}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Compares run B with run A (run folders or results CSVs).
pub fn compare(a: &Path, b: &Path, opts: &Options) -> Result<Comparison, CompareError> {
    let (table_a, table_b) = (store::Run::open(a)?, store::Run::open(b)?);
    // Axes first: B's rows keyed by A's axes alone, where B has one more, read as two rows of
    // one point (`keep one of them`) when they are two points.
    same_axes(&table_a, &table_b)?;
    let mut keys = Keys::new(table_a.axes.len());
    let mut run_a = Run::read(table_a, None, &mut keys)?;
    let mut run_b = Run::read(table_b, Some(&run_a.table.axes), &mut keys)?;
    let strides = keys.strides();
    run_a.index(strides.as_deref(), &keys)?;
    run_b.index(strides.as_deref(), &keys)?;
    // A run with a header and no row yet has nothing to compare (and no metric to guess).
    for run in [&run_a, &run_b] {
        if run.table.rows.is_empty() {
            return Err(CompareError::NoRows {
                path: run.table.path.clone(),
            });
        }
    }
    let metrics = common_metrics(&run_a, &run_b, &opts.y)?;
    let axes = run_a.table.axes.clone();

    // The series and their shapes, from the analysis of each side; without a numeric axis to
    // put on x, one series per metric and no shapes.
    let columns: Vec<String> = metrics.iter().map(|m| m.column.clone()).collect();
    let analysis_a = analyze::analyze_run(
        &run_a.table,
        &AnalyzeOptions {
            x: None,
            y: columns.clone(),
            by: None,
        },
    )
    .ok();
    // B along A's x, split by A's axes.
    let x_by = analysis_a.as_ref().map(|an| (an.x.clone(), an.by.clone()));
    let index_a = analysis_a.map(|an| series_index(an, run_a.table.dialect));
    let index_b = x_by.as_ref().and_then(|(x, by)| {
        analyze::analyze_run(
            &run_b.table,
            &AnalyzeOptions {
                x: Some(x.clone()),
                y: columns.clone(),
                by: Some(by.clone()),
            },
        )
        .ok()
        .map(|an| series_index(an, run_b.table.dialect))
    });
    let by: Vec<usize> = match &x_by {
        Some((_, by)) => by
            .iter()
            .filter_map(|g| axes.iter().position(|a| a == g))
            .collect(),
        None => Vec::new(),
    };
    let x = x_by.map(|(x, _)| x);

    let cols_a: Vec<MetricCols> = metrics.iter().map(|m| MetricCols::of(&run_a, m)).collect();
    let cols_b: Vec<MetricCols> = metrics.iter().map(|m| MetricCols::of(&run_b, m)).collect();
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

    let senses: Vec<Sense> = metrics
        .iter()
        .map(|m| crate::analyze::sense_of(m).2)
        .collect();
    let mut series: Vec<SeriesCmp> = Vec::new();
    // Per metric, the series of each group (the numbers of its axis values).
    let mut series_index: Vec<read::KeyMap<usize>> = vec![Default::default(); metrics.len()];
    let mut logs: Vec<Vec<f64>> = Vec::new();
    let mut points = Vec::new();
    let mut point_keys = Vec::new();
    let mut failed = Vec::new();
    let mut unvalued = Vec::new();
    let mut lost_in_b = Vec::new();
    let mut only_a = Vec::new();
    let mut matched = 0;
    let mut compared = 0;
    let mut group_key: Vec<u32> = Vec::with_capacity(by.len());
    for &ra in &run_a.firsts {
        let k = run_a.key(ra);
        let point_label = || label(&axes, keys.values(k));
        let Some(rb) = run_b.row_of(k) else {
            only_a.push(point_label());
            continue;
        };
        matched += 1;
        // The point's index among those with a value compared, once it has one.
        let mut point = None;
        group_key.clear();
        group_key.extend(by.iter().map(|&i| k[i]));
        let status = match (run_a.failed_status(ra), run_b.failed_status(rb)) {
            (None, None) => None,
            (Some(s), None) => Some(format!("A {s}")),
            (None, Some(s)) => Some(format!("B {s}")),
            (Some(s), Some(t)) => Some(format!("A {s}, B {t}")),
        };
        if let Some(s) = &status {
            failed.push(format!("{} ({s})", point_label()));
        }
        let mut lost = match (run_a.failed_status(ra), run_b.failed_status(rb)) {
            (None, Some(s)) => Some(format!("{}, B {s}", point_label())),
            _ => None,
        };
        for (m, metric) in metrics.iter().enumerate() {
            let si = match series_index[m].get(group_key.as_slice()) {
                Some(&si) => si,
                None => {
                    let group: Vec<String> = by
                        .iter()
                        .zip(&group_key)
                        .map(|(&i, &n)| keys.value(i, n).to_string())
                        .collect();
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
                    // A metric named twice in --y makes a series twice, both from the same.
                    let at = (metric.column.clone(), group.clone());
                    let taken_a = index_a.as_ref().and_then(|an| an.get(&at));
                    let taken_b = index_b.as_ref().and_then(|an| an.get(&at));
                    let file_stem = taken_a
                        .map(|t| t.file_stem.clone())
                        .unwrap_or_else(|| format!("series-{}", series.len()));
                    let shape_curve = |t: Option<&Taken>| {
                        t.map_or((None, Vec::new()), |t| (Some(t.shape), t.curve.clone()))
                    };
                    let ((a, curve_a), (b, curve_b)) = (shape_curve(taken_a), shape_curve(taken_b));
                    series.push(SeriesCmp {
                        name,
                        metric: metric.column.clone(),
                        unit: units[m].clone(),
                        group,
                        same: 0,
                        faster: 0,
                        slower: 0,
                        failed: 0,
                        geomean: None,
                        a,
                        b,
                        curve_a,
                        curve_b,
                        file_stem,
                    });
                    logs.push(Vec::new());
                    series_index[m].insert(group_key.as_slice().into(), series.len() - 1);
                    series.len() - 1
                }
            };
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
                    if va.is_some_and(|a| a > 0.0) {
                        lost.get_or_insert_with(|| {
                            format!("{} `{}`, {}", point_label(), metric.column, whys.join(", "))
                        });
                    }
                    // Neither compared nor failed: the rows were measured (review 20a M1: the
                    // series table counted them failed beside "Failed (not compared): 0").
                    unvalued.push(format!(
                        "{} `{}` ({})",
                        point_label(),
                        metric.column,
                        whys.join(", ")
                    ));
                    continue;
                }
            };
            let (u_a, u_b) = (
                cols_a[m].uncertainty(&run_a, ra),
                cols_b[m].uncertainty(&run_b, rb),
            );
            // The spec's `better` (from the manifest), as the analysis reads it (review 13b
            // F1: the unit alone decided, so `better = "lower"` of joules called a halving
            // slower and exit 5).
            let sense = senses[m];
            let verdict = Verdict::of(a, b, u_a, u_b, sense);
            let s = &mut series[si];
            match verdict {
                Verdict::Same => s.same += 1,
                Verdict::Faster => s.faster += 1,
                Verdict::Slower => s.slower += 1,
            }
            logs[si].push((b / a).ln());
            let point = *point.get_or_insert_with(|| {
                point_keys.extend_from_slice(k);
                compared += 1;
                compared - 1
            });
            points.push(PointCmp {
                point,
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
        lost_in_b.extend(lost);
    }
    for (s, l) in series.iter_mut().zip(&logs) {
        if !l.is_empty() {
            s.geomean = Some((l.iter().sum::<f64>() / l.len() as f64).exp());
        }
    }
    let only_b = run_b
        .firsts
        .iter()
        .map(|&rb| run_b.key(rb))
        .filter(|k| run_a.row_of(k).is_none())
        .map(|k| label(&axes, keys.values(k)))
        .collect();
    Ok(Comparison {
        differences: conditions::differences(&run_a.table, &run_b.table)
            .into_iter()
            .chain(conditions::clock(
                analyze::controls::sm_clock(&run_a.table),
                analyze::controls::sm_clock(&run_b.table),
            ))
            .collect(),
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
        unvalued,
        lost_in_b,
        dialect: run_a.table.dialect,
        keys,
        point_keys,
    })
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
            point: 0,
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
}
