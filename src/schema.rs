//! The results CSV's columns and cells, for every writer and reader: the fixed columns around the
//! axes and metrics, the statuses a row can have, and the two dialects.
//!
//! A header reads `point_id,index,<axes>,status,<metric columns>,build_s,run_s,cached,gpu_index,
//! gpu_name,gpu_uuid,error`. This module imports nothing from the rest of the crate and sits below
//! the spec, so that the spec can ask it which names are taken; the store, which alone writes and
//! reads these columns, names it as `store::schema`.

use serde::{Deserialize, Serialize};

/// The point's id, the first column (`p` + 12 hex digits).
pub const POINT_ID_COLUMN: &str = "point_id";
/// The point's place in the sweep.
pub const INDEX_COLUMN: &str = "index";
/// The columns before the axes.
pub const LEADING_COLUMNS: [&str; 2] = [POINT_ID_COLUMN, INDEX_COLUMN];
/// The column between the axes and the metrics: a [`Status`].
pub const STATUS_COLUMN: &str = "status";
/// The columns of `[profile] power` (the profile stage writes them).
pub const POWER_COLUMNS: [&str; 6] = [
    "power_w",
    "power_max_w",
    "energy_j",
    "power_sm_mhz",
    "power_temp_c",
    "power_samples",
];
/// Separates a metric's name from its `[profile]` counter's in a column: `<metric>__<counter>`.
pub const COUNTER_SEP: &str = "__";

/// The point's build and run times (s), whether its build came from the cache (`1`/`0`), its
/// GPU, and why it failed (empty when it did not).
pub const BUILD_S_COLUMN: &str = "build_s";
pub const RUN_S_COLUMN: &str = "run_s";
pub const CACHED_COLUMN: &str = "cached";
pub const GPU_INDEX_COLUMN: &str = "gpu_index";
pub const GPU_NAME_COLUMN: &str = "gpu_name";
pub const GPU_UUID_COLUMN: &str = "gpu_uuid";
pub const ERROR_COLUMN: &str = "error";
/// The columns after the metrics.
pub const TRAILING_COLUMNS: [&str; 7] = [
    BUILD_S_COLUMN,
    RUN_S_COLUMN,
    CACHED_COLUMN,
    GPU_INDEX_COLUMN,
    GPU_NAME_COLUMN,
    GPU_UUID_COLUMN,
    ERROR_COLUMN,
];
/// Fixed columns that hold text whatever their cells look like: an id such as `096962288715`
/// (older runs) must not become a number, nor a GPU name, nor an error message.
pub const TEXT_COLUMNS: [&str; 5] = [
    POINT_ID_COLUMN,
    STATUS_COLUMN,
    ERROR_COLUMN,
    GPU_NAME_COLUMN,
    GPU_UUID_COLUMN,
];

/// Every fixed column: [`LEADING_COLUMNS`], [`STATUS_COLUMN`], [`TRAILING_COLUMNS`], in that order.
pub fn fixed_columns() -> impl Iterator<Item = &'static str> {
    LEADING_COLUMNS
        .into_iter()
        .chain([STATUS_COLUMN])
        .chain(TRAILING_COLUMNS)
}

/// Whether `name` is a fixed column, which no axis and no metric column may take: a second
/// `status` column would make every reader take the wrong one.
pub fn reserved(name: &str) -> bool {
    fixed_columns().any(|c| c == name)
}

/// The one-line refusal of an axis or metric column named like a fixed column, or `None`.
/// `what` names the culprit: ``axis `status` `` or ``metric `status` ``.
pub fn refuse_reserved(what: &str, column: &str) -> Option<String> {
    reserved(column).then(|| {
        format!(
            "{what} writes the column `{column}`, which results.csv has anyway (hint: rename it; taken: {})",
            fixed_columns().collect::<Vec<_>>().join(", ")
        )
    })
}

/// The header: the fixed columns around `axes`, then `metrics` (each metric's columns, in order).
pub fn header(axes: Vec<String>, metrics: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut h: Vec<String> = LEADING_COLUMNS.iter().map(|c| c.to_string()).collect();
    h.extend(axes);
    h.push(STATUS_COLUMN.into());
    h.extend(metrics);
    h.extend(TRAILING_COLUMNS.iter().map(|c| c.to_string()));
    h
}

/// With `repeat` > 1: the column of a metric's spread over the processes that measured it,
/// (largest - smallest) / median.
pub fn repeat_spread_column(metric_name: &str) -> String {
    format!("{metric_name}_repeat_spread")
}

/// The column of a metric's own status: `<metric>_status` (the metric's name, not its column).
pub fn metric_status_column(metric_name: &str) -> String {
    format!("{metric_name}_status")
}

/// `v` in the fewest digits that read back as it (Rust's shortest round trip), as people and
/// spreadsheets read it: `1000`, `0.25`, `-0`, and in exponent form where the plain one would be
/// long (`5e-324`, `1e308`, `1.5e-10`), never a fixed-point expansion of hundreds of digits (`{}`
/// writes 1e308 with 309 digits and 5e-324 with 324 decimals).
pub fn shortest(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && a.is_finite() && !(1e-9..1e16).contains(&a) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// `v` with `decimals` decimals (`{:.N}`) for people, but in exponent form with four
/// significant digits from 1e15 on (`1.000e308`), where `{:.N}` writes every digit.
pub fn fixed(v: f64, decimals: usize) -> String {
    if v.is_finite() && v.abs() >= 1e15 {
        format!("{v:.3e}")
    } else {
        format!("{v:.decimals$}")
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, Default)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    /// `,` between fields, `.` as decimal mark (RFC 4180).
    #[default]
    Comma,
    /// `;` between fields, `,` as decimal mark (spreadsheets in uk, ru, pt, es locales).
    Semicolon,
}

impl Dialect {
    pub fn delimiter(self) -> u8 {
        match self {
            Dialect::Comma => b',',
            Dialect::Semicolon => b';',
        }
    }

    pub fn number(self, v: f64) -> String {
        let s = shortest(v);
        match self {
            Dialect::Comma => s,
            Dialect::Semicolon => s.replace('.', ","),
        }
    }

    /// The dialect's name, as `--csv-dialect` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Comma => "comma",
            Dialect::Semicolon => "semicolon",
        }
    }

    /// Reads a finite number written in this dialect; `None` for an empty cell, and for `inf`,
    /// `nan` and `1e999`, which are no value sweep writes: a text axis of `"inf"` and `"nan"`
    /// was taken for one of numbers (the default x), then refused by the reader as not one
    /// (review 19a M1).
    pub fn parse_number(self, s: &str) -> Option<f64> {
        let x: f64 = match self {
            Dialect::Comma => s.trim().parse().ok()?,
            Dialect::Semicolon => s.trim().replace(',', ".").parse().ok()?,
        };
        x.is_finite().then_some(x)
    }

    /// The dialect of a CSV, from its header line: semicolons when it has more `;` than `,`.
    pub fn detect(header: &str) -> Dialect {
        if header.matches(';').count() > header.matches(',').count() {
            Dialect::Semicolon
        } else {
            Dialect::Comma
        }
    }
}

/// What happened to a point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    Noisy,
    Unstable,
    BuildFailed,
    RunFailed,
    WrongResult,
    Timeout,
    NoMetric,
}

impl Status {
    pub const ALL: [Status; 8] = [
        Status::Ok,
        Status::Noisy,
        Status::Unstable,
        Status::BuildFailed,
        Status::RunFailed,
        Status::WrongResult,
        Status::Timeout,
        Status::NoMetric,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Noisy => "noisy",
            Status::Unstable => "unstable",
            Status::BuildFailed => "build_failed",
            Status::RunFailed => "run_failed",
            Status::WrongResult => "wrong_result",
            Status::Timeout => "timeout",
            Status::NoMetric => "no_metric",
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// The point measured something (its metric cells are filled).
    pub fn measured(self) -> bool {
        matches!(self, Status::Ok | Status::Noisy | Status::Unstable)
    }
}

/// Whether a row whose `status` cell reads `cell` carries metric values (`ok`, `noisy`,
/// `unstable`: see [`Status::measured`]).
pub fn carries_values(cell: &str) -> bool {
    Status::parse(cell).is_some_and(Status::measured)
}

/// The columns of `axes` in a table whose own columns are `fixed` (the long export's `metric`,
/// `value`; compare.csv's `a`, `b`): an axis of such a name is `axis_<name>`, and any name
/// already taken (an axis really named `axis_metric`) gets `_2`, `_3`, ...: two columns of one
/// name lost one of them in every reader (review 20a H4: `results_long.json` kept one key of two).
pub fn axis_columns(axes: &[String], fixed: &[&str]) -> Vec<String> {
    let mut taken: std::collections::HashSet<String> =
        fixed.iter().map(|c| c.to_string()).collect();
    // The axes that keep their names hold them first.
    taken.extend(
        axes.iter()
            .filter(|a| !fixed.contains(&a.as_str()))
            .cloned(),
    );
    axes.iter()
        .map(|a| {
            if !fixed.contains(&a.as_str()) {
                return a.clone();
            }
            let base = format!("axis_{a}");
            let mut name = base.clone();
            let mut n = 2;
            while taken.contains(&name) {
                name = format!("{base}_{n}");
                n += 1;
            }
            taken.insert(name.clone());
            name
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_in_their_shortest_round_trip_form() {
        for (v, written) in [
            (5e-324, "5e-324"),
            (4.9e-324, "5e-324"),
            (1e308, "1e308"),
            (f64::MAX, "1.7976931348623157e308"),
            (-0.0, "-0"),
            (0.0, "0"),
            (1000.0, "1000"),
            (0.000001, "0.000001"),
            (1.5e-10, "1.5e-10"),
            (-2.5e20, "-2.5e20"),
            (12345.678, "12345.678"),
        ] {
            assert_eq!(shortest(v), written);
            let back: f64 = written.parse().unwrap();
            assert_eq!(back.to_bits(), v.to_bits(), "{written} reads back as {v}");
        }
        assert_eq!(Dialect::Semicolon.number(1.5e-10), "1,5e-10");
    }

    #[test]
    fn fixed_columns_are_reserved_and_others_are_not() {
        for c in [
            "point_id", "index", "status", "build_s", "gpu_uuid", "error",
        ] {
            assert!(reserved(c), "{c}");
        }
        for c in ["threads", "status_code", "mflops", "errors"] {
            assert!(!reserved(c), "{c}");
        }
        let line = refuse_reserved("metric `status`", "status").unwrap();
        assert!(
            line.starts_with(
                "metric `status` writes the column `status`, which results.csv has anyway"
            ),
            "{line}"
        );
        assert!(!line.contains('\n'));
        assert_eq!(refuse_reserved("axis `n`", "n"), None);
    }

    #[test]
    fn header_puts_axes_before_status_and_metrics_after() {
        let h = header(vec!["n".into()], ["mflops".to_string()]);
        assert_eq!(
            h.join(","),
            "point_id,index,n,status,mflops,build_s,run_s,cached,gpu_index,gpu_name,gpu_uuid,error"
        );
    }

    #[test]
    fn the_dialect_is_the_more_frequent_separator_of_the_header() {
        assert_eq!(Dialect::detect("a,b,status"), Dialect::Comma);
        assert_eq!(Dialect::detect("a;b;status"), Dialect::Semicolon);
        // A quoted name with a comma in a semicolon header.
        assert_eq!(Dialect::detect("a;\"b,c\";status"), Dialect::Semicolon);
        assert_eq!(Dialect::detect("status"), Dialect::Comma);
    }

    #[test]
    fn statuses_round_trip_and_only_measured_ones_carry_values() {
        for s in Status::ALL {
            assert_eq!(Status::parse(s.as_str()), Some(s));
        }
        assert!(carries_values("noisy"));
        assert!(!carries_values("timeout"));
        assert!(!carries_values("okay"));
    }
}
