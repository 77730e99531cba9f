//! The legend of a chart: what each colour and mark means, in a column of its own right of the
//! plot, so that it never covers data (plotters' own legend box sits inside the plot).

use super::ChartError;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Width of the legend column, in pixels (at the default size; narrower on a small chart).
pub(crate) const WIDTH: u32 = 260;
/// Height of one entry of one line; a wrapped entry's second line adds [`LINE`].
const ROW: i32 = 20;
const LINE: i32 = 14;
/// Left of the swatches, and their width; the text starts after them.
const INSET: i32 = 8;
const SWATCH: i32 = 24;
/// Pixels of the column left of an entry's text and right of it.
const BESIDE_TEXT: u32 = (INSET + SWATCH + 8 + 6) as u32;
/// The font: 13 px, 11 px in a column narrower than [`NARROW`] (a small chart's).
const FONT: (&str, u32) = ("sans-serif", 13);
const NARROW: u32 = 200;
const SMALL_FONT: (&str, u32) = ("sans-serif", 11);

/// How an entry is shown: a sample of the mark as drawn on the chart.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Swatch {
    Line,
    Dashed,
    Ring,
    Cross,
    Triangle,
    /// A filled box (a band, or a bar).
    Fill,
    /// The period's bracket.
    Bracket,
    /// A nested period's bracket: drawn thicker, on the row under the main one's.
    NestedBracket,
    /// The best point: a star.
    Star,
    /// A curve's line over its band, in the band's tint of the line's colour: an overlay's curve
    /// and the uncertainty around it in one entry (the tint tells the bands apart, as the lines).
    LineOnBand,
    /// A rug: short ticks standing on the plot's floor, one per marked point.
    Rug,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Entry {
    pub label: String,
    pub swatch: Swatch,
    pub colour: RGBColor,
}

impl Entry {
    pub(crate) fn new(label: impl Into<String>, swatch: Swatch, colour: RGBColor) -> Entry {
        Entry {
            label: label.into(),
            swatch,
            colour,
        }
    }
}

/// The rows of a legend `height` pixels high, each entry's text in one or two lines: the entries
/// in order while they fit; when they do not, the last row says how many more there are
/// (`… and 5 more`).
pub(crate) fn rows<'a>(
    entries: &'a [Entry],
    lines: &[Vec<String>],
    height: u32,
) -> (Vec<(&'a Entry, Vec<String>)>, Option<String>) {
    let room = height as i32 - 2 * INSET;
    let tall = |l: &Vec<String>| ROW + LINE * (l.len().max(1) as i32 - 1);
    let mut shown = Vec::new();
    let mut used = 0;
    for (i, (e, l)) in entries.iter().zip(lines).enumerate() {
        // The last entry needs only its own room; another keeps a row for `… and n more`.
        let need = tall(l) + if i + 1 < entries.len() { ROW } else { 0 };
        if used + need > room && !(shown.is_empty() && i + 1 == entries.len()) {
            return (shown, Some(format!("… and {} more", entries.len() - i)));
        }
        used += tall(l);
        shown.push((e, l.clone()));
    }
    (shown, None)
}

/// `label` in at most two lines of `max` pixels (as `width` measures text): broken at the last
/// space (or `_`, `,`, `=`) that lets the first line fit, the second cut with `…` if it must be.
/// Only the label's first characters that two lines could hold are looked at ([`head`]).
pub(crate) fn wrap(label: &str, max: u32, width: impl Fn(&str) -> u32) -> Vec<String> {
    let (label, cut) = head(label, 2 * max as usize + 2);
    if !cut && width(label) <= max {
        return vec![label.to_string()];
    }
    // At a space where one lets the first line fit; inside a name (`threads_1_512`) only if
    // none does.
    let breaks = |at: &[char]| -> Vec<usize> {
        label
            .char_indices()
            .filter(|(_, c)| at.contains(c))
            .map(|(i, c)| i + c.len_utf8())
            .collect()
    };
    let fits = |i: &usize| width(label[..*i].trim_end()) <= max;
    let at =
        last_that(&breaks(&[' ']), fits).or_else(|| last_that(&breaks(&['_', ',', '=']), fits));
    match at.as_ref() {
        Some(&i) => vec![
            label[..i].trim_end().to_string(),
            fit_head(label[i..].trim_start(), cut, max, &width),
        ],
        None => vec![fit_head(label, cut, max, width)],
    }
}

/// `label` cut to `max` pixels wide (as `width` measures text), ending in `…` when cut. Only its
/// first characters that `max` pixels could hold are measured ([`head`]).
pub(crate) fn fit(label: &str, max: u32, width: impl Fn(&str) -> u32) -> String {
    let (label, cut) = head(label, max as usize + 1);
    fit_head(label, cut, max, width)
}

/// [`fit`] of the head of a label, `cut` when the label went on past it: then it ends in `…`
/// whatever its width.
fn fit_head(label: &str, cut: bool, max: u32, width: impl Fn(&str) -> u32) -> String {
    if !cut && width(label) <= max {
        return label.to_string();
    }
    let chars: Vec<char> = label.chars().collect();
    let shown = |n: usize| format!("{}…", chars[..n].iter().collect::<String>().trim_end());
    let lengths: Vec<usize> = (0..=chars.len()).collect();
    last_that(&lengths, |&n| width(&shown(n)) <= max).map_or_else(|| "…".to_string(), shown)
}

/// The first `n` characters of `text`, and whether it goes on past them. No character is
/// narrower than a pixel (but those that take no room), so a label longer than the pixels it
/// must fit in is cut whatever its characters: measuring all of a 2 MB axis value, a few dozen
/// times for one chart, took minutes; now only what could be shown is measured.
pub(crate) fn head(text: &str, n: usize) -> (&str, bool) {
    match text.char_indices().nth(n) {
        Some((at, _)) => (&text[..at], true),
        None => (text, false),
    }
}

/// The last of `items` that `fits`, found by halving: text grows wider with each character, so
/// what fits is a prefix of `items`. Measuring every length from the end took minutes for a
/// label of 40,000 characters (a long axis value).
fn last_that<T: Copy>(items: &[T], fits: impl Fn(&T) -> bool) -> Option<T> {
    match items.partition_point(fits) {
        0 => None,
        n => items.get(n - 1).copied(),
    }
}

/// Draws the legend into `area` (the column right of the plot), from its top, in a smaller font
/// when the column is narrower than [`NARROW`]; a label too long for one line takes two.
pub(crate) fn draw<DB: DrawingBackend<ErrorType: 'static>>(
    area: &DrawingArea<DB, Shift>,
    entries: &[Entry],
) -> Result<(), ChartError> {
    let (w, height) = area.dim_in_pixel();
    let face = if w < NARROW { SMALL_FONT } else { FONT };
    let font = face.into_font();
    let width = |t: &str| {
        font.box_size(t)
            .map_or(t.chars().count() as u32 * face.1 * 3 / 5, |b| b.0)
    };
    let text_w = w.saturating_sub(BESIDE_TEXT).max(20);
    let lines: Vec<Vec<String>> = entries
        .iter()
        .map(|en| wrap(&en.label, text_w, width))
        .collect();
    let (shown, more) = rows(entries, &lines, height);
    let style = TextStyle::from(face.into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    let x = INSET;
    let mut y = INSET + ROW / 2;
    for (entry, lines) in &shown {
        swatch(area, entry, (x, y))?;
        for (k, line) in lines.iter().enumerate() {
            area.draw(&Text::new(
                line.clone(),
                (x + SWATCH + 8, y + k as i32 * LINE),
                style.clone(),
            ))?;
        }
        y += ROW + LINE * (lines.len() as i32 - 1);
    }
    if let Some(more) = more {
        area.draw(&Text::new(more, (x, y), style))?;
    }
    Ok(())
}

/// How opaque an overlay's bands are drawn over white (and their swatches, [`on_white`]).
pub(crate) const BAND_ALPHA: f64 = 0.2;

/// `c` at opacity `alpha` over white, as one opaque colour: a legend's swatch shows a band as
/// the plot shows it.
pub(crate) fn on_white(c: RGBColor, alpha: f64) -> RGBColor {
    let mix = |v: u8| (255.0 - alpha * (255.0 - f64::from(v))).round() as u8;
    RGBColor(mix(c.0), mix(c.1), mix(c.2))
}

fn swatch<DB: DrawingBackend<ErrorType: 'static>>(
    area: &DrawingArea<DB, Shift>,
    entry: &Entry,
    (x, y): (i32, i32),
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let c = entry.colour;
    let mid = (x + SWATCH / 2, y);
    match entry.swatch {
        Swatch::Line => area.draw(&PathElement::new(
            vec![(x, y), (x + SWATCH, y)],
            c.stroke_width(2),
        )),
        Swatch::Dashed => {
            for k in [0, 10, 20] {
                area.draw(&PathElement::new(
                    vec![(x + k, y), (x + (k + 6).min(SWATCH), y)],
                    c.stroke_width(2),
                ))?;
            }
            Ok(())
        }
        Swatch::Ring => area.draw(&Circle::new(mid, 5, c.stroke_width(1))),
        Swatch::Cross => area.draw(&Cross::new(mid, 4, c.stroke_width(2))),
        Swatch::Triangle => area.draw(&TriangleMarker::new(mid, 4, c.filled())),
        Swatch::Fill => area.draw(&Rectangle::new(
            [(x, y - 5), (x + SWATCH, y + 5)],
            c.filled(),
        )),
        Swatch::Bracket => area.draw(&PathElement::new(
            vec![(x, y + 4), (x, y), (x + SWATCH, y), (x + SWATCH, y + 4)],
            c.stroke_width(1),
        )),
        Swatch::NestedBracket => area.draw(&PathElement::new(
            vec![(x, y + 4), (x, y), (x + SWATCH, y), (x + SWATCH, y + 4)],
            c.stroke_width(2),
        )),
        Swatch::Star => {
            for (r, colour) in [(8, BLACK), (6, c)] {
                let at: Vec<(i32, i32)> = star(r)
                    .into_iter()
                    .map(|(dx, dy)| (mid.0 + dx, mid.1 + dy))
                    .collect();
                area.draw(&Polygon::new(at, colour.filled()))?;
            }
            Ok(())
        }
        Swatch::LineOnBand => {
            area.draw(&Rectangle::new(
                [(x, y - 6), (x + SWATCH, y + 6)],
                on_white(c, BAND_ALPHA).filled(),
            ))?;
            area.draw(&PathElement::new(
                vec![(x, y), (x + SWATCH, y)],
                c.stroke_width(2),
            ))
        }
        Swatch::Rug => {
            // As the plot draws them: filled pixels, which no anti-aliasing pales.
            for k in [1, 5, 9, 15, 21] {
                area.draw(&Rectangle::new(
                    [(x + k, y - 3), (x + k + 2, y + 5)],
                    c.filled(),
                ))?;
            }
            Ok(())
        }
    }
}

/// A five-pointed star of outer radius `r` pixels around (0, 0), point up: the best point's mark.
pub(crate) fn star(r: i32) -> Vec<(i32, i32)> {
    (0..10)
        .map(|k| {
            let radius = if k % 2 == 0 {
                f64::from(r)
            } else {
                0.45 * f64::from(r)
            };
            let a = std::f64::consts::PI * (f64::from(k) / 5.0 - 0.5);
            (
                (radius * a.cos()).round() as i32,
                (radius * a.sin()).round() as i32,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(n: usize) -> Vec<Entry> {
        (0..n)
            .map(|i| Entry::new(format!("v{i}"), Swatch::Line, BLACK))
            .collect()
    }

    fn one_line(entries: &[Entry]) -> Vec<Vec<String>> {
        entries.iter().map(|e| vec![e.label.clone()]).collect()
    }

    #[test]
    fn entries_that_do_not_fit_are_counted_on_the_last_row() {
        // 200 pixels hold 9 rows of 20 below the inset.
        let few = entries(9);
        let (shown, more) = rows(&few, &one_line(&few), 200);
        assert_eq!((shown.len(), more), (9, None));
        let many = entries(30);
        let (shown, more) = rows(&many, &one_line(&many), 200);
        assert_eq!(shown.len(), 8);
        assert_eq!(shown[7].0.label, "v7");
        assert_eq!(more.as_deref(), Some("… and 22 more"));
        // Wrapped entries take more room: 4 of two lines (34 px each) and the `more` row.
        let two: Vec<Vec<String>> = many.iter().map(|_| vec!["a".into(), "b".into()]).collect();
        let (shown, more) = rows(&many, &two, 200);
        assert_eq!((shown.len(), more.as_deref()), (4, Some("… and 26 more")));
    }

    #[test]
    fn long_labels_wrap_to_a_second_line_before_they_are_cut() {
        let w = |t: &str| 7 * t.chars().count() as u32;
        assert_eq!(wrap("every thread", 100, w), ["every thread"]);
        assert_eq!(
            wrap("first half of the threads", 100, w),
            ["first half of", "the threads"]
        );
        assert_eq!(
            wrap("band: 95 % CI, placements", 100, w),
            ["band: 95 % CI,", "placements"]
        );
        // No break fits: cut on one line.
        assert_eq!(wrap("abcdefghijklmnopq", 100, w), ["abcdefghijklm…"]);
    }

    #[test]
    fn a_band_s_swatch_is_its_colour_on_white() {
        // The series chart's band: the data's blue at 25 % (the colour tests/report.rs seeks).
        assert_eq!(
            on_white(RGBColor(31, 119, 180), 0.25),
            RGBColor(199, 221, 236)
        );
        assert_eq!(on_white(BLACK, 0.0), WHITE);
        assert_eq!(on_white(BLACK, 1.0), BLACK);
    }

    #[test]
    fn long_labels_are_cut_with_an_ellipsis() {
        let w = |t: &str| 7 * t.chars().count() as u32;
        assert_eq!(fit("global_vec1", 100, w), "global_vec1");
        let cut = fit("A: output/copy_stride/20261124T100000Z", 100, w);
        assert!(cut.ends_with('…') && w(&cut) <= 100, "{cut}");
        assert_eq!(cut, "A: output/cop…");
        assert_eq!(fit("abc", 3, w), "…");
    }

    #[test]
    fn a_label_of_40000_characters_is_cut_and_wrapped_in_few_measurements() {
        let calls = std::cell::Cell::new(0);
        let w = |t: &str| {
            calls.set(calls.get() + 1);
            7 * t.chars().count() as u32
        };
        let long = format!("s={}", "x".repeat(40_000));
        assert_eq!(fit(&long, 100, w), "s=xxxxxxxxxxx…");
        let spaced = "ab ".repeat(20_000);
        assert_eq!(wrap(&spaced, 100, w), ["ab ab ab ab ab", "ab ab ab ab a…"]);
        assert!(calls.get() < 200, "{} measurements", calls.get());
    }
}
