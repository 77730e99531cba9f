//! Spreadsheets (issue 13): what `sweep export` writes, opened by real LibreOffice Calc in three
//! locales with a fresh profile (tests/spreadsheet/roundtrip.py: every number must come back as
//! the same number, every id and name as the same text). scripts/ensure-libreoffice.sh installs
//! LibreOffice and openpyxl when missing (as root, as in CI); elsewhere the tests say why they skip.
use crate::common;
use crate::common::{project, stderr, sweep};
use std::path::{Path, PathBuf};

const LOCALES: [&str; 3] = ["de_DE", "uk_UA", "en_US"];
/// The import options docs/usage.md gives for each dialect: separator, `"`, UTF-8, from row 1,
/// column 1 (point_id) as text, and the language whose decimal mark the dialect writes.
const COMMA_OPTIONS: &str = "44,34,76,1,1/2,1033";
const SEMICOLON_OPTIONS: &str = "59,34,76,1,1/2,1031";

/// (soffice, PYTHONPATH with openpyxl), or None with the reason printed.
fn libreoffice() -> Option<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new("bash")
        .arg(root.join("scripts/ensure-libreoffice.sh"))
        .output()
        .unwrap();
    if out.status.code() == Some(3) {
        common::skip(stderr(&out).trim());
        return None;
    }
    assert!(
        out.status.success(),
        "ensure-libreoffice.sh: {}",
        stderr(&out)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let get = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .map(|v| v.trim_matches('\'').to_string())
            .unwrap_or_default()
    };
    Some((get("SOFFICE"), get("OPENPYXL_PATH")))
}

/// roundtrip.py FILE LOCALE ARGS: asserts 0 wrong cells.
fn round_trip(lo: &(String, String), file: &Path, locale: &str, args: &[&str]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new("python3")
        .arg(root.join("tests/spreadsheet/roundtrip.py"))
        .arg(file)
        .arg(locale)
        .args(args)
        .args(["--soffice", &lo.0])
        .env("PYTHONPATH", &lo.1)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{} in {locale} ({args:?}):\n{text}{}",
        file.display(),
        stderr(&out)
    );
    assert!(text.contains(", 0 wrong"), "{text}");
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h100/threads_1_512")
}

/// `sweep export RUN --format FORMATS --out OUT [extra]`.
fn export(dir: &Path, run: &Path, formats: &str, out: &Path, extra: &[&str]) {
    let o = sweep(dir)
        .arg("export")
        .arg(run)
        .args(["--format", formats, "--out"])
        .arg(out)
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "export: {}", stderr(&o));
}

/// The rows of a run's CSV in sweep order (by `index`), as the export writes them, into `out`.
/// A run's results.csv holds rows in the order the points finished: a point that recheck measured
/// in more processes has its row after the others.
fn in_sweep_order(csv: &Path, out: &Path) -> PathBuf {
    let mut r = csv::Reader::from_path(csv).unwrap();
    let header = r.headers().unwrap().clone();
    let at = header.iter().position(|h| h == "index").unwrap();
    let mut rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    rows.sort_by_key(|row| row[at].parse::<usize>().unwrap());
    let mut w = csv::Writer::from_path(out).unwrap();
    w.write_record(&header).unwrap();
    for row in &rows {
        w.write_record(row).unwrap();
    }
    w.flush().unwrap();
    out.to_path_buf()
}

#[test]
fn the_xlsx_of_the_h100_run_reads_back_as_its_csv_in_three_locales() {
    let Some(lo) = libreoffice() else { return };
    let tmp = tempfile::tempdir().unwrap();
    export(tmp.path(), &fixture(), "xlsx", tmp.path(), &[]);
    let xlsx = tmp.path().join("results.xlsx");
    let source = in_sweep_order(
        &fixture().join("results.csv"),
        &tmp.path().join("expect.csv"),
    );
    for locale in LOCALES {
        // Sheet `results` against the run's CSV (ids like 499116391296 included), every other
        // sheet against the workbook's own cells.
        round_trip(
            &lo,
            &xlsx,
            locale,
            &["--expect-csv", source.to_str().unwrap()],
        );
    }
}

#[test]
fn the_csv_of_the_h100_run_reads_back_in_both_dialects_with_the_documented_options() {
    let Some(lo) = libreoffice() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (comma, semi) = (tmp.path().join("comma"), tmp.path().join("semicolon"));
    export(tmp.path(), &fixture(), "csv", &comma, &[]);
    export(
        tmp.path(),
        &fixture(),
        "csv",
        &semi,
        &["--dialect", "semicolon"],
    );
    for locale in LOCALES {
        round_trip(
            &lo,
            &comma.join("results.csv"),
            locale,
            &["--infilter", COMMA_OPTIONS],
        );
        round_trip(
            &lo,
            &semi.join("results.csv"),
            locale,
            &["--dialect", "semicolon", "--infilter", SEMICOLON_OPTIONS],
        );
    }
    // The analysis: names, readings with `;` and `≡`, numbers.
    let texts = "series,metric,unit,level,method,reading";
    round_trip(
        &lo,
        &semi.join("analysis.csv"),
        "uk_UA",
        &[
            "--dialect",
            "semicolon",
            "--infilter",
            SEMICOLON_OPTIONS,
            "--text-columns",
            texts,
        ],
    );
}

#[test]
fn a_fresh_run_exports_at_its_end_and_its_ids_survive_even_a_default_import() {
    let Some(lo) = libreoffice() else { return };
    let p = project();
    let out = sweep(p.path())
        .args(["run", "sweeps/saw.toml", "-q", "--csv-dialect", "semicolon"])
        .args(["--export", "xlsx,csv"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let run = common::run_dirs(&p.path().join("output/saw"))
        .pop()
        .unwrap();
    let csv = run.join("results.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    // Every id starts with a letter and names its points/ folder.
    for line in text.lines().skip(1) {
        let id = line.split(';').next().unwrap();
        assert!(id.starts_with('p') && id.parse::<f64>().is_err(), "{id}");
        assert!(run.join("points").join(id).is_dir(), "{id}");
    }
    let exports = run.join("export");
    for locale in LOCALES {
        round_trip(
            &lo,
            &exports.join("results.xlsx"),
            locale,
            &[
                "--dialect",
                "semicolon",
                "--expect-csv",
                csv.to_str().unwrap(),
            ],
        );
        round_trip(
            &lo,
            &exports.join("results.csv"),
            locale,
            &["--dialect", "semicolon", "--infilter", SEMICOLON_OPTIONS],
        );
    }
    // In the run's own dialect, the export's cells are the run's: same fields, a BOM before them.
    let exported = std::fs::read_to_string(exports.join("results.csv")).unwrap();
    assert_eq!(exported.strip_prefix('\u{feff}'), Some(text.as_str()));
    // A comma export opened with no options at all in en_US: ids stay text now that none is
    // all digits (the H100 run, older, has one that does not).
    let comma = p.path().join("comma");
    export(p.path(), &run, "csv", &comma, &["--dialect", "comma"]);
    let body = std::fs::read_to_string(comma.join("results.csv")).unwrap();
    let plain = p.path().join("plain.csv");
    std::fs::write(&plain, body.trim_start_matches('\u{feff}')).unwrap();
    round_trip(&lo, &plain, "en_US", &[]);
}
