//! Text written decomposed: `é` as `e` + U+0301 (combining acute) looks like the `é` of U+00E9 in
//! every output (terminal, CSV, charts, report) and yet is another value: two axis values that
//! look alike were two points, two series of one name. sweep takes such text composed only
//! (Unicode NFC, as keyboards and most editors write it), and refuses it decomposed naming its
//! code points. Without a Unicode table crate: a Latin letter followed by one of the combining
//! marks that compose with Latin letters into the precomposed letters of Latin-1, Latin
//! Extended-A/B and Latin Extended Additional is decomposed text; a mark after any other
//! character (a mark of its own, a letter of another script) is left alone.

/// The combining marks (U+0300..U+036F) that NFC composes with a Latin letter: grave, acute,
/// circumflex, tilde, macron, breve, dot above, diaeresis, hook above, ring above, double acute,
/// caron, double grave, inverted breve, horn, dot below, diaeresis below, ring below, comma
/// below, cedilla, ogonek, circumflex below, breve below, tilde below, macron below.
const COMPOSING: &[char] = &[
    '\u{300}', '\u{301}', '\u{302}', '\u{303}', '\u{304}', '\u{306}', '\u{307}', '\u{308}',
    '\u{309}', '\u{30A}', '\u{30B}', '\u{30C}', '\u{30F}', '\u{311}', '\u{31B}', '\u{323}',
    '\u{324}', '\u{325}', '\u{326}', '\u{327}', '\u{328}', '\u{32D}', '\u{32E}', '\u{330}',
    '\u{331}',
];

/// A Latin letter: ASCII, Latin-1 Supplement, Latin Extended-A/B, Latin Extended Additional.
fn latin_letter(c: char) -> bool {
    c.is_alphabetic()
        && (c.is_ascii()
            || ('\u{C0}'..='\u{24F}').contains(&c)
            || ('\u{1E00}'..='\u{1EFF}').contains(&c))
}

/// The letter and its mark where `text` is decomposed, written as code points (`U+0065 U+0301`);
/// None where it is composed (or holds no such pair).
pub fn decomposed(text: &str) -> Option<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.windows(2).find_map(|w| {
        (latin_letter(w[0]) && COMPOSING.contains(&w[1]))
            .then(|| format!("U+{:04X} U+{:04X}", w[0] as u32, w[1] as u32))
    })
}

/// The message for `what` (``axis `name` has the value``) whose text `value` is decomposed.
pub(super) fn refusal(what: &str, value: &str, points: &str) -> String {
    format!(
        "{what} `{}` written decomposed ({points}: a letter and its accent as two characters), which looks like the composed letter yet is another text (hint: write the letter with its accent as one character, Unicode NFC, as keyboards do; e.g. `é` is U+00E9)",
        value.escape_debug()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decomposed_latin_is_found_and_composed_or_other_text_is_not() {
        for (text, found) in [
            ("e\u{301}", Some("U+0065 U+0301")),
            ("na\u{EF}ve", None),
            ("nai\u{308}ve", Some("U+0069 U+0308")),
            ("A\u{30A}ngstr", Some("U+0041 U+030A")),
            ("\u{E9}", None),
            ("caf\u{E9}", None),
            ("shared", None),
            ("\u{3B1}\u{301}", None),
            ("\u{301}", None),
            ("x\u{20DD}", None),
        ] {
            assert_eq!(
                decomposed(text).as_deref(),
                found,
                "{}",
                text.escape_unicode()
            );
        }
    }
}
