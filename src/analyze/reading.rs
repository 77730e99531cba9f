//! The analysis in words: a one-line reading per series that names the likely cause, and the
//! number formatting shared by the table, the CSV and the charts.

use super::curve::Curve;
use super::Placement;

/// `v` to four significant digits, as a number (read back from its exponent form).
fn significant4(v: f64) -> f64 {
    format!("{v:.3e}").parse().unwrap_or(v)
}

/// A number for people: integers as integers, others with 4 significant digits at most.
pub fn human(v: f64) -> String {
    if !v.is_finite() {
        return "-".to_string();
    }
    if (v - v.round()).abs() < 1e-9 * v.abs().max(1.0) && v.abs() < 1e15 {
        return format!("{}", v.round() as i64);
    }
    // Far from 1: four digits in exponent form (`1e308`, `4.941e-324`), never hundreds of them.
    if v != 0.0 && !(1e-6..1e15).contains(&v.abs()) {
        return crate::schema::shortest(significant4(v));
    }
    let digits = (4 - 1 - v.abs().log10().floor() as i32).clamp(0, 12) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Names in backticks, escaped: `` `layout`, `variant` ``.
pub fn backticked(names: &[String]) -> String {
    names
        .iter()
        .map(|a| format!("`{}`", crate::units::visible(a)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `at each threads, the median of its rows over `layout``: the axes a series is not split by
/// (`by` leaves them out), whose rows at one x are one point (review 20a H3: a "best" no row
/// measured, said only in analysis.md's header).
pub fn merged(x: &str, axes: &[String]) -> String {
    format!(
        "at each {}, the median of its rows over {}",
        crate::units::visible(x),
        backticked(axes)
    )
}

/// `at 2 of its 10 values of threads, the median of the rows that repeat a point`: rows at the same value
/// of every axis (a CSV without its run's manifest, which refuses them: review 21 F0, two rows
/// of one point were drawn as their median, unsaid).
pub fn repeated(x: &str, n: usize, of: usize) -> String {
    format!(
        "at {n} of its {of} values of {}, the median of the rows that repeat a point (the same value of every axis)",
        crate::units::visible(x)
    )
}

/// A measured x (an axis value) for people: as results.csv writes it where that is short
/// (`1000.1`, `1410.5`, `0.0001`), else as [`human`] writes it (four digits wrote 1000.1 to
/// 1000.4 all as `1000`: review 20a H2). A whole number, or an x made by arithmetic (2^log2 x,
/// `47.99999999999999`), as [`human`].
pub fn human_x(v: f64) -> String {
    let exact = crate::schema::shortest(v);
    if v.is_finite() && v.fract() != 0.0 && exact.len() <= 10 {
        exact
    } else {
        human(v)
    }
}

/// A difference of values in the metric's unit; of a fraction, in percentage points (a drop
/// from 97.5 % to 86.6 % is 10.9 points, not "10.93 %" beside a relative 11.5 %).
fn absolute(v: f64, unit: &str) -> String {
    if unit.trim() == "fraction" {
        format!("{} percentage points", crate::schema::fixed(100.0 * v, 1))
    } else {
        crate::units::format_value(v, unit)
    }
}

/// A fraction as a percentage with one decimal: 0.0912 -> "9.1 %".
pub fn percent(f: f64) -> String {
    format!("{} %", crate::schema::fixed(100.0 * f, 1))
}

/// The mechanism clause of each period of a curve (see [`super::mechanism::explain`]).
#[derive(Debug, Clone, Default)]
pub struct Why {
    pub primary: String,
    pub secondary: String,
    /// The shape of a curve without a period that [`flat`] or [`falls`] says, in place of the
    /// knee and the best x; empty for none.
    pub shape: String,
}

/// A curve without a period whose every point lies within the noise of the others: the range of
/// its values is at most twice `u95`, the between-process half-width (two values each off by
/// u95, in opposite ways). Its "best x" would be the noise's pick (memcpy beside a strided copy
/// on an H100 read "best at stride = 23" over 37 points within 1.5 %, scattering by ±1.8 %).
pub fn flat(data: &[(f64, Option<f64>)], u95: f64, unit: &str) -> Option<String> {
    let values: Vec<f64> = data.iter().filter_map(|p| p.1).collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if values.len() < 3 || lo <= 0.0 || u95.is_nan() || u95 <= 0.0 || hi / lo - 1.0 > 2.0 * u95 {
        return None;
    }
    let mid = super::fit::median(&values)?;
    Some(format!(
        "flat within the noise: its {} points span {} around {}, no more than a value scatters \
         between processes",
        values.len(),
        small_percent(hi / lo - 1.0),
        crate::units::format_value(mid, unit)
    ))
}

/// A curve without a period that is best at its first x and falls from there (a stride that
/// spreads a warp's accesses over more memory): how much of the first value is left where x has
/// doubled, redoubled, ... and where it is lowest. It has no ramp, so no "ramp ends at".
pub fn falls(axis: &str, data: &[(f64, Option<f64>)], curve: &Curve, unit: &str) -> Option<String> {
    let pts: Vec<(f64, f64)> = data.iter().filter_map(|&(x, y)| Some((x, y?))).collect();
    let &(x0, v0) = pts.first()?;
    let best = curve.best.as_ref()?;
    let worst = curve.worst?;
    if curve.period.is_some() || best.x != x0 || x0 <= 0.0 || worst >= v0 * 0.8 {
        return None;
    }
    let (at_worst, _) = pts
        .iter()
        .copied()
        .find(|p| p.1 == worst)
        .unwrap_or((x0, v0));
    // A share (a fraction of memcpy) is said by its own values; a throughput by what is left of
    // the first (percent of a percent would read as one).
    // A fraction with one decimal: its scatter between processes is a percent or so.
    let share = ["fraction", "%", "percent", "ratio"].contains(&unit.trim());
    let value = |v: f64| {
        if unit.trim() == "fraction" {
            percent(v)
        } else {
            crate::units::format_value(v, unit)
        }
    };
    let of = |v: f64| if share { value(v) } else { percent(v / v0) };
    let mut left = Vec::new();
    let mut x = 2.0 * x0;
    while x < at_worst {
        if let Some(p) = pts.iter().find(|p| (p.0 - x).abs() < 1e-9) {
            left.push((p.0, p.1));
        }
        x *= 2.0;
    }
    let listed: Vec<String> = left
        .iter()
        .enumerate()
        .map(|(i, &(x, v))| match (i, share) {
            (0, false) => format!("{} of that at {axis} = {}", of(v), human(x)),
            (0, true) => format!("{} at {axis} = {}", of(v), human(x)),
            _ => format!("{} at {}", of(v), human(x)),
        })
        .collect();
    if listed.is_empty() {
        return None;
    }
    let lowest = if share {
        value(worst)
    } else {
        format!(
            "{}, {}",
            crate::units::format_value(worst, unit),
            percent(worst / v0)
        )
    };
    let mut s = format!(
        "falls from {} at {axis} = {} to {}; lowest at {axis} = {} ({lowest})",
        value(v0),
        human(x0),
        listed.join(", "),
        human(at_worst),
    );
    if let Some(&(xl, vl)) = pts.last().filter(|p| p.0 > at_worst) {
        s += &format!(", {} again at {axis} = {}", of(vl), human(xl));
    }
    Some(s)
}

/// Where the peaks are, modulo the period itself: `0 (mod 32)`, `1, 3, …, 15 (mod 16)` (every
/// odd residue of 16; saying it `1 (mod 2)` beside `period 16` would read as two periods at odds
/// with each other). The one wording of the analysis's reading, its tables and the charts.
pub fn congruence(phases: &[f64], period: f64) -> String {
    let mut phases: Vec<f64> = phases.iter().map(|v| v.rem_euclid(period)).collect();
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
    format!("{} (mod {})", listed.join(", "), human(period))
}

/// One line: the period and its cause, the cost of one step past a peak, the knee, the best x.
/// Values are written in the unit that suits them ([`format_value`]: 20.85 TFLOP/s). A metric
/// that is `better` neither way (a count: ways, bytes, registers) falls past a peak; it costs
/// nothing.
pub fn reading(
    axis: &str,
    unit: &str,
    curve: &Curve,
    why: &Why,
    better: crate::spec::Better,
) -> String {
    use crate::units::format_value;
    let costs = if better == crate::spec::Better::Neither {
        "falls by"
    } else {
        "costs"
    };
    let mut parts = Vec::new();
    match &curve.period {
        Some(p) => {
            let mut s = format!(
                "period {} ({}), peaks at {axis} ≡ {}, {} confidence",
                human(p.period),
                why.primary,
                congruence(&p.peak_phases, p.period),
                p.level.as_str()
            );
            if let Some(d) = &curve.drop {
                s += &format!(
                    "; {axis} +{} past a peak {costs} {} ({})",
                    human(d.after),
                    percent(d.relative),
                    absolute(d.absolute, unit)
                );
            }
            if let Some(q) = &curve.secondary {
                s += &format!(
                    "; and period {} ({}), peaks at {axis} ≡ {}, {} confidence",
                    human(q.period),
                    why.secondary,
                    congruence(&q.peak_phases, q.period),
                    q.level.as_str()
                );
                if let (Some(c), Some(p)) = (curve.secondary_cost, &curve.period) {
                    // One grid step, as for the main period's drop (+8 on a grid of 8 threads).
                    let step = human(curve.drop.as_ref().map_or(1.0, |d| d.after));
                    let by = percent(c.abs());
                    s += &match (q.period < p.period, c >= 0.0) {
                        (true, true) => {
                            format!(", {axis} +{step} past its peaks between those {costs} {by}")
                        }
                        // A nested "drop" that is a rise is said as one, not as a negative cost.
                        (true, false) => format!(
                            ", but {axis} +{step} past its peaks between those is {by} better, \
                             not worse"
                        ),
                        (false, true) => format!(
                            ", {axis} +{step} past its peaks {costs} {by} more than past the others"
                        ),
                        (false, false) => format!(
                            ", but {axis} +{step} past its peaks {costs} {by} less than past the \
                             others"
                        ),
                    };
                }
            }
            if curve.two_sizes {
                s +=
                    "; its drops and the nested ones come in two sizes, told apart by a rank test \
                      over a few edges: at most medium confidence";
            }
            parts.push(s);
        }
        None => match &curve.guess {
            Some(g) => parts.push(format!(
                "no periodic structure (best guess: period {}, but {})",
                human(g.period),
                g.why
            )),
            None => parts.push("no periodic structure".to_string()),
        },
    }
    if !why.shape.is_empty() {
        parts.push(why.shape.clone());
        return parts.join("; ");
    }
    match (curve.knee, curve.knee_range) {
        (Some(k), Some(r)) if r.lo < r.hi => parts.push(format!(
            "ramp ends at {axis} = {} ({}–{} within u)",
            human(k),
            human(r.lo),
            human(r.hi)
        )),
        (Some(k), _) => parts.push(format!("ramp ends at {axis} = {}", human(k))),
        (None, Some(r)) if !r.sharp => parts.push(format!(
            "no sharp knee: the ramp bends between {axis} = {} and {}",
            human(r.lo),
            human(r.hi)
        )),
        (None, _) => {}
    }
    if let Some(b) = &curve.best {
        let tied = tied_words(&b.tied);
        if b.x_within_1pct == b.x {
            parts.push(format!(
                "best at {axis} = {} ({}{tied})",
                human_x(b.x),
                format_value(b.value, unit)
            ));
        } else {
            parts.push(format!(
                "best at {axis} = {} ({}{tied}), within 1 % already at {}",
                human_x(b.x),
                format_value(b.value, unit),
                human_x(b.x_within_1pct)
            ));
        }
    }
    parts.join("; ")
}

/// `; tied within u with 384, 448` for the x tied with the best (the first six, then how many
/// more); empty when none is.
fn tied_words(tied: &[f64]) -> String {
    const SHOWN: usize = 6;
    if tied.is_empty() {
        return String::new();
    }
    let xs: Vec<String> = tied.iter().take(SHOWN).map(|&x| human_x(x)).collect();
    let more = match tied.len().saturating_sub(SHOWN) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    format!("; tied within u with {}{more}", xs.join(", "))
}

/// The reading of a series whose every measured point has the same value (a setting or a count
/// the sweep does not move: `pitch_bytes` over `rows`): `the same at all 7 points along rows: 480
/// bytes`; `None` for fewer than two points or a curve that moves. Said instead of "no periodic
/// structure", and with no spread between processes: a value that never moved did not scatter.
pub fn constant(axis: &str, unit: &str, data: &[(f64, Option<f64>)]) -> Option<String> {
    let values: Vec<f64> = data.iter().filter_map(|p| p.1).collect();
    let first = *values.first()?;
    if values.len() < 2 || values.iter().any(|v| *v != first) {
        return None;
    }
    // In the unit that suits it, a whole number (a count, a size) without decimals: `480 bytes`,
    // not `480.0 bytes`.
    let value = crate::units::format_value(first, unit);
    let (number, rest) = value.split_once(' ').unwrap_or((&value, ""));
    let value = match number.parse::<f64>() {
        Ok(n) if number.contains('.') && n.fract() == 0.0 => {
            format!("{} {rest}", n as i64).trim_end().to_string()
        }
        _ => value,
    };
    Some(format!(
        "the same at all {} points along {axis}: {value}",
        values.len()
    ))
}

/// A relative spread between processes, `±0.5 %`; one that one decimal would write as `±0.0 %`
/// (a count, the same every time) is `under ±0.05 %`, as the reading says it.
fn plus_minus(u: f64) -> String {
    if u.abs() < 0.0005 {
        "under ±0.05 %".to_string()
    } else {
        format!("±{}", percent(u))
    }
}

/// A relative difference as [`percent`] writes it, but `under 0.05 %` where that would read
/// `0.0 %` (as if none were measured).
pub fn small_percent(f: f64) -> String {
    if f.abs() < 0.0005 {
        "under 0.05 %".to_string()
    } else {
        percent(f)
    }
}

/// The tail of a reading for a series whose points moved with where their buffers lay.
pub fn placement(axis: &str, p: &Placement) -> String {
    let mut s = format!(
        "; where the buffers lie moves {} of {} points beyond the {} target and the noise (marked `unstable`; placement spread up to {} at {axis} = {}, median {})",
        p.above,
        p.points,
        crate::store::mark::share(p.target),
        percent(p.max_spread),
        human(p.max_at),
        percent(p.median_spread)
    );
    if p.lowered {
        s += ", so the period's confidence is one level lower: that spread is at least half the drop after a peak";
    }
    s
}

/// The reading's clause when a nested period's steps are within the noise (see
/// [`super::Unsettled`]).
pub fn nesting_unsettled(curve: &Curve, u: super::Unsettled) -> String {
    let (Some(p), Some(q), Some(c)) = (&curve.period, &curve.secondary, curve.secondary_cost)
    else {
        return String::new();
    };
    let noise = percent(u.noise);
    // What the nested steps do, with their sign: a "step" that is a rise does not cost.
    let steps = if c >= 0.0 {
        format!("cost {}", percent(c))
    } else {
        format!("gain {}", percent(-c))
    };
    if u.main {
        format!(
            "; which of periods {} and {} is the main one is not settled (both confidences one \
             level lower): the nested steps {steps}, less than a point moves with where its \
             buffers lie or between processes ({noise})",
            human(p.period),
            human(q.period),
        )
    } else {
        format!(
            "; the nested period {} may not be there (its confidence one level lower): its steps \
             {steps}, less than a point moves with where its buffers lie or between processes \
             ({noise})",
            human(q.period),
        )
    }
}

/// The reading's clause on a metric's spread between processes (the control re-runs).
pub fn between_processes(b: &super::controls::BetweenProcesses, lowered: bool) -> String {
    if b.exact() {
        return format!(
            "; the same in all {} control re-runs: a computed value, it does not scatter between \
             processes",
            b.pairs
        );
    }
    let by = plus_minus(b.u95);
    let mut s = format!(
        "; between processes a value scatters by {by} (95 %, from {} control re-runs)",
        b.pairs
    );
    if lowered {
        s += ", so the period's confidence is one level lower: that is at least half the drop after a peak";
    }
    s
}

/// The paragraph under the analysis table on what the control re-runs measured.
pub fn between_processes_note(between: &[super::controls::BetweenProcesses]) -> String {
    if between.is_empty() {
        return "\nBetween processes: too few control re-runs to say (`controls.csv`).\n".into();
    }
    let mut out = format!(
        "\nBetween processes ({} points measured again in a fresh process, `controls.csv`): how far \
         a value scatters when its program runs again (95 %), beside each point's own `rel_ci`: the \
         metric's own pairs, or the median over the timed metrics where that is larger (what \
         differs between processes, the SM clock above all, is shared by every metric a program \
         times), or the range of the run's SM clock readings where that is larger still ({}); a \
         metric whose every pair agreed exactly is a computed value and keeps its own, none.\n\n",
        between.iter().map(|b| b.pairs).max().unwrap_or(0),
        small_percent(between[0].clock_range),
    );
    let rows: Vec<Vec<String>> = between.iter().map(|b| between_cells(b).to_vec()).collect();
    out += &crate::units::markdown_table(&BETWEEN_COLUMNS, &rows);
    out
}

/// The columns of the table of control re-runs, in analysis.md and report.html alike.
pub const BETWEEN_COLUMNS: [&str; 6] = [
    "metric",
    "pairs",
    "± 95 %",
    "own pairs alone",
    "largest pair difference",
    "outliers (> 6 sigma and 1 %, left out)",
];

/// One metric's row of that table, as text: [`BETWEEN_COLUMNS`].
pub fn between_cells(b: &super::controls::BetweenProcesses) -> [String; 6] {
    let outliers = if b.outliers.is_empty() {
        "-".to_string()
    } else {
        b.outliers
            .iter()
            .map(|(id, d)| format!("{id} ({:+.1} %)", 100.0 * d))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if b.exact() {
        return [
            b.column.clone(),
            b.pairs.to_string(),
            "none: every pair equal".to_string(),
            "none".to_string(),
            "none".to_string(),
            outliers,
        ];
    }
    [
        b.column.clone(),
        b.pairs.to_string(),
        plus_minus(b.u95),
        plus_minus(b.own_u95),
        format!("{} at {}", small_percent(b.max_diff), b.max_at),
        outliers,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_numbers_drop_dust_and_keep_four_digits() {
        assert_eq!(human(32.0), "32");
        assert_eq!(human(2713.4567), "2713");
        assert_eq!(human(0.091234), "0.09123");
        assert_eq!(human(12.5), "12.5");
        assert_eq!(human(f64::NAN), "-");
    }

    #[test]
    fn a_count_falls_past_a_peak_and_a_throughput_costs() {
        // A saw of period 16 in ways: 32 at multiples of 16, 2 elsewhere.
        let data: Vec<(f64, Option<f64>)> = (1..=64)
            .map(|x| (f64::from(x), Some(if x % 16 == 0 { 32.0 } else { 2.0 })))
            .collect();
        let curve = crate::analyze::analyze_curve(&data, crate::analyze::Sense::HigherIsBetter);
        assert!(curve.drop.is_some(), "a drop after the peaks");
        let why = Why::default();
        let count = reading("stride", "ways", &curve, &why, crate::spec::Better::Neither);
        assert!(
            count.contains("past a peak falls by 93.8 % (30.00 ways)"),
            "{count}"
        );
        assert!(!count.contains("cost"), "{count}");
        let rate = reading("stride", "GB/s", &curve, &why, crate::spec::Better::Higher);
        assert!(rate.contains("past a peak costs 93.8 %"), "{rate}");
    }

    /// memcpy beside a strided copy on an H100: 37 points within 1.5 %, scattering by ±1.8 %
    /// between processes, read "best at stride = 23"; it is flat within the noise. With a
    /// scatter of ±0.5 % the same points are not.
    #[test]
    fn a_curve_within_the_noise_is_flat_and_names_no_best() {
        let data: Vec<(f64, Option<f64>)> = (1..=37)
            .map(|i| (f64::from(i), Some(2800.0 + 42.0 * f64::from(i % 3) / 2.0)))
            .collect();
        assert_eq!(
            flat(&data, 0.018, "GB/s").as_deref(),
            Some(
                "flat within the noise: its 37 points span 1.5 % around 2.821 TB/s, no more \
                 than a value scatters between processes"
            )
        );
        assert_eq!(flat(&data, 0.005, "GB/s"), None);
        assert_eq!(flat(&data, 0.0, "GB/s"), None, "no spread measured");
    }

    /// copy at a stride on an H100 (about 2742 / stride up to 32, then rising again): no ramp,
    /// but what is left where the stride doubles, the lowest point and the last.
    #[test]
    fn a_curve_that_falls_from_its_first_x_says_how_not_where_a_ramp_ends() {
        let xs = [1.0, 2.0, 3.0, 4.0, 8.0, 16.0, 31.0, 32.0, 1024.0];
        let gbs = |x: f64| {
            if x <= 31.0 {
                2742.0 / x.powf(0.67)
            } else {
                400.0
            }
        };
        let data: Vec<(f64, Option<f64>)> = xs.iter().map(|&x| (x, Some(gbs(x)))).collect();
        let curve = crate::analyze::analyze_curve(&data, crate::analyze::Sense::HigherIsBetter);
        assert!(curve.period.is_none());
        let said = falls("stride", &data, &curve, "GB/s").unwrap();
        assert!(
            said.starts_with(
                "falls from 2.742 TB/s at stride = 1 to 62.9 % of that at stride = 2, 39.5 % at 4"
            ),
            "{said}"
        );
        assert!(said.contains("; lowest at stride = 31 ("), "{said}");
        assert!(said.ends_with("again at stride = 1024"), "{said}");
        // A fraction says its own values, one decimal.
        let share: Vec<(f64, Option<f64>)> = data
            .iter()
            .map(|&(x, v)| (x, v.map(|v| v / 2820.0)))
            .collect();
        let curve = crate::analyze::analyze_curve(&share, crate::analyze::Sense::HigherIsBetter);
        let said = falls("stride", &share, &curve, "fraction").unwrap();
        assert!(
            said.starts_with("falls from 97.2 % at stride = 1 to 61.1 % at stride = 2"),
            "{said}"
        );
        // A rising curve has a ramp, not a fall.
        let rising: Vec<(f64, Option<f64>)> = xs.iter().map(|&x| (x, Some(x))).collect();
        let curve = crate::analyze::analyze_curve(&rising, crate::analyze::Sense::HigherIsBetter);
        assert_eq!(falls("stride", &rising, &curve, "GB/s"), None);
    }

    /// threads_pitch on an H100 (a grid of 8 threads): a nested period 16 whose "steps" cost
    /// -0.5 % read "+1 past its peaks between those costs -0.5 %"; the step is 8 threads, and a
    /// rise is said as one. A fraction's drop is in percentage points beside the relative one.
    #[test]
    fn a_nested_step_is_one_grid_step_and_a_rise_is_not_a_negative_cost() {
        let data: Vec<(f64, Option<f64>)> = (1..=64)
            .map(|i| {
                let x = f64::from(8 * i);
                (x, Some(if i % 4 == 0 { 0.9 } else { 0.8 }))
            })
            .collect();
        let mut curve = crate::analyze::analyze_curve(&data, crate::analyze::Sense::HigherIsBetter);
        let p = curve.period.clone().expect("period 32");
        assert_eq!(p.period, 32.0);
        curve.secondary = Some(crate::analyze::curve::Period { period: 16.0, ..p });
        curve.secondary_cost = Some(-0.005);
        let why = Why::default();
        let r = reading(
            "threads",
            "fraction",
            &curve,
            &why,
            crate::spec::Better::Higher,
        );
        assert!(
            r.contains("; threads +8 past a peak costs 11.1 % (10.0 percentage points);"),
            "{r}"
        );
        assert!(
            r.contains(", but threads +8 past its peaks between those is 0.5 % better, not worse"),
            "{r}"
        );
        assert!(!r.contains("-0.5"), "{r}");
        let u = crate::analyze::Unsettled {
            noise: 0.033,
            main: false,
        };
        assert!(
            nesting_unsettled(&curve, u).contains(": its steps gain 0.5 %, less than"),
            "{}",
            nesting_unsettled(&curve, u)
        );
        curve.secondary_cost = Some(0.02);
        let r = reading("threads", "GB/s", &curve, &why, crate::spec::Better::Higher);
        assert!(
            r.contains(", threads +8 past its peaks between those costs 2.0 %"),
            "{r}"
        );
    }

    #[test]
    fn a_spread_between_processes_too_small_to_write_is_said_so() {
        let mut b = crate::analyze::controls::BetweenProcesses {
            column: "gb_per_s".into(),
            pairs: 4,
            rel_sd: 0.0,
            own_u95: 0.0,
            clock_range: 0.0,
            u95: 0.0,
            max_diff: 0.0001,
            max_at: "stride=57".into(),
            outliers: Vec::new(),
        };
        assert_eq!(
            between_processes(&b, false),
            "; between processes a value scatters by under ±0.05 % (95 %, from 4 control re-runs)"
        );
        // The table says it so too, not `±0.0 %`.
        assert_eq!(
            between_cells(&b)[2..5],
            [
                "under ±0.05 %",
                "under ±0.05 %",
                "under 0.05 % at stride=57"
            ]
        );
        // Every pair equal (a count the program computes): said so, not as a tiny spread.
        let exact = crate::analyze::controls::BetweenProcesses {
            max_diff: 0.0,
            ..b.clone()
        };
        assert_eq!(
            between_processes(&exact, false),
            "; the same in all 4 control re-runs: a computed value, it does not scatter between \
             processes"
        );
        assert_eq!(
            between_cells(&exact)[2..5],
            ["none: every pair equal", "none", "none"]
        );
        b.u95 = 0.014;
        assert!(between_processes(&b, false).contains("scatters by ±1.4 % (95 %"));
        assert_eq!(between_cells(&b)[2], "±1.4 %");
        // The note under the table: the SM clock did not move.
        assert!(
            between_processes_note(&[b]).contains("larger still (under 0.05 %)"),
            "the clock's range"
        );
    }

    #[test]
    fn a_series_that_never_moves_is_said_to_be_the_same_everywhere() {
        let flat = [
            (4096.0, Some(480.0)),
            (8192.0, None),
            (16384.0, Some(480.0)),
        ];
        assert_eq!(
            constant("rows", "bytes", &flat).as_deref(),
            Some("the same at all 2 points along rows: 480 bytes")
        );
        let rate = [(1.0, Some(2180.0)), (2.0, Some(2180.0))];
        assert_eq!(
            constant("rows", "GB/s", &rate).as_deref(),
            Some("the same at all 2 points along rows: 2.180 TB/s")
        );
        let moves = [(1.0, Some(480.0)), (2.0, Some(481.0))];
        assert_eq!(constant("rows", "bytes", &moves), None);
        assert_eq!(
            constant("rows", "bytes", &[(1.0, Some(480.0))]),
            None,
            "one point"
        );
    }

    #[test]
    fn peaks_are_said_modulo_the_period_itself() {
        assert_eq!(congruence(&[0.0], 32.0), "0 (mod 32)");
        assert_eq!(congruence(&[1.0, 3.0, 5.0, 7.0], 8.0), "1, 3, 5, 7 (mod 8)");
        let odd: Vec<f64> = (0..8).map(|k| f64::from(2 * k + 1)).collect();
        assert_eq!(congruence(&odd, 16.0), "1, 3, …, 15 (mod 16)");
        assert_eq!(congruence(&[5.0, 1.0, 18.0], 8.0), "1, 2, 5 (mod 8)");
    }
}
