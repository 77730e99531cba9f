//! Stage `store`: the run folder, its results CSV (one flushed row per point) and its manifest.
//!
//! A row is written with one `write` call of the whole record and the file is never rewritten, so
//! killing the process (SIGKILL included) leaves every finished row; a row torn by a crash in the
//! middle of that call is cut off when the run is resumed.
//!
//! One owner per file: [`schema`] the columns, statuses and dialects; [`metric_status`] each
//! metric's own status and how readers of older runs derive it; [`write`] the header and the
//! rows; [`read`] every reading of a CSV sweep wrote; [`manifest`] `manifest.json`; [`run`] a run
//! folder's files by name and a run read back ([`Run::open`]), which every reader takes;
//! [`columns`] which columns are axes and metrics; [`cells`] cells typed from their column.

pub mod cells;
pub mod columns;
pub mod manifest;
pub mod mark;
pub mod metric_status;
pub mod read;
pub mod rows;
pub mod run;
pub mod staging;
/// The columns, statuses and dialects live below the spec, in [`crate::schema`] (the spec checks
/// its names against them); the store names that module as its own.
pub use crate::schema;
pub mod space;
pub mod write;

pub use cells::{Cell, Table};
pub use columns::MetricColumn;
pub use run::{Located, Run, RunDir};

pub use manifest::{labels_of_run, GpuState, Manifest, MetricInfo, RunState, TimelineEntry};
pub use metric_status::{
    metric_status, metric_status_in_row, target_rel_ci, MetricCells, NOISY_MEANS, UNSTABLE_MEANS,
};
pub use read::{read_done, read_done_as_is, read_rows};
pub use schema::{metric_status_column, Dialect, Status};
pub use write::{
    formula_defused, formula_restored, header, record, repeat_spread_column, CsvSink, GpuTag, Row,
};

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub const RESULTS: &str = "results.csv";
pub const MANIFEST: &str = "manifest.json";
pub const POINTS: &str = "points";
/// The control re-runs (`control_every`): rows of points measured a second time, in a fresh
/// process, with the header of `results.csv`.
pub const CONTROLS: &str = "controls.csv";
/// Every file the run's builds read beside the rendered headers and the bench's own files (the
/// build cache's lists of its entries, joined): a resume checks that none has changed.
pub const BUILD_INPUTS: &str = "build-inputs.txt";

/// With `recheck`: the rows of the points held back for more processes, every process's own
/// (same header as `results.csv`).
pub fn recheck_csv(run_dir: &Path) -> PathBuf {
    RunDir::new(run_dir).passes().join("recheck.csv")
}

/// Where pass `p` of a run with `repeat` > 1 keeps its rows (same header as `results.csv`).
pub fn pass_csv(run_dir: &Path, pass: u32) -> PathBuf {
    RunDir::new(run_dir)
        .passes()
        .join(format!("pass-{pass}.csv"))
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot write `{path}`: {cause}{}", cause.write_hint())]
    Write {
        path: PathBuf,
        #[source]
        cause: Cause,
    },
    /// Two rows of one point in a run's results.csv (a hand's copy, an edit): which one speaks
    /// for it is no choice to make silently, and every reader refuses it alike (review 12b H2:
    /// analyze took their median, export the last, compare refused).
    #[error("`{path}` has two rows of the point `{point}` (its rows {first} and {second} after the header) (hint: a run's results.csv, and the CSV of each of its passes but the last, has one row per point; keep one of them)")]
    TwoRows {
        path: PathBuf,
        point: String,
        first: usize,
        second: usize,
    },
    /// A row whose point id the run's manifest does not list (an id edited by hand, a row of
    /// another run): it would stand beside the point's own row (review 13b F2).
    #[error("`{path}` has a row of the point `{point}` (its row {row} after the header), which the run's manifest does not list (hint: a row of another run or an edited id; remove it)")]
    ForeignRow {
        path: PathBuf,
        point: String,
        row: usize,
    },
    /// A row whose axis values are not those of the point its id names (an axis cell edited by
    /// hand): read as that point, it stood at another x unsaid (review 17 C2).
    #[error("`{path}` has {row} at {values}, which are not that point's axis values (hint: an axis cell edited by hand; a point's id is a hash of its bench and axis values: restore the cell, or remove the row and resume the run to measure the point again)")]
    NotItsPoint {
        path: PathBuf,
        /// Which row: "a row of the point `p…` (its row 3 after the header)".
        row: String,
        values: String,
    },
    /// A metric value that is no number (edited by hand): a gap in the analysis, a text cell in
    /// the workbook, unsaid (review 16b B2).
    #[error("`{path}` has `{cell}` in {at}, which is no number (hint: a value edited by hand; restore it, or remove the row and resume the run to measure the point again)")]
    NotANumber {
        path: PathBuf,
        /// Where: "the metric column `saw_mflops` (its row 5 after the header)".
        at: String,
        cell: String,
    },
    /// A metric's own status (`<metric>_status`) that is none of a measured value's.
    #[error("`{path}` has `{word}` in {at}, which is no status of a metric's value (hint: a metric's own status is ok, noisy or unstable, or empty in a failed row; restore the row or remove it)")]
    UnknownOwnStatus {
        path: PathBuf,
        /// "`saw_status` of its row 3 after the header".
        at: String,
        word: String,
    },
    /// A row whose status is no word sweep writes.
    #[error("`{path}` has the status `{word}` in {at}, which is none of sweep's (hint: a status is one of {}; restore the row or remove it)", crate::schema::Status::ALL.map(|s| s.as_str()).join(", "))]
    UnknownStatus {
        path: PathBuf,
        /// Which row: "its row 2 after the header", "the row of the point `p…`".
        at: String,
        word: String,
    },
    #[error("cannot read `{path}`: {cause}{}", cause.read_hint())]
    Read {
        path: PathBuf,
        #[source]
        cause: Cause,
    },
    /// A header other than the run's: `difference` says where (`column 3 is `x` here, `status`
    /// in the run's manifest`), so an edit by hand is found without comparing 30 names by eye.
    #[error("`{path}` has another header than its run's manifest lists: {difference} (hint: was the file edited? restore its header from a copy; if the spec or this version of sweep changed the columns, --force starts a new run)")]
    HeaderMismatch { path: PathBuf, difference: String },
    #[error(
        "`{path}` has no `status` column (hint: analyse a results.csv written by `sweep run`)"
    )]
    NoStatus { path: PathBuf },
    #[error("run `{path}` not found (hint: give a run folder or its results.csv)")]
    NotFound { path: PathBuf },
    /// A metric of the manifest whose column the CSV lacks, though the manifest's header has it.
    #[error("`{path}` has no column `{column}` of the metric `{metric}` its manifest lists (hint: was the file edited? restore the column from a copy, or give a copy of the CSV without the manifest beside it)")]
    MissingColumn {
        path: PathBuf,
        column: String,
        metric: String,
    },
    /// An axis of the manifest whose column the CSV lacks: every row would be the one point
    /// `axis=` to compare, and no curve to analyse.
    #[error("`{path}` has no column `{column}` of the axis its manifest lists (hint: was the file edited? restore the column from a copy, or give a copy of the CSV without the manifest beside it)")]
    MissingAxis { path: PathBuf, column: String },
    /// A manifest whose `axes` or `metrics` is empty (`what`: axis or metric): no spec makes one.
    #[error("`{path}` lists no {what}, and every run has one (hint: was the file edited? restore its {what} list from a copy, or give a copy of its results.csv without the manifest beside it)")]
    ManifestListsNone { path: PathBuf, what: &'static str },
    #[error("`{path}` lists the {what} `{name}` twice, and no spec makes one twice (hint: was the file edited? remove one from its list)")]
    ManifestListsTwice {
        path: PathBuf,
        what: &'static str,
        name: String,
    },
    #[error("`{path}` has two columns named `{column}` (columns {first} and {second}) (hint: was the header edited? rename or remove one)")]
    DuplicateColumn {
        path: PathBuf,
        column: String,
        first: usize,
        second: usize,
    },
    /// A folder, a pipe, a device or a socket: read, it fails, blocks (a FIFO) or never ends
    /// (`/dev/zero`).
    #[error("`{path}` is not a regular file (a folder, a pipe, a device or a socket): sweep reads its CSVs from files (hint: save it to a file first and give that)")]
    NotAFile { path: PathBuf },
    #[error("`{path}` is not a regular file (a folder, a pipe, a device or a socket), so not the manifest sweep writes (hint: put the run's manifest.json back from a copy, or give a copy of its results.csv without the folder)")]
    ManifestNotAFile { path: PathBuf },
    /// A CSV of 0 bytes: not even a header, so no column to name as missing.
    #[error("`{path}` is empty (0 bytes): not a results CSV (hint: give a results.csv written by `sweep run`, which starts with its header line)")]
    Empty { path: PathBuf },
    #[error(
        "`{path}` holds no results.csv (hint: give a run folder of `sweep run`, or a results CSV)"
    )]
    NoResults { path: PathBuf },
    #[error("`{dir}` is the hidden folder in which a sweep makes a run or a merge before it names it, left by one that was killed: it is no run (hint: give a run folder `<output>/<sweep>/<stamp>`; the next `sweep run`, `resume` or `merge` there removes it)")]
    Staging { dir: PathBuf },
    #[error("`{dir}` is not a run folder: it has no manifest.json (hint: pass output/<sweep>/<stamp>, the folder that holds results.csv)")]
    NotARun { dir: PathBuf },
    #[error(transparent)]
    BadMetric(Box<BadMetric>),
    #[error("`{path}` line {line}: a quote opened there never closes, so every line after it reads as one field (hint: mend or delete that line by hand and resume, or start a new run with --force)")]
    OpenQuote { path: PathBuf, line: u64 },
}

/// A metric of a manifest whose `better` or `model` this sweep cannot read.
#[derive(Debug, thiserror::Error)]
#[error("cannot read manifest `{path}`: metric `{metric}` has `{key}` = `{value}` (hint: {hint})")]
pub struct BadMetric {
    pub path: PathBuf,
    pub metric: String,
    pub key: &'static str,
    pub value: String,
    pub hint: String,
}

/// What went wrong under a [`StoreError`], kept as the error it was until it is printed.
#[derive(Debug, thiserror::Error)]
pub enum Cause {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Csv(#[from] csv::Error),
    #[error("cannot find a free run folder name")]
    NoFreeName,
    #[error(transparent)]
    Record(#[from] read::BadRecord),
    /// A run folder that cannot be read, under what was made of it.
    #[error(transparent)]
    Run(#[from] Box<StoreError>),
}

pub use crate::files::{open_regular, read_regular};

/// Writes `bytes` to `path` through a temporary file beside it (`.<name>.<owner>.tmp`, [`crate::owner`]), renamed
/// over `path` once whole: a reader, or a process killed mid-write, sees the old file or the new
/// one, never a torn or empty one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", crate::owner::owner()));
    let done = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

impl Cause {
    /// What to do when a write failed with this (see [`space::write_hint`]); nothing for a cause
    /// that carries its own hint.
    pub fn write_hint(&self) -> &'static str {
        match self {
            Cause::Io(e) => space::write_hint(e),
            _ => "",
        }
    }

    /// What to do when a read failed with this: a file that is not what sweep writes (damaged,
    /// edited, saved in another encoding, another program's), or one the user may not read.
    pub fn read_hint(&self) -> &'static str {
        match self {
            Cause::Io(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                " (hint: check its permissions)"
            }
            Cause::Io(e) if e.kind() == std::io::ErrorKind::NotFound => {
                " (hint: is the path right? give a run folder of `sweep run`, or its results.csv)"
            }
            Cause::Io(e) if e.kind() == std::io::ErrorKind::IsADirectory => {
                " (hint: give the file, or the run folder that holds it)"
            }
            Cause::Csv(_) => {
                " (hint: it is not a CSV as sweep writes it, UTF-8 text under one header line: was it edited or saved in another encoding? mend it, or give another run)"
            }
            Cause::Json(_) => {
                " (hint: it is not the JSON sweep writes: cut short or edited? restore it from a copy, or give another run)"
            }
            _ => "",
        }
    }
}

impl From<StoreError> for Cause {
    fn from(e: StoreError) -> Cause {
        Cause::Run(Box::new(e))
    }
}

fn write_err(path: &Path) -> impl Fn(std::io::Error) -> StoreError + '_ {
    move |e| StoreError::Write {
        path: path.to_path_buf(),
        cause: e.into(),
    }
}

/// `output/<sweep>/`: the runs of one sweep, oldest first.
pub fn runs_of(output: &Path, sweep: &str) -> Vec<PathBuf> {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(output.join(sweep))
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .map(|e| e.path())
                .filter(|p| p.join(MANIFEST).is_file())
                .collect()
        })
        .unwrap_or_default();
    runs.sort();
    runs
}

/// A new run folder `output/<sweep>/<UTC timestamp>[suffix]`, created with its manifest in
/// place (built under a hidden name, then renamed), so every run folder has a manifest.
pub fn new_run_dir(
    output: &Path,
    sweep: &str,
    suffix: &str,
    manifest: &Manifest,
) -> Result<PathBuf, StoreError> {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
    let base = output.join(sweep);
    staging::remove_dead(&base);
    let tmp = base.join(staging::name(".new-"));
    // A failure here is the output folder's (read-only, full): named as the user gave it, not
    // as the hidden folder the run is made in; or the sweep's folder's, where a file holds its
    // name (the output folder itself is no culprit then).
    let named = if std::fs::symlink_metadata(&base).is_ok_and(|_| !base.is_dir()) {
        base.clone()
    } else {
        output.to_path_buf()
    };
    let output = named.as_path();
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(write_err(output))?;
    }
    std::fs::create_dir_all(tmp.join(POINTS)).map_err(write_err(output))?;
    manifest.save(&tmp).map_err(|e| match e {
        StoreError::Write { cause, .. } => StoreError::Write {
            path: output.to_path_buf(),
            cause,
        },
        e => e,
    })?;
    place_run_dir(&tmp, &base, &stamp, suffix)
}

/// Renames the folder `tmp` (made whole beside them) to a free `<stamp><suffix>[-n]` in `base`;
/// the name it got.
pub fn place_run_dir(
    tmp: &Path,
    base: &Path,
    stamp: &str,
    suffix: &str,
) -> Result<PathBuf, StoreError> {
    let mut n = 1;
    loop {
        let dir = match n {
            1 => base.join(format!("{stamp}{suffix}")),
            _ => base.join(format!("{stamp}{suffix}-{n}")),
        };
        if !dir.exists() && std::fs::rename(tmp, &dir).is_ok() {
            return Ok(dir);
        }
        n += 1;
        if n > 1000 {
            return Err(StoreError::Write {
                path: dir,
                cause: Cause::NoFreeName,
            });
        }
    }
}

/// Which top-level parts of two spec texts differ (`axis`, `timing`, `flags`, ...).
pub fn spec_changes(old: &str, new: &str) -> Vec<String> {
    let parse = |t: &str| t.parse::<toml::Table>().unwrap_or_default();
    let (a, b) = (parse(old), parse(new));
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let changed: Vec<String> = keys
        .into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| format!("`{k}`"))
        .collect();
    if changed.is_empty() && old != new {
        // The texts differ where no value does: the message must still say what.
        return vec!["its comments or layout only (no key's value)".into()];
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_changes_name_the_keys() {
        let a = "bench=\"b\"\nflags=[\"-O3\"]\n[[axis]]\nname=\"t\"\nrange=[1,2]\n";
        let b = "bench=\"b\"\nflags=[\"-O2\"]\n[[axis]]\nname=\"t\"\nrange=[1,3]\n";
        assert_eq!(spec_changes(a, b), ["`axis`", "`flags`"]);
        assert_eq!(
            spec_changes(a, &format!("# a comment\n{a}")),
            ["its comments or layout only (no key's value)"]
        );
    }
}
