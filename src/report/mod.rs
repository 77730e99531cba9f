//! Stage `report`: one chart per analysed series, SVG and PNG, in `charts/` under the given folder:
//! the metric against the swept axis, with the detected peaks, the knee and the period marked.
//!
//! Text needs a font (plotters lays text out with ab_glyph): the first TrueType font found
//! (`SWEEP_FONT`, then the usual system places) is used. Without one the charts are drawn without
//! text, and the SVG gets its title and axis names as plain SVG text, which needs no font file.

mod font;
pub mod html;

use crate::analyze::reading::{congruence, human};
use crate::analyze::{Analysis, SeriesAnalysis};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot write chart `{path}`: {reason}")]
    Write { path: PathBuf, reason: String },
    #[error("cannot make the report `{path}`: {reason}")]
    Page { path: PathBuf, reason: String },
}

/// Pixels of every chart.
const SIZE: (u32, u32) = (1000, 600);
const DATA: RGBColor = RGBColor(31, 119, 180);
const PEAK: RGBColor = RGBColor(214, 39, 40);
const KNEE: RGBColor = RGBColor(44, 160, 44);
const PERIOD: RGBColor = RGBColor(255, 127, 14);
const GAP: RGBColor = RGBColor(120, 120, 120);
const BAND: RGBColor = RGBColor(31, 119, 180);
const NOISY: RGBColor = RGBColor(148, 103, 189);
const UNSTABLE: RGBColor = RGBColor(227, 119, 194);
/// Curves of an overlay chart, in order (the first four are the series chart's colours).
const PALETTE: [RGBColor; 8] = [
    DATA,
    PEAK,
    KNEE,
    PERIOD,
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// Writes `charts/<series>.svg` and `charts/<series>.png` for every series; returns the paths.
pub fn plot(analysis: &Analysis, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    let charts = dir.join("charts");
    std::fs::create_dir_all(&charts).map_err(|e| ReportError::Write {
        path: charts.clone(),
        reason: e.to_string(),
    })?;
    let text = font::ensure();
    let footer = analysis.source.parent().and_then(footer);
    let footer = footer.as_deref();
    let infos = point_info(analysis);
    let mut out = Vec::new();
    for (s, info) in analysis.series.iter().zip(&infos) {
        // A single point is no curve.
        if s.data.iter().filter(|p| p.1.is_some()).count() < 2 {
            continue;
        }
        let svg = charts.join(format!("{}.svg", s.file_stem));
        let png = charts.join(format!("{}.png", s.file_stem));
        let doc = series_svg(s, &analysis.x, text, footer, info).map_err(fail(&svg))?;
        std::fs::write(&svg, doc).map_err(|e| fail(&svg)(e.to_string()))?;
        {
            let root = BitMapBackend::new(&png, SIZE).into_drawing_area();
            draw(&root, s, &analysis.x, text, info).map_err(fail(&png))?;
            stamp(&root, footer, text).map_err(fail(&png))?;
            root.present().map_err(|e| fail(&png)(e.to_string()))?;
        }
        out.push(svg);
        out.push(png);
    }
    for f in families(analysis) {
        let curves = f.curves();
        let title = format!("{} variants", f.name);
        let y_name = analysis.series[f.first].unit.clone();
        out.extend(overlay(
            &charts.join(format!("family-{}", f.stem)),
            &title,
            &analysis.x,
            &y_name,
            &curves,
            footer,
        )?);
    }
    Ok(out)
}

/// One series' chart as an SVG document (with its title and axis names even without a font).
pub fn series_svg(
    s: &SeriesAnalysis,
    x_name: &str,
    text: bool,
    footer: Option<&str>,
    info: &[PointInfo],
) -> Result<String, String> {
    let mut doc = String::new();
    {
        let root = SVGBackend::with_string(&mut doc, SIZE).into_drawing_area();
        draw(&root, s, x_name, text, info)?;
        stamp(&root, footer, text)?;
        root.present().map_err(|e| e.to_string())?;
    }
    if !text {
        doc = with_labels(&doc, &title(s), x_name, &y_label(s))?;
    }
    Ok(doc)
}

/// An overlay chart as an SVG document.
pub fn overlay_svg(
    title: &str,
    x_name: &str,
    y_name: &str,
    curves: &[Curve],
    text: bool,
    footer: Option<&str>,
) -> Result<String, String> {
    let mut doc = String::new();
    {
        let root = SVGBackend::with_string(&mut doc, SIZE).into_drawing_area();
        draw_overlay(&root, title, x_name, y_name, curves, text)?;
        stamp(&root, footer, text)?;
        root.present().map_err(|e| e.to_string())?;
    }
    if !text {
        doc = with_labels(&doc, title, x_name, y_name)?;
    }
    Ok(doc)
}

/// Series overlaid on one chart: metrics of one group and unit whose names share all but their
/// last `_` part (`shared_stride1`, `shared_stride2`, ... -> `shared`) and whose medians lie
/// within 10x of each other (so that none is flattened at the bottom of the others' axis).
pub(crate) struct Family {
    pub(crate) name: String,
    stem: String,
    /// Index of its first series in the analysis.
    pub(crate) first: usize,
    /// Indices of its series in the analysis.
    pub(crate) series: Vec<usize>,
    members: Vec<(String, Vec<(f64, f64)>)>,
}

impl Family {
    pub(crate) fn curves(&self) -> Vec<Curve<'_>> {
        self.members
            .iter()
            .map(|(label, points)| Curve { label, points })
            .collect()
    }
}

pub(crate) fn families(analysis: &Analysis) -> Vec<Family> {
    // (name prefix, group, unit) -> indices of its series, in analysis order.
    type Key = (String, Vec<(String, String)>, String);
    let mut keyed: Vec<(Key, Vec<usize>)> = Vec::new();
    for (i, s) in analysis.series.iter().enumerate() {
        let Some((prefix, _)) = s.metric.rsplit_once('_') else {
            continue;
        };
        let key = (prefix.to_string(), s.group.clone(), s.unit.clone());
        match keyed.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(i),
            None => keyed.push((key, vec![i])),
        }
    }
    let mut out = Vec::new();
    for ((prefix, group, _), idx) in keyed {
        if idx.len() < 2 {
            continue;
        }
        let points = |i: usize| -> Vec<(f64, f64)> {
            analysis.series[i]
                .data
                .iter()
                .filter_map(|&(x, y)| y.map(|y| (x, y)))
                .collect()
        };
        let medians: Vec<f64> = idx
            .iter()
            .filter_map(|&i| {
                let ys: Vec<f64> = points(i).iter().map(|p| p.1.abs()).collect();
                crate::analyze::fit::median(&ys)
            })
            .collect();
        let (lo, hi) = (
            medians.iter().copied().fold(f64::INFINITY, f64::min),
            medians.iter().copied().fold(0.0, f64::max),
        );
        if medians.len() != idx.len() || lo <= 0.0 || hi / lo > 10.0 {
            continue;
        }
        let groups: Vec<String> = group.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let name = if groups.is_empty() {
            prefix.clone()
        } else {
            format!("{prefix} [{}]", groups.join(", "))
        };
        let stem = crate::analyze::sanitize(&name);
        out.push(Family {
            name,
            stem,
            first: idx[0],
            series: idx.clone(),
            members: idx
                .iter()
                .map(|&i| (analysis.series[i].metric.clone(), points(i)))
                .collect(),
        });
    }
    out
}

/// One curve of an overlay chart: its label and its points (x, value).
pub struct Curve<'a> {
    pub label: &'a str,
    pub points: &'a [(f64, f64)],
}

/// Writes `<stem>.svg` and `<stem>.png`: the curves overlaid on shared axes, with a legend
/// (`sweep compare --out`: run A against run B).
pub fn overlay(
    stem: &Path,
    title: &str,
    x_name: &str,
    y_name: &str,
    curves: &[Curve],
    footer: Option<&str>,
) -> Result<Vec<PathBuf>, ReportError> {
    let text = font::ensure();
    let svg = stem.with_extension("svg");
    let png = stem.with_extension("png");
    let doc = overlay_svg(title, x_name, y_name, curves, text, footer).map_err(fail(&svg))?;
    std::fs::write(&svg, doc).map_err(|e| fail(&svg)(e.to_string()))?;
    {
        let root = BitMapBackend::new(&png, SIZE).into_drawing_area();
        draw_overlay(&root, title, x_name, y_name, curves, text).map_err(fail(&png))?;
        stamp(&root, footer, text).map_err(fail(&png))?;
        root.present().map_err(|e| fail(&png)(e.to_string()))?;
    }
    Ok(vec![svg, png])
}

fn draw_overlay<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x_name: &str,
    y_name: &str,
    curves: &[Curve],
    text: bool,
) -> Result<(), String> {
    let max = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.1.abs()))
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let (div, y_name) = scale_unit(y_name, max);
    let owned: Vec<Vec<(f64, f64)>> = curves
        .iter()
        .map(|c| c.points.iter().map(|&(x, y)| (x, y / div)).collect())
        .collect();
    let curves: Vec<Curve> = curves
        .iter()
        .zip(&owned)
        .map(|(c, points)| Curve {
            label: c.label,
            points,
        })
        .collect();
    let (curves, y_name) = (&curves[..], y_name.as_str());
    let e = |e: &dyn std::fmt::Display| e.to_string();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let all = || {
        curves
            .iter()
            .flat_map(|c| c.points.iter())
            .filter(|p| p.0.is_finite() && p.1.is_finite())
    };
    let (Some(x_lo), Some(x_hi)) = (
        all().map(|p| p.0).reduce(f64::min),
        all().map(|p| p.0).reduce(f64::max),
    ) else {
        return Ok(());
    };
    let pad = ((x_hi - x_lo) * 0.02).max(0.5);
    let y_min = all().map(|p| p.1).fold(0.0, f64::min);
    let y_max = all().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    let y_max = if y_max > y_min { y_max } else { y_min + 1.0 };
    let mut chart = axes(
        root,
        (
            x_lo - pad..x_hi + pad,
            y_min..y_max + 0.12 * (y_max - y_min),
        ),
        (title, x_name, y_name),
        text,
        None,
        false,
    )?;
    for (i, c) in curves.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let mut pts: Vec<(f64, f64)> = c
            .points
            .iter()
            .copied()
            .filter(|p| p.0.is_finite() && p.1.is_finite())
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let drawn = chart
            .draw_series(LineSeries::new(pts, color.stroke_width(2)))
            .map_err(|x| e(&x))?;
        if text {
            drawn.label(c.label).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        }
    }
    if text {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .draw()
            .map_err(|x| e(&x))?;
    }
    Ok(())
}

/// A chart on `root` with the given ranges and its axes drawn: title and axis names and compact
/// tick labels when `text`, no text at all otherwise (no font is needed then).
fn axes<'a, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    (xs, ys): (std::ops::Range<f64>, std::ops::Range<f64>),
    (title, x_name, y_name): (&str, &str, &str),
    text: bool,
    period: Option<f64>,
    log2: bool,
) -> Result<
    ChartContext<
        'a,
        DB,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    String,
> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let mut builder = ChartBuilder::on(root);
    builder.margin(16);
    if text {
        builder
            .caption(title, ("sans-serif", 17))
            .x_label_area_size(48)
            .y_label_area_size(80);
    }
    // On a log2 axis the ticks are powers of two, labelled as such.
    let ticks = if log2 {
        let (lo, hi) = (xs.start.ceil() as i32, xs.end.floor() as i32);
        let step = ((hi - lo) / 10 + 1).max(1) as usize;
        (lo..=hi).step_by(step).map(f64::from).collect()
    } else {
        x_ticks(xs.start, xs.end, period)
    };
    let label = |x: f64| compact(if log2 { x.exp2() } else { x });
    let (y_lo, y_hi) = (ys.start, ys.end);
    let mut chart = builder.build_cartesian_2d(xs, ys).map_err(|x| e(&x))?;
    let fmt = |v: &f64| compact(*v);
    let mut mesh = chart.configure_mesh();
    mesh.light_line_style(WHITE.mix(0.0));
    if text {
        mesh.x_desc(x_name)
            .y_desc(y_name)
            .x_label_formatter(&fmt)
            .y_label_formatter(&fmt)
            .label_style(("sans-serif", 13));
        // The x ticks are drawn below, where x_ticks puts them (plotters puts them on round
        // decimal steps; thread counts read in warps and periods).
        mesh.x_labels(0);
    } else {
        mesh.disable_axes();
    }
    mesh.draw().map_err(|x| e(&x))?;
    if text {
        let grid = BLACK.mix(0.12);
        for &x in &ticks {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x, y_lo), (x, y_hi)],
                    grid,
                )))
                .map_err(|x| e(&x))?;
            let (px, py) = chart.backend_coord(&(x, y_lo));
            let style = TextStyle::from(("sans-serif", 13).into_font()).pos(
                plotters::style::text_anchor::Pos::new(
                    plotters::style::text_anchor::HPos::Center,
                    plotters::style::text_anchor::VPos::Top,
                ),
            );
            root.draw(&PathElement::new(vec![(px, py), (px, py + 5)], BLACK))
                .map_err(|x| e(&x))?;
            root.draw(&Text::new(label(x), (px, py + 8), style))
                .map_err(|x| e(&x))?;
        }
    }
    Ok(chart)
}

/// Ticks of an x range: on multiples of the period when it gives 4 to 16 ticks, else of a warp
/// or its multiples (32, 64, ..., 512: thread counts read in warps), else on a round step
/// (1, 2 or 5 times a power of ten).
pub fn x_ticks(lo: f64, hi: f64, period: Option<f64>) -> Vec<f64> {
    let span = hi - lo;
    if !(span.is_finite() && span > 0.0) {
        return vec![lo];
    }
    let fits = |step: f64| step > 0.0 && (4.0..=16.0).contains(&(span / step));
    let warps = [32.0, 64.0, 128.0, 256.0, 512.0, 1024.0];
    let step = period
        .filter(|&p| fits(p))
        .or_else(|| warps.into_iter().find(|&w| fits(w)))
        .unwrap_or_else(|| {
            let mag = 10f64.powf((span / 8.0).log10().floor());
            [1.0, 2.0, 5.0, 10.0]
                .into_iter()
                .map(|k| k * mag)
                .find(|&s| span / s <= 10.0)
                .unwrap_or(10.0 * mag)
        });
    let first = (lo / step).ceil() * step;
    (0..)
        .map(|i| first + i as f64 * step)
        .take_while(|&x| x <= hi + 1e-9 * step)
        .collect()
}

/// The machine line under a chart: GPU, driver, compiler, commit, date and sweep, from the
/// `manifest.json` in `run_dir` (none without one: a CSV from elsewhere).
pub fn footer(run_dir: &Path) -> Option<String> {
    let m = crate::store::Manifest::load(run_dir).ok()?;
    let mut parts: Vec<String> = Vec::new();
    if let Some(g) = m.gpus_start.first() {
        parts.push(g.name.clone());
        parts.push(format!("driver {}", g.driver));
    }
    let v = &m.compiler_version;
    let release = v
        .find("release")
        .map(|i| {
            v[i..]
                .split('|')
                .next()
                .unwrap_or_default()
                .trim()
                .to_string()
        })
        .unwrap_or_else(|| v.clone());
    parts.push(format!("{} {release}", m.compiler));
    if !m.git_commit.is_empty() {
        parts.push(format!("commit {:.7}", m.git_commit));
    }
    parts.push(m.started.chars().take(10).collect());
    parts.push(format!("sweep {}", m.sweep));
    Some(parts.join(" · "))
}

/// Writes `footer` small and grey at the bottom left of a chart (with a font only).
fn stamp<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    footer: Option<&str>,
    text: bool,
) -> Result<(), String> {
    let (Some(f), true) = (footer, text) else {
        return Ok(());
    };
    let grey = BLACK.mix(0.55);
    let style = TextStyle::from(("sans-serif", 11).into_font()).color(&grey);
    root.draw(&Text::new(f.to_string(), (8, SIZE.1 as i32 - 16), style))
        .map_err(|e| e.to_string())
}

/// The chart's title: the series and what was found.
fn fail(path: &Path) -> impl Fn(String) -> ReportError + '_ {
    move |reason| ReportError::Write {
        path: path.to_path_buf(),
        reason,
    }
}

fn title(s: &SeriesAnalysis) -> String {
    let c = &s.curve;
    let mut parts = vec![s.name.clone()];
    match &c.period {
        Some(p) => parts.push(format!(
            "period {}, peaks at ≡ {} ({} confidence)",
            human(p.period),
            congruence(&p.peak_phases, p.period),
            p.level.as_str()
        )),
        None => parts.push("no period".to_string()),
    }
    if let Some(k) = c.knee {
        parts.push(format!("knee {}", human(k)));
    }
    if let Some(b) = &c.best {
        parts.push(format!(
            "best {} (within 1 % from {})",
            human(b.x),
            human(b.x_within_1pct)
        ));
    }
    parts.join(" · ")
}

fn y_label(s: &SeriesAnalysis) -> String {
    let s = &scaled(s);
    if s.unit.is_empty() {
        s.column.clone()
    } else {
        // The metric's name, not its column: `shared_grid (TFLOP/s)`, not `shared_grid_mflops (TFLOP/s)`.
        format!("{} ({})", s.metric, s.unit)
    }
}

/// Whether `xs` (sorted, distinct) read best on a log2 axis: positive, over at least a factor 16,
/// and sparse on a linear one (fewer points than a quarter of the range: strides 1..32 then
/// 64..1024, sizes in powers of two); a dense sweep such as threads 1..512 stays linear, where a
/// period shows.
pub fn log_axis(xs: &[f64]) -> bool {
    let (Some(&lo), Some(&hi)) = (xs.first(), xs.last()) else {
        return false;
    };
    xs.len() > 2 && lo > 0.0 && hi / lo >= 16.0 && (xs.len() as f64) * 4.0 < hi - lo
}

/// `s` with every x (points, peaks, outliers, knee) replaced by log2(x).
fn on_log2(s: &SeriesAnalysis) -> SeriesAnalysis {
    let mut out = s.clone();
    for p in &mut out.data {
        p.0 = p.0.log2();
    }
    for x in out
        .curve
        .peaks
        .iter_mut()
        .chain(out.curve.outliers.iter_mut())
    {
        *x = x.log2();
    }
    out.curve.knee = out.curve.knee.map(f64::log2);
    out
}

/// What the CSV says of one point of a series beyond its value: x, the relative half-width of its
/// uncertainty (the larger of the 95 % confidence half-width within a placement and half the
/// spread over placements) and its status.
#[derive(Clone, Debug, PartialEq)]
pub struct PointInfo {
    pub x: f64,
    pub u: f64,
    pub status: String,
}

/// [`PointInfo`] of every series of `analysis`, by series index, read from its CSV (empty lists
/// where the CSV has no such columns, or cannot be read).
pub fn point_info(analysis: &Analysis) -> Vec<Vec<PointInfo>> {
    use crate::analyze::load::{self, stat_column};
    let Ok(table) = load::Table::read(&analysis.source) else {
        return vec![Vec::new(); analysis.series.len()];
    };
    let (Some(xc), status) = (table.column(&analysis.x), table.column("status")) else {
        return vec![Vec::new(); analysis.series.len()];
    };
    let num = |c: Option<usize>, r: &Vec<String>| {
        c.and_then(|c| r.get(c))
            .and_then(|v| load::number(v, table.semicolon))
            .filter(|v| v.is_finite())
    };
    analysis
        .series
        .iter()
        .map(|s| {
            let Some(m) = table.metrics.iter().find(|m| m.column == s.column) else {
                return Vec::new();
            };
            let ci = stat_column(&table.header, m, "rel_ci");
            let spread = stat_column(&table.header, m, "spread");
            let group: Vec<(Option<usize>, &str)> = s
                .group
                .iter()
                .map(|(a, v)| (table.column(a), v.as_str()))
                .collect();
            table
                .rows
                .iter()
                .filter(|r| {
                    group
                        .iter()
                        .all(|(c, v)| c.and_then(|c| r.get(c)).is_some_and(|x| x == v))
                })
                .filter_map(|r| {
                    Some(PointInfo {
                        x: num(Some(xc), r)?,
                        u: num(ci, r)
                            .unwrap_or(0.0)
                            .max(num(spread, r).unwrap_or(0.0) / 2.0),
                        status: status.and_then(|c| r.get(c)).cloned().unwrap_or_default(),
                    })
                })
                .collect()
        })
        .collect()
}

/// `s` with its values in a unit people read (TFLOP/s, not 20M MFlops): see [`scale_unit`].
fn scaled(s: &SeriesAnalysis) -> SeriesAnalysis {
    let max = s
        .data
        .iter()
        .filter_map(|p| p.1)
        .map(f64::abs)
        .fold(0.0, f64::max);
    let (div, unit) = scale_unit(&s.unit, max);
    let mut out = s.clone();
    if div != 1.0 {
        for p in &mut out.data {
            p.1 = p.1.map(|v| v / div);
        }
        out.unit = unit;
    }
    out
}

/// Draws one chart; `text` false draws no text at all (no font is needed then).
fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    s: &SeriesAnalysis,
    x_name: &str,
    text: bool,
    info: &[PointInfo],
) -> Result<(), String> {
    let s = &scaled(s);
    let distinct: Vec<f64> = {
        let mut v: Vec<f64> = s.data.iter().map(|p| p.0).collect();
        v.sort_by(f64::total_cmp);
        v.dedup();
        v
    };
    // Sparse x over a wide range (strides 1..32 then 64..1024) is drawn on log2(x).
    let log2 = log_axis(&distinct);
    let named = s;
    let s = &if log2 { on_log2(s) } else { s.clone() };
    let e = |e: &dyn std::fmt::Display| e.to_string();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let observed: Vec<(f64, f64)> = s
        .data
        .iter()
        .filter_map(|&(x, y)| y.map(|v| (x, v)))
        .filter(|p| p.1.is_finite())
        .collect();
    let xs: Vec<f64> = s
        .data
        .iter()
        .map(|p| p.0)
        .filter(|x| x.is_finite())
        .collect();
    let (Some(x_lo), Some(x_hi)) = (
        xs.iter().copied().reduce(f64::min),
        xs.iter().copied().reduce(f64::max),
    ) else {
        return Ok(());
    };
    let pad = ((x_hi - x_lo) * 0.02).max(0.5);
    let (x0, x1) = (x_lo - pad, x_hi + pad);
    let y_min = observed.iter().map(|p| p.1).fold(0.0, f64::min);
    let y_max = observed
        .iter()
        .map(|p| p.1)
        .fold(f64::NEG_INFINITY, f64::max);
    let y_max = if y_max.is_finite() && y_max > y_min {
        y_max
    } else {
        y_min + 1.0
    };
    let (y0, y1) = (y_min, y_max + 0.12 * (y_max - y_min));

    let mut chart = axes(
        root,
        (x0..x1, y0..y1),
        (&title(named), x_name, &y_label(named)),
        text,
        s.curve.period.as_ref().map(|p| p.period),
        log2,
    )?;

    let x_of = |x: f64| if log2 { x.log2() } else { x };
    // The uncertainty: a band of value x (1 +- u) around the curve.
    let u_at: std::collections::HashMap<u64, f64> =
        info.iter().map(|p| (x_of(p.x).to_bits(), p.u)).collect();
    let band: Vec<(f64, f64, f64)> = observed
        .iter()
        .filter_map(|&(x, y)| {
            u_at.get(&x.to_bits())
                .map(|&u| (x, y * (1.0 - u), y * (1.0 + u)))
        })
        .collect();
    if band.len() >= 2 && band.iter().any(|b| b.2 > b.1) {
        let mut outline: Vec<(f64, f64)> = band.iter().map(|b| (b.0, b.2)).collect();
        outline.extend(band.iter().rev().map(|b| (b.0, b.1)));
        let drawn = chart
            .draw_series(std::iter::once(Polygon::new(
                outline,
                BAND.mix(0.25).filled(),
            )))
            .map_err(|x| e(&x))?;
        if text {
            drawn
                .label("uncertainty (CI, placements)")
                .legend(|(x, y)| {
                    Rectangle::new([(x, y - 4), (x + 20, y + 4)], BAND.mix(0.25).filled())
                });
        }
    }
    // The data: a line between neighbours, broken at failed points, and a dot per point.
    let mut runs: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
    for &(x, y) in &s.data {
        match y.filter(|v| v.is_finite()) {
            Some(v) => runs.last_mut().map_or((), |r| r.push((x, v))),
            None => runs.push(Vec::new()),
        }
    }
    let mut first = true;
    for run in runs.into_iter().filter(|r| !r.is_empty()) {
        let drawn = chart
            .draw_series(LineSeries::new(run, DATA.stroke_width(2)))
            .map_err(|x| e(&x))?;
        if text && first {
            drawn
                .label(&s.column)
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], DATA.stroke_width(2)));
            first = false;
        }
    }
    chart
        .draw_series(observed.iter().map(|&p| Circle::new(p, 2, DATA.filled())))
        .map_err(|x| e(&x))?;

    // Failed points: grey crosses on the floor of the chart.
    let floor = y0 + 0.015 * (y1 - y0);
    let gaps: Vec<f64> = s
        .data
        .iter()
        .filter(|p| p.1.is_none())
        .map(|p| p.0)
        .collect();
    if !gaps.is_empty() {
        let drawn = chart
            .draw_series(
                gaps.iter()
                    .map(|&x| Cross::new((x, floor), 4, GAP.stroke_width(2))),
            )
            .map_err(|x| e(&x))?;
        if text {
            drawn
                .label("failed point")
                .legend(|(x, y)| Cross::new((x + 10, y), 4, GAP.stroke_width(2)));
        }
    }
    // Points the timing core marked: noisy (confidence target missed) and unstable (placements
    // differ beyond the noise), as small triangles above the dot.
    for (status, colour, label) in [
        ("noisy", NOISY, "noisy point"),
        ("unstable", UNSTABLE, "unstable point (placements differ)"),
    ] {
        let marked: Vec<(f64, f64)> = info
            .iter()
            .filter(|p| p.status == status)
            .filter_map(|p| {
                let x = x_of(p.x);
                observed.iter().find(|o| o.0 == x).copied()
            })
            .collect();
        if marked.is_empty() {
            continue;
        }
        let drawn = chart
            .draw_series(
                marked
                    .iter()
                    .map(|&p| TriangleMarker::new(p, 4, colour.stroke_width(1))),
            )
            .map_err(|x| e(&x))?;
        if text {
            drawn
                .label(label)
                .legend(move |(x, y)| TriangleMarker::new((x + 10, y), 4, colour.stroke_width(1)));
        }
    }
    // Outliers left out of the fit: hollow grey circles.
    let outliers: Vec<(f64, f64)> = observed
        .iter()
        .copied()
        .filter(|p| s.curve.outliers.contains(&p.0))
        .collect();
    if !outliers.is_empty() {
        let drawn = chart
            .draw_series(
                outliers
                    .iter()
                    .map(|&p| Circle::new(p, 6, GAP.stroke_width(2))),
            )
            .map_err(|x| e(&x))?;
        if text {
            drawn
                .label("outlier (not fitted)")
                .legend(|(x, y)| Circle::new((x + 10, y), 5, GAP.stroke_width(2)));
        }
    }
    // The knee: a dashed vertical line.
    if let Some(k) = s.curve.knee {
        let drawn = chart
            .draw_series(DashedLineSeries::new(
                vec![(k, y0), (k, y_max)],
                8,
                5,
                KNEE.stroke_width(2),
            ))
            .map_err(|x| e(&x))?;
        if text {
            drawn
                .label(format!("knee {}", human(if log2 { k.exp2() } else { k })))
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], KNEE.stroke_width(2)));
        }
    }
    // The peaks: red dots.
    let peaks: Vec<(f64, f64)> = observed
        .iter()
        .copied()
        .filter(|p| s.curve.peaks.contains(&p.0))
        .collect();
    if !peaks.is_empty() {
        let drawn = chart
            .draw_series(peaks.iter().map(|&p| Circle::new(p, 4, PEAK.filled())))
            .map_err(|x| e(&x))?;
        if text {
            drawn
                .label("peak")
                .legend(|(x, y)| Circle::new((x + 10, y), 4, PEAK.filled()));
        }
    }
    // The period: a bracket from one peak to the next, above the curve.
    if let (Some(p), [a, _, ..], false) = (&s.curve.period, peaks.as_slice(), log2) {
        let y = y_max + 0.06 * (y_max - y_min);
        let tick = 0.025 * (y1 - y0);
        let (xa, xb) = (a.0, a.0 + p.period);
        let bracket = vec![(xa, y - tick), (xa, y), (xb, y), (xb, y - tick)];
        let drawn = chart
            .draw_series(std::iter::once(PathElement::new(
                bracket,
                PERIOD.stroke_width(3),
            )))
            .map_err(|x| e(&x))?;
        if text {
            drawn
                .label(format!("period {}", human(p.period)))
                .legend(|(x, y)| {
                    PathElement::new(
                        vec![(x, y + 4), (x, y), (x + 20, y), (x + 20, y + 4)],
                        PERIOD.stroke_width(3),
                    )
                });
        }
    }
    if text {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .label_font(("sans-serif", 13))
            .draw()
            .map_err(|x| e(&x))?;
    }
    Ok(())
}

/// A rate unit rescaled for people: values in `unit` whose largest magnitude is `max` become
/// values / divisor in the returned unit (MFlops of 2e7 are 20 TFLOP/s; GB/s of 3000, 3 TB/s).
/// Units it does not know stay as they are (divisor 1).
pub fn scale_unit(unit: &str, max: f64) -> (f64, String) {
    let base = match unit.to_ascii_lowercase().replace(' ', "").as_str() {
        "flops" | "flop/s" => Some((1.0, "FLOP/s")),
        "kflops" | "kflop/s" => Some((1e3, "FLOP/s")),
        "mflops" | "mflop/s" => Some((1e6, "FLOP/s")),
        "gflops" | "gflop/s" => Some((1e9, "FLOP/s")),
        "tflops" | "tflop/s" => Some((1e12, "FLOP/s")),
        "b/s" => Some((1.0, "B/s")),
        "kb/s" => Some((1e3, "B/s")),
        "mb/s" => Some((1e6, "B/s")),
        "gb/s" => Some((1e9, "B/s")),
        "tb/s" => Some((1e12, "B/s")),
        _ => None,
    };
    let Some((factor, name)) = base.filter(|_| max.is_finite() && max > 0.0) else {
        return (1.0, unit.to_string());
    };
    let v = max * factor;
    let (p, prefix) = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|(p, _)| v >= *p)
        .unwrap_or((1.0, ""));
    (p / factor, format!("{prefix}{name}"))
}

/// An axis label: 20000000 as `20M`, 1500 as `1500`, 0.25 as `0.25`.
fn compact(v: f64) -> String {
    match v.abs() {
        a if a >= 1e9 => format!("{}G", human(v / 1e9)),
        a if a >= 1e6 => format!("{}M", human(v / 1e6)),
        a if a >= 1e4 => format!("{}k", human(v / 1e3)),
        _ => human(v),
    }
}

/// `svg` with the title and the axis names added as SVG text elements (for a chart drawn
/// without a font: SVG text needs none).
fn with_labels(svg: &str, title: &str, x_name: &str, y_name: &str) -> Result<String, String> {
    let (w, h) = SIZE;
    let labels = format!(
        "<text x=\"{}\" y=\"14\" text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"15\">{}</text>\n\
         <text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"13\">{}</text>\n\
         <text x=\"12\" y=\"{}\" text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"13\" transform=\"rotate(-90 12 {})\">{}</text>\n",
        w / 2,
        escape(title),
        w / 2,
        h - 2,
        escape(x_name),
        h / 2,
        h / 2,
        escape(y_name)
    );
    let Some(end) = svg.rfind("</svg>") else {
        return Err("no </svg> in the chart".to_string());
    };
    Ok(format!("{}{}{}", &svg[..end], labels, &svg[end..]))
}

/// Text for XML and HTML.
pub(crate) fn escape(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::{analyze_curve, Sense};

    fn series() -> SeriesAnalysis {
        let mut data: Vec<(f64, Option<f64>)> = (1..=256u32)
            .map(|x| {
                (
                    x as f64,
                    Some(100.0 * x as f64 / x.div_ceil(32).max(2) as f64),
                )
            })
            .collect();
        data[70].1 = None;
        let curve = analyze_curve(&data, Sense::HigherIsBetter);
        SeriesAnalysis {
            name: "mflops [variant=a]".into(),
            file_stem: "mflops__variant-a".into(),
            metric: "mflops".into(),
            unit: "MFlops".into(),
            column: "mflops".into(),
            group: vec![("variant".into(), "a".into())],
            sense: Sense::HigherIsBetter,
            curve,
            placement: None,
            between_processes_u95: None,
            reading: String::new(),
            data,
        }
    }

    #[test]
    fn each_point_brings_its_uncertainty_and_status_from_the_csv() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("results.csv");
        let mut text = String::from(
            "point_id,index,threads,variant,status,copy_gb_per_s,copy_rel_ci,copy_spread,build_s,run_s,cached,gpu_index,gpu_name,gpu_uuid,error\n",
        );
        for (i, (v, st, ci, sp)) in [
            ("a", "ok", "0.002", "0.01"),
            ("a", "unstable", "0.001", "0.2"),
            ("b", "noisy", "0.03", "0"),
        ]
        .iter()
        .enumerate()
        {
            text += &format!(
                "p{i},{i},{},{v},{st},{},{ci},{sp},1,1,0,0,G,u,\n",
                i + 1,
                100 + i
            );
        }
        std::fs::write(&csv, text).unwrap();
        let analysis = crate::analyze::analyze_csv(
            &csv,
            &crate::analyze::AnalyzeOptions {
                x: Some("threads".into()),
                ..Default::default()
            },
        )
        .unwrap();
        let info = point_info(&analysis);
        let of = |v: &str| {
            let i = analysis
                .series
                .iter()
                .position(|s| s.group == [("variant".to_string(), v.to_string())])
                .unwrap();
            info[i].clone()
        };
        // u is the larger of rel_ci and half the placement spread.
        let a = of("a");
        assert_eq!(a.len(), 2);
        assert_eq!((a[0].x, a[0].u, a[0].status.as_str()), (1.0, 0.005, "ok"));
        assert_eq!(
            (a[1].x, a[1].u, a[1].status.as_str()),
            (2.0, 0.1, "unstable")
        );
        let b = of("b");
        assert_eq!((b[0].x, b[0].u, b[0].status.as_str()), (3.0, 0.03, "noisy"));
    }

    #[test]
    fn rates_are_shown_in_the_unit_people_read() {
        assert_eq!(scale_unit("MFlops", 2.08e7), (1e6, "TFLOP/s".into()));
        assert_eq!(scale_unit("MFlops", 143_755.0), (1e3, "GFLOP/s".into()));
        assert_eq!(scale_unit("GB/s", 3000.0), (1e3, "TB/s".into()));
        assert_eq!(scale_unit("GB/s", 450.0), (1.0, "GB/s".into()));
        assert_eq!(scale_unit("ms", 12.0), (1.0, "ms".into()));
        assert_eq!(scale_unit("MFlops", 0.0), (1.0, "MFlops".into()));
    }

    #[test]
    fn ticks_fall_on_the_period_or_on_warps() {
        assert_eq!(x_ticks(-9.0, 521.0, Some(64.0))[..3], [0.0, 64.0, 128.0]);
        // Period 16 gives 33 ticks over 1..512: warps instead.
        assert_eq!(x_ticks(-9.0, 521.0, Some(16.0))[..3], [0.0, 64.0, 128.0]);
        assert_eq!(
            x_ticks(0.5, 64.5, None),
            [10.0, 20.0, 30.0, 40.0, 50.0, 60.0]
        );
        assert_eq!(x_ticks(0.5, 64.5, Some(16.0)), [16.0, 32.0, 48.0, 64.0]);
        assert_eq!(x_ticks(0.0, 1.0, None).len(), 11);
        assert_eq!(x_ticks(3.0, 3.0, None), [3.0]);
    }

    #[test]
    fn axis_labels_are_compact() {
        assert_eq!(compact(20_000_000.0), "20M");
        assert_eq!(compact(12_500.0), "12.5k");
        assert_eq!(compact(1500.0), "1500");
        assert_eq!(compact(2.5e9), "2.5G");
    }

    #[test]
    fn without_text_the_chart_has_no_text_element() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.svg");
        let s = series();
        {
            let root = SVGBackend::new(&path, SIZE).into_drawing_area();
            draw(&root, &s, "threads", false, &[]).unwrap();
            root.present().unwrap();
        }
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(!svg.contains("<text"), "text drawn without a font");
        // The peaks (8 of them from the knee at 64 to 256) are drawn in their own colour.
        assert!(svg.matches("#D62728").count() >= 6, "peaks missing");
        let svg = series_svg(&s, "threads", false, None, &[]).unwrap();
        assert!(
            svg.contains(">threads</text>") && svg.contains("period 32"),
            "labels missing"
        );
    }

    #[test]
    fn plot_writes_an_svg_and_a_png_per_series() {
        let dir = tempfile::tempdir().unwrap();
        let analysis = Analysis {
            x: "threads".into(),
            series: vec![series()],
            ..Default::default()
        };
        let files = plot(&analysis, dir.path()).unwrap();
        assert_eq!(files.len(), 2);
        assert!(files[0].ends_with("charts/mflops__variant-a.svg"));
        let png = std::fs::read(&files[1]).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    }

    /// `metric` of group a, scaled by `k`.
    fn variant(metric: &str, k: f64) -> SeriesAnalysis {
        let mut s = series();
        s.metric = metric.into();
        s.file_stem = metric.into();
        for p in &mut s.data {
            p.1 = p.1.map(|y| y * k);
        }
        s
    }

    #[test]
    fn variants_of_one_family_share_a_chart_unless_their_scales_differ_tenfold() {
        let analysis = Analysis {
            x: "threads".into(),
            series: vec![
                variant("shared_stride1", 1.0),
                variant("shared_stride2", 0.5),
                variant("shared_stride4", 0.25),
                variant("global_1blk", 1.0),
                variant("global_grid", 200.0),
                variant("alone", 1.0),
            ],
            ..Default::default()
        };
        let f = families(&analysis);
        assert_eq!(f.len(), 1, "global_1blk and global_grid are 200x apart");
        assert_eq!(f[0].name, "shared [variant=a]");
        assert_eq!(f[0].stem, "shared--variant-a-");
        let names: Vec<&str> = f[0].members.iter().map(|m| m.0.as_str()).collect();
        assert_eq!(
            names,
            ["shared_stride1", "shared_stride2", "shared_stride4"]
        );
        assert_eq!(f[0].members[0].1.len(), 255, "the failed point is left out");
        let dir = tempfile::tempdir().unwrap();
        let files = plot(&analysis, dir.path()).unwrap();
        assert_eq!(files.len(), 2 * 6 + 2);
        assert!(files[12].ends_with("charts/family-shared--variant-a-.svg"));
        let svg = std::fs::read_to_string(&files[12]).unwrap();
        for c in ["#1F77B4", "#D62728", "#2CA02C"] {
            assert!(svg.contains(c), "curve colour {c} missing");
        }
    }
}
