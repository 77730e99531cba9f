//! `report.html`: one self-contained page per run (inline SVG, no script, nothing fetched): the
//! sweep, the machine, progress and failures with their log files, a chart per family of
//! variants and per lone series with two points or more (a second view for series that lie along
//! another axis than x; bars for a sweep of categories only), the points on no curve, and the
//! analysis with its readings. While the run goes on, the
//! page is rewritten as points finish ([`Live`]) and reloads itself every [`RELOAD_S`] seconds.

use super::bars::{bar_charts, bars_svg};
use super::family::{families, family_svg};
use super::series::drawable;
use super::{escape, series_svg, ReportError};
use crate::analyze::reading::human;
use crate::analyze::{analyze_csv, Analysis, AnalyzeError, AnalyzeOptions};
use crate::events::{Event, Reporter};
use crate::export::{Cell, Run};
use crate::store::{self, Manifest};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often a running report reloads itself in the browser.
pub const RELOAD_S: u32 = 10;
/// At most one rewrite per this many seconds while a run goes on.
const REWRITE_S: u64 = 5;
/// The page's name in the run folder.
pub const FILE: &str = "report.html";

/// Writes `<run_dir>/report.html` (through a temporary file: a browser never reads half a page).
pub fn write(run_dir: &Path) -> Result<PathBuf, ReportError> {
    let path = run_dir.join(FILE);
    let fail = |e: String| ReportError::Page {
        path: path.clone(),
        reason: e,
    };
    let text = page(run_dir).map_err(fail)?;
    let tmp = run_dir.join(format!(".{FILE}.tmp"));
    std::fs::write(&tmp, text).map_err(|e| fail(e.to_string()))?;
    std::fs::rename(&tmp, &path).map_err(|e| fail(e.to_string()))?;
    Ok(path)
}

/// The page of the run in `run_dir`.
pub fn page(run_dir: &Path) -> Result<String, String> {
    let run = Run::load(run_dir).map_err(|e| e.to_string())?;
    let m = &run.manifest;
    let running = m.state == crate::store::RunState::Running;
    let mut h = String::new();
    let title = format!("sweep: {} ({})", m.sweep, m.state);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>{}</title>\n",
        escape(&title)
    );
    if running {
        let _ = writeln!(h, "<meta http-equiv=\"refresh\" content=\"{RELOAD_S}\">");
    }
    h.push_str(STYLE);
    h.push_str("</head><body>\n");
    let _ = writeln!(h, "<h1>{}</h1>", escape(&title));
    let now = chrono::Utc::now().format("%Y-%m-%d %H:%M:%S UTC");
    if running {
        let _ = writeln!(
            h,
            "<p class=\"live\">Running: this page was written at {now} and reloads every {RELOAD_S} s.</p>"
        );
    }
    machine(&mut h, m);
    progress(&mut h, &run);
    charts_and_analysis(&mut h, run_dir);
    let _ = writeln!(
        h,
        "<footer>sweep {} · {} · written {now}</footer>\n</body></html>",
        env!("CARGO_PKG_VERSION"),
        escape(&run_dir.display().to_string())
    );
    Ok(h)
}

const STYLE: &str = "<style>
body{font-family:sans-serif;margin:1.5em;max-width:1320px;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}
th{background:#f2f2f2}.num{text-align:right}.live{background:#fff3cd;padding:.4em}
figure{margin:1em 0}svg{max-width:100%;height:auto}footer{color:#777;margin-top:2em;font-size:90%}
</style>
";

fn row(h: &mut String, k: &str, v: &str) {
    let _ = writeln!(h, "<tr><th>{}</th><td>{}</td></tr>", escape(k), escape(v));
}

fn machine(h: &mut String, m: &Manifest) {
    h.push_str("<h2>Run</h2>\n<table>\n");
    row(h, "bench", &m.bench);
    row(
        h,
        "spec",
        &format!("{} (sha256 {:.12})", m.spec_path, m.spec_hash),
    );
    if !m.overrides.is_empty() {
        row(h, "overrides", &m.overrides.join(" "));
    }
    row(h, "host", &m.host);
    for g in &m.gpus_start {
        row(
            h,
            &format!("GPU {}", g.index),
            &format!(
                "{}, driver {}, SM {} MHz, memory {} MHz, {} °C at start",
                g.name, g.driver, g.sm_clock_mhz, g.mem_clock_mhz, g.temperature_c
            ),
        );
    }
    row(
        h,
        "compiler",
        &format!(
            "{} {} {}",
            m.compiler,
            m.compiler_version,
            m.arch.clone().unwrap_or_default()
        ),
    );
    let dirty = match m.git_dirty {
        Some(true) => " (tracked files changed since: the commit alone is not what ran)",
        _ => "",
    };
    row(h, "git commit", &format!("{}{dirty}", m.git_commit));
    row(h, "started", &m.started);
    row(h, "finished", m.finished.as_deref().unwrap_or("-"));
    row(h, "state", m.state.as_str());
    h.push_str("</table>\n");
}

/// Points done by status, and every point that failed with its reason and log files.
fn progress(h: &mut String, run: &Run) {
    let t = &run.results;
    let status = t.column("status");
    let mut counts: Vec<(String, usize)> = Vec::new();
    for r in &t.rows {
        let s = status.map_or(String::new(), |c| cell_text(&r[c]));
        match counts.iter_mut().find(|(k, _)| *k == s) {
            Some((_, n)) => *n += 1,
            None => counts.push((s, 1)),
        }
    }
    let by_status = counts
        .iter()
        .map(|(k, n)| format!("{n} {}", escape(k)))
        .collect::<Vec<_>>()
        .join(", ");
    let _ = writeln!(
        h,
        "<h2>Progress</h2>\n<p>{} of {} points done{}.</p>",
        t.rows.len(),
        run.manifest.points_total,
        if by_status.is_empty() {
            String::new()
        } else {
            format!(": {by_status}")
        }
    );
    marked_by_metric(h, run);
    let measured = |s: &str| matches!(s, "ok" | "noisy" | "unstable");
    let failed: Vec<&Vec<Cell>> = t
        .rows
        .iter()
        .filter(|r| status.is_some_and(|c| !measured(&cell_text(&r[c]))))
        .collect();
    if failed.is_empty() {
        return;
    }
    let id = t.column("point_id");
    let err = t.column("error");
    h.push_str(
        "<table><tr><th>point</th><th>axes</th><th>status</th><th>reason</th><th>logs</th></tr>\n",
    );
    for r in failed {
        let pid = id.map_or(String::new(), |c| cell_text(&r[c]));
        let axes = run
            .manifest
            .axes
            .iter()
            .filter_map(|a| t.column(a).map(|c| format!("{a}={}", cell_text(&r[c]))))
            .collect::<Vec<_>>()
            .join(" ");
        let dir = format!("points/{pid}");
        let logs = ["build.log", "stderr.txt", "stdout.txt"]
            .iter()
            .filter(|f| run.dir.join(&dir).join(f).is_file())
            .map(|f| format!("<a href=\"{0}/{1}\">{0}/{1}</a>", escape(&dir), f))
            .collect::<Vec<_>>()
            .join("<br>");
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{logs}</td></tr>",
            escape(&pid),
            escape(&axes),
            escape(&status.map_or(String::new(), |c| cell_text(&r[c]))),
            escape(&err.map_or(String::new(), |c| cell_text(&r[c]))),
        );
    }
    h.push_str("</table>\n");
}

/// Per metric, the points its own status marks unstable or noisy (`<metric>_status`, or
/// `store::metric_status`'s reading of an older run), with what the words mean; nothing when none
/// is marked.
fn marked_by_metric(h: &mut String, run: &Run) {
    use crate::store::{metric_status_in_row, Dialect, Status};
    let t = &run.results;
    let target = crate::store::target_rel_ci(&run.dir);
    let mut counts: Vec<(&str, usize, usize)> = Vec::new();
    for m in &run.manifest.metrics {
        let (mut noisy, mut unstable) = (0, 0);
        for r in &t.rows {
            // Typed cells, numbers written in full (not rounded for people) with `.` as the mark.
            let fields: Vec<String> = r
                .iter()
                .map(|c| match c {
                    Cell::Number(v) => format!("{v}"),
                    c => cell_text(c),
                })
                .collect();
            match metric_status_in_row(&t.header, &fields, &m.name, Dialect::Comma, target) {
                Some(Status::Noisy) => noisy += 1,
                Some(Status::Unstable) => unstable += 1,
                _ => {}
            }
        }
        counts.push((&m.name, noisy, unstable));
    }
    for (word, means, pick) in [
        (
            "unstable",
            crate::store::UNSTABLE_MEANS,
            (|c: &(&str, usize, usize)| c.2) as fn(&(&str, usize, usize)) -> usize,
        ),
        ("noisy", crate::store::NOISY_MEANS, |c| c.1),
    ] {
        let listed: Vec<String> = counts
            .iter()
            .filter(|c| pick(c) > 0)
            .map(|c| format!("<code>{}</code> {}", escape(c.0), pick(c)))
            .collect();
        if !listed.is_empty() {
            let _ = writeln!(
                h,
                "<p>{} points by metric (each metric's own status): {} <em>({word}: {})</em>.</p>",
                word[..1].to_uppercase() + &word[1..],
                listed.join(", "),
                escape(means)
            );
        }
    }
}

fn cell_text(c: &Cell) -> String {
    match c {
        Cell::Empty => String::new(),
        Cell::Number(v) => human(*v),
        Cell::Text(t) => t.clone(),
    }
}

/// A chart per family of variants and per series in none, then the analysis table; the analysis
/// is made here from the results so far (0.1 s for the 512 points of the thread sweep).
fn charts_and_analysis(h: &mut String, run_dir: &Path) {
    let csv = run_dir.join(store::RESULTS);
    let footer = super::footer(run_dir);
    let footer = footer.as_deref();
    let analysis = match analyze_csv(&csv, &AnalyzeOptions::default()) {
        Ok(a) => a,
        // Categories only: bars.
        Err(AnalyzeError::NoNumericAxis { .. }) => {
            h.push_str("<h2>Charts</h2>\n");
            bars(h, &csv, footer);
            return;
        }
        Err(e) => {
            let _ = writeln!(
                h,
                "<h2>Charts</h2>\n<p>No curve analysis: {}</p>",
                escape(&e.to_string())
            );
            return;
        }
    };
    h.push_str("<h2>Charts</h2>\n");
    let mut views = vec![analysis];
    // Series of a single point on x lie along another axis (copy_all's offset variant against
    // stride): a second view puts that axis on x.
    if let Some(axis) = super::single_point_axis(&views[0]) {
        let opts = AnalyzeOptions {
            x: Some(axis),
            ..Default::default()
        };
        if let Ok(a) = analyze_csv(&csv, &opts) {
            views.push(a);
        }
    }
    for a in &views {
        charts(h, a, footer);
    }
    lone_points(h, &views);
    h.push_str("<h2>Analysis</h2>\n<table><tr><th>series</th><th>x</th><th>period</th><th>knee</th><th>best</th><th>not fitted</th><th>reading</th></tr>\n");
    for a in &views {
        table_rows(h, a);
    }
    h.push_str("</table>\n");
}

/// A chart per family of variants and per series with two points or more in none.
fn charts(h: &mut String, analysis: &Analysis, footer: Option<&str>) {
    let fams = families(analysis);
    let mut in_family = vec![false; analysis.series.len()];
    for f in &fams {
        match family_svg(f, analysis, footer) {
            Ok(svg) => figure(h, &svg, &f.name),
            Err(e) => {
                let _ = writeln!(h, "<p>chart of {}: {}</p>", escape(&f.name), escape(&e));
            }
        }
        for &i in &f.series {
            in_family[i] = true;
        }
    }
    let infos = super::point_info(analysis);
    for ((s, _), info) in analysis
        .series
        .iter()
        .zip(&in_family)
        .zip(&infos)
        .filter(|((s, f), _)| !**f && drawable(s))
    {
        match series_svg(s, &analysis.x, footer, info) {
            Ok(svg) => figure(h, &svg, &s.name),
            Err(e) => {
                let _ = writeln!(h, "<p>chart of {}: {}</p>", escape(&s.name), escape(&e));
            }
        }
    }
}

/// A table of the points that are on no chart: series of a single point in every view
/// (copy_all's coalesced copy, its one point at stride 1 and offset 0).
fn lone_points(h: &mut String, views: &[Analysis]) {
    // A point: its metric and every axis value (x's as a number).
    let key = |a: &Analysis, s: &crate::analyze::SeriesAnalysis, x: f64| {
        let mut k: Vec<(String, String)> = s.group.clone();
        k.push((a.x.clone(), human(x)));
        k.sort();
        (s.column.clone(), k)
    };
    let drawn: Vec<_> = views
        .iter()
        .flat_map(|a| {
            a.series
                .iter()
                .filter(|s| drawable(s))
                .flat_map(move |s| s.data.iter().map(move |p| key(a, s, p.0)))
        })
        .collect();
    let Some(first) = views.first() else {
        return;
    };
    let lone: Vec<(&crate::analyze::SeriesAnalysis, f64, f64)> = first
        .series
        .iter()
        .filter(|s| !drawable(s))
        .flat_map(|s| s.data.iter().map(move |p| (s, p.0, p.1)))
        .filter_map(|(s, x, v)| v.map(|v| (s, x, v)))
        .filter(|(s, x, _)| !drawn.contains(&key(first, s, *x)))
        .collect();
    if lone.is_empty() {
        return;
    }
    h.push_str(
        "<h3>Points on no curve</h3>\n<table><tr><th>series</th><th>x</th><th>value</th></tr>\n",
    );
    for (s, x, v) in lone {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{} = {}</td><td class=\"num\">{} {}</td></tr>",
            escape(&s.name),
            escape(&first.x),
            escape(&human(x)),
            escape(&human(v)),
            escape(&s.unit)
        );
    }
    h.push_str("</table>\n");
}

/// A row of the analysis table per series with two points or more (a single point has no
/// period, knee or best to speak of).
fn table_rows(h: &mut String, analysis: &Analysis) {
    for s in analysis.series.iter().filter(|s| drawable(s)) {
        let c = &s.curve;
        let period = c.period.as_ref().map_or("none".to_string(), |p| {
            format!("{} ({})", human(p.period), p.level.as_str())
        });
        let knee = c.knee.map_or("-".to_string(), human);
        let best = c.best.as_ref().map_or("-".to_string(), |b| {
            format!("{} = {}", human(b.x), human(b.value))
        });
        // Points the fits left out (outliers, or a first point above a ramp's line).
        let not_fitted = c
            .outliers
            .iter()
            .map(|&x| human(x))
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&s.name),
            escape(&analysis.x),
            escape(&period),
            escape(&knee),
            escape(&best),
            escape(&not_fitted),
            escape(&s.reading)
        );
    }
}

/// A bar chart per metric for a sweep with no numeric axis (categories only).
fn bars(h: &mut String, csv: &Path, footer: Option<&str>) {
    match bar_charts(csv) {
        Ok(charts) => {
            for b in &charts {
                match bars_svg(b, footer) {
                    Ok(svg) => figure(h, &svg, &b.name),
                    Err(e) => {
                        let _ = writeln!(h, "<p>chart of {}: {}</p>", escape(&b.name), escape(&e));
                    }
                }
            }
        }
        Err(e) => {
            let _ = writeln!(h, "<p>No bar charts: {}</p>", escape(&e));
        }
    }
}

/// An inline SVG chart: its XML declaration dropped (not allowed inside HTML).
fn figure(h: &mut String, svg: &str, caption: &str) {
    let body = match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    };
    let _ = writeln!(
        h,
        "<figure>{body}<figcaption>{}</figcaption></figure>",
        escape(caption)
    );
}

/// Wraps a [`Reporter`] and keeps `<run>/report.html` current while the run goes on: a thread
/// rewrites it at most every few seconds after points finished, off the runner's path; when the
/// run is over (its manifest final), the page's last version.
pub struct Live {
    inner: Box<dyn Reporter>,
    run_dir: Arc<Mutex<Option<PathBuf>>>,
    dirty: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Live {
    pub fn new(inner: Box<dyn Reporter>) -> Live {
        let run_dir: Arc<Mutex<Option<PathBuf>>> = Arc::default();
        let dirty = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let (d, s, r) = (dirty.clone(), stop.clone(), run_dir.clone());
        let thread = std::thread::spawn(move || {
            let mut last: Option<Instant> = None;
            let mut warned = false;
            while !s.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(200));
                let due = last.is_none_or(|t| t.elapsed() >= Duration::from_secs(REWRITE_S));
                if !due || !d.load(Ordering::SeqCst) {
                    continue;
                }
                let Some(dir) = r.lock().ok().and_then(|g| g.clone()) else {
                    continue;
                };
                d.store(false, Ordering::SeqCst);
                last = Some(Instant::now());
                if let Err(e) = write(&dir) {
                    if !warned {
                        eprintln!("warning: the live report is not written: {e}");
                        warned = true;
                    }
                }
            }
        });
        Live {
            inner,
            run_dir,
            dirty,
            stop,
            thread: Some(thread),
        }
    }
}

impl Reporter for Live {
    fn on(&mut self, event: &Event) {
        match event {
            Event::Started { run_dir, .. } => {
                if let Ok(mut g) = self.run_dir.lock() {
                    *g = Some(run_dir.to_path_buf());
                }
                self.dirty.store(true, Ordering::SeqCst);
            }
            Event::Finished { .. } => self.dirty.store(true, Ordering::SeqCst),
            Event::RunFinished { summary } => {
                // The report's last version (it makes its own analysis): no rewrite after it.
                self.stop_rewrites();
                if let Err(e) = write(&summary.run_dir) {
                    eprintln!("warning: {e}");
                }
            }
            _ => {}
        }
        self.inner.on(event);
    }
}

impl Live {
    fn stop_rewrites(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.stop_rewrites();
    }
}
