//! Units people read: a rate in the spec's unit (MFlops, GB/s) shown with the SI prefix that suits
//! the values at hand (20849700 MFlops as 20.85 TFLOP/s, 3000 GB/s as 3 TB/s). One scale is chosen
//! once per chart axis or table column from its largest value ([`scale_unit`]), and every number
//! of that chart or column is written in it ([`Scale::show`]); [`format_value`] does both for one
//! number. Charts, tables, the report, compare and the xlsx all call these.

/// How values in a spec's unit are shown: divided by `divisor`, in `unit`.
#[derive(Clone, Debug, PartialEq)]
pub struct Scale {
    pub divisor: f64,
    pub unit: String,
}

impl Scale {
    /// The scale for values in `unit` whose largest magnitude is `max`.
    pub fn for_max(unit: &str, max: f64) -> Scale {
        let (divisor, unit) = scale_unit(unit, max);
        Scale { divisor, unit }
    }

    /// `value` in this scale, with 4 significant digits and its unit: `20.85 TFLOP/s`.
    pub fn show(&self, value: f64) -> String {
        let v = four_digits(value / self.divisor);
        if self.unit.is_empty() {
            v
        } else {
            format!("{v} {}", self.unit)
        }
    }
}

/// A value with its unit as people read it, in the scale [`scale_unit`] picks for it and with four
/// significant digits: 96844.99 MFlops is `96.84 GFLOP/s`, 450 GB/s stays `450.0 GB/s`, 12.5 ms
/// (a unit it does not scale) `12.50 ms`; a value that is not a number is `-`. The one place a
/// single value meets its unit: the progress line, the closing summary.
pub fn format_value(value: f64, unit: &str) -> String {
    if !value.is_finite() {
        return "-".to_string();
    }
    let (div, unit) = scale_unit(unit, value.abs());
    let v = four_digits(value / div);
    if unit.is_empty() {
        v
    } else {
        format!("{v} {unit}")
    }
}

/// `v` with four significant digits, trailing zeros kept (`16.00`, `143.6`), and whole numbers of
/// five digits or more in full (`20836`).
pub fn four_digits(v: f64) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    let magnitude = v.abs().log10().floor() as i32;
    // Far from 1, in exponent form (`1.000e308`, `4.941e-324`): in full, 1e308 has 309 digits.
    if !(-6..16).contains(&magnitude) {
        return format!("{v:.3e}");
    }
    let decimals = (3 - magnitude).clamp(0, 12) as usize;
    let s = format!("{v:.decimals$}");
    // Rounding up may add a digit (9.9996 -> 10.000): one decimal fewer then.
    let grew = s
        .parse::<f64>()
        .is_ok_and(|r| r.abs() >= 10f64.powi(magnitude + 1));
    if decimals > 0 && grew {
        format!("{v:.0$}", decimals - 1)
    } else {
        s
    }
}

/// [`scale_unit`] for `values`: the scale their largest magnitude reads best in. The one place
/// that takes that maximum, for a series, a family, a chart's bars and a sheet's columns.
pub fn scale_for(unit: &str, values: impl IntoIterator<Item = f64>) -> (f64, String) {
    scale_unit(unit, values.into_iter().map(f64::abs).fold(0.0, f64::max))
}

/// A rate unit rescaled for people: values in `unit` whose largest magnitude is `max` become
/// values / divisor in the returned unit (MFlops of 2e7 are 20 TFLOP/s; GB/s of 3000, 3 TB/s); a
/// fraction is a percentage (0.9696 is 96.96 %, occupancy 1 is 100.0 %). Units it does not know
/// stay as they are (divisor 1).
pub fn scale_unit(unit: &str, max: f64) -> (f64, String) {
    let key = unit.to_ascii_lowercase().replace(' ', "");
    if key == "fraction" {
        return (0.01, "%".to_string());
    }
    let base = match key.as_str() {
        "flops" | "flop/s" => Some((1.0, "FLOP/s")),
        "kflops" | "kflop/s" => Some((1e3, "FLOP/s")),
        "mflops" | "mflop/s" => Some((1e6, "FLOP/s")),
        "gflops" | "gflop/s" => Some((1e9, "FLOP/s")),
        "tflops" | "tflop/s" => Some((1e12, "FLOP/s")),
        "b/s" => Some((1.0, "B/s")),
        "kb/s" => Some((1e3, "B/s")),
        "mb/s" => Some((1e6, "B/s")),
        "gb/s" => Some((1e9, "B/s")),
        "tb/s" => Some((1e12, "B/s")),
        _ => None,
    };
    let Some((factor, name)) = base.filter(|_| max.is_finite() && max > 0.0) else {
        return (1.0, unit.to_string());
    };
    let v = max * factor;
    let (p, prefix) = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|(p, _)| v >= *p)
        .unwrap_or((1.0, ""));
    (p / factor, format!("{prefix}{name}"))
}

/// What a quantity in `unit` is, in words, for an axis: `throughput` for FLOP/s, `bandwidth` for
/// bytes per second, `time` for seconds; `None` for a unit it does not know.
pub fn quantity(unit: &str) -> Option<&'static str> {
    let u = unit.to_ascii_lowercase().replace(' ', "");
    if u.ends_with("flops") || u.ends_with("flop/s") {
        Some("throughput")
    } else if u.ends_with("b/s") {
        Some("bandwidth")
    } else if ["s", "ms", "us", "µs", "ns"].contains(&u.as_str()) {
        Some("time")
    } else {
        None
    }
}

/// `text` (an axis value, a series or point name, read from a CSV) with its control characters
/// escaped (`\n`, `\u{1b}`): a line break would tear the line of a Markdown table or list, an
/// ANSI escape would act on the terminal `sweep analyze` and `sweep compare` print to.
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return text.into();
    }
    text.chars()
        .map(|c| match c.is_control() {
            true => c.escape_debug().to_string(),
            false => c.to_string(),
        })
        .collect::<String>()
        .into()
}

/// A Markdown table whose columns line up in a terminal as well as in a renderer: every cell padded
/// to its column's width (in characters), `|` inside a cell escaped. analysis.md, compare.md and
/// what `sweep analyze` and `sweep compare` print.
pub fn markdown_table(head: &[&str], rows: &[Vec<String>]) -> String {
    let cell = |c: &str| visible(c).replace('|', "\\|");
    let mut width: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, c) in width.iter_mut().zip(row) {
            *w = (*w).max(cell(c).chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&width)
            .map(|(c, w)| format!("{c}{}", " ".repeat(w.saturating_sub(c.chars().count()))))
            .collect();
        format!("| {} |\n", padded.join(" | "))
    };
    let mut out = line(head.iter().map(|h| cell(h)).collect());
    out += &format!(
        "|{}|\n",
        width
            .iter()
            .map(|w| "-".repeat(w + 2))
            .collect::<Vec<_>>()
            .join("|")
    );
    for row in rows {
        out += &line(row.iter().map(|c| cell(c)).collect());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_shown_in_the_unit_people_read() {
        assert_eq!(scale_unit("MFlops", 2.08e7), (1e6, "TFLOP/s".into()));
        assert_eq!(scale_unit("MFlops", 143_755.0), (1e3, "GFLOP/s".into()));
        assert_eq!(scale_unit("GB/s", 3000.0), (1e3, "TB/s".into()));
        assert_eq!(scale_unit("GB/s", 450.0), (1.0, "GB/s".into()));
        assert_eq!(scale_unit("ms", 12.0), (1.0, "ms".into()));
        assert_eq!(scale_unit("MFlops", 0.0), (1.0, "MFlops".into()));
    }

    #[test]
    fn a_fraction_is_a_percentage() {
        assert_eq!(scale_unit("fraction", 1.0), (0.01, "%".into()));
        assert_eq!(format_value(0.969_6, "fraction"), "96.96 %");
        assert_eq!(format_value(1.0, "fraction"), "100.0 %");
        assert_eq!(format_value(0.5, "fraction"), "50.00 %");
    }

    #[test]
    fn one_value_is_written_with_four_digits_and_its_unit() {
        assert_eq!(format_value(20_849_700.0, "MFlops"), "20.85 TFLOP/s");
        assert_eq!(format_value(143_575.0, "MFlops"), "143.6 GFLOP/s");
        assert_eq!(format_value(2_787_945.0, "MFlops"), "2.788 TFLOP/s");
        assert_eq!(format_value(3000.0, "GB/s"), "3.000 TB/s");
        assert_eq!(format_value(12.5, "ms"), "12.50 ms");
        assert_eq!(format_value(0.25, ""), "0.2500");
        // A column's scale is chosen once, from its largest value.
        let s = Scale::for_max("MFlops", 2.08e7);
        assert_eq!(s.show(143_575.0), "0.1436 TFLOP/s");
    }

    #[test]
    fn quantities_are_named_from_their_unit() {
        assert_eq!(quantity("MFlops"), Some("throughput"));
        assert_eq!(quantity("GB/s"), Some("bandwidth"));
        assert_eq!(quantity("ms"), Some("time"));
        assert_eq!(quantity("ways"), None);
    }
    #[test]
    fn a_markdown_table_pads_every_column_to_its_widest_cell() {
        let t = markdown_table(
            &["series", "period"],
            &[
                vec!["a|b".into(), "32".into()],
                vec!["copy_gb_per_s".into(), "none".into()],
            ],
        );
        assert_eq!(
            t,
            "| series        | period |\n\
             |---------------|--------|\n\
             | a\\|b          | 32     |\n\
             | copy_gb_per_s | none   |\n"
        );
    }
}
