//! The font for chart text. plotters (with ab_glyph) draws text only with a registered TrueType
//! font; this finds one on the machine once and registers it as `sans-serif`.

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

/// Registers a font once; whether text can be drawn.
pub(crate) fn ensure() -> bool {
    static READY: OnceLock<bool> = OnceLock::new();
    *READY.get_or_init(|| {
        let from_env = std::env::var_os("SWEEP_FONT").map(PathBuf::from);
        let listed = CANDIDATES.iter().map(PathBuf::from);
        from_env
            .into_iter()
            .chain(listed)
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
