//! `sweep export` on copies of the committed H100 thread sweep: the long form, formula cells, and
//! what the read-only commands leave of the run.

use crate::common::{rows, rows_of, stderr, Rows};
use assert_cmd::Command;
use std::path::{Path, PathBuf};

/// A copy of the committed thread sweep's run folder (manifest, results, analysis) in a
/// temporary folder: the run is `<tmp>/run`.
fn thread_sweep() -> (tempfile::TempDir, PathBuf) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h100/threads_1_512");
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    std::fs::create_dir(&run).unwrap();
    for f in [
        "manifest.json",
        "results.csv",
        "analysis.csv",
        "controls.csv",
    ] {
        std::fs::copy(src.join(f), run.join(f)).unwrap();
    }
    (tmp, run)
}

fn sweep() -> Command {
    Command::cargo_bin("sweep").unwrap()
}

fn export(run: &Path, args: &[&str]) -> std::process::Output {
    sweep().arg("export").arg(run).args(args).output().unwrap()
}

/// The rows of a CSV written with `delimiter` (a byte-order mark skipped), by column name.
fn read(csv: &Path, delimiter: u8) -> Rows {
    let bytes = std::fs::read(csv).unwrap();
    rows_of(
        bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(&bytes),
        delimiter,
    )
}

#[test]
fn export_long_writes_one_row_per_point_and_metric_in_csv_and_json() {
    let (_tmp, run) = thread_sweep();
    let out = export(&run, &["--format", "long"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let wide = rows(&run.join("results.csv"));
    let long = read(&run.join("export/results_long.csv"), b',');
    assert_eq!(long.len(), 512 * 12);
    let header: Vec<&str> = long[0].keys().map(String::as_str).collect();
    for c in [
        "point_id", "index", "threads", "metric", "unit", "value", "rel_ci", "ci",
    ] {
        assert!(header.contains(&c), "{header:?}");
    }
    // Point 99, metric shared_nc_grid: every cell from its wide row.
    let w = wide.iter().find(|r| r["index"] == "99").unwrap();
    let l = long
        .iter()
        .find(|r| r["index"] == "99" && r["metric"] == "shared_nc_grid")
        .unwrap();
    assert_eq!(l["point_id"], w["point_id"]);
    assert_eq!(l["threads"], w["threads"]);
    assert_eq!(l["unit"], "MFlops");
    let num = |s: &str| s.parse::<f64>().unwrap();
    assert_eq!(num(&l["value"]), num(&w["shared_nc_grid_mflops"]));
    assert_eq!(num(&l["rel_ci"]), num(&w["shared_nc_grid_rel_ci"]));
    let ci = num(&w["shared_nc_grid_mflops"]) * num(&w["shared_nc_grid_rel_ci"]);
    assert!(
        (num(&l["ci"]) / ci - 1.0).abs() < 1e-5,
        "{} vs {ci}",
        l["ci"]
    );
    assert_eq!(l["spread"], w["shared_nc_grid_spread"]);
    assert_eq!(l["placements"], w["shared_nc_grid_placements"]);
    assert_eq!(l["samples"], w["shared_nc_grid_samples"]);
    assert_eq!(
        l["status"], w["status"],
        "no per-metric status column: the row's"
    );
    // Sweep order, metrics in the spec's order within a point.
    assert_eq!(long[0]["index"], "0");
    assert_eq!(long[0]["metric"], "shared_nc_1blk");
    assert_eq!(long[11]["metric"], "global_half_grid");
    assert_eq!(long[12]["index"], "1");

    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("export/results_long.json")).unwrap())
            .unwrap();
    let json = json.as_array().unwrap();
    assert_eq!(json.len(), 512 * 12);
    let j = &json[99 * 12 + 1];
    assert_eq!(j["metric"], "shared_nc_grid");
    assert_eq!(j["point_id"].as_str().unwrap(), w["point_id"]);
    assert_eq!(j["threads"], 100);
    assert_eq!(
        j["value"].as_f64().unwrap(),
        num(&w["shared_nc_grid_mflops"])
    );
    assert_eq!(j["ci"].as_f64().unwrap(), num(&l["ci"]));
    assert!(j["error"].is_null());
}

#[test]
fn export_long_honours_the_semicolon_dialect() {
    let (_tmp, run) = thread_sweep();
    let out = export(&run, &["--format", "long", "--dialect", "semicolon"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(run.join("export/results_long.csv")).unwrap();
    assert!(text.starts_with("\u{feff}point_id;index;threads;metric;unit;value;rel_ci;ci;"));
    let long = read(&run.join("export/results_long.csv"), b';');
    assert_eq!(long.len(), 512 * 12);
    let wide = rows(&run.join("results.csv"));
    let w = &wide.iter().find(|r| r["index"] == "0").unwrap();
    assert_eq!(
        long[0]["value"],
        w["shared_nc_1blk_mflops"].replace('.', ",")
    );
    assert!(long[0]["rel_ci"].starts_with("0,"), "{:?}", long[0]);
}

/// The run's results.csv with a row torn by a crash: the last row cut in its middle.
fn tear_last_row(run: &Path) -> Vec<u8> {
    let csv = run.join("results.csv");
    let mut bytes = std::fs::read(&csv).unwrap();
    let keep = bytes.len() - 300;
    bytes.truncate(keep);
    std::fs::write(&csv, &bytes).unwrap();
    bytes
}

#[test]
fn export_report_and_analyze_leave_a_torn_results_csv_as_it_is() {
    let (_tmp, run) = thread_sweep();
    let torn = tear_last_row(&run);
    let csv = run.join("results.csv");
    let mtime = std::fs::metadata(&csv).unwrap().modified().unwrap();
    let out = export(&run, &["--format", "csv,json,long,xlsx"]);
    assert!(out.status.success(), "{}", stderr(&out));
    for command in ["report", "analyze"] {
        let out = sweep().arg(command).arg(&run).output().unwrap();
        assert!(out.status.success(), "{command}: {}", stderr(&out));
    }
    assert_eq!(
        std::fs::read(&csv).unwrap(),
        torn,
        "the run's results.csv is unchanged"
    );
    assert_eq!(std::fs::metadata(&csv).unwrap().modified().unwrap(), mtime);
    // The torn row is left out in memory: 511 whole points.
    assert_eq!(rows(&run.join("export/results.csv")).len(), 511);
    assert_eq!(
        read(&run.join("export/results_long.csv"), b',').len(),
        511 * 12
    );
}

#[cfg(unix)]
#[test]
fn a_read_only_run_can_be_exported_elsewhere() {
    use std::os::unix::fs::PermissionsExt;
    let (tmp, run) = thread_sweep();
    tear_last_row(&run);
    let ro = std::fs::Permissions::from_mode(0o555);
    for f in std::fs::read_dir(&run).unwrap() {
        let f = f.unwrap().path();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o444)).unwrap();
    }
    std::fs::set_permissions(&run, ro).unwrap();
    if std::fs::OpenOptions::new()
        .write(true)
        .open(run.join("results.csv"))
        .is_ok()
    {
        std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o755)).unwrap();
        crate::common::skip("running as root: chmod a-w does not stop writes (the test above checks the bytes and mtime instead)");
        return;
    }
    let out = tmp.path().join("out");
    let o = sweep()
        .arg("export")
        .arg(&run)
        .args(["--format", "csv,long", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(rows(&out.join("results.csv")).len(), 511);
}

/// `sweep args...` under a file-size limit of `kib` KiB (`ulimit -f`): the kernel stops the
/// first write past it with SIGXFSZ, as a crash or a kill in the middle of writing a file would.
fn under_file_size_limit(kib: u32, args: &[&std::ffi::OsStr]) -> std::process::Output {
    std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("ulimit -f {kib}; exec \"$0\" \"$@\""))
        .arg(assert_cmd::cargo::cargo_bin("sweep"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn an_export_stopped_mid_write_leaves_the_previous_files_whole() {
    let (_tmp, run) = thread_sweep();
    let out = export(&run, &["--format", "json,xlsx,long"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let files = [
        "run.json",
        "results.xlsx",
        "results_long.csv",
        "results_long.json",
    ];
    let before: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(run.join("export").join(f)).unwrap())
        .collect();
    for format in ["json", "xlsx", "long"] {
        let out = under_file_size_limit(
            20,
            &[
                "export".as_ref(),
                run.as_os_str(),
                "--format".as_ref(),
                format.as_ref(),
            ],
        );
        assert!(!out.status.success(), "{format}: the limit stopped it");
        for (f, old) in files.iter().zip(&before) {
            let now = std::fs::read(run.join("export").join(f)).unwrap();
            assert!(
                now == *old,
                "{format}: export/{f} is {} bytes, was {}",
                now.len(),
                old.len()
            );
        }
    }
}

#[test]
fn an_analysis_stopped_mid_write_leaves_the_previous_files_whole() {
    let (_tmp, run) = thread_sweep();
    let out = sweep().arg("analyze").arg(&run).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let files = ["analysis.json", "analysis.csv", "analysis.md"];
    let before: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(run.join(f)).unwrap())
        .collect();
    let out = under_file_size_limit(8, &["analyze".as_ref(), run.as_os_str()]);
    assert!(!out.status.success(), "the limit stopped it");
    for (f, old) in files.iter().zip(&before) {
        let now = std::fs::read(run.join(f)).unwrap();
        assert!(now == *old, "{f} is {} bytes, was {}", now.len(), old.len());
    }
}

/// Text that a spreadsheet would run as a formula, as values of an axis.
const FORMULAS: [&str; 4] = ["=HYPERLINK(\"http://x\")", "+cmd", "@SUM(1)", "-2+3"];

#[test]
fn formula_cells_are_defused_in_every_csv_made_for_a_spreadsheet_and_numbers_stay_numbers() {
    let p = crate::common::project();
    let labels: Vec<String> = FORMULAS
        .iter()
        .chain(&["-1.5", "plain"])
        .map(|v| format!("{v:?}"))
        .collect();
    std::fs::write(
        p.path().join("sweeps/formula.toml"),
        format!(
            "bench = \"hostsaw\"\ncompiler = \"cc\"\n[vars]\nmode = \"ok\"\nslow_ms = 0\n\
             [[axis]]\nname = \"threads\"\nrange = [1, 3]\n[[axis]]\nname = \"label\"\n\
             values = [{}]\n[[metric]]\nname = \"saw\"\nunit = \"MFlops\"\n\
             [analyze]\nx = \"threads\"\n",
            labels.join(", ")
        ),
    )
    .unwrap();
    let out = crate::common::sweep(p.path())
        .args(["run", "sweeps/formula.toml", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let run = crate::common::run_dirs(&p.path().join("output/formula"))
        .pop()
        .unwrap();
    for args in [
        vec!["export", run.to_str().unwrap(), "--format", "csv,long"],
        vec!["analyze", run.to_str().unwrap()],
        vec![
            "compare",
            run.to_str().unwrap(),
            run.to_str().unwrap(),
            "--out",
            "cmp",
        ],
    ] {
        let out = crate::common::sweep(p.path()).args(&args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    }
    // The run's own results.csv keeps the values as measured: sweep reads it back.
    let own = rows(&run.join("results.csv"));
    assert!(own.iter().any(|r| r["label"] == FORMULAS[0]));
    for (csv, column) in [
        (run.join("export/results.csv"), "label"),
        (run.join("export/results_long.csv"), "label"),
        (run.join("analysis.csv"), "label"),
        (run.join("export/analysis.csv"), "label"),
        (p.path().join("cmp/compare.csv"), "label"),
    ] {
        let text = std::fs::read_to_string(&csv).unwrap();
        let cells: Vec<String> = read(&csv, b',')
            .into_iter()
            .map(|r| r[column].clone())
            .collect();
        for f in FORMULAS {
            assert!(
                cells.contains(&format!("'{f}")),
                "{}: {cells:?}",
                csv.display()
            );
            assert!(
                !cells.contains(&f.to_string()),
                "{}: {f} bare",
                csv.display()
            );
        }
        assert!(
            cells.contains(&"-1.5".to_string()),
            "{}: a number stays: {cells:?}",
            csv.display()
        );
        assert!(cells.contains(&"plain".to_string()));
        assert!(
            !text.contains(",=") && !text.contains("\n="),
            "{}",
            csv.display()
        );
    } // LibreOffice, importing the export with its formulas evaluated, reads every label as text.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lo = std::process::Command::new("bash")
        .arg(root.join("scripts/ensure-libreoffice.sh"))
        .output()
        .unwrap();
    if lo.status.code() == Some(3) {
        crate::common::skip(stderr(&lo).trim());
        return;
    }
    let lo = String::from_utf8_lossy(&lo.stdout).into_owned();
    let get = |k: &str| {
        lo.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .map(|v| v.trim_matches('\'').to_string())
            .unwrap_or_default()
    };
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(LIBREOFFICE_FORMULAS)
        .arg(get("SOFFICE"))
        .arg(run.join("export/results.csv"))
        .arg(p.path().join("lo"))
        .env("PYTHONPATH", get("OPENPYXL_PATH"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        crate::common::stdout(&out),
        stderr(&out)
    );
    // 3 points x 6 labels: the 4 formulas and `plain` are text, `-1.5` a number.
    assert_eq!(
        crate::common::stdout(&out).trim(),
        "0 formula cells, 15 labels as text"
    );
}

/// argv: soffice, a comma CSV, a scratch folder. Converts the CSV to xlsx with LibreOffice (UTF-8,
/// comma, formulas evaluated: CSV filter token 13) and counts its formula cells and the text
/// cells of its `label` column.
const LIBREOFFICE_FORMULAS: &str = r#"
import subprocess, sys, pathlib, openpyxl
soffice, csv, scratch = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
scratch.mkdir(parents=True, exist_ok=True)
src = scratch / "in.csv"
src.write_bytes(csv.read_bytes())
subprocess.run([soffice, "--headless", f"-env:UserInstallation=file://{scratch}/profile",
    "--infilter=Text - txt - csv (StarCalc):44,34,76,1,,1033,false,false,false,false,false,-1,true",
    "--convert-to", "xlsx", "--outdir", str(scratch), str(src)], check=True, capture_output=True, timeout=300)
ws = openpyxl.load_workbook(scratch / "in.xlsx").active
rows = list(ws.iter_rows())
label = [c.value for c in rows[0]].index("label")
formulas = sum(c.data_type == "f" for r in rows for c in r)
text = sum(r[label].data_type == "s" for r in rows[1:])
print(f"{formulas} formula cells, {text} labels as text")
"#;
