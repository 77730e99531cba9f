//! Stage `store`: the run folder, its results CSV (one flushed row per point) and its manifest.
//!
//! A row is written with one `write` call of the whole record and the file is never rewritten, so
//! killing the process (SIGKILL included) leaves every finished row; a row torn by a crash in the
//! middle of that call is cut off when the run is resumed.

use crate::points::Point;
use crate::spec::Spec;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

pub const RESULTS: &str = "results.csv";
pub const MANIFEST: &str = "manifest.json";
pub const POINTS: &str = "points";
/// The `state` of a `sweep build` folder's manifest: builds only, never a run to resume.
pub const BUILD_STATE: &str = "build";
/// The control re-runs (`control_every`): rows of points measured a second time, in a fresh
/// process, with the header of `results.csv`.
pub const CONTROLS: &str = "controls.csv";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, Default)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    /// `,` between fields, `.` as decimal mark (RFC 4180).
    #[default]
    Comma,
    /// `;` between fields, `,` as decimal mark (spreadsheets in uk, ru, pt, es locales).
    Semicolon,
}

impl Dialect {
    pub fn delimiter(self) -> u8 {
        match self {
            Dialect::Comma => b',',
            Dialect::Semicolon => b';',
        }
    }

    pub fn number(self, v: f64) -> String {
        let s = format!("{v}");
        match self {
            Dialect::Comma => s,
            Dialect::Semicolon => s.replace('.', ","),
        }
    }

    /// The dialect's name, as `--csv-dialect` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Comma => "comma",
            Dialect::Semicolon => "semicolon",
        }
    }

    /// Reads a number written in this dialect.
    pub fn parse_number(self, s: &str) -> Option<f64> {
        match self {
            Dialect::Comma => s.trim().parse().ok(),
            Dialect::Semicolon => s.trim().replace(',', ".").parse().ok(),
        }
    }

    /// The dialect of a CSV, from its header line.
    pub fn detect(header: &str) -> Dialect {
        if header.contains(';') && !header.contains(',') {
            Dialect::Semicolon
        } else {
            Dialect::Comma
        }
    }
}

/// What happened to a point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    Noisy,
    Unstable,
    BuildFailed,
    RunFailed,
    WrongResult,
    Timeout,
    NoMetric,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Noisy => "noisy",
            Status::Unstable => "unstable",
            Status::BuildFailed => "build_failed",
            Status::RunFailed => "run_failed",
            Status::WrongResult => "wrong_result",
            Status::Timeout => "timeout",
            Status::NoMetric => "no_metric",
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        [
            Status::Ok,
            Status::Noisy,
            Status::Unstable,
            Status::BuildFailed,
            Status::RunFailed,
            Status::WrongResult,
            Status::Timeout,
            Status::NoMetric,
        ]
        .into_iter()
        .find(|st| st.as_str() == s)
    }

    /// The point measured something (its metric cells are filled).
    pub fn measured(self) -> bool {
        matches!(self, Status::Ok | Status::Noisy | Status::Unstable)
    }
}

/// The GPU a point ran on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuTag {
    pub index: String,
    pub name: String,
    pub uuid: String,
}

/// One finished point.
#[derive(Clone, Debug)]
pub struct Row {
    pub point: Point,
    pub status: Status,
    pub values: BTreeMap<String, f64>,
    pub build_s: f64,
    pub run_s: f64,
    pub cached: bool,
    pub gpu: GpuTag,
    /// One line: why the point failed, naming the log.
    pub error: String,
}

/// With `repeat` > 1: the spread of a metric's value over the processes that measured it,
/// (largest - smallest) / median.
pub fn repeat_spread_column(m: &crate::spec::Metric) -> String {
    format!("{}_repeat_spread", m.name)
}

/// Where pass `p` of a run with `repeat` > 1 keeps its rows (same header as `results.csv`).
pub fn pass_csv(run_dir: &Path, pass: u32) -> PathBuf {
    run_dir.join("passes").join(format!("pass-{pass}.csv"))
}

/// The CSV's columns, fixed from the spec before the first point.
pub fn header(spec: &Spec) -> Vec<String> {
    use crate::spec::{LEADING_COLUMNS, STATUS_COLUMN, TRAILING_COLUMNS};
    let mut h: Vec<String> = LEADING_COLUMNS.iter().map(|c| c.to_string()).collect();
    h.extend(spec.axis_names());
    h.push(STATUS_COLUMN.into());
    for m in &spec.metrics {
        h.extend(m.columns());
        if spec.repeat > 1 {
            h.push(repeat_spread_column(m));
        }
        h.extend(spec.profile_columns(m));
    }
    h.extend(spec.profile.iter().flat_map(|p| p.point_columns()));
    h.extend(TRAILING_COLUMNS.iter().map(|c| c.to_string()));
    h
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot write `{path}`: {reason}")]
    Write { path: PathBuf, reason: String },
    #[error("cannot read `{path}`: {reason}")]
    Read { path: PathBuf, reason: String },
    #[error("`{path}` has another header than this spec gives (hint: the spec, or the columns this version of sweep writes, changed; use --force to start a new run)")]
    HeaderMismatch { path: PathBuf },
}

fn write_err(path: &Path) -> impl Fn(std::io::Error) -> StoreError + '_ {
    move |e| StoreError::Write {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
}

/// Appends rows to `results.csv`, one `write` per row, flushed at once.
pub struct CsvSink {
    path: PathBuf,
    file: std::fs::File,
    header: Vec<String>,
    dialect: Dialect,
}

/// One CSV record in `dialect`: CRLF line end; a field is quoted (RFC 4180: `"`, inner `"`
/// doubled) when it holds the separator, a tab, a quote, a line break or edge spaces, and text also
/// when it holds the other dialect's separator, because a spreadsheet's import may split on `,`
/// and `;` at once (LibreOffice's default does); a number's decimal comma stays bare.
pub fn record(fields: &[String], dialect: Dialect) -> Vec<u8> {
    let mut out = String::new();
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push(dialect.delimiter() as char);
        }
        // A decimal comma of the semicolon dialect is the one `,` left bare.
        let quote = f.contains([dialect.delimiter() as char, '\t', '"', '\r', '\n'])
            || (f.contains([',', ';']) && dialect.parse_number(f).is_none())
            || f.starts_with(' ')
            || f.ends_with(' ');
        if quote {
            out.push('"');
            out.push_str(&f.replace('"', "\"\""));
            out.push('"');
        } else {
            out.push_str(f);
        }
    }
    out.push_str("\r\n");
    out.into_bytes()
}

impl CsvSink {
    /// Creates the CSV with its header, or opens an existing one to append (resume).
    pub fn open(path: &Path, header: Vec<String>, dialect: Dialect) -> Result<CsvSink, StoreError> {
        let fresh = !path.exists();
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(write_err(path))?;
        let mut sink = CsvSink {
            path: path.to_path_buf(),
            file,
            header,
            dialect,
        };
        if fresh {
            let h = record(&sink.header, dialect);
            sink.file.write_all(&h).map_err(write_err(path))?;
        }
        Ok(sink)
    }

    pub fn fields(&self, row: &Row) -> Vec<String> {
        let d = self.dialect;
        let ok = row.status.measured();
        self.header
            .iter()
            .map(|col| match col.as_str() {
                "point_id" => row.point.id.clone(),
                "index" => row.point.index.to_string(),
                "status" => row.status.as_str().to_string(),
                "build_s" => d.number((row.build_s * 1000.0).round() / 1000.0),
                "run_s" => d.number((row.run_s * 1000.0).round() / 1000.0),
                "cached" => (row.cached as u8).to_string(),
                "gpu_index" => row.gpu.index.clone(),
                "gpu_name" => row.gpu.name.clone(),
                "gpu_uuid" => row.gpu.uuid.clone(),
                "error" => row.error.clone(),
                other => match (row.point.get(other), row.values.get(other)) {
                    (Some(v), _) => match v {
                        crate::spec::Value::Float(f) => d.number(*f),
                        v => v.to_string(),
                    },
                    (None, Some(v)) if ok => d.number(*v),
                    _ => String::new(),
                },
            })
            .collect()
    }

    /// Appends one row in a single write, then flushes.
    pub fn append(&mut self, row: &Row) -> Result<(), StoreError> {
        let bytes = record(&self.fields(row), self.dialect);
        self.file.write_all(&bytes).map_err(write_err(&self.path))?;
        self.file.flush().map_err(write_err(&self.path))
    }

    pub fn sync(&self) {
        let _ = self.file.sync_all();
    }
}

/// The rows already in a CSV: point id -> fields. A torn last row is cut off first; a CSV torn
/// inside its header is removed (it held no row). A missing CSV holds no row.
pub fn read_done(
    path: &Path,
    header: &[String],
) -> Result<BTreeMap<String, Vec<String>>, StoreError> {
    let read_err = |e: String| StoreError::Read {
        path: path.to_path_buf(),
        reason: e,
    };
    if !path.exists() {
        return Ok(BTreeMap::new());
    }
    let bytes = std::fs::read(path).map_err(|e| read_err(e.to_string()))?;
    if !bytes.contains(&b'\n') {
        std::fs::remove_file(path).map_err(|e| read_err(e.to_string()))?;
        return Ok(BTreeMap::new());
    }
    // Keep whole lines only: a crash can leave a partial last record.
    let whole = bytes
        .iter()
        .rposition(|&b| b == b'\n')
        .map(|i| i + 1)
        .unwrap_or(0);
    if whole < bytes.len() {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| read_err(e.to_string()))?;
        f.set_len(whole as u64)
            .map_err(|e| read_err(e.to_string()))?;
    }
    let text = &bytes[..whole];
    let first = text.split(|&b| b == b'\n').next().unwrap_or(&[]);
    let dialect = Dialect::detect(&String::from_utf8_lossy(first));
    let mut r = csv::ReaderBuilder::new()
        .delimiter(dialect.delimiter())
        .flexible(true)
        .from_reader(text);
    let got: Vec<String> = r
        .headers()
        .map_err(|e| read_err(e.to_string()))?
        .iter()
        .map(String::from)
        .collect();
    if got != header {
        return Err(StoreError::HeaderMismatch {
            path: path.to_path_buf(),
        });
    }
    let mut done = BTreeMap::new();
    for rec in r.records() {
        let Ok(rec) = rec else { continue };
        if rec.len() != header.len() {
            continue;
        }
        let fields: Vec<String> = rec.iter().map(String::from).collect();
        done.insert(fields[0].clone(), fields);
    }
    Ok(done)
}

/// GPU state read at the start and the end of a run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct GpuState {
    pub index: String,
    pub name: String,
    pub uuid: String,
    pub driver: String,
    pub compute_cap: String,
    pub sm_clock_mhz: String,
    pub mem_clock_mhz: String,
    pub temperature_c: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct MetricInfo {
    pub name: String,
    pub unit: String,
    pub column: String,
}

/// `manifest.json`: what ran, where, with what.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Manifest {
    pub sweep: String,
    /// The spec's path as given to `sweep run`, relative to `cwd` when relative.
    pub spec_path: String,
    /// The working folder `sweep run` started in (absolute), so that `sweep resume` finds the
    /// spec, and resolves it the same way, from any folder.
    #[serde(default)]
    pub cwd: String,
    pub spec_hash: String,
    pub spec: String,
    pub bench: String,
    pub axes: Vec<String>,
    pub metrics: Vec<MetricInfo>,
    pub columns: Vec<String>,
    pub dialect: Dialect,
    pub points_total: usize,
    pub point_ids: Vec<String>,
    pub shard: Option<String>,
    pub split: String,
    pub order: String,
    pub seed: u64,
    pub jobs: usize,
    pub host: String,
    pub git_commit: String,
    pub command: Vec<String>,
    pub compiler: String,
    pub compiler_version: String,
    pub arch: Option<String>,
    pub gpus_start: Vec<GpuState>,
    pub gpus_end: Vec<GpuState>,
    pub started: String,
    pub finished: Option<String>,
    /// `running`, `finished` or `interrupted`.
    pub state: String,
    pub counts: BTreeMap<String, usize>,
    /// Times of each point's build and run, seconds since the start (for overlap checks).
    #[serde(default)]
    pub timeline: Vec<TimelineEntry>,
    #[serde(default)]
    pub resumed: Vec<String>,
    /// Command-line overrides of the spec (`-a`, `--set`, `--timing`, `--filter`), as arguments;
    /// `spec` is the spec with them applied, and `sweep resume` applies them again.
    #[serde(default)]
    pub overrides: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TimelineEntry {
    pub point_id: String,
    pub build_start: f64,
    pub build_end: f64,
    pub run_start: f64,
    pub run_end: f64,
    pub cached: bool,
}

impl Manifest {
    pub fn load(dir: &Path) -> Result<Manifest, StoreError> {
        let path = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&path).map_err(|e| StoreError::Read {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        serde_json::from_str(&text).map_err(|e| StoreError::Read {
            path,
            reason: e.to_string(),
        })
    }

    /// Written to a temporary file and renamed, so a crash never leaves half a manifest.
    pub fn save(&self, dir: &Path) -> Result<(), StoreError> {
        let path = dir.join(MANIFEST);
        let tmp = dir.join(".manifest.json.tmp");
        let text = serde_json::to_string_pretty(self).map_err(|e| StoreError::Write {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        std::fs::write(&tmp, text).map_err(write_err(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(write_err(&path))
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
    let tmp = base.join(format!(".new-{}", std::process::id()));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(write_err(&tmp))?;
    }
    std::fs::create_dir_all(tmp.join(POINTS)).map_err(write_err(&tmp))?;
    manifest.save(&tmp)?;
    let mut n = 1;
    loop {
        let dir = match n {
            1 => base.join(format!("{stamp}{suffix}")),
            _ => base.join(format!("{stamp}{suffix}-{n}")),
        };
        if !dir.exists() && std::fs::rename(&tmp, &dir).is_ok() {
            return Ok(dir);
        }
        n += 1;
        if n > 1000 {
            return Err(StoreError::Write {
                path: dir,
                reason: "cannot find a free run folder name".into(),
            });
        }
    }
}

/// Which top-level parts of two spec texts differ (`axis`, `timing`, `flags`, ...).
pub fn spec_changes(old: &str, new: &str) -> Vec<String> {
    let parse = |t: &str| t.parse::<toml::Table>().unwrap_or_default();
    let (a, b) = (parse(old), parse(new));
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| format!("`{k}`"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Value;

    fn row(id: &str, status: Status) -> Row {
        Row {
            point: Point {
                index: 3,
                id: id.into(),
                values: vec![
                    ("threads".into(), Value::Int(32)),
                    ("v".into(), Value::Str("a,\"b\"".into())),
                ],
            },
            status,
            values: BTreeMap::from([("mflops".to_string(), 1234.5)]),
            build_s: 1.23456,
            run_s: 0.5,
            cached: true,
            gpu: GpuTag::default(),
            error: String::new(),
        }
    }

    fn spec() -> Spec {
        Spec::parse(
            Path::new("t.toml"),
            "bench=\"b\"\n[[axis]]\nname=\"threads\"\nrange=[1,2]\n[[axis]]\nname=\"v\"\nvalues=[\"x\"]\n[[metric]]\npattern=\"mflops\"\n",
        )
        .unwrap()
    }

    #[test]
    fn rows_follow_the_header_and_rfc4180() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("r.csv");
        let mut sink = CsvSink::open(&path, header(&spec()), Dialect::Comma).unwrap();
        sink.append(&row("abc", Status::Ok)).unwrap();
        sink.append(&row("def", Status::RunFailed)).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "point_id,index,threads,v,status,mflops,build_s,run_s,cached,gpu_index,gpu_name,gpu_uuid,error\r\n\
             abc,3,32,\"a,\"\"b\"\"\",ok,1234.5,1.235,0.5,1,,,,\r\n\
             def,3,32,\"a,\"\"b\"\"\",run_failed,,1.235,0.5,1,,,,\r\n"
        );
    }

    #[test]
    fn text_with_either_separator_is_quoted_in_either_dialect() {
        let f = |v: &[&str], d| {
            String::from_utf8(record(
                &v.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                d,
            ))
            .unwrap()
        };
        // LibreOffice's default import splits on `,` and `;` at once.
        assert_eq!(f(&["a;b", "1.5", "x"], Dialect::Comma), "\"a;b\",1.5,x\r\n");
        assert_eq!(
            f(&["a,b", "1,5", " x"], Dialect::Semicolon),
            "\"a,b\";1,5;\" x\"\r\n"
        );
        assert_eq!(
            f(&["say \"hi\"", ""], Dialect::Comma),
            "\"say \"\"hi\"\"\",\r\n"
        );
    }

    #[test]
    fn semicolon_dialect_uses_decimal_commas() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("r.csv");
        let mut sink = CsvSink::open(&path, header(&spec()), Dialect::Semicolon).unwrap();
        sink.append(&row("abc", Status::Ok)).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("point_id;index;threads;v;status;mflops;build_s"),
            "{text}"
        );
        assert!(
            text.contains("abc;3;32;\"a,\"\"b\"\"\";ok;1234,5;1,235;0,5;1;;;;"),
            "{text}"
        );
        assert_eq!(Dialect::Semicolon.parse_number("1234,5"), Some(1234.5));
    }

    #[test]
    fn a_torn_last_row_is_cut_and_finished_rows_are_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("r.csv");
        let h = header(&spec());
        let mut sink = CsvSink::open(&path, h.clone(), Dialect::Comma).unwrap();
        sink.append(&row("abc", Status::Ok)).unwrap();
        drop(sink);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(b"def,4,33,x,o").unwrap();
        let done = read_done(&path, &h).unwrap();
        assert_eq!(done.keys().collect::<Vec<_>>(), ["abc"]);
        assert!(std::fs::read_to_string(&path).unwrap().ends_with("\r\n"));
        let mut other = h.clone();
        other.push("extra".into());
        assert!(matches!(
            read_done(&path, &other),
            Err(StoreError::HeaderMismatch { .. })
        ));
    }

    #[test]
    fn spec_changes_name_the_keys() {
        let a = "bench=\"b\"\nflags=[\"-O3\"]\n[[axis]]\nname=\"t\"\nrange=[1,2]\n";
        let b = "bench=\"b\"\nflags=[\"-O2\"]\n[[axis]]\nname=\"t\"\nrange=[1,3]\n";
        assert_eq!(spec_changes(a, b), ["`axis`", "`flags`"]);
    }
}
