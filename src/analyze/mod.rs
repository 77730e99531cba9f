//! Stage `analyze`: turns a results CSV into period, phase, knee, drop and best x per series.
//!
//! `load` reads the CSV into series (one per combination of the non-swept axes and per metric),
//! `curve` analyses each series (the staircase model in `staircase`, the folding fallback in
//! `fold`), `reading` puts the answer in words. The outputs are a Markdown table
//! (`Analysis::to_markdown`, also written as `analysis.md`), `analysis.json` and `analysis.csv`
//! (`Analysis::write_files`);
//! `report::plot` draws the charts.

use serde::{Serialize, Serializer};
use std::path::{Path, PathBuf};

#[cfg(test)]
mod accuracy;
pub mod controls;
pub mod counters;
pub mod curve;
pub(crate) mod fit;
mod fold;
pub mod ladder;
pub(crate) mod load;
pub mod mechanism;
pub mod reading;
pub mod stable;
mod staircase;
#[cfg(test)]
mod synth;

pub use curve::{analyze_curve, Confidence, Curve, Method, Sense};

/// What to analyse: `x` the swept axis (default: the numeric axis with the most values), `y` the
/// metric columns or names (default: all), `by` the axes that split series (default: all others).
#[derive(Debug, Clone, Default)]
pub struct AnalyzeOptions {
    pub x: Option<String>,
    pub y: Vec<String>,
    pub by: Option<Vec<String>>,
}

impl AnalyzeOptions {
    /// What a spec's `[analyze]` asks for. An x of text passes the spec only where every axis is
    /// of text (sweeps/l1_cache.toml): it names the category of the bars, drawn without x, where
    /// every run of such a spec ended in "the analysis at the end of the run failed" and no chart
    /// (review 11b M3).
    pub fn of_spec(spec: &crate::spec::Spec, cfg: &crate::spec::AnalyzeCfg) -> AnalyzeOptions {
        let categories = cfg.x.as_ref().is_some_and(|x| {
            spec.axes
                .iter()
                .any(|a| &a.name == x && !a.values.iter().all(crate::spec::Value::reads_as_number))
        });
        AnalyzeOptions {
            x: cfg.x.clone().filter(|_| !categories),
            y: cfg.y.clone(),
            by: cfg.by.clone(),
        }
    }

    /// The `[analyze]` of the spec a run's manifest saved, as the run's own analysis at its end
    /// took it; None where the spec has none (or does not parse: an older sweep's). `sweep
    /// analyze RUN`, `sweep plot` and the report take it when not told otherwise (review 18a
    /// F5: they analysed along another x, or refused an axis the run never analysed along).
    pub fn of_run(m: &crate::store::Manifest) -> Option<AnalyzeOptions> {
        let spec = crate::spec::Spec::parse(Path::new(&m.spec_path), &m.spec).ok()?;
        let cfg = spec.analyze.as_ref()?;
        Some(AnalyzeOptions::of_spec(&spec, cfg))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error("no axis `{name}` in `{path}` (hint: the axes are {axes})")]
    UnknownAxis {
        name: String,
        path: PathBuf,
        axes: String,
    },
    #[error("`by` names `{x}`, the axis the series run along, in `{path}` (hint: {})", if others.is_empty() { "leave out --by: there is no other axis to group by".to_string() } else { format!("group by the other axes, {others}, or along another x") })]
    ByNamesX {
        x: String,
        path: PathBuf,
        others: String,
    },
    #[error("no metric `{name}` in `{path}` (hint: the metrics are {metrics})")]
    UnknownMetric {
        name: String,
        path: PathBuf,
        metrics: String,
    },
    /// Every axis is a category: no --x can help (naming one gives `NotNumeric`), bars can.
    #[error(
        "no numeric axis to put on x in `{path}`: every axis is a category ({axes}) (hint: `sweep plot` and `sweep report` without --x draw such a run as bars; analyze reads curves along a numeric axis)"
    )]
    NoNumericAxis { path: PathBuf, axes: String },
    #[error("`{path}` has no rows yet (hint: analyse it once the run has measured some points)")]
    NoRows { path: PathBuf },
    /// `hint` names the numeric axes --x could take, or says there is none (never sends the
    /// user back to --x when no axis would do).
    #[error("axis `{axis}` has a value that is not a number, `{value}`, in `{path}` line {line} (hint: {hint})")]
    NotNumeric {
        axis: String,
        value: String,
        path: PathBuf,
        line: usize,
        hint: String,
    },
    #[error("no metric columns in `{path}`")]
    NoMetrics { path: PathBuf },
    /// Two cells of x written apart that are one number (integers past 2^53 that one f64 holds
    /// alike, `0` and `-0`, `1` and `1.0`): their points would be read as repeats of one x and
    /// averaged into a value that no point measured.
    #[error("axis `{axis}` has `{a}` (line {line_a}) and `{b}` (line {line_b}) in `{path}`, two values that the analysis cannot tell apart (hint: they are one number (`0` and `-0`, `1` and `1.0`, integers past 2^53 that lose their last digits); analyse along another axis with --x, or give the axis values that differ as numbers)")]
    XTooClose {
        axis: String,
        a: String,
        line_a: usize,
        b: String,
        line_b: usize,
        path: PathBuf,
    },
    #[error("cannot write `{path}`: {cause}{}", cause.write_hint())]
    Write {
        path: PathBuf,
        #[source]
        cause: crate::store::Cause,
    },
}

/// The analysis of every series of one results CSV.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Analysis {
    /// The results CSV analysed.
    pub source: PathBuf,
    /// The swept axis.
    pub x: String,
    /// The axes that split the series.
    pub by: Vec<String>,
    /// The other axes (neither x nor in `by`): the rows that differ only in them are one point,
    /// their median, and the markdown says so (review 19a M3: a "best" no row measured, unsaid).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub merged: Vec<String>,
    pub series: Vec<SeriesAnalysis>,
    /// What the control re-runs (`controls.csv` beside the CSV) say about each metric's spread
    /// between processes; `None` when the run has none.
    pub between_processes: Option<Vec<controls::BetweenProcesses>>,
    /// The CSV used `;` between fields and `,` as the decimal mark; `analysis.csv` does the same.
    #[serde(skip)]
    pub semicolon: bool,
}

/// One series: one metric at one combination of the grouping axes, against x.
#[derive(Debug, Clone, Serialize)]
pub struct SeriesAnalysis {
    /// For people: `mflops` or `mflops [variant=shared]`.
    pub name: String,
    /// For file names: letters, digits, `-`, `_` and `.` only; unique within the analysis.
    pub file_stem: String,
    pub metric: String,
    pub unit: String,
    pub column: String,
    /// Values of the grouping axes.
    #[serde(serialize_with = "ordered_map")]
    pub group: Vec<(String, String)>,
    pub sense: Sense,
    #[serde(flatten)]
    pub curve: Curve,
    /// How much where the buffers lay moved the points (from the timing core's placements), when
    /// the CSV says.
    pub placement: Option<Placement>,
    /// 95 % half-width of a value's spread between processes (from the control re-runs), when the
    /// run has them; the period's confidence is one level lower when it is at least half the drop.
    pub between_processes_u95: Option<f64>,
    /// The profiler counter (`[profile]`, `<metric>__<counter>` columns) that steps where the
    /// curve drops after its peaks, when one does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counter: Option<counters::Stepping>,
    /// The counter that steps where the curve drops after the nested period's peaks, when one
    /// does (halfwarp_counters: float4 stores add a 32-byte sector every 2 lanes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secondary_counter: Option<counters::Stepping>,
    /// How many of the series' points its own metric marks noisy or unstable
    /// (`<metric>_status`, or for older runs `store::metric_status`'s reading of the row).
    pub marked: Marked,
    /// The spec's model for this metric fitted to the curve (`model = ...`), when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<mechanism::ModelFit>,
    /// The answer in one line.
    pub reading: String,
    /// The axes its rows differ in besides x and its group ([`Analysis::merged`]): each x is
    /// the median of its rows, which the chart, the terminal and the reading say.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub merged: Vec<String>,
    /// How many of its x hold several rows at the same value of every axis (a CSV without its
    /// run's manifest may repeat a point; a run's results refuse it): each is their median,
    /// which the chart, analysis.md and the reading say. 0 where `merged` names axes (their clause says it).
    #[serde(skip_serializing_if = "is_zero")]
    pub repeated: usize,
    /// The data: (x, value), `None` for failed points; sorted by x, one point per x (the median
    /// of the rows at one x: `curve::one_per_x`), as the analysis reads it and the charts draw it.
    #[serde(skip)]
    pub data: Vec<(f64, Option<f64>)>,
}

/// How many points of a series its own metric marks, one per x (the row the analysis takes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Marked {
    /// Confidence target missed ([`crate::store::mark::Mark::Noisy`]).
    pub noisy: usize,
    /// Marked `unstable` in results.csv: they vary with buffer placement, or differ between
    /// processes ([`Marked::processes`]).
    pub unstable: usize,
    /// Of `unstable`, those whose placements stayed within the target where several processes
    /// measured the point: the processes differ ([`crate::store::mark::Mark::Processes`]); the
    /// others vary with buffer placement.
    #[serde(skip)]
    pub processes: usize,
}

impl Marked {
    /// The points marked for their buffer placements: `unstable`, less those whose processes
    /// differ. One count for one fact: the reading's "where the buffers lie moves …" and the
    /// marks under the table both say this number.
    pub fn placement(&self) -> usize {
        self.unstable - self.processes
    }

    /// The marks of one series' points (one per x). `spread`: each x's placement spread;
    /// `repeated`: whether several processes measured its points (a `<metric>_repeat_spread`
    /// cell), asked only of an unstable point whose placements stayed within `target`.
    fn of(
        statuses: &[(f64, crate::store::Status)],
        spread: &[(f64, f64)],
        target: f64,
        repeated: impl FnOnce() -> bool,
    ) -> Marked {
        use crate::store::Status;
        let count = |want: Status| statuses.iter().filter(|(_, s)| *s == want).count();
        let spread_at = |x: f64| spread.iter().find(|p| p.0 == x).map(|p| p.1);
        // As `Mark::of` tells them: placement where its spread passes the target.
        let within = statuses
            .iter()
            .filter(|(x, s)| *s == Status::Unstable && spread_at(*x).is_none_or(|v| v <= target))
            .count();
        Marked {
            noisy: count(Status::Noisy),
            unstable: count(Status::Unstable),
            processes: if within > 0 && repeated() { within } else { 0 },
        }
    }
}

/// What the timing core's placements say about a series: where its buffers lie moves a point by
/// `spread` = (slowest - fastest placement) / median.
#[derive(Debug, Clone, Serialize)]
pub struct Placement {
    /// Points with a spread, and those its own metric marks for their placements
    /// ([`Marked::placement`]: placements differ beyond the run's target and the noise), the one
    /// definition the reading and the marks share.
    pub points: usize,
    pub above: usize,
    /// The run's confidence target the marks were made against.
    pub target: f64,
    pub median_spread: f64,
    pub max_spread: f64,
    /// x of the largest spread.
    pub max_at: f64,
    /// The period's confidence was lowered one level: the median spread is at least half the
    /// drop after a peak, so placement alone could make or hide such steps.
    pub lowered: bool,
}

impl Placement {
    /// `marked`: the points its metric marks for their placements; `target`: the run's target.
    fn of(spread: &[(f64, f64)], curve: &Curve, marked: usize, target: f64) -> Option<Placement> {
        let &(max_at, max_spread) = spread.iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
        let s: Vec<f64> = spread.iter().map(|p| p.1).collect();
        let median_spread = fit::median(&s)?;
        let lowered = curve.period.is_some()
            && curve
                .drop
                .as_ref()
                .is_some_and(|d| median_spread >= d.relative.abs() / 2.0);
        Some(Placement {
            points: s.len(),
            above: marked,
            target,
            median_spread,
            max_spread,
            max_at,
            lowered,
        })
    }
}

/// A nested period whose own steps are within the noise: what moves a point between placements
/// (the median spread) or between processes (twice the 95 % half-width) is at least what its steps
/// cost, so the data cannot say it is there. When its steps are also a sizeable part (a quarter or
/// more) of the main period's drop, the two are alike enough that which one is the main period is
/// not settled either: on an H100 the global grid stores read 32 with a nested 64 in one run and
/// 64 with a nested 32 in the next (steps 14 % and 4-5 %, placements spreading by 6.5-7 %).
#[derive(Debug, Clone, Copy)]
pub struct Unsettled {
    /// The noise the nested steps were compared with.
    pub noise: f64,
    /// The main period is in question too (its confidence is lowered one level as well).
    pub main: bool,
}

fn nesting_unsettled(
    curve: &Curve,
    placement: Option<&Placement>,
    process: Option<&controls::BetweenProcesses>,
) -> Option<Unsettled> {
    curve.secondary.as_ref()?;
    let cost = curve.secondary_cost?.abs();
    let noise = placement
        .map_or(0.0, |pl| pl.median_spread)
        .max(process.map_or(0.0, |b| 2.0 * b.u95));
    let drop = curve.drop.as_ref().map_or(0.0, |d| d.relative.abs());
    (cost < noise).then_some(Unsettled {
        noise,
        main: cost >= drop / 4.0,
    })
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn ordered_map<S: Serializer>(pairs: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(pairs.iter().map(|(k, v)| (k, v)))
}

/// Reads the results CSV (and `manifest.json` beside it) and analyses every series.
pub fn analyze_csv(path: &Path, opts: &AnalyzeOptions) -> Result<Analysis, AnalyzeError> {
    use crate::store::{Run, RunDir};
    analyze_run(&Run::read(path, RunDir::of_csv(path))?, opts)
}

/// Analyses every series of a run read.
pub fn analyze_run(
    table: &crate::store::Run,
    opts: &AnalyzeOptions,
) -> Result<Analysis, AnalyzeError> {
    use load::Series as _;
    let (x, by, metrics) = table.select(opts)?;
    // The axes neither x nor in `by`: their rows at one x are one point, their median.
    let merged: Vec<String> = table
        .axes
        .iter()
        .filter(|a| **a != x && !by.contains(a))
        .cloned()
        .collect();
    let raw = table.series(&x, &by, &metrics)?;
    let between = controls::between_processes(table)?;
    let target = table.target_rel_ci();
    let counter_series = counters::counter_series(table, &x, &by, &metrics)?;
    // The stems given so far (a set to look up, a count for the suffix).
    let mut stems: std::collections::HashSet<String> = Default::default();
    let mut stems_given = 0;
    // The curves first: each series is analysed on its own, on every core. In x order, one
    // point per x, whatever the order of the rows: what every chart draws.
    let curves = each_on_all_cores(&raw, |r| {
        let data = curve::one_per_x(&r.points);
        let curve = analyze_curve(&data, sense_of(&r.metric).2);
        (data, curve)
    });
    let series = raw
        .into_iter()
        .zip(curves)
        .map(|(r, (data, mut curve))| {
            let (unit, better, sense) = sense_of(&r.metric);
            // Rows at one x that no axis tells apart: a point repeated (an axis left out of `by`
            // is said as such instead).
            let repeats = if merged.is_empty() {
                curve::repeated_x(&r.points)
            } else {
                0
            };
            // A curve set by the power of 2 dividing x repeats every 2^top, its levels said one
            // by one (bank conflicts along a stride: 32, where a fold finds 16).
            let ladder = curve.period.as_ref().and_then(|_| ladder::find(&x, &data));
            if let Some(l) = &ladder {
                l.apply(&mut curve, &data, sense);
            }
            let spread: Vec<(f64, Option<f64>)> =
                r.spread.iter().map(|&(x, s)| (x, Some(s))).collect();
            let spread: Vec<(f64, f64)> = curve::one_per_x(&spread)
                .into_iter()
                .filter_map(|(x, s)| Some((x, s?)))
                .collect();
            let repeated = || {
                let col = load::stat_column(&table.header, &r.metric, "repeat_spread");
                col.is_some_and(|c| {
                    let cell = |row: &crate::store::run::Row| table.number(table.cell(row, c));
                    table.rows.iter().any(|row| cell(row).is_some())
                })
            };
            let marked = Marked::of(
                &load::one_row_per_x(r.statuses.clone(), &data, Ord::cmp),
                &spread,
                target,
                repeated,
            );
            if better == crate::spec::Better::Neither {
                // A count or a setting: the most (or fewest) is not the best.
                curve.best = None;
            }
            let placement = Placement::of(&spread, &curve, marked.placement(), target);
            let process = between
                .iter()
                .flatten()
                .find(|b| b.column == r.metric.column);
            let process_lowers = process.is_some_and(|b| {
                curve
                    .drop
                    .as_ref()
                    .is_some_and(|d| b.u95 >= d.relative.abs() / 2.0)
            });
            // A curve without a period that lies within the noise has no best x; one that falls
            // from its first x has no ramp (both said in words instead), and a per-request
            // counter that rises as it falls is named.
            let mut rising = None;
            let shape = curve
                .period
                .is_none()
                .then(|| {
                    let flat = process
                        .filter(|b| !b.exact())
                        .and_then(|b| reading::flat(&data, b.u95, &unit));
                    if flat.is_some() {
                        curve.best = None;
                        return flat;
                    }
                    let falls = reading::falls(&x, &data, &curve, &unit)?;
                    rising = counters::rising(&x, &counters::counters_of(&counter_series, &r));
                    Some(falls)
                })
                .flatten();
            if shape.is_some() {
                curve.knee = None;
            }
            // The knee and the best as they hold within the values' uncertainty: where the ramp
            // ends (or that it bends with no sharp knee), and the best of the points tied with
            // the maximum, at the period's peaks.
            let with_u = stable::points_with_u(
                &data,
                &r.rel_ci,
                process.filter(|b| !b.exact()).map(|b| b.u95),
            );
            let material = stable::material(curve.drop.as_ref().map(|d| d.relative), sense);
            if let Some((knee, range)) = curve
                .knee
                .and_then(|k| stable::knee_range(&with_u, sense, k, material))
            {
                curve.knee = knee;
                curve.knee_range = Some(range);
            }
            stable::robust_best(&mut curve, &with_u, sense);
            let placement_lowers = placement.as_ref().is_some_and(|pl| pl.lowered);
            let unsettled = nesting_unsettled(&curve, placement.as_ref(), process);
            if let Some(p) = curve.period.as_mut() {
                if placement_lowers || process_lowers || unsettled.is_some_and(|u| u.main) {
                    p.level = p.level.lower();
                }
            }
            if let (Some(q), Some(_)) = (curve.secondary.as_mut(), unsettled) {
                q.level = q.level.lower();
            }
            // The run's counter columns of this metric, read once for both periods.
            let counter_cols = curve
                .period
                .as_ref()
                .map(|_| counters::counters_of(&counter_series, &r));
            let counter = counter_cols
                .as_ref()
                .and_then(|cols| counters::stepping(&curve.peaks, cols));
            let secondary_counter = curve.secondary.as_ref().and_then(|q| {
                let peaks: Vec<f64> = data
                    .iter()
                    .map(|p| p.0)
                    .filter(|&v| {
                        let r = (v - q.phase).rem_euclid(q.period);
                        r.min(q.period - r) < 1e-9 * q.period.max(1.0)
                    })
                    .collect();
                counters::stepping(&peaks, counter_cols.as_ref()?)
            });
            let model_fit = r
                .metric
                .model
                .as_ref()
                .map(|m| mechanism::fit(m, &x, &r.points, sense, &curve.peaks).map(|f| (m, f)));
            let fitted = model_fit.as_ref().and_then(|f| f.as_ref().ok());
            let why = reading::Why {
                primary: curve.period.as_ref().map_or(String::new(), |p| {
                    mechanism::explain(&x, p.period, counter.as_ref(), fitted.map(|(m, f)| (*m, f)))
                        .unwrap_or_else(|| match &ladder {
                            Some(l) => l.words(&x, &unit),
                            None => mechanism::neutral(&x, p.period, &curve, sense),
                        })
                }),
                // The counter and the fit speak of the main period's drops: a nested period
                // gets the model's words only where the model steps with it.
                secondary: curve.secondary.as_ref().map_or(String::new(), |q| {
                    let model = fitted.filter(|(_, f)| {
                        f.r2 >= mechanism::ModelFit::EXPLAINS
                            && f.period.is_some_and(|m| (m - q.period).abs() < 1e-9)
                    });
                    match (model, &secondary_counter) {
                        (None, Some(c)) => Some(mechanism::counter_words(c)),
                        (Some((m, f)), _) => {
                            let explained = mechanism::ModelFit {
                                explains: true,
                                ..f.clone()
                            };
                            mechanism::explain(&x, q.period, None, Some((m, &explained)))
                        }
                        (None, None) => None,
                    }
                    .unwrap_or_else(|| mechanism::neutral(&x, q.period, &curve, sense))
                }),
                shape: shape.unwrap_or_default(),
            };
            // A series that never moves (a setting, a count) is said so, with no spread.
            let constant = reading::constant(&x, &unit, &data);
            let mut reading = constant
                .clone()
                .unwrap_or_else(|| reading::reading(&x, &unit, &curve, &why, better));
            match (&model_fit, &curve.period) {
                (Some(Ok((_, f))), Some(p))
                    if !(f.explains && f.period.is_none_or(|q| (q - p.period).abs() < 1e-9)) =>
                {
                    reading += &mechanism::model_misfit(&x, f, p.period);
                }
                (Some(Err(e)), _) => reading += &format!("; {}", e.0),
                _ => {}
            }
            if let Some(u) = unsettled {
                reading += &reading::nesting_unsettled(&curve, u);
            }
            if let Some(pl) = placement.as_ref().filter(|pl| pl.above > 0) {
                reading += &reading::placement(&x, pl);
            }
            if let Some(b) = process.filter(|_| constant.is_none()) {
                reading += &reading::between_processes(b, process_lowers && !placement_lowers);
            }
            if let Some(c) = &counter {
                reading += &counters::clause(&x, c, false);
            }
            if let Some(c) = &secondary_counter {
                reading += &counters::clause(&x, c, true);
            }
            if let Some(c) = &rising {
                reading += c;
            }
            if !merged.is_empty() {
                reading += &format!("; {}", reading::merged(&x, &merged));
            }
            if repeats > 0 {
                reading += &format!("; {}", reading::repeated(&x, repeats, data.len()));
            }
            let groups: Vec<String> = r.group.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let name = if groups.is_empty() {
                r.metric.column.clone()
            } else {
                format!("{} [{}]", r.metric.column, groups.join(", "))
            };
            let mut stem = sanitize(
                &std::iter::once(r.metric.column.clone())
                    .chain(groups)
                    .collect::<Vec<_>>()
                    .join("__"),
            );
            if stems.contains(&stem) {
                stem = format!("{stem}_{stems_given}");
            }
            stems.insert(stem.clone());
            stems_given += 1;
            SeriesAnalysis {
                name,
                file_stem: stem,
                metric: r.metric.name,
                unit,
                column: r.metric.column,
                group: r.group,
                sense,
                curve,
                placement,
                between_processes_u95: process.map(|b| b.u95),
                counter,
                secondary_counter,
                marked,
                model: model_fit.and_then(Result::ok).map(|(_, f)| f),
                reading,
                merged: merged.clone(),
                repeated: repeats,
                data,
            }
        })
        .collect();
    Ok(Analysis {
        source: table.path.clone(),
        x,
        by,
        merged,
        series,
        between_processes: between,
        semicolon: table.dialect == crate::store::Dialect::Semicolon,
    })
}

/// A metric's unit (from its column when not given), which way is better, and the sense the
/// curve is read in.
pub(crate) fn sense_of(metric: &load::MetricColumn) -> (String, crate::spec::Better, Sense) {
    let unit = if metric.unit.is_empty() {
        load::unit_of_column(&metric.column).to_string()
    } else {
        metric.unit.clone()
    };
    let better = metric
        .better
        .unwrap_or_else(|| crate::spec::Better::for_metric(&metric.name, &unit));
    let sense = match better {
        crate::spec::Better::Higher => Sense::HigherIsBetter,
        crate::spec::Better::Lower => Sense::LowerIsBetter,
        crate::spec::Better::Neither => Sense::from_unit(&unit),
    };
    (unit, better, sense)
}

/// `items.iter().map(f).collect()`, with the items shared out among the machine's cores (each
/// takes the next one left): the same results in the same order.
fn each_on_all_cores<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = cores.min(items.len());
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            match items.get(i) {
                Some(item) => done.push((i, f(item))),
                None => break done,
            }
        }
    };
    // This thread works too; a worker that cannot be started (EAGAIN under a memory limit)
    // leaves its share to the others, down to this thread alone.
    let mut done: Vec<(usize, R)> = std::thread::scope(|s| {
        let workers: Vec<_> = (1..threads)
            .map_while(|_| std::thread::Builder::new().spawn_scoped(s, work).ok())
            .collect();
        let mut done = work();
        for w in workers {
            done.extend(w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        }
        done
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// The longest file stem [`sanitize`] gives: a file name holds 255 bytes, and a chart's is its
/// stem, its extension and, while it is written, a temporary prefix and suffix.
const STEM_MAX: usize = 160;

/// Letters, digits, `-`, `_` and `.` kept; anything else becomes `-`. A stem past [`STEM_MAX`]
/// (a long axis value in a series' group) keeps its start and ends in a hash of the whole, so it
/// stays a file name and distinct: a chart named by all of it could not be written.
pub(crate) fn sanitize(s: &str) -> String {
    let out = sanitized(s);
    if out.len() <= STEM_MAX {
        return out;
    }
    use sha2::Digest;
    let hash = crate::spec::hex(&sha2::Sha256::digest(out.as_bytes())[..6]);
    format!("{}-{hash}", &out[..STEM_MAX - hash.len() - 1])
}

fn sanitized(s: &str) -> String {
    let out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    if out.is_empty() {
        "series".to_string()
    } else {
        out
    }
}

/// The columns of the table in analysis.md (each series' reading follows the table as a list).
const MARKDOWN_COLUMNS: [&str; 8] = [
    "series",
    "period (+nested)",
    "phase",
    "confidence (BIC margin)",
    "knee",
    "drop after a peak",
    "best x",
    "first within 1 % at",
];

/// The columns of `analysis.csv` after the grouping axes.
const CSV_COLUMNS: [&str; 17] = [
    "period",
    "phase",
    "confidence",
    "confidence_level",
    "method",
    "knee",
    "drop_abs",
    "drop_rel",
    "drop_after",
    "best_x",
    "best_value",
    "best_x_within_1pct",
    "best_value_within_1pct",
    "points",
    "gaps",
    "outliers",
    "reading",
];

impl Analysis {
    /// A Markdown table, one row per series.
    pub fn to_markdown(&self) -> String {
        use crate::units::format_value;
        use reading::{human, human_x, percent};
        let mut out = format!(
            "## Analysis of `{}` against `{}`\n\n",
            crate::units::visible(&self.source.display().to_string()),
            crate::units::visible(&self.x)
        );
        if !self.merged.is_empty() {
            out += &format!(
                "The series are not split by {}: the rows at one x that differ only there are one point, their median.\n\n",
                reading::backticked(&self.merged)
            );
        }
        if self.series.iter().any(|s| s.repeated > 0) {
            out += "Some rows repeat a point (the same value of every axis): each such point is their median, as each series' reading says.\n\n";
        }
        let mut rows = Vec::new();
        let mut readings = String::new();
        for s in &self.series {
            let c = &s.curve;
            let (period, phase, conf) = match &c.period {
                Some(p) => (
                    // The period nested in it as the closing table writes it: `32 +64 (medium)`.
                    match &c.secondary {
                        None => human(p.period),
                        Some(q) if q.level == p.level => {
                            format!("{} +{}", human(p.period), human(q.period))
                        }
                        Some(q) => format!(
                            "{} +{} ({})",
                            human(p.period),
                            human(q.period),
                            q.level.as_str()
                        ),
                    },
                    human(p.phase),
                    format!("{} ({})", p.level.as_str(), human(p.confidence.round())),
                ),
                None => (
                    c.guess.as_ref().map_or("none".to_string(), |g| {
                        format!("none (best guess {})", human(g.period))
                    }),
                    "-".to_string(),
                    "-".to_string(),
                ),
            };
            let drop = c.drop.as_ref().map_or("-".to_string(), |d| {
                format!(
                    "{} ({})",
                    percent(d.relative),
                    format_value(d.absolute, &s.unit)
                )
            });
            let best = c.best.as_ref().map_or("-".to_string(), |b| {
                format!("{} ({})", human_x(b.x), format_value(b.value, &s.unit))
            });
            let within = c
                .best
                .as_ref()
                .map_or("-".to_string(), |b| human_x(b.x_within_1pct));
            let knee = match (c.knee, c.knee_range) {
                (Some(k), _) => human(k),
                (None, Some(r)) if !r.sharp => format!("none ({}–{})", human(r.lo), human(r.hi)),
                _ => "-".to_string(),
            };
            rows.push(vec![
                s.name.clone(),
                period,
                phase,
                conf,
                knee,
                drop,
                best,
                within,
            ]);
            // One line each: a control character in a name (an axis from a CSV's header, which
            // the reading says) is shown escaped, never sent to the terminal.
            readings += &format!(
                "- `{}`: {}\n",
                crate::units::visible(&s.name),
                crate::units::visible(&s.reading)
            );
        }
        out += &crate::units::markdown_table(&MARKDOWN_COLUMNS, &rows);
        if !readings.is_empty() {
            out += &format!("\nWhat each series reads:\n\n{readings}");
        }
        let marked = self.marked_sentence(|name| format!("`{name}`"));
        if !marked.is_empty() {
            out += &format!("\n{marked}\n");
        }
        if let Some(between) = &self.between_processes {
            out += &reading::between_processes_note(between);
        }
        out
    }

    /// The values each series' own metric marks, per cause in the terminal's words (one line
    /// each: `- vary with buffer placement: `a` 84 of 512, `b` 4 of 512 (placement: what it
    /// means; results.csv: `unstable`)`), after a line that introduces them; empty when none is
    /// marked. `quote` writes a series' name.
    pub fn marked_sentence(&self, quote: impl Fn(&str) -> String) -> String {
        use crate::store::mark::{count, Mark};
        let target = self.source.parent().map_or(
            crate::spec::DEFAULT_TARGET_REL_CI,
            crate::store::target_rel_ci,
        );
        let of = |s: &SeriesAnalysis, mark: Mark| match mark {
            Mark::Placement => s.marked.placement(),
            Mark::Processes => s.marked.processes,
            Mark::Noisy => s.marked.noisy,
        };
        let mut lines = Vec::new();
        for mark in Mark::ALL {
            let listed: Vec<String> = self
                .series
                .iter()
                .filter(|s| of(s, mark) > 0)
                .map(|s| {
                    let measured = s.data.iter().filter(|p| p.1.is_some()).count();
                    format!(
                        "{} {} of {}",
                        quote(&s.name),
                        count(of(s, mark)),
                        count(measured)
                    )
                })
                .collect();
            if listed.is_empty() {
                continue;
            }
            lines.push(format!(
                "- {}: {} ({}: {}; results.csv: `{}`)",
                mark.verb(2),
                listed.join(", "),
                mark.word(),
                mark.means(target),
                mark.token()
            ));
        }
        if lines.is_empty() {
            return String::new();
        }
        format!(
            "Values marked by their own metric, per cause:\n\n{}",
            lines.join("\n")
        )
    }

    /// Writes `analysis.json`, `analysis.csv` and `analysis.md` into `dir` (created if missing),
    /// each through a temporary file: a killed `analyze` leaves the previous files whole.
    pub fn write_files(&self, dir: &Path) -> Result<Vec<PathBuf>, AnalyzeError> {
        let write_err = |path: &Path| {
            let path = path.to_path_buf();
            move |e: std::io::Error| AnalyzeError::Write {
                path,
                cause: e.into(),
            }
        };
        std::fs::create_dir_all(dir).map_err(write_err(dir))?;
        let json_path = dir.join(crate::store::run::ANALYSIS_JSON);
        let json = serde_json::to_string_pretty(self).map_err(|e| AnalyzeError::Write {
            path: json_path.clone(),
            cause: e.into(),
        })?;
        crate::store::write_atomic(&json_path, (json + "\n").as_bytes())
            .map_err(write_err(&json_path))?;
        let csv_path = dir.join(crate::store::run::ANALYSIS_CSV);
        crate::store::write_atomic(&csv_path, self.to_csv().as_bytes())
            .map_err(write_err(&csv_path))?;
        let md_path = dir.join(crate::store::run::ANALYSIS_MD);
        crate::store::write_atomic(&md_path, self.to_markdown().as_bytes())
            .map_err(write_err(&md_path))?;
        Ok(vec![json_path, csv_path, md_path])
    }

    /// `analysis.csv`: one row per series, in the dialect of the results CSV.
    pub fn to_csv(&self) -> String {
        let dialect = if self.semicolon {
            crate::store::Dialect::Semicolon
        } else {
            crate::store::Dialect::Comma
        };
        let num = |v: Option<f64>| -> String {
            match v.filter(|v| v.is_finite()) {
                Some(v) => dialect.number(v),
                None => String::new(),
            }
        };
        let mut out: Vec<u8> = Vec::new();
        let mut header: Vec<String> = vec!["series".into(), "metric".into(), "unit".into()];
        // A grouping axis's name from a CSV's header may start like a formula (`=cmd|..`).
        header.extend(
            self.by
                .iter()
                .map(|b| crate::store::formula_defused(b, dialect).into_owned()),
        );
        header.extend(CSV_COLUMNS.iter().map(|c| c.to_string()));
        out.extend(crate::store::record(&header, dialect));
        for s in &self.series {
            let c = &s.curve;
            let p = c.period.as_ref();
            let mut row: Vec<String> = vec![s.name.clone(), s.column.clone(), s.unit.clone()];
            for b in &self.by {
                row.push(
                    s.group
                        .iter()
                        .find(|(k, _)| k == b)
                        .map(|(_, v)| v.clone())
                        .unwrap_or_default(),
                );
            }
            row.extend([
                num(p.map(|p| p.period)),
                num(p.map(|p| p.phase)),
                num(p.map(|p| p.confidence)),
                p.map_or(String::new(), |p| p.level.as_str().to_string()),
                p.map_or(String::new(), |p| format!("{:?}", p.method).to_lowercase()),
                num(c.knee),
                num(c.drop.as_ref().map(|d| d.absolute)),
                num(c.drop.as_ref().map(|d| d.relative)),
                num(c.drop.as_ref().map(|d| d.after)),
                num(c.best.as_ref().map(|b| b.x)),
                num(c.best.as_ref().map(|b| b.value)),
                num(c.best.as_ref().map(|b| b.x_within_1pct)),
                num(c.best.as_ref().map(|b| b.value_within_1pct)),
                c.points.to_string(),
                c.gaps.to_string(),
                c.outliers.len().to_string(),
                s.reading.clone(),
            ]);
            // For a spreadsheet: a name or group that could start a formula is defused (the
            // export reads it back with `formula_restored`).
            let last = row.len() - 1;
            for (i, f) in row.iter_mut().enumerate() {
                if i < 3 + self.by.len() || i == last {
                    *f = crate::store::formula_defused(f, dialect).into_owned();
                }
            }
            out.extend(crate::store::record(&row, dialect));
        }
        String::from_utf8(out).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A results CSV of a warp sawtooth (two variants), with one failed point.
    fn sawtooth_csv(dir: &Path) -> PathBuf {
        let mut text = String::from("point_id,index,variant,threads,status,mflops,build_s,run_s,cached,gpu_index,gpu_name,gpu_uuid,error\n");
        let mut i = 0;
        for variant in ["plain", "conflict2"] {
            let scale = if variant == "plain" { 1000.0 } else { 500.0 };
            for x in 1..=256u32 {
                let steps = x.div_ceil(32).max(2);
                let (status, value) = if x == 100 {
                    ("run_failed", String::new())
                } else {
                    ("ok", format!("{}", scale * x as f64 / steps as f64))
                };
                text +=
                    &format!("p{i},{i},{variant},{x},{status},{value},0.5,0.1,false,0,H100,u,\n");
                i += 1;
            }
        }
        let p = dir.join("results.csv");
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn analyses_every_series_and_writes_both_files() {
        let dir = tempfile::tempdir().unwrap();
        let a = analyze_csv(&sawtooth_csv(dir.path()), &AnalyzeOptions::default()).unwrap();
        assert_eq!(a.x, "threads");
        assert_eq!(a.series.len(), 2);
        for s in &a.series {
            let p = s.curve.period.as_ref().expect("a period");
            assert_eq!((p.period, p.phase), (32.0, 0.0), "{}", s.name);
            assert_eq!(s.curve.knee, Some(64.0), "{}", s.name);
            assert_eq!(s.curve.gaps, 1);
            assert!(
                s.reading
                    .starts_with("period 32 (steps every 32 threads = one warp)"),
                "{}",
                s.reading
            );
        }
        assert_eq!(a.series[1].file_stem, "mflops__variant-conflict2");
        let md = a.to_markdown();
        // Columns padded to line up in a terminal; each series' reading in a list under them.
        assert!(
            md.contains("| mflops [variant=plain]     | 32               | 0     | high ("),
            "{md}"
        );
        assert!(
            md.contains("\n- `mflops [variant=plain]`: period 32 (steps every 32 threads"),
            "{md}"
        );
        // The number beside the level says what it is (docs/analysis.md: high >= 10).
        assert!(md.contains("| confidence (BIC margin) |"), "{md}");
        let files = a.write_files(&dir.path().join("out")).unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
        assert_eq!(json["series"][0]["period"]["period"], 32.0);
        assert_eq!(json["series"][1]["group"]["variant"], "conflict2");
        assert_eq!(std::fs::read_to_string(&files[2]).unwrap(), md);
        let csv = std::fs::read_to_string(&files[1]).unwrap();
        let mut lines = csv.lines();
        assert!(lines
            .next()
            .unwrap()
            .starts_with("series,metric,unit,variant,period,phase,confidence"));
        assert!(lines
            .next()
            .unwrap()
            .starts_with("mflops [variant=plain],mflops,MFlops,plain,32,0,"));
    }

    /// analysis.md names a marked value by its cause, as the terminal does: placement where its
    /// placements differ, processes where only several processes tell it apart, noisy.
    #[test]
    fn the_marked_values_are_named_by_cause_in_the_terminals_words() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = String::from(
            "point_id,index,threads,status,saw_mflops,saw_rel_ci,saw_spread,saw_repeat_spread,saw_mflops_status,error\n",
        );
        // (status, rel_ci, spread, repeat spread)
        for (x, (st, ci, sp, rep)) in [
            ("unstable", 0.001, 0.3, 0.01),
            ("unstable", 0.001, 0.002, 0.05),
            ("noisy", 0.04, 0.002, 0.001),
            ("ok", 0.001, 0.002, 0.001),
            ("ok", 0.001, 0.002, 0.001),
        ]
        .iter()
        .enumerate()
        {
            text += &format!(
                "p{x},{x},{},{st},{},{ci},{sp},{rep},{st},\n",
                x + 1,
                100 * (x + 1)
            );
        }
        let csv = dir.path().join("results.csv");
        std::fs::write(&csv, text).unwrap();
        let opts = AnalyzeOptions {
            x: Some("threads".into()),
            ..Default::default()
        };
        let a = analyze_csv(&csv, &opts).unwrap();
        assert_eq!(
            a.series[0].marked,
            Marked {
                noisy: 1,
                unstable: 2,
                processes: 1
            }
        );
        assert_eq!(
            a.marked_sentence(|n| format!("`{n}`")),
            "Values marked by their own metric, per cause:\n\n\
             - vary with buffer placement: `saw_mflops` 1 of 5 (placement: its buffer placements differ beyond the 1.0 % target and the noise; the value is their median; results.csv: `unstable`)\n\
             - differ between processes: `saw_mflops` 1 of 5 (processes: the processes that measured it differ beyond the 1.0 % target and their intervals; results.csv: `unstable`)\n\
             - noisy: `saw_mflops` 1 of 5 (noisy: its confidence interval stayed wider than the 1.0 % target within the time allowed; results.csv: `noisy`)"
        );
    }

    /// A clean staircase of period 32 (drops of 50 % and less after each warp) with the timing
    /// core's placement spread per point: `spread(x)`.
    fn staircase_with_spread(dir: &Path, spread: impl Fn(u32) -> f64) -> std::path::PathBuf {
        let mut text = String::from(
            "point_id,index,threads,status,saw_mflops,saw_rel_ci,saw_spread,saw_placements,error\n",
        );
        for x in 1..=256u32 {
            let v = 1000.0 * x as f64 / x.div_ceil(32) as f64;
            let status = if spread(x) > 0.01 { "unstable" } else { "ok" };
            text += &format!("p{x},{x},{x},{status},{v},0.001,{},8,\n", spread(x));
        }
        let p = dir.join("results.csv");
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn placement_spread_is_reported_and_lowers_confidence_only_when_it_rivals_the_steps() {
        // (spread at every point, noted points, confidence lowered)
        let cases = [(0.002, 0, false), (0.05, 256, false), (0.4, 256, true)];
        for (spread, above, lowered) in cases {
            let dir = tempfile::tempdir().unwrap();
            let csv = staircase_with_spread(dir.path(), |_| spread);
            let a = analyze_csv(&csv, &AnalyzeOptions::default()).unwrap();
            let s = &a.series[0];
            let pl = s.placement.as_ref().expect("a spread column");
            assert_eq!((pl.above, pl.lowered), (above, lowered), "spread {spread}");
            let p = s.curve.period.as_ref().expect("a period");
            assert_eq!(p.period, 32.0);
            let want = if lowered { "medium" } else { "high" };
            assert_eq!(p.level.as_str(), want, "spread {spread}: {}", s.reading);
            assert_eq!(
                s.reading.contains("where the buffers lie moves"),
                above > 0,
                "{}",
                s.reading
            );
        }
        // One point far off: named with its x.
        let dir = tempfile::tempdir().unwrap();
        let csv = staircase_with_spread(dir.path(), |x| if x == 48 { 0.3 } else { 0.001 });
        let a = analyze_csv(&csv, &AnalyzeOptions::default()).unwrap();
        assert!(
            a.series[0]
                .reading
                .contains("moves 1 of 256 points beyond the 1.0 % target and the noise (marked `unstable`; placement spread up to 30.0 % at threads = 48"),
            "{}",
            a.series[0].reading
        );
    }

    #[test]
    fn sanitized_stems_keep_safe_characters_only() {
        assert_eq!(
            sanitize("copy_gb_per_s__caching=-Xptxas -dlcm=ca"),
            "copy_gb_per_s__caching--Xptxas--dlcm-ca"
        );
        // A long group value: cut, with a hash of the whole, so two stay apart.
        let (a, b) = (sanitize(&"x".repeat(40_000)), sanitize(&"x".repeat(40_001)));
        assert_eq!((a.len(), b.len()), (160, 160));
        assert!(a.starts_with("xxxxxxxx") && a != b, "{a} {b}");
    }
}
