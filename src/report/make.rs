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
    /// `--out` is another run's folder: its analysis or charts would be replaced by these.
    #[error("`--out {}` is another run's folder: its analysis and charts would be replaced by these (hint: leave out --out to write beside the CSV, or pick a folder of its own)", out.display())]
    OutIsAnotherRun { out: PathBuf },
    /// No `--out`, and the CSV given is a link (`/dev/stdin`): what is written beside it would
    /// land in the link's folder, not the CSV's.
    #[error("`{}` is a link, not the CSV's own file: what is made of it would be written beside the link, into `{}` (hint: give --out DIR, or the path of the CSV itself)", csv.display(), dir.display())]
    BesideALink { csv: PathBuf, dir: PathBuf },
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
    if let Some(o) = out {
        let same = |a: &Path, b: &Path| {
            let whole = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
            whole(a) == whole(b)
        };
        if crate::store::RunDir::new(o).is_run() && !same(o, &beside) {
            return Err(MakeError::OutIsAnotherRun {
                out: o.to_path_buf(),
            });
        }
    }
    // Beside a link is not beside the CSV: `/dev/stdin` (or `<(cat f)`, `/dev/fd/63`) would
    // have the analysis written into /dev.
    if out.is_none() && results.is_symlink() {
        return Err(MakeError::BesideALink {
            csv: results.to_path_buf(),
            dir: beside,
        });
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(run: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/h100")
            .join(run)
            .join(crate::store::RESULTS)
    }

    fn names(files: &[PathBuf], out: &Path) -> Vec<String> {
        files
            .iter()
            .map(|f| f.strip_prefix(out).unwrap().display().to_string())
            .collect()
    }

    /// Each command's share of the one flow: analyze writes the analysis only, plot the charts
    /// only, the end of a run both; categories get bars and no analysis, and no overlay.
    #[test]
    fn each_command_makes_its_part_of_the_one_flow() {
        let opts = AnalyzeOptions::default();
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path();
        let made = make(&fixture("aos_soa"), &opts, Some(out), Make::Analysis).unwrap();
        assert!(made.analysis.is_some() && made.note.is_none());
        assert_eq!(
            names(&made.files, out),
            ["analysis.json", "analysis.csv", "analysis.md"]
        );
        let look = Look::default();
        let charts = Make::Charts {
            look: &look,
            metrics: &[],
        };
        let made = make(&fixture("aos_soa"), &opts, Some(out), charts).unwrap();
        let files = names(&made.files, out);
        assert!(!files.is_empty(), "charts");
        assert!(files.iter().all(|f| f.starts_with("charts/")), "{files:?}");

        let made = make(
            &fixture("l1_cache"),
            &opts,
            Some(out),
            Make::AnalysisAndCharts,
        )
        .unwrap();
        assert!(made.analysis.is_none(), "categories only: no curve");
        let files = names(&made.files, out);
        assert!(
            files.contains(&"charts/l1_cache_gb_per_s.svg".to_string()),
            "{files:?}"
        );
        let overlay = Make::Charts {
            look: &look,
            metrics: &["l1_cache".to_string(), "memcpy_d2d".to_string()],
        };
        let e = make(&fixture("l1_cache"), &opts, Some(out), overlay).unwrap_err();
        assert!(matches!(e, MakeError::MetricsOnBars), "{e}");
    }
}
