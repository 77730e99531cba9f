//! The font for chart text. plotters (with ab_glyph) draws text only with a registered TrueType
//! font: `SWEEP_FONT` when set, else DejaVu Sans, built into sweep (assets/fonts, its licence
//! beside it), so that every PNG has its text on any host and looks the same on all of them; a
//! font of the machine only when that fails.

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

    fn ab_glyph_parses(bytes: &[u8]) -> bool {
        bytes.len() > 100_000 && &bytes[..4] == b"\x00\x01\x00\x00"
    }
}
