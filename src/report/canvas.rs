//! The canvas every chart is drawn on, as SVG and PNG: the title across the top, the plot, the
//! legend in a column right of the plot (never over the data), and the machine footer along the
//! bottom.
//!
//! ```text
//! +------------------------------------------+-----------+
//! |                  title                               |  TITLE_H
//! +------------------------------------------+-----------+
//! |                                          |  legend   |
//! |                 plot                     |  column   |  PLOT_H
//! |                                          |           |
//! +------------------------------------------+-----------+
//! | footer: GPU, driver, nvcc, commit, date, sweep       |  FOOTER_H
//! +------------------------------------------------------+
//!            PLOT_W                          legend::WIDTH
//! ```

use super::legend::{self, Entry};
use super::{font, ReportError};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};

pub(crate) const PLOT_W: u32 = 1000;
pub(crate) const PLOT_H: u32 = 580;
pub(crate) const TITLE_H: u32 = 36;
pub(crate) const FOOTER_H: u32 = 24;
/// Pixels of every chart.
pub(crate) const SIZE: (u32, u32) = (PLOT_W + legend::WIDTH, TITLE_H + PLOT_H + FOOTER_H);

/// A chart: its title and axis names, and how to draw its plot.
pub(crate) trait Chart {
    fn title(&self) -> String;
    /// The x and y axis names.
    fn axis_names(&self) -> (String, String);
    /// Whether it has a legend column (else the plot takes the whole width).
    fn has_legend(&self) -> bool {
        true
    }
    /// Draws the plot (axes, data, marks) into `plot`, with text when `text` (a font is there);
    /// returns the legend's entries.
    fn draw<DB: DrawingBackend>(
        &self,
        plot: &DrawingArea<DB, Shift>,
        text: bool,
    ) -> Result<Vec<Entry>, String>;
    /// The factor from the data's unit to the one y is drawn in, and that unit (MFlops drawn as
    /// TFLOP/s: 1e-6 and `TFLOP/s`); `None` for a chart without a y scale (bars).
    fn y_unit(&self) -> Option<(f64, String)> {
        None
    }
}

/// Where the plot of a line chart lies on the canvas and what its axes span, in the SVG's pixels:
/// written on the SVG's root element (`data-frame`, `data-x`, `data-y`, `data-y-scale`,
/// `data-y-unit`) so that a page's script can find the pixel of a point (report.html's values on
/// hover). [`super::axes::axes`] notes it when it sets up the plot; [`svg_with`] writes it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Frame {
    /// The plot area: left, top, right, bottom.
    pub px: [i32; 4],
    /// x at the left and right edges (x itself on a log2 axis, not log2 x), and whether x is
    /// drawn on log2.
    pub x: (f64, f64),
    pub log2: bool,
    /// y at the bottom and top edges, in the unit y is drawn in.
    pub y: (f64, f64),
}

thread_local! {
    /// The frame of the chart being drawn on this thread (a chart is drawn on one thread, start
    /// to end, inside [`svg_with`]).
    static FRAME: std::cell::Cell<Option<Frame>> = const { std::cell::Cell::new(None) };
}

/// Notes the frame of the chart being drawn (called where its axes are set up).
pub(crate) fn note_frame(frame: Frame) {
    FRAME.with(|f| f.set(Some(frame)));
}

/// `svg` with the frame's attributes on its root element.
fn with_frame(svg: &str, f: &Frame, y_unit: Option<(f64, String)>) -> String {
    let [l, t, r, b] = f.px;
    let mut attrs = format!(
        " data-frame=\"{l} {t} {r} {b}\" data-x=\"{} {} {}\" data-y=\"{} {}\"",
        f.x.0,
        f.x.1,
        if f.log2 { "log2" } else { "lin" },
        f.y.0,
        f.y.1
    );
    if let Some((scale, unit)) = y_unit {
        attrs += &format!(
            " data-y-scale=\"{scale}\" data-y-unit=\"{}\"",
            escape(&unit)
        );
    }
    match svg.find("<svg") {
        Some(i) => format!("{}{attrs}{}", &svg[..i + 4], &svg[i + 4..]),
        None => svg.to_string(),
    }
}

/// The whole canvas of `chart` on `root`.
fn render<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &impl Chart,
    text: bool,
    footer: Option<&str>,
) -> Result<(), String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let (top, bottom) = root.split_vertically(TITLE_H + PLOT_H);
    let (head, body) = top.split_vertically(TITLE_H);
    let (plot, side) = if chart.has_legend() {
        let (p, s) = body.split_horizontally(PLOT_W);
        (p, Some(s))
    } else {
        (body, None)
    };
    let entries = chart.draw(&plot, text)?;
    if !text {
        return Ok(());
    }
    title(&head, &chart.title())?;
    if let Some(side) = side {
        legend::draw(&side, &entries)?;
    }
    if let Some(f) = footer {
        let grey = BLACK.mix(0.55);
        let style = TextStyle::from(("sans-serif", 11).into_font())
            .color(&grey)
            .pos(Pos::new(HPos::Left, VPos::Center));
        bottom
            .draw(&Text::new(f.to_string(), (8, FOOTER_H as i32 / 2), style))
            .map_err(|x| e(&x))?;
    }
    Ok(())
}

/// The title, centred; smaller, then cut, when it is wider than the canvas.
fn title<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, text: &str) -> Result<(), String> {
    let (w, h) = area.dim_in_pixel();
    let max = w - 24;
    let size = [17, 15, 13]
        .into_iter()
        .find(|&s| width(text, s) <= max)
        .unwrap_or(13);
    let shown = legend::fit(text, max, |t| width(t, size));
    let style =
        TextStyle::from(("sans-serif", size).into_font()).pos(Pos::new(HPos::Center, VPos::Center));
    area.draw(&Text::new(shown, (w as i32 / 2, h as i32 / 2), style))
        .map_err(|e| e.to_string())
}

/// Pixels of `text` across at `size` (an estimate of 0.6 em a character without a font).
fn width(text: &str, size: u32) -> u32 {
    ("sans-serif", size)
        .into_font()
        .box_size(text)
        .map_or(text.chars().count() as u32 * size * 3 / 5, |b| b.0)
}

/// `chart` as an SVG document; without a font (`text` false) its title and axis names are
/// added as SVG text, which needs no font file.
pub(crate) fn svg_with(
    chart: &impl Chart,
    text: bool,
    footer: Option<&str>,
) -> Result<String, String> {
    let mut doc = String::new();
    FRAME.with(|f| f.set(None));
    {
        let root = SVGBackend::with_string(&mut doc, SIZE).into_drawing_area();
        render(&root, chart, text, footer)?;
        root.present().map_err(|e| e.to_string())?;
    }
    if let Some(frame) = FRAME.with(|f| f.take()) {
        doc = with_frame(&doc, &frame, chart.y_unit());
    }
    if !text {
        let (x, y) = chart.axis_names();
        doc = with_labels(&doc, &chart.title(), &x, &y)?;
    }
    Ok(doc)
}

/// `chart` as an SVG document, with text when a font is there.
pub(crate) fn svg(chart: &impl Chart, footer: Option<&str>) -> Result<String, String> {
    svg_with(chart, font::ensure(), footer)
}

/// Writes `<stem>.svg` and `<stem>.png` of `chart`; returns their paths.
pub(crate) fn write(
    chart: &impl Chart,
    stem: &Path,
    footer: Option<&str>,
) -> Result<Vec<PathBuf>, ReportError> {
    let text = font::ensure();
    // `with_extension` would cut a stem at its last dot (`ratio_0.5`).
    let file = |ext: &str| {
        let mut name = stem.file_name().unwrap_or_default().to_os_string();
        name.push(ext);
        stem.with_file_name(name)
    };
    let (svg_path, png_path) = (file(".svg"), file(".png"));
    let doc = svg_with(chart, text, footer).map_err(fail(&svg_path))?;
    std::fs::write(&svg_path, doc).map_err(|e| fail(&svg_path)(e.to_string()))?;
    {
        let root = BitMapBackend::new(&png_path, SIZE).into_drawing_area();
        render(&root, chart, text, footer).map_err(fail(&png_path))?;
        root.present().map_err(|e| fail(&png_path)(e.to_string()))?;
    }
    Ok(vec![svg_path, png_path])
}

pub(crate) fn fail(path: &Path) -> impl Fn(String) -> ReportError + '_ {
    move |reason| ReportError::Write {
        path: path.to_path_buf(),
        reason,
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
    let v = &m.compiler_version;
    let release = v
        .find("release")
        .map(|i| {
            v[i..]
                .split('|')
                .next()
                .unwrap_or_default()
                .trim()
                .to_string()
        })
        .unwrap_or_else(|| v.clone());
    parts.push(format!("{} {release}", m.compiler));
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

/// `svg` with the title and the axis names added as SVG text elements (for a chart drawn
/// without a font: SVG text needs none).
fn with_labels(svg: &str, title: &str, x_name: &str, y_name: &str) -> Result<String, String> {
    let (w, y_mid, x_base) = (SIZE.0 / 2, TITLE_H + PLOT_H / 2, TITLE_H + PLOT_H - 4);
    let labels = format!(
        "<text x=\"{w}\" y=\"22\" text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"15\">{}</text>\n\
         <text x=\"{}\" y=\"{x_base}\" text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"13\">{}</text>\n\
         <text x=\"12\" y=\"{y_mid}\" text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"13\" transform=\"rotate(-90 12 {y_mid})\">{}</text>\n",
        escape(title),
        PLOT_W / 2,
        escape(x_name),
        escape(y_name)
    );
    let Some(end) = svg.rfind("</svg>") else {
        return Err("no </svg> in the chart".to_string());
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
    use super::super::series::{series_svg, tests::series};

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

    /// Whether the SVG has a data dot within 1.5 pixels of `(cx, cy)`.
    fn dot_at(svg: &str, (cx, cy): (f64, f64)) -> bool {
        svg.split("<circle ").skip(1).any(|c| {
            let n = |k: &str| -> f64 {
                let at = c.find(&format!("{k}=\"")).unwrap() + k.len() + 2;
                c[at..at + c[at..].find('"').unwrap()].parse().unwrap()
            };
            (n("cx") - cx).abs() <= 1.5 && (n("cy") - cy).abs() <= 1.5
        })
    }

    #[test]
    fn the_frame_on_the_root_puts_a_point_on_its_dot() {
        // MFlops up to 4000, drawn as GFLOP/s on a linear x.
        let s = series();
        let svg = series_svg(&s, "threads", None, &[]).unwrap();
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
        let svg = series_svg(&s, "size", None, &[]).unwrap();
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
