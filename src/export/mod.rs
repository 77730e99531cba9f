//! Stage `export`: a run in the formats other programs read. `json` (one document, see
//! [`json`]); `xlsx` (typed cells, a chart per family of metrics, the analysis and the manifest,
//! see [`xlsx`]); `csv` (results and analysis in a chosen dialect, with a byte-order mark so that
//! spreadsheets read them as UTF-8); `long` (one row per point and metric, as CSV and JSON, see
//! [`long`]).
//!
//! Every file is written whole to a temporary name and renamed ([`store::write_atomic`]): an
//! export killed midway leaves the previous file, never a torn one. Text cells of the CSVs that
//! could start a spreadsheet formula (`=`, `+`, `-`, `@`) get a leading `'`
//! ([`store::formula_defused`]); numbers stay numbers.
//!
//! Every format starts from [`Typed`]: the run read ([`store::Run`]) with each cell of its
//! results and analysis typed once, by the store ([`store::cells`]).

pub mod json;
pub mod long;
pub mod xlsx;

pub use json::{run_json, write_json, SCHEMA};

use crate::store::{self, Dialect, Manifest, StoreError, Table};
use std::path::{Path, PathBuf};

/// The formats of `sweep export` and `sweep run --export`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One workbook: results, analysis, a chart per metric family, the manifest
    Xlsx,
    /// results.csv and analysis.csv in `--dialect`, UTF-8 with a byte-order mark
    Csv,
    /// run.json: the run as one document (schema in src/export/json.rs)
    Json,
    /// results_long.csv and results_long.json: one row per point and metric (tidy form)
    Long,
}

/// [`crate::store::space::write_hint`] for the file system error under a workbook's.
fn workbook_hint(e: &rust_xlsxwriter::XlsxError) -> &'static str {
    match e {
        rust_xlsxwriter::XlsxError::IoError(e) => crate::store::space::write_hint(e),
        _ => "",
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "cannot write `{path}`: {source}{}",
        crate::store::space::write_hint(source)
    )]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write `{path}`: {source}{}", workbook_hint(source))]
    Workbook {
        path: PathBuf,
        #[source]
        source: rust_xlsxwriter::XlsxError,
    },
    #[error("cannot write `{path}`: {reason} (hint: export this run as csv, json or long)")]
    TooBig {
        path: PathBuf,
        #[source]
        reason: xlsx::TooBig,
    },
    #[error("no rows in `{path}`: nothing to export (hint: export it once its run has measured some points)")]
    NoRows { path: PathBuf },
    #[error("`--out {out}` is a run folder: the export's results.csv would replace that run's own (hint: leave out --out for <run>/export, or pick a folder of its own)")]
    OutIsARun { out: PathBuf },
}

/// A run as its exports see it: its manifest, and its results (one row per point, in sweep
/// order) and analysis with every cell typed.
pub struct Typed<'a> {
    pub run: &'a store::Run,
    pub manifest: &'a Manifest,
    pub results: Table,
    pub analysis: Option<Table>,
}

impl<'a> Typed<'a> {
    /// `run`'s cells typed; it must be a run folder's (it has a manifest).
    pub fn of(run: &'a store::Run) -> Result<Typed<'a>, StoreError> {
        let manifest = run.manifest.as_ref().ok_or_else(|| StoreError::NotARun {
            dir: run.path.parent().map(Path::to_path_buf).unwrap_or_default(),
        })?;
        Ok(Typed {
            run,
            manifest,
            results: run.points()?,
            analysis: run.analysis()?,
        })
    }
}

/// Writes `run` in `format` into `out` (created); returns the files written.
pub fn export(
    run: &Typed,
    format: Format,
    dialect: Option<Dialect>,
    out: &Path,
) -> Result<Vec<PathBuf>, ExportError> {
    std::fs::create_dir_all(out).map_err(|source| ExportError::Write {
        path: out.to_path_buf(),
        source,
    })?;
    let write = |name: &str, bytes: &[u8]| -> Result<PathBuf, ExportError> {
        let path = out.join(name);
        store::write_atomic(&path, bytes).map_err(|source| ExportError::Write {
            path: path.clone(),
            source,
        })?;
        Ok(path)
    };
    // The byte-order mark tells Excel and LibreOffice that the file is UTF-8 (without it
    // Excel reads `≡` as `â‰¡`); the results' own CSV stays without one, for programs.
    let bom = |mut body: Vec<u8>| {
        let mut b = "\u{feff}".as_bytes().to_vec();
        b.append(&mut body);
        b
    };
    match format {
        Format::Long => {
            let d = dialect.unwrap_or(run.manifest.dialect);
            let table = long::long_table(run);
            Ok(vec![
                write(long::CSV, &bom(table.to_csv(d)))?,
                write(long::JSON, long::to_json(&table).as_bytes())?,
            ])
        }
        Format::Json => {
            let path = out.join("run.json");
            json::write_json_as(run.run, &path, false)?;
            Ok(vec![path])
        }
        Format::Csv => {
            // A run's results.csv in another dialect, with a byte-order mark, breaks its resume
            // (rows appended in the manifest's dialect) and every reader after.
            if store::RunDir::new(out).is_run() {
                return Err(ExportError::OutIsARun {
                    out: out.to_path_buf(),
                });
            }
            let d = dialect.unwrap_or(run.manifest.dialect);
            let mut files = vec![write(store::RESULTS, &bom(run.results.to_csv(d)))?];
            if let Some(a) = &run.analysis {
                files.push(write(store::run::ANALYSIS_CSV, &bom(a.to_csv(d)))?);
            }
            Ok(files)
        }
        Format::Xlsx => {
            if let Some(reason) = xlsx::too_big(run) {
                return Err(ExportError::TooBig {
                    path: out.join("results.xlsx"),
                    reason,
                });
            }
            let bytes = xlsx::workbook(run).map_err(|source| ExportError::Workbook {
                path: out.join("results.xlsx"),
                source,
            })?;
            Ok(vec![write("results.xlsx", &bytes)?])
        }
    }
}

/// A run of `manifest` whose results are `rows` (cells typed as `text` says), for tests of the
/// formats.
#[cfg(test)]
pub(crate) fn typed_for_test(
    manifest: Manifest,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    text: &[&str],
) -> Typed<'static> {
    let run: &'static store::Run = Box::leak(Box::new(store::Run {
        path: PathBuf::new(),
        dir: None,
        manifest: Some(manifest),
        dialect: Dialect::Comma,
        header: header.clone(),
        rows: rows
            .iter()
            .map(|r| store::run::Row::from(r.clone()))
            .collect(),
        axes: Vec::new(),
        metrics: Vec::new(),
    }));
    Typed {
        run,
        manifest: run.manifest.as_ref().expect("given"),
        results: Table::typed(header, rows, Dialect::Comma, text),
        analysis: None,
    }
}
