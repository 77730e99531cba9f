//! Variants of one family on one chart: series of one group and unit whose metric names differ
//! only in their last `_` part (`global_vec1`, `global_vec2`, `global_vec4`), overlaid on shared
//! axes with a legend beside the plot (and the top of `sweep compare`'s charts: [`super::compared`]).

use super::axes::{axes, distinct, log_axis};
use super::canvas::{self, Chart, Drawn, Look};
use super::legend::{Entry, Swatch, BAND_ALPHA};
use super::series::{
    axis_value, band, band_outline, group_in_words, group_words, top_edge, y_range, DATA,
    DOTS_UP_TO, DOT_R, LINE_W,
};
use super::{ChartError, ReportError};
use crate::analyze::Analysis;
use crate::spec::Labels;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// Curves of an overlay chart, in order: the series chart's blue, then colours that readers with
/// any common colour blindness tell apart (after Okabe and Ito). The first three also differ in
/// lightness (grey 100, 162 and 59 of 255: mid, light, dark), so that a chart printed in grey
/// still tells three curves apart; tableau's red and green, which it had before, are one colour
/// to a deuteranope, and Okabe-Ito's vermillion was the blue's grey.
pub(crate) const PALETTE: [RGBColor; 8] = [
    DATA,
    RGBColor(230, 159, 0),
    RGBColor(120, 40, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(120, 120, 120),
];

/// Series overlaid on one chart, each with two points or more:
/// - the metrics the spec puts in one `family`, per group, labelled as the spec says;
/// - among the others, whose medians lie within 10x of each other (so that none is flattened at
///   the bottom of the others' axis): metrics of one group and unit whose names share all but their last `_` part
///   (`shared_stride1`, `shared_stride2`, ... -> `shared`);
/// - else one metric over the values of one axis that tells series apart (`transpose` of the
///   variants naive, shared, padded and diagonal): the axis with the fewest values, 2 to 8.
pub(crate) struct Family {
    pub(crate) name: String,
    pub(crate) title: String,
    /// What y is (`transpose`, or the metrics' common prefix `global`).
    pub(crate) quantity: String,
    /// What tells its curves apart, in the spec's words, where the title does not say it: `block
    /// layout` (one curve per value of an axis), ``metric `shared_*` `` (a family by name).
    pub(crate) differ: Option<String>,
    pub(crate) stem: String,
    /// Index of its first series in the analysis.
    pub(crate) first: usize,
    /// Indices of its series in the analysis.
    pub(crate) series: Vec<usize>,
    members: Vec<(String, Vec<(f64, f64)>)>,
}

/// The axis to overlay: the one with the fewest values from 2 to 8 (as many as the palette has
/// colours), the last of equals; `None` when no axis has 2 to 8.
pub(crate) fn fewest_values(values_per_axis: &[usize]) -> Option<usize> {
    values_per_axis
        .iter()
        .enumerate()
        .filter(|(_, &n)| (2..=PALETTE.len()).contains(&n))
        .min_by_key(|&(i, &n)| (n, std::cmp::Reverse(i)))
        .map(|(i, _)| i)
}

/// The labels of the spec of the run whose CSV `analysis` read (none for a CSV from elsewhere).
pub(crate) fn labels_of(analysis: &Analysis) -> Labels {
    analysis
        .source
        .parent()
        .map(crate::store::labels_of_run)
        .unwrap_or_default()
}

/// The families of metrics `chosen` (names or columns), one per group: `sweep plot --metrics`.
/// A name that matches no series is an error that names it.
pub(crate) fn chosen(analysis: &Analysis, chosen: &[String]) -> Result<Vec<Family>, ReportError> {
    let labels = labels_of(analysis);
    for c in chosen {
        if !analysis
            .series
            .iter()
            .any(|s| &s.metric == c || &s.column == c)
        {
            // Each metric once, in the order of the series (a metric split by grouping axes
            // has a series per group, not always side by side).
            let mut known: Vec<String> = Vec::new();
            for s in &analysis.series {
                if !known.contains(&s.metric) {
                    known.push(s.metric.clone());
                }
            }
            return Err(ReportError::NoMetric {
                name: c.clone(),
                known,
            });
        }
    }
    // Named as the spec's family when they all belong to one, else by their labels.
    let metric = |c: &String| {
        analysis
            .series
            .iter()
            .find(|s| &s.metric == c || &s.column == c)
            .map_or(c.clone(), |s| s.metric.clone())
    };
    // A metric named twice (`copy,copy_gb_per_s`, or one name twice) is one curve, as given
    // first: it was drawn twice over itself, "copy (under copy)" and "copy".
    let mut seen: Vec<String> = Vec::new();
    let chosen: Vec<String> = chosen
        .iter()
        .filter(|c| {
            let m = metric(c);
            let new = !seen.contains(&m);
            seen.push(m);
            new
        })
        .cloned()
        .collect();
    let chosen = chosen.as_slice();
    let families: Vec<Option<&str>> = chosen.iter().map(|c| labels.family(&metric(c))).collect();
    let title = match families.first() {
        Some(Some(f)) if families.iter().all(|g| g == &Some(*f)) => f.to_string(),
        _ => chosen
            .iter()
            .map(|c| labels.metric(&metric(c)).map_or(c.clone(), str::to_string))
            .collect::<Vec<_>>()
            .join(", "),
    };
    // Its own file name, from the metrics chosen: never the file of a spec family it overlaps
    // (a chart of two of a family's three curves would overwrite the family's chart).
    let mut out = grouped(analysis, &labels, &title, chosen);
    for f in &mut out {
        let group = group_words(&analysis.series[f.first].group);
        f.stem = crate::analyze::sanitize(&format!("overlay-{}{group}", chosen.join("-")));
    }
    Ok(out)
}

/// One family per group of the series whose metric (or column) is in `metrics`, in that order.
fn grouped(analysis: &Analysis, labels: &Labels, title: &str, metrics: &[String]) -> Vec<Family> {
    type Group = Vec<(String, String)>;
    let mut groups: Vec<(Group, Vec<usize>)> = Vec::new();
    for m in metrics {
        for (i, s) in analysis.series.iter().enumerate() {
            if (&s.metric != m && &s.column != m) || !super::series::drawable(s) {
                continue;
            }
            match groups.iter_mut().find(|(g, _)| *g == s.group) {
                Some((_, v)) => v.push(i),
                None => groups.push((s.group.clone(), vec![i])),
            }
        }
    }
    groups
        .into_iter()
        .filter(|(_, idx)| idx.len() >= 2)
        .map(|(group, idx)| {
            let name = format!("{title}{}", group_words(&group));
            let unit = &analysis.series[idx[0]].unit;
            Family {
                stem: crate::analyze::sanitize(&name),
                title: format!("{title}{}", group_in_words(labels, &group)),
                name,
                quantity: crate::units::quantity(unit).unwrap_or(title).to_string(),
                differ: None,
                first: idx[0],
                members: idx
                    .iter()
                    .map(|&i| {
                        let s = &analysis.series[i];
                        let label = labels.metric(&s.metric).unwrap_or(&s.metric);
                        (label.to_string(), points(analysis, i))
                    })
                    .collect(),
                series: idx,
            }
        })
        .collect()
}

/// The measured points of series `i`.
fn points(analysis: &Analysis, i: usize) -> Vec<(f64, f64)> {
    analysis.series[i]
        .data
        .iter()
        .filter_map(|&(x, y)| y.map(|y| (x, y)))
        .collect()
}

pub(crate) fn families(analysis: &Analysis) -> Vec<Family> {
    let words = labels_of(analysis);
    let mut out = Vec::new();
    for (family, metrics) in words.families() {
        out.extend(grouped(analysis, &words, &family, &metrics));
    }
    let in_spec: Vec<usize> = out.iter().flat_map(|f| f.series.clone()).collect();
    // (name prefix, group, unit) -> indices of its series, in analysis order.
    type Key = (String, Vec<(String, String)>, String);
    let mut keyed: Vec<(Key, Vec<usize>)> = Vec::new();
    let mut add = |key: Key, i: usize| match keyed.iter_mut().find(|(k, _)| *k == key) {
        Some((_, v)) => v.push(i),
        None => keyed.push((key, vec![i])),
    };
    // A single point is no curve, in a family or alone.
    let drawable: Vec<usize> = (0..analysis.series.len())
        .filter(|&i| super::series::drawable(&analysis.series[i]) && !in_spec.contains(&i))
        .collect();
    for &i in &drawable {
        let s = &analysis.series[i];
        if let Some((prefix, _)) = s.metric.rsplit_once('_') {
            add((prefix.to_string(), s.group.clone(), s.unit.clone()), i);
        }
    }
    for ((prefix, group, unit), idx) in keyed {
        let groups: Vec<String> = group.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let name = if groups.is_empty() {
            prefix.clone()
        } else {
            format!("{prefix} [{}]", groups.join(", "))
        };
        // Each curve in the spec's words where it has them, as on its own chart.
        let labels = idx.iter().map(|&i| {
            let m = &analysis.series[i].metric;
            words.metric(m).unwrap_or(m).to_string()
        });
        let title = format!("{prefix}{} variants", group_in_words(&words, &group));
        let differ = format!("metric {prefix}_*");
        // y is what the unit says (`throughput`), else the variants' common name.
        let quantity = crate::units::quantity(&unit).map_or(prefix, str::to_string);
        let names = (name, title, quantity);
        out.extend(
            family(analysis, names, &idx, labels.collect()).map(|f| Family {
                differ: Some(differ),
                ..f
            }),
        );
    }
    // One metric over the values of an axis, among the series in no family yet.
    let taken: Vec<usize> = out.iter().flat_map(|f| f.series.clone()).collect();
    let free: Vec<usize> = drawable
        .into_iter()
        .filter(|i| !taken.contains(i))
        .collect();
    let mut axes: Vec<(&str, Vec<&str>)> = Vec::new();
    for &i in &free {
        for (a, v) in &analysis.series[i].group {
            match axes.iter_mut().find(|(k, _)| k == a) {
                Some((_, vs)) if !vs.contains(&v.as_str()) => vs.push(v),
                Some(_) => {}
                None => axes.push((a, vec![v])),
            }
        }
    }
    let counts: Vec<usize> = axes.iter().map(|(_, v)| v.len()).collect();
    let Some(axis) = fewest_values(&counts).map(|k| axes[k].0) else {
        return out;
    };
    // (metric, other axes' values, unit) -> indices.
    let mut by_axis: Vec<(Key, Vec<usize>)> = Vec::new();
    for &i in &free {
        let s = &analysis.series[i];
        let rest: Vec<(String, String)> =
            s.group.iter().filter(|(a, _)| a != axis).cloned().collect();
        let key = (s.metric.clone(), rest, s.unit.clone());
        match by_axis.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(i),
            None => by_axis.push((key, vec![i])),
        }
    }
    for ((metric, rest, unit), idx) in by_axis {
        let groups: Vec<String> = rest.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let name = if groups.is_empty() {
            format!("{metric} by {axis}")
        } else {
            format!("{metric} [{}] by {axis}", groups.join(", "))
        };
        // The title in the spec's words where it has them, as the series' own chart is titled
        // (`Global-memory stores, full grid: every thread by block layout`); the name (and so
        // the file) stays the columns'.
        let shown = match (words.family(&metric), words.metric(&metric)) {
            (Some(f), Some(l)) => format!("{f}: {l}"),
            (_, l) => l.unwrap_or(&metric).to_string(),
        };
        let axis_words = words.axis(axis);
        let title = format!("{shown}{} by {axis_words}", group_in_words(&words, &rest));
        let quantity = crate::units::quantity(&unit).map_or(metric.clone(), str::to_string);
        let labels = idx.iter().map(|&i| {
            let v = analysis.series[i]
                .group
                .iter()
                .find(|(a, _)| a == axis)
                .map_or("", |(_, v)| v.as_str());
            // `block layout: dense`: the axis in the spec's words and the value.
            axis_value(&words, axis, v)
        });
        let names = (name, title, quantity);
        out.extend(
            family(analysis, names, &idx, labels.collect()).map(|f| Family {
                differ: Some(axis_words.clone()),
                ..f
            }),
        );
    }
    out
}

/// The family of series `idx` labelled `labels`, unless there are fewer than two or their
/// medians lie more than 10x apart.
fn family(
    analysis: &Analysis,
    (name, title, quantity): (String, String, String),
    idx: &[usize],
    labels: Vec<String>,
) -> Option<Family> {
    if idx.len() < 2 {
        return None;
    }
    let points = |i: usize| -> Vec<(f64, f64)> {
        analysis.series[i]
            .data
            .iter()
            .filter_map(|&(x, y)| y.map(|y| (x, y)))
            .collect()
    };
    let medians: Vec<f64> = idx
        .iter()
        .filter_map(|&i| {
            let ys: Vec<f64> = points(i).iter().map(|p| p.1.abs()).collect();
            crate::analyze::fit::median(&ys)
        })
        .collect();
    let (lo, hi) = (
        medians.iter().copied().fold(f64::INFINITY, f64::min),
        medians.iter().copied().fold(0.0, f64::max),
    );
    if medians.len() != idx.len() || lo <= 0.0 || hi / lo > 10.0 {
        return None;
    }
    Some(Family {
        stem: crate::analyze::sanitize(&name),
        name,
        title,
        quantity,
        differ: None,
        first: idx[0],
        series: idx.to_vec(),
        members: labels
            .into_iter()
            .zip(idx)
            .map(|(l, &i)| (l, points(i)))
            .collect(),
    })
}

/// Whether curve `over` hides curve `under` where it is drawn over it: both measured at two x or
/// more in common, and at nine in ten of those within half a percent of the larger curve's
/// highest value of each other (a pixel or two on a chart).
pub(crate) fn covers(over: &[(f64, f64)], under: &[(f64, f64)]) -> bool {
    let at: std::collections::HashMap<u64, f64> =
        over.iter().map(|&(x, y)| (x.to_bits(), y)).collect();
    let pairs: Vec<(f64, f64)> = under
        .iter()
        .filter_map(|&(x, y)| at.get(&x.to_bits()).map(|&o| (y, o)))
        .collect();
    let top = pairs
        .iter()
        .map(|(a, b)| a.abs().max(b.abs()))
        .fold(0.0, f64::max);
    let close = pairs
        .iter()
        .filter(|(a, b)| (a - b).abs() <= 0.005 * top)
        .count();
    pairs.len() >= 2 && close * 10 >= pairs.len() * 9
}

/// What a curve's band is, in the words of the series chart's legend.
pub(crate) const BANDS: &str = "uncertainty (95 % CI, placements)";

/// One curve of an overlay chart: its label, its points (x, value) and the relative uncertainty
/// of each (x, u), drawn as a band (none when empty).
pub struct Curve<'a> {
    pub label: &'a str,
    pub points: &'a [(f64, f64)],
    pub u: &'a [(f64, f64)],
}

/// Curves overlaid on shared axes.
pub(crate) struct Overlay<'a> {
    pub title: String,
    pub subtitle: Option<String>,
    /// The x axis in words.
    pub x_name: String,
    /// The unit of y (scaled for people when it is a rate), or the name of y.
    pub y_name: &'a str,
    /// What y is, named on the axis before its unit: `throughput (TFLOP/s)`.
    pub quantity: Option<&'a str>,
    pub curves: &'a [Curve<'a>],
    /// Whether a curve hidden under a later one says so in the legend: variants that coincide
    /// are worth a word; runs A and B that coincide are what the B/A panel says.
    pub name_covered: bool,
}

/// Each member's (x, relative uncertainty), from the CSV.
fn uncertainties(f: &Family, analysis: &Analysis) -> Vec<Vec<(f64, f64)>> {
    let infos = super::point_info(analysis);
    f.series
        .iter()
        .map(|&i| {
            infos
                .get(i)
                .map(|v| v.iter().map(|p| (p.x, p.u)).collect())
                .unwrap_or_default()
        })
        .collect()
}

impl Family {
    fn curves_with<'a>(&'a self, us: &'a [Vec<(f64, f64)>]) -> Vec<Curve<'a>> {
        self.members
            .iter()
            .zip(us)
            .map(|((label, points), u)| Curve { label, points, u })
            .collect()
    }
}

/// The overlay chart of a family of series of `analysis` (with the given footer).
pub(crate) fn family_svg(
    f: &Family,
    analysis: &Analysis,
    footer: Option<&str>,
) -> Result<String, ChartError> {
    let us = uncertainties(f, analysis);
    let curves = f.curves_with(&us);
    let labels = labels_of(analysis);
    canvas::svg(&family_chart(f, analysis, &labels, &curves), footer)
}

/// Writes `family-<stem>` in `look`'s formats into `charts`.
pub(crate) fn write_family(
    f: &Family,
    analysis: &Analysis,
    charts: &Path,
    footer: Option<&str>,
    look: &Look,
) -> Result<Vec<PathBuf>, ReportError> {
    let us = uncertainties(f, analysis);
    let curves = f.curves_with(&us);
    let labels = labels_of(analysis);
    let stem = charts.join(format!("family-{}", f.stem));
    canvas::write_as(
        &family_chart(f, analysis, &labels, &curves),
        &stem,
        footer,
        look,
    )
}

fn family_chart<'a>(
    f: &'a Family,
    analysis: &'a Analysis,
    labels: &Labels,
    curves: &'a [Curve<'a>],
) -> Overlay<'a> {
    let x = labels.axis(&analysis.x);
    let mut said: Vec<String> = f
        .differ
        .iter()
        .map(|d| format!("one curve per {d}"))
        .collect();
    if curves.iter().any(|c| c.u.iter().any(|p| p.1 > 0.0)) {
        said.push(format!("bands: {BANDS}"));
    }
    Overlay {
        title: format!("{} — {x}", f.title),
        subtitle: (!said.is_empty()).then(|| said.join(" · ")),
        x_name: x,
        y_name: &analysis.series[f.first].unit,
        quantity: Some(&f.quantity),
        curves,
        name_covered: true,
    }
}

impl Overlay<'_> {
    /// x from .. to as the plot spans it (on log2 x when `log2`): the curves' x with a margin;
    /// none without a finite point.
    pub(crate) fn x_span(&self, log2: bool) -> Option<(f64, f64)> {
        let xs = distinct(
            self.curves
                .iter()
                .flat_map(|c| c.points.iter().filter(|p| p.1.is_finite()).map(|p| p.0)),
        );
        let x_of = |x: f64| if log2 { x.log2() } else { x };
        let (lo, hi) = (x_of(*xs.first()?), x_of(*xs.last()?));
        let pad = super::axes::x_pad(lo, hi, log2, &xs);
        Some((lo - pad, hi + pad))
    }

    /// The divisor of the values and the unit they are drawn in.
    fn unit(&self) -> (f64, String) {
        let values = self
            .curves
            .iter()
            .flat_map(|c| c.points.iter().map(|p| p.1));
        crate::units::scale_for(self.y_name, values.filter(|v| v.is_finite()))
    }
}

impl Chart for Overlay<'_> {
    fn title(&self) -> String {
        self.title.clone()
    }

    fn subtitle(&self) -> Option<String> {
        self.subtitle.clone()
    }

    fn axis_names(&self) -> (String, String) {
        let unit = self.unit().1;
        let y = match self.quantity {
            Some(q) if unit.is_empty() => q.to_string(),
            Some(q) => format!("{q} ({unit})"),
            None => unit,
        };
        (self.x_name.clone(), y)
    }

    fn draw<DB: DrawingBackend<ErrorType: 'static>>(
        &self,
        plot: &DrawingArea<DB, Shift>,
        text: bool,
        (x_name, y_name): (&str, &str),
    ) -> Result<Drawn, ChartError> {
        let (div, unit) = self.unit();
        let finite = |p: &&(f64, f64)| p.0.is_finite() && p.1.is_finite();
        // Sparse x over a wide range is drawn on log2(x), as in the series charts.
        let log2 = log_axis(&distinct(
            self.curves
                .iter()
                .flat_map(|c| c.points.iter().map(|p| p.0)),
        ));
        let x_of = |x: f64| if log2 { x.log2() } else { x };
        let curves: Vec<Vec<(f64, f64)>> = self
            .curves
            .iter()
            .map(|c| {
                let mut pts: Vec<(f64, f64)> = c
                    .points
                    .iter()
                    .filter(finite)
                    .map(|&(x, y)| (x_of(x), y / div))
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                pts
            })
            .collect();
        let all = || curves.iter().flatten();
        let (Some(x_lo), Some(x_hi)) = (
            all().map(|p| p.0).reduce(f64::min),
            all().map(|p| p.0).reduce(f64::max),
        ) else {
            return Ok(Drawn {
                entries: Vec::new(),
                frame: None,
            });
        };
        let y_min = all().map(|p| p.1).fold(0.0, f64::min);
        let y_max = all().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
        let y_max = if y_max > y_min { y_max } else { y_min + 1.0 };
        // Each curve's band of value x (1 +- u): the y range holds the bands too.
        let u_ats: Vec<std::collections::HashMap<u64, f64>> = self
            .curves
            .iter()
            .map(|c| c.u.iter().map(|&(x, u)| (x_of(x).to_bits(), u)).collect())
            .collect();
        let band_hi = curves
            .iter()
            .zip(&u_ats)
            .flat_map(|(pts, u_at)| band(pts, u_at, (f64::MIN, f64::MAX)))
            .map(|b| b.2)
            .fold(f64::NEG_INFINITY, f64::max);
        let range = y_range(y_min, y_max, band_hi, 0.06);
        let (y0, y1) = (range.y0, range.y1);
        let (x0, x1) = self.x_span(log2).unwrap_or((x_lo, x_hi));
        let (mut chart, mut frame) = axes(
            plot,
            (x0..x1, y0..y1),
            (x_name, y_name),
            text,
            None,
            log2,
            &distinct(all().map(|p| p.0)),
        )?;
        frame.y_scale = 1.0 / div;
        frame.y_unit = unit;
        let colour = |i: usize| PALETTE[i % PALETTE.len()];
        // The bands first, all of them behind every line.
        let mut banded = vec![false; curves.len()];
        if range.clipped {
            top_edge(&mut chart, (x0, x1), y1)?;
        }
        for (i, (pts, u_at)) in curves.iter().zip(&u_ats).enumerate() {
            let band = band(pts, u_at, (y0, y1));
            if band.len() >= 2 && band.iter().any(|b| b.2 > b.1) {
                chart.draw_series(std::iter::once(Polygon::new(
                    band_outline(&band),
                    colour(i).mix(BAND_ALPHA).filled(),
                )))?;
                banded[i] = true;
            }
        }
        let mut legend = Vec::new();
        // A curve that a later one covers (drawn over it, the same within half a percent) says
        // so, or its colour would seem missing from the chart.
        let under: Vec<Option<usize>> = (0..curves.len())
            .map(|i| {
                (i + 1..curves.len())
                    .rev()
                    .find(|&j| self.name_covered && covers(&curves[j], &curves[i]))
            })
            .collect();
        for (i, (c, pts)) in self.curves.iter().zip(curves).enumerate() {
            // Dots show where the points of a sparse curve are; a dense one is its line.
            if pts.len() <= DOTS_UP_TO {
                chart.draw_series(
                    pts.iter()
                        .map(|&p| Circle::new(p, DOT_R, colour(i).filled())),
                )?;
            }
            chart.draw_series(LineSeries::new(pts, colour(i).stroke_width(LINE_W)))?;
            // Its band in the swatch, in the band's own tint: the subtitle says what it is.
            let swatch = if banded[i] {
                Swatch::LineOnBand
            } else {
                Swatch::Line
            };
            let label = match under[i] {
                Some(j) => format!("{} (under {})", c.label, self.curves[j].label),
                None => c.label.to_string(),
            };
            legend.push(Entry::new(label, swatch, colour(i)));
        }
        Ok(Drawn {
            entries: legend,
            frame: Some(frame),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_overlay_colours_differ_in_grey_and_to_colour_blind_eyes() {
        let grey =
            |c: RGBColor| 0.299 * f64::from(c.0) + 0.587 * f64::from(c.1) + 0.114 * f64::from(c.2);
        // Three curves print apart in grey: each pair at least 40 of 255 apart.
        for (i, a) in PALETTE[..3].iter().enumerate() {
            for b in &PALETTE[i + 1..3] {
                assert!((grey(*a) - grey(*b)).abs() >= 40.0, "{a:?} {b:?} in grey");
            }
        }
        // Four curves stay apart to a deuteranope and a protanope (Machado et al. 2009, full
        // severity, on the sRGB values): at least 60 apart in the simulated RGB. Tableau's red
        // and green, the second and third colours before, were 54 apart to a deuteranope.
        let deutan = [
            [0.367, 0.861, -0.228],
            [0.280, 0.673, 0.047],
            [-0.012, 0.043, 0.969],
        ];
        let protan = [
            [0.152, 1.053, -0.205],
            [0.115, 0.786, 0.099],
            [-0.004, -0.048, 1.052],
        ];
        for (m, who) in [(deutan, "deutan"), (protan, "protan")] {
            let seen = |c: RGBColor| {
                let v = [f64::from(c.0), f64::from(c.1), f64::from(c.2)];
                m.map(|row| (row[0] * v[0] + row[1] * v[1] + row[2] * v[2]).clamp(0.0, 255.0))
            };
            let apart = |a: RGBColor, b: RGBColor| {
                let (p, q) = (seen(a), seen(b));
                (0..3).map(|k| (p[k] - q[k]).powi(2)).sum::<f64>().sqrt()
            };
            for (i, a) in PALETTE[..4].iter().enumerate() {
                for b in &PALETTE[i + 1..4] {
                    assert!(
                        apart(*a, *b) >= 60.0,
                        "{who} {a:?} {b:?}: {}",
                        apart(*a, *b)
                    );
                }
            }
            if who == "deutan" {
                let (red, green) = (RGBColor(214, 39, 40), RGBColor(44, 160, 44));
                assert!(
                    apart(red, green) < 60.0,
                    "the check would miss red and green"
                );
            }
        }
    }
    use crate::analyze::SeriesAnalysis;

    /// `metric` of group a, scaled by `k`.
    fn variant(metric: &str, k: f64) -> SeriesAnalysis {
        let mut s = crate::report::series::tests::series();
        s.metric = metric.into();
        s.file_stem = metric.into();
        for p in &mut s.data {
            p.1 = p.1.map(|y| y * k);
        }
        s
    }

    #[test]
    fn variants_of_one_family_share_a_chart_unless_their_scales_differ_tenfold() {
        let mut lone = variant("shared_stride8", 1.0);
        lone.data.truncate(1);
        let analysis = Analysis {
            x: "threads".into(),
            series: vec![
                variant("shared_stride1", 1.0),
                variant("shared_stride2", 0.5),
                variant("shared_stride4", 0.25),
                lone,
                variant("global_1blk", 1.0),
                variant("global_grid", 200.0),
                variant("alone", 1.0),
            ],
            ..Default::default()
        };
        let f = families(&analysis);
        assert_eq!(f.len(), 1, "global_1blk and global_grid are 200x apart");
        assert_eq!(f[0].name, "shared [variant=a]");
        assert_eq!(f[0].stem, "shared--variant-a-");
        let names: Vec<&str> = f[0].members.iter().map(|m| m.0.as_str()).collect();
        assert_eq!(
            names,
            ["shared_stride1", "shared_stride2", "shared_stride4"],
            "a single point is no curve, in a family or not"
        );
        assert_eq!(f[0].members[0].1.len(), 255, "the failed point is left out");
    }

    #[test]
    fn a_curve_hidden_under_another_is_said_to_be() {
        let a: Vec<(f64, f64)> = (1..=20).map(|x| (f64::from(x), f64::from(x))).collect();
        let same: Vec<(f64, f64)> = a.iter().map(|&(x, y)| (x, y * 1.002)).collect();
        let apart: Vec<(f64, f64)> = a.iter().map(|&(x, y)| (x, y * 1.1)).collect();
        assert!(covers(&same, &a));
        assert!(!covers(&apart, &a));
        assert!(!covers(&same[..1], &a[..1]), "one point in common");
        let curves = [
            Curve {
                label: "every thread",
                points: &a,
                u: &[],
            },
            Curve {
                label: "every even thread",
                points: &same,
                u: &[],
            },
            Curve {
                label: "first half",
                points: &apart,
                u: &[],
            },
        ];
        let chart = Overlay {
            title: "t".into(),
            subtitle: None,
            x_name: "threads".into(),
            y_name: "GB/s",
            quantity: None,
            curves: &curves,
            name_covered: true,
        };
        let svg = canvas::svg(&chart, None).unwrap();
        assert!(
            svg.contains("every thread (under every even")
                || svg.contains("every thread (under every even thread)"),
            "the covered curve is named"
        );
        assert!(!svg.contains("first half (under"), "{svg}");
        assert!(!svg.contains("every even thread (under"), "{svg}");
    }

    #[test]
    fn one_metric_over_the_values_of_an_axis_is_a_family() {
        let of = |v: &str, metric: &str, k: f64| {
            let mut s = variant(metric, k);
            s.group = vec![("n".into(), "1024".into()), ("variant".into(), v.into())];
            s
        };
        let analysis = Analysis {
            x: "threads".into(),
            series: vec![
                of("naive", "transpose", 1.0),
                of("naive", "memcpy_d2d", 3.0),
                of("shared", "transpose", 2.0),
                of("shared", "memcpy_d2d", 3.0),
                of("padded", "transpose", 2.5),
                of("padded", "memcpy_d2d", 3.0),
            ],
            ..Default::default()
        };
        let f = families(&analysis);
        let names: Vec<&str> = f.iter().map(|f| f.name.as_str()).collect();
        // n has one value: the variants are the overlaid axis.
        assert_eq!(
            names,
            [
                "transpose [n=1024] by variant",
                "memcpy_d2d [n=1024] by variant"
            ]
        );
        assert_eq!(f[0].series, [0, 2, 4]);
        // The chart says what tells its curves apart; a family by name says its metrics.
        let chart = family_chart(&f[0], &analysis, &Labels::default(), &[]);
        assert_eq!(chart.subtitle.as_deref(), Some("one curve per variant"));
        let by_name = families(&Analysis {
            x: "threads".into(),
            series: vec![
                variant("shared_stride1", 1.0),
                variant("shared_stride2", 0.5),
            ],
            ..Default::default()
        });
        let u = [(1.0, 0.01)];
        let curves = [Curve {
            label: "shared_stride1",
            points: &[],
            u: &u,
        }];
        let chart = family_chart(&by_name[0], &analysis, &Labels::default(), &curves);
        assert_eq!(
            chart.subtitle.as_deref(),
            Some("one curve per metric shared_* · bands: uncertainty (95 % CI, placements)")
        );
        let labels: Vec<&str> = f[0].members.iter().map(|m| m.0.as_str()).collect();
        assert_eq!(
            labels,
            ["variant: naive", "variant: shared", "variant: padded"]
        );
        assert_eq!(fewest_values(&[4, 2, 1]), Some(1));
        assert_eq!(fewest_values(&[12, 1]), None);
    }

    #[test]
    fn an_overlay_has_its_legend_beside_the_plot_and_log2_x_on_strides() {
        let strides: Vec<f64> = (1..=32)
            .chain([64, 128, 256, 512, 1024])
            .map(f64::from)
            .collect();
        let a: Vec<(f64, f64)> = strides.iter().map(|&x| (x, 3000.0 / x)).collect();
        let b: Vec<(f64, f64)> = strides.iter().map(|&x| (x, 2000.0 / x)).collect();
        let curves = [
            Curve {
                label: "copy_vec1",
                points: &a,
                u: &[],
            },
            Curve {
                label: "copy_vec2",
                points: &b,
                u: &[],
            },
        ];
        let chart = Overlay {
            title: "copy variants".into(),
            subtitle: None,
            x_name: "stride".into(),
            y_name: "GB/s",
            quantity: None,
            curves: &curves,
            name_covered: true,
        };
        let svg = canvas::svg(&chart, None).unwrap();
        for (label, colour) in [("copy_vec1", "#1F77B4"), ("copy_vec2", "#E69F00")] {
            let x = crate::report::series::tests::text_x(&svg, label).unwrap();
            assert!(x > canvas::PLOT_W as f64, "{label} at {x}");
            assert!(svg.contains(colour), "curve colour {colour} missing");
        }
        // Ticks on powers of two, in TB/s.
        for tick in ["1", "4", "16", "1024", "TB/s"] {
            let x = crate::report::series::tests::text_x(&svg, tick);
            assert!(x.is_some(), "{tick} missing");
        }
    }
}
