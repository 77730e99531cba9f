//! The chart of one series: its points and line, the uncertainty band, noisy, unstable and failed
//! points, outliers left out of the fit, the knee, the peaks and the period, with a title that
//! says what was found.

use super::axes::{axes, distinct, log_axis, on_log2, scaled};
use super::canvas::{self, Chart};
use super::legend::{Entry, Swatch};
use super::points::PointInfo;
use crate::analyze::curve::Period;
use crate::analyze::reading::human;
use crate::analyze::SeriesAnalysis;
use plotters::coord::Shift;
use plotters::prelude::*;

pub(crate) const DATA: RGBColor = RGBColor(31, 119, 180);
pub(crate) const PEAK: RGBColor = RGBColor(214, 39, 40);
pub(crate) const KNEE: RGBColor = RGBColor(44, 160, 44);
pub(crate) const PERIOD: RGBColor = RGBColor(255, 127, 14);
pub(crate) const GAP: RGBColor = RGBColor(120, 120, 120);
pub(crate) const BAND: RGBColor = RGBColor(31, 119, 180);
pub(crate) const NOISY: RGBColor = RGBColor(148, 103, 189);
pub(crate) const UNSTABLE: RGBColor = RGBColor(227, 119, 194);

/// One series' chart: the series, the name of its x axis and what the CSV says of its points.
pub(crate) struct SeriesChart<'a> {
    pub s: &'a SeriesAnalysis,
    pub x_name: &'a str,
    pub info: &'a [PointInfo],
}

/// One series' chart as an SVG document (with its title and axis names even without a font).
pub fn series_svg(
    s: &SeriesAnalysis,
    x_name: &str,
    footer: Option<&str>,
    info: &[PointInfo],
) -> Result<String, String> {
    canvas::svg(&SeriesChart { s, x_name, info }, footer)
}

/// Whether a series is worth a chart: a single point is no curve.
pub(crate) fn drawable(s: &SeriesAnalysis) -> bool {
    s.data.iter().filter(|p| p.1.is_some()).count() >= 2
}

impl Chart for SeriesChart<'_> {
    fn title(&self) -> String {
        title(self.s, self.x_name)
    }

    fn axis_names(&self) -> (String, String) {
        (self.x_name.to_string(), y_label(self.s))
    }

    fn draw<DB: DrawingBackend>(
        &self,
        plot: &DrawingArea<DB, Shift>,
        text: bool,
    ) -> Result<Vec<Entry>, String> {
        draw(plot, self.s, self.x_name, text, self.info)
    }
}

/// The chart's title: the series and what was found.
pub(crate) fn title(s: &SeriesAnalysis, x_name: &str) -> String {
    let c = &s.curve;
    let mut parts = vec![s.name.clone()];
    match &c.period {
        Some(p) => parts.push(period_clause(p, x_name)),
        None => parts.push("no period".to_string()),
    }
    if let Some(k) = c.knee {
        parts.push(format!("knee {}", human(k)));
    }
    if let Some(b) = &c.best {
        parts.push(format!(
            "best {} (within 1 % from {})",
            human(b.x),
            human(b.x_within_1pct)
        ));
    }
    parts.join(" · ")
}

/// `period 16, peaks at stride ≡ 1, 3, …, 15 (mod 16), high confidence`: the peaks' phases are
/// said modulo the period itself (saying them modulo a divisor, `≡ 1 (mod 2)`, next to `period
/// 16` reads as two periods at odds with each other).
pub(crate) fn period_clause(p: &Period, x_name: &str) -> String {
    let mut phases: Vec<f64> = p
        .peak_phases
        .iter()
        .map(|v| v.rem_euclid(p.period))
        .collect();
    phases.sort_by(f64::total_cmp);
    phases.dedup();
    let listed: Vec<String> = if phases.len() <= 4 {
        phases.iter().map(|v| human(*v)).collect()
    } else {
        vec![
            human(phases[0]),
            human(phases[1]),
            "…".to_string(),
            human(phases[phases.len() - 1]),
        ]
    };
    format!(
        "period {}, peaks at {x_name} ≡ {} (mod {}), {} confidence",
        human(p.period),
        listed.join(", "),
        human(p.period),
        p.level.as_str()
    )
}

pub(crate) fn y_label(s: &SeriesAnalysis) -> String {
    let s = &scaled(s);
    if s.unit.is_empty() {
        s.column.clone()
    } else {
        // The metric's name, not its column: `shared_grid (TFLOP/s)`, not `shared_grid_mflops (TFLOP/s)`.
        format!("{} ({})", s.metric, s.unit)
    }
}

/// x of the points drawn as outliers: those the analysis left out of its fit, except the best
/// point. The best measured value is what a reader looks for; a fit that cannot follow it (a
/// first point above a ramp's line) does not make it a doubtful measurement, and the report's
/// table still lists it as not fitted.
pub(crate) fn outlier_marks(s: &SeriesAnalysis) -> Vec<f64> {
    let best = s.curve.best.as_ref().map(|b| b.x);
    s.curve
        .outliers
        .iter()
        .copied()
        .filter(|&x| Some(x) != best)
        .collect()
}

/// Draws one series into `plot`; `text` false draws no text at all (no font is needed then).
fn draw<DB: DrawingBackend>(
    plot: &DrawingArea<DB, Shift>,
    s: &SeriesAnalysis,
    x_name: &str,
    text: bool,
    info: &[PointInfo],
) -> Result<Vec<Entry>, String> {
    let s = &scaled(s);
    let mut legend = Vec::new();
    // Sparse x over a wide range (strides 1..32 then 64..1024) is drawn on log2(x).
    let log2 = log_axis(&distinct(s.data.iter().map(|p| p.0)));
    let x_of = |x: f64| if log2 { x.log2() } else { x };
    let marks: Vec<f64> = outlier_marks(s).into_iter().map(x_of).collect();
    let y_name = y_label(s);
    let s = &if log2 { on_log2(s) } else { s.clone() };
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let observed: Vec<(f64, f64)> = s
        .data
        .iter()
        .filter_map(|&(x, y)| y.map(|v| (x, v)))
        .filter(|p| p.1.is_finite())
        .collect();
    let xs: Vec<f64> = s
        .data
        .iter()
        .map(|p| p.0)
        .filter(|x| x.is_finite())
        .collect();
    let (Some(x_lo), Some(x_hi)) = (
        xs.iter().copied().reduce(f64::min),
        xs.iter().copied().reduce(f64::max),
    ) else {
        return Ok(legend);
    };
    let pad = ((x_hi - x_lo) * 0.02).max(0.5);
    let (x0, x1) = (x_lo - pad, x_hi + pad);
    let y_min = observed.iter().map(|p| p.1).fold(0.0, f64::min);
    let y_max = observed
        .iter()
        .map(|p| p.1)
        .fold(f64::NEG_INFINITY, f64::max);
    let y_max = if y_max.is_finite() && y_max > y_min {
        y_max
    } else {
        y_min + 1.0
    };
    let (y0, y1) = (y_min, y_max + 0.12 * (y_max - y_min));

    let mut chart = axes(
        plot,
        (x0..x1, y0..y1),
        (x_name, &y_name),
        text,
        s.curve.period.as_ref().map(|p| p.period),
        log2,
        &distinct(xs.iter().copied()),
    )?;

    // The uncertainty: a band of value x (1 +- u) around the curve.
    let u_at: std::collections::HashMap<u64, f64> =
        info.iter().map(|p| (x_of(p.x).to_bits(), p.u)).collect();
    let band: Vec<(f64, f64, f64)> = observed
        .iter()
        .filter_map(|&(x, y)| {
            u_at.get(&x.to_bits())
                .map(|&u| (x, y * (1.0 - u), y * (1.0 + u)))
        })
        .collect();
    if band.len() >= 2 && band.iter().any(|b| b.2 > b.1) {
        let mut outline: Vec<(f64, f64)> = band.iter().map(|b| (b.0, b.2)).collect();
        outline.extend(band.iter().rev().map(|b| (b.0, b.1)));
        chart
            .draw_series(std::iter::once(Polygon::new(
                outline,
                BAND.mix(0.25).filled(),
            )))
            .map_err(|x| e(&x))?;
        // The swatch in the colour the band shows on white (a legend is drawn opaque).
        legend.push(Entry::new(
            "uncertainty (CI, placements)",
            Swatch::Fill,
            RGBColor(199, 221, 236),
        ));
    }
    // The data: a line between neighbours, broken at failed points, and a dot per point.
    let mut runs: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
    for &(x, y) in &s.data {
        match y.filter(|v| v.is_finite()) {
            Some(v) => runs.last_mut().map_or((), |r| r.push((x, v))),
            None => runs.push(Vec::new()),
        }
    }
    for run in runs.into_iter().filter(|r| !r.is_empty()) {
        chart
            .draw_series(LineSeries::new(run, DATA.stroke_width(2)))
            .map_err(|x| e(&x))?;
    }
    legend.push(Entry::new(&s.column, Swatch::Line, DATA));
    chart
        .draw_series(observed.iter().map(|&p| Circle::new(p, 2, DATA.filled())))
        .map_err(|x| e(&x))?;

    // Failed points: grey crosses on the floor of the chart.
    let floor = y0 + 0.015 * (y1 - y0);
    let gaps: Vec<f64> = s
        .data
        .iter()
        .filter(|p| p.1.is_none())
        .map(|p| p.0)
        .collect();
    if !gaps.is_empty() {
        chart
            .draw_series(
                gaps.iter()
                    .map(|&x| Cross::new((x, floor), 4, GAP.stroke_width(2))),
            )
            .map_err(|x| e(&x))?;
        legend.push(Entry::new("failed point", Swatch::Cross, GAP));
    }
    // Points the timing core marked: noisy (confidence target missed) and unstable (placements
    // differ beyond the noise), as small triangles above the dot.
    for (status, colour, label) in [
        ("noisy", NOISY, "noisy point"),
        ("unstable", UNSTABLE, "unstable point (placements differ)"),
    ] {
        let marked: Vec<(f64, f64)> = info
            .iter()
            .filter(|p| p.status == status)
            .filter_map(|p| {
                let x = x_of(p.x);
                observed.iter().find(|o| o.0 == x).copied()
            })
            .collect();
        if marked.is_empty() {
            continue;
        }
        chart
            .draw_series(
                marked
                    .iter()
                    .map(|&p| TriangleMarker::new(p, 4, colour.stroke_width(1))),
            )
            .map_err(|x| e(&x))?;
        legend.push(Entry::new(label, Swatch::Triangle, colour));
    }
    // Outliers left out of the fit: hollow grey circles.
    let outliers: Vec<(f64, f64)> = observed
        .iter()
        .copied()
        .filter(|p| marks.contains(&p.0))
        .collect();
    if !outliers.is_empty() {
        chart
            .draw_series(
                outliers
                    .iter()
                    .map(|&p| Circle::new(p, 6, GAP.stroke_width(2))),
            )
            .map_err(|x| e(&x))?;
        legend.push(Entry::new("outlier (not fitted)", Swatch::Ring, GAP));
    }
    // The knee: a dashed vertical line.
    if let Some(k) = s.curve.knee {
        chart
            .draw_series(DashedLineSeries::new(
                vec![(k, y0), (k, y_max)],
                8,
                5,
                KNEE.stroke_width(2),
            ))
            .map_err(|x| e(&x))?;
        legend.push(Entry::new(
            format!("knee {}", human(if log2 { k.exp2() } else { k })),
            Swatch::Dashed,
            KNEE,
        ));
    }
    // The peaks: red dots.
    let peaks: Vec<(f64, f64)> = observed
        .iter()
        .copied()
        .filter(|p| s.curve.peaks.contains(&p.0))
        .collect();
    if !peaks.is_empty() {
        chart
            .draw_series(peaks.iter().map(|&p| Circle::new(p, 4, PEAK.filled())))
            .map_err(|x| e(&x))?;
        legend.push(Entry::new("peak", Swatch::Dot, PEAK));
    }
    // The period: a bracket from one peak to the next, above the curve.
    if let (Some(p), [a, _, ..], false) = (&s.curve.period, peaks.as_slice(), log2) {
        let y = y_max + 0.06 * (y_max - y_min);
        let tick = 0.025 * (y1 - y0);
        let (xa, xb) = (a.0, a.0 + p.period);
        let bracket = vec![(xa, y - tick), (xa, y), (xb, y), (xb, y - tick)];
        chart
            .draw_series(std::iter::once(PathElement::new(
                bracket,
                PERIOD.stroke_width(3),
            )))
            .map_err(|x| e(&x))?;
        legend.push(Entry::new(
            format!("period {}", human(p.period)),
            Swatch::Bracket,
            PERIOD,
        ));
    }
    Ok(legend)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::analyze::{analyze_curve, Sense};

    pub(crate) fn series() -> SeriesAnalysis {
        let mut data: Vec<(f64, Option<f64>)> = (1..=256u32)
            .map(|x| {
                (
                    x as f64,
                    Some(100.0 * x as f64 / x.div_ceil(32).max(2) as f64),
                )
            })
            .collect();
        data[70].1 = None;
        let curve = analyze_curve(&data, Sense::HigherIsBetter);
        SeriesAnalysis {
            name: "mflops [variant=a]".into(),
            file_stem: "mflops__variant-a".into(),
            metric: "mflops".into(),
            unit: "MFlops".into(),
            column: "mflops".into(),
            group: vec![("variant".into(), "a".into())],
            sense: Sense::HigherIsBetter,
            curve,
            placement: None,
            between_processes_u95: None,
            counter: None,
            model: None,
            reading: String::new(),
            data,
        }
    }

    #[test]
    fn the_title_says_the_peaks_modulo_the_period() {
        let mut s = series();
        let p = s.curve.period.as_mut().expect("the saw has a period");
        p.period = 16.0;
        p.peak_phases = vec![1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 13.0, 15.0];
        let t = title(&s, "stride");
        assert!(
            t.contains("period 16, peaks at stride ≡ 1, 3, …, 15 (mod 16),"),
            "{t}"
        );
        assert!(!t.contains("mod 2"), "{t}");
        let p = s.curve.period.as_mut().unwrap();
        p.period = 32.0;
        p.peak_phases = vec![0.0];
        let t = title(&s, "threads");
        assert!(t.contains("peaks at threads ≡ 0 (mod 32)"), "{t}");
        let p = s.curve.period.as_mut().unwrap();
        p.peak_phases = vec![31.0, 15.0];
        let t = title(&s, "threads");
        assert!(t.contains("≡ 15, 31 (mod 32)"), "{t}");
    }

    #[test]
    fn the_best_point_is_never_drawn_as_an_outlier() {
        let mut s = series();
        let best = s.curve.best.as_ref().unwrap().x;
        s.curve.outliers = vec![best, 3.0];
        assert_eq!(outlier_marks(&s), [3.0]);
    }

    #[test]
    fn without_text_the_chart_has_no_text_element() {
        let s = series();
        let chart = SeriesChart {
            s: &s,
            x_name: "threads",
            info: &[],
        };
        let svg = canvas::svg_with(&chart, false, None).unwrap();
        // Only the title and the axis names, added as SVG text for want of a font.
        assert_eq!(svg.matches("<text").count(), 3, "text drawn without a font");
        // The peaks (8 of them from the knee at 64 to 256) are drawn in their own colour.
        assert!(svg.matches("#D62728").count() >= 6, "peaks missing");
        assert!(
            svg.contains(">threads</text>") && svg.contains("period 32"),
            "labels missing"
        );
    }

    #[test]
    fn the_legend_sits_right_of_the_plot() {
        let s = series();
        let chart = SeriesChart {
            s: &s,
            x_name: "threads",
            info: &[],
        };
        let svg = canvas::svg_with(&chart, true, None).unwrap();
        for label in ["failed point", "peak", "period 32"] {
            let x = text_x(&svg, label).unwrap_or_else(|| panic!("no legend entry {label}"));
            assert!(
                x > canvas::PLOT_W as f64,
                "{label} at x {x}, inside the plot"
            );
        }
        // The data stay inside the plot: right of it, only the peak's swatch is a circle.
        let right = attr_values(&svg, "<circle", "cx")
            .into_iter()
            .filter(|&cx| cx > canvas::PLOT_W as f64)
            .count();
        assert_eq!(right, 1, "circles right of the plot");
    }

    /// x of the SVG text element whose content is `label`.
    pub(crate) fn text_x(svg: &str, label: &str) -> Option<f64> {
        svg.match_indices("<text").find_map(|(i, _)| {
            let rest = &svg[i..];
            let open = rest.find('>')?;
            let close = rest.find("</text>")?;
            (rest[open + 1..close].trim() == label)
                .then(|| attr_values(&rest[..=open], "<text", "x").first().copied())
                .flatten()
        })
    }

    /// Values of attribute `attr` of every `tag` element.
    pub(crate) fn attr_values(svg: &str, tag: &str, attr: &str) -> Vec<f64> {
        svg.match_indices(tag)
            .filter_map(|(i, _)| {
                let rest = &svg[i..];
                let el = &rest[..rest.find('>')?];
                let k = el.find(&format!(" {attr}=\""))? + attr.len() + 3;
                el[k..].split('"').next()?.parse().ok()
            })
            .collect()
    }
}
