//! The chart of one series: its points and line, the uncertainty band, noisy, unstable and failed
//! points, outliers left out of the fit, the knee, the peaks and the period, with a title that
//! says what was found.

use super::axes::{axes, distinct, log_axis, on_log2, scaled};
use super::canvas::{self, Chart, Drawn};
use super::legend::{star, Entry, Swatch};
use super::points::PointInfo;
use super::ChartError;
use crate::analyze::curve::Period;
use crate::analyze::reading::{congruence, human, human_x};
use crate::analyze::SeriesAnalysis;
use crate::events::marks::Mark;
use crate::spec::Labels;
use crate::units::quantity;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

pub(crate) const DATA: RGBColor = RGBColor(31, 119, 180);
pub(crate) const PEAK: RGBColor = RGBColor(214, 39, 40);
pub(crate) const KNEE: RGBColor = RGBColor(44, 160, 44);
pub(crate) const PERIOD: RGBColor = RGBColor(255, 127, 14);
pub(crate) const GAP: RGBColor = RGBColor(120, 120, 120);
pub(crate) const BAND: RGBColor = RGBColor(31, 119, 180);
pub(crate) const NOISY: RGBColor = RGBColor(148, 103, 189);
pub(crate) const UNSTABLE: RGBColor = RGBColor(227, 119, 194);
/// The nested period's brackets: darker than [`PERIOD`]'s orange, so that the two rows differ in
/// grey too.
pub(crate) const NESTED: RGBColor = RGBColor(140, 86, 75);
/// The best point's star: amber, outlined in black.
pub(crate) const BEST: RGBColor = RGBColor(240, 180, 0);

/// One series' chart: the series, the name of its x axis, what the CSV says of its points and
/// what the spec calls things.
pub(crate) struct SeriesChart<'a> {
    pub s: &'a SeriesAnalysis,
    pub x_name: &'a str,
    pub info: &'a [PointInfo],
    pub labels: &'a Labels,
}

/// One series' chart as an SVG document (with its title and axis names even without a font).
pub fn series_svg(
    s: &SeriesAnalysis,
    x_name: &str,
    footer: Option<&str>,
    info: &[PointInfo],
    labels: &Labels,
) -> Result<String, ChartError> {
    canvas::svg(
        &SeriesChart {
            s,
            x_name,
            info,
            labels,
        },
        footer,
    )
}

/// Whether a series is worth a chart: a single point is no curve.
pub(crate) fn drawable(s: &SeriesAnalysis) -> bool {
    s.data.iter().filter(|p| p.1.is_some()).count() >= 2
}

/// The title of the chart of `metric` in group `group` against `x_name`, in the spec's words:
/// `Shared-memory stores, full grid: no conflict — threads per block`, `... [block layout:
/// dense] — ...`. `sweep plot` and `sweep compare` title a series alike.
pub fn series_title(
    labels: &Labels,
    metric: &str,
    group: &[(String, String)],
    x_name: &str,
) -> String {
    format!(
        "{} — {}",
        series_in_words(labels, metric, group),
        labels.axis(x_name)
    )
}

/// The series of `metric` in group `group` in the spec's words, as its chart's title names it
/// before its x: `Shared-memory stores, full grid: no conflict`, `every thread [block layout:
/// dense]`.
pub fn series_in_words(labels: &Labels, metric: &str, group: &[(String, String)]) -> String {
    let what = match (labels.family(metric), labels.metric(metric)) {
        (Some(f), Some(l)) => format!("{f}: {l}"),
        (None, Some(l)) => l.to_string(),
        (Some(f), None) => format!("{f}: {metric}"),
        (None, None) => metric.to_string(),
    };
    format!("{what}{}", group_in_words(labels, group))
}

impl Chart for SeriesChart<'_> {
    fn title(&self) -> String {
        series_title(self.labels, &self.s.metric, &self.s.group, self.x_name)
    }

    fn subtitle(&self) -> Option<String> {
        Some(finding(self.s, self.x_name))
    }

    fn axis_names(&self) -> (String, String) {
        (self.labels.axis(self.x_name), y_label(self.s, self.labels))
    }

    fn draw<DB: DrawingBackend<ErrorType: 'static>>(
        &self,
        plot: &DrawingArea<DB, Shift>,
        text: bool,
        names: (&str, &str),
    ) -> Result<Drawn, ChartError> {
        let legend = self
            .labels
            .metric(&self.s.metric)
            .unwrap_or(&self.s.metric)
            .to_string();
        draw(plot, self.s, names, &legend, text, self.info)
    }
}

/// ` [variant=offset]`: the axes that single a series out, if any.
pub(crate) fn group_words(group: &[(String, String)]) -> String {
    if group.is_empty() {
        return String::new();
    }
    let g: Vec<String> = group.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!(" [{}]", g.join(", "))
}

/// ` [block layout: dense]`: the axes that single a series out, each in the spec's words (its
/// `label`, else its name) with its value; for people, where [`group_words`] names files.
pub fn group_in_words(labels: &Labels, group: &[(String, String)]) -> String {
    if group.is_empty() {
        return String::new();
    }
    let g: Vec<String> = group
        .iter()
        .map(|(k, v)| axis_value(labels, k, v))
        .collect();
    format!(" [{}]", g.join(", "))
}

/// `block layout: dense`: axis `name` in the spec's words, and its value.
pub(crate) fn axis_value(labels: &Labels, name: &str, value: &str) -> String {
    format!("{}: {value}", labels.axis(name))
}

/// What the analysis found, in one line: the period, the knee and the best value and x
/// (`best 124.5 GFLOP/s at 512 (within 1 % already at 507)`: the smallest x that comes within
/// 1 % of the best, not every x past it).
pub(crate) fn finding(s: &SeriesAnalysis, x_name: &str) -> String {
    let c = &s.curve;
    let mut parts = Vec::new();
    match &c.period {
        Some(p) => parts.push(period_clause(p, x_name)),
        None => parts.push("no period".to_string()),
    }
    if let (Some(_), Some(q)) = (&c.period, &c.secondary) {
        parts.push(match q.level.as_str() {
            "high" => format!("period {} nested", human(q.period)),
            l => format!("period {} nested ({l})", human(q.period)),
        });
    }
    match (c.knee, c.knee_range) {
        (Some(k), _) => parts.push(format!("knee {}", human(k))),
        (None, Some(r)) if !r.sharp => {
            parts.push(format!("no sharp knee ({}–{})", human(r.lo), human(r.hi)))
        }
        _ => {}
    }
    if let Some(b) = &c.best {
        let value = crate::units::format_value(b.value, &s.unit);
        parts.push(if b.x_within_1pct == b.x {
            format!("best {value} at {}", human_x(b.x))
        } else {
            format!(
                "best {value} at {} (within 1 % already at {})",
                human_x(b.x),
                human_x(b.x_within_1pct)
            )
        });
    }
    // Its points are medians of rows that differ in axes it is not split by (review 20a H3).
    if !s.merged.is_empty() {
        let axes: Vec<String> = s
            .merged
            .iter()
            .map(|a| crate::units::visible(a).into_owned())
            .collect();
        parts.push(format!(
            "each point the median of its rows over {}",
            axes.join(", ")
        ));
    }
    // Points a CSV without its run repeats (review 21 F0).
    if s.repeated > 0 {
        parts.push(format!(
            "{} the median of repeated rows",
            crate::words::plural(s.repeated, "point")
        ));
    }
    parts.join(" · ")
}

/// `period 16, peaks at stride ≡ 1, 3, …, 15 (mod 16), high confidence`: the peaks' phases
/// as the analysis's reading says them ([`congruence`]: one wording for the chart and the tables).
pub(crate) fn period_clause(p: &Period, x_name: &str) -> String {
    format!(
        "period {}, peaks at {x_name} ≡ {}, {} confidence",
        human(p.period),
        congruence(&p.peak_phases, p.period),
        p.level.as_str()
    )
}

/// The y axis in words with its unit: `throughput (TFLOP/s)`, `bandwidth (TB/s)`; a unit
/// without a known quantity names the metric (`expected_ways (ways)`).
pub(crate) fn y_label(s: &SeriesAnalysis, labels: &Labels) -> String {
    let s = &scaled(s);
    let what = quantity(&s.unit)
        .map(str::to_string)
        .unwrap_or_else(|| labels.metric(&s.metric).unwrap_or(&s.metric).to_string());
    if s.unit.is_empty() {
        what
    } else {
        format!("{what} ({})", s.unit)
    }
}

/// One bracket drawn over the curve: x `from` to `to`, on the upper row or the lower one, the
/// main period's or the nested one's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Bracket {
    pub from: f64,
    pub to: f64,
    pub upper: bool,
    pub nested: bool,
}

/// The brackets of period `p` from its first marked peak `start`, and of the nested period `q`:
/// the longer of the two on the upper row, once, from the first x at or after `start` on its own
/// phase (from `start` where that would run past `x_hi`); the shorter on the lower row, repeated
/// across the longer one's span, so that the reader sees how many of one fit in the other (four
/// steps of 32 threads in each 128, or two steps of 32 in the 64 whose second drop is the larger).
pub(crate) fn brackets(p: &Period, q: Option<&Period>, start: f64, x_hi: f64) -> Vec<Bracket> {
    let Some(q) = q.filter(|q| q.period > 0.0 && q.period != p.period) else {
        return vec![Bracket {
            from: start,
            to: start + p.period,
            upper: true,
            nested: false,
        }];
    };
    let q_longer = q.period > p.period;
    let (long, short) = if q_longer { (q, p) } else { (p, q) };
    let on_phase = start + (long.phase - start).rem_euclid(long.period);
    let from = if on_phase + long.period <= x_hi {
        on_phase
    } else {
        start
    };
    let mut out = vec![Bracket {
        from,
        to: from + long.period,
        upper: true,
        nested: q_longer,
    }];
    // As many as fit whole in the longer one: never a row wider than the bracket over it.
    let n = (long.period / short.period + 1e-9).floor().clamp(1.0, 64.0) as usize;
    out.extend((0..n).map(|k| Bracket {
        from: from + k as f64 * short.period,
        to: from + (k + 1) as f64 * short.period,
        upper: false,
        nested: !q_longer,
    }));
    out
}

/// Whether the best point of `s` stands out enough to be starred: its worst value is more than
/// 1 % from its best. On a flat curve (a copy at 3.02 TB/s whatever the layout) the best is
/// wherever the noise put it, and a star there would point at nothing.
pub(crate) fn stands_out(s: &SeriesAnalysis) -> bool {
    match (&s.curve.best, s.curve.worst) {
        (Some(b), Some(w)) => (b.value - w).abs() > 0.01 * b.value.abs(),
        (Some(_), None) => true,
        (None, _) => false,
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

/// The points of `observed` (in x order) to mark as peaks: those of `peaks` with a fall after
/// them that is larger than any rise into them from the point before (a local maximum, noise
/// of a point before it allowed). A listed peak where the curve only steps up (a sawtooth's top
/// that the next point climbs past, or the last point, with nothing after it) is no peak to the
/// eye, and a ring there would say one is.
pub(crate) fn peak_marks(observed: &[(f64, f64)], peaks: &[f64]) -> Vec<(f64, f64)> {
    observed
        .iter()
        .enumerate()
        .filter(|(_, p)| peaks.contains(&p.0))
        .filter(|&(i, &(_, y))| {
            let before = i.checked_sub(1).map(|j| observed[j].1);
            let after = observed.get(i + 1).map(|q| q.1);
            after.is_some_and(|a| a < y && before.is_none_or(|b| b - y < y - a))
        })
        .map(|(_, &p)| p)
        .collect()
}

/// The rug's ticks, in pixels above the x axis (from, to): unstable points' row, and noisy points'
/// above it; [`RUG_W`] pixels wide, so that a page that shows the chart smaller still shows them.
const RUG_UNSTABLE: (i32, i32) = (1, 9);
const RUG_NOISY: (i32, i32) = (11, 19);
const RUG_W: i32 = 2;

/// Curves of at most this many points get a dot on each; a denser one is its line.
pub(crate) const DOTS_UP_TO: usize = 100;

/// The radius of those dots, in pixels: 3, so that a dot shows beside a line [`LINE_W`] wide
/// (at 2 it was the line's own width, and the points of a sparse curve did not show).
pub(crate) const DOT_R: i32 = 3;

/// The data's line, and nothing else in a plot, is drawn this wide: the SVG marks such lines
/// `class="series"` (see [`canvas::mark_series`]).
pub(crate) const LINE_W: u32 = 2;

/// The band of a curve's uncertainty: (x, low, high) for each point of `observed` whose
/// relative uncertainty `u_at` knows, clamped to y0..y1 (a point whose placements differ by
/// 70 % would draw outside the plot: see [`y_range`], which makes room for the band first).
pub(crate) fn band(
    observed: &[(f64, f64)],
    u_at: &std::collections::HashMap<u64, f64>,
    (y0, y1): (f64, f64),
) -> Vec<(f64, f64, f64)> {
    observed
        .iter()
        .filter_map(|&(x, y)| {
            u_at.get(&x.to_bits()).map(|&u| {
                let (a, b) = (y * (1.0 - u), y * (1.0 + u));
                (x, a.min(b).clamp(y0, y1), a.max(b).clamp(y0, y1))
            })
        })
        .collect()
}

/// The band's polygon: along the high edge, back along the low one.
pub(crate) fn band_outline(band: &[(f64, f64, f64)]) -> Vec<(f64, f64)> {
    let mut outline: Vec<(f64, f64)> = band.iter().map(|b| (b.0, b.2)).collect();
    outline.extend(band.iter().rev().map(|b| (b.0, b.1)));
    outline
}

/// How far above the data a band may lift the plot's top, as a share of the data's span: a
/// point whose placements differ by 70 % would otherwise squash the curve to the bottom.
pub(crate) const BAND_REACH: f64 = 0.5;

/// The y range of a plot of values `y_min..y_max` whose band reaches `band_hi`, with `headroom`
/// (a share of the span) above both for marks: the band is inside the range unless it reaches
/// beyond [`BAND_REACH`]; then the range stops there and `clipped` is true (the plot draws its
/// top edge, so that the cut band is seen to be cut, never to run off the chart).
pub(crate) fn y_range(y_min: f64, y_max: f64, band_hi: f64, headroom: f64) -> YRange {
    let span = y_max - y_min;
    let reach = y_max + BAND_REACH * span;
    let top = if band_hi.is_finite() {
        band_hi.clamp(y_max, reach)
    } else {
        y_max
    };
    let y1 = top + headroom * (top - y_min);
    YRange {
        y0: y_min,
        y1,
        top,
        clipped: band_hi.is_finite() && band_hi > y1,
    }
}

/// A plot's y range: from `y0` to `y1`; `top` the highest thing drawn below the headroom (data or
/// band); `clipped` when the band reaches past `y1`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct YRange {
    pub y0: f64,
    pub y1: f64,
    pub top: f64,
    pub clipped: bool,
}

/// The top edge of a plot whose band is cut at it (plotters draws only the left and bottom axes).
pub(crate) fn top_edge<DB: DrawingBackend<ErrorType: 'static>>(
    chart: &mut super::axes::Plane<'_, DB>,
    (x0, x1): (f64, f64),
    y1: f64,
) -> Result<(), ChartError> {
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(x0, y1), (x1, y1)],
            BLACK.mix(0.6).stroke_width(1),
        )))
        .map(|_| ())
        .map_err(ChartError::from)
}

/// Draws one series into `plot`, its axes named `names` and its line `label` in the legend;
/// `text` false draws no text at all (no font is needed then). Marks go behind the data
/// (band, knee, period, the rug of noisy and unstable points on the plot's floor) or are hollow
/// and thin (peaks), so that none hides a point.
fn draw<DB: DrawingBackend<ErrorType: 'static>>(
    plot: &DrawingArea<DB, Shift>,
    s: &SeriesAnalysis,
    (x_name, y_name): (&str, &str),
    label: &str,
    text: bool,
    info: &[PointInfo],
) -> Result<Drawn, ChartError> {
    let (divisor, shown) = super::axes::series_unit(s);
    // The best value in words, from the series' own unit (the drawn one is scaled).
    let best_value = s
        .curve
        .best
        .as_ref()
        .map(|b| crate::units::format_value(b.value, &s.unit));
    let s = &scaled(s);
    let mut legend = Vec::new();
    // Sparse x over a wide range (strides 1..32 then 64..1024) is drawn on log2(x).
    let log2 = log_axis(&distinct(s.data.iter().map(|p| p.0)));
    let x_of = |x: f64| if log2 { x.log2() } else { x };
    let marks: Vec<f64> = outlier_marks(s).into_iter().map(x_of).collect();
    let mut s = if log2 { on_log2(s) } else { s.clone() };
    // Points in x order, whatever order the CSV has them in.
    s.data.sort_by(|a, b| a.0.total_cmp(&b.0));
    let s = &s;
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
        return Ok(Drawn {
            entries: legend,
            frame: None,
        });
    };
    let pad = super::axes::x_pad(x_lo, x_hi, log2, &xs);
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
    // The uncertainty's band, a band of value x (1 +- u) around the curve: the y range holds it.
    let u_at: std::collections::HashMap<u64, f64> =
        info.iter().map(|p| (x_of(p.x).to_bits(), p.u)).collect();
    let band_hi = band(&observed, &u_at, (f64::MIN, f64::MAX))
        .iter()
        .map(|b| b.2)
        .fold(f64::NEG_INFINITY, f64::max);
    // Headroom for the period's bracket: an eighth of the plot, and never under 28 pixels (a
    // small chart's bracket would touch the peaks' rings).
    let plot_px = f64::from(plot.dim_in_pixel().1.saturating_sub(70).max(40));
    // A nested period's brackets take a second row: twice the room.
    let nested = s.curve.secondary.as_ref().filter(|q| {
        s.curve
            .period
            .as_ref()
            .is_some_and(|p| p.period != q.period)
    });
    let headroom = if nested.is_some() {
        0.22f64.max(60.0 / plot_px)
    } else {
        0.12f64.max(28.0 / plot_px)
    };
    let range = y_range(y_min, y_max, band_hi, headroom);
    let (y0, y1) = (range.y0, range.y1);

    let (mut chart, mut frame) = axes(
        plot,
        (x0..x1, y0..y1),
        (x_name, y_name),
        text,
        s.curve.period.as_ref().map(|p| p.period),
        log2,
        &distinct(xs.iter().copied()),
    )?;
    frame.y_scale = 1.0 / divisor;
    frame.y_unit = shown;

    // Behind the data: the uncertainty's band, cut at the plot's top edge if it must be.
    let band = band(&observed, &u_at, (y0, y1));
    if range.clipped {
        top_edge(&mut chart, (x0, x1), y1)?;
    }
    if band.len() >= 2 && band.iter().any(|b| b.2 > b.1) {
        chart.draw_series(std::iter::once(Polygon::new(
            band_outline(&band),
            BAND.mix(0.25).filled(),
        )))?;
        // The swatch in the colour the band shows on white (a legend is drawn opaque).
        legend.push(Entry::new(
            "uncertainty (95 % CI, placements)",
            Swatch::Fill,
            RGBColor(199, 221, 236),
        ));
    }
    // Behind the data: where the knee may lie within the values' uncertainty, a light band in
    // the knee's colour (the whole bend where there is no sharp knee).
    if let Some(r) = s.curve.knee_range.filter(|r| r.hi > r.lo) {
        chart.draw_series(std::iter::once(Rectangle::new(
            [(r.lo, y0), (r.hi, y_max)],
            KNEE.mix(0.12).filled(),
        )))?;
        let (lo, hi) = if log2 {
            (r.lo.exp2(), r.hi.exp2())
        } else {
            (r.lo, r.hi)
        };
        let label = if r.sharp {
            format!("knee within u: {}–{}", human(lo), human(hi))
        } else {
            format!("no sharp knee: bends {}–{}", human(lo), human(hi))
        };
        legend.push(Entry::new(label, Swatch::Fill, RGBColor(214, 236, 214)));
    }
    // Behind the data: the knee, a thin dashed vertical line.
    if let Some(k) = s.curve.knee {
        chart.draw_series(DashedLineSeries::new(
            vec![(k, y0), (k, y_max)],
            6,
            4,
            KNEE.mix(0.7).stroke_width(1),
        ))?;
        legend.push(Entry::new(
            format!("knee {}", human(if log2 { k.exp2() } else { k })),
            Swatch::Dashed,
            KNEE,
        ));
    }
    let peaks = peak_marks(&observed, &s.curve.peaks);
    // The period: a thin bracket from one peak to the next, in the headroom above the curve; a
    // nested period on a row of its own (see [`brackets`]), each bracket's length written over it.
    if let (Some(p), [a, _, ..], false) = (&s.curve.period, peaks.as_slice(), log2) {
        let rows = |upper: bool| {
            let k = match (nested.is_some(), upper) {
                (false, _) => 0.5,
                (true, true) => 0.78,
                (true, false) => 0.36,
            };
            range.top + k * headroom * (range.top - y_min)
        };
        let tick = 0.025 * (y1 - y0);
        let bracket_font = ("sans-serif", 12).into_font();
        let mut labelled = (false, false);
        for b in brackets(p, nested, a.0, x_hi) {
            let y = rows(b.upper);
            let colour = if b.nested { NESTED } else { PERIOD };
            let shape = vec![(b.from, y - tick), (b.from, y), (b.to, y), (b.to, y - tick)];
            chart.draw_series(std::iter::once(PathElement::new(
                shape,
                colour.stroke_width(if b.nested { 2 } else { 1 }),
            )))?;
            // Its length over the first bracket of each row: `128`, and `32` under it.
            let first = if b.upper {
                &mut labelled.0
            } else {
                &mut labelled.1
            };
            if text && !*first {
                *first = true;
                let style = TextStyle::from(bracket_font.clone())
                    .color(&colour)
                    .pos(Pos::new(HPos::Center, VPos::Bottom));
                chart.draw_series(std::iter::once(Text::new(
                    human(b.to - b.from),
                    ((b.from + b.to) / 2.0, y),
                    style,
                )))?;
            }
        }
        legend.push(Entry::new(
            format!("period {}", human(p.period)),
            Swatch::Bracket,
            PERIOD,
        ));
        if let Some(q) = nested {
            legend.push(Entry::new(
                format!("period {} nested", human(q.period)),
                Swatch::NestedBracket,
                NESTED,
            ));
        }
    }
    // On the floor of the plot, behind the data: failed points (grey crosses), and a rug of the
    // points whose own metric the timing core marked, a short tick standing on the x axis per
    // point, noisy (confidence target missed) in a row above unstable (placements differ beyond
    // the noise). A run of hundreds reads as a bar along the x it spans, and the curve is drawn
    // over it, whole.
    let floor = |k: f64| y0 + k * (y1 - y0);
    // Their entries come last in the legend, after the curve's own.
    let mut on_floor = Vec::new();
    let gaps: Vec<f64> = s
        .data
        .iter()
        .filter(|p| p.1.is_none())
        .map(|p| p.0)
        .collect();
    if !gaps.is_empty() {
        chart.draw_series(
            gaps.iter()
                .map(|&x| Cross::new((x, floor(0.015)), 4, GAP.stroke_width(1))),
        )?;
        on_floor.push(Entry::new("failed point", Swatch::Cross, GAP));
    }
    let measured = observed.len();
    // Each cause in the terminal's words (`3 of 255 vary with buffer placement`); the values
    // results.csv calls `unstable` (placement, processes) share the lower row and its colour.
    for (mark, colour, why, (from, to)) in [
        (Mark::Placement, UNSTABLE, "", RUG_UNSTABLE),
        (Mark::Processes, UNSTABLE, "", RUG_UNSTABLE),
        (Mark::Noisy, NOISY, " (CI target missed)", RUG_NOISY),
    ] {
        let marked: Vec<f64> = info
            .iter()
            .filter(|p| p.mark == Some(mark))
            .map(|p| x_of(p.x))
            .filter(|x| xs.contains(x))
            .collect();
        if marked.is_empty() {
            continue;
        }
        chart.draw_series(marked.iter().map(|&x| {
            EmptyElement::at((x, y0)) + Rectangle::new([(0, -to), (RUG_W, -from)], colour.filled())
        }))?;
        on_floor.push(Entry::new(
            format!(
                "{} of {measured} {}{why}",
                marked.len(),
                mark.verb(marked.len())
            ),
            Swatch::Rug,
            colour,
        ));
    }
    // The data: a line between neighbours in x, broken at failed points; a dot per point when
    // there are few.
    let mut runs: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
    for &(x, y) in &s.data {
        match y.filter(|v| v.is_finite()) {
            Some(v) => runs.last_mut().map_or((), |r| r.push((x, v))),
            None => runs.push(Vec::new()),
        }
    }
    for run in runs.into_iter().filter(|r| !r.is_empty()) {
        chart.draw_series(LineSeries::new(run, DATA.stroke_width(LINE_W)))?;
    }
    legend.push(Entry::new(label, Swatch::Line, DATA));
    if observed.len() <= DOTS_UP_TO {
        chart.draw_series(
            observed
                .iter()
                .map(|&p| Circle::new(p, DOT_R, DATA.filled())),
        )?;
    }
    // The peaks: hollow rings, the point seen through them.
    if !peaks.is_empty() {
        chart.draw_series(
            peaks
                .iter()
                .map(|&p| Circle::new(p, 4, PEAK.stroke_width(2))),
        )?;
        legend.push(Entry::new("peak", Swatch::Ring, PEAK));
    }
    // Outliers left out of the fit: hollow grey circles.
    let outliers: Vec<(f64, f64)> = observed
        .iter()
        .copied()
        .filter(|p| marks.contains(&p.0))
        .collect();
    if !outliers.is_empty() {
        chart.draw_series(
            outliers
                .iter()
                .map(|&p| Circle::new(p, 6, GAP.stroke_width(1))),
        )?;
        legend.push(Entry::new("outlier (not fitted)", Swatch::Ring, GAP));
    }
    // The best point: a star over it, drawn last so that nothing hides it, its outline dark
    // so that it shows in grey too; none on a flat curve (see [`stands_out`]).
    if let (Some(b), Some(value), true) = (&s.curve.best, best_value, stands_out(s)) {
        if let Some(&p) = observed.iter().find(|p| p.0 == b.x) {
            // The outline is a larger dark star under it: a shape, not a line that runs back.
            // Smaller on a small chart (`--size 480x300`), where 10 pixels would hide a peak.
            let r = if plot.dim_in_pixel().0 < 640 { 7 } else { 10 };
            for (r, colour) in [(r, BLACK), (r - 2, BEST)] {
                chart.draw_series(std::iter::once(
                    EmptyElement::at(p) + Polygon::new(star(r), colour.filled()),
                ))?;
            }
            let real = |x: f64| human_x(if log2 { x.exp2() } else { x });
            // In the subtitle's words: where a smaller x is within 1 %, it says so.
            let tied = if b.x_within_1pct == b.x {
                String::new()
            } else {
                format!(" (within 1 % from {})", real(b.x_within_1pct))
            };
            legend.push(Entry::new(
                format!("best: {value} at {}{tied}", real(b.x)),
                Swatch::Star,
                BEST,
            ));
        }
    }
    legend.extend(on_floor);
    Ok(Drawn {
        entries: legend,
        frame: Some(frame),
    })
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
            secondary_counter: None,
            marked: Default::default(),
            model: None,
            reading: String::new(),
            merged: vec![],
            repeated: 0,
            data,
        }
    }

    #[test]
    fn the_title_says_the_peaks_modulo_the_period() {
        let mut s = series();
        let p = s.curve.period.as_mut().expect("the saw has a period");
        p.period = 16.0;
        p.peak_phases = vec![1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 13.0, 15.0];
        let t = finding(&s, "stride");
        assert!(
            t.contains("period 16, peaks at stride ≡ 1, 3, …, 15 (mod 16),"),
            "{t}"
        );
        assert!(!t.contains("mod 2"), "{t}");
        let p = s.curve.period.as_mut().unwrap();
        p.period = 32.0;
        p.peak_phases = vec![0.0];
        let t = finding(&s, "threads");
        assert!(t.contains("peaks at threads ≡ 0 (mod 32)"), "{t}");
        let p = s.curve.period.as_mut().unwrap();
        p.peak_phases = vec![31.0, 15.0];
        let t = finding(&s, "threads");
        assert!(t.contains("≡ 15, 31 (mod 32)"), "{t}");
    }

    /// Whether the SVG draws a line along the top of its plot, from its left to its right.
    pub(crate) fn has_top_edge(svg: &str) -> bool {
        let root = &svg[..svg.find('>').unwrap()];
        let at = root.find(" data-frame=\"").unwrap() + 13;
        let f: Vec<&str> = root[at..].split('"').next().unwrap().split(' ').collect();
        svg.contains(&format!("points=\"{},{} {},{} \"", f[0], f[1], f[2], f[1]))
    }

    /// y from .. to of the frame on an SVG's root, in the displayed unit.
    pub(crate) fn frame_y(svg: &str) -> (f64, f64) {
        let root = &svg[..svg.find('>').unwrap()];
        let at = root.find(" data-y=\"").unwrap() + 9;
        let mut v = root[at..]
            .split('"')
            .next()
            .unwrap()
            .split(' ')
            .map(|n| n.parse::<f64>().unwrap());
        (v.next().unwrap(), v.next().unwrap())
    }

    #[test]
    fn the_y_range_holds_the_uncertainty_band_or_shows_where_it_is_cut() {
        // A saw up to 4000 MFlops (4 GFLOP/s drawn); its highest point +-30 %.
        let s = series();
        let top = s.data.iter().filter_map(|p| p.1).fold(0.0, f64::max);
        let x_top = s.data.iter().find(|p| p.1 == Some(top)).unwrap().0;
        let info = |u: f64| -> Vec<PointInfo> {
            s.data
                .iter()
                .map(|p| PointInfo {
                    x: p.0,
                    u: if p.0 == x_top { u } else { 0.01 },
                    status: "ok".into(),
                    mark: None,
                })
                .collect()
        };
        let svg = series_svg(&s, "threads", None, &info(0.3), &Labels::default()).unwrap();
        let (_, y1) = frame_y(&svg);
        assert!(
            y1 >= 1.3 * top / 1000.0,
            "the band reaches {} GFLOP/s, the plot stops at {y1}",
            1.3 * top / 1000.0
        );
        // A band of +-300 % would squash the curve: the range stops half a span above the data,
        // and the plot's top edge is drawn where the band is cut.
        let svg = series_svg(&s, "threads", None, &info(3.0), &Labels::default()).unwrap();
        let (y0, y1) = frame_y(&svg);
        assert!(
            y1 < 4.0 * top / 1000.0 && y1 >= 1.5 * top / 1000.0,
            "{y0}..{y1}"
        );
        assert!(has_top_edge(&svg), "no top edge over the cut band");
        let unclipped = series_svg(&s, "threads", None, &info(0.3), &Labels::default()).unwrap();
        assert!(!has_top_edge(&unclipped), "a top edge with nothing cut");
    }

    #[test]
    fn a_peak_is_marked_only_where_the_curve_falls_after_it() {
        // 32 falls after it; 40 is on a rising ramp; 50 steps up (48..50 flat, then higher);
        // 64 is the last point; 56 falls after it though 55 is a little higher (noise).
        let observed: Vec<(f64, f64)> = (1..=64)
            .map(|x| {
                let x = f64::from(x);
                let y = match x {
                    _ if x <= 32.0 => x,
                    _ if (48.0..=50.0).contains(&x) => 30.0,
                    55.0 => 41.0,
                    56.0 => 40.5,
                    57.0 => 30.0,
                    _ if x > 50.0 => x - 15.0,
                    _ => x - 20.0,
                };
                (x, y)
            })
            .collect();
        let marked: Vec<f64> = peak_marks(&observed, &[32.0, 40.0, 50.0, 56.0, 64.0])
            .iter()
            .map(|p| p.0)
            .collect();
        assert_eq!(marked, [32.0, 56.0]);
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
            labels: &Labels::default(),
        };
        let svg = canvas::svg_with(&chart, false, None, &canvas::Look::default()).unwrap();
        // Only the title and the axis names, added as SVG text for want of a font.
        assert_eq!(svg.matches("<text").count(), 3, "text drawn without a font");
        // The peaks (8 of them from the knee at 64 to 256) are drawn in their own colour.
        assert!(svg.matches("#D62728").count() >= 6, "peaks missing");
        assert!(
            svg.contains(">threads</text>")
                && svg.contains(">mflops [variant: a] — threads</text>"),
            "labels missing"
        );
    }

    #[test]
    fn unstable_points_are_a_rug_on_the_floor_counted_in_the_legend() {
        let s = series();
        // Three unstable points by their placements, one noisy, the rest ok (x 71 failed: not
        // measured).
        let info: Vec<PointInfo> = s
            .data
            .iter()
            .map(|p| {
                let (status, mark) = match p.0 as u32 {
                    10 | 11 | 200 => ("unstable", Some(Mark::Placement)),
                    30 => ("noisy", Some(Mark::Noisy)),
                    _ => ("ok", None),
                };
                PointInfo {
                    x: p.0,
                    u: 0.01,
                    status: status.into(),
                    mark,
                }
            })
            .collect();
        let svg = series_svg(&s, "threads", None, &info, &Labels::default()).unwrap();
        let t = texts_of(&svg);
        // Each entry says how many points of how many, and why, in the terminal's words (wrapped
        // where it must be).
        for words in [
            "3 of 255 vary with buffer placement",
            "1 of 255 noisy (CI target missed)",
        ] {
            assert!(t.iter().any(|t| t == words), "{words}: {t:?}");
        }
        // A tick per point, two pixels wide, standing on the x axis (the swatch's five beside
        // them); no triangle of that colour.
        let ticks: Vec<&str> = svg
            .lines()
            .filter(|l| l.starts_with("<rect") && l.contains("fill=\"#E377C2\""))
            .collect();
        assert_eq!(ticks.len(), 3 + 5, "{ticks:?}");
        let floor = attr_values(&ticks.join("\n"), "<rect", "x")
            .into_iter()
            .filter(|&x| x < canvas::PLOT_W as f64)
            .count();
        assert_eq!(floor, 3, "the plot's ticks: {ticks:?}");
        assert!(!svg
            .lines()
            .any(|l| l.starts_with("<polygon") && l.contains("#E377C2")));
    }

    /// `series()` with a nested period of `q` beside its own, both on phase 0.
    fn with_nested(q: f64) -> SeriesAnalysis {
        let mut s = series();
        let mut nested = s.curve.period.clone().expect("the saw has a period");
        nested.period = q;
        nested.phase = 0.0;
        nested.peak_phases = vec![0.0];
        s.curve.secondary = Some(nested);
        s
    }

    #[test]
    fn the_longer_period_brackets_the_shorter_ones_that_fit_in_it() {
        let period = |p: f64| {
            let mut q = series().curve.period.unwrap();
            q.period = p;
            q.phase = 0.0;
            q
        };
        let b = |from: f64, to: f64, upper: bool, nested: bool| Bracket {
            from,
            to,
            upper,
            nested,
        };
        // Alone: one bracket from the first peak, as before.
        assert_eq!(
            brackets(&period(32.0), None, 64.0, 256.0),
            [b(64.0, 96.0, true, false)]
        );
        // 128 with 32 nested (one block's global stores): the 128 above, four 32 under it.
        assert_eq!(
            brackets(&period(128.0), Some(&period(32.0)), 128.0, 512.0),
            [
                b(128.0, 256.0, true, false),
                b(128.0, 160.0, false, true),
                b(160.0, 192.0, false, true),
                b(192.0, 224.0, false, true),
                b(224.0, 256.0, false, true),
            ]
        );
        // 32 with 64 nested (the full grid's: every other drop larger): the 64 above, from the
        // first peak on its phase (64, not the first peak at 32), two 32 under it.
        assert_eq!(
            brackets(&period(32.0), Some(&period(64.0)), 32.0, 512.0),
            [
                b(64.0, 128.0, true, true),
                b(64.0, 96.0, false, false),
                b(96.0, 128.0, false, false),
            ]
        );
        // Periods that are no multiple of each other: the shorter as often as it fits whole.
        assert_eq!(
            brackets(&period(48.0), Some(&period(32.0)), 48.0, 512.0),
            [b(48.0, 96.0, true, false), b(48.0, 80.0, false, true)]
        );
        // A nested period equal to the main one adds nothing.
        assert_eq!(
            brackets(&period(32.0), Some(&period(32.0)), 32.0, 512.0).len(),
            1
        );
    }

    /// The polylines of an SVG stroked in `colour` (`#8C564B`), as their points.
    fn polylines_in(svg: &str, colour: &str) -> Vec<Vec<(f64, f64)>> {
        svg.lines()
            .filter(|l| l.starts_with("<polyline") && l.contains(&format!("stroke=\"{colour}\"")))
            .filter_map(|l| {
                let at = l.find(" points=\"")? + 9;
                Some(
                    l[at..]
                        .split('"')
                        .next()?
                        .split_whitespace()
                        .filter_map(|p| {
                            let (x, y) = p.split_once(',')?;
                            Some((x.parse().ok()?, y.parse().ok()?))
                        })
                        .collect(),
                )
            })
            .collect()
    }

    #[test]
    fn a_nested_period_is_drawn_on_the_chart_not_only_named_in_the_subtitle() {
        let s = with_nested(64.0);
        let svg = series_svg(&s, "threads", None, &[], &Labels::default()).unwrap();
        let t = texts_of(&svg);
        // The subtitle names it, the legend shows its bracket, and each row's length is written
        // on its first bracket.
        assert!(t.iter().any(|t| t.contains("period 64 nested")), "{t:?}");
        for words in ["period 32", "period 64 nested", "64", "32"] {
            assert!(t.iter().any(|t| t == words), "{words} missing: {t:?}");
        }
        // One 64 bracket in the nested colour over the plot (the legend's swatch is the other),
        // and two 32 brackets in the period's colour under it, as wide as half of it.
        let nested: Vec<_> = polylines_in(&svg, "#8C564B")
            .into_iter()
            .filter(|p| p.len() == 4 && p[0].0 < canvas::PLOT_W as f64)
            .collect();
        let main: Vec<_> = polylines_in(&svg, "#FF7F0E")
            .into_iter()
            .filter(|p| p.len() == 4 && p[0].0 < canvas::PLOT_W as f64)
            .collect();
        assert_eq!((nested.len(), main.len()), (1, 2), "{nested:?} {main:?}");
        let width = |p: &Vec<(f64, f64)>| p[3].0 - p[0].0;
        assert!((width(&nested[0]) - 2.0 * width(&main[0])).abs() <= 1.0);
        assert_eq!(main[0][3].0, main[1][0].0, "the 32s follow each other");
        assert_eq!(
            (main[0][0].0, main[1][3].0),
            (nested[0][0].0, nested[0][3].0),
            "the two 32s span the 64"
        );
        // On rows of their own: the longer above (smaller y in pixels).
        assert!(nested[0][1].1 < main[0][1].1, "{nested:?} {main:?}");
        // Without a nested period, one bracket and no second row.
        let svg = series_svg(&series(), "threads", None, &[], &Labels::default()).unwrap();
        assert!(polylines_in(&svg, "#8C564B").is_empty());
        assert!(!texts_of(&svg).iter().any(|t| t.contains("nested")));
    }

    #[test]
    fn the_best_point_is_starred_and_named_in_its_unit() {
        let s = series();
        let best = s.curve.best.clone().expect("the saw has a best");
        let svg = series_svg(&s, "threads", None, &[], &Labels::default()).unwrap();
        let t = texts_of(&svg);
        // Its value in the series' own unit scaled for people (MFlops to GFLOP/s), not the
        // drawn axis's unit scaled again.
        let words = format!(
            "best: {} at {}",
            crate::units::format_value(best.value, "MFlops"),
            human(best.x)
        );
        assert!(words.contains("GFLOP/s"), "{words}");
        assert!(t.contains(&words), "{words} missing: {t:?}");
        // A star of ten corners in its colour on the plot, and the legend's swatch (each over a
        // larger dark one, its outline).
        let stars = svg
            .lines()
            .filter(|l| l.starts_with("<polygon") && l.contains("fill=\"#F0B400\""))
            .count();
        assert_eq!(stars, 2, "the plot's star and the legend's");
    }

    #[test]
    fn a_flat_curve_gets_no_star_and_a_tied_best_says_where_it_is_tied_from() {
        let stars = |svg: &str| {
            svg.lines()
                .filter(|l| l.starts_with("<polygon") && l.contains("fill=\"#F0B400\""))
                .count()
        };
        // Flat within 1 %: the best is the noise's pick, no star and no entry.
        let mut s = series();
        for (i, p) in s.data.iter_mut().enumerate() {
            p.1 = p.1.map(|_| 3000.0 + (i % 7) as f64);
        }
        s.curve = crate::analyze::analyze_curve(&s.data, crate::analyze::Sense::HigherIsBetter);
        assert!(!stands_out(&s), "{:?} {:?}", s.curve.best, s.curve.worst);
        let svg = series_svg(&s, "threads", None, &[], &Labels::default()).unwrap();
        assert_eq!(stars(&svg), 0);
        assert!(!texts_of(&svg).iter().any(|t| t.starts_with("best:")));
        // A best tied within 1 % by a smaller x says so in its entry, as the subtitle does.
        let mut s = series();
        let b = s.curve.best.as_mut().unwrap();
        assert_ne!(b.x, 33.0);
        b.x_within_1pct = 33.0;
        let x = human(b.x);
        let svg = series_svg(&s, "threads", None, &[], &Labels::default()).unwrap();
        let t = texts_of(&svg).join(" ");
        assert!(t.contains(&format!("at {x} (within 1 % from 33)")), "{t}");
        assert_eq!(stars(&svg), 2);
    }

    /// The texts of an SVG, each trimmed.
    fn texts_of(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                Some(
                    t.split_once('>')?
                        .1
                        .split("</text>")
                        .next()?
                        .trim()
                        .to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn the_legend_sits_right_of_the_plot() {
        let s = series();
        let chart = SeriesChart {
            s: &s,
            x_name: "threads",
            info: &[],
            labels: &Labels::default(),
        };
        let svg = canvas::svg_with(&chart, true, None, &canvas::Look::default()).unwrap();
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
