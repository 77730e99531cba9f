//! A run folder, read back: [`RunDir`] names every file in it, [`Run::open`] reads it once into
//! the typed value that every reader (analyze, compare, export, report, merge, the CLI) takes.
//!
//! A path a user gives is a run folder or a results CSV; [`RunDir::locate`] decides which, once.
//! A CSV with no `manifest.json` beside it (a hand-made one, a copy) is read too: its axes and
//! metrics are guessed from its header ([`columns::guess_columns`]).

use super::cells::Table;
use super::columns::{self, MetricColumn};
use super::read::Csv;

/// A row of a results CSV: its cells, trimmed (one allocation a row, not one a cell).
pub type Row = csv::StringRecord;
use super::schema::{Dialect, INDEX_COLUMN, TEXT_COLUMNS};
use super::{Cause, Manifest, StoreError, CONTROLS, MANIFEST, POINTS, RESULTS};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `analysis.md`, `analysis.json`, `analysis.csv`: what `sweep analyze` writes beside the results.
pub const ANALYSIS_MD: &str = "analysis.md";
pub const ANALYSIS_JSON: &str = "analysis.json";
pub const ANALYSIS_CSV: &str = "analysis.csv";
/// The charts' folder.
pub const CHARTS: &str = "charts";
/// The report page.
pub const REPORT: &str = "report.html";
/// Where `sweep export` writes unless told.
pub const EXPORT: &str = "export";
/// The folder of the passes' and rechecks' rows.
pub const PASSES: &str = "passes";
/// The lock a sweep holds on the run folder while it writes it.
pub const RUN_LOCK: &str = "run.lock";

/// A run folder: the names of its files, in one place.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RunDir {
    dir: PathBuf,
}

/// What a path given for a run stands for ([`RunDir::locate`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Located {
    /// A results CSV, and the run folder it lies in when it has a manifest beside it.
    Csv { csv: PathBuf, run: Option<RunDir> },
    /// A folder without a results CSV.
    NoResults,
    /// Nothing there.
    NotFound,
}

impl RunDir {
    pub fn new(dir: impl Into<PathBuf>) -> RunDir {
        RunDir { dir: dir.into() }
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    pub fn results(&self) -> PathBuf {
        self.dir.join(RESULTS)
    }

    pub fn manifest(&self) -> PathBuf {
        self.dir.join(MANIFEST)
    }

    pub fn controls(&self) -> PathBuf {
        self.dir.join(CONTROLS)
    }

    pub fn points(&self) -> PathBuf {
        self.dir.join(POINTS)
    }

    /// The folder of point `id`: its rendered headers, build log, program output.
    pub fn point(&self, id: &str) -> PathBuf {
        self.points().join(id)
    }

    pub fn passes(&self) -> PathBuf {
        self.dir.join(PASSES)
    }

    /// The lock one sweep at a time holds on the run (two would append to one `results.csv`).
    pub fn lock(&self) -> PathBuf {
        self.dir.join(RUN_LOCK)
    }

    /// The file whose lock keeps CUDA context creation and measurement apart on one GPU: the
    /// timing core holds it (flock) while it measures and while it creates its context, so a
    /// program started early never creates its context while another measures. One per GPU (its
    /// index; `None`: the host), as an absolute path: the program runs in its point's folder.
    pub fn measure_lock(&self, gpu_index: Option<&str>) -> PathBuf {
        let lock = self
            .dir
            .join(format!("measure-{}.lock", gpu_index.unwrap_or("host")));
        std::path::absolute(&lock).unwrap_or(lock)
    }

    pub fn analysis_md(&self) -> PathBuf {
        self.dir.join(ANALYSIS_MD)
    }

    pub fn analysis_json(&self) -> PathBuf {
        self.dir.join(ANALYSIS_JSON)
    }

    pub fn analysis_csv(&self) -> PathBuf {
        self.dir.join(ANALYSIS_CSV)
    }

    pub fn charts(&self) -> PathBuf {
        self.dir.join(CHARTS)
    }

    pub fn report(&self) -> PathBuf {
        self.dir.join(REPORT)
    }

    pub fn export(&self) -> PathBuf {
        self.dir.join(EXPORT)
    }

    /// `build-inputs.txt`: the files the run's builds read, which a resume checks.
    pub fn build_inputs(&self) -> PathBuf {
        self.dir.join(super::BUILD_INPUTS)
    }

    /// Whether a sweep holds the run's lock now: a run whose manifest says `running` but whose
    /// lock nobody holds was killed (SIGKILL, the machine lost) before it could say so. Only
    /// looks: the lock file is not made where there is none.
    pub fn in_use(&self) -> bool {
        let Ok(file) = std::fs::File::open(self.lock()) else {
            return false;
        };
        matches!(
            file.try_lock_shared(),
            Err(std::fs::TryLockError::WouldBlock)
        )
    }

    /// Whether the folder is a run: it has a manifest (every run folder has one from its start).
    pub fn is_run(&self) -> bool {
        // A manifest.json that is no file (a folder, a pipe) still makes a run folder, whose
        // reader refuses it by name, not a folder read as a CSV alone or "with no manifest".
        self.manifest().exists()
    }

    /// The run folder a results CSV lies in, when it has a manifest beside it.
    pub fn of_csv(csv: &Path) -> Option<RunDir> {
        csv.parent()
            .map(RunDir::new)
            .filter(|d| d.is_run() && csv.file_name().is_some())
    }

    /// The results CSV that `path` names where one is expected: a run folder's `results.csv`
    /// (whether or not it has one yet), else `path` itself.
    pub fn results_of(path: &Path) -> PathBuf {
        match RunDir::locate(path) {
            Located::Csv { csv, .. } => csv,
            _ if path.is_dir() => RunDir::new(path).results(),
            _ => path.to_path_buf(),
        }
    }

    /// What `path` stands for: a run folder stands for its `results.csv`; a file is a CSV.
    pub fn locate(path: &Path) -> Located {
        if path.is_dir() {
            let dir = RunDir::new(path);
            let csv = dir.results();
            // A results.csv that is no file (a folder, a pipe) too: its reader refuses it by
            // name, where "holds no results.csv" would deny what the user sees.
            if csv.exists() {
                let run = dir.is_run().then_some(dir);
                Located::Csv { csv, run }
            } else {
                Located::NoResults
            }
        } else if path.exists() {
            // Not a regular file (a pipe, a device) too: its reader refuses it, naming it.
            Located::Csv {
                csv: path.to_path_buf(),
                run: RunDir::of_csv(path),
            }
        } else {
            Located::NotFound
        }
    }
}

/// A results CSV (a run's `results.csv`, its `controls.csv`, or any CSV sweep wrote), read once:
/// the manifest when it has one, the header, the rows, which columns are axes and metrics.
#[derive(Clone, Debug)]
pub struct Run {
    /// The CSV read.
    pub path: PathBuf,
    /// The run folder it lies in, when it has a manifest beside it.
    pub dir: Option<RunDir>,
    pub manifest: Option<Manifest>,
    pub dialect: Dialect,
    /// Column names, trimmed.
    pub header: Vec<String>,
    /// Every record but blank ones, in file order, cells trimmed (a point written twice is there
    /// twice; a last record cut short by a crash is left out, with a warning).
    pub rows: Vec<Row>,
    pub axes: Vec<String>,
    pub metrics: Vec<MetricColumn>,
}

impl Run {
    /// Reads `path`: a run folder (its `results.csv`) or a results CSV (with the manifest beside
    /// it, when there is one).
    pub fn open(path: &Path) -> Result<Run, StoreError> {
        refuse_staging(path)?;
        match RunDir::locate(path) {
            Located::Csv { csv, run } => Run::read(&csv, run),
            Located::NoResults => Err(StoreError::NoResults {
                path: path.to_path_buf(),
            }),
            Located::NotFound => Err(StoreError::NotFound {
                path: path.to_path_buf(),
            }),
        }
    }

    /// Reads the CSV `path` of run folder `dir` (none: a CSV alone; its columns are guessed).
    pub fn read(path: &Path, dir: Option<RunDir>) -> Result<Run, StoreError> {
        let read_err = |cause: Cause| StoreError::Read {
            path: path.to_path_buf(),
            cause,
        };
        let manifest = match &dir {
            Some(d) => Some(Manifest::load(d.path())?),
            None => None,
        };
        let mut bytes = super::read::read_file(path)?;
        if bytes.is_empty() {
            return Err(StoreError::Empty {
                path: path.to_path_buf(),
            });
        }
        let (readable, torn) = super::read::readable(&bytes, super::read::dialect_of(&bytes));
        if let Some(torn) = torn {
            torn.warn(path);
            bytes.truncate(readable);
        }
        let (dialect, mut reader) = super::read::reader(&bytes, None);
        let raw: Vec<String> = reader
            .headers()
            .map_err(|e| read_err(e.into()))?
            .iter()
            .map(str::to_string)
            .collect();
        let header: Vec<String> = raw.iter().map(|h| h.trim().to_string()).collect();
        // Two columns of one name: every reader takes the first, and the second's values are
        // lost unsaid (or read as the first's twice).
        let mut seen = std::collections::HashMap::new();
        for (i, h) in header.iter().enumerate().filter(|(_, h)| !h.is_empty()) {
            if let Some(first) = seen.insert(h.as_str(), i) {
                return Err(StoreError::DuplicateColumn {
                    path: path.to_path_buf(),
                    column: h.clone(),
                    first: first + 1,
                    second: i + 1,
                });
            }
        }
        let mut rows = Vec::new();
        let mut record = Row::new();
        // A record of another width is refused (but a last one cut short, kept as short as
        // it was left): reading on without it would lose a point unsaid.
        let mut widths = super::read::Widths::new(header.len());
        let mut last_start = None;
        loop {
            match reader.read_record(&mut record) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => return Err(read_err(super::read::BadRecord::of(&e, &bytes).into())),
            }
            if record.iter().all(|c| c.trim().is_empty()) {
                continue;
            }
            let at = record.position().map_or(0, |p| p.byte());
            last_start = Some(at);
            widths
                .check(|| super::read::line_at(&bytes, at), record.len())
                .map_err(|e| read_err(e.into()))?;
            // A row as large as its cells (the record's buffers, read into again, are larger).
            let mut row = Row::with_capacity(record.as_slice().len(), record.len());
            for cell in &record {
                row.push_field(unpadded(cell, dialect));
            }
            rows.push(row);
        }
        // A quote opened in a row and never closed makes every line after it one field of it:
        // the rows after it would be lost unsaid.
        if let Some(line) = last_start.and_then(|at| super::read::open_quote_line(&bytes, at)) {
            return Err(StoreError::OpenQuote {
                path: path.to_path_buf(),
                line,
            });
        }
        // A last row of fewer fields than the header, line break or not, is torn: left out, as
        // every reader leaves it out ([`super::read::readable`]).
        if let (Some(row), Some(at)) = (rows.last(), last_start) {
            if row.len() < header.len() {
                let torn = super::read::TornRow {
                    line: super::read::line_at(&bytes, at),
                    why: format!("{} of the header's {} fields", row.len(), header.len()),
                };
                torn.warn(path);
                rows.pop();
            }
        }
        rows.shrink_to_fit();
        // An axis column removed or renamed by hand, or an axis added to the manifest by hand:
        // every row would be the one point `axis=`, compared as such, and no curve read along it.
        if let (Some(m), Some(d)) = (&manifest, &dir) {
            m.check_lists(d.path())?;
        }
        if let Some(m) = &manifest {
            if let Some(axis) = m.axes.iter().find(|a| !header.contains(a)) {
                return Err(StoreError::MissingAxis {
                    path: path.to_path_buf(),
                    column: axis.clone(),
                });
            }
        }
        let (axes, metrics) = match &manifest {
            Some(m) => (
                m.axes.clone(),
                columns::from_manifest(
                    &dir.as_ref().map_or_else(PathBuf::new, RunDir::manifest),
                    m,
                    path,
                    &header,
                )?,
            ),
            None => columns::guess_columns(path, &header, &rows, dialect)?,
        };
        // The manifest's header is the run's: analyze and compare read a CSV whose header another
        // order or name had made, where export and report refused it (review 13b F8: a
        // hand-edited manifest or CSV was read two ways). After the checks that name a missing
        // axis or metric column, which say more.
        if let Some(m) = manifest.as_ref().filter(|m| !m.columns.is_empty()) {
            // As written: a name padded by hand (` threads `) is another header (review 16b B13).
            if m.columns != raw {
                return Err(StoreError::HeaderMismatch {
                    path: path.to_path_buf(),
                    difference: super::read::header_difference(&raw, &m.columns),
                });
            }
        }
        let run = Run {
            path: path.to_path_buf(),
            dir,
            manifest,
            dialect,
            header,
            rows,
            axes,
            metrics,
        };
        // Every reader of a run reads its rows as its points': checked once, here.
        if let Some(m) = &run.manifest {
            super::rows::RowCheck::new(path, m, &run.header, dialect).all(&run.rows)?;
        }
        if run.is_results() {
            run.check_ids()?;
        }
        Ok(run)
    }

    /// The run folder given, which must be one (it has a manifest): for the commands that need
    /// a run's manifest (`export`, `report`). A run that has no whole row yet has none.
    pub fn open_dir(dir: &Path) -> Result<Run, StoreError> {
        refuse_staging(dir)?;
        let run = RunDir::new(dir);
        if !run.is_run() {
            return Err(StoreError::NotARun {
                dir: dir.to_path_buf(),
            });
        }
        let csv = run.results();
        // A results.csv that is no file (a pipe) is for the reader to refuse, not to read here.
        let started = std::fs::metadata(&csv).is_ok_and(|m| !m.is_file())
            || std::fs::read(&csv).is_ok_and(|b| b.contains(&b'\n'));
        if started {
            let read = Run::read(&csv, Some(run))?;
            // Its control re-runs are read as its rows are, though export and report draw them
            // from the analysis: an edited controls.csv was refused by analyze and compare alone
            // (review 17 C1).
            read.controls()?;
            return Ok(read);
        }
        // A run that has written no whole line yet: its header is the manifest's, no row.
        let manifest = Manifest::load(run.path())?;
        manifest.check_lists(run.path())?;
        let metrics = columns::from_manifest(&run.manifest(), &manifest, &csv, &manifest.columns)?;
        Ok(Run {
            path: csv,
            dir: Some(run),
            dialect: manifest.dialect,
            header: manifest.columns.clone(),
            rows: Vec::new(),
            axes: manifest.axes.clone(),
            metrics,
            manifest: Some(manifest),
        })
    }

    /// Whether the CSV read is its run folder's `results.csv` (not its controls, nor a copy).
    pub fn is_results(&self) -> bool {
        self.dir.as_ref().is_some_and(|d| d.results() == self.path)
    }

    pub fn column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    /// The cell of `row` in column `col`, empty past the end of a short row.
    pub fn cell<'a>(&'a self, row: &'a Row, col: usize) -> &'a str {
        row.get(col).unwrap_or("")
    }

    /// A cell as a number, in the run's dialect.
    pub fn number(&self, cell: &str) -> Option<f64> {
        self.dialect.parse_number(cell)
    }

    /// The run's control re-runs (`controls.csv` beside the CSV, read like it); `None` when it
    /// has none.
    pub fn controls(&self) -> Result<Option<Run>, StoreError> {
        let Some(path) = self
            .path
            .parent()
            .map(|d| d.join(CONTROLS))
            // Anything of that name is read (a FIFO or a folder is refused as no file): taken
            // for none, it made compare's uncertainties narrower unsaid (review 12b L6).
            .filter(|p| p.symlink_metadata().is_ok())
        else {
            return Ok(None);
        };
        // A file a kill left before its header's line was whole (created, nothing written yet)
        // holds no re-run, as a resume reads it (review 18b F7: every reader refused it).
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file())
            && crate::files::read_regular(&path).is_ok_and(|b| !b.contains('\n'))
        {
            return Ok(None);
        }
        let again = Run::read(&path, RunDir::of_csv(&path))?;
        // A re-run of a point the manifest does not list pairs with nothing of this run, or
        // with a row of another one under an edited id (review 14b F4: it was read).
        if let Some(id) = again.column(crate::schema::POINT_ID_COLUMN) {
            again.foreign_row(again.rows.iter().map(|r| again.cell(r, id)))?;
        }
        Ok(Some(again))
    }

    /// The points' rows as the run's results: one row per point (two rows of one point are refused), whole
    /// lines only (a torn last row is left out, the file untouched), in sweep order (by
    /// `index`), each cell typed from its column. The header must be the manifest's.
    pub fn points(&self) -> Result<Table, StoreError> {
        let header = self.manifest.as_ref().map_or(&self.header, |m| &m.columns);
        let done = self.done()?;
        let index = header.iter().position(|c| c == INDEX_COLUMN);
        let mut rows: Vec<Vec<String>> = done.into_values().collect();
        rows.sort_by_key(|r| {
            index
                .and_then(|i| r.get(i))
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(usize::MAX)
        });
        let dialect = self.manifest.as_ref().map_or(self.dialect, |m| m.dialect);
        Ok(Table::typed(header.clone(), rows, dialect, &TEXT_COLUMNS))
    }

    /// The rows of the points, by point id (two rows of one point are refused), whole lines only: a torn last row
    /// is left out and the file untouched. The header must be the manifest's.
    pub fn done(&self) -> Result<BTreeMap<String, Vec<String>>, StoreError> {
        let header = self.manifest.as_ref().map_or(&self.header, |m| &m.columns);
        // Two rows of one point are refused in a run (its manifest beside it); a CSV alone keeps
        // the last row of each id, as before.
        let done = match &self.manifest {
            Some(_) => super::read::read_done_as_is(&self.path, header)?,
            None => super::read::read_last_of_each_id(&self.path, header)?,
        };
        self.foreign_row(done.keys().map(String::as_str))?;
        Ok(done)
    }

    /// In a run (its manifest beside the CSV): one row per point id, every id one the manifest
    /// lists, checked on the rows read (every reader of a run refuses the rest alike). A CSV
    /// alone may repeat an id.
    pub fn check_ids(&self) -> Result<(), StoreError> {
        let Some(c) = self
            .manifest
            .as_ref()
            .and(self.column(crate::schema::POINT_ID_COLUMN))
        else {
            return Ok(());
        };
        self.foreign_row(self.rows.iter().map(|r| self.cell(r, c)))?;
        let mut first: std::collections::HashMap<&str, usize> =
            std::collections::HashMap::with_capacity(self.rows.len());
        for (i, r) in self.rows.iter().enumerate() {
            let id = self.cell(r, c);
            if id.is_empty() {
                continue;
            }
            if let Some(at) = first.insert(id, i + 1) {
                return Err(StoreError::TwoRows {
                    path: self.path.clone(),
                    point: crate::units::visible(id).into_owned(),
                    first: at,
                    second: i + 1,
                });
            }
        }
        Ok(())
    }

    /// The first of `ids` (the rows' point ids, in file order) that the run's manifest does not
    /// list, as its error; none without a manifest, or one that lists no point (an old run's).
    pub fn foreign_row<'a>(&self, ids: impl Iterator<Item = &'a str>) -> Result<(), StoreError> {
        let Some(m) = self.manifest.as_ref() else {
            return Ok(());
        };
        match super::rows::unlisted(m, ids) {
            None => Ok(()),
            Some((i, id)) => {
                // Its row in the file: the ids come from the file in order, or by id.
                let row = self
                    .rows
                    .iter()
                    .position(|r| r.get(0) == Some(id))
                    .map_or(i + 1, |r| r + 1);
                Err(StoreError::ForeignRow {
                    path: self.path.clone(),
                    point: crate::units::visible(id).into_owned(),
                    row,
                })
            }
        }
    }

    /// The confidence target of the run's spec (`[timing] target_rel_ci`), else the default.
    pub fn target_rel_ci(&self) -> f64 {
        super::metric_status::target_rel_ci_of(self.manifest.as_ref())
    }

    /// `analysis.csv` beside the CSV, typed; `None` before the run is analysed.
    pub fn analysis(&self) -> Result<Option<Table>, StoreError> {
        let Some(path) = self.path.parent().map(|d| d.join(ANALYSIS_CSV)) else {
            return Ok(None);
        };
        // Only as a file: a FIFO at the name hung export (review 17 C5).
        let Ok(bytes) = crate::files::open_regular(&path).and_then(|mut f| {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut f, &mut bytes).map(|_| bytes)
        }) else {
            return Ok(None);
        };
        let err = |cause: Cause| StoreError::Read {
            path: path.clone(),
            cause,
        };
        let csv = Csv::parse(&bytes, None).map_err(|e| err(e.into()))?;
        let dialect = csv.dialect;
        // Its text cells (and the axis names of its header) were written defused for
        // spreadsheets; typed here as they were.
        let header: Vec<String> = csv
            .header
            .iter()
            .map(|h| super::formula_restored(h).to_string())
            .collect();
        let rows = csv
            .records
            .into_iter()
            .map(|r| {
                r.map(|r| {
                    r.iter()
                        .map(|f| super::formula_restored(f).to_string())
                        .collect()
                })
            })
            .collect::<Result<Vec<Vec<String>>, _>>()
            .map_err(|e| err(e.into()))?;
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
}

/// Makes `dir`, a folder of the run's own that a command writes into (`charts/`, `export/`); one
/// that is a symbolic link is refused, as a resume refuses a link in a run folder: sweep makes
/// none, and what it wrote there would land wherever the link points.
pub fn own_dir(dir: &Path) -> std::io::Result<()> {
    if dir.is_symlink() {
        return Err(std::io::Error::other(format!(
            "it is a symbolic link (to `{}`), which sweep never makes: what it writes there would land where it points (hint: remove the link)",
            std::fs::read_link(dir).unwrap_or_default().display()
        )));
    }
    std::fs::create_dir_all(dir)
}

/// A cell as the run wrote it, but a number padded with blanks (a hand-edited CSV): the number.
/// Text keeps its blanks: `"  lead"` is an axis value of its own, not `lead`.
fn unpadded(cell: &str, dialect: Dialect) -> &str {
    let t = cell.trim();
    if t.len() != cell.len() && (t.is_empty() || dialect.parse_number(t).is_some()) {
        t
    } else {
        cell
    }
}

/// A run or merge being made (or left by a killed sweep) in its hidden folder is no run to read
/// ([`super::staging`]): its rows are not the run's, and the folder may go at any moment.
fn refuse_staging(path: &Path) -> Result<(), StoreError> {
    if !super::staging::is_staging(path) {
        return Ok(());
    }
    let dir = match path.is_file() {
        true => path.parent().unwrap_or(path),
        false => path,
    };
    Err(StoreError::Staging {
        dir: dir.to_path_buf(),
    })
}
