//! `sweep compare`'s chart of one series: run A and run B overlaid on shared axes with their
//! uncertainty bands, and under them a panel of B/A, its combined uncertainty as a band around it
//! and a line at 1 (where B = A). A point whose band crosses the line is `same`.
//!
//! ```text
//! +-----------------------------------+---------+
//! |  A and B, with bands              | legend  |
//! +-----------------------------------+         |
//! |  B/A, its band, the line at 1     |         |
//! +-----------------------------------+---------+
//! ```

use super::axes::{axes, distinct, log_axis};
use super::canvas::{self, Chart, Drawn};
use super::family::{Curve, Overlay};
use super::legend::{Entry, Swatch, BAND_ALPHA};
use super::series::{band_outline, top_edge, DOT_R, LINE_W};
use super::{ChartError, ReportError};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// The share of the plot's height the B/A panel takes.
const RATIO_SHARE: f64 = 0.34;
const RATIO: RGBColor = RGBColor(60, 60, 60);

/// One point of the B/A panel: x, B/A and the relative uncertainty of the ratio (u_A + u_B: the
/// same bound `sweep compare` calls a change `same` within).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatioPoint {
    pub x: f64,
    pub ratio: f64,
    pub u: f64,
}

/// What a compare chart says in words: as `sweep plot` names the same series.
pub struct Names<'a> {
    pub title: &'a str,
    /// The x axis in words (the axis's `label` in the spec).
    pub x_name: &'a str,
    /// y's unit as the CSV has it (`MFlops`), and what y is where the unit does not say.
    pub unit: &'a str,
    pub quantity: &'a str,
}

pub(crate) struct Compared<'a> {
    overlay: Overlay<'a>,
    ratio: &'a [RatioPoint],
}

/// Writes `<stem>.svg` and `<stem>.png`: A and B overlaid with their bands, B/A beneath.
pub fn compare_chart(
    stem: &Path,
    names: &Names,
    curves: &[Curve],
    ratio: &[RatioPoint],
    footer: Option<&str>,
) -> Result<Vec<PathBuf>, ReportError> {
    canvas::write(&compared(names, curves, ratio), stem, footer)
}

fn compared<'a>(
    names: &Names<'a>,
    curves: &'a [Curve<'a>],
    ratio: &'a [RatioPoint],
) -> Compared<'a> {
    let quantity = crate::units::quantity(names.unit).unwrap_or(names.quantity);
    Compared {
        overlay: Overlay {
            title: names.title.to_string(),
            subtitle: Some(subtitle(ratio)),
            x_name: names.x_name.to_string(),
            y_name: names.unit,
            quantity: Some(quantity),
            curves,
            name_covered: false,
        },
        ratio,
    }
}

/// What the chart shows, and what B/A comes to: `bands: uncertainty (95 % CI, placements) ·
/// B/A 1.002 (geomean), 509 of 512 points within u_A + u_B of 1`.
fn subtitle(ratio: &[RatioPoint]) -> String {
    let mut s = format!("bands: {}", super::family::BANDS);
    let fine: Vec<&RatioPoint> = ratio
        .iter()
        .filter(|p| p.ratio.is_finite() && p.ratio > 0.0 && p.u.is_finite())
        .collect();
    if !fine.is_empty() {
        let n = fine.len();
        let geomean = (fine.iter().map(|p| p.ratio.ln()).sum::<f64>() / n as f64).exp();
        let same = fine.iter().filter(|p| (p.ratio - 1.0).abs() <= p.u).count();
        s += &format!(
            " · B/A {} (geomean), {same} of {n} point{} within u_A + u_B of 1",
            crate::schema::fixed(geomean, 3),
            if n == 1 { "" } else { "s" }
        );
    }
    s
}

impl Chart for Compared<'_> {
    fn title(&self) -> String {
        self.overlay.title()
    }

    fn subtitle(&self) -> Option<String> {
        self.overlay.subtitle()
    }

    fn axis_names(&self) -> (String, String) {
        self.overlay.axis_names()
    }

    fn draw<DB: DrawingBackend<ErrorType: 'static>>(
        &self,
        plot: &DrawingArea<DB, Shift>,
        text: bool,
        (x_name, y_name): (&str, &str),
    ) -> Result<Drawn, ChartError> {
        let (_, h) = plot.dim_in_pixel();
        let (top, bottom) = plot.split_vertically(h - (f64::from(h) * RATIO_SHARE) as u32);
        // The x axis is named once, under the B/A panel.
        let mut drawn = self.overlay.draw(&top, text, ("", y_name))?;
        let entries = ratio_panel(&bottom, &self.overlay, self.ratio, text, x_name)?;
        drawn.entries.extend(entries);
        Ok(drawn)
    }
}

/// The B/A panel on x as the overlay above draws it; its legend's entries.
fn ratio_panel<DB: DrawingBackend<ErrorType: 'static>>(
    area: &DrawingArea<DB, Shift>,
    overlay: &Overlay,
    ratio: &[RatioPoint],
    text: bool,
    x_name: &str,
) -> Result<Vec<Entry>, ChartError> {
    let all_x = distinct(
        overlay
            .curves
            .iter()
            .flat_map(|c| c.points.iter().map(|p| p.0)),
    );
    let log2 = log_axis(&all_x);
    let x_of = |x: f64| if log2 { x.log2() } else { x };
    let Some((x0, x1)) = overlay.x_span(log2) else {
        return Ok(Vec::new());
    };
    let mut pts: Vec<RatioPoint> = ratio
        .iter()
        .filter(|p| p.x.is_finite() && p.ratio.is_finite() && p.u.is_finite())
        .map(|p| RatioPoint { x: x_of(p.x), ..*p })
        .collect();
    pts.sort_by(|a, b| a.x.total_cmp(&b.x));
    // The range holds B/A, the line at 1 and the band where it is typical: a band twice the
    // median's width, or half the ratios' span, beyond them; a wider one (a few points whose
    // placements differ by 70 %) is cut at the panel's edges, which are drawn, so that the
    // ratio of every other point stays readable.
    let ratios = || pts.iter().map(|p| p.ratio);
    let r_lo = ratios().fold(1.0, f64::min);
    let r_hi = ratios().fold(1.0, f64::max);
    let mut widths: Vec<f64> = pts.iter().map(|p| (p.ratio * p.u).abs()).collect();
    widths.sort_by(f64::total_cmp);
    let typical = widths.get(widths.len() / 2).copied().unwrap_or(0.0);
    let reach = (2.0 * typical).max(0.5 * (r_hi - r_lo));
    let lo = pts
        .iter()
        .map(|p| p.ratio * (1.0 - p.u))
        .fold(r_lo, f64::min)
        .max(r_lo - reach);
    let hi = pts
        .iter()
        .map(|p| p.ratio * (1.0 + p.u))
        .fold(r_hi, f64::max)
        .min(r_hi + reach);
    let pad = ((hi - lo) * 0.1).max(0.005);
    let (y0, y1) = (lo - pad, hi + pad);
    let cut = pts
        .iter()
        .any(|p| p.ratio * (1.0 - p.u) < y0 || p.ratio * (1.0 + p.u) > y1);
    let measured = distinct(all_x.iter().map(|&x| x_of(x)));
    let (mut chart, _) = axes(
        area,
        (x0..x1, y0..y1),
        (x_name, "B/A"),
        text,
        None,
        log2,
        &measured,
    )?;
    let mut legend = Vec::new();
    let band: Vec<(f64, f64, f64)> = pts
        .iter()
        .map(|p| {
            let (a, b) = (p.ratio * (1.0 - p.u), p.ratio * (1.0 + p.u));
            (p.x, a.clamp(y0, y1), b.clamp(y0, y1))
        })
        .collect();
    if cut {
        for y in [y0, y1] {
            top_edge(&mut chart, (x0, x1), y)?;
        }
    }
    if band.len() >= 2 && band.iter().any(|b| b.2 > b.1) {
        chart.draw_series(std::iter::once(Polygon::new(
            band_outline(&band),
            RATIO.mix(BAND_ALPHA).filled(),
        )))?;
    }
    chart.draw_series(DashedLineSeries::new(
        vec![(x0, 1.0), (x1, 1.0)],
        6,
        4,
        BLACK.mix(0.7).stroke_width(1),
    ))?;
    legend.push(Entry::new("B = A", Swatch::Dashed, BLACK));
    if !pts.is_empty() {
        let line: Vec<(f64, f64)> = pts.iter().map(|p| (p.x, p.ratio)).collect();
        if line.len() <= super::series::DOTS_UP_TO {
            chart.draw_series(line.iter().map(|&p| Circle::new(p, DOT_R, RATIO.filled())))?;
        }
        chart.draw_series(LineSeries::new(line, RATIO.stroke_width(LINE_W)))?;
        // The band in the swatch, under the line, as A's and B's: one entry says both.
        let banded = band.len() >= 2 && band.iter().any(|b| b.2 > b.1);
        legend.push(if banded {
            Entry::new("B/A, band: u_A + u_B", Swatch::LineOnBand, RATIO)
        } else {
            Entry::new("B/A", Swatch::Line, RATIO)
        });
    }
    Ok(legend)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compare_chart_has_a_ratio_panel_with_its_band_and_a_line_at_one() {
        let xs: Vec<f64> = (1..=64).map(f64::from).collect();
        let a: Vec<(f64, f64)> = xs.iter().map(|&x| (x, 1000.0 * x)).collect();
        let b: Vec<(f64, f64)> = xs.iter().map(|&x| (x, 1020.0 * x)).collect();
        let u: Vec<(f64, f64)> = xs.iter().map(|&x| (x, 0.01)).collect();
        let curves = [
            Curve {
                label: "A: NVIDIA H100 80GB HBM3, threads_1_512",
                points: &a,
                u: &u,
            },
            Curve {
                label: "B: NVIDIA H100 80GB HBM3, threads_shuffled",
                points: &b,
                u: &u,
            },
        ];
        // B/A 1.02 +- 1.5 %, but +- 70 % at one point.
        let ratio: Vec<RatioPoint> = xs
            .iter()
            .map(|&x| RatioPoint {
                x,
                ratio: 1.02,
                u: if x == 10.0 { 0.7 } else { 0.015 },
            })
            .collect();
        let names = Names {
            title: "Shared-memory stores, full grid: no conflict — threads per block",
            x_name: "threads per block",
            unit: "MFlops",
            quantity: "shared_nc_grid",
        };
        let chart = compared(&names, &curves, &ratio);
        let svg = canvas::svg(&chart, None).unwrap();
        for words in [
            "B/A",
            "B = A",
            "B/A, band: u_A + u_B",
            // What B/A comes to: 1.02 everywhere, within u_A + u_B only where that is 70 %.
            "bands: uncertainty (95 % CI, placements) · B/A 1.020 (geomean), 1 of 64 points within u_A + u_B of 1",
            "threads per block",
            "throughput (GFLOP/s)",
            "Shared-memory stores, full grid: no conflict — threads per block",
        ] {
            // plotters writes each text on a line of its own.
            assert!(svg.contains(&format!("\n{words}\n")), "`{words}` missing");
        }
        // The panel's ticks read the typical band, not the one wide point's: 1 and 1.02 lie
        // a few ticks apart, and the cut band is seen to be cut at the panel's edges.
        let ticks: Vec<f64> = svg
            .split("<text ")
            .filter(|t| t.contains("text-anchor=\"end\""))
            .filter_map(|t| t.split('>').nth(1)?.split('<').next()?.trim().parse().ok())
            .filter(|v: &f64| *v > 0.0 && *v < 2.0)
            .collect();
        assert!(ticks.len() >= 3, "{ticks:?}");
        assert!(
            ticks.iter().all(|v| (0.9..=1.1).contains(v)),
            "the panel spans the wide band: {ticks:?}"
        );
        // Both runs' names whole (wrapped, not cut).
        assert!(!svg.contains('…'), "a name was cut");
        // The x axis is named once, under the ratio panel.
        assert_eq!(svg.matches("\nthreads per block\n").count(), 1);
    }
}
