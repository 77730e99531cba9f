//! Writing the results CSV: its header from the spec, and one flushed record per finished point.

use super::schema::{self, Dialect, Status};
use super::{write_err, StoreError};
use crate::points::Point;
use crate::spec::Spec;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

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
    /// The worst of [`Row::statuses`] (or why the point failed).
    pub status: Status,
    /// Each metric's own status (`ok`, `noisy`, `unstable`), by metric name: the
    /// `<metric>_status` columns. Empty for a failed point.
    pub statuses: BTreeMap<String, Status>,
    pub values: BTreeMap<String, f64>,
    pub build_s: f64,
    pub run_s: f64,
    pub cached: bool,
    pub gpu: GpuTag,
    /// One line: why the point failed, naming the log.
    pub error: String,
}

/// With `repeat` > 1 or `recheck` > 0: the spread of a metric's value over the processes that
/// measured it, (largest - smallest) / median (empty for a point measured in one process).
pub fn repeat_spread_column(m: &crate::spec::Metric) -> String {
    schema::repeat_spread_column(&m.name)
}

/// The CSV's columns, fixed from the spec before the first point.
pub fn header(spec: &Spec) -> Vec<String> {
    let mut metrics = Vec::new();
    for m in &spec.metrics {
        metrics.extend(m.columns());
        if spec.repeat > 1 || spec.rechecks() {
            metrics.push(repeat_spread_column(m));
        }
        metrics.extend(spec.profile_columns(m));
        // Last of the metric's columns: its own status (see `store::metric_status`).
        metrics.push(super::metric_status_column(&m.name));
    }
    // `[profile] power`: the point's power columns, after the metrics.
    metrics.extend(spec.profile.iter().flat_map(|p| p.point_columns()));
    schema::header(spec.axis_names(), metrics)
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

/// The characters that make a spreadsheet read a text cell as a formula (OWASP's list): `=`,
/// `+`, `-`, `@`, and a tab or carriage return before one of them.
const FORMULA_START: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// A text cell made safe for a spreadsheet that evaluates formulas (`=HYPERLINK(..)`,
/// `=cmd|' /C calc'!A0`): text starting with a [`FORMULA_START`] character gets a leading `'`, as
/// OWASP advises; a number (`-1,5` in `dialect`, `-3e-5`) is left a number. Text that already
/// starts with `'` and then such a character gets a second `'`, so [`formula_restored`] gives back
/// exactly what was written. For the CSVs made for spreadsheets (`sweep export`, `analysis.csv`,
/// `compare.csv`); the run's own `results.csv` is sweep's to read back and stays as measured.
pub fn formula_defused(text: &str, dialect: Dialect) -> std::borrow::Cow<'_, str> {
    let number = dialect.parse_number(text).is_some() || text.trim().parse::<f64>().is_ok();
    if after_quotes_risky(text) && (text.starts_with('\'') || !number) {
        format!("'{text}").into()
    } else {
        text.into()
    }
}

/// A cell of a CSV written with [`formula_defused`], as it was before.
pub fn formula_restored(text: &str) -> &str {
    match text.strip_prefix('\'') {
        Some(rest) if after_quotes_risky(text) => rest,
        _ => text,
    }
}

/// Whether `text`, past any leading `'`, starts with a [`FORMULA_START`] character.
fn after_quotes_risky(text: &str) -> bool {
    text.trim_start_matches('\'').starts_with(FORMULA_START)
}

impl CsvSink {
    /// Creates the CSV with its header, or opens an existing one to append (resume).
    pub fn open(path: &Path, header: Vec<String>, dialect: Dialect) -> Result<CsvSink, StoreError> {
        // A file a kill left empty (created, header not written yet) starts over too.
        let fresh = std::fs::metadata(path).map_or(true, |m| m.len() == 0);
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
                    (Some(v), _) => crate::points::written(v, d),
                    (None, Some(v)) if ok => d.number(*v),
                    (None, None) if ok => other
                        .strip_suffix("_status")
                        .and_then(|m| row.statuses.get(m))
                        .map(|s| s.as_str().to_string())
                        .unwrap_or_default(),
                    _ => String::new(),
                },
            })
            .collect()
    }

    /// Appends one row in a single write, then flushes. A file removed (or replaced) since it
    /// was opened is an error: its rows went nowhere (the run said `interrupted`, exit 130, and
    /// the rows of every point it measured were gone with the file).
    pub fn append(&mut self, row: &Row) -> Result<(), StoreError> {
        use std::os::unix::fs::MetadataExt;
        let bytes = record(&self.fields(row), self.dialect);
        self.file.write_all(&bytes).map_err(write_err(&self.path))?;
        self.file.flush().map_err(write_err(&self.path))?;
        if self.file.metadata().is_ok_and(|m| m.nlink() == 0) {
            // A resume measures again what results.csv lacks, nothing else: the rows of
            // controls.csv or of a pass's CSV are gone for good (review 11a M3: the hint promised
            // the resume would measure them again).
            let why = if self.path.file_name() == Some(std::ffi::OsStr::new(super::RESULTS)) {
                "it was removed or replaced while the run ran, and the rows written to it went with it (hint: resume the run: it measures those points again)"
            } else {
                "it was removed or replaced while the run ran, and the rows written to it went with it (hint: a resume finishes the run without them, results.csv is whole; `sweep run --force` measures them all again)"
            };
            return Err(write_err(&self.path)(std::io::Error::other(why)));
        }
        Ok(())
    }

    pub fn sync(&self) {
        let _ = self.file.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::{formula_defused, formula_restored};

    #[test]
    fn formula_cells_get_a_quote_and_numbers_stay_numbers() {
        use super::Dialect::{Comma, Semicolon};
        let cases = [
            ("=HYPERLINK(\"x\")", Comma, "'=HYPERLINK(\"x\")"),
            ("=cmd|' /C calc'!A0", Comma, "'=cmd|' /C calc'!A0"),
            ("+1+2", Comma, "'+1+2"),
            ("-2+3", Comma, "'-2+3"),
            ("@SUM(A1)", Comma, "'@SUM(A1)"),
            ("\t=1", Comma, "'\t=1"),
            ("\r=1", Comma, "'\r=1"),
            ("-1.5", Comma, "-1.5"),
            ("-1,5", Semicolon, "-1,5"),
            ("+3e-5", Comma, "+3e-5"),
            ("'=x", Comma, "''=x"),
            ("'quoted", Comma, "'quoted"),
            ("a=b", Comma, "a=b"),
            ("", Comma, ""),
        ];
        for (text, dialect, want) in cases {
            assert_eq!(formula_defused(text, dialect), want, "{text:?}");
            assert_eq!(formula_restored(want), text, "{want:?} reads back");
        }
    }

    use super::*;
    use crate::spec::Value;
    use crate::store::read_done;

    #[test]
    fn a_file_a_kill_left_empty_gets_its_header() {
        // Killed between creating a CSV and writing its header: the next open starts it over,
        // so the first row is never read as the header.
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("pass-2.csv");
        std::fs::write(&path, "").unwrap();
        let header: Vec<String> = ["point_id", "status"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let sink = CsvSink::open(&path, header.clone(), Dialect::Comma).unwrap();
        drop(sink);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "point_id,status\r\n"
        );
        // A file with its header already is appended to, not started over.
        let sink = CsvSink::open(&path, header, Dialect::Comma).unwrap();
        drop(sink);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "point_id,status\r\n"
        );
    }

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
            statuses: BTreeMap::from([("mflops".to_string(), status)]),
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
            "point_id,index,threads,v,status,mflops,mflops_status,build_s,run_s,cached,gpu_index,gpu_name,gpu_uuid,error\r\n\
             abc,3,32,\"a,\"\"b\"\"\",ok,1234.5,ok,1.235,0.5,1,,,,\r\n\
             def,3,32,\"a,\"\"b\"\"\",run_failed,,,1.235,0.5,1,,,,\r\n"
        );
    }

    #[test]
    fn every_fixed_column_is_filled_by_the_writer() {
        let tmp = tempfile::tempdir().unwrap();
        let sink =
            CsvSink::open(&tmp.path().join("r.csv"), header(&spec()), Dialect::Comma).unwrap();
        let mut r = row("abc", Status::RunFailed);
        r.gpu = GpuTag {
            index: "0".into(),
            name: "H100".into(),
            uuid: "GPU-1".into(),
        };
        r.error = "exit code 1".into();
        let fields = sink.fields(&r);
        for col in schema::fixed_columns() {
            let at = sink.header.iter().position(|h| h == col).unwrap();
            assert!(!fields[at].is_empty(), "`{col}` is left empty");
        }
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
            text.starts_with("point_id;index;threads;v;status;mflops;mflops_status;build_s"),
            "{text}"
        );
        assert!(
            text.contains("abc;3;32;\"a,\"\"b\"\"\";ok;1234,5;ok;1,235;0,5;1;;;;"),
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
}
