//! report.html (issue 14) in real headless Chromium: the report of a committed H100 run, and the
//! live report of a host-program sweep while it runs. A page must load without console errors,
//! and its screenshot must show the charts (pixels of the data's and the peaks' colours), not
//! just exist. scripts/ensure-chromium.sh installs Chromium when missing (as root, as in CI).
use crate::common::{project, run_dirs, skip, stderr, stdout, sweep, sweep_process};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn chromium() -> Option<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new("bash")
        .arg(root.join("scripts/ensure-chromium.sh"))
        .output()
        .unwrap();
    if out.status.code() == Some(3) {
        skip(stderr(&out).trim());
        return None;
    }
    assert!(out.status.success(), "ensure-chromium.sh: {}", stderr(&out));
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Loads `page` in headless Chromium and screenshots it into `png`; returns the console
/// messages Chromium logged.
fn screenshot(browser: &str, page: &Path, png: &Path) -> Vec<String> {
    screenshot_sized(browser, page, png, (1100, 1500))
}

fn screenshot_sized(browser: &str, page: &Path, png: &Path, (w, h): (u32, u32)) -> Vec<String> {
    let profile = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--window-size={w},{h}"))
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(png.is_file(), "no screenshot: {}", stderr(&out));
    stderr(&out)
        .lines()
        .filter(|l| l.contains("CONSOLE"))
        .map(String::from)
        .collect()
}

/// Pixels of the screenshot near each colour (tests/report/pixels.py).
fn pixels(png: &Path, colours: &[&str]) -> Vec<usize> {
    pixels_in(png, None, colours)
}

/// Pixels near each colour within the box (x0, y0, x1, y1) of the screenshot.
fn pixels_in(png: &Path, area: Option<[u32; 4]>, colours: &[&str]) -> Vec<usize> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let area = area.map(|[x0, y0, x1, y1]| format!("--box={x0},{y0},{x1},{y1}"));
    let out = std::process::Command::new("python3")
        .arg(root.join("tests/report/pixels.py"))
        .arg(png)
        .args(area)
        .args(colours)
        .output()
        .unwrap();
    assert!(out.status.success(), "pixels.py: {}", stderr(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split(' ').nth(1).unwrap().parse().unwrap())
        .collect()
}

/// The data's blue and the peaks' red of the charts; the live banner's yellow.
const BLUE: &str = "1F77B4";
const RED: &str = "D62728";
const BANNER: &str = "FFF3CD";
/// The uncertainty band (the data's blue at 25 % on white) and the unstable points' pink.
const BAND: &str = "C7DDEC";
const UNSTABLE: &str = "E377C2";

fn copy_dir(from: &Path, to: &Path) {
    for e in walkdir::WalkDir::new(from)
        .into_iter()
        .filter_map(Result::ok)
    {
        let dst = to.join(e.path().strip_prefix(from).unwrap());
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&dst).unwrap();
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
}

#[test]
fn the_report_of_the_h100_run_shows_its_charts_in_chromium() {
    let Some(browser) = chromium() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("threads_1_512");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h100/threads_1_512"),
        &run,
    );
    let out = sweep(tmp.path()).arg("report").arg(&run).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(
        !html.contains("http-equiv=\"refresh\""),
        "a finished run does not reload"
    );
    assert!(
        !html.contains("<script") && !html.contains("src=\"http"),
        "self-contained"
    );
    assert!(html.contains("NVIDIA H100 80GB HBM3") && html.contains("512 of 512 points done"));
    // One chart per series (none of the thread sweep's twelve form a family: 1blk and grid are
    // 200x apart) and the analysis table with its readings.
    assert_eq!(html.matches("<figure><svg").count(), 12, "charts");
    assert!(html.contains("<td>128 (high)</td>"), "analysis table");
    // Each metric counts its own unstable points, and the page says what unstable means.
    assert!(
        html.contains("<code>shared_nc_grid</code> 4, ")
            && html.contains("<code>global_all_grid</code> 337, ")
            && html.contains("(unstable: the placements of the kernel's buffers in memory gave values further apart than the target allows)"),
        "per-metric counts"
    );
    let png = tmp.path().join("shot.png");
    let console = screenshot(&browser, &run.join("report.html"), &png);
    assert!(console.is_empty(), "console messages: {console:?}");
    let n = pixels(&png, &[BLUE, RED, BAND, UNSTABLE]);
    // The first charts are in view: their curves, peak dots, uncertainty bands and the marks
    // on unstable points (2250, 924, 4461 and 8695 pixels when this was written; the unstable
    // marks 714 since a point is marked only where its own metric is: issue 33).
    assert!(n[0] > 1000, "data pixels: {}", n[0]);
    assert!(n[1] > 200, "peak pixels: {}", n[1]);
    assert!(n[2] > 1000, "band pixels: {}", n[2]);
    assert!(n[3] > 200, "unstable-mark pixels: {}", n[3]);
}

/// The variants' curves (the first four colours of an overlay).
const GREEN: &str = "2CA02C";
const ORANGE: &str = "FF7F0E";

#[test]
fn the_variants_share_a_chart_whose_legend_is_beside_the_plot() {
    let Some(browser) = chromium() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("transpose_sizes");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h100/transpose_sizes"),
        &run,
    );
    let out = sweep(tmp.path()).arg("report").arg(&run).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    // The four variants of each metric on one chart: three charts, not twelve.
    assert_eq!(html.matches("<figure><svg").count(), 3, "charts");
    assert!(html.contains("<figcaption>transpose by variant</figcaption>"));
    // Wide enough that the charts show at their own size (1260 pixels, from x = 24, the page's
    // margin): the plot is 1000 pixels wide, the legend's column right of it.
    let png = tmp.path().join("shot.png");
    let console = screenshot_sized(&browser, &run.join("report.html"), &png, (1400, 1500));
    assert!(console.is_empty(), "console messages: {console:?}");
    let colours = [BLUE, RED, GREEN, ORANGE];
    let plot = pixels_in(&png, Some([24, 0, 24 + 1000, 1500]), &colours);
    let swatches = pixels_in(&png, Some([24 + 1000, 0, 24 + 1000 + 40, 1500]), &colours);
    let beyond = pixels_in(&png, Some([24 + 1000 + 40, 0, 1400, 1500]), &colours);
    for (i, c) in colours.iter().enumerate() {
        // Each variant's curve in the plot (1174, 991, 1282 and 2149 pixels when this was
        // written), its swatch in the legend's column (96 each: two charts in view) and nothing
        // of it further right, where the legend's text is.
        assert!(plot[i] > 500, "{c}: {} pixels in the plot", plot[i]);
        assert!(swatches[i] >= 40, "{c}: {} pixels of swatches", swatches[i]);
        assert_eq!(beyond[i], 0, "{c} right of the swatches");
    }
}

#[test]
fn a_running_sweep_keeps_its_report_current_and_the_page_reloads() {
    let Some(browser) = chromium() else { return };
    let p = project();
    // 64 points of 150 ms each: about 10 s of running to look at.
    let mut child = sweep_process(p.path())
        .args(["run", "sweeps/saw.toml", "-q", "--set", "slow_ms=150"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let page: PathBuf = loop {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no live report"
        );
        std::thread::sleep(Duration::from_millis(200));
        let Some(run) = run_dirs(&p.path().join("output/saw")).pop() else {
            continue;
        };
        let page = run.join("report.html");
        let html = std::fs::read_to_string(&page).unwrap_or_default();
        // Written while running, with some points in (and a chart once two are).
        if html.contains("http-equiv=\"refresh\"") && html.contains("<figure><svg") {
            break page;
        }
    };
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("Running: this page was written at"), "{html}");
    let png = p.path().join("live.png");
    let console = screenshot(&browser, &page, &png);
    assert!(console.is_empty(), "console messages: {console:?}");
    let n = pixels(&png, &[BLUE, BANNER]);
    assert!(n[0] > 300, "data pixels: {}", n[0]);
    assert!(n[1] > 2000, "banner pixels: {}", n[1]);
    let status = child.wait().unwrap();
    assert!(status.success(), "the sweep failed");
    // Its last version: finished, no reload, every point.
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("http-equiv=\"refresh\""));
    assert!(html.contains("64 of 64 points done: 64 ok."), "{html}");
    assert!(
        html.contains("period 16"),
        "the saw's period in the analysis"
    );
}

/// Chart files `sweep plot` wrote into `out/charts`, by name.
fn charts(out: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(out.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn sweep_plot_draws_bars_for_a_sweep_of_categories_only() {
    let tmp = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h100/l1_cache");
    let out = sweep(tmp.path())
        .arg("plot")
        .arg(fixture.join("results.csv"))
        .arg("--out")
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        charts(tmp.path()),
        [
            "l1_cache_gb_per_s.png",
            "l1_cache_gb_per_s.svg",
            "memcpy_d2d_gb_per_s.png",
            "memcpy_d2d_gb_per_s.svg"
        ]
    );
    assert!(stdout(&out).contains("l1_cache_gb_per_s.svg"));
    let svg = std::fs::read_to_string(tmp.path().join("charts/l1_cache_gb_per_s.svg")).unwrap();
    // Grouped by pattern, coloured by caching (ca blue, cg red).
    for text in [
        "l1_cache by pattern and caching",
        "scattered",
        "-Xptxas -dlcm=cg",
    ] {
        assert!(svg.contains(text), "{text} missing");
    }
    assert!(svg.contains("#1F77B4") && svg.contains("#D62728"));
    // Naming a category as x is still an error, with its hint.
    let out = sweep(tmp.path())
        .arg("plot")
        .arg(fixture.join("results.csv"))
        .args(["--x", "pattern"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("`pattern`"), "{}", stderr(&out));
}

#[test]
fn sweep_plot_draws_no_single_point_and_says_where_those_points_lie() {
    let tmp = tempfile::tempdir().unwrap();
    let csv =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h100/copy_all/results.csv");
    let out = sweep(tmp.path())
        .arg("plot")
        .arg(&csv)
        .arg("--out")
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // x is stride: only the stride variant has curves (3 metrics, SVG and PNG); the offset
    // variant's 33 x 3 series and coalesced's 3 have one point each.
    assert_eq!(charts(tmp.path()).len(), 6, "{:?}", charts(tmp.path()));
    assert!(
        stderr(&out).contains(
            "note: 102 series have a single point on `stride` and get no chart (hint: their points lie along `offset`: plot them with --x offset)"
        ),
        "{}",
        stderr(&out)
    );
    let out = sweep(tmp.path())
        .arg("plot")
        .arg(&csv)
        .args(["--x", "offset", "--out"])
        .arg(tmp.path().join("by_offset"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let by_offset = charts(&tmp.path().join("by_offset"));
    assert_eq!(by_offset.len(), 6, "{by_offset:?}");
    assert!(
        by_offset.iter().all(|c| c.contains("variant-offset")),
        "{by_offset:?}"
    );
}

#[test]
fn the_report_draws_every_curve_of_a_sweep_whose_variants_sweep_different_axes() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("copy_all");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h100/copy_all"),
        &run,
    );
    let out = sweep(tmp.path()).arg("report").arg(&run).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    // The stride variant against stride, the offset variant against offset: no single points.
    let captions: Vec<&str> = html
        .split("<figcaption>")
        .skip(1)
        .filter_map(|c| c.split('<').next())
        .collect();
    assert_eq!(captions.len(), 6, "{captions:?}");
    assert!(captions.contains(&"copy_gb_per_s [variant=stride, offset=0]"));
    assert!(captions.contains(&"copy_gb_per_s [variant=offset, stride=1]"));
    // The coalesced copy's one point is in a table, and the analysis lists curves only.
    assert!(html.contains(
        "<tr><td>copy_gb_per_s [variant=coalesced, offset=0]</td><td>stride = 1</td><td class=\"num\">2724 GB/s</td></tr>"
    ));
    let analysis = &html[html.find("<h2>Analysis</h2>").unwrap()..];
    assert_eq!(analysis.matches("<tr><td>").count(), 6);
}
