//! The font for chart text. plotters (with ab_glyph) draws text only with a registered TrueType
//! font: `SWEEP_FONT` when set, else DejaVu Sans, built into sweep (assets/fonts, its licence
//! beside it), so that every PNG has its text on any host and looks the same on all of them; a
//! font of the machine only when that fails.
//!
//! The PNG and PDF of a chart are made from its SVG with resvg and svg2pdf, whose font database
//! holds that same font alone (never the machine's fonts), as every generic family.

use super::ChartError;
use plotters::style::{register_font, FontStyle};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where fonts usually are; the first readable one wins. `SWEEP_FONT` comes before all of them.
const CANDIDATES: [&str; 8] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/liberation-sans/LiberationSans-Regular.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
    "C:\\Windows\\Fonts\\arial.ttf",
];

/// Folders searched for any `.ttf` when none of the candidates is there.
const FOLDERS: [&str; 2] = ["/usr/share/fonts", "/usr/local/share/fonts"];

/// DejaVu Sans (Bitstream Vera licence: assets/fonts/DejaVuSans.LICENSE).
static BUILT_IN: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

/// Registers a font once; whether text can be drawn.
pub(crate) fn ensure() -> bool {
    static READY: OnceLock<bool> = OnceLock::new();
    *READY.get_or_init(|| {
        if let Some(p) = std::env::var_os("SWEEP_FONT").map(PathBuf::from) {
            if register(&p) {
                return true;
            }
        }
        if register_font("sans-serif", FontStyle::Normal, BUILT_IN).is_ok() {
            return true;
        }
        CANDIDATES
            .iter()
            .map(PathBuf::from)
            .chain(any_ttf())
            .any(|p| register(&p))
    })
}

/// The font database of resvg and svg2pdf: `SWEEP_FONT` when it loads, else the built-in font,
/// answering for every family an SVG may name.
fn fontdb() -> std::sync::Arc<resvg::usvg::fontdb::Database> {
    use resvg::usvg::fontdb::Database;
    static DB: OnceLock<std::sync::Arc<Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = Database::new();
        if let Some(p) = std::env::var_os("SWEEP_FONT") {
            let _ = db.load_font_file(p);
        }
        if db.is_empty() {
            db.load_font_data(BUILT_IN.to_vec());
        }
        let family = db
            .faces()
            .next()
            .and_then(|f| f.families.first().map(|(name, _)| name.clone()))
            .unwrap_or_else(|| "DejaVu Sans".to_string());
        db.set_sans_serif_family(family.clone());
        db.set_serif_family(family.clone());
        db.set_monospace_family(family.clone());
        db.set_cursive_family(family.clone());
        db.set_fantasy_family(family);
        std::sync::Arc::new(db)
    })
    .clone()
}

/// `svg` parsed with the chart font.
fn tree(svg: &str) -> Result<resvg::usvg::Tree, ChartError> {
    let db = fontdb();
    let family = db
        .faces()
        .next()
        .and_then(|f| f.families.first().map(|(name, _)| name.clone()))
        .unwrap_or_default();
    let options = resvg::usvg::Options {
        font_family: family,
        fontdb: db,
        ..Default::default()
    };
    resvg::usvg::Tree::from_str(svg, &options).map_err(ChartError::Svg)
}

/// `svg` rasterised: a PNG of its size on white, text antialiased in the chart font.
pub(crate) fn png(svg: &str) -> Result<Vec<u8>, ChartError> {
    let tree = tree(svg)?;
    let size = tree.size().to_int_size();
    // The pixels asked for first, so that a want of memory is this chart's error, not an abort
    // of sweep (review 12a H2: `memory allocation of 3326400 bytes failed` under `ulimit -v`).
    let bytes = (size.width() as usize) * (size.height() as usize) * 4;
    let mut data: Vec<u8> = Vec::new();
    data.try_reserve_exact(bytes)
        .map_err(|_| ChartError::NoMemory { bytes })?;
    data.resize(bytes, 0);
    let mut pixmap = resvg::tiny_skia::IntSize::from_wh(size.width(), size.height())
        .and_then(|s| resvg::tiny_skia::Pixmap::from_vec(data, s))
        .ok_or(ChartError::NoPixels)?;
    pixmap.fill(resvg::tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| ChartError::Png(Box::new(e)))
}

/// `svg` as a one-page PDF, text as the chart font's glyphs.
pub(crate) fn pdf(svg: &str) -> Result<Vec<u8>, ChartError> {
    let tree = tree(svg)?;
    svg2pdf::to_pdf(
        &tree,
        svg2pdf::ConversionOptions::default(),
        svg2pdf::PageOptions::default(),
    )
    .map_err(ChartError::Pdf)
}

fn register(path: &Path) -> bool {
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    // plotters keeps the font for the life of the process; it is read once.
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    register_font("sans-serif", FontStyle::Normal, bytes).is_ok()
}

/// The first `.ttf` (by path, so the choice is stable) under the usual font folders.
fn any_ttf() -> Option<PathBuf> {
    FOLDERS.iter().find_map(|dir| {
        let mut found: Vec<PathBuf> = walkdir::WalkDir::new(dir)
            .max_depth(4)
            .into_iter()
            .filter_map(Result::ok)
            .map(|e| e.into_path())
            .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("ttf")))
            .collect();
        found.sort();
        found.into_iter().next()
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_built_in_font_draws_text_on_any_host() {
        // Holds with no font on the machine at all: the font is inside the binary.
        assert!(ab_glyph_parses(super::BUILT_IN));
        assert!(super::ensure());
    }

    #[test]
    fn png_and_pdf_come_from_the_svg_with_its_text() {
        let svg = r#"<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40"><text x="4" y="24" font-family="sans-serif" font-size="16">580.159.04</text></svg>"#;
        let png = super::png(svg).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        // The text is drawn: some pixels are neither white nor black (antialiased edges).
        let bare =
            super::png(r#"<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40"></svg>"#)
                .unwrap();
        assert!(png.len() > bare.len() + 200, "no text drawn");
        let pdf = super::pdf(svg).unwrap();
        assert!(pdf.starts_with(b"%PDF-"));
        assert!(super::png("<svg")
            .unwrap_err()
            .to_string()
            .starts_with("bad chart SVG"));
    }

    fn ab_glyph_parses(bytes: &[u8]) -> bool {
        bytes.len() > 100_000 && &bytes[..4] == b"\x00\x01\x00\x00"
    }
}
