//! The one flow from a results CSV to its analysis and charts: what `sweep analyze`, `sweep plot`
//! and the end of `sweep run` make of it ([`make`]). Each command says what was made in its own
//! way (the terminal reporter's events, or lines on stdout and stderr); none repeats the flow.

use super::{choose, plot_bars_with, plot_with, single_point_note, Charts, Look, ReportError};
use crate::analyze::{analyze_csv, Analysis, AnalyzeError, AnalyzeOptions};
use std::path::{Path, PathBuf};

/// What to make of a results CSV.
#[derive(Clone, Copy, Debug)]
pub enum Make<'a> {
    /// The analysis files (`analysis.md`, `.json`, `.csv`): `sweep analyze`.
    Analysis,
    /// The analysis files, then every chart in the default look; bar charts for a sweep of
    /// categories only: the end of `sweep run` with `[analyze] plot = true`.
    AnalysisAndCharts,
    /// The charts only, in `look`; with `metrics` (names or columns) those metrics overlaid:
    /// `sweep plot`.
    Charts {
        look: &'a Look,
        metrics: &'a [String],
    },
}

/// What [`make`] made.
#[derive(Debug)]
pub struct Made {
    /// `None` for a sweep of categories only (bar charts, no curve).
    pub analysis: Option<Analysis>,
    /// The files written, in order: the analysis's, then the charts.
    pub files: Vec<PathBuf>,
    /// With charts: the series left with a single point (no chart), when some are.
    pub note: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum MakeError {
    /// The results cannot be analysed, or the analysis cannot be written.
    #[error(transparent)]
    Analyze(#[from] AnalyzeError),
    /// The charts cannot be made.
    #[error(transparent)]
    Report(#[from] ReportError),
    /// `--metrics` asked for curves of results that have categories only.
    #[error(
        "`--metrics` overlays curves against a numeric axis; these results have categories only"
    )]
    MetricsOnBars,
}

/// Makes `what` of the results CSV `results` with `opts`'s x, y and grouping, into `out` (the
/// analysis files) and `out/charts`; `out` is the CSV's folder unless given.
pub fn make(
    results: &Path,
    opts: &AnalyzeOptions,
    out: Option<&Path>,
    what: Make,
) -> Result<Made, MakeError> {
    let beside = results.parent().map(Path::to_path_buf).unwrap_or_default();
    let out = out.unwrap_or(&beside);
    let default = Look::default();
    let (look, metrics, write_analysis) = match what {
        Make::Analysis => {
            let analysis = analyze_csv(results, opts)?;
            let files = analysis.write_files(out)?;
            return Ok(Made {
                analysis: Some(analysis),
                files,
                note: None,
            });
        }
        Make::AnalysisAndCharts => (&default, &[][..], true),
        Make::Charts { look, metrics } => (look, metrics, false),
    };
    let analysis = match choose(results, opts)? {
        Charts::Lines(a) => *a,
        Charts::Bars if !metrics.is_empty() => return Err(MakeError::MetricsOnBars),
        // Categories only: no curve to analyse, bars to draw.
        Charts::Bars => {
            return Ok(Made {
                analysis: None,
                files: plot_bars_with(results, out, look)?,
                note: None,
            })
        }
    };
    let mut files = if write_analysis {
        analysis.write_files(out)?
    } else {
        Vec::new()
    };
    files.extend(plot_with(&analysis, out, look, metrics)?);
    let note = single_point_note(&analysis);
    Ok(Made {
        analysis: Some(analysis),
        files,
        note,
    })
}
