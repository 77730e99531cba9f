//! Bar charts for a sweep of categories only (no numeric axis to put on x: cache modes, access
//! patterns): one horizontal bar per point, its uncertainty as a whisker, grouped by the other
//! axes and coloured by the axis with the fewest values (`caching`: ca or cg) when there are two
//! axes or more.

use super::axes::compact;
use super::canvas::{self, Chart, Drawn};
use super::family::{fewest_values, PALETTE};
use super::legend::{Entry, Swatch};
use super::series::{DATA, GAP, NOISY, UNSTABLE};
use super::{ChartError, ReportError};
use crate::analyze::load::{self, stat_column};
use crate::events::marks::{count, Mark};
use crate::spec::Labels;
use crate::store::schema::STATUS_COLUMN;
use crate::store::{metric_status, metric_status_column, MetricCells, Run};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// The most categories drawn as bars: past that their labels cannot be read (20,000 made one
/// black block), and the chart draws the values sorted, as a line, with the highest and the
/// lowest named ([`Bars::sorted`]).
pub(crate) const MAX_BARS: usize = 60;

/// One point of a bar chart.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Bar {
    /// Index into [`Bars::categories`] and [`Bars::keys`] (0 without a colour axis).
    category: usize,
    key: usize,
    /// `None`: the point failed.
    value: Option<f64>,
    /// Relative half-width of its uncertainty.
    u: f64,
    /// The status of the chart's own metric there (`ok`, `noisy`, `unstable`:
    /// [`crate::store::metric_status`]), or the row's status where the point failed.
    status: String,
    /// Why its own metric marks it, in the terminal's words; `None` for an ok or failed point.
    mark: Option<Mark>,
}

/// The bar chart of one metric.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Bars {
    pub name: String,
    pub unit: String,
    pub stem: String,
    /// The axes that make a category, and the axis whose values are colours.
    category_axes: Vec<String>,
    key_axis: Option<String>,
    categories: Vec<String>,
    keys: Vec<String>,
    bars: Vec<Bar>,
    /// The spec's words for axes and metrics (none for a CSV from elsewhere).
    labels: Labels,
}

/// The axis shown as colours: with two axes or more, the one with the fewest values (2 to 8;
/// the last of equals), so that the others make the categories a reader compares along.
pub(crate) fn colour_axis(values_per_axis: &[usize]) -> Option<usize> {
    if values_per_axis.len() < 2 {
        return None;
    }
    fewest_values(values_per_axis)
}

/// A bar chart per metric of the CSV at `csv` with two bars or more.
pub(crate) fn bar_charts(t: &Run) -> Vec<Bars> {
    let labels = t
        .manifest
        .as_ref()
        .map(|m| Labels::from_text(&m.spec))
        .unwrap_or_default();
    let axes: Vec<(String, usize)> = t
        .axes
        .iter()
        .filter_map(|a| t.column(a).map(|c| (a.clone(), c)))
        .collect();
    // In the order first met, each once (a set beside the list: 20,000 categories made a scan
    // per row quadratic, 94 s of `sweep plot` in a debug build).
    let values = |c: usize| -> Vec<String> {
        let mut seen: HashSet<&str> = HashSet::new();
        let mut v: Vec<String> = Vec::new();
        for r in &t.rows {
            let x = t.cell(r, c);
            if seen.insert(x) {
                v.push(x.to_string());
            }
        }
        v
    };
    let counts: Vec<usize> = axes.iter().map(|(_, c)| values(*c).len()).collect();
    let key = colour_axis(&counts);
    let keys = key.map_or(vec![String::new()], |k| values(axes[k].1));
    let category_axes: Vec<&(String, usize)> = axes
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != key)
        .map(|(_, a)| a)
        .collect();
    let key_of: HashMap<&str, usize> = keys
        .iter()
        .enumerate()
        .map(|(i, v)| (v.as_str(), i))
        .collect();
    let status = t.column(STATUS_COLUMN);
    let target = t.target_rel_ci();
    let mut out = Vec::new();
    for m in &t.metrics {
        let Some(mc) = t.column(&m.column) else {
            continue;
        };
        let (ci, spread) = (
            stat_column(&t.header, m, "rel_ci"),
            stat_column(&t.header, m, "spread"),
        );
        let own = t.column(&metric_status_column(&m.name));
        let repeat = stat_column(&t.header, m, "repeat_spread");
        let num = |c: Option<usize>, r: &crate::store::run::Row| {
            c.and_then(|c| t.number(t.cell(r, c)))
                .filter(|v| v.is_finite())
        };
        let mut categories: Vec<String> = Vec::new();
        let mut category_of: HashMap<String, usize> = HashMap::new();
        let mut bars = Vec::new();
        for r in &t.rows {
            let label = category_axes
                .iter()
                .map(|(_, c)| t.cell(r, *c))
                .collect::<Vec<_>>()
                .join(" · ");
            let category = *category_of.entry(label).or_insert_with_key(|label| {
                categories.push(label.clone());
                categories.len() - 1
            });
            let row_status = status.map_or("ok", |c| t.cell(r, c));
            // The metric's own status, not the row's: another metric's spread marks no bar here.
            let own_status = metric_status(
                MetricCells {
                    row_status,
                    own: own.map(|c| t.cell(r, c)),
                    spread: num(spread, r),
                    rel_ci: num(ci, r),
                },
                target,
            );
            let st = own_status.map_or(row_status, |s| s.as_str()).to_string();
            let mark = own_status.and_then(|o| Mark::of(o, num(spread, r), num(repeat, r), target));
            let value = num(Some(mc), r).filter(|v| v.is_finite() && load::carries_values(&st));
            bars.push(Bar {
                category,
                key: key.map_or(0, |k| {
                    key_of.get(t.cell(r, axes[k].1)).copied().unwrap_or(0)
                }),
                value,
                u: num(ci, r)
                    .unwrap_or(0.0)
                    .max(num(spread, r).unwrap_or(0.0) / 2.0),
                status: st,
                mark,
            });
        }
        if bars.iter().filter(|b| b.value.is_some()).count() < 2 {
            continue;
        }
        out.push(Bars {
            name: m.name.clone(),
            unit: m.unit.clone(),
            stem: crate::analyze::sanitize(&m.column),
            category_axes: category_axes.iter().map(|a| a.0.clone()).collect(),
            key_axis: key.map(|k| axes[k].0.clone()),
            categories,
            keys: keys.clone(),
            bars,
            labels: labels.clone(),
        });
    }
    out
}

/// Writes `charts/<metric column>.svg` and `.png` of every bar chart of the CSV at `csv` into
/// `dir`; returns the paths.
pub fn plot_bars(csv: &Path, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    plot_bars_with(csv, dir, &canvas::Look::default())
}

/// [`plot_bars`] with `sweep plot`'s title, axis names, size and formats.
pub fn plot_bars_with(
    csv: &Path,
    dir: &Path,
    look: &canvas::Look,
) -> Result<Vec<PathBuf>, ReportError> {
    let charts = dir.join(crate::store::run::CHARTS);
    crate::store::run::own_dir(&charts).map_err(|e| canvas::fail(&charts)(ChartError::Io(e)))?;
    let footer = csv.parent().and_then(canvas::footer);
    let mut out = Vec::new();
    for b in bar_charts(&Run::open(csv)?) {
        out.extend(canvas::write_as(
            &b,
            &charts.join(&b.stem),
            footer.as_deref(),
            look,
        )?);
    }
    Ok(out)
}

/// A bar chart as an SVG document.
pub(crate) fn bars_svg(b: &Bars, footer: Option<&str>) -> Result<String, ChartError> {
    canvas::svg(b, footer)
}

impl Bars {
    /// The metric in the spec's words (its `label`), else its name.
    fn shown_name(&self) -> String {
        self.labels
            .metric(&self.name)
            .map_or_else(|| self.name.clone(), str::to_string)
    }

    fn scale(&self) -> (f64, String) {
        crate::units::scale_for(&self.unit, self.bars.iter().filter_map(|b| b.value))
    }

    /// The lowest and the highest bar in one line, in the unit the chart uses: `from 0.156 TB/s
    /// (scattered, -dlcm=ca) to 3.07 TB/s (coalesced, -dlcm=ca)`; `None` without two values.
    pub(crate) fn span(&self) -> Option<String> {
        let measured = || self.bars.iter().filter_map(|b| b.value.map(|v| (b, v)));
        let lo = measured().min_by(|a, b| a.1.total_cmp(&b.1))?;
        let hi = measured().max_by(|a, b| a.1.total_cmp(&b.1))?;
        if std::ptr::eq(lo.0, hi.0) {
            return None;
        }
        let (div, unit) = self.scale();
        let at = |b: &Bar| self.label_of(b);
        Some(format!(
            "from {} {unit} ({}) to {} {unit} ({})",
            crate::units::four_digits(lo.1 / div),
            at(lo.0),
            crate::units::four_digits(hi.1 / div),
            at(hi.0)
        ))
    }

    /// Too many categories for bars: the values are drawn sorted ([`MAX_BARS`]).
    fn sorted(&self) -> bool {
        self.categories.len() > MAX_BARS
    }

    /// A bar's category, and its colour axis's value where there is one: `coalesced, -dlcm=ca`.
    fn label_of(&self, b: &Bar) -> String {
        let mut names = vec![self.categories.get(b.category).cloned().unwrap_or_default()];
        if self.key_axis.is_some() {
            names.push(self.keys.get(b.key).cloned().unwrap_or_default());
        }
        names.join(", ")
    }

    /// The values of too many categories for bars: sorted, the highest first, one line per
    /// colour, the three highest and the three lowest named with their values.
    fn draw_sorted<DB: DrawingBackend<ErrorType: 'static>>(
        &self,
        plot: &DrawingArea<DB, Shift>,
        text: bool,
        (x_name, y_name): (&str, &str),
    ) -> Result<Drawn, ChartError> {
        let (div, _) = self.scale();
        let mut sorted: Vec<(&Bar, f64)> = self
            .bars
            .iter()
            .filter_map(|b| b.value.map(|v| (b, v / div)))
            .collect();
        sorted.sort_by(|a, b| b.1.total_cmp(&a.1));
        let keys = self.keys.len().max(1);
        let most = (0..keys)
            .map(|k| sorted.iter().filter(|(b, _)| b.key == k).count())
            .max()
            .unwrap_or(0)
            .max(1);
        let (lo, hi) = sorted
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |a, p| {
                (a.0.min(p.1), a.1.max(p.1))
            });
        let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) };
        let pad = ((hi - lo) * 0.08).max(hi.abs() * 0.01).max(1e-12);
        let mut builder = ChartBuilder::on(plot);
        builder.margin(16);
        if text {
            builder.x_label_area_size(48).y_label_area_size(64);
        }
        let mut chart =
            builder.build_cartesian_2d(0.0..most as f64 + 1.0, (lo - pad)..(hi + pad))?;
        let fmt = |v: &f64| compact(*v);
        let mut mesh = chart.configure_mesh();
        mesh.light_line_style(WHITE.mix(0.0));
        if text {
            mesh.x_desc(x_name)
                .y_desc(y_name)
                .x_label_formatter(&fmt)
                .y_label_formatter(&fmt)
                .label_style(("sans-serif", 13));
        } else {
            mesh.disable_axes();
        }
        mesh.draw()?;
        // Each colour's values in rank order (the highest first).
        let mut rank = vec![0usize; keys];
        let mut at: Vec<(f64, f64)> = Vec::with_capacity(sorted.len());
        for (b, v) in &sorted {
            rank[b.key] += 1;
            at.push((rank[b.key] as f64, *v));
        }
        for k in 0..keys {
            let line = sorted
                .iter()
                .zip(&at)
                .filter(|((b, _), _)| b.key == k)
                .map(|(_, p)| *p);
            chart.draw_series(LineSeries::new(line, self.colour(k).stroke_width(2)))?;
        }
        let n = sorted.len();
        let named: Vec<usize> = (0..n.min(3)).chain(n.saturating_sub(3).max(3)..n).collect();
        for &i in &named {
            chart.draw_series(std::iter::once(Circle::new(
                at[i],
                4,
                self.colour(sorted[i].0.key).filled(),
            )))?;
        }
        if text {
            let (bx, by) = plot.get_base_pixel();
            for (row, &i) in named.iter().enumerate() {
                let (px, py) = chart.backend_coord(&at[i]);
                let (px, py) = (px - bx, py - by);
                let label = format!(
                    "{}: {}",
                    self.label_of(sorted[i].0),
                    crate::units::four_digits(sorted[i].1)
                );
                // The highest below one another right of their points, the lowest above one
                // another left of theirs.
                let (style, pos) = if i < 3 {
                    let style = TextStyle::from(("sans-serif", 12).into_font())
                        .pos(Pos::new(HPos::Left, VPos::Top));
                    (style, (px + 10, py + 6 + 16 * row as i32))
                } else {
                    let up = (named.len() - 1 - row) as i32;
                    let style = TextStyle::from(("sans-serif", 12).into_font())
                        .pos(Pos::new(HPos::Right, VPos::Bottom));
                    (style, (px - 10, py - 6 - 16 * up))
                };
                plot.draw(&Text::new(label, pos, style))?;
            }
        }
        let mut legend = Vec::new();
        let shown = format!(
            "{} values of {} categories, highest first (too many for bars)",
            count(n),
            count(self.categories.len())
        );
        match &self.key_axis {
            Some(axis) => {
                legend.push(Entry::new(shown, Swatch::Line, RGBColor(102, 102, 102)));
                legend.extend(self.keys.iter().enumerate().map(|(i, v)| {
                    let label = super::series::axis_value(&self.labels, axis, v);
                    Entry::new(label, Swatch::Line, self.colour(i))
                }))
            }
            None => legend.push(Entry::new(shown, Swatch::Line, DATA)),
        }
        for mark in Mark::ALL {
            let m = self.bars.iter().filter(|b| b.mark == Some(mark)).count();
            if let (true, Some(c)) = (m > 0, mark_colour(Some(mark))) {
                let label = format!("{} of {} {}", count(m), count(n), mark.verb(m));
                legend.push(Entry::new(label, Swatch::Triangle, c));
            }
        }
        let failed = self.bars.len() - n;
        if failed > 0 {
            legend.push(Entry::new(
                format!("{} failed (not drawn)", count(failed)),
                Swatch::Cross,
                GAP,
            ));
        }
        Ok(Drawn {
            entries: legend,
            frame: None,
        })
    }

    fn colour(&self, key: usize) -> RGBColor {
        if self.key_axis.is_some() {
            PALETTE[key % PALETTE.len()]
        } else {
            DATA
        }
    }
}

impl Chart for Bars {
    fn title(&self) -> String {
        let mut axes: Vec<String> = self
            .category_axes
            .iter()
            .map(|a| self.labels.axis(a))
            .collect();
        axes.extend(self.key_axis.as_ref().map(|a| self.labels.axis(a)));
        format!("{} by {}", self.shown_name(), axes.join(" and "))
    }

    fn axis_names(&self) -> (String, String) {
        let (_, unit) = self.scale();
        let x = if unit.is_empty() {
            self.shown_name()
        } else {
            format!("{} ({unit})", self.shown_name())
        };
        let y: Vec<String> = self
            .category_axes
            .iter()
            .map(|a| self.labels.axis(a))
            .collect();
        if self.sorted() {
            // Ranks along x, values up.
            return (format!("rank by value ({})", y.join(" · ")), x);
        }
        (x, y.join(" · "))
    }

    fn draw<DB: DrawingBackend<ErrorType: 'static>>(
        &self,
        plot: &DrawingArea<DB, Shift>,
        text: bool,
        (x_name, y_name): (&str, &str),
    ) -> Result<Drawn, ChartError> {
        if self.sorted() {
            return self.draw_sorted(plot, text, (x_name, y_name));
        }
        let (div, _) = self.scale();
        let k = self.keys.len().max(1) as f64;
        // Each category takes a row per key and a gap; the first category on top.
        let slot = k + 0.6;
        let total = self.categories.len() as f64 * slot - 0.6;
        let y_of = |b: &Bar| total - (b.category as f64 * slot + b.key as f64) - 1.0;
        let max = self
            .bars
            .iter()
            .filter_map(|b| b.value.map(|v| v.abs() / div * (1.0 + b.u)))
            .fold(0.0, f64::max);
        let max = if max > 0.0 { max } else { 1.0 };
        let font = ("sans-serif", 13).into_font();
        let label_w = self
            .categories
            .iter()
            .map(|c| font.box_size(c).map_or(8 * c.len() as u32, |b| b.0))
            .max()
            .unwrap_or(0);
        let mut builder = ChartBuilder::on(plot);
        builder.margin(16);
        if text {
            builder
                .x_label_area_size(48)
                .y_label_area_size((label_w + 40).clamp(60, 420));
        }
        let mut chart = builder
            .build_cartesian_2d(super::axes::drawable(0.0..max * 1.18), -0.2..total + 0.2)?;
        let fmt = |v: &f64| compact(*v);
        let mut mesh = chart.configure_mesh();
        mesh.light_line_style(WHITE.mix(0.0))
            .disable_y_mesh()
            .y_labels(0);
        if text {
            mesh.x_desc(x_name)
                .y_desc(y_name)
                .x_label_formatter(&fmt)
                .label_style(("sans-serif", 13));
        } else {
            mesh.disable_axes();
        }
        mesh.draw()?;
        let whisker = BLACK.mix(0.6);
        for b in &self.bars {
            let y = y_of(b);
            let Some(v) = b.value.map(|v| v / div) else {
                chart.draw_series(std::iter::once(Cross::new(
                    (0.0, y + 0.4),
                    5,
                    GAP.stroke_width(2),
                )))?;
                continue;
            };
            chart.draw_series(std::iter::once(Rectangle::new(
                [(0.0, y + 0.1), (v, y + 0.9)],
                self.colour(b.key).filled(),
            )))?;
            if b.u > 0.0 {
                let (lo, hi) = (v * (1.0 - b.u), v * (1.0 + b.u));
                chart.draw_series([
                    PathElement::new(vec![(lo, y + 0.5), (hi, y + 0.5)], whisker),
                    PathElement::new(vec![(lo, y + 0.3), (lo, y + 0.7)], whisker),
                    PathElement::new(vec![(hi, y + 0.3), (hi, y + 0.7)], whisker),
                ])?;
            }
            if let Some(c) = mark_colour(b.mark) {
                chart.draw_series(std::iter::once(TriangleMarker::new(
                    (v * (1.0 + b.u), y + 0.5),
                    5,
                    c.stroke_width(1),
                )))?;
            }
        }
        if text {
            // Values at the bars' ends, categories left of their rows.
            let (bx, by) = plot.get_base_pixel();
            let at = |x: f64, y: f64| {
                let (px, py) = chart.backend_coord(&(x, y));
                (px - bx, py - by)
            };
            let left = TextStyle::from(("sans-serif", 12).into_font())
                .pos(Pos::new(HPos::Left, VPos::Center));
            for b in &self.bars {
                let y = y_of(b) + 0.5;
                let (label, x) = match b.value {
                    Some(v) => (crate::units::four_digits(v / div), v / div * (1.0 + b.u)),
                    None => (format!("{} (no value)", b.status), 0.0),
                };
                let (px, py) = at(x, y);
                // Past the status mark, when there is one.
                let gap = if b.mark.is_some() { 14 } else { 8 };
                plot.draw(&Text::new(label, (px + gap, py), left.clone()))?;
            }
            let right = TextStyle::from(("sans-serif", 13).into_font())
                .pos(Pos::new(HPos::Right, VPos::Center));
            for (i, c) in self.categories.iter().enumerate() {
                let mid = total - i as f64 * slot - k / 2.0;
                let (px, py) = at(0.0, mid);
                plot.draw(&Text::new(c.clone(), (px - 8, py), right.clone()))?;
            }
        }
        let mut legend = Vec::new();
        match &self.key_axis {
            Some(axis) => {
                legend.extend(self.keys.iter().enumerate().map(|(i, v)| {
                    // `caching: -Xptxas -dlcm=ca`: the axis in the spec's words, and the value.
                    let label = super::series::axis_value(&self.labels, axis, v);
                    Entry::new(label, Swatch::Fill, self.colour(i))
                }))
            }
            None => legend.push(Entry::new(self.shown_name(), Swatch::Fill, DATA)),
        }
        if self.bars.iter().any(|b| b.u > 0.0) {
            legend.push(Entry::new(
                "uncertainty (CI, placements)",
                Swatch::Line,
                RGBColor(102, 102, 102),
            ));
        }
        // Each cause in the terminal's words, with how many values it marks.
        for mark in Mark::ALL {
            let n = self.bars.iter().filter(|b| b.mark == Some(mark)).count();
            if let (true, Some(c)) = (n > 0, mark_colour(Some(mark))) {
                let of = self.bars.iter().filter(|b| b.value.is_some()).count();
                let label = format!("{} of {} {}", count(n), count(of), mark.verb(n));
                legend.push(Entry::new(label, Swatch::Triangle, c));
            }
        }
        if self.bars.iter().any(|b| b.value.is_none()) {
            legend.push(Entry::new("failed point", Swatch::Cross, GAP));
        }
        Ok(Drawn {
            entries: legend,
            frame: None,
        })
    }
}

/// The colour of a marked value's triangle: the charts' pink for the values results.csv calls
/// `unstable` (placement, processes), their orange for noisy ones.
fn mark_colour(mark: Option<Mark>) -> Option<RGBColor> {
    match mark? {
        Mark::Noisy => Some(NOISY),
        Mark::Placement | Mark::Processes => Some(UNSTABLE),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_axis_with_fewest_values_becomes_the_colours() {
        // pattern (4 values) and caching (2): caching is the colour.
        assert_eq!(colour_axis(&[4, 2]), Some(1));
        assert_eq!(colour_axis(&[2, 2]), Some(1), "the last of equals");
        assert_eq!(colour_axis(&[3]), None, "one axis: plain bars");
        assert_eq!(colour_axis(&[20, 12]), None, "too many colours");
        assert_eq!(
            colour_axis(&[1, 5]),
            Some(1),
            "a one-value axis colours nothing"
        );
    }

    /// 20,000 categories drew one black block of bars and labels in 94 s (debug build): past
    /// [`MAX_BARS`] the values are drawn sorted as a line, the highest and the lowest named, in
    /// well under the time (the categories were found by a scan per row).
    #[test]
    fn too_many_categories_draw_their_values_sorted_with_the_ends_named() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("results.csv");
        let mut text = String::from(
            "point_id,index,name,status,lat_gb_per_s,lat_rel_ci,build_s,run_s,cached,gpu_index,gpu_name,gpu_uuid,error\n",
        );
        let n = 20_000;
        for i in 0..n {
            // A value that wanders with i; k07777 the highest, k00042 the lowest.
            let v = match i {
                7777 => 999.0,
                42 => 1.0,
                _ => 100.0 + (i * 7919 % 101) as f64,
            };
            text += &format!("p{i},{i},k{i:05},ok,{v},0.002,1,1,0,0,G,u,\n");
        }
        std::fs::write(&csv, text).unwrap();
        let started = std::time::Instant::now();
        let b = bar_charts(&Run::open(&csv).unwrap());
        assert_eq!(b[0].categories.len(), n);
        assert!(b[0].sorted());
        assert_eq!(
            b[0].axis_names(),
            ("rank by value (name)".into(), "lat_gb_per_s (GB/s)".into())
        );
        let svg = bars_svg(&b[0], None).unwrap();
        let elapsed = started.elapsed();
        // The legend's line, wrapped.
        assert!(
            svg.contains("20,000 values of 20,000 categories,"),
            "no legend"
        );
        for t in ["k07777: 999.0", "k00042: 1.000"] {
            assert!(
                crate::report::series::tests::text_x(&svg, t).is_some(),
                "{t} missing"
            );
        }
        // One label per named point, not one per category.
        assert!(!svg.contains("k10000"), "a category in the middle is named");
        assert!(elapsed.as_secs() < 20, "took {elapsed:?}");
    }

    #[test]
    fn a_sweep_of_categories_gets_grouped_bars_with_their_status() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("results.csv");
        let mut text = String::from(
            "point_id,index,pattern,caching,status,l1_gb_per_s,l1_rel_ci,l1_spread,build_s,run_s,cached,gpu_index,gpu_name,gpu_uuid,error\n",
        );
        // (pattern, caching, status, value, placement spread)
        for (i, (p, c, st, v, sp)) in [
            ("coalesced", "ca", "ok", "3071", "0.002"),
            ("coalesced", "cg", "ok", "3072", "0.002"),
            // Unstable by another metric of its row: its own spread is small.
            ("strided", "ca", "unstable", "979", "0.002"),
            ("strided", "cg", "unstable", "611", "0.3"),
            ("scattered", "ca", "failed", "", ""),
            ("scattered", "cg", "ok", "156", "0.002"),
        ]
        .iter()
        .enumerate()
        {
            text += &format!("p{i},{i},{p},{c},{st},{v},0.01,{sp},1,1,0,0,G,u,\n");
        }
        std::fs::write(&csv, text).unwrap();
        let b = bar_charts(&Run::open(&csv).unwrap());
        assert_eq!(b.len(), 1, "one metric");
        let b = &b[0];
        assert_eq!(b.categories, ["coalesced", "strided", "scattered"]);
        assert_eq!(b.keys, ["ca", "cg"]);
        // Named by its column without a manifest.
        assert_eq!(b.title(), "l1_gb_per_s by pattern and caching");
        assert_eq!(
            b.axis_names(),
            ("l1_gb_per_s (TB/s)".into(), "pattern".into())
        );
        assert_eq!(b.bars[3].key, 1);
        assert_eq!((b.bars[3].value, b.bars[3].u), (Some(611.0), 0.15));
        assert_eq!(
            (b.bars[2].mark, b.bars[3].mark),
            (None, Some(Mark::Placement)),
            "each bar marked by its own metric, not its row"
        );
        assert_eq!(b.bars[4].value, None, "a failed point has no bar");
        // The report's finding: the lowest and highest bar, failed points aside.
        assert_eq!(
            b.span().as_deref(),
            Some("from 0.1560 TB/s (scattered, cg) to 3.072 TB/s (coalesced, cg)")
        );
        let svg = bars_svg(b, None).unwrap();
        for t in ["coalesced", "caching: cg", "0.6110"] {
            let x = crate::report::series::tests::text_x(&svg, t);
            assert!(x.is_some(), "{t} missing");
        }
        assert!(svg.contains("#E377C2"), "the unstable mark");
        // Its legend counts it in the terminal's words.
        assert!(
            crate::report::series::tests::text_x(&svg, "1 of 5 varies with buffer placement")
                .is_some(),
            "{svg}"
        );
        let files = plot_bars(&csv, dir.path()).unwrap();
        assert_eq!(files.len(), 2);
        assert!(files[0].ends_with("charts/l1_gb_per_s.svg"), "{files:?}");
    }
}
