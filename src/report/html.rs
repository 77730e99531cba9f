//! `report.html`: one self-contained page per run (inline SVG and script, nothing fetched). From
//! the top, what was found, then how it was measured: the findings (a line per series: period,
//! knee, best, linked to its chart), the contents, a chart per family of variants and per lone
//! series with two points or more (a second view for series that lie along another axis than x;
//! bars for a sweep of categories only), the points on no curve, the analysis with its readings,
//! progress and failures with their log files, the spread between processes (control re-runs),
//! and the run's identity (spec, bench, command line, machine, driver, compiler, commit). A
//! running sweep's progress comes right after its findings. Hovering a chart shows the nearest
//! point's value ([`hover`]); without script the page is the same, less that. While the run goes
//! on, the page is rewritten as points finish ([`Live`]) and reloads itself every [`RELOAD_S`]
//! seconds.

mod findings;
mod hover;
mod identity;

use super::bars::{bar_charts, bars_svg};
use super::family::{families, family_svg};
use super::series::drawable;
use super::{escape, series_svg, ChartError, ReportError};
use crate::analyze::controls::BetweenProcesses;
use crate::analyze::reading::{human, human_x, small_percent};
use crate::analyze::{analyze_run, Analysis, AnalyzeError, AnalyzeOptions};
use crate::events::marks::{self, Mark, Tally};
use crate::events::{Event, Reporter};
use crate::store::Status;
use crate::store::{self, Cell, Manifest, RunDir, StoreError, Table};
use findings::{contents, findings};
use identity::{description, machine};
use std::collections::BTreeMap;
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
pub const FILE: &str = store::run::REPORT;

/// The run as the page shows it: its folder, its manifest, and its points with their cells
/// typed (one row per point, in sweep order).
struct Run<'a> {
    dir: RunDir,
    /// What the page's links to the run's files (a failed point's logs) start with: nothing in
    /// the run folder, the folder's absolute path in a page written elsewhere (`--out`).
    links: String,
    manifest: &'a Manifest,
    results: Table,
    /// The spec's confidence target.
    target: f64,
}

/// Writes `<run_dir>/report.html` (through a temporary file: a browser never reads half a page).
pub fn write(run_dir: &Path) -> Result<PathBuf, ReportError> {
    write_to(run_dir, None)
}

/// Writes the page of the run in `run_dir` as `<out>/report.html` (`sweep report --out`; the
/// folder is made), writing nothing into the run folder; its links to the run's files name the
/// run folder. `out` None, or the run folder itself: [`write`]. Another run's folder is refused:
/// its own page would be replaced by this run's.
pub fn write_to(run_dir: &Path, out: Option<&Path>) -> Result<PathBuf, ReportError> {
    let whole = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let elsewhere = out.filter(|o| whole(o) != whole(run_dir));
    if let Some(o) = elsewhere.filter(|o| RunDir::new(o).is_run()) {
        return Err(ReportError::OutIsAnotherRun {
            out: o.to_path_buf(),
        });
    }
    let path = elsewhere.map_or_else(|| RunDir::new(run_dir).report(), |o| o.join(FILE));
    let fail = |cause: store::Cause| ReportError::Page {
        path: path.clone(),
        cause,
    };
    let links = match elsewhere {
        Some(o) => {
            std::fs::create_dir_all(o).map_err(|e| fail(e.into()))?;
            // Its own spelling (`run/` or `run`), one slash before what follows.
            let abs: PathBuf = std::path::absolute(run_dir)
                .unwrap_or_else(|_| run_dir.to_path_buf())
                .components()
                .collect();
            format!("{}/", abs.display())
        }
        None => String::new(),
    };
    let text = page_linking(run_dir, links).map_err(|e| fail(e.into()))?;
    store::write_atomic(&path, text.as_bytes()).map_err(|e| fail(e.into()))?;
    Ok(path)
}

/// What the results are drawn as: curves from their analyses (the first against x, maybe a
/// second against the axis along which single points lie), bars, or nothing, and why.
enum Views {
    Lines(Vec<Analysis>),
    Bars,
    Nothing(AnalyzeError),
}

impl Views {
    /// The analysis is made here from the results so far (0.1 s for the 512 points of the
    /// thread sweep).
    /// Along the spec's `[analyze]` (as the run's own analysis.csv and charts), else sweep's
    /// default; an `[analyze]` the results so far do not allow (a live run's first rows) falls
    /// back to the default.
    fn of(run: &store::Run) -> Views {
        let asked = run.manifest.as_ref().and_then(AnalyzeOptions::of_run);
        let spec = asked.and_then(|opts| analyze_run(run, &opts).ok());
        let first = match spec.map_or_else(|| analyze_run(run, &AnalyzeOptions::default()), Ok) {
            Ok(a) => a,
            Err(AnalyzeError::NoNumericAxis { .. }) => return Views::Bars,
            Err(e) => return Views::Nothing(e),
        };
        let mut views = vec![first];
        // Series of a single point on x lie along another axis (copy_all's offset variant against
        // stride): a second view puts that axis on x.
        if let Some(axis) = super::single_point_axis(&views[0]) {
            let opts = AnalyzeOptions {
                x: Some(axis),
                ..Default::default()
            };
            if let Ok(a) = analyze_run(run, &opts) {
                views.push(a);
            }
        }
        Views::Lines(views)
    }

    fn analyses(&self) -> &[Analysis] {
        match self {
            Views::Lines(v) => v,
            _ => &[],
        }
    }
}

/// One chart of the page: its anchor, caption (in the spec's words) and name (in the CSV's
/// columns, shown on hover), SVG (or why there is none) and the series drawn in it (view, index
/// in that view's analysis).
struct Figure {
    id: String,
    caption: String,
    name: String,
    svg: Result<String, ChartError>,
    series: Vec<(usize, usize)>,
    /// A bar chart's lowest and highest bar, in words.
    span: Option<String>,
}

/// The page of the run in `run_dir`.
pub fn page(run_dir: &Path) -> Result<String, StoreError> {
    page_linking(run_dir, String::new())
}

/// [`page`], its links to the run's files starting with `links`.
fn page_linking(run_dir: &Path, links: String) -> Result<String, StoreError> {
    let read = store::Run::open_dir(run_dir)?;
    let mut m = read.manifest.clone().ok_or_else(|| StoreError::NotARun {
        dir: run_dir.to_path_buf(),
    })?;
    // `running` with no sweep holding the run: it was killed before it could say so (a page
    // that said Running reloaded itself forever).
    if m.state == crate::store::RunState::Running && !RunDir::new(run_dir).in_use() {
        m.state = crate::store::RunState::Interrupted;
    }
    let m = &m;
    let run = Run {
        dir: RunDir::new(run_dir),
        links,
        manifest: m,
        results: read.points()?,
        target: read.target_rel_ci(),
    };
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
    if let Some(d) = description(m) {
        let _ = writeln!(h, "<p class=\"what\">{}</p>", escape(&d));
    }
    let now = chrono::Utc::now().format("%Y-%m-%d %H:%M:%S UTC");
    if running {
        let _ = writeln!(
            h,
            "<p class=\"live\">Running: this page was written at {now} and reloads every {RELOAD_S} s.</p>"
        );
    }
    let views = Views::of(&read);
    let footer = super::footer(run_dir);
    let figures = figures(&views, &read, footer.as_deref());
    let (tally, rows) = tally(&run);
    findings(&mut h, &views, &figures, &run, &tally);
    let between = views
        .analyses()
        .first()
        .and_then(|a| a.between_processes.as_ref());
    let analyses = views.analyses();
    let analysed = !analyses.is_empty();
    // What was found first (the charts and their analysis), then how it was measured (progress,
    // the spread between processes, the machine); a running sweep's progress right after the
    // findings, where its reader looks.
    let mut sections: Vec<(&str, &str)> = vec![("findings", "Findings")];
    if running {
        sections.push(("progress", "Progress"));
    }
    sections.push(("charts", "Charts"));
    if analysed {
        sections.push(("analysis", "Analysis"));
    }
    if !running {
        sections.push(("progress", "Progress"));
    }
    if between.is_some() {
        sections.push(("between", "Between processes"));
    }
    sections.push(("run", "Run"));
    contents(&mut h, &figures, &sections);
    for (id, _) in &sections {
        match *id {
            "progress" => progress(&mut h, &run, &tally, &rows),
            "charts" => {
                h.push_str("<h2 id=\"charts\">Charts</h2>\n");
                if let Views::Nothing(why) = &views {
                    let _ = writeln!(h, "<p>No curve analysis: {}</p>", escape(&why.to_string()));
                }
                for f in &figures {
                    figure(&mut h, f);
                }
                if !analyses.is_empty() {
                    lone_points(&mut h, analyses);
                }
            }
            "analysis" => {
                h.push_str("<h2 id=\"analysis\">Analysis</h2>\n<table><tr><th>series</th><th>x</th><th>period</th><th>knee</th><th>best</th><th>not fitted</th><th>reading</th></tr>\n");
                for a in analyses {
                    table_rows(&mut h, a);
                }
                h.push_str("</table>\n");
                // Each series counts the values its own metric marks (not the row's status), by
                // cause.
                if let Some(first) = analyses.first() {
                    let marked: Vec<String> = first
                        .series
                        .iter()
                        .filter_map(|s| {
                            let m = marks::series_sentence(s, &tally)?;
                            Some(format!(
                                "<code>{}</code> {}",
                                escape(&s.name),
                                no_break(&escape(&m))
                            ))
                        })
                        .collect();
                    if !marked.is_empty() {
                        let _ = writeln!(
                            h,
                            "<p>Values marked by their own metric: {}.</p>",
                            marked.join("; ")
                        );
                    }
                }
            }
            "between" => {
                if let Some(b) = between {
                    between_processes(&mut h, b);
                }
            }
            "run" => machine(&mut h, m),
            _ => {}
        }
    }
    if !analyses.is_empty() {
        hover::script(&mut h, analyses, &figures);
    }
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
th{background:#f2f2f2}.num{text-align:right}.live{background:#fff3cd;padding:.4em}.what{color:#555;margin-top:-.5em}
#findings ul{padding-left:1.2em;margin:.3em 0}#findings li{margin:.15em 0}
nav ol{margin:.3em 0;padding-left:1.4em}nav ol ol{padding-left:0;list-style:none}nav ol ol li{display:inline}
nav ol ol li+li:before{content:' · '}
figure{margin:1em 0;position:relative}svg{max-width:100%;height:auto}footer{color:#777;margin-top:2em;font-size:90%}
.tip{position:absolute;background:#fff;border:1px solid #888;border-radius:3px;padding:.25em .5em;font-size:13px;
white-space:nowrap;pointer-events:none;box-shadow:0 1px 4px rgba(0,0,0,.25)}
.hover-mark{fill:none;stroke:#000;stroke-width:2}
</style>
";

/// Every chart of the page, in order: per view, a chart per family of variants, then one per
/// series with two points or more in none; bars for a sweep of categories only.
fn figures(views: &Views, run: &store::Run, footer: Option<&str>) -> Vec<Figure> {
    let mut out: Vec<Figure> = Vec::new();
    let mut add = |mut f: Figure| {
        // Anchors stay unique whatever the names.
        let base = f.id.clone();
        let mut n = 1;
        while out.iter().any(|g| g.id == f.id) {
            n += 1;
            f.id = format!("{base}-{n}");
        }
        out.push(f);
    };
    match views {
        Views::Lines(views) => {
            for (v, analysis) in views.iter().enumerate() {
                let fams = families(analysis);
                let mut in_family = vec![false; analysis.series.len()];
                // Captions (and the contents) in the spec's words, as the charts' titles.
                let labels = super::family::labels_of(analysis);
                for f in &fams {
                    add(Figure {
                        id: format!("chart-{}", anchor(&format!("family-{}", f.stem))),
                        caption: f.title.clone(),
                        name: f.name.clone(),
                        svg: family_svg(f, analysis, footer),
                        series: f.series.iter().map(|&i| (v, i)).collect(),
                        span: None,
                    });
                    for &i in &f.series {
                        in_family[i] = true;
                    }
                }
                let infos = super::point_info(analysis);
                for (i, s) in analysis.series.iter().enumerate() {
                    if in_family[i] || !drawable(s) {
                        continue;
                    }
                    add(Figure {
                        id: format!("chart-{}", anchor(&s.file_stem)),
                        caption: super::series::series_in_words(&labels, &s.metric, &s.group),
                        name: s.name.clone(),
                        svg: series_svg(s, &analysis.x, footer, &infos[i], &labels),
                        series: vec![(v, i)],
                        span: None,
                    });
                }
            }
        }
        Views::Bars => {
            for b in &bar_charts(run) {
                add(Figure {
                    id: format!("chart-{}", anchor(&b.stem)),
                    caption: b.name.clone(),
                    name: b.name.clone(),
                    svg: bars_svg(b, footer),
                    series: Vec::new(),
                    span: b.span(),
                });
            }
        }
        Views::Nothing(_) => {}
    }
    out
}

/// `name` as an HTML id: letters, digits, `-` and `_`, the rest as `-`.
fn anchor(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// The control re-runs (`controls.csv`): how far a value moves when its program runs again in
/// a fresh process, per metric (as analysis.md says it).
fn between_processes(h: &mut String, between: &[BetweenProcesses]) {
    h.push_str("<h2 id=\"between\">Between processes</h2>\n");
    let Some(first) = between.first() else {
        h.push_str("<p>Too few control re-runs to say (<code>controls.csv</code>).</p>\n");
        return;
    };
    let _ = writeln!(
        h,
        "<p>{} measured again in a fresh process, later in the sweep \
         (<code>controls.csv</code>). ± 95 % is how far a value scatters when its program runs \
         again, beside each point's own confidence interval: from the metric's own pairs, or the \
         median over the metrics where that is larger (what differs between processes, the SM \
         clock above all, is shared by every metric of a program), or the range of the run's SM \
         clock readings where that is larger still ({}).</p>",
        {
            let pairs = between.iter().map(|b| b.pairs).max().unwrap_or(0);
            let were = if pairs == 1 { "was" } else { "were" };
            format!("{} {were}", crate::words::plural(pairs, "point"))
        },
        small_percent(first.clock_range)
    );
    h.push_str("<table><tr>");
    for c in crate::analyze::reading::BETWEEN_COLUMNS {
        let _ = write!(h, "<th>{}</th>", escape(c));
    }
    h.push_str("</tr>\n");
    for b in between {
        h.push_str("<tr>");
        for (i, c) in crate::analyze::reading::between_cells(b).iter().enumerate() {
            // Pairs and the two ± columns are numbers.
            let class = if (1..=3).contains(&i) {
                " class=\"num\""
            } else {
                ""
            };
            let _ = write!(h, "<td{class}>{}</td>", escape(c));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
}

/// Points done, measured and failed (by why), the values marked per cause with what each cause
/// means and how results.csv writes it (the terminal's words, [`crate::events::marks`]), and every
/// point that failed with its reason and log files.
fn progress(h: &mut String, run: &Run, tally: &Tally, rows: &BTreeMap<Status, usize>) {
    let t = &run.results;
    let measured: usize = rows
        .iter()
        .filter(|(s, _)| s.measured())
        .map(|(_, n)| n)
        .sum();
    let failed = t.rows.len() - measured;
    let why: Vec<String> = rows
        .iter()
        .filter(|(s, _)| !s.measured())
        .map(|(s, n)| format!("{} {}", marks::count(*n), s.as_str()))
        .chain(
            // A status cell no reader knows (a CSV edited by hand): named as it is.
            unknown_statuses(run)
                .into_iter()
                .map(|(k, n)| format!("{} {}", marks::count(n), escape(&k))),
        )
        .collect();
    let _ = writeln!(
        h,
        "<h2 id=\"progress\">Progress</h2>\n<p>{} of {} {} done: {} measured, {} failed{}.</p>",
        marks::count(t.rows.len()),
        marks::count(run.manifest.points_total),
        crate::words::noun_for(run.manifest.points_total, "point"),
        marks::count(measured),
        marks::count(failed),
        if why.is_empty() {
            String::new()
        } else {
            format!(" ({})", why.join(", "))
        }
    );
    marked_values(h, run, tally);
    let failed = failed_rows(run);
    if failed.is_empty() {
        return;
    }
    let id = t.column(store::schema::POINT_ID_COLUMN);
    let status = t.column(store::schema::STATUS_COLUMN);
    let err = t.column(store::schema::ERROR_COLUMN);
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
        let dir = format!("{}/{pid}", store::POINTS);
        let logs = ["build.log", "stderr.txt", "stdout.txt"]
            .iter()
            .filter(|f| run.dir.points().join(&pid).join(f).is_file())
            .map(|f| {
                format!(
                    "<a href=\"{}{1}/{2}\">{1}/{2}</a>",
                    escape(&run.links),
                    escape(&dir),
                    f
                )
            })
            .collect::<Vec<_>>()
            .join("<br>");
        // The reason without the log it names where the logs are linked beside it.
        let error = err.map_or(String::new(), |c| cell_text(&r[c]));
        let reason = match crate::events::terminal::split_log(&error) {
            (reason, Some(_)) if !logs.is_empty() => reason,
            _ => error,
        };
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{logs}</td></tr>",
            escape(&pid),
            escape(&axes),
            escape(&status.map_or(String::new(), |c| cell_text(&r[c]))),
            escape(&reason),
        );
    }
    h.push_str("</table>\n");
}

/// The rows of points that failed (no measured status).
fn failed_rows<'a>(run: &'a Run) -> Vec<&'a Vec<Cell>> {
    let t = &run.results;
    let measured = |s: &str| matches!(s, "ok" | "noisy" | "unstable");
    let Some(status) = t.column(store::schema::STATUS_COLUMN) else {
        return Vec::new();
    };
    t.rows
        .iter()
        .filter(|r| !measured(&cell_text(&r[status])))
        .collect()
}

/// The run's values, measured points × metrics, and those marked per cause (each metric's own
/// status: `<metric>_status`, or `store::metric_status`'s reading of an older run; the cause from
/// `_spread` and `_repeat_spread`), with the points counted by their row's status.
fn tally(run: &Run) -> (Tally, BTreeMap<Status, usize>) {
    use crate::store::{metric_status, metric_status_column, MetricCells};
    let t = &run.results;
    let target = run.target;
    let row_status = t.column(store::schema::STATUS_COLUMN);
    let columns: Vec<_> = run
        .manifest
        .metrics
        .iter()
        .map(|m| {
            let stat = |what: &str| t.column(&format!("{}_{what}", m.name));
            (
                m.name.as_str(),
                t.column(&metric_status_column(&m.name)),
                stat("spread"),
                stat("repeat_spread"),
                stat("rel_ci"),
            )
        })
        .collect();
    let mut tally = Tally::default();
    let mut rows = BTreeMap::new();
    for r in &t.rows {
        let text = |c: Option<usize>| c.map(|c| cell_text(&r[c]));
        let number = |c: Option<usize>| match c.map(|c| &r[c]) {
            Some(Cell::Number(v)) => Some(*v),
            _ => None,
        };
        let row = text(row_status).unwrap_or_default();
        if let Some(s) = Status::parse(&row) {
            *rows.entry(s).or_insert(0) += 1;
        }
        for &(name, own, spread, repeat, rel_ci) in &columns {
            let own = text(own);
            let cells = MetricCells {
                row_status: &row,
                own: own.as_deref(),
                spread: number(spread),
                rel_ci: number(rel_ci),
            };
            let Some(status) = metric_status(cells, target) else {
                continue;
            };
            let mark = Mark::of(status, number(spread), number(repeat), target).map(|m| {
                let amount = match m {
                    Mark::Placement => number(spread),
                    Mark::Processes => number(repeat),
                    Mark::Noisy => number(rel_ci),
                };
                (m, amount)
            });
            tally.add(name, mark);
        }
    }
    (tally, rows)
}

/// Status cells that are no status (a CSV edited by hand), with their counts.
fn unknown_statuses(run: &Run) -> Vec<(String, usize)> {
    let t = &run.results;
    let Some(status) = t.column(store::schema::STATUS_COLUMN) else {
        return Vec::new();
    };
    let mut out: Vec<(String, usize)> = Vec::new();
    for s in t.rows.iter().map(|r| cell_text(&r[status])) {
        if Status::parse(&s).is_some() {
            continue;
        }
        match out.iter_mut().find(|(k, _)| *k == s) {
            Some((_, n)) => *n += 1,
            None => out.push((s, 1)),
        }
    }
    out
}

/// The values marked, per cause and per metric (the most first), in the terminal's words: `1,192
/// of 6,144 values vary with buffer placement (8 of 12 metrics): global_even_grid 265, up to 72 %,
/// ...; 0 noisy`, then what each cause means and how results.csv writes it.
fn marked_values(h: &mut String, run: &Run, tally: &Tally) {
    if tally.values == 0 {
        return;
    }
    let mut clauses = tally.clauses();
    for (clause, mark) in clauses.iter_mut().zip(
        [Mark::Placement, Mark::Processes, Mark::Noisy]
            .into_iter()
            .filter(|m| *m != Mark::Processes || tally.count(Mark::Processes) > 0),
    ) {
        let mut by: Vec<(&str, usize, f64)> = tally
            .metrics
            .iter()
            .map(|m| {
                (
                    m.metric.as_str(),
                    m.count[mark as usize],
                    m.largest[mark as usize],
                )
            })
            .filter(|m| m.1 > 0)
            .collect();
        by.sort_by_key(|m| std::cmp::Reverse(m.1));
        *clause = escape(clause);
        if !by.is_empty() {
            let listed: Vec<String> = by
                .iter()
                .map(|(m, n, largest)| {
                    let up_to = if *largest > 0.0 {
                        format!(", up to {}", no_break(&marks::share(*largest)))
                    } else {
                        String::new()
                    };
                    format!("<code>{}</code> {}{up_to}", escape(m), marks::count(*n))
                })
                .collect();
            *clause += &format!(": {}", listed.join("; "));
        }
    }
    let _ = writeln!(h, "<p>{}.</p>", clauses.join(". "));
    let notes: Vec<String> = tally
        .legend(run.target)
        .into_iter()
        .chain(tally.csv_line())
        .map(|l| no_break(&code_spans(&escape(&l))))
        .collect();
    if !notes.is_empty() {
        let _ = writeln!(h, "<p class=\"what\">{}.</p>", notes.join(". "));
    }
}

/// `text` with a percent sign kept on its number's line (`31&nbsp;%`).
pub(super) fn no_break(text: &str) -> String {
    text.replace(" %", "&nbsp;%")
}

fn cell_text(c: &Cell) -> String {
    match c {
        Cell::Empty => String::new(),
        Cell::Number(v) => human(*v),
        Cell::Text(t) => t.clone(),
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
            "<tr><td>{}</td><td>{} = {}</td><td class=\"num\">{}</td></tr>",
            escape(&s.name),
            escape(&first.x),
            escape(&human_x(x)),
            // In its unit as every other value reads (16.00 GFLOP/s, not `16000 MFlops`:
            // review 20a L3).
            escape(&crate::units::format_value(v, &s.unit))
        );
    }
    h.push_str("</table>\n");
}

/// A row of the analysis table per series with two points or more (a single point has no
/// period, knee or best to speak of).
fn table_rows(h: &mut String, analysis: &Analysis) {
    for s in analysis.series.iter().filter(|s| drawable(s)) {
        let c = &s.curve;
        // The period and the one nested in it, as the closing table writes them.
        let period = crate::events::closing::period_words(c);
        let knee = c.knee.map_or("-".to_string(), human);
        // As the chart's subtitle says it: the value first, then where (x is the column before).
        let best = c.best.as_ref().map_or("-".to_string(), |b| {
            format!(
                "{} at {}",
                crate::units::format_value(b.value, &s.unit),
                human_x(b.x)
            )
        });
        // Points the fits left out (outliers, or a first point above a ramp's line), in x order.
        let mut outliers = c.outliers.clone();
        outliers.sort_by(f64::total_cmp);
        let not_fitted = outliers
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
            code_spans(&escape(&s.reading))
        );
    }
}

/// A chart with its anchor and caption, its XML declaration dropped (not allowed inside HTML).
fn figure(h: &mut String, f: &Figure) {
    let svg = match &f.svg {
        Ok(svg) => svg,
        Err(e) => {
            let _ = writeln!(
                h,
                "<p id=\"{}\">chart of {}: {}</p>",
                f.id,
                escape(&f.caption),
                escape(&e.to_string())
            );
            return;
        }
    };
    let body = match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    };
    let _ = writeln!(
        h,
        "<figure id=\"{}\">{body}<figcaption title=\"{}\">{}</figcaption></figure>",
        f.id,
        escape(&f.name),
        escape(&f.caption)
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
        let thread = std::thread::Builder::new().spawn(move || {
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
                        use std::io::Write as _;
                        let _ = writeln!(
                            std::io::stderr(),
                            "warning: the live report is not written: {e}"
                        );
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
            // No thread to write it (EAGAIN under a memory limit): the report is written at
            // the run's end only.
            thread: thread.ok(),
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
                    use std::io::Write as _;
                    let _ = writeln!(std::io::stderr(), "warning: {e}");
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

/// Markdown's code spans (`` `x` ``) of escaped text as `<code>` elements: the readings are
/// written for analysis.md and name models and metrics that way.
fn code_spans(escaped: &str) -> String {
    let mut out = String::with_capacity(escaped.len());
    for (i, part) in escaped.split('`').enumerate() {
        match (i % 2, i) {
            (1, _) => out += &format!("<code>{part}</code>"),
            _ => out += part,
        }
    }
    // An odd number of backticks: the last one was no span; put it back as it was.
    if escaped.matches('`').count() % 2 == 1 {
        if let Some(at) = out.rfind("<code>") {
            out.replace_range(at..at + "<code>".len(), "`");
            out.truncate(out.len() - "</code>".len());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{code_spans, table_rows};

    #[test]
    fn the_analysis_table_says_the_nested_period_the_best_value_first_and_outliers_in_order() {
        let mut s = crate::report::series::tests::series();
        let mut nested = s.curve.period.clone().expect("the saw has a period");
        nested.period = 64.0;
        nested.level = crate::analyze::curve::Confidence::Medium;
        s.curve.secondary = Some(nested);
        s.curve.outliers = vec![63.0, 2.0, 33.0];
        let best = s.curve.best.clone().expect("the saw has a best");
        let knee = s.curve.knee.expect("the saw has a knee");
        let analysis = crate::analyze::Analysis {
            source: "results.csv".into(),
            x: "threads".into(),
            by: vec![],
            merged: vec![],
            series: vec![s],
            between_processes: None,
            semicolon: false,
        };
        let mut h = String::new();
        table_rows(&mut h, &analysis);
        // As the closing table writes the period; the best as the chart's subtitle says it.
        let cells = format!(
            "<td>threads</td><td>32 (high) +64 (medium)</td><td class=\"num\">{}</td><td>{} at {}</td><td>2, 33, 63</td>",
            crate::analyze::reading::human(knee),
            crate::units::format_value(best.value, "MFlops"),
            crate::analyze::reading::human(best.x)
        );
        assert!(h.contains(&cells), "{cells}\nnot in\n{h}");
    }

    #[test]
    fn code_spans_of_a_reading_become_code_elements() {
        assert_eq!(
            code_spans("model `whole_warps` fits; `a` and `b`"),
            "model <code>whole_warps</code> fits; <code>a</code> and <code>b</code>"
        );
        assert_eq!(code_spans("no span"), "no span");
        assert_eq!(code_spans("one ` alone"), "one ` alone");
        assert_eq!(
            code_spans("`x` then ` alone"),
            "<code>x</code> then ` alone"
        );
    }
}
