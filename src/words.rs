//! Words in messages: a count and its noun agree (`1 point`, `2 points`), wherever a count is
//! printed.

/// `n` and `noun`, the noun plural unless `n` is 1: `plural(1, "point")` is `1 point`,
/// `plural(3, "run")` is `3 runs`, `plural(2, "process")` is `2 processes`, `plural(2, "series")`
/// is `2 series`.
pub fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        return format!("1 {noun}");
    }
    format!("{n} {}", noun_for(n, noun))
}

/// `noun` as it goes with a count of `n` (for a count written otherwise, e.g. with its thousands
/// grouped): `noun_for(1, "point")` is `point`, `noun_for(2, "point")` is `points`.
pub fn noun_for(n: usize, noun: &str) -> String {
    match n {
        1 => noun.to_string(),
        _ => plural_of(noun),
    }
}

/// The plural of an English noun of sweep's messages.
fn plural_of(noun: &str) -> String {
    if noun.ends_with("series") {
        noun.to_string()
    } else if ["s", "sh", "ch", "x"].iter().any(|e| noun.ends_with(e)) {
        format!("{noun}es")
    } else if let Some(stem) = noun
        .strip_suffix('y')
        .filter(|s| !s.ends_with(['a', 'e', 'o', 'u']))
    {
        format!("{stem}ies")
    } else {
        format!("{noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::plural;

    #[test]
    fn a_count_and_its_noun_agree() {
        for (n, noun, said) in [
            (0, "point", "0 points"),
            (1, "point", "1 point"),
            (2, "point", "2 points"),
            (1, "run", "1 run"),
            (4, "run", "4 runs"),
            (2, "process", "2 processes"),
            (1, "process", "1 process"),
            (3, "series", "3 series"),
            (2, "entry", "2 entries"),
            (2, "key", "2 keys"),
            (2, "build job", "2 build jobs"),
        ] {
            assert_eq!(plural(n, noun), said);
        }
    }
}
