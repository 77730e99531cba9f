//! Reading a results CSV (or any CSV sweep writes: controls, passes, analysis) into a header and
//! rows of fields, in either dialect. Every reader of these files goes through [`Csv::parse`].

use super::schema::Dialect;
use super::StoreError;
use std::collections::BTreeMap;
use std::path::Path;

/// A CSV, read: its dialect, its header and its records.
#[derive(Clone, Debug, PartialEq)]
pub struct Csv {
    pub dialect: Dialect,
    pub header: Vec<String>,
    /// Every record after the header; a record that cannot be read (not UTF-8, or of another
    /// width than the header but for a last one cut short) is the reason why.
    pub records: Vec<Result<Vec<String>, BadRecord>>,
}

/// A record of a CSV that cannot be read.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BadRecord {
    #[error("line {line}: a field is not UTF-8 (hint: sweep writes UTF-8; was the file saved in another encoding?)")]
    NotUtf8 { line: u64 },
    /// A record of another width than the header, which is not a last one cut short (a crash
    /// leaves that one): reading on without it would lose a point unsaid.
    #[error("line {line}: {fields} fields where the header has {width} (hint: the row was edited or two files were joined; mend or delete that line: a resume measures a deleted point again)")]
    Width {
        line: u64,
        fields: usize,
        width: usize,
    },
}

impl BadRecord {
    /// The record that `e` could not read, of the CSV `bytes` (as given to [`reader`]).
    pub fn of(e: &csv::Error, bytes: &[u8]) -> BadRecord {
        BadRecord::NotUtf8 {
            line: e.position().map_or(0, |p| line_at(bytes, p.byte())),
        }
    }
}

/// The line (from 1) of the CSV `bytes` (as given to [`reader`]) at which byte `at` of what
/// the reader reads lies. The reader's own line count is off in a file of CRLF line ends, whose
/// record positions lie on the `\n` of the line before.
pub fn line_at(bytes: &[u8], at: u64) -> u64 {
    let body = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    let mut at = (at as usize).min(body.len());
    while matches!(body.get(at), Some(b'\r' | b'\n')) {
        at += 1;
    }
    1 + body[..at].iter().filter(|&&b| b == b'\n').count() as u64
}

/// Checks the widths of a CSV's records as they are read, one at a time: a record of another
/// width than the header is refused, but a last one shorter than it (a row cut short by a
/// crash), which the reader leaves out.
pub struct Widths {
    width: usize,
    /// A short record seen: refused if another record follows it.
    short: Option<BadRecord>,
}

impl Widths {
    pub fn new(width: usize) -> Widths {
        Widths { width, short: None }
    }

    /// Whether the record of `fields` fields at `line` is as wide as the header; `Err` when it,
    /// or a short one before it, cannot be read.
    pub fn check(&mut self, line: impl Fn() -> u64, fields: usize) -> Result<bool, BadRecord> {
        if let Some(bad) = self.short.take() {
            return Err(bad);
        }
        if fields == self.width {
            return Ok(true);
        }
        let bad = BadRecord::Width {
            line: line(),
            fields,
            width: self.width,
        };
        if fields < self.width {
            self.short = Some(bad);
            Ok(false)
        } else {
            Err(bad)
        }
    }
}

impl Csv {
    /// Parses `bytes` (a leading byte-order mark is skipped) in `dialect`, or, with `None`, in the
    /// dialect its header line shows ([`Dialect::detect`]).
    pub fn parse(bytes: &[u8], dialect: Option<Dialect>) -> Result<Csv, csv::Error> {
        let (dialect, mut r) = reader(bytes, dialect);
        let header: Vec<String> = r.headers()?.iter().map(String::from).collect();
        let width = header.len();
        let mut records: Vec<Result<(u64, Vec<String>), BadRecord>> = r
            .records()
            .map(|rec| {
                rec.map(|rec| {
                    let line = rec.position().map_or(0, |p| line_at(bytes, p.byte()));
                    (line, rec.iter().map(String::from).collect())
                })
                .map_err(|e| BadRecord::of(&e, bytes))
            })
            .collect();
        let last = records.len().saturating_sub(1);
        for (i, rec) in records.iter_mut().enumerate() {
            if let Ok((line, fields)) = rec {
                let torn = i == last && fields.len() < width;
                if fields.len() != width && !torn {
                    *rec = Err(BadRecord::Width {
                        line: *line,
                        fields: fields.len(),
                        width,
                    });
                }
            }
        }
        let records = records
            .into_iter()
            .map(|r| r.map(|(_, fields)| fields))
            .collect();
        Ok(Csv {
            dialect,
            header,
            records,
        })
    }

    /// The records as wide as the header (a last record cut short by a crash is left out);
    /// `Err` names the first record that cannot be read.
    pub fn full_rows(self) -> Result<Vec<Vec<String>>, BadRecord> {
        let width = self.header.len();
        let mut rows = Vec::with_capacity(self.records.len());
        for r in self.records {
            let r = r?;
            if r.len() == width {
                rows.push(r);
            }
        }
        Ok(rows)
    }
}

/// A reader of `bytes` (a leading byte-order mark skipped) in `dialect`, or, with `None`, in the
/// dialect its header line shows ([`Dialect::detect`]); records of any width.
pub fn reader(bytes: &[u8], dialect: Option<Dialect>) -> (Dialect, csv::Reader<&[u8]>) {
    let dialect = dialect.unwrap_or_else(|| dialect_of(bytes));
    let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    let r = csv::ReaderBuilder::new()
        .delimiter(dialect.delimiter())
        .flexible(true)
        .from_reader(bytes);
    (dialect, r)
}

/// The dialect of the CSV `bytes`, as its header line shows it ([`Dialect::detect`]).
pub fn dialect_of(bytes: &[u8]) -> Dialect {
    let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    let first = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
    Dialect::detect(&String::from_utf8_lossy(first))
}

/// The length of `bytes` up to and with its last line break: the whole lines.
fn whole_lines(bytes: &[u8]) -> usize {
    bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)
}

/// A last row without a line break that [`readable`] leaves out, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct TornRow {
    /// Its line, from 1.
    pub line: u64,
    pub why: String,
}

impl TornRow {
    /// The one-line warning that a reader of `path` prints when it leaves the row out.
    /// Says on stderr that the reader of `path` left the row out: the one place a reader warns
    /// of it, so that every command words it alike; once a process, however often a command
    /// reads the file (`report` reads it three times).
    pub fn warn(&self, path: &Path) {
        static SAID: std::sync::Mutex<Vec<(std::path::PathBuf, u64)>> =
            std::sync::Mutex::new(Vec::new());
        let key = (path.to_path_buf(), self.line);
        let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
        if !said.contains(&key) {
            eprintln!("{}", self.warning(path));
            said.push(key);
        }
    }

    /// Says on stderr that `run` or `resume` cut the row off `path` before appending to it
    /// (review 18b F8: the resume cut it without a word).
    pub fn cut_off(&self, path: &Path) {
        eprintln!(
            "warning: `{}` line {}: its last row was torn ({}) and is cut off before the run appends to it (hint: a run killed while it wrote that row leaves it so)",
            path.display(),
            self.line,
            self.why
        );
    }

    pub fn warning(&self, path: &Path) -> String {
        format!(
            "warning: `{}` line {}: its last row is torn ({}) and is left out (hint: a run killed while it wrote that row leaves it so; `sweep resume` the run to measure that point again)",
            path.display(),
            self.line,
            self.why
        )
    }
}

/// The one rule of every reader (analyze, compare, export, report, merge, run and resume) for a
/// CSV's last row when it has no line break after it: a row that has all its fields, closes its
/// quotes and whose last field is a number where the row before has one, is a row; a torn one
/// (fewer fields, a quote open, a number cut to no number) is left out. Returns how many of
/// `bytes` to read, and the row left out. A CSV ending in a line break, or of one line (its
/// header), is read whole. Only the last field of a row with all its fields can be cut short; a
/// number cut to another number (`1000` to `10`) cannot be told from one written so.
pub fn readable(bytes: &[u8], dialect: Dialect) -> (usize, Option<TornRow>) {
    let whole = whole_lines(bytes);
    if whole == bytes.len() || whole == 0 {
        return (bytes.len(), None);
    }
    let body = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    let bom = bytes.len() - body.len();
    let mut r = csv::ReaderBuilder::new()
        .delimiter(dialect.delimiter())
        .flexible(true)
        .has_headers(false)
        .from_reader(body);
    // The header, the row before the last, and the last with where it starts.
    let mut header: Option<csv::ByteRecord> = None;
    let mut before: Option<csv::ByteRecord> = None;
    let mut last: Option<(u64, csv::ByteRecord)> = None;
    let mut record = csv::ByteRecord::new();
    loop {
        let start = r.position().byte();
        match r.read_byte_record(&mut record) {
            Ok(true) => {}
            Ok(false) | Err(_) => break,
        }
        if header.is_none() {
            header = Some(record.clone());
            continue;
        }
        if let Some((_, prev)) = last.replace((start, record.clone())) {
            before = Some(prev);
        }
    }
    let (Some(header), Some((mut start, row))) = (header, last) else {
        return (bytes.len(), None);
    };
    // In a file of CRLF line ends the reader's position lies on the `\n` of the line before.
    while matches!(body.get(start as usize), Some(b'\r' | b'\n')) {
        start += 1;
    }
    let text = body.get(start as usize..).unwrap_or_default();
    let number = |f: &[u8]| {
        std::str::from_utf8(f)
            .ok()
            .and_then(|f| dialect.parse_number(f))
            .is_some()
    };
    let why = if text.iter().filter(|&&b| b == b'"').count() % 2 == 1 {
        Some("a quote in it never closes".to_string())
    } else if row.len() < header.len() {
        Some(format!(
            "{} of the header's {} fields",
            row.len(),
            header.len()
        ))
    } else {
        let at = row.len() - 1;
        let cell = row.get(at).unwrap_or_default();
        let numbers_above = before.as_ref().and_then(|b| b.get(at)).is_some_and(number);
        (row.len() == header.len() && numbers_above && !cell.is_empty() && !number(cell)).then(
            || {
                format!(
                    "its last field `{}` is no number",
                    String::from_utf8_lossy(cell)
                )
            },
        )
    };
    match why {
        Some(why) => (
            bom + start as usize,
            Some(TornRow {
                line: line_at(bytes, start),
                why,
            }),
        ),
        None => (bytes.len(), None),
    }
}

fn read_err<E: Into<super::Cause>>(path: &Path) -> impl Fn(E) -> StoreError + '_ {
    move |e| StoreError::Read {
        path: path.to_path_buf(),
        cause: e.into(),
    }
}

/// The bytes of the file `path`; a path that is no file (a pipe, a device) is refused, not read:
/// a FIFO would block, `/dev/zero` never end.
pub fn read_file(path: &Path) -> Result<Vec<u8>, StoreError> {
    if !std::fs::metadata(path).map_or(true, |m| m.is_file()) {
        return Err(StoreError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    std::fs::read(path).map_err(read_err(path))
}

/// Where the header `found` first differs from the header `expected`, in words: the first
/// column of another name, else the count.
pub fn header_difference(found: &[String], expected: &[String]) -> String {
    let shown = |c: Option<&String>| match c {
        Some(c) => format!("`{c}`"),
        None => "none".to_string(),
    };
    match (0..found.len().max(expected.len())).find(|&i| found.get(i) != expected.get(i)) {
        Some(i) if found.len() == expected.len() || i < found.len().min(expected.len()) => {
            format!(
                "column {} is {} here and {} there",
                i + 1,
                shown(found.get(i)),
                shown(expected.get(i))
            )
        }
        _ => format!(
            "{} columns here, {} there: {}",
            found.len(),
            expected.len(),
            match found.len() > expected.len() {
                true => format!("`{}` is past the last of the run's", found[expected.len()]),
                false => format!("`{}` is missing", expected[found.len()]),
            }
        ),
    }
}

/// What to do with the last record of whole lines when a quote in it never closes.
#[derive(Debug, PartialEq)]
enum LastRecord {
    /// Its quotes close (or there is none).
    Whole,
    /// A row torn after a line break inside quotes: cut the file at this byte.
    Torn(u64),
    /// It runs over several lines from this line on: a quote opened there never closes, so the
    /// rows after it read as one field (and resuming would run and append them again).
    OpenQuote(u64),
}

fn last_record(bytes: &[u8], dialect: Dialect) -> LastRecord {
    let body = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    let bom = (bytes.len() - body.len()) as u64;
    let mut r = csv::ReaderBuilder::new()
        .delimiter(dialect.delimiter())
        .flexible(true)
        .from_reader(body);
    let mut last = None;
    let mut record = csv::ByteRecord::new();
    loop {
        let start = r.position().byte();
        match r.read_byte_record(&mut record) {
            Ok(true) => last = Some(start),
            Ok(false) | Err(_) => break,
        }
    }
    let Some(mut start) = last else {
        return LastRecord::Whole;
    };
    // In a file of CRLF line ends the reader's position lies on the `\n` of the line before:
    // the record starts after it (cut there, the row before kept its line break).
    while matches!(body.get(start as usize), Some(b'\r' | b'\n')) {
        start += 1;
    }
    let text = body.get(start as usize..).unwrap_or_default();
    // Quotes come in pairs ("" inside a quoted field too): an odd count leaves one open.
    if text.iter().filter(|&&b| b == b'"').count() % 2 == 0 {
        return LastRecord::Whole;
    }
    match text.iter().filter(|&&b| b == b'\n').count() {
        0 | 1 => LastRecord::Torn(bom + start),
        _ => {
            let line = 1 + body[..start as usize]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            LastRecord::OpenQuote(line as u64)
        }
    }
}

/// Where the record that starts at byte `start` of what a [`reader`] of `bytes` reads (the
/// last one) opens a quote that never closes and so runs over several lines: its line. A row a
/// crash tore inside quotes spans one line at most, and is no such record.
pub fn open_quote_line(bytes: &[u8], start: u64) -> Option<u64> {
    let body = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    let mut at = (start as usize).min(body.len());
    while matches!(body.get(at), Some(b'\r' | b'\n')) {
        at += 1;
    }
    let text = &body[at..];
    let odd = text.iter().filter(|&&b| b == b'"').count() % 2 == 1;
    let lines = text
        .strip_suffix(b"\n")
        .unwrap_or(text)
        .iter()
        .filter(|&&b| b == b'\n')
        .count();
    (odd && lines >= 1).then(|| line_at(bytes, start))
}

/// Reads a CSV without changing it, in `dialect`; a last row without a line break is read or left
/// out (with a warning) as [`readable`] says. `None` when there is no CSV or not one whole line
/// yet.
pub fn read_whole_lines(path: &Path, dialect: Dialect) -> Result<Option<Csv>, StoreError> {
    if !path.exists() {
        return Ok(None);
    }
    let bytes = read_file(path)?;
    if whole_lines(&bytes) == 0 {
        return Ok(None);
    }
    let (n, torn) = readable(&bytes, dialect);
    if let Some(torn) = torn {
        torn.warn(path);
    }
    let csv = Csv::parse(&bytes[..n], Some(dialect)).map_err(read_err(path))?;
    // A last row of fewer fields with its line break is left out too ([`Csv::full_rows`]), and
    // said as every reader says it.
    if let Some(Ok(last)) = csv.records.last() {
        if last.len() < csv.header.len() {
            let text = &bytes[..n];
            let end = text.strip_suffix(b"\n").unwrap_or(text);
            TornRow {
                line: 1 + end.iter().filter(|&&b| b == b'\n').count() as u64,
                why: format!("{} of the header's {} fields", last.len(), csv.header.len()),
            }
            .warn(path);
        }
    }
    Ok(Some(csv))
}

/// The rows already in a CSV that sweep appends to: point id -> fields. A torn last row is cut
/// off first; a CSV torn inside its header is removed (it held no row). A missing CSV holds no
/// row. For `run` and `resume`, which append after it; readers use [`read_done_as_is`].
pub fn read_done(
    path: &Path,
    header: &[String],
) -> Result<BTreeMap<String, Vec<String>>, StoreError> {
    by_id(path, rows(path, header, Repair::File)?)
}

/// [`read_done`] for the commands that only read a run (`export`, `report`): a torn last row is
/// left out in memory and the file is not touched (a read-only copy of a run can be read).
pub fn read_done_as_is(
    path: &Path,
    header: &[String],
) -> Result<BTreeMap<String, Vec<String>>, StoreError> {
    by_id(path, rows(path, header, Repair::InMemory)?)
}

/// [`read_done_as_is`] of a CSV without its run's manifest (one made by hand or elsewhere, whose
/// `point_id` cells are no promise): the last row of each id.
pub fn read_last_of_each_id(
    path: &Path,
    header: &[String],
) -> Result<BTreeMap<String, Vec<String>>, StoreError> {
    Ok(rows(path, header, Repair::InMemory)?
        .into_iter()
        .map(|fields| (fields[0].clone(), fields))
        .collect())
}

fn by_id(path: &Path, rows: Vec<Vec<String>>) -> Result<BTreeMap<String, Vec<String>>, StoreError> {
    let mut done = BTreeMap::new();
    let mut at: std::collections::HashMap<String, usize> = Default::default();
    for (i, fields) in rows.into_iter().enumerate() {
        let id = fields[0].clone();
        if let Some(first) = at.insert(id.clone(), i + 1) {
            return Err(StoreError::TwoRows {
                path: path.to_path_buf(),
                point: crate::units::visible(&id).into_owned(),
                first,
                second: i + 1,
            });
        }
        done.insert(id, fields);
    }
    Ok(done)
}

/// Every whole row of a CSV that sweep appends to, in file order (a CSV may hold several rows of
/// one point: `passes/recheck.csv`), repaired as [`read_done`] says.
pub fn read_rows(path: &Path, header: &[String]) -> Result<Vec<Vec<String>>, StoreError> {
    rows(path, header, Repair::File)
}

/// [`read_rows`] without changing the file: a torn last row is left out in memory.
pub fn read_rows_as_is(path: &Path, header: &[String]) -> Result<Vec<Vec<String>>, StoreError> {
    rows(path, header, Repair::InMemory)
}

/// Where a torn last row is cut off: in the file (before appending to it) or in memory only.
#[derive(Clone, Copy, PartialEq)]
enum Repair {
    File,
    InMemory,
}

fn rows(path: &Path, header: &[String], repair: Repair) -> Result<Vec<Vec<String>>, StoreError> {
    let err = read_err::<std::io::Error>(path);
    if !path.exists() {
        return Ok(Vec::new());
    }
    let bytes = read_file(path)?;
    let cut = |at: usize| -> Result<(), StoreError> {
        if repair == Repair::File {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(&err)?;
            f.set_len(at as u64).map_err(&err)?;
        }
        Ok(())
    };
    if !bytes.contains(&b'\n') {
        if repair == Repair::File {
            std::fs::remove_file(path).map_err(&err)?;
        }
        return Ok(Vec::new());
    }
    // A last row without a line break is read or left out as every reader does ([`readable`]);
    // before appending, one that is read gets its line break, one left out is cut off.
    let (whole, torn) = readable(&bytes, dialect_of(&bytes));
    if whole < bytes.len() {
        cut(whole)?;
        if let Some(torn) = torn.filter(|_| repair == Repair::File) {
            torn.cut_off(path);
        }
    } else if repair == Repair::File && !bytes.ends_with(b"\n") {
        use std::io::Write as _;
        let end: &[u8] = if bytes.ends_with(b"\r") {
            b"\n"
        } else {
            b"\r\n"
        };
        std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(end))
            .map_err(&err)?;
    }
    let csv = Csv::parse(&bytes[..whole], None).map_err(read_err(path))?;
    if csv.header != header {
        return Err(StoreError::HeaderMismatch {
            path: path.to_path_buf(),
            difference: header_difference(&csv.header, header),
        });
    }
    let csv = match last_record(&bytes[..whole], csv.dialect) {
        LastRecord::Whole => csv,
        LastRecord::OpenQuote(line) => {
            return Err(StoreError::OpenQuote {
                path: path.to_path_buf(),
                line,
            })
        }
        LastRecord::Torn(at) => {
            // Cut here too: a row appended after an open quote would read as part of it.
            cut(at as usize)?;
            if repair == Repair::File {
                TornRow {
                    line: line_at(&bytes, at),
                    why: "a quote left open".into(),
                }
                .cut_off(path);
            }
            Csv::parse(&bytes[..at as usize], None).map_err(read_err(path))?
        }
    };
    csv.full_rows().map_err(read_err(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_last_row_without_a_line_break_is_read_when_whole_and_left_out_when_torn() {
        let c = Dialect::Comma;
        let whole = |t: &str| (t.len(), None);
        let torn = |t: &str, at: &str, line: u64, why: &str| {
            (
                t.find(at).unwrap(),
                Some(TornRow {
                    line,
                    why: why.to_string(),
                }),
            )
        };
        for (text, dialect, want) in [
            ("a,b\n1,2\n", c, whole("a,b\n1,2\n")),
            ("a,b", c, whole("a,b")),
            ("a,b\n1,2\n3,4", c, whole("a,b\n1,2\n3,4")),
            ("a,b\r\n1,y\r\n3,x", c, whole("a,b\r\n1,y\r\n3,x")),
            ("a,b\n1,\"two\nlines\"", c, whole("a,b\n1,\"two\nlines\"")),
            (
                "a,b\n1,2\n3",
                c,
                torn("a,b\n1,2\n3", "3", 3, "1 of the header's 2 fields"),
            ),
            (
                "a,b\r\n1,2\r\n3,1e",
                c,
                torn(
                    "a,b\r\n1,2\r\n3,1e",
                    "3,1e",
                    3,
                    "its last field `1e` is no number",
                ),
            ),
            (
                "a,b\n1,2\n3,\"open",
                c,
                torn("a,b\n1,2\n3,\"open", "3,", 3, "a quote in it never closes"),
            ),
            (
                "a;b\n1;2,5\n3;4,",
                Dialect::Semicolon,
                whole("a;b\n1;2,5\n3;4,"),
            ),
        ] {
            assert_eq!(readable(text.as_bytes(), dialect), want, "{text:?}");
        }
    }

    #[test]
    fn a_torn_last_line_is_left_alone_and_not_read() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("r.csv");
        std::fs::write(&p, "point_id;index;x\r\na;0;1,5\r\nb;1;2\r\nc;2").unwrap();
        let csv = read_whole_lines(&p, Dialect::Semicolon).unwrap().unwrap();
        assert_eq!(csv.header, ["point_id", "index", "x"]);
        assert_eq!(
            csv.full_rows().unwrap(),
            [["a", "0", "1,5"], ["b", "1", "2"]]
        );
        assert!(
            std::fs::read_to_string(&p).unwrap().ends_with("c;2"),
            "the input is not changed"
        );
        std::fs::write(&p, "point_id;in").unwrap();
        assert_eq!(read_whole_lines(&p, Dialect::Semicolon).unwrap(), None);
    }

    #[test]
    fn a_quote_that_never_closes_is_refused_not_read_as_one_field() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("r.csv");
        let header: Vec<String> = ["point_id", "index", "x"].map(String::from).into();
        let text = "point_id,index,x\na,0,1\nb,\"1\nc,2,3\nd,3,4\n";
        std::fs::write(&p, text).unwrap();
        let err = read_done(&p, &header).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("`{}` line 3: a quote opened there never closes, so every line after it reads as one field (hint: mend or delete that line by hand and resume, or start a new run with --force)", p.display())
        );
        assert_eq!(std::fs::read_to_string(&p).unwrap(), text, "nothing is cut");
        std::fs::write(&p, "point_id,index,x\na,0,1\nb,1,\"two\nlines\"\nc,2").unwrap();
        assert_eq!(
            read_done(&p, &header)
                .unwrap()
                .into_keys()
                .collect::<Vec<_>>(),
            ["a", "b"],
            "a quoted line break in a whole row is a value, and a torn last row is cut"
        );
        std::fs::write(&p, "point_id,index,x\na,0,1\nb,1,\"torn\n").unwrap();
        assert_eq!(
            read_done(&p, &header)
                .unwrap()
                .into_keys()
                .collect::<Vec<_>>(),
            ["a"]
        );
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "point_id,index,x\na,0,1\n",
            "a row torn inside a quoted line break is cut, so the next row starts a line"
        );
    }

    #[test]
    fn reading_as_is_leaves_a_torn_row_in_the_file_and_out_of_the_rows() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("r.csv");
        let header: Vec<String> = ["point_id", "index", "x"].map(String::from).into();
        for text in [
            "point_id,index,x\na,0,1\nb,1,2\nc,2",
            "point_id,index,x\na,0,1\nb,1,2\nc,2,\"torn\n",
        ] {
            std::fs::write(&p, text).unwrap();
            let rows = read_done_as_is(&p, &header).unwrap();
            assert_eq!(rows.into_keys().collect::<Vec<_>>(), ["a", "b"]);
            assert_eq!(
                std::fs::read_to_string(&p).unwrap(),
                text,
                "the file is unchanged"
            );
        }
        std::fs::write(&p, "point_id,in").unwrap();
        assert!(read_done_as_is(&p, &header).unwrap().is_empty());
        assert!(
            p.exists(),
            "a CSV torn in its header is not removed by a reader"
        );
    }

    #[test]
    fn parse_skips_a_byte_order_mark_and_detects_the_dialect() {
        let csv = Csv::parse("\u{feff}series;x\r\na;1,5\r\nb\r\n".as_bytes(), None).unwrap();
        assert_eq!(csv.dialect, Dialect::Semicolon);
        assert_eq!(csv.header, ["series", "x"]);
        assert_eq!(csv.records.len(), 2);
        assert_eq!(csv.full_rows().unwrap(), [["a", "1,5"]]);
    }

    #[test]
    fn a_record_that_is_not_utf8_is_its_reason() {
        let csv = Csv::parse(b"a,b\n1,\xff\n2,3\n", None).unwrap();
        assert!(csv.records[0].is_err());
        assert_eq!(
            csv.full_rows().unwrap_err().to_string(),
            "line 2: a field is not UTF-8 (hint: sweep writes UTF-8; was the file saved in another encoding?)"
        );
    }

    #[test]
    fn a_record_of_another_width_is_refused_but_a_short_last_one() {
        let refused = [
            (
                "a,b\n1,2\n3\n4,5\n",
                "line 3: 1 fields where the header has 2",
            ),
            (
                "a,b\n1,2\n3,4,5\n6,7\n",
                "line 3: 3 fields where the header has 2",
            ),
            (
                "a,b\n1,2\n3,4,5\n",
                "line 3: 3 fields where the header has 2",
            ),
            (
                "a,b\r\n1,2\r\n3\r\n4,5\r\n",
                "line 3: 1 fields where the header has 2",
            ),
            (
                "a,b\r\n1,2\r\n3,4\r\n5\r\n6,7\r\n",
                "line 4: 1 fields where the header has 2",
            ),
        ];
        for (text, want) in refused {
            let err = Csv::parse(text.as_bytes(), None)
                .unwrap()
                .full_rows()
                .unwrap_err()
                .to_string();
            assert!(err.starts_with(want), "{text:?}: {err}");
            assert!(err.contains("(hint: "), "{err}");
        }
        let csv = Csv::parse(b"a,b\n1,2\n3\n", None).unwrap();
        assert_eq!(csv.full_rows().unwrap(), [["1", "2"]], "a torn last row");
    }

    #[test]
    fn widths_refuse_a_short_record_once_another_follows_it() {
        let mut w = Widths::new(2);
        assert_eq!(w.check(|| 2, 2), Ok(true));
        assert_eq!(w.check(|| 3, 1), Ok(false));
        assert_eq!(
            w.check(|| 4, 2),
            Err(BadRecord::Width {
                line: 3,
                fields: 1,
                width: 2
            })
        );
        assert!(Widths::new(2).check(|| 2, 3).is_err());
    }

    #[test]
    fn a_row_torn_inside_quotes_is_cut_at_its_line_in_a_crlf_file() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("r.csv");
        let header: Vec<String> = ["point_id", "index", "x"].map(String::from).into();
        std::fs::write(&p, "point_id,index,x\r\na,0,1\r\nb,1,\"torn\r\n").unwrap();
        assert_eq!(read_done(&p, &header).unwrap().len(), 1);
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            "point_id,index,x\r\na,0,1\r\n",
            "the cut keeps the line break of the row before"
        );
        let text = "point_id,index,x\r\na,0,1\r\nb,\"1\r\nc,2,3\r\nd,3,4\r\n";
        std::fs::write(&p, text).unwrap();
        let err = read_done(&p, &header).unwrap_err().to_string();
        assert!(err.contains("` line 3: a quote opened there"), "{err}");
    }

    #[test]
    fn a_quote_left_open_over_several_lines_is_told_from_a_torn_row() {
        let text = b"a,b\r\n1,2\r\n3,\"x\r\n4,5\r\n6,7\r\n";
        let start = text.windows(2).position(|w| w == b"3,").unwrap() as u64;
        assert_eq!(open_quote_line(text, start), Some(3));
        assert_eq!(open_quote_line(text, start - 2), Some(3), "CRLF positions");
        let torn = b"a,b\r\n1,2\r\n3,\"x\r\n";
        assert_eq!(open_quote_line(torn, start), None);
        assert_eq!(open_quote_line(b"a,b\r\n1,2\r\n3,\"x", start), None);
        let quoted = b"a,b\r\n1,2\r\n3,\"x\r\ny\"\r\n";
        assert_eq!(
            open_quote_line(quoted, start),
            None,
            "a value with a line break"
        );
    }

    #[test]
    fn a_header_difference_names_the_first_column_that_differs() {
        let h = |names: &str| -> Vec<String> { names.split(',').map(String::from).collect() };
        let run = h("point_id,index,threads,status,mflops");
        for (found, said) in [
            (
                "point_id,index,status,mflops,x",
                "column 3 is `status` here and `threads` there",
            ),
            (
                "point_id,index,threads,status",
                "4 columns here, 5 there: `mflops` is missing",
            ),
            (
                "point_id,index,threads,status,mflops,note",
                "6 columns here, 5 there: `note` is past the last of the run's",
            ),
        ] {
            assert_eq!(header_difference(&h(found), &run), said, "{found}");
        }
    }
}
