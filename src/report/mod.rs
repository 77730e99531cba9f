//! Stage `report`: charts of the analysed series, SVG and PNG, in `charts/` under the given
//! folder, and `report.html`, the page of a run.
//!
//! - [`axes`]: x scale (linear or log2), ticks on the period or warps, units people read;
//! - [`canvas`]: title, plot, legend column beside the plot, machine footer; SVG and PNG;
//! - [`legend`]: the legend's entries, wrapped to two lines and counted when they do not fit;
//! - [`series`]: one series' chart (band, marks, knee, peaks, period) and its title;
//! - [`family`]: variants of one family overlaid;
//! - [`compared`]: `sweep compare`'s A against B, with a panel of B/A;
//! - [`bars`]: bar charts of a sweep of categories only;
//! - [`points`]: each point's uncertainty and status, from the CSV;
//! - [`html`]: `report.html` and its live rewriting; [`font`]: the built-in font;
//! - [`make`]: a results CSV to its analysis and charts, for `analyze`, `plot` and `run`.
//!
//! Text needs a font (plotters lays text out with ab_glyph): DejaVu Sans is built in. Without
//! one the charts are drawn without text, and the SVG gets its title and axis names as plain SVG
//! text, which needs no font file.

mod axes;
mod bars;
mod canvas;
mod compared;
mod family;
mod font;
pub mod html;
mod legend;
mod make;
mod points;
mod series;

pub use axes::{format_value, log_axis, scale_unit, x_ticks};
pub use bars::{plot_bars, plot_bars_with};
pub use canvas::{footer, Format, Look, MIN_SIZE};
pub use compared::{compare_chart, Names, RatioPoint};
pub use family::Curve;
pub use make::{make, Made, Make, MakeError};
pub use points::{point_info, PointInfo};
pub use series::{group_in_words, series_svg, series_title};

use crate::analyze::{analyze_csv, Analysis, AnalyzeError, AnalyzeOptions};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The results to draw cannot be read.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// A chart cannot be drawn, converted (PNG, PDF) or written.
    #[error("cannot write chart `{path}`: {cause}{}", cause.write_hint())]
    Write {
        path: PathBuf,
        #[source]
        cause: ChartError,
    },
    /// `report.html` of a run folder cannot be made: its run cannot be read, or the page cannot
    /// be written.
    #[error("cannot make the report `{path}`: {cause}{}", cause.write_hint())]
    Page {
        path: PathBuf,
        #[source]
        cause: crate::store::Cause,
    },
    /// `report --out` is another run's folder: its own page would be replaced by this run's.
    #[error("`--out {}` is another run's folder: its report.html would be replaced by this run's (hint: leave out --out to write into the run folder, or pick a folder of its own)", out.display())]
    OutIsAnotherRun { out: PathBuf },
    /// `--metrics` names a metric the results do not have.
    #[error("no metric `{name}` in the results (hint: one of {})", known.join(", "))]
    NoMetric { name: String, known: Vec<String> },
    /// `--metrics` names too few metrics to overlay.
    #[error("`{}` give no two curves to overlay (hint: name two metrics or more)", metrics.join(","))]
    TooFewMetrics { metrics: Vec<String> },
}

/// Why a chart could not be made: plotters could not draw it, its SVG could not be read back
/// or converted, or its file could not be written. [`ReportError::Write`] adds the file.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    /// plotters failed to draw (its error is generic over the drawing backend, hence boxed).
    #[error("{0}")]
    Draw(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The SVG plotters wrote has no end tag to add the labels before.
    #[error("no </svg> in the chart")]
    NoSvgEnd,
    #[error("bad chart SVG: {0}")]
    Svg(#[source] resvg::usvg::Error),
    #[error("a chart of no pixels")]
    NoPixels,
    #[error("no memory for the chart's {bytes} bytes of pixels (hint: free memory, or raise `ulimit -v`)")]
    NoMemory { bytes: usize },
    /// The PNG encoder failed (its error type is the `png` crate's, which sweep does not name).
    #[error("{0}")]
    Png(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// svg2pdf failed (its error implements no `std::error::Error`, so it is no source).
    #[error("cannot make the PDF: {0}")]
    Pdf(svg2pdf::ConversionError),
    /// The chart's folder or file cannot be written.
    #[error("{0}")]
    Io(#[source] std::io::Error),
}

impl ChartError {
    /// What to do when the chart's file could not be written (a full or read-only disk).
    pub fn write_hint(&self) -> &'static str {
        match self {
            ChartError::Io(e) => crate::store::space::write_hint(e),
            _ => "",
        }
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<plotters::drawing::DrawingAreaErrorKind<E>>
    for ChartError
{
    fn from(e: plotters::drawing::DrawingAreaErrorKind<E>) -> Self {
        ChartError::Draw(Box::new(e))
    }
}

/// What a results CSV is drawn as.
pub enum Charts {
    /// Curves against the swept axis x, from their analysis.
    Lines(Box<Analysis>),
    /// Bars: every axis is a category (no x was asked for, and none is numeric).
    Bars,
}

/// Lines when the CSV has a numeric axis (or `opts` names x), bars when all its axes are
/// categories; the analysis's error otherwise.
pub fn choose(csv: &Path, opts: &AnalyzeOptions) -> Result<Charts, AnalyzeError> {
    match analyze_csv(csv, opts) {
        Ok(a) => Ok(Charts::Lines(Box::new(a))),
        Err(AnalyzeError::NoNumericAxis { .. }) if opts.x.is_none() => Ok(Charts::Bars),
        Err(e) => Err(e),
    }
}

/// Writes `charts/<series>.svg` and `.png` for every series with two points or more, and
/// `charts/family-<name>.svg` and `.png` for every family of variants; returns the paths.
pub fn plot(analysis: &Analysis, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    plot_with(analysis, dir, &Look::default(), &[])
}

/// [`plot`] in `look`'s size, names and formats; with `metrics` (names or columns), only the
/// chart of those metrics overlaid (one per group of the other axes), `charts/family-<names>`.
pub fn plot_with(
    analysis: &Analysis,
    dir: &Path,
    look: &Look,
    metrics: &[String],
) -> Result<Vec<PathBuf>, ReportError> {
    let charts = dir.join(crate::store::run::CHARTS);
    let footer = analysis.source.parent().and_then(footer);
    let footer = footer.as_deref();
    let mut out = Vec::new();
    let chosen = if metrics.is_empty() {
        None
    } else {
        let chosen = family::chosen(analysis, metrics)?;
        if chosen.is_empty() {
            return Err(ReportError::TooFewMetrics {
                metrics: metrics.to_vec(),
            });
        }
        Some(chosen)
    };
    crate::store::run::own_dir(&charts).map_err(|e| canvas::fail(&charts)(ChartError::Io(e)))?;
    if let Some(chosen) = chosen {
        for f in chosen {
            out.extend(family::write_family(&f, analysis, &charts, footer, look)?);
        }
        return Ok(out);
    }
    let infos = point_info(analysis);
    let labels = family::labels_of(analysis);
    for (s, info) in analysis.series.iter().zip(&infos) {
        if !series::drawable(s) {
            continue;
        }
        let chart = series::SeriesChart {
            s,
            x_name: &analysis.x,
            info,
            labels: &labels,
        };
        out.extend(canvas::write_as(
            &chart,
            &charts.join(&s.file_stem),
            footer,
            look,
        )?);
    }
    for f in family::families(analysis) {
        out.extend(family::write_family(&f, analysis, &charts, footer, look)?);
    }
    Ok(out)
}

/// The series left without a chart for having a single point on x.
fn single_point(analysis: &Analysis) -> Vec<&crate::analyze::SeriesAnalysis> {
    analysis
        .series
        .iter()
        .filter(|s| !series::drawable(s))
        .collect()
}

/// The axis along which the series with a single point on x lie: the one whose values differ
/// most among them (copy_all's `offset` variant: 33 series of one point each on `stride`, one
/// per `offset`).
pub fn single_point_axis(analysis: &Analysis) -> Option<String> {
    let mut axes: Vec<(&str, Vec<&str>)> = Vec::new();
    for s in single_point(analysis) {
        for (a, v) in &s.group {
            match axes.iter_mut().find(|(k, _)| k == a) {
                Some((_, vs)) if !vs.contains(&v.as_str()) => vs.push(v),
                Some(_) => {}
                None => axes.push((a, vec![v])),
            }
        }
    }
    axes.iter()
        .filter(|(_, v)| v.len() > 1)
        .max_by_key(|(_, v)| v.len())
        .map(|(a, _)| a.to_string())
}

/// A line on the series left without a chart for having a single point on x, and the axis
/// along which their points lie, when there are any.
pub fn single_point_note(analysis: &Analysis) -> Option<String> {
    let lone = single_point(analysis);
    let n = lone.len();
    if n == 0 {
        return None;
    }
    // A series whose every point failed has none, not one.
    let measured = |s: &&crate::analyze::SeriesAnalysis| s.data.iter().any(|p| p.1.is_some());
    let how = if lone.iter().all(measured) {
        "a single point"
    } else if !lone.iter().any(measured) {
        "no measured point"
    } else {
        "fewer than two measured points"
    };
    let mut line = format!("{n} series have {how} on `{}` and get no chart", analysis.x);
    if let Some(a) = single_point_axis(analysis) {
        line += &format!(" (hint: their points lie along `{a}`: plot them with --x {a})");
    }
    Some(line)
}

/// Text for XML and HTML.
pub(crate) fn escape(t: &str) -> String {
    canvas::escape(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plot_writes_an_svg_and_a_png_per_series_and_family() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = series::tests::series();
        a.metric = "shared_stride1".into();
        a.file_stem = "shared_stride1".into();
        let mut b = a.clone();
        b.metric = "shared_stride2".into();
        b.file_stem = "shared_stride2".into();
        let mut lone = a.clone();
        lone.metric = "lone".into();
        lone.file_stem = "lone".into();
        lone.data.truncate(1);
        let analysis = Analysis {
            x: "threads".into(),
            series: vec![a, b, lone],
            ..Default::default()
        };
        let files = plot(&analysis, dir.path()).unwrap();
        let names: Vec<String> = files
            .iter()
            .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "shared_stride1.svg",
                "shared_stride1.png",
                "shared_stride2.svg",
                "shared_stride2.png",
                "family-shared--variant-a-.svg",
                "family-shared--variant-a-.png"
            ],
            "no chart of a single point"
        );
        let png = std::fs::read(&files[1]).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let note = single_point_note(&analysis).unwrap();
        assert!(
            note.starts_with("1 series have a single point on `threads`"),
            "{note}"
        );
        // Every point failed: none, not one.
        let mut failed = analysis.clone();
        failed.series[2].data[0].1 = None;
        let note = single_point_note(&failed).unwrap();
        assert!(
            note.starts_with("1 series have no measured point on `threads`"),
            "{note}"
        );
    }

    #[test]
    fn single_point_series_point_at_the_axis_they_lie_along() {
        let mut series = Vec::new();
        for off in 0..3 {
            let mut s = series::tests::series();
            s.data.truncate(1);
            s.group = vec![
                ("variant".into(), "offset".into()),
                ("offset".into(), off.to_string()),
            ];
            series.push(s);
        }
        let analysis = Analysis {
            x: "stride".into(),
            series,
            ..Default::default()
        };
        let note = single_point_note(&analysis).unwrap();
        assert!(
            note.ends_with("(hint: their points lie along `offset`: plot them with --x offset)"),
            "{note}"
        );
    }

    #[test]
    fn categories_only_get_bars_and_a_numeric_axis_lines() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("results.csv");
        let head = "point_id,index,mode,status,bw_gb_per_s,build_s,run_s,cached,gpu_index,gpu_name,gpu_uuid,error\n";
        std::fs::write(
            &csv,
            format!("{head}a,0,ca,ok,10,1,1,0,0,G,u,\nb,1,cg,ok,12,1,1,0,0,G,u,\n"),
        )
        .unwrap();
        let opts = AnalyzeOptions::default();
        assert!(matches!(choose(&csv, &opts), Ok(Charts::Bars)));
        // Naming a categorical x is an error, not bars.
        let named = AnalyzeOptions {
            x: Some("mode".into()),
            ..Default::default()
        };
        assert!(choose(&csv, &named).is_err());
        std::fs::write(
            &csv,
            format!("{head}a,0,1,ok,10,1,1,0,0,G,u,\nb,1,2,ok,12,1,1,0,0,G,u,\n"),
        )
        .unwrap();
        assert!(matches!(choose(&csv, &opts), Ok(Charts::Lines(_))));
    }
}
