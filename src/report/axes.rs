//! Axes of a line chart: which x scale (linear or log2), where the x ticks go (the period, warps,
//! powers of two), the unit of y (TFLOP/s rather than 20M MFlops) and compact tick labels.

use crate::analyze::reading::human;
use crate::analyze::SeriesAnalysis;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::canvas::Frame;
use super::ChartError;

/// The margin on each side of x from `lo` to `hi` (log2 x when `log2`): 2 % of the span, and at
/// least half a step on an axis of whole numbers (threads 1..4: the end points are no border's).
/// Relative to the values otherwise: a fixed half unit squeezed an axis of 0.01..0.05 into 4 % of
/// the plot, and 1e-6..3e-6 onto one pixel (review 19a H1).
pub(crate) fn x_pad(lo: f64, hi: f64, log2: bool, xs: &[f64]) -> f64 {
    let span = hi - lo;
    if log2 {
        return (span * 0.02).max(0.1);
    }
    let whole = xs.iter().all(|x| x.fract() == 0.0);
    match (whole, span > 0.0) {
        (true, _) => (span * 0.02).max(0.5),
        (false, true) => span * 0.02,
        // One x of a fraction: a tenth of its size either side (half a unit for 0).
        (false, false) => match lo.abs() * 0.1 {
            p if p > 0.0 => p,
            _ => 0.5,
        },
    }
}

/// A chart of f64 on both axes.
pub(crate) type Plane<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A chart on `area` with the given ranges and its axes drawn: axis names and compact tick labels
/// when `text`, no text at all otherwise (no font is needed then). The title is the canvas's.
/// Also the frame: where the plot lies in canvas pixels and what its axes span (y in the unit
/// drawn, with scale 1 and no unit: the caller knows those).
pub(crate) fn axes<'a, DB: DrawingBackend<ErrorType: 'static>>(
    area: &'a DrawingArea<DB, Shift>,
    (xs, ys): (std::ops::Range<f64>, std::ops::Range<f64>),
    (x_name, y_name): (&str, &str),
    text: bool,
    period: Option<f64>,
    log2: bool,
    measured: &[f64],
) -> Result<(Plane<'a, DB>, Frame), ChartError> {
    let mut builder = ChartBuilder::on(area);
    // A small chart (`--size 480x300`) keeps its room for the plot: narrower margins, smaller
    // tick labels.
    // By width alone: the panels of one chart (compare's B/A under A and B) are equally wide and
    // must line up.
    let small = area.dim_in_pixel().0 < 640;
    let tick_size = if small { 11 } else { 13 };
    builder.margin(if small { 10 } else { 16 });
    if text {
        builder
            .x_label_area_size(if small { 40 } else { 48 })
            .y_label_area_size(if small { 62 } else { 80 });
    }
    let (xs, ys) = (drawable(xs), drawable(ys));
    let ticks = tick_positions(&xs, period, log2, measured);
    let label = |x: f64| x_label(if log2 { x.exp2() } else { x });
    let (y_lo, y_hi) = (ys.start, ys.end);
    let (x_lo, x_hi) = (xs.start, xs.end);
    let mut chart = builder.build_cartesian_2d(xs, ys)?;
    // The plot's pixel rectangle from plotters' own mapping of the axis ends (exact), and x's
    // ends as x itself (not log2 x): a page's script maps the mouse to data with them.
    let ((left, bottom), (right, top)) = (
        chart.backend_coord(&(x_lo, y_lo)),
        chart.backend_coord(&(x_hi, y_hi)),
    );
    let real = |x: f64| if log2 { x.exp2() } else { x };
    let frame = Frame {
        px: (left, top, right, bottom),
        x: (real(x_lo), real(x_hi)),
        log2,
        y: (y_lo, y_hi),
        y_scale: 1.0,
        y_unit: String::new(),
    };
    let fmt = |v: &f64| compact(*v);
    let mut mesh = chart.configure_mesh();
    // About one y label per 40 pixels (a short panel would crowd plotters' ten), and five at
    // least (asked for four, compare's B/A panel got two: 1.00 and 1.02).
    let y_labels = (area.dim_in_pixel().1 as usize / 40).clamp(5, 10);
    // The y ticks plotters will label, written with as many decimals as the finest needs
    // (0.0, 0.5, 1.0, not 0, 0.5, 1).
    let y_ticks = {
        use plotters::coord::ranged1d::Ranged;
        RangedCoordf64::from(y_lo..y_hi).key_points(y_labels)
    };
    let decimals = tick_decimals(&y_ticks);
    let y_fmt = |v: &f64| match decimals {
        Some(d) => format!("{:.d$}", v, d = d),
        None => compact(*v),
    };
    mesh.light_line_style(WHITE.mix(0.0)).y_labels(y_labels);
    if text {
        mesh.x_desc(x_name)
            .y_desc(y_name)
            .x_label_formatter(&fmt)
            .y_label_formatter(&y_fmt)
            .label_style(("sans-serif", tick_size))
            .axis_desc_style(("sans-serif", tick_size + 1));
        // The x ticks are drawn below, where x_ticks puts them (plotters puts them on round
        // decimal steps; thread counts read in warps and periods).
        mesh.x_labels(0);
    } else {
        mesh.disable_axes();
    }
    mesh.draw()?;
    if text {
        let grid = BLACK.mix(0.12);
        // Every k-th tick only, where the labels of all would touch.
        let font = ("sans-serif", tick_size).into_font();
        let label_w = |x: f64| {
            font.box_size(&label(x))
                .map_or(label(x).chars().count() as u32 * tick_size * 3 / 5, |b| b.0)
        };
        let px = |x: f64| chart.backend_coord(&(x, y_lo)).0;
        let ticks = thinned(&ticks, px, |x| label_w(x) + 8);
        for &x in &ticks {
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(x, y_lo), (x, y_hi)],
                grid,
            )))?;
            // The chart speaks in the backend's pixels; `area` in its own.
            let (bx, by) = area.get_base_pixel();
            let (px, py) = chart.backend_coord(&(x, y_lo));
            let (px, py) = (px - bx, py - by);
            let style = TextStyle::from(("sans-serif", tick_size).into_font())
                .pos(Pos::new(HPos::Center, VPos::Top));
            area.draw(&PathElement::new(vec![(px, py), (px, py + 5)], BLACK))?;
            area.draw(&Text::new(label(x), (px, py + 8), style))?;
        }
    }
    Ok((chart, frame))
}

/// `r` bounded to what plotters can draw: ends within +-f64::MAX / 2, so that its span is
/// finite (a span of inf, values of -1e308 and 1e308 or a top of 1.7e308 with its headroom, made
/// plotters' tick search loop forever), and 0..1 for a range with a NaN end.
pub(crate) fn drawable(r: std::ops::Range<f64>) -> std::ops::Range<f64> {
    if r.start.is_nan() || r.end.is_nan() {
        return 0.0..1.0;
    }
    let bound = f64::MAX / 2.0;
    r.start.clamp(-bound, bound)..r.end.clamp(-bound, bound)
}

/// Every k-th of `ticks`, k the smallest that keeps each label (`room(x)` pixels wide, centred on
/// `px(x)`) clear of its neighbours.
pub(crate) fn thinned(
    ticks: &[f64],
    px: impl Fn(f64) -> i32,
    room: impl Fn(f64) -> u32,
) -> Vec<f64> {
    let clear = |k: usize| {
        let kept: Vec<f64> = ticks.iter().copied().step_by(k).collect();
        kept.windows(2).all(|w| {
            let gap = (px(w[1]) - px(w[0])).unsigned_abs();
            gap >= room(w[0]).div_ceil(2) + room(w[1]).div_ceil(2)
        })
    };
    let k = (1..=ticks.len().max(1)).find(|&k| clear(k)).unwrap_or(1);
    ticks.iter().copied().step_by(k).collect()
}

/// Where the x ticks go, in the axis's coordinates (log2(x) on a log2 axis): on each measured x
/// when there are at most [`FEW`] of them (tiles 4, 8, 16, 32 read as such, not as 5, 10, ...),
/// else on powers of two on a log2 axis, else as [`x_ticks`] says.
pub(crate) fn tick_positions(
    xs: &std::ops::Range<f64>,
    period: Option<f64>,
    log2: bool,
    measured: &[f64],
) -> Vec<f64> {
    if (2..=FEW).contains(&measured.len()) {
        return measured.to_vec();
    }
    if log2 {
        let (lo, hi) = (xs.start.ceil() as i32, xs.end.floor() as i32);
        let step = ((hi - lo) / 10 + 1).max(1) as usize;
        return (lo..=hi).step_by(step).map(f64::from).collect();
    }
    x_ticks(xs.start, xs.end, period)
}

/// At most this many measured x get a tick each.
const FEW: usize = 12;

/// Ticks of an x range: on multiples of the period when it gives 4 to 16 ticks, else of a warp
/// or its multiples (32, 64, ..., 512: thread counts read in warps), else on a round step
/// (1, 2 or 5 times a power of ten).
pub fn x_ticks(lo: f64, hi: f64, period: Option<f64>) -> Vec<f64> {
    let span = hi - lo;
    if !(span.is_finite() && span > 0.0) {
        return vec![lo];
    }
    let fits = |step: f64| step > 0.0 && (4.0..=16.0).contains(&(span / step));
    let warps = [32.0, 64.0, 128.0, 256.0, 512.0, 1024.0];
    let step = period
        .filter(|&p| fits(p))
        .or_else(|| warps.into_iter().find(|&w| fits(w)))
        .unwrap_or_else(|| {
            let mag = 10f64.powf((span / 8.0).log10().floor());
            [1.0, 2.0, 5.0, 10.0]
                .into_iter()
                .map(|k| k * mag)
                .find(|&s| span / s <= 10.0)
                .unwrap_or(10.0 * mag)
        });
    let first = (lo / step).ceil() * step;
    (0..)
        .map(|i| first + i as f64 * step)
        .take_while(|&x| x <= hi + 1e-9 * step)
        .collect()
}

/// Whether `xs` (sorted, distinct) read best on a log2 axis: positive, over at least a factor 16,
/// and sparse on a linear one (fewer points than a quarter of the range: strides 1..32 then
/// 64..1024, sizes in powers of two); a dense sweep such as threads 1..512 stays linear, where a
/// period shows. Points at one constant step (threads 32..512 every 8) stay linear too, however
/// sparse: their step is the sweep's own scale. Points that each double the one before (tiles 4,
/// 8, 16, 32; 1, 2, 4, 8 bytes touched) are log2 whatever their range: on a linear axis their
/// first half crowds into a corner and equal ratios look unequal.
pub fn log_axis(xs: &[f64]) -> bool {
    let (Some(&lo), Some(&hi)) = (xs.first(), xs.last()) else {
        return false;
    };
    let step = xs.get(1).map_or(0.0, |x| x - lo);
    let even = xs
        .windows(2)
        .all(|w| ((w[1] - w[0]) - step).abs() <= 1e-9 * step.abs().max(1.0));
    let ratio = xs.get(1).map_or(0.0, |x| x / lo);
    let geometric = ratio >= 2.0 - 1e-9
        && xs
            .windows(2)
            .all(|w| (w[1] / w[0] - ratio).abs() <= 1e-9 * ratio);
    xs.len() > 2
        && !even
        && lo > 0.0
        && (geometric || (hi / lo >= 16.0 && (xs.len() as f64) * 4.0 < hi - lo))
}

/// The distinct finite x of some points, sorted.
pub(crate) fn distinct(xs: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut v: Vec<f64> = xs.filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v
}

/// `s` with every x (points, peaks, outliers, knee and its range, best and its ties) replaced by
/// log2(x).
pub(crate) fn on_log2(s: &SeriesAnalysis) -> SeriesAnalysis {
    let mut out = s.clone();
    for p in &mut out.data {
        p.0 = p.0.log2();
    }
    for x in out
        .curve
        .peaks
        .iter_mut()
        .chain(out.curve.outliers.iter_mut())
    {
        *x = x.log2();
    }
    out.curve.knee = out.curve.knee.map(f64::log2);
    if let Some(r) = &mut out.curve.knee_range {
        (r.lo, r.hi) = (r.lo.log2(), r.hi.log2());
    }
    if let Some(b) = &mut out.curve.best {
        b.x = b.x.log2();
        // With the best x: the legend tells them apart, and writes this one back as 2^x (left
        // as it was, "within 1 % from 4294967296" on the H100 tile sweep: review 20a H1).
        b.x_within_1pct = b.x_within_1pct.log2();
        for t in &mut b.tied {
            *t = t.log2();
        }
    }
    out
}

pub use crate::units::{format_value, scale_unit};

/// `s` with its values in a unit people read (TFLOP/s, not 20M MFlops): see [`scale_unit`].
pub(crate) fn scaled(s: &SeriesAnalysis) -> SeriesAnalysis {
    let (div, unit) = series_unit(s);
    let mut out = s.clone();
    if div != 1.0 {
        for p in &mut out.data {
            p.1 = p.1.map(|v| v / div);
        }
    }
    out.unit = unit;
    out
}

/// The divisor of a series' values and the unit they are drawn in ([`scale_unit`] of its
/// largest value).
pub(crate) fn series_unit(s: &SeriesAnalysis) -> (f64, String) {
    crate::units::scale_for(&s.unit, s.data.iter().filter_map(|p| p.1))
}

/// How many decimals the labels of `ticks` share, as the finest of them needs ([`human`]'s 4
/// significant digits): `Some(1)` for 0, 0.5, 1; `None` where a tick is 10 000 or more and is
/// written compactly (`20k`, `20M`), each as it needs.
pub(crate) fn tick_decimals(ticks: &[f64]) -> Option<usize> {
    if ticks.iter().any(|v| v.abs() >= 1e4) {
        return None;
    }
    Some(
        ticks
            .iter()
            .map(|&v| human(v).split_once('.').map_or(0, |(_, d)| d.len()))
            .max()
            .unwrap_or(0),
    )
}

/// An x tick label: whole numbers below ten million in full (sizes 16384 and 262144 read as
/// such, not as `16.38k`), others as [`compact`] writes them.
pub(crate) fn x_label(v: f64) -> String {
    let whole = (v - v.round()).abs() < 1e-6 * v.abs().max(1.0);
    if whole && v.abs() < 1e7 {
        human(v.round())
    } else if v.abs() < 1e4 {
        // A measured x as it is written (1000.1, not `1000`: review 20a H2).
        crate::analyze::reading::human_x(v)
    } else {
        compact(v)
    }
}

/// An axis label: 20000000 as `20M`, 1500 as `1500`, 0.25 as `0.25`.
pub(crate) fn compact(v: f64) -> String {
    match v.abs() {
        a if a >= 1e9 => format!("{}G", human(v / 1e9)),
        a if a >= 1e6 => format!("{}M", human(v / 1e6)),
        a if a >= 1e4 => format!("{}k", human(v / 1e3)),
        _ => human(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_written_in_its_scaled_unit_with_four_digits() {
        let cases: [(f64, &str, &str); 12] = [
            (96_844.989_949_999_99, "MFlops", "96.84 GFLOP/s"),
            (20_836_359.49, "MFlops", "20.84 TFLOP/s"),
            (16_000.0, "MFlops", "16.00 GFLOP/s"),
            (1000.0, "MFlops", "1.000 GFLOP/s"),
            (143_574.99, "MFlops", "143.6 GFLOP/s"),
            (450.0, "GB/s", "450.0 GB/s"),
            (3021.7, "GB/s", "3.022 TB/s"),
            (12.5, "ms", "12.50 ms"),
            (123_456.7, "cycles", "123457 cycles"),
            (9.99996, "us", "10.00 us"),
            (0.0, "MFlops", "0 MFlops"),
            (f64::NAN, "GB/s", "-"),
        ];
        for (value, unit, want) in cases {
            assert_eq!(format_value(value, unit), want, "{value} {unit}");
        }
        assert_eq!(format_value(-2500.0, "MFlops"), "-2.500 GFLOP/s");
    }

    #[test]
    fn ticks_fall_on_the_period_or_on_warps() {
        assert_eq!(x_ticks(-9.0, 521.0, Some(64.0))[..3], [0.0, 64.0, 128.0]);
        // Period 16 gives 33 ticks over 1..512: warps instead.
        assert_eq!(x_ticks(-9.0, 521.0, Some(16.0))[..3], [0.0, 64.0, 128.0]);
        assert_eq!(
            x_ticks(0.5, 64.5, None),
            [10.0, 20.0, 30.0, 40.0, 50.0, 60.0]
        );
        assert_eq!(x_ticks(0.5, 64.5, Some(16.0)), [16.0, 32.0, 48.0, 64.0]);
        assert_eq!(x_ticks(0.0, 1.0, None).len(), 11);
        assert_eq!(x_ticks(3.0, 3.0, None), [3.0]);
    }

    #[test]
    fn few_measured_x_get_a_tick_each() {
        let tiles = [4.0, 8.0, 16.0, 32.0];
        assert_eq!(tick_positions(&(3.0..33.0), None, false, &tiles), tiles);
        // Many: the period's multiples, or powers of two on a log2 axis.
        let threads: Vec<f64> = (1..=64).map(f64::from).collect();
        assert_eq!(
            tick_positions(&(0.5..64.5), Some(16.0), false, &threads),
            [16.0, 32.0, 48.0, 64.0]
        );
        let strides: Vec<f64> = (0..=40).map(|k| f64::from(k) / 4.0).collect();
        assert_eq!(
            tick_positions(&(-0.2..10.2), None, true, &strides),
            [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        );
    }

    #[test]
    fn sparse_wide_axes_are_log2_and_dense_ones_linear() {
        let strides: Vec<f64> = (1..=32)
            .chain([64, 128, 256, 512, 1024])
            .map(f64::from)
            .collect();
        assert!(log_axis(&strides));
        let threads: Vec<f64> = (1..=512).map(f64::from).collect();
        assert!(!log_axis(&threads));
        assert!(!log_axis(&[0.0, 1.0, 1024.0]), "zero has no log");
        assert!(!log_axis(&[1.0, 8.0]), "two points");
        let every_8: Vec<f64> = (4..=64).map(|k| f64::from(k) * 8.0).collect();
        assert!(
            !log_axis(&every_8),
            "one constant step: linear, however sparse"
        );
        let pow2: Vec<f64> = (0..=10).map(|k| f64::from(1 << k)).collect();
        assert!(log_axis(&pow2), "powers of two");
        assert!(
            log_axis(&[4.0, 8.0, 16.0, 32.0]),
            "doubling, over a factor 8"
        );
        assert!(log_axis(&[1.0, 2.0, 4.0]), "doubling, three points");
        assert!(log_axis(&[1.0, 4.0, 16.0, 64.0]), "quadrupling");
        assert!(
            !log_axis(&[10.0, 15.0, 22.5, 33.75]),
            "a ratio under 2: linear reads as well"
        );
        assert!(!log_axis(&[4.0, 8.0, 16.0, 24.0]), "not one ratio");
    }

    #[test]
    fn y_ticks_share_their_decimals() {
        assert_eq!(tick_decimals(&[0.0, 0.5, 1.0, 1.5]), Some(1));
        assert_eq!(tick_decimals(&[0.9, 1.0, 1.1]), Some(1));
        assert_eq!(tick_decimals(&[0.975, 1.0, 1.025]), Some(3));
        assert_eq!(tick_decimals(&[0.0, 20.0, 40.0]), Some(0));
        // Float dust (0.1 + 0.2) needs no seventeen decimals.
        assert_eq!(tick_decimals(&[0.1 + 0.2, 0.4]), Some(1));
        assert_eq!(tick_decimals(&[0.0, 10_000.0, 20_000.0]), None);
    }

    #[test]
    fn axis_labels_are_compact() {
        assert_eq!(compact(20_000_000.0), "20M");
        assert_eq!(compact(12_500.0), "12.5k");
        assert_eq!(compact(1500.0), "1500");
        assert_eq!(compact(2.5e9), "2.5G");
        assert_eq!(x_label(16384.0), "16384");
        assert_eq!(x_label(262_144.000_000_03), "262144");
        assert_eq!(x_label(33_554_432.0), "33.55M");
        assert_eq!(x_label(0.5), "0.5");
    }
}
