//! Why a subcommand failed: one typed error that keeps the library's error (its source) until
//! `main` prints it, and the one place that maps a failure to its exit code (the library's errors
//! say what went wrong, not how sweep exits). One variant per library error type; its exit code
//! follows from what the error is (as cargo-nextest's `ExpectedError::process_exit_code`), never
//! from where it was caught.

use std::path::PathBuf;
use sweep::analyze::AnalyzeError;
use sweep::compare::CompareError;
use sweep::driver::DriverError;
use sweep::exit;
use sweep::export::ExportError;
use sweep::merge::MergeError;
use sweep::report::{MakeError, ReportError};
use sweep::slurm::SlurmError;
use sweep::store::{Cause, StoreError};

/// `message` on one line, safe for a terminal: a line break, carriage return, escape (ANSI
/// colour codes) or other control character that a spec's name or a file's text brought into it
/// is written as its Rust escape (`\n`, `\u{1b}`); a tab stays.
pub(crate) fn one_line(message: &str) -> String {
    message
        .chars()
        .map(|c| {
            if c.is_control() && c != '\t' {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    /// The spec (with its overrides) does not load.
    #[error(transparent)]
    Spec(#[from] sweep::spec::SpecError),
    /// The spec with the command-line overrides does not load.
    #[error(transparent)]
    Overrides(#[from] sweep::overrides::OverridesError),
    #[error(transparent)]
    Driver(#[from] DriverError),
    /// A results CSV cannot be analysed, or its analysis written.
    #[error(transparent)]
    Analyze(#[from] sweep::analyze::AnalyzeError),
    /// An analysis along the `[analyze]` of the run's spec (no `--x`, `--y` or `--by` given)
    /// that the results do not allow: said so, where "no axis `zz`" named no source (review 19a
    /// M7).
    #[error("the run's spec asks `[analyze]` {asked} (manifest.json), and {source}")]
    SpecAnalyze {
        asked: String,
        #[source]
        source: Box<sweep::analyze::AnalyzeError>,
    },
    /// Charts of a results CSV, or `report.html` of a run folder.
    #[error(transparent)]
    Report(#[from] sweep::report::ReportError),
    /// An export file cannot be written.
    #[error(transparent)]
    Export(#[from] sweep::export::ExportError),
    /// A run folder cannot be read (to export, to resume), or `--export-json FILE` cannot be
    /// written.
    #[error(transparent)]
    Store(#[from] sweep::store::StoreError),
    #[error("cannot enter `{dir}`: {source}")]
    EnterDir {
        dir: String,
        #[source]
        source: std::io::Error,
    },
    #[error("`{}`: unreadable overrides {overrides:?} in its manifest", run_dir.display())]
    BadOverrides {
        run_dir: PathBuf,
        overrides: Vec<String>,
    },
    #[error("point {point} does not exist (hint: the sweep has points 0..{last})")]
    NoPoint { point: usize, last: usize },
    #[error(transparent)]
    Render(#[from] sweep::render::RenderError),
    #[error("cannot write headers into `{}`: {source}", dir.display())]
    WriteHeaders {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// `sweep cache clean`.
    #[error(transparent)]
    CacheClean(#[from] sweep::cache::CleanError),
    #[error("`{}` is not a run folder: it has no manifest.json (hint: pass output/<sweep>/<stamp>)", dir.display())]
    NotRunFolder { dir: PathBuf },
    #[error("cannot find this sweep binary: {0}")]
    CurrentExe(#[source] std::io::Error),
    #[error("--fail-on-slower `{0}` is not a percentage (hint: a number >= 0, like 5)")]
    NotPercentage(f64),
    #[error(transparent)]
    Compare(#[from] sweep::compare::CompareError),
    /// `sweep compare --fail-on-slower` with no value compared: nothing shows B is not slower.
    #[error("--fail-on-slower: no value of B could be compared with A ({} matched by their axis values; {failed} failed or without a value) (hint: `sweep compare` without it lists why)", sweep::words::plural(*matched, "point"))]
    NothingCompared { matched: usize, failed: usize },
    /// `sweep compare --fail-on-slower`: B failed at points A measured.
    #[error("{0}")]
    LostInB(String),
    /// `sweep compare --fail-on-slower`: what lost more than allowed.
    #[error("{0}")]
    Slower(String),
    #[error(transparent)]
    Merge(#[from] MergeError),
    /// `sweep merge`: the points no run holds.
    #[error("{0}")]
    MissingPoints(String),
    #[error(transparent)]
    Slurm(#[from] SlurmError),
    /// Options that do not go together.
    #[error("{0}")]
    Usage(String),
}

/// The analysis and charts of a results CSV ([`sweep::report::make`]) fail as the analysis or the
/// charts do; curves asked of categories only are a usage error.
impl From<MakeError> for CliError {
    fn from(e: MakeError) -> Self {
        match e {
            MakeError::Analyze(e) => CliError::Analyze(e),
            MakeError::Report(e) => CliError::Report(e),
            MakeError::MetricsOnBars
            | MakeError::OutIsAnotherRun { .. }
            | MakeError::BesideALink { .. } => CliError::Usage(e.to_string()),
        }
    }
}

impl CliError {
    /// The exit code of this failure (listed in `sweep --help`, src/exit.rs): what the library's
    /// error is decides it, wherever it was caught (a run folder's error is the same code under
    /// `Store`, `Report`, `Export`, `Analyze`, `Compare` or `Merge`).
    pub(crate) fn exit_code(&self) -> i32 {
        match self {
            CliError::Render(e) if e.environment() => exit::ENVIRONMENT,
            CliError::Spec(_) | CliError::Overrides(_) | CliError::Render(_) => exit::BAD_INPUT,
            CliError::Driver(e) if e.environment() => exit::ENVIRONMENT,
            CliError::Driver(e) if e.usage() => exit::USAGE,
            CliError::Driver(_) => exit::BAD_INPUT,
            CliError::Store(e) => store_code(e),
            CliError::Analyze(e) => analyze_code(e),
            CliError::SpecAnalyze { source, .. } => analyze_code(source),
            CliError::Report(e) => match e {
                ReportError::NoMetric { .. }
                | ReportError::TooFewMetrics { .. }
                | ReportError::OutIsAnotherRun { .. } => exit::USAGE,
                ReportError::Store(e) => store_code(e),
                // The page's run cannot be read.
                ReportError::Page {
                    cause: Cause::Run(e),
                    ..
                } => store_code(e),
                // A chart or page that cannot be made or written: the file system (full,
                // read-only), or a drawing library's failure, which no input of the user's causes.
                ReportError::Page { .. } | ReportError::Write { .. } => exit::ENVIRONMENT,
            },
            CliError::Export(e) => match e {
                ExportError::OutIsARun { .. } => exit::USAGE,
                ExportError::TooBig { .. } | ExportError::NoRows { .. } => exit::BAD_INPUT,
                ExportError::Store(e) => store_code(e),
                ExportError::Write { .. } | ExportError::Workbook { .. } => exit::ENVIRONMENT,
            },
            CliError::Compare(e) => match e {
                CompareError::Write { .. } => exit::ENVIRONMENT,
                CompareError::OutIsARun { .. } | CompareError::OutLink { .. } => exit::USAGE,
                CompareError::Store(e) => store_code(e),
                CompareError::Read(e) => analyze_code(e),
                _ => exit::BAD_INPUT,
            },
            CliError::Merge(e) => match e {
                MergeError::Duplicates { .. } => exit::POINTS_FAILED,
                MergeError::Write { .. } => exit::ENVIRONMENT,
                MergeError::Store(e) => store_code(e),
                _ => exit::BAD_INPUT,
            },
            CliError::Slurm(e) => match e {
                SlurmError::Shards(_)
                | SlurmError::Option { .. }
                | SlurmError::Path { .. }
                | SlurmError::PathInScript { .. }
                | SlurmError::PathWithLineBreak { .. } => exit::USAGE,
                SlurmError::Points(_) => exit::BAD_INPUT,
                _ => exit::ENVIRONMENT,
            },
            CliError::Usage(_) | CliError::NotPercentage(_) => exit::USAGE,
            CliError::BadOverrides { .. }
            | CliError::NoPoint { .. }
            | CliError::WriteHeaders { .. }
            | CliError::NotRunFolder { .. } => exit::BAD_INPUT,
            CliError::CacheClean(sweep::cache::CleanError::NotCache { .. }) => exit::USAGE,
            CliError::EnterDir { .. }
            | CliError::CacheClean(sweep::cache::CleanError::Io { .. })
            | CliError::CurrentExe(_) => exit::ENVIRONMENT,
            CliError::Slower(_) => exit::SLOWER,
            CliError::MissingPoints(_)
            | CliError::NothingCompared { .. }
            | CliError::LostInB(_) => exit::POINTS_FAILED,
        }
    }
}

/// A run folder's error: a file of it that cannot be written is the environment (a full or
/// read-only disk); one that cannot be read, or reads wrong, is bad input.
fn store_code(e: &StoreError) -> i32 {
    match e {
        StoreError::Write { .. } => exit::ENVIRONMENT,
        _ => exit::BAD_INPUT,
    }
}

/// An analysis that cannot be written is the environment; results it cannot analyse are bad
/// input.
fn analyze_code(e: &AnalyzeError) -> i32 {
    match e {
        AnalyzeError::Write { .. } => exit::ENVIRONMENT,
        AnalyzeError::Store(e) => store_code(e),
        _ => exit::BAD_INPUT,
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn an_error_with_line_breaks_or_escapes_prints_on_one_line() {
        assert_eq!(
            super::one_line("bench `x\n\u{1b}[31mred\r` not found\t!"),
            "bench `x\\n\\u{1b}[31mred\\r` not found\t!"
        );
    }
    use super::{CliError, DriverError, ExportError, MergeError, ReportError, StoreError};
    use std::error::Error as _;
    use sweep::exit;

    #[test]
    fn each_failure_has_its_exit_code_and_keeps_its_source() {
        let io = || std::io::Error::other("gone");
        for (e, code) in [
            (
                CliError::Compare(sweep::compare::CompareError::Write {
                    path: "out/compare.csv".into(),
                    source: io(),
                }),
                exit::ENVIRONMENT,
            ),
            (CliError::NotPercentage(-1.0), exit::USAGE),
            (CliError::Slower("slower".into()), exit::SLOWER),
            (CliError::LostInB("lost".into()), exit::POINTS_FAILED),
            (
                CliError::MissingPoints("missing".into()),
                exit::POINTS_FAILED,
            ),
            (CliError::CurrentExe(io()), exit::ENVIRONMENT),
            (
                CliError::CacheClean(sweep::cache::CleanError::Io {
                    dir: "c".into(),
                    source: io(),
                }),
                exit::ENVIRONMENT,
            ),
            (
                CliError::CacheClean(sweep::cache::CleanError::NotCache {
                    dir: "c".into(),
                    other: None,
                }),
                exit::USAGE,
            ),
            (CliError::NotRunFolder { dir: "d".into() }, exit::BAD_INPUT),
            // A library error's code follows from what it is, wherever it was caught.
            (
                CliError::Store(StoreError::Write {
                    path: "f".into(),
                    cause: io().into(),
                }),
                exit::ENVIRONMENT,
            ),
            (
                CliError::Store(StoreError::NotARun { dir: "d".into() }),
                exit::BAD_INPUT,
            ),
            (
                CliError::Report(ReportError::Page {
                    path: "report.html".into(),
                    cause: io().into(),
                }),
                exit::ENVIRONMENT,
            ),
            (
                CliError::Report(ReportError::TooFewMetrics {
                    metrics: vec!["m".into()],
                }),
                exit::USAGE,
            ),
            (
                CliError::Report(ReportError::Store(StoreError::NotFound {
                    path: "r".into(),
                })),
                exit::BAD_INPUT,
            ),
            (
                CliError::Export(ExportError::OutIsARun { out: "o".into() }),
                exit::USAGE,
            ),
            (CliError::Driver(DriverError::NoGpu), exit::ENVIRONMENT),
            (
                CliError::Driver(DriverError::NoNcu(
                    sweep::profile::ncu::LocateError::NotFound,
                )),
                exit::ENVIRONMENT,
            ),
            (
                CliError::Driver(DriverError::Store(sweep::store::StoreError::Write {
                    path: "out".into(),
                    cause: std::io::Error::from_raw_os_error(libc::ENOSPC).into(),
                })),
                exit::ENVIRONMENT,
            ),
            (
                CliError::Driver(DriverError::Store(
                    sweep::store::StoreError::HeaderMismatch {
                        path: "results.csv".into(),
                        difference: "column 1 is `x` here and `point_id` there".into(),
                    },
                )),
                exit::BAD_INPUT,
            ),
            (
                CliError::NothingCompared {
                    matched: 3,
                    failed: 3,
                },
                exit::POINTS_FAILED,
            ),
            (
                CliError::Driver(DriverError::OldIds { dir: "d".into() }),
                exit::BAD_INPUT,
            ),
            (
                CliError::Merge(MergeError::Duplicates {
                    count: 1,
                    list: "p".into(),
                    hint: "h".into(),
                }),
                exit::POINTS_FAILED,
            ),
        ] {
            assert_eq!(e.exit_code(), code, "{e}");
        }
        let e = CliError::EnterDir {
            dir: "/x".into(),
            source: io(),
        };
        assert_eq!(e.to_string(), "cannot enter `/x`: gone");
        assert_eq!(e.source().map(|s| s.to_string()).as_deref(), Some("gone"));
    }

    /// Issue 35: the code follows from what the error is. A run folder that cannot be written
    /// is the environment and one that cannot be read is bad input, whichever command met it.
    #[test]
    fn a_run_folders_error_has_one_code_wherever_it_was_caught() {
        use sweep::analyze::AnalyzeError;
        use sweep::compare::CompareError;
        use sweep::store::Cause;
        let cases: [(fn() -> StoreError, i32); 3] = [
            (
                || StoreError::Write {
                    path: "out/results.csv".into(),
                    cause: std::io::Error::from_raw_os_error(libc::ENOSPC).into(),
                },
                exit::ENVIRONMENT,
            ),
            (|| StoreError::NotARun { dir: "d".into() }, exit::BAD_INPUT),
            (
                || StoreError::HeaderMismatch {
                    path: "results.csv".into(),
                    difference: "column 1 is `x` here and `point_id` there".into(),
                },
                exit::BAD_INPUT,
            ),
        ];
        for (e, code) in cases {
            let wrapped = [
                CliError::Store(e()),
                CliError::Report(ReportError::Store(e())),
                CliError::Report(ReportError::Page {
                    path: "report.html".into(),
                    cause: Cause::Run(Box::new(e())),
                }),
                CliError::Export(ExportError::Store(e())),
                CliError::Analyze(AnalyzeError::Store(e())),
                CliError::Compare(CompareError::Store(e())),
                CliError::Compare(CompareError::Read(AnalyzeError::Store(e()))),
                CliError::Merge(MergeError::Store(e())),
            ];
            for w in wrapped {
                assert_eq!(w.exit_code(), code, "{w:?}");
            }
        }
    }

    #[test]
    fn a_chart_or_override_error_has_its_code() {
        let io = std::io::Error::from_raw_os_error(libc::EROFS);
        let chart = CliError::Report(ReportError::Write {
            path: "charts/x.png".into(),
            cause: sweep::report::ChartError::Io(io),
        });
        assert_eq!(chart.exit_code(), exit::ENVIRONMENT);
        assert!(chart
            .to_string()
            .starts_with("cannot write chart `charts/x.png`: "));
        assert!(chart.source().is_some(), "the chart's cause is kept");
        let over = sweep::overrides::apply(
            std::path::Path::new("t.toml"),
            "bench = \"b\"\n[[axis]]\nname = \"n\"\nrange = [1, 2]\n[[metric]]\npattern = \"mflops\"\n",
            &sweep::overrides::Overrides {
                timing: vec![("nope".into(), "1".into())],
                ..Default::default()
            },
        )
        .unwrap_err();
        let e = CliError::from(over);
        assert_eq!(e.exit_code(), exit::BAD_INPUT);
        assert!(
            e.to_string()
                .starts_with("t.toml: `--timing nope=1`: [timing] has no key `nope`"),
            "{e}"
        );
    }
}
