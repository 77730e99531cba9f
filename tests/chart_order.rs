//! Charts join points in x order (issue 33): whatever the order of the CSV's rows (held points are
//! appended at the end, `--order shuffled` stores rows shuffled),
//! every chart draws the same lines, and no line of any committed fixture's charts runs back in x.
use crate::common::stderr;
use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// `sweep plot` of `csv` (charts/ beside it): the SVG files it wrote, by name.
fn plot(csv: &Path) -> Vec<(String, String)> {
    let o = Command::cargo_bin("sweep")
        .unwrap()
        .arg("plot")
        .arg(csv)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}: {}", csv.display(), stderr(&o));
    let mut svgs: Vec<(String, String)> = std::fs::read_dir(csv.parent().unwrap().join("charts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "svg"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    svgs.sort();
    svgs
}

/// A copy of a run's results.csv and manifest.json in a new folder, its rows given by `rows`.
fn copy_run(from: &Path, to: &Path, rows: impl Fn(Vec<&str>) -> Vec<String>) -> PathBuf {
    std::fs::create_dir_all(to).unwrap();
    std::fs::copy(from.join("manifest.json"), to.join("manifest.json")).unwrap();
    let text = std::fs::read_to_string(from.join("results.csv")).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let body = rows(lines.collect());
    let csv = to.join("results.csv");
    std::fs::write(&csv, format!("{header}\n{}\n", body.join("\n"))).unwrap();
    csv
}

#[test]
fn a_run_drawn_shuffled_with_held_points_appended_gives_the_same_charts() {
    let run = fixtures().join("h100/threads_1_512");
    let tmp = tempfile::tempdir().unwrap();
    let in_order = copy_run(&run, &tmp.path().join("in_order"), |rows| {
        rows.into_iter().map(String::from).collect()
    });
    let shuffled = copy_run(&run, &tmp.path().join("shuffled"), |rows| {
        // A fixed shuffle (an LCG's Fisher-Yates) of all but every 37th row, which comes at the
        // end, as a held point's combined row does. (A point written twice is refused by every
        // reader: review 12b H2.)
        let mut out: Vec<String> = rows
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 37 != 0)
            .map(|(_, r)| r.to_string())
            .collect();
        let mut state: u64 = 33;
        for i in (1..out.len()).rev() {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            out.swap(i, (state >> 33) as usize % (i + 1));
        }
        out.extend(rows.iter().step_by(37).map(|r| r.to_string()));
        out
    });
    let (a, b) = (plot(&in_order), plot(&shuffled));
    assert_eq!(a.len(), b.len());
    assert!(a.len() >= 12, "a chart per series: {}", a.len());
    for ((name_a, svg_a), (name_b, svg_b)) in a.iter().zip(&b) {
        assert_eq!(name_a, name_b);
        assert!(
            svg_a == svg_b,
            "`{name_a}` differs between the sweep's order and shuffled"
        );
    }
}

/// The open lines of an SVG (`<polyline>`, and `<path>` without a closing `z`), each as its
/// points. Closed shapes (bands, markers) are areas, not lines. Every line of a chart counts: the
/// data's lines (whatever their colour or width) and the marks around them alike.
fn open_lines(svg: &str) -> Vec<Vec<(f64, f64)>> {
    let attr = |el: &str, name: &str| -> Option<String> {
        let at = el.find(&format!(" {name}=\""))? + name.len() + 3;
        Some(el[at..].split('"').next()?.to_string())
    };
    let numbers = |s: &str| -> Vec<f64> {
        s.split(|c: char| c == ',' || c.is_whitespace() || c.is_ascii_alphabetic())
            .filter(|t| !t.is_empty())
            .map(|t| t.parse::<f64>().unwrap())
            .collect()
    };
    let mut lines = Vec::new();
    for el in svg.split('<').skip(1) {
        if let Some(points) = el.strip_prefix("polyline").and_then(|e| attr(e, "points")) {
            let v = numbers(&points);
            lines.push(v.chunks(2).map(|p| (p[0], p[1])).collect());
        } else if let Some(d) = el.strip_prefix("path").and_then(|e| attr(e, "d")) {
            if d.contains(['z', 'Z']) {
                continue;
            }
            assert!(
                !d.contains(|c: char| "mlhvcsqtaHVCSQTA".contains(c)),
                "a path this test does not read yet (only absolute M and L): {d}"
            );
            let v = numbers(&d);
            lines.push(v.chunks(2).map(|p| (p[0], p[1])).collect());
        }
    }
    lines
}

#[test]
fn no_line_of_any_committed_fixtures_charts_runs_back_in_x() {
    let mut csvs: Vec<PathBuf> = Vec::new();
    for group in ["h100", "h200x2"] {
        for e in std::fs::read_dir(fixtures().join(group)).unwrap() {
            let csv = e.unwrap().path().join("results.csv");
            if csv.is_file() {
                csvs.push(csv);
            }
        }
    }
    for e in std::fs::read_dir(fixtures().join("analysis")).unwrap() {
        csvs.push(e.unwrap().path());
    }
    csvs.sort();
    assert!(csvs.len() >= 18, "{csvs:?}");
    let tmp = tempfile::tempdir().unwrap();
    let mut lines_seen = 0;
    for (i, csv) in csvs.iter().enumerate() {
        // Re-plotted with this code into a folder of its own (the manifest beside it, if any).
        let dir = tmp.path().join(i.to_string());
        std::fs::create_dir_all(&dir).unwrap();
        let manifest = csv.with_file_name("manifest.json");
        if manifest.is_file() {
            std::fs::copy(&manifest, dir.join("manifest.json")).unwrap();
        }
        let copy = dir.join("results.csv");
        std::fs::copy(csv, &copy).unwrap();
        for (name, svg) in plot(&copy) {
            for line in open_lines(&svg) {
                lines_seen += 1;
                for w in line.windows(2) {
                    assert!(
                        w[1].0 >= w[0].0,
                        "{} `{name}`: a line runs back from x = {} to {}",
                        csv.display(),
                        w[0].0,
                        w[1].0
                    );
                }
            }
        }
    }
    assert!(
        lines_seen > 100,
        "the charts' lines were found: {lines_seen}"
    );
}

#[test]
fn open_lines_are_read_from_polylines_and_open_paths_only() {
    let svg = r#"<svg><polyline fill="none" points="1,2 3,4 "/><path d="M 1 1 L 0 2"/><path d="M0 0 L1 1 L0 1 Z"/><polygon points="5,5 1,1"/></svg>"#;
    assert_eq!(
        open_lines(svg),
        [vec![(1.0, 2.0), (3.0, 4.0)], vec![(1.0, 1.0), (0.0, 2.0)]]
    );
}
