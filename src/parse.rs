//! Stage `parse`: extracts metrics from a program's stdout; reads its output files (capped).

use crate::schema::Status;
use crate::spec::{Metric, MetricSource, CORE_FIELDS, CORE_STATS};
use regex::Regex;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// A program's output file as text, a byte that is not UTF-8 read as U+FFFD: one stray byte (a
/// message in another encoding) must not hide every metric line beside it. `None`: unreadable.
pub fn read_output(path: &std::path::Path) -> Option<String> {
    std::fs::read(path).ok().map(text)
}

/// The most of a program's stdout that sweep reads for its metrics; its file keeps all of it.
/// A point whose program printed more fails, saying so (a program that prints gigabytes must
/// not take sweep's memory with it).
pub const MAX_OUTPUT: u64 = 64 << 20;

/// Bytes as text, copied only where some are not UTF-8 (they become U+FFFD).
fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// A program's output as text, its first [`MAX_OUTPUT`] bytes at most (for outputs read after a
/// probe's run: ncu's, a power pass's).
pub fn read_capped(path: &std::path::Path) -> Option<String> {
    read_part(path, MAX_OUTPUT, false).map(|(text, _)| text)
}

/// Up to `max` bytes of a file as text: from its start, or with `tail` its last `max` bytes;
/// and the file's size. None when it cannot be read.
pub fn read_part(path: &std::path::Path, max: u64, tail: bool) -> Option<(String, u64)> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = crate::files::open_regular(path).ok()?;
    let size = f.metadata().ok()?.len();
    if tail && size > max {
        f.seek(SeekFrom::Start(size - max)).ok()?;
    }
    let mut bytes = Vec::with_capacity(size.min(max) as usize);
    f.take(max).read_to_end(&mut bytes).ok()?;
    Some((text(bytes), size))
}

/// The last non-empty line of a program's stderr (its file `stderr`), for one-line messages.
pub fn last_error_line(stderr: &std::path::Path) -> Option<String> {
    // Its last 64 KiB: what a failing program says last, however much it printed before.
    let (text, _) = read_part(stderr, 64 << 10, true)?;
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| one_line(l, 200))
}

/// At most `max` characters of a line a program or compiler printed, its control characters
/// escaped (`\u{1b}`, `\r`): it goes into one-line messages, the row's `error` cell and the
/// report, where an ANSI escape or a carriage return would act on the terminal (review 12a M2).
pub fn one_line(line: &str, max: usize) -> String {
    let head: String = line.chars().take(max).collect();
    crate::units::visible(&head).into_owned()
}

#[derive(Debug, Default, PartialEq)]
pub struct Parsed {
    /// Column -> value.
    pub values: BTreeMap<String, f64>,
    /// Metrics the output lacks.
    pub missing: Vec<String>,
    /// Of those, the ones the output has but not as a finite number (`nan`, `inf`, `1e999`): column
    /// -> the text printed, so the error can say so.
    pub unreadable: BTreeMap<String, String>,
    /// Of those, the timing-core metrics whose `@sweep` line says another unit than the spec's
    /// (`unit=GB/s` for a metric of `MB/s`): column -> (the unit printed, the spec's). Its value
    /// would be written under the spec's unit, so the metric is missing.
    pub wrong_unit: BTreeMap<String, (String, String)>,
    /// Of those, the timing-core metrics whose line has a statistic that cannot be (`rel_ci=-1`,
    /// `samples=-3`, `stddev=nan`): column -> (the field as printed, why it cannot be).
    pub bad_stat: BTreeMap<String, (String, &'static str)>,
    /// Some timing-core metric hit its time cap before its confidence target, or reports a
    /// relative CI half-width above the spec's target (checked here too, whatever the program says).
    pub noisy: bool,
    /// Some timing-core metric's placements differ by more than the confidence target and more than
    /// the noise explains (`unstable=1`): where its buffers lie moves it.
    pub unstable: bool,
    /// Each metric with a value, by name: `unstable` (the core said `unstable=1`), `noisy` (it
    /// said `noisy=1`, or its `rel_ci` is above the target), else `ok`. A regex metric is `ok`.
    pub statuses: BTreeMap<String, Status>,
    /// The program reported a wrong result (`@sweep check=failed what="..."`).
    pub check_failed: Option<String>,
}

fn token_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r#"([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|\S+)"#).expect("valid regex")
    })
}

/// The `key=value` pairs of every `@sweep` line, in order.
pub(crate) fn core_lines(stdout: &str) -> Vec<BTreeMap<String, String>> {
    stdout
        .lines()
        .filter_map(|l| l.trim().strip_prefix("@sweep "))
        .map(|rest| {
            token_re()
                .captures_iter(rest)
                .map(|c| (c[1].to_string(), c[2].trim_matches('"').to_string()))
                .collect()
        })
        .collect()
}

/// The start of a value that is no number, short enough for a one-line reason.
fn quoted(t: &str) -> String {
    const MAX: usize = 40;
    if t.chars().count() <= MAX {
        t.to_string()
    } else {
        format!("{}…", t.chars().take(MAX).collect::<String>())
    }
}

/// The statistics of a timing-core line that may be negative, as its value may (a difference);
/// every other (a spread, a count, a clock) never is.
const SIGNED_STATS: [&str; 3] = ["median", "min", "max"];

fn number(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// `target_rel_ci`: the spec's confidence target; a core metric above it makes the point noisy.
pub fn parse(stdout: &str, metrics: &[Metric], target_rel_ci: f64) -> Parsed {
    let lines = core_lines(stdout);
    let mut p = Parsed {
        check_failed: lines
            .iter()
            .find(|l| l.get("check").is_some_and(|c| c == "failed"))
            .map(|l| {
                l.get("what")
                    .map(|w| one_line(w, 500))
                    .unwrap_or_else(|| "result check failed".into())
            }),
        ..Parsed::default()
    };
    for m in metrics {
        match &m.source {
            MetricSource::Regex(re) => {
                let text = re
                    .captures_iter(stdout)
                    .last()
                    .and_then(|c| c.name("value").or_else(|| c.get(1)))
                    .map(|v| v.as_str());
                match text.and_then(number) {
                    Some(v) => {
                        p.values.insert(m.column(), v);
                        p.statuses.insert(m.name.clone(), Status::Ok);
                    }
                    None => {
                        if let Some(t) = text {
                            p.unreadable.insert(m.column(), quoted(t));
                        }
                        p.missing.push(m.column());
                    }
                }
            }
            MetricSource::Core => {
                let line = lines
                    .iter()
                    .rev()
                    .find(|l| l.get("metric") == Some(&m.name));
                let text = line.and_then(|l| l.get("value"));
                let Some(value) = text.and_then(|v| number(v)) else {
                    if let Some(t) = text {
                        p.unreadable.insert(m.column(), t.clone());
                    }
                    p.missing.push(m.column());
                    continue;
                };
                let line = line.expect("found above");
                if let Some(unit) = line
                    .get("unit")
                    .filter(|u| crate::spec::unit_slug(u) != crate::spec::unit_slug(&m.unit))
                {
                    p.wrong_unit
                        .insert(m.column(), (unit.clone(), m.unit.clone()));
                    p.missing.push(m.column());
                    continue;
                }
                let cols = m.columns();
                let keys = CORE_STATS.iter().chain(CORE_FIELDS.iter()).copied();
                let mut stats = Vec::new();
                let mut bad = None;
                for (col, key) in cols[1..].iter().zip(keys) {
                    let Some(text) = line.get(key) else { continue };
                    match number(text) {
                        Some(v) if v < 0.0 && !SIGNED_STATS.contains(&key) => {
                            bad = Some((format!("{key}={text}"), "never negative"));
                        }
                        Some(v) => stats.push((col.clone(), v)),
                        None => bad = Some((format!("{key}={text}"), "not a finite number")),
                    }
                    if bad.is_some() {
                        break;
                    }
                }
                // A statistic that cannot be (a negative rel_ci or count, a nan) is no measurement
                // to keep: the metric's value goes with it, as with a value that is no number.
                if let Some((field, why)) = bad {
                    p.bad_stat.insert(m.column(), (quoted(&field), why));
                    p.missing.push(m.column());
                    continue;
                }
                p.values.insert(cols[0].clone(), value);
                p.values.extend(stats);
                let above_target = line
                    .get("rel_ci")
                    .and_then(|v| number(v))
                    .is_some_and(|ci| ci > target_rel_ci);
                let noisy = above_target || line.get("noisy").is_some_and(|n| n == "1");
                let unstable = line.get("unstable").is_some_and(|n| n == "1");
                p.noisy |= noisy;
                p.unstable |= unstable;
                let status = if unstable {
                    Status::Unstable
                } else if noisy {
                    Status::Noisy
                } else {
                    Status::Ok
                };
                p.statuses.insert(m.name.clone(), status);
            }
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Spec;
    use std::path::Path;

    #[test]
    fn a_part_of_a_file_is_read_from_its_start_or_its_end_and_its_size_told() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("out.txt");
        std::fs::write(&path, b"head\nmiddle \xe9\ntail\n").unwrap();
        assert_eq!(read_part(&path, 5, false).unwrap(), ("head\n".into(), 19));
        assert_eq!(read_part(&path, 5, true).unwrap(), ("tail\n".into(), 19));
        let (all, _) = read_part(&path, 100, false).unwrap();
        assert_eq!(all, "head\nmiddle \u{fffd}\ntail\n", "not UTF-8: replaced");
        assert!(read_part(&tmp.path().join("none"), 5, false).is_none());
    }

    fn metrics(extra: &str) -> Vec<Metric> {
        let text = format!("bench=\"b\"\n[[axis]]\nname=\"t\"\nrange=[1,2]\n{extra}");
        Spec::parse(Path::new("t.toml"), &text).unwrap().metrics
    }

    #[test]
    fn builtin_patterns_take_the_last_match() {
        let m = metrics("[[metric]]\npattern=\"mflops\"\n[[metric]]\npattern=\"gb_per_s\"\n");
        let p = parse(
            "warming up\nMFlops: 12.5\nMFlops: 1250.75\nGB/s = 3.0e2\n",
            &m,
            0.01,
        );
        assert_eq!(p.values["mflops"], 1250.75);
        assert_eq!(p.values["gb_per_s"], 300.0);
        assert!(p.missing.is_empty());
        // A unit after the number is no part of it.
        let p = parse("MFlops: 17.5 MFlops\nGB/s = 2 (peak 3)\n", &m, 0.01);
        assert_eq!((p.values["mflops"], p.values["gb_per_s"]), (17.5, 2.0));
    }

    #[test]
    fn a_built_in_pattern_refuses_a_number_it_would_read_only_in_part() {
        let m = metrics("[[metric]]\npattern=\"mflops\"\n");
        for printed in ["12,345.6", "1,5", "12 345", "0x10", "100abc", "1.2.3"] {
            let p = parse(&format!("MFlops: {printed}\n"), &m, 0.01);
            assert!(
                !p.values.contains_key("mflops"),
                "{printed} read as a number"
            );
            assert_eq!(p.unreadable["mflops"], printed);
        }
        let long = format!("MFlops: 100{}\n", "x".repeat(1000));
        let p = parse(&long, &m, 0.01);
        assert!(p.unreadable["mflops"].chars().count() <= 41);
    }

    #[test]
    fn custom_regex_and_missing_metric() {
        let m = metrics("[[metric]]\nname=\"lat\"\nunit=\"us\"\nregex='latency: (?P<value>[0-9.]+) us'\n[[metric]]\npattern=\"gflops\"\n");
        let p = parse("latency: 4.5 us\nGFlops: n/a\n", &m, 0.01);
        assert_eq!(p.values["lat_us"], 4.5);
        assert_eq!(p.missing, ["gflops"]);
    }

    #[test]
    fn a_value_printed_but_not_finite_is_missing_and_named_with_its_text() {
        let m =
            metrics("[[metric]]\nname=\"copy\"\nunit=\"GB/s\"\n[[metric]]\npattern=\"mflops\"\n");
        let out = "MFlops: 1e999\n@sweep metric=copy unit=GB/s value=nan median=1 rel_ci=0.001\n";
        let p = parse(out, &m, 0.01);
        assert_eq!(p.missing, ["copy_gb_per_s", "mflops"]);
        assert_eq!(p.unreadable["copy_gb_per_s"], "nan");
        assert_eq!(p.unreadable["mflops"], "1e999");
        // Not printed at all: missing, and nothing to quote.
        let p = parse("", &m, 0.01);
        assert_eq!(p.missing.len(), 2);
        assert!(p.unreadable.is_empty());
    }

    #[test]
    fn core_lines_fill_every_statistic() {
        let m = metrics(
            "[[metric]]\nname=\"copy\"\nunit=\"GB/s\"\n[[metric]]\nname=\"ref\"\nunit=\"GB/s\"\n",
        );
        let out = "GB/s: 2713.4\n@sweep metric=copy unit=GB/s value=2713.4 median=2714 stddev=3.1 min=2705.2 max=2718.9 rel_ci=0.0021 samples=24 noisy=0 throttled=0\n@sweep metric=ref unit=GB/s value=3000 median=3000 stddev=1 min=2990 max=3010 rel_ci=0.03 samples=100 noisy=1 throttled=1\n";
        let p = parse(out, &m, 0.01);
        assert_eq!(p.values["copy_gb_per_s"], 2713.4);
        assert_eq!(p.values["copy_median_gb_per_s"], 2714.0);
        assert_eq!(p.values["copy_rel_ci"], 0.0021);
        assert_eq!(p.values["copy_samples"], 24.0);
        assert_eq!(p.values["ref_throttled"], 1.0);
        assert!(p.noisy);
        assert_eq!(
            p.statuses["copy"],
            Status::Ok,
            "each metric has its own status"
        );
        assert_eq!(p.statuses["ref"], Status::Noisy);
        assert_eq!(p.check_failed, None);
    }

    #[test]
    fn a_wide_confidence_interval_is_noisy_even_when_the_program_says_not() {
        let m = metrics("[[metric]]\nname=\"copy\"\nunit=\"GB/s\"\n");
        let out = "@sweep metric=copy unit=GB/s value=1 median=1 stddev=0 min=1 max=1 rel_ci=0.015 samples=9 noisy=0 throttled=0\n";
        assert!(parse(out, &m, 0.01).noisy);
        assert!(!parse(out, &m, 0.02).noisy);
    }

    #[test]
    fn placement_fields_fill_their_columns_and_unstable_is_passed_on() {
        let m = metrics("[[metric]]\nname=\"copy\"\nunit=\"GB/s\"\n");
        let out = "@sweep metric=copy unit=GB/s value=1 median=1 stddev=0 min=1 max=1 rel_ci=0.004 samples=32 noisy=0 throttled=0 spread=0.37 placements=8 unstable=1\n";
        let p = parse(out, &m, 0.01);
        assert_eq!(p.values["copy_spread"], 0.37);
        assert_eq!(p.values["copy_placements"], 8.0);
        assert!(p.unstable);
        assert!(!p.noisy, "the within-placement CI met its target");
        assert_eq!(p.statuses["copy"], Status::Unstable);
        let stable = out.replace("unstable=1", "unstable=0");
        assert!(!parse(&stable, &m, 0.01).unstable);
    }

    #[test]
    fn failed_check_is_reported() {
        let m = metrics("[[metric]]\nname=\"copy\"\nunit=\"GB/s\"\n");
        let p = parse(
            "@sweep check=failed what=\"copy differs at 7: 1 vs 2\"\n",
            &m,
            0.01,
        );
        assert_eq!(p.check_failed.as_deref(), Some("copy differs at 7: 1 vs 2"));
        assert_eq!(p.missing, ["copy_gb_per_s"]);
    }
}
