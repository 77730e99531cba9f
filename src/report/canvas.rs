//! The canvas every chart is drawn on, as SVG and PNG: the title across the top, the plot, the
//! legend in a column right of the plot (never over the data), and the machine footer along the
//! bottom.
//!
//! ```text
//! +------------------------------------------+-----------+
//! |          title / subtitle (the analysis's reading)   |  TITLE_H
//! +------------------------------------------+-----------+
//! |                                          |  legend   |
//! |                 plot                     |  column   |  PLOT_H
//! |                                          |           |
//! +------------------------------------------+-----------+
//! | footer: GPU, driver, nvcc, commit, date, sweep       |  FOOTER_H
//! +------------------------------------------------------+
//!            the rest                        legend::WIDTH
//! ```
//!
//! One SVG is drawn (plotters); the PNG is that SVG rasterised (resvg) and the PDF that SVG
//! converted (svg2pdf), both with the built-in font, so every format shows the same text in the
//! same place. The plot's frame (its pixels and axis ranges) is written onto the SVG root.

use super::legend::{self, Entry};
use super::{font, ChartError, ReportError};
use crate::schema::shortest;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};

/// Pixels of every chart unless `--size` says otherwise.
pub(crate) const SIZE: (u32, u32) = (1260, 660);
/// The title's band: the title, and under it the subtitle (what the analysis found).
pub(crate) const TITLE_H: u32 = 58;
/// The plot's width at the default size.
#[cfg(test)]
pub(crate) const PLOT_W: u32 = SIZE.0 - legend::WIDTH;
pub(crate) const FOOTER_H: u32 = 24;
/// The smallest chart that still holds a plot beside its legend.
pub const MIN_SIZE: (u32, u32) = (480, 300);

/// A file format of a chart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Svg,
    /// Rasterised from the very same SVG (resvg), text in the built-in font.
    Png,
    /// Converted from the very same SVG (svg2pdf), text embedded as glyphs.
    Pdf,
}

impl Format {
    pub fn extension(self) -> &'static str {
        match self {
            Format::Svg => "svg",
            Format::Png => "png",
            Format::Pdf => "pdf",
        }
    }
}

/// How charts are laid out and named, beyond what the chart itself says: `sweep plot`'s
/// `--title`, `--x-label`, `--y-label`, `--size` and `--format`.
#[derive(Clone, Debug, PartialEq)]
pub struct Look {
    pub size: (u32, u32),
    pub title: Option<String>,
    pub x_label: Option<String>,
    pub y_label: Option<String>,
    pub formats: Vec<Format>,
}

impl Default for Look {
    fn default() -> Look {
        Look {
            size: SIZE,
            title: None,
            x_label: None,
            y_label: None,
            formats: vec![Format::Svg, Format::Png],
        }
    }
}

impl Look {
    /// The legend column's width at this size (narrower on a small chart).
    fn legend_width(&self) -> u32 {
        (self.size.0 / 5).clamp(150, legend::WIDTH)
    }
}

/// Where the plot lies on the canvas and what its axes span: what a reader of the SVG needs to
/// map a position to data. Written onto the SVG root (see [`frame_attributes`]).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Frame {
    /// The plot area in canvas pixels: left, top, right, bottom.
    pub px: (i32, i32, i32, i32),
    /// x from .. to, in the axis's own coordinates (log2 of x on a log2 axis).
    pub x: (f64, f64),
    pub log2: bool,
    /// y from .. to, in the displayed unit.
    pub y: (f64, f64),
    /// Displayed value = CSV value x this.
    pub y_scale: f64,
    pub y_unit: String,
}

/// What a chart's plot drew: its legend's entries and its frame.
pub(crate) struct Drawn {
    pub entries: Vec<Entry>,
    pub frame: Option<Frame>,
}

/// A chart: its title and axis names, and how to draw its plot.
pub(crate) trait Chart {
    /// What the chart shows: the experiment and its variable (`Shared-memory stores, grid —
    /// threads per block`).
    fn title(&self) -> String;
    /// A smaller line under the title: what the analysis found.
    fn subtitle(&self) -> Option<String> {
        None
    }
    /// The x and y axis names, in words with units.
    fn axis_names(&self) -> (String, String);
    /// Whether it has a legend column (else the plot takes the whole width).
    fn has_legend(&self) -> bool {
        true
    }
    /// Draws the plot (axes named `names`, data, marks) into `plot`, with text when `text` (a
    /// font is there); returns the legend's entries and the frame.
    fn draw<DB: DrawingBackend<ErrorType: 'static>>(
        &self,
        plot: &DrawingArea<DB, Shift>,
        text: bool,
        names: (&str, &str),
    ) -> Result<Drawn, ChartError>;
}

/// The title and axis names `look` gives `chart`: its own unless overridden.
fn names(chart: &impl Chart, look: &Look) -> (String, String, String) {
    let (x, y) = chart.axis_names();
    (
        look.title.clone().unwrap_or_else(|| chart.title()),
        look.x_label.clone().unwrap_or(x),
        look.y_label.clone().unwrap_or(y),
    )
}

/// The whole canvas of `chart` on `root`; the plot's frame.
fn render<DB: DrawingBackend<ErrorType: 'static>>(
    root: &DrawingArea<DB, Shift>,
    chart: &impl Chart,
    text: bool,
    footer: Option<&str>,
    look: &Look,
) -> Result<Option<Frame>, ChartError> {
    let (w, h) = look.size;
    root.fill(&WHITE)?;
    let (top, bottom) = root.split_vertically(h - FOOTER_H);
    let (head, body) = top.split_vertically(TITLE_H);
    let (plot, side) = if chart.has_legend() {
        let (p, s) = body.split_horizontally(w - look.legend_width());
        (p, Some(s))
    } else {
        (body, None)
    };
    let (title_text, x_name, y_name) = names(chart, look);
    let drawn = chart.draw(&plot, text, (&x_name, &y_name))?;
    if !text {
        return Ok(drawn.frame);
    }
    // A title given by hand stands alone: the analysis's line under it would belong to
    // another chart when one --title names several.
    let subtitle = chart.subtitle().filter(|_| look.title.is_none());
    title(&head, &title_text, subtitle.as_deref())?;
    if let Some(side) = side {
        legend::draw(&side, &drawn.entries)?;
    }
    if let Some(f) = footer {
        let grey = BLACK.mix(0.55);
        let style = TextStyle::from(("sans-serif", 11).into_font())
            .color(&grey)
            .pos(Pos::new(HPos::Left, VPos::Center));
        let shown = legend::fit(f, w - 16, |t| width(t, 11));
        bottom.draw(&Text::new(shown, (8, FOOTER_H as i32 / 2), style))?;
    }
    Ok(drawn.frame)
}

/// The title, centred; smaller, then cut, when it is wider than the canvas; the subtitle under
/// it, smaller and grey, cut to the canvas.
fn title<DB: DrawingBackend<ErrorType: 'static>>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    subtitle: Option<&str>,
) -> Result<(), ChartError> {
    let (w, _) = area.dim_in_pixel();
    let max = w - 24;
    // A title longer than the canvas has pixels is cut whatever its size: only its head is
    // measured (a 2 MB axis value in it took minutes).
    let (head, cut) = legend::head(text, max as usize + 1);
    let size = [18, 16, 14, 12]
        .into_iter()
        .find(|&s| !cut && width(head, s) <= max)
        .unwrap_or(12);
    let shown = legend::fit(text, max, |t| width(t, size));
    let style =
        TextStyle::from(("sans-serif", size).into_font()).pos(Pos::new(HPos::Center, VPos::Center));
    area.draw(&Text::new(shown, (w as i32 / 2, 20), style))?;
    if let Some(sub) = subtitle {
        let shown = legend::fit(sub, max, |t| width(t, 12));
        let grey = BLACK.mix(0.6);
        let style = TextStyle::from(("sans-serif", 12).into_font())
            .color(&grey)
            .pos(Pos::new(HPos::Center, VPos::Center));
        area.draw(&Text::new(shown, (w as i32 / 2, 43), style))?;
    }
    Ok(())
}

/// Pixels of `text` across at `size` (an estimate of 0.6 em a character without a font).
fn width(text: &str, size: u32) -> u32 {
    ("sans-serif", size)
        .into_font()
        .box_size(text)
        .map_or(text.chars().count() as u32 * size * 3 / 5, |b| b.0)
}

/// `chart` as an SVG document; without a font (`text` false) its title and axis names are
/// added as SVG text, which needs no font file. The root carries the plot's frame.
pub(crate) fn svg_with(
    chart: &impl Chart,
    text: bool,
    footer: Option<&str>,
    look: &Look,
) -> Result<String, ChartError> {
    let mut doc = String::new();
    let frame = {
        let root = SVGBackend::with_string(&mut doc, look.size).into_drawing_area();
        let frame = render(&root, chart, text, footer, look)?;
        root.present()?;
        frame
    };
    if !text {
        let (t, x, y) = names(chart, look);
        doc = with_labels(&doc, look.size, &t, &x, &y)?;
    }
    Ok(xml_chars(match frame {
        Some(f) => mark_series(&with_frame(&doc, &f), &f),
        None => doc,
    }))
}

/// A character that XML 1.0 allows nowhere, not even as a reference: the C0 controls but tab,
/// line feed and carriage return, and U+FFFE/U+FFFF.
fn not_xml(c: char) -> bool {
    (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || matches!(c, '\u{fffe}' | '\u{ffff}')
}

/// `svg` with each character XML forbids written as its escape (`\u{1b}`), as the terminal
/// shows it: one in an axis value, a label or a title (`a\u{1}b` in a spec) made the SVG
/// unreadable, and every PNG of the run failed with exit 4 naming no culprit.
fn xml_chars(svg: String) -> String {
    if !svg.chars().any(not_xml) {
        return svg;
    }
    svg.chars()
        .map(|c| match c {
            c if not_xml(c) => c.escape_default().to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// `svg` with `class="series"` on the data's lines: the polylines [`series::LINE_W`] wide that
/// lie inside the plot (a legend's swatch lies beside it). Readers of the SVG find the curves
/// by that class.
///
/// [`series::LINE_W`]: super::series::LINE_W
pub(crate) fn mark_series(svg: &str, f: &Frame) -> String {
    let wide = format!("stroke-width=\"{}\"", super::series::LINE_W);
    let (l, t, r, b) = f.px;
    let inside = |x: f64, y: f64| {
        x >= f64::from(l) - 1.0
            && x <= f64::from(r) + 1.0
            && y >= f64::from(t) - 1.0
            && y <= f64::from(b) + 1.0
    };
    let mut out = String::with_capacity(svg.len() + 256);
    let mut rest = svg;
    while let Some(i) = rest.find("<polyline") {
        out.push_str(&rest[..i]);
        let el = &rest[i..];
        let end = el.find("/>").map_or(el.len(), |e| e + 2);
        let element = &el[..end];
        let points = element
            .split("points=\"")
            .nth(1)
            .and_then(|p| p.split('"').next())
            .unwrap_or_default();
        let all_inside = points.split_whitespace().all(|pair| {
            let mut xy = pair
                .split(',')
                .map(|v| v.parse::<f64>().unwrap_or(f64::NAN));
            matches!((xy.next(), xy.next()), (Some(x), Some(y)) if inside(x, y))
        });
        if element.contains(&wide) && !points.trim().is_empty() && all_inside {
            out.push_str("<polyline class=\"series\"");
            out.push_str(&element["<polyline".len()..]);
        } else {
            out.push_str(element);
        }
        rest = &el[end..];
    }
    out.push_str(rest);
    out
}

/// `chart` as an SVG document, with text when a font is there.
pub(crate) fn svg(chart: &impl Chart, footer: Option<&str>) -> Result<String, ChartError> {
    svg_with(chart, font::ensure(), footer, &Look::default())
}

/// The attributes of the SVG root that say where the plot is and what its axes span:
/// `data-frame="left top right bottom"` (pixels), `data-x="min max lin|log2"`,
/// `data-y="min max"` (displayed unit), `data-y-scale` (displayed = CSV value x scale) and
/// `data-y-unit`. The report reads them to map the mouse to data.
pub(crate) fn frame_attributes(f: &Frame) -> String {
    let (l, t, r, b) = f.px;
    format!(
        " data-frame=\"{l} {t} {r} {b}\" data-x=\"{} {} {}\" data-y=\"{} {}\" data-y-scale=\"{}\" data-y-unit=\"{}\"",
        shortest(f.x.0),
        shortest(f.x.1),
        if f.log2 { "log2" } else { "lin" },
        shortest(f.y.0),
        shortest(f.y.1),
        shortest(f.y_scale),
        escape(&f.y_unit)
    )
}

/// `svg` with the frame's attributes on its root element.
fn with_frame(svg: &str, f: &Frame) -> String {
    match svg.find("<svg") {
        Some(i) => format!("{}<svg{}{}", &svg[..i], frame_attributes(f), &svg[i + 4..]),
        None => svg.to_string(),
    }
}

/// `<stem>.<ext>`: `with_extension` would cut a stem at its last dot (`ratio_0.5`).
fn file(stem: &Path, ext: &str) -> PathBuf {
    let mut name = stem.file_name().unwrap_or_default().to_os_string();
    name.push(".");
    name.push(ext);
    stem.with_file_name(name)
}

/// Writes `<stem>.svg` and `<stem>.png` of `chart`; returns their paths.
pub(crate) fn write(
    chart: &impl Chart,
    stem: &Path,
    footer: Option<&str>,
) -> Result<Vec<PathBuf>, ReportError> {
    write_as(chart, stem, footer, &Look::default())
}

/// Writes `chart` in each of `look`'s formats, all from one SVG; returns their paths.
pub(crate) fn write_as(
    chart: &impl Chart,
    stem: &Path,
    footer: Option<&str>,
    look: &Look,
) -> Result<Vec<PathBuf>, ReportError> {
    let text = font::ensure();
    let svg_path = file(stem, "svg");
    let doc = svg_with(chart, text, footer, look).map_err(fail(&svg_path))?;
    let mut out = Vec::new();
    for &format in &look.formats {
        let path = file(stem, format.extension());
        let bytes = match format {
            Format::Svg => doc.clone().into_bytes(),
            Format::Png => font::png(&doc).map_err(fail(&path))?,
            Format::Pdf => font::pdf(&doc).map_err(fail(&path))?,
        };
        crate::store::write_atomic(&path, &bytes).map_err(|e| fail(&path)(ChartError::Io(e)))?;
        out.push(path);
    }
    Ok(out)
}

pub(crate) fn fail(path: &Path) -> impl Fn(ChartError) -> ReportError + '_ {
    move |cause| ReportError::Write {
        path: path.to_path_buf(),
        cause,
    }
}

/// The machine line under a chart: GPU, driver, compiler, commit, date and sweep, from the
/// `manifest.json` in `run_dir` (none without one: a CSV from elsewhere).
pub fn footer(run_dir: &Path) -> Option<String> {
    let m = crate::store::Manifest::load(run_dir).ok()?;
    let mut parts: Vec<String> = Vec::new();
    if let Some(g) = m.gpus_start.first() {
        parts.push(g.name.clone());
        parts.push(format!("driver {}", g.driver));
    }
    parts.push(format!(
        "{} {}",
        m.compiler,
        compiler_line(&m.compiler_version)
    ));
    if !m.git_commit.is_empty() {
        let dirty = if m.git_dirty == Some(true) {
            " + changes"
        } else {
            ""
        };
        parts.push(format!("commit {:.7}{dirty}", m.git_commit));
    }
    parts.push(m.started.chars().take(10).collect());
    parts.push(format!("sweep {}", m.sweep));
    Some(parts.join(" · "))
}

/// The compiler's version in a few words: nvcc's `release 13.0, V13.0.88`, else the first line
/// of what `--version` printed (`cc (Debian 12.2.0-14) 12.2.0`, not its licence), trimmed and
/// cut to 60 characters. The manifest keeps the lines joined by ` | `.
pub(crate) fn compiler_line(version: &str) -> String {
    let from = version.find("release").unwrap_or(0);
    let line = version[from..]
        .split(['|', '\n'])
        .next()
        .unwrap_or_default()
        .trim();
    if line.chars().count() <= 60 {
        return line.to_string();
    }
    let cut: String = line.chars().take(59).collect();
    format!("{}…", cut.trim_end())
}

/// `svg` with the title and the axis names added as SVG text elements (for a chart drawn
/// without a font: SVG text needs none).
fn with_labels(
    svg: &str,
    (width, height): (u32, u32),
    title: &str,
    x_name: &str,
    y_name: &str,
) -> Result<String, ChartError> {
    let plot_h = height - TITLE_H - FOOTER_H;
    let (w, y_mid, x_base) = (width / 2, TITLE_H + plot_h / 2, TITLE_H + plot_h - 4);
    let labels = format!(
        "<text x=\"{w}\" y=\"22\" text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"15\">{}</text>\n\
         <text x=\"{}\" y=\"{x_base}\" text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"13\">{}</text>\n\
         <text x=\"12\" y=\"{y_mid}\" text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"13\" transform=\"rotate(-90 12 {y_mid})\">{}</text>\n",
        escape(title),
        width / 2,
        escape(x_name),
        escape(y_name)
    );
    let Some(end) = svg.rfind("</svg>") else {
        return Err(ChartError::NoSvgEnd);
    };
    Ok(format!("{}{}{}", &svg[..end], labels, &svg[end..]))
}

/// Text for XML and HTML.
pub(crate) fn escape(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_footer_says_the_compiler_in_one_short_line() {
        let nvcc = "Cuda compilation tools, release 13.0, V13.0.88 | Build cuda_13.0.r13.0/compiler.36424714_0";
        assert_eq!(compiler_line(nvcc), "release 13.0, V13.0.88");
        let cc = "cc (Debian 12.2.0-14+deb12u1) 12.2.0 | Copyright (C) 2022 Free Software Foundation, Inc. | This is free software; see the source for copying conditions.  There is NO | warranty; not even for MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.";
        assert_eq!(compiler_line(cc), "cc (Debian 12.2.0-14+deb12u1) 12.2.0");
        assert_eq!(
            compiler_line("clang version 18\nTarget: x86_64"),
            "clang version 18"
        );
        let long = compiler_line(&"x".repeat(100));
        assert_eq!(long.chars().count(), 60);
        assert!(long.ends_with('…'));
    }

    #[test]
    fn the_frame_is_written_on_the_svg_root_and_data_lines_are_marked() {
        let f = Frame {
            px: (96, 74, 984, 572),
            x: (-9.5, 521.5),
            log2: false,
            y: (0.0, 23.4),
            y_scale: 1e-6,
            y_unit: "TFLOP/s".into(),
        };
        let svg = "<svg width=\"10\" height=\"10\">\
            <polyline fill=\"none\" stroke-width=\"2\" points=\"100,100 200,90 \"/>\
            <polyline fill=\"none\" stroke-width=\"1\" points=\"100,100 200,90 \"/>\
            <polyline fill=\"none\" stroke-width=\"2\" points=\"1000,30 1024,30 \"/></svg>";
        let out = mark_series(&with_frame(svg, &f), &f);
        assert!(out.starts_with(
            "<svg data-frame=\"96 74 984 572\" data-x=\"-9.5 521.5 lin\" data-y=\"0 23.4\" data-y-scale=\"0.000001\" data-y-unit=\"TFLOP/s\" width="
        ), "{out}");
        // Only the wide line inside the plot is data: not the thin mark, not the legend swatch.
        assert_eq!(out.matches("class=\"series\"").count(), 1, "{out}");
        assert!(out.contains(
            "<polyline class=\"series\" fill=\"none\" stroke-width=\"2\" points=\"100,100"
        ));
    }

    use super::super::series::{series_svg, tests::series};
    use crate::spec::Labels;

    /// The numbers of attribute `name` on the SVG's root element.
    fn attr(svg: &str, name: &str) -> Vec<String> {
        let root = &svg[..svg.find('>').unwrap()];
        let at = root.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        let end = at + root[at..].find('"').unwrap();
        root[at..end].split(' ').map(String::from).collect()
    }

    /// The pixel where the root's frame puts the point (x, value in the data's unit).
    fn pixel(svg: &str, x: f64, value: f64) -> (f64, f64) {
        let num =
            |n: &str| -> Vec<f64> { attr(svg, n).iter().map(|v| v.parse().unwrap()).collect() };
        let (f, xs, ys) = (num("data-frame"), attr(svg, "data-x"), num("data-y"));
        let scale = num("data-y-scale")[0];
        let (x0, x1): (f64, f64) = (xs[0].parse().unwrap(), xs[1].parse().unwrap());
        let t = match xs[2].as_str() {
            "log2" => (x.log2() - x0.log2()) / (x1.log2() - x0.log2()),
            _ => (x - x0) / (x1 - x0),
        };
        let v = (value * scale - ys[0]) / (ys[1] - ys[0]);
        (f[0] + t * (f[2] - f[0]), f[3] - v * (f[3] - f[1]))
    }

    /// Whether the SVG draws a data point within 1.5 pixels of `(cx, cy)`: a dot, or a vertex
    /// of a data line (`class="series"`; dots are drawn only where points are few).
    fn dot_at(svg: &str, (cx, cy): (f64, f64)) -> bool {
        let near = |x: f64, y: f64| (x - cx).abs() <= 1.5 && (y - cy).abs() <= 1.5;
        let dot = svg.split("<circle ").skip(1).any(|c| {
            let n = |k: &str| -> f64 {
                let at = c.find(&format!("{k}=\"")).unwrap() + k.len() + 2;
                c[at..at + c[at..].find('"').unwrap()].parse().unwrap()
            };
            near(n("cx"), n("cy"))
        });
        let vertex = svg
            .split("<polyline class=\"series\"")
            .skip(1)
            .filter_map(|l| l.split("points=\"").nth(1)?.split('"').next())
            .flat_map(str::split_whitespace)
            .filter_map(|p| {
                let (x, y) = p.split_once(',')?;
                Some((x.parse::<f64>().ok()?, y.parse::<f64>().ok()?))
            })
            .any(|(x, y)| near(x, y));
        dot || vertex
    }

    /// The boxes (left, top, right, bottom) of the SVG's horizontal text elements, from their
    /// position, anchor, vertical shift and size, their width measured in the chart's font.
    pub(crate) fn text_boxes(svg: &str) -> Vec<(String, [f64; 4])> {
        svg.split("<text ")
            .skip(1)
            .filter(|t| !t[..t.find('>').unwrap()].contains("rotate"))
            .map(|t| {
                let head = &t[..t.find('>').unwrap()];
                let a = |k: &str| -> Option<&str> {
                    let at = head.find(&format!("{k}=\""))? + k.len() + 2;
                    head[at..].split('"').next()
                };
                let n = |k: &str| a(k).map_or(0.0, |v| v.parse::<f64>().unwrap());
                let body = t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()].trim();
                let body = body
                    .replace("&amp;", "&")
                    .replace("&lt;", "<")
                    .replace("&gt;", ">");
                let size = n("font-size");
                let w = ("sans-serif", size)
                    .into_font()
                    .box_size(&body)
                    .map_or(0.6 * size * body.chars().count() as f64, |b| f64::from(b.0));
                let (x, y) = (n("x"), n("y"));
                let left = match a("text-anchor") {
                    Some("middle") => x - w / 2.0,
                    Some("end") => x - w,
                    _ => x,
                };
                // Cap height about 0.72 em, descenders 0.2 em.
                let top = match a("dy") {
                    Some("0.76em") => y,
                    Some("0.5ex") => y - 0.4 * size,
                    Some("-0.5ex") => y - 0.95 * size,
                    _ => y - 0.75 * size,
                };
                (body, [left, top, left + w, top + 0.95 * size])
            })
            .collect()
    }

    /// Pairs of text boxes that overlap, and boxes outside the canvas.
    pub(crate) fn collisions(svg: &str, (w, h): (u32, u32)) -> Vec<String> {
        let boxes = text_boxes(svg);
        let mut out = Vec::new();
        for (i, (t, b)) in boxes.iter().enumerate() {
            if b[0] < -0.5 || b[1] < -0.5 || b[2] > f64::from(w) + 0.5 || b[3] > f64::from(h) + 0.5
            {
                out.push(format!("`{t}` {b:?} outside {w}x{h}"));
            }
            for (u, c) in &boxes[i + 1..] {
                let apart = b[2] <= c[0] || c[2] <= b[0] || b[3] <= c[1] || c[3] <= b[1];
                if !apart {
                    out.push(format!("`{t}` {b:?} over `{u}` {c:?}"));
                }
            }
        }
        out
    }

    #[test]
    fn at_the_smallest_size_no_text_overlaps_other_text_or_leaves_the_canvas() {
        assert!(font::ensure(), "the built-in font");
        let look = Look {
            size: MIN_SIZE,
            ..Look::default()
        };
        let labels = Labels::default();
        let s = series();
        let info: Vec<super::super::points::PointInfo> = s
            .data
            .iter()
            .map(|p| super::super::points::PointInfo {
                x: p.0,
                u: 0.05,
                status: if (p.0 as u32).is_multiple_of(9) {
                    "unstable"
                } else {
                    "ok"
                }
                .into(),
                mark: (p.0 as u32)
                    .is_multiple_of(9)
                    .then_some(crate::events::marks::Mark::Placement),
            })
            .collect();
        let chart = super::super::series::SeriesChart {
            s: &s,
            x_name: "threads",
            info: &info,
            labels: &labels,
        };
        let svg = svg_with(&chart, true, Some("NVIDIA H100 80GB HBM3 · driver 580.159.04 · nvcc release 13.0, V13.0.88 · commit fc8731d · 2026-11-26 · sweep threads_1_512"), &look).unwrap();
        let bad = collisions(&svg, MIN_SIZE);
        assert!(bad.is_empty(), "series chart: {bad:#?}");
        // An overlay with long names and x every 32 threads from 32 to 512.
        let xs: Vec<f64> = (1..=16).map(|k| f64::from(32 * k)).collect();
        let pts: Vec<Vec<(f64, f64)>> = (1..=3)
            .map(|k| xs.iter().map(|&x| (x, 1e6 * f64::from(k) + x)).collect())
            .collect();
        let u: Vec<(f64, f64)> = xs.iter().map(|&x| (x, 0.02)).collect();
        let names = [
            "every thread",
            "every even thread",
            "first half of the threads",
        ];
        let curves: Vec<super::super::family::Curve> = names
            .iter()
            .zip(&pts)
            .map(|(l, p)| super::super::family::Curve {
                label: l,
                points: p,
                u: &u,
            })
            .collect();
        let chart = super::super::family::Overlay {
            title: "Global-memory stores, full grid — threads per block".into(),
            subtitle: None,
            x_name: "threads per block".into(),
            y_name: "MFlops",
            quantity: Some("throughput"),
            curves: &curves,
            name_covered: true,
        };
        let svg = svg_with(&chart, true, None, &look).unwrap();
        let bad = collisions(&svg, MIN_SIZE);
        assert!(bad.is_empty(), "overlay: {bad:#?}");
        assert!(
            svg.contains("first half of"),
            "a long name wraps, it is not cut"
        );
    }

    #[test]
    fn the_frame_on_the_root_puts_a_point_on_its_dot() {
        // MFlops up to 4000, drawn as GFLOP/s on a linear x.
        let s = series();
        let svg = series_svg(&s, "threads", None, &[], &Labels::default()).unwrap();
        assert_eq!(attr(&svg, "data-y-scale"), ["0.001"]);
        assert_eq!(attr(&svg, "data-y-unit"), ["GFLOP/s"]);
        assert_eq!(attr(&svg, "data-x")[2], "lin");
        for x in [1.0, 100.0, 256.0] {
            let v = s.data[x as usize - 1].1.unwrap();
            assert!(
                dot_at(&svg, pixel(&svg, x, v)),
                "x = {x}: no dot at {:?}",
                pixel(&svg, x, v)
            );
        }
        // Powers of two from 1 to 1024: log2 x.
        let mut s = series();
        s.data = (0..=10)
            .map(|k| ((1u32 << k) as f64, Some(10.0 + k as f64)))
            .collect();
        let svg = series_svg(&s, "size", None, &[], &Labels::default()).unwrap();
        assert_eq!(attr(&svg, "data-x")[2], "log2");
        assert_eq!(
            attr(&svg, "data-y-unit"),
            ["MFLOP/s"],
            "below 1000 MFlops: not scaled"
        );
        for (x, v) in [(1.0, 10.0), (32.0, 15.0), (1024.0, 20.0)] {
            assert!(
                dot_at(&svg, pixel(&svg, x, v)),
                "x = {x}: no dot at {:?}",
                pixel(&svg, x, v)
            );
        }
    }
}
