//! The legend of a chart: what each colour and mark means, in a column of its own right of the
//! plot, so that it never covers data (plotters' own legend box sits inside the plot).

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Width of the legend column, in pixels.
pub(crate) const WIDTH: u32 = 260;
/// Height of one entry.
const ROW: i32 = 20;
/// Left of the swatches, and their width; the text starts after them.
const INSET: i32 = 8;
const SWATCH: i32 = 24;
/// The widest label text (longer ones end in `…`).
const TEXT_W: u32 = WIDTH - (INSET + SWATCH + 8 + 6) as u32;
const FONT: (&str, u32) = ("sans-serif", 13);

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

/// The rows of a legend `height` pixels high: the entries in order while they fit; when they do
/// not, the last row says how many more there are (`… and 5 more`).
pub(crate) fn rows(entries: &[Entry], height: u32) -> (Vec<&Entry>, Option<String>) {
    let fit = ((height as i32 - 2 * INSET) / ROW).max(1) as usize;
    if entries.len() <= fit {
        return (entries.iter().collect(), None);
    }
    let shown = fit - 1;
    (
        entries[..shown].iter().collect(),
        Some(format!("… and {} more", entries.len() - shown)),
    )
}

/// `label` cut to `max` pixels wide (as `width` measures text), ending in `…` when cut.
pub(crate) fn fit(label: &str, max: u32, width: impl Fn(&str) -> u32) -> String {
    if width(label) <= max {
        return label.to_string();
    }
    let chars: Vec<char> = label.chars().collect();
    (0..chars.len())
        .rev()
        .map(|n| format!("{}…", chars[..n].iter().collect::<String>().trim_end()))
        .find(|s| width(s) <= max)
        .unwrap_or_else(|| "…".to_string())
}

/// Draws the legend into `area` (the column right of the plot), from its top.
pub(crate) fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[Entry],
) -> Result<(), String> {
    let e = |e: &dyn std::fmt::Display| e.to_string();
    let (_, height) = area.dim_in_pixel();
    let (shown, more) = rows(entries, height);
    let font = FONT.into_font();
    let width = |t: &str| {
        font.box_size(t)
            .map_or(t.chars().count() as u32 * 8, |b| b.0)
    };
    let style = TextStyle::from(FONT.into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    let x = INSET;
    for (i, entry) in shown.iter().enumerate() {
        let y = INSET + ROW / 2 + i as i32 * ROW;
        swatch(area, entry, (x, y)).map_err(|x| e(&x))?;
        area.draw(&Text::new(
            fit(&entry.label, TEXT_W, width),
            (x + SWATCH + 8, y),
            style.clone(),
        ))
        .map_err(|x| e(&x))?;
    }
    if let Some(more) = more {
        let y = INSET + ROW / 2 + shown.len() as i32 * ROW;
        area.draw(&Text::new(more, (x, y), style))
            .map_err(|x| e(&x))?;
    }
    Ok(())
}

fn swatch<DB: DrawingBackend>(
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(n: usize) -> Vec<Entry> {
        (0..n)
            .map(|i| Entry::new(format!("v{i}"), Swatch::Line, BLACK))
            .collect()
    }

    #[test]
    fn entries_that_do_not_fit_are_counted_on_the_last_row() {
        // 200 pixels hold 9 rows of 20 below the inset.
        let few = entries(9);
        let (shown, more) = rows(&few, 200);
        assert_eq!((shown.len(), more), (9, None));
        let many = entries(30);
        let (shown, more) = rows(&many, 200);
        assert_eq!(shown.len(), 8);
        assert_eq!(shown[7].label, "v7");
        assert_eq!(more.as_deref(), Some("… and 22 more"));
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
}
