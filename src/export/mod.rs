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
//! Every format starts from [`Table`]: the run's `results.csv` with each cell typed once, here,
//! from its column: ids, statuses, errors and GPU names are text whatever they look like;
//! numbers are numbers in either dialect.

pub mod json;
pub mod long;
pub mod xlsx;

pub use json::{run_json, write_json, SCHEMA};

use crate::store::read::Csv;
use crate::store::schema::{INDEX_COLUMN, TEXT_COLUMNS};
use crate::store::{self, Dialect, Manifest, StoreError};
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

/// One typed cell.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Empty,
    Number(f64),
    Text(String),
}

/// A CSV's header and rows, every cell typed.
#[derive(Clone, Debug)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// Types the cells of `rows` (written in `dialect`): a column in `text` is text; any other
    /// column is numbers where every non-empty cell reads as a finite number in the dialect,
    /// else text (an axis of names).
    pub fn typed(
        header: Vec<String>,
        rows: Vec<Vec<String>>,
        dialect: Dialect,
        text: &[&str],
    ) -> Table {
        let numeric: Vec<bool> = (0..header.len())
            .map(|c| {
                !text.contains(&header[c].as_str())
                    && rows.iter().all(|r| {
                        let f = r.get(c).map(String::as_str).unwrap_or_default();
                        f.is_empty() || number(f, dialect).is_some()
                    })
            })
            .collect();
        let rows = rows
            .into_iter()
            .map(|r| {
                (0..header.len())
                    .map(|c| match r.get(c).map(String::as_str).unwrap_or_default() {
                        "" => Cell::Empty,
                        f if numeric[c] => number(f, dialect).map_or(Cell::Empty, Cell::Number),
                        f => Cell::Text(f.to_string()),
                    })
                    .collect()
            })
            .collect();
        Table { header, rows }
    }

    pub fn column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    /// The table's rows as CSV text in `dialect`, for a spreadsheet: a text cell that could
    /// start a formula is defused ([`store::formula_defused`]).
    pub fn to_csv(&self, dialect: Dialect) -> Vec<u8> {
        let mut out = store::record(&self.header, dialect);
        for r in &self.rows {
            let fields: Vec<String> = r
                .iter()
                .map(|c| match c {
                    Cell::Empty => String::new(),
                    Cell::Number(v) => dialect.number(*v),
                    Cell::Text(t) => store::formula_defused(t, dialect).into_owned(),
                })
                .collect();
            out.extend(store::record(&fields, dialect));
        }
        out
    }
}

/// A finite number written in `dialect` (integers included).
fn number(f: &str, dialect: Dialect) -> Option<f64> {
    dialect.parse_number(f).filter(|v| v.is_finite())
}

/// A run as [`Export`] reads it: the manifest, the results and, when analysed, the analysis.
pub struct Run {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub results: Table,
    pub analysis: Option<Table>,
}

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot write `{path}`: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write `{path}`: {source}")]
    Workbook {
        path: PathBuf,
        #[source]
        source: rust_xlsxwriter::XlsxError,
    },
    #[error("`{path}`: {reason}")]
    Read { path: PathBuf, reason: String },
    #[error("cannot write `{path}`: {reason} (hint: export this run as csv, json or long)")]
    TooBig { path: PathBuf, reason: String },
    #[error("`{dir}` is not a run folder: it has no manifest.json (hint: pass output/<sweep>/<stamp>, the folder that holds results.csv)")]
    NotARun { dir: PathBuf },
    #[error("`--out {out}` is a run folder: the export's results.csv would replace that run's own (hint: leave out --out for <run>/export, or pick a folder of its own)")]
    OutIsARun { out: PathBuf },
}

impl Run {
    /// Reads `run_dir` (a run folder: `manifest.json` and `results.csv`; `analysis.csv` when
    /// there is one). Rows come in sweep order (by `index`).
    pub fn load(run_dir: &Path) -> Result<Run, ExportError> {
        if !run_dir.join(store::MANIFEST).is_file() {
            return Err(ExportError::NotARun {
                dir: run_dir.to_path_buf(),
            });
        }
        let manifest = Manifest::load(run_dir)?;
        let done = store::read::read_done_as_is(&run_dir.join(store::RESULTS), &manifest.columns)?;
        let index = manifest.columns.iter().position(|c| c == INDEX_COLUMN);
        let mut rows: Vec<Vec<String>> = done.into_values().collect();
        rows.sort_by_key(|r| {
            index
                .and_then(|i| r.get(i))
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(usize::MAX)
        });
        let results = Table::typed(
            manifest.columns.clone(),
            rows,
            manifest.dialect,
            &TEXT_COLUMNS,
        );
        let analysis = read_analysis(&run_dir.join("analysis.csv"))?;
        Ok(Run {
            dir: run_dir.to_path_buf(),
            manifest,
            results,
            analysis,
        })
    }
}

/// `analysis.csv`, typed: its text columns are the series' names, the reading and the other
/// axes' values (which may look numeric; they name a group).
fn read_analysis(path: &Path) -> Result<Option<Table>, ExportError> {
    let Ok(bytes) = std::fs::read(path) else {
        return Ok(None);
    };
    let err = |reason: String| ExportError::Read {
        path: path.to_path_buf(),
        reason,
    };
    let csv = Csv::parse(&bytes, None).map_err(|e| err(e.to_string()))?;
    let (header, dialect) = (csv.header, csv.dialect);
    // Its text cells were written defused for spreadsheets; typed here as they were.
    let rows = csv
        .records
        .into_iter()
        .map(|r| {
            r.map(|r| {
                r.iter()
                    .map(|f| store::formula_restored(f).to_string())
                    .collect()
            })
        })
        .collect::<Result<Vec<Vec<String>>, _>>()
        .map_err(err)?;
    // Columns before `period` are the series' name, metric, unit and the group's axis values.
    let period = header.iter().position(|h| h == "period").unwrap_or(0);
    let mut text_cols: Vec<&str> = header[..period].iter().map(String::as_str).collect();
    text_cols.extend(["level", "method", "reading"]);
    Ok(Some(Table::typed(
        header.clone(),
        rows,
        dialect,
        &text_cols,
    )))
}

/// Writes `run` in `format` into `out` (created); returns the files written.
pub fn export(
    run: &Run,
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
            json::write_json(&run.dir, &path)?;
            Ok(vec![path])
        }
        Format::Csv => {
            // A run's results.csv in another dialect, with a byte-order mark, breaks its resume
            // (rows appended in the manifest's dialect) and every reader after.
            if out.join(store::MANIFEST).is_file() {
                return Err(ExportError::OutIsARun {
                    out: out.to_path_buf(),
                });
            }
            let d = dialect.unwrap_or(run.manifest.dialect);
            let mut files = vec![write("results.csv", &bom(run.results.to_csv(d)))?];
            if let Some(a) = &run.analysis {
                files.push(write("analysis.csv", &bom(a.to_csv(d)))?);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn ids_and_statuses_stay_text_and_numbers_follow_the_dialect() {
        let header = s(&[
            "point_id", "threads", "variant", "status", "mflops", "error",
        ]);
        let rows = vec![
            s(&["096962288715", "1", "a", "ok", "3,597", ""]),
            s(&[
                "137798133e26",
                "2",
                "7",
                "run_failed",
                "",
                "exit 1; see log",
            ]),
        ];
        let t = Table::typed(header, rows, Dialect::Semicolon, &TEXT_COLUMNS);
        assert_eq!(t.rows[0][0], Cell::Text("096962288715".into()));
        assert_eq!(t.rows[1][0], Cell::Text("137798133e26".into()));
        assert_eq!(t.rows[0][1], Cell::Number(1.0));
        // An axis with one name among numbers is text throughout.
        assert_eq!(t.rows[1][2], Cell::Text("7".into()));
        assert_eq!(t.rows[0][4], Cell::Number(3.597));
        assert_eq!(t.rows[1][4], Cell::Empty);
        let csv = String::from_utf8(t.to_csv(Dialect::Comma)).unwrap();
        assert!(
            csv.contains("137798133e26,2,7,run_failed,,\"exit 1; see log\"\r\n"),
            "{csv}"
        );
        assert!(csv.contains(",3.597,"), "{csv}");
    }
}
