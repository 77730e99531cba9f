//! Why a measured value is marked, in the one vocabulary the terminal, the report and the
//! analysis share (see `events::marks` for what each cause means), below the analysis and the
//! report so that both name it without importing each other.

use super::Status;

/// Why a measured value is marked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mark {
    Placement,
    Processes,
    Noisy,
}

impl Mark {
    pub const ALL: [Mark; 3] = [Mark::Placement, Mark::Processes, Mark::Noisy];

    /// The one word for it, on a point's line and in the series table.
    pub fn word(self) -> &'static str {
        match self {
            Mark::Placement => "placement",
            Mark::Processes => "processes",
            Mark::Noisy => "noisy",
        }
    }

    /// What it says of `n` values, after their count: `1,192 of 6,144 values` + `vary with buffer
    /// placement` (`varies` for one).
    pub fn verb(self, n: usize) -> &'static str {
        match (self, n) {
            (Mark::Placement, 1) => "varies with buffer placement",
            (Mark::Placement, _) => "vary with buffer placement",
            (Mark::Processes, 1) => "differs between processes",
            (Mark::Processes, _) => "differ between processes",
            (Mark::Noisy, _) => "noisy",
        }
    }

    /// What it means, in one phrase, with the run's confidence target.
    pub fn means(self, target: f64) -> String {
        let t = share(target);
        match self {
            Mark::Placement => format!(
                "its buffer placements differ beyond the {t} target and the noise; the value is their median"
            ),
            Mark::Processes => format!(
                "the processes that measured it differ beyond the {t} target and their intervals"
            ),
            Mark::Noisy => format!(
                "its confidence interval stayed wider than the {t} target within the time allowed"
            ),
        }
    }

    /// The CSV's token for it.
    pub fn token(self) -> &'static str {
        match self {
            Mark::Placement | Mark::Processes => Status::Unstable.as_str(),
            Mark::Noisy => Status::Noisy.as_str(),
        }
    }

    /// The column of a metric that says how much: `<metric>_spread`, `_repeat_spread`, `_rel_ci`.
    pub(crate) fn amount_column(self, metric: &str) -> String {
        match self {
            Mark::Placement => format!("{metric}_spread"),
            Mark::Processes => super::schema::repeat_spread_column(metric),
            Mark::Noisy => format!("{metric}_rel_ci"),
        }
    }

    /// Why a value with `status` is marked; `None` for an ok or failed one. An `unstable` value is
    /// `processes` only where it was measured in several processes (`repeat_spread` is there) and
    /// its placements stayed within `target` (the timing core calls a value unstable only above
    /// the target); where both hold, placement is the cause named, as it moves the processes too.
    pub fn of(
        status: Status,
        spread: Option<f64>,
        repeat_spread: Option<f64>,
        target: f64,
    ) -> Option<Mark> {
        match status {
            Status::Noisy => Some(Mark::Noisy),
            Status::Unstable => Some(match (spread, repeat_spread) {
                (Some(s), Some(_)) if s <= target => Mark::Processes,
                (None, Some(_)) => Mark::Processes,
                _ => Mark::Placement,
            }),
            _ => None,
        }
    }

    pub(crate) fn at(self) -> usize {
        self as usize
    }
}

/// A share in percent, as people say it: `69 %`, `1.9 %`, `0.4 %`.
pub fn share(f: f64) -> String {
    let p = 100.0 * f.abs();
    if p >= 9.95 {
        format!("{p:.0} %")
    } else {
        format!("{p:.1} %")
    }
}

/// A count with its thousands grouped for reading: `6,144`, `512` (prose only: results.csv
/// never groups digits).
pub fn count(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
