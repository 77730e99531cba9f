//! Figures as they come out of `sweep plot` (issue 33): titles naming the experiment, axes in
//! words with units, the spec's families overlaid with their bands and labels, one SVG behind
//! the PNG and PDF, and the options that change them (bad values refused in one line).
use crate::common::{stderr, sweep};
use std::path::{Path, PathBuf};

/// The committed H100 thread sweep in `dir`, its manifest carrying today's spec (with the
/// `label` and `family` keys), as a fresh run of it would.
fn thread_sweep(dir: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fixture = root.join("tests/fixtures/h100/threads_1_512");
    std::fs::copy(fixture.join("results.csv"), dir.join("results.csv")).unwrap();
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture.join("manifest.json")).unwrap())
            .unwrap();
    m["spec"] = std::fs::read_to_string(root.join("sweeps/threads_1_512.toml"))
        .unwrap()
        .into();
    std::fs::write(dir.join("manifest.json"), m.to_string()).unwrap();
    dir.join("results.csv")
}

/// The text of every SVG text element, trimmed (plotters puts it on a line of its own).
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim().replace("&amp;", "&"))
        })
        .collect()
}

/// Whether `svg` has a text element that reads `text` (or starts with it, `text…`).
fn has_text(svg: &str, text: &str) -> bool {
    texts(svg).iter().any(|t| t == text || t.starts_with(text))
}

/// Width and height of a PNG, from its header.
fn png_size(path: &Path) -> (u32, u32) {
    let b = std::fs::read(path).unwrap();
    assert_eq!(
        &b[..8],
        b"\x89PNG\r\n\x1a\n",
        "{} is no PNG",
        path.display()
    );
    let be = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    (be(16), be(20))
}

#[test]
fn chosen_metrics_are_overlaid_with_their_labels_bands_and_units_in_every_format() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = thread_sweep(tmp.path());
    let out = sweep(tmp.path())
        .arg("plot")
        .arg(&csv)
        .args([
            "--metrics",
            "shared_nc_grid,shared_2way_grid,shared_3way_grid",
        ])
        .args(["--format", "svg,png,pdf", "--size", "900x500"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let charts = tmp.path().join("charts");
    // Its own file, named by the metrics chosen: not the spec family's chart, which it would
    // overwrite with fewer curves when fewer are chosen.
    let stem = "family-overlay-shared_nc_grid-shared_2way_grid-shared_3way_grid";
    assert!(!charts
        .join("family-Shared-memory-stores--full-grid.svg")
        .exists());
    let svg = std::fs::read_to_string(charts.join(format!("{stem}.svg"))).unwrap();
    for text in [
        "Shared-memory stores, full grid — threads per block",
        "no conflict",
        "2-way conflict",
        "3-way conflict",
        "throughput (TFLOP/s)",
        "threads per block",
    ] {
        assert!(has_text(&svg, text), "{text} missing: {:?}", texts(&svg));
    }
    for text in [
        "data-y-unit=\"TFLOP/s\"",
        "data-y-scale=\"0.000001\"",
        "width=\"900\"",
    ] {
        assert!(svg.contains(text), "{text} missing");
    }
    assert_eq!(
        svg.matches("class=\"series\"").count(),
        3,
        "one line a metric"
    );
    // A band per curve: three filled polygons.
    assert_eq!(svg.matches("<polygon").count(), 3);
    assert_eq!(png_size(&charts.join(format!("{stem}.png"))), (900, 500));
    let pdf = std::fs::read(charts.join(format!("{stem}.pdf"))).unwrap();
    assert!(pdf.starts_with(b"%PDF-"));
    // Only the chart asked for.
    assert_eq!(std::fs::read_dir(&charts).unwrap().count(), 3);
}

#[test]
fn a_series_chart_names_the_experiment_and_says_the_finding_below() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = thread_sweep(tmp.path());
    let out = sweep(tmp.path())
        .arg("plot")
        .arg(&csv)
        .args(["--y", "shared_nc_grid_mflops,shared_2way_grid_mflops"])
        .args(["--format", "svg"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let charts = tmp.path().join("charts");
    let svg = std::fs::read_to_string(charts.join("shared_nc_grid_mflops.svg")).unwrap();
    for text in [
        "Shared-memory stores, full grid: no conflict — threads per block",
        "period 32, peaks at threads ≡ 0 (mod 32), high confidence",
        "throughput (TFLOP/s)",
        // The footer: machine, driver, compiler in a few words, commit, date, sweep.
        "NVIDIA H100 80GB HBM3 · driver 580.159.04 · nvcc release 13.0, V13.0.88 · commit 4623e66 · 2026-11-25 · sweep threads_1_512",
    ] {
        assert!(has_text(&svg, text), "{text} missing: {:?}", texts(&svg));
    }
    assert!(!svg.contains("Copyright"));
    assert!(svg.contains("data-frame=\"") && svg.contains("data-x=\""));
    assert_eq!(svg.matches("class=\"series\"").count(), 1);
    // The family of the spec, drawn too (its two metrics asked for).
    assert!(charts
        .join("family-Shared-memory-stores--full-grid.svg")
        .is_file());
    assert!(
        !charts.join("shared_nc_grid_mflops.png").exists(),
        "svg only"
    );
}

#[test]
fn titles_and_axis_names_given_by_hand_replace_the_spec_s() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = thread_sweep(tmp.path());
    let out = sweep(tmp.path())
        .arg("plot")
        .arg(&csv)
        .args(["--y", "shared_nc_grid_mflops", "--format", "svg"])
        .args(["--title", "Fig. 2: stores", "--x-label", "block size"])
        .args(["--y-label", "rate (TFLOP/s)"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let svg = std::fs::read_to_string(tmp.path().join("charts/shared_nc_grid_mflops.svg")).unwrap();
    for text in ["Fig. 2: stores", "block size", "rate (TFLOP/s)"] {
        assert!(has_text(&svg, text), "{text} missing: {:?}", texts(&svg));
    }
    assert!(
        !svg.contains("period 32, peaks"),
        "no subtitle under a hand-made title"
    );
}

#[test]
fn bad_plot_options_are_refused_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = thread_sweep(tmp.path());
    for (args, says) in [
        (
            vec!["--size", "abc"],
            "`abc` is not WIDTHxHEIGHT in pixels (hint: e.g. 1260x660)",
        ),
        (
            vec!["--size", "100x100"],
            "`100x100` is out of range (hint: from 480x300 to 8000x8000 pixels)",
        ),
        (vec!["--format", "gif"], "invalid value 'gif' for '--format"),
        (
            vec!["--metrics", "shared_nc_grid,nosuch"],
            "no metric `nosuch` in the results (hint: one of shared_nc_1blk,",
        ),
        (
            vec!["--metrics", "shared_nc_grid"],
            "give no two curves to overlay (hint: name two metrics or more)",
        ),
    ] {
        let out = sweep(tmp.path())
            .arg("plot")
            .arg(&csv)
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        let first = err.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("error: ") && first.contains(says),
            "{args:?}: {err}"
        );
    }
    assert!(!tmp.path().join("charts").exists(), "nothing written");
}

/// A run split by an axis has a series per metric and group: the hint still names each metric
/// once (the H100 pitch sweep: three metrics, two layouts).
#[test]
fn an_unknown_metric_is_refused_with_each_metric_named_once() {
    let tmp = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h100/pitch");
    for f in ["results.csv", "manifest.json"] {
        std::fs::copy(fixture.join(f), tmp.path().join(f)).unwrap();
    }
    let out = sweep(tmp.path())
        .args(["plot", "results.csv", "--metrics", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).trim_end(),
        "error: no metric `nope` in the results (hint: one of pitch, pitch_bytes, memcpy_d2d)"
    );
}

#[test]
fn a_compare_chart_is_named_as_plot_names_the_series_and_shows_b_over_a_beneath() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    for d in [&a, &b] {
        std::fs::create_dir(d).unwrap();
        thread_sweep(d);
    }
    let out = sweep(tmp.path())
        .args([
            "compare",
            "a",
            "b",
            "--y",
            "shared_nc_grid_mflops",
            "--out",
            "cmp",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let svg =
        std::fs::read_to_string(tmp.path().join("cmp/charts/shared_nc_grid_mflops.svg")).unwrap();
    for text in [
        "Shared-memory stores, full grid: no conflict — threads per block",
        "throughput (TFLOP/s)",
        "threads per block",
        // The runs named whole (a long name wraps to a second line).
        "A: NVIDIA H100 80GB HBM3, a",
        "B: NVIDIA H100 80GB HBM3, b",
        // The ratio panel: its axis, the line at 1 and the band of u_A + u_B.
        "B/A",
        "B = A",
        "B/A, band: u_A + u_B",
    ] {
        assert!(
            texts(&svg).iter().any(|t| t == text),
            "{text} missing: {:?}",
            texts(&svg)
        );
    }
    assert!(!texts(&svg).iter().any(|t| t.ends_with('…')), "a cut text");
}

#[test]
fn a_family_over_an_axis_names_each_curve_by_the_axis_s_label_and_value() {
    let tmp = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h100/threads_pitch");
    for f in ["results.csv", "manifest.json"] {
        std::fs::copy(fixture.join(f), tmp.path().join(f)).unwrap();
    }
    let out = sweep(tmp.path())
        .args(["plot", "results.csv", "--y", "global_all_grid_mflops"])
        .args(["--format", "svg"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let charts = tmp.path().join("charts");
    let svg = std::fs::read_to_string(charts.join("family-global_all_grid-by-layout.svg")).unwrap();
    for text in [
        "block layout: dense",
        "block layout: line128",
        "block layout: align256",
    ] {
        assert!(has_text(&svg, text), "{text} missing: {:?}", texts(&svg));
    }
    assert!(!svg.contains("layout=dense"), "the raw key=value");
    // A series' title names its group in the same words.
    let one =
        std::fs::read_to_string(charts.join("global_all_grid_mflops__layout-dense.svg")).unwrap();
    assert!(
        has_text(
            &one,
            "every thread [block layout: dense] — threads per block"
        ),
        "{:?}",
        texts(&one)
    );
}

#[test]
fn the_chart_and_the_analysis_say_the_peaks_modulo_the_same_period() {
    let tmp = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h100/bank_stride");
    for f in ["results.csv", "manifest.json"] {
        std::fs::copy(fixture.join(f), tmp.path().join(f)).unwrap();
    }
    let out = sweep(tmp.path())
        .args(["plot", "results.csv", "--format", "svg"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let svg = std::fs::read_to_string(tmp.path().join("charts/bank_stride_gb_per_s.svg")).unwrap();
    let said = "stride ≡ 1, 3, …, 31 (mod 32)";
    assert!(
        texts(&svg).iter().any(|t| t.contains(said)),
        "{:?}",
        texts(&svg)
    );
    let out = sweep(tmp.path())
        .args(["analyze", "results.csv"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let md = std::fs::read_to_string(tmp.path().join("analysis.md")).unwrap();
    let reading = crate::common::reading(&md, "bank_stride_gb_per_s").unwrap();
    assert!(reading.contains(said), "{reading}");
    assert!(!md.contains("(mod 2)"), "a second period in the reading");
}

/// The committed aos_soa run with its numeric axis `touched` left out (one value of it kept):
/// a run of categories only.
fn categories_only(dir: &Path) -> PathBuf {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h100/aos_soa");
    let text = std::fs::read_to_string(fixture.join("results.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let t = header.iter().position(|h| *h == "touched").unwrap();
    let cut = |l: &str| -> (String, String) {
        let cells: Vec<&str> = l.split(',').collect();
        let mut kept = cells.clone();
        kept.remove(t);
        (cells[t].to_string(), kept.join(","))
    };
    let rows: Vec<(String, String)> = lines.map(cut).collect();
    let mut out = cut(&header.join(",")).1 + "\n";
    for (v, row) in &rows {
        if *v == rows[0].0 {
            out += &format!("{row}\n");
        }
    }
    let csv = dir.join("results.csv");
    std::fs::write(&csv, out).unwrap();
    csv
}

#[test]
fn on_a_run_of_categories_only_no_hint_sends_back_to_x() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = categories_only(tmp.path());
    for args in [
        vec!["analyze"],
        vec!["analyze", "--x", "layout"],
        vec!["plot", "--x", "layout"],
    ] {
        let out = sweep(tmp.path()).args(&args).arg(&csv).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = stderr(&out);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!err.contains("with --x"), "{args:?}: the hint loops: {err}");
        assert!(err.contains("as bars"), "{args:?}: {err}");
    }
    // The way out the hint names works.
    let out = sweep(tmp.path()).arg("plot").arg(&csv).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // With a numeric axis left, the hint names it.
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h100/aos_soa");
    std::fs::copy(fixture.join("results.csv"), &csv).unwrap();
    let out = sweep(tmp.path())
        .args(["analyze", "--x", "layout"])
        .arg(&csv)
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("(hint: the numeric axes are `touched`; name one with --x)"),
        "{}",
        stderr(&out)
    );
}
