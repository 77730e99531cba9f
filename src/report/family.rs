//! Variants of one family on one chart: series of one group and unit whose metric names differ
//! only in their last `_` part (`global_vec1`, `global_vec2`, `global_vec4`), overlaid on shared
//! axes with a legend beside the plot; also `sweep compare`'s A-against-B charts.

use super::axes::{axes, distinct, log_axis, scale_unit};
use super::canvas::{self, Chart};
use super::legend::{Entry, Swatch};
use super::series::{DATA, KNEE, PEAK, PERIOD};
use super::ReportError;
use crate::analyze::Analysis;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// Curves of an overlay chart, in order (the first four are the series chart's colours).
pub(crate) const PALETTE: [RGBColor; 8] = [
    DATA,
    PEAK,
    KNEE,
    PERIOD,
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// Curves of at most this many points get a dot on each.
const DOTS_UP_TO: usize = 100;

/// Series overlaid on one chart, each with two points or more, whose medians lie within 10x of
/// each other (so that none is flattened at the bottom of the others' axis):
/// - metrics of one group and unit whose names share all but their last `_` part
///   (`shared_stride1`, `shared_stride2`, ... -> `shared`);
/// - else one metric over the values of one axis that tells series apart (`transpose` of the
///   variants naive, shared, padded and diagonal): the axis with the fewest values, 2 to 8.
pub(crate) struct Family {
    pub(crate) name: String,
    pub(crate) title: String,
    /// What y is (`transpose`, or the metrics' common prefix `global`).
    pub(crate) quantity: String,
    pub(crate) stem: String,
    /// Index of its first series in the analysis.
    pub(crate) first: usize,
    /// Indices of its series in the analysis.
    pub(crate) series: Vec<usize>,
    members: Vec<(String, Vec<(f64, f64)>)>,
}

impl Family {
    pub(crate) fn curves(&self) -> Vec<Curve<'_>> {
        self.members
            .iter()
            .map(|(label, points)| Curve { label, points })
            .collect()
    }
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

pub(crate) fn families(analysis: &Analysis) -> Vec<Family> {
    // (name prefix, group, unit) -> indices of its series, in analysis order.
    type Key = (String, Vec<(String, String)>, String);
    let mut keyed: Vec<(Key, Vec<usize>)> = Vec::new();
    let mut add = |key: Key, i: usize| match keyed.iter_mut().find(|(k, _)| *k == key) {
        Some((_, v)) => v.push(i),
        None => keyed.push((key, vec![i])),
    };
    // A single point is no curve, in a family or alone.
    let drawable: Vec<usize> = (0..analysis.series.len())
        .filter(|&i| super::series::drawable(&analysis.series[i]))
        .collect();
    for &i in &drawable {
        let s = &analysis.series[i];
        if let Some((prefix, _)) = s.metric.rsplit_once('_') {
            add((prefix.to_string(), s.group.clone(), s.unit.clone()), i);
        }
    }
    let mut out = Vec::new();
    for ((prefix, group, _), idx) in keyed {
        let groups: Vec<String> = group.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let name = if groups.is_empty() {
            prefix.clone()
        } else {
            format!("{prefix} [{}]", groups.join(", "))
        };
        let labels = idx.iter().map(|&i| analysis.series[i].metric.clone());
        let title = format!("{name} variants");
        let names = (name, title, prefix);
        out.extend(family(analysis, names, &idx, labels.collect()));
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
    for ((metric, rest, _), idx) in by_axis {
        let groups: Vec<String> = rest.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let name = if groups.is_empty() {
            format!("{metric} by {axis}")
        } else {
            format!("{metric} [{}] by {axis}", groups.join(", "))
        };
        let labels = idx.iter().map(|&i| {
            let v = analysis.series[i]
                .group
                .iter()
                .find(|(a, _)| a == axis)
                .map_or("", |(_, v)| v.as_str());
            format!("{axis}={v}")
        });
        let names = (name.clone(), name, metric);
        out.extend(family(analysis, names, &idx, labels.collect()));
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
        first: idx[0],
        series: idx.to_vec(),
        members: labels
            .into_iter()
            .zip(idx)
            .map(|(l, &i)| (l, points(i)))
            .collect(),
    })
}

/// One curve of an overlay chart: its label and its points (x, value).
pub struct Curve<'a> {
    pub label: &'a str,
    pub points: &'a [(f64, f64)],
}

/// Curves overlaid on shared axes.
pub(crate) struct Overlay<'a> {
    pub title: &'a str,
    pub x_name: &'a str,
    /// The unit of y (scaled for people when it is a rate), or the name of y.
    pub y_name: &'a str,
    /// What y is, named on the axis before its unit: `transpose (TB/s)`.
    pub quantity: Option<&'a str>,
    pub curves: &'a [Curve<'a>],
}

/// The overlay chart of a family of series of `analysis` (with the given footer).
pub(crate) fn family_svg(
    f: &Family,
    analysis: &Analysis,
    footer: Option<&str>,
) -> Result<String, String> {
    let curves = f.curves();
    canvas::svg(&family_chart(f, analysis, &curves), footer)
}

/// Writes `family-<stem>.svg` and `.png` into `charts`.
pub(crate) fn write_family(
    f: &Family,
    analysis: &Analysis,
    charts: &Path,
    footer: Option<&str>,
) -> Result<Vec<PathBuf>, ReportError> {
    let curves = f.curves();
    let stem = charts.join(format!("family-{}", f.stem));
    canvas::write(&family_chart(f, analysis, &curves), &stem, footer)
}

fn family_chart<'a>(f: &'a Family, analysis: &'a Analysis, curves: &'a [Curve<'a>]) -> Overlay<'a> {
    Overlay {
        title: &f.title,
        x_name: &analysis.x,
        y_name: &analysis.series[f.first].unit,
        quantity: Some(&f.quantity),
        curves,
    }
}

/// Writes `<stem>.svg` and `<stem>.png`: the curves overlaid on shared axes, with a legend
/// beside the plot (`sweep compare --out`: run A against run B).
pub fn overlay(
    stem: &Path,
    title: &str,
    x_name: &str,
    y_name: &str,
    curves: &[Curve],
    footer: Option<&str>,
) -> Result<Vec<PathBuf>, ReportError> {
    let chart = Overlay {
        title,
        x_name,
        y_name,
        quantity: None,
        curves,
    };
    canvas::write(&chart, stem, footer)
}

impl Overlay<'_> {
    /// The divisor of the values and the unit they are drawn in.
    fn unit(&self) -> (f64, String) {
        let max = self
            .curves
            .iter()
            .flat_map(|c| c.points.iter().map(|p| p.1.abs()))
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        scale_unit(self.y_name, max)
    }
}

impl Chart for Overlay<'_> {
    fn title(&self) -> String {
        self.title.to_string()
    }

    fn axis_names(&self) -> (String, String) {
        let unit = self.unit().1;
        let y = match self.quantity {
            Some(q) if unit.is_empty() => q.to_string(),
            Some(q) => format!("{q} ({unit})"),
            None => unit,
        };
        (self.x_name.to_string(), y)
    }

    fn y_unit(&self) -> Option<(f64, String)> {
        let (div, unit) = self.unit();
        Some((1.0 / div, unit))
    }

    fn draw<DB: DrawingBackend>(
        &self,
        plot: &DrawingArea<DB, Shift>,
        text: bool,
    ) -> Result<Vec<Entry>, String> {
        let e = |e: &dyn std::fmt::Display| e.to_string();
        let (div, _) = self.unit();
        let (_, y_name) = self.axis_names();
        let finite = |p: &&(f64, f64)| p.0.is_finite() && p.1.is_finite();
        // Sparse x over a wide range is drawn on log2(x), as in the series charts.
        let log2 = log_axis(&distinct(
            self.curves
                .iter()
                .flat_map(|c| c.points.iter().map(|p| p.0)),
        ));
        let curves: Vec<Vec<(f64, f64)>> = self
            .curves
            .iter()
            .map(|c| {
                let mut pts: Vec<(f64, f64)> = c
                    .points
                    .iter()
                    .filter(finite)
                    .map(|&(x, y)| (if log2 { x.log2() } else { x }, y / div))
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
            return Ok(Vec::new());
        };
        let pad = ((x_hi - x_lo) * 0.02).max(if log2 { 0.1 } else { 0.5 });
        let y_min = all().map(|p| p.1).fold(0.0, f64::min);
        let y_max = all().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
        let y_max = if y_max > y_min { y_max } else { y_min + 1.0 };
        let mut chart = axes(
            plot,
            (
                x_lo - pad..x_hi + pad,
                y_min..y_max + 0.06 * (y_max - y_min),
            ),
            (self.x_name, &y_name),
            text,
            None,
            log2,
            &distinct(all().map(|p| p.0)),
        )?;
        let mut legend = Vec::new();
        for (i, (c, pts)) in self.curves.iter().zip(curves).enumerate() {
            let colour = PALETTE[i % PALETTE.len()];
            // Dots show where the points of a sparse curve are; a dense one is its line.
            if pts.len() <= DOTS_UP_TO {
                chart
                    .draw_series(pts.iter().map(|&p| Circle::new(p, 2, colour.filled())))
                    .map_err(|x| e(&x))?;
            }
            chart
                .draw_series(LineSeries::new(pts, colour.stroke_width(2)))
                .map_err(|x| e(&x))?;
            legend.push(Entry::new(c.label, Swatch::Line, colour));
        }
        Ok(legend)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let labels: Vec<&str> = f[0].members.iter().map(|m| m.0.as_str()).collect();
        assert_eq!(
            labels,
            ["variant=naive", "variant=shared", "variant=padded"]
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
            },
            Curve {
                label: "copy_vec2",
                points: &b,
            },
        ];
        let chart = Overlay {
            title: "copy variants",
            x_name: "stride",
            y_name: "GB/s",
            quantity: None,
            curves: &curves,
        };
        let svg = canvas::svg(&chart, None).unwrap();
        for (label, colour) in [("copy_vec1", "#1F77B4"), ("copy_vec2", "#D62728")] {
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
