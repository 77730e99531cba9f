//! The words the terminal and the report use for a measured value that results.csv marks, one
//! vocabulary everywhere. The CSV keeps its tokens (`<metric>_status` `ok`, `noisy`, `unstable`;
//! the row's `status` the worst of its metrics'), which resume, merge and compare read; people
//! read the cause:
//!
//! - `placement` (CSV `unstable`): the value varies with where its buffers lie, beyond the target
//!   and the noise. The timing core measures each point at several buffer placements and reports
//!   their median; `<metric>_spread` = (slowest - fastest placement) / value.
//! - `processes` (CSV `unstable`, with `repeat` or `recheck`): the processes that measured the
//!   point gave values further apart than the target and their intervals (`<metric>_repeat_spread`).
//! - `noisy` (CSV `noisy`): the confidence interval stayed wider than the target (`<metric>_rel_ci`).
//!
//! A marked value is measured like any other (it is the median of its placements and processes,
//! in results.csv and on the charts); the mark says how far another allocation or process could
//! move it. Only a failed point is a failure.

use crate::analyze::SeriesAnalysis;
pub use crate::store::mark::{count, share, Mark};
use crate::store::{Row, Status};

/// The marked metrics of a point's row, with how much (`<metric>_spread` for placement, ...),
/// the worst cause first and each cause's largest first.
pub fn row_marks(row: &Row, target: f64) -> Vec<(&str, Mark, Option<f64>)> {
    let value = |c: String| row.values.get(&c).copied().filter(|v| v.is_finite());
    let mut out: Vec<(&str, Mark, Option<f64>)> = row
        .statuses
        .iter()
        .filter_map(|(m, s)| {
            let spread = value(format!("{m}_spread"));
            let mark = Mark::of(
                *s,
                spread,
                value(crate::store::schema::repeat_spread_column(m)),
                target,
            )?;
            Some((m.as_str(), mark, value(mark.amount_column(m))))
        })
        .collect();
    out.sort_by(|a, b| {
        a.1.cmp(&b.1)
            .then(b.2.unwrap_or(0.0).total_cmp(&a.2.unwrap_or(0.0)))
    });
    out
}

/// A metric's marked values, per cause, and the largest amount of each.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MetricMarks {
    pub metric: String,
    pub count: [usize; 3],
    pub largest: [f64; 3],
}

/// The values of a run (measured points × metrics with a status) and those marked, per cause and
/// per metric.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    pub values: usize,
    /// In the order the metrics were first seen.
    pub metrics: Vec<MetricMarks>,
}

impl Tally {
    /// Counts one value of `metric`, marked by `mark` with `amount`, or not.
    pub fn add(&mut self, metric: &str, mark: Option<(Mark, Option<f64>)>) {
        self.values += 1;
        let at = match self.metrics.iter().position(|m| m.metric == metric) {
            Some(at) => at,
            None => {
                self.metrics.push(MetricMarks {
                    metric: metric.to_string(),
                    ..MetricMarks::default()
                });
                self.metrics.len() - 1
            }
        };
        if let Some((mark, amount)) = mark {
            let m = &mut self.metrics[at];
            m.count[mark.at()] += 1;
            m.largest[mark.at()] = m.largest[mark.at()].max(amount.unwrap_or(0.0));
        }
    }

    /// Counts every metric of a point's row.
    pub fn add_row(&mut self, row: &Row, target: f64) {
        let marks = row_marks(row, target);
        for m in row.statuses.keys() {
            let mark = marks.iter().find(|k| k.0 == m).map(|k| (k.1, k.2));
            self.add(m, mark);
        }
    }

    /// Values marked by `mark`.
    pub fn count(&self, mark: Mark) -> usize {
        self.metrics.iter().map(|m| m.count[mark.at()]).sum()
    }

    /// Metrics with a value marked by `mark`.
    fn metrics_with(&self, mark: Mark) -> usize {
        self.metrics
            .iter()
            .filter(|m| m.count[mark.at()] > 0)
            .count()
    }

    /// The clauses of the values' sentence: `1,192 of 6,144 values vary with buffer placement
    /// (8 of 12 metrics)`, then `processes` where any, then `0 noisy`.
    pub fn clauses(&self) -> Vec<String> {
        let which = |mark: Mark| match self.metrics_with(mark) {
            0 => String::new(),
            k => format!(
                " ({k} of {} metric{})",
                self.metrics.len(),
                if self.metrics.len() == 1 { "" } else { "s" }
            ),
        };
        let n = |mark: Mark| count(self.count(mark));
        let mut out = vec![format!(
            "{} of {} values {}{}",
            n(Mark::Placement),
            count(self.values),
            Mark::Placement.verb(self.count(Mark::Placement)),
            which(Mark::Placement)
        )];
        for mark in [Mark::Processes, Mark::Noisy] {
            if mark == Mark::Noisy || self.count(mark) > 0 {
                out.push(format!(
                    "{} {}{}",
                    n(mark),
                    mark.verb(self.count(mark)),
                    which(mark)
                ));
            }
        }
        out
    }

    /// What each cause that marked a value means: `placement: its buffer placements gave ...`.
    pub fn legend(&self, target: f64) -> Vec<String> {
        Mark::ALL
            .into_iter()
            .filter(|m| self.count(*m) > 0)
            .map(|m| format!("{}: {}", m.word(), m.means(target)))
            .collect()
    }

    /// How results.csv writes what [`Tally::clauses`] say: ``results.csv: `<metric>_status` is
    /// `unstable`; a point's `status` is the worst of its metrics' ``; `None` when nothing is
    /// marked. The points' row statuses are not counted here: with a dozen metrics the worst of
    /// them flags most points (358 of the H100 thread sweep's 512, where 1,192 of 6,144 values
    /// were marked), and a count that flags most points says nothing the per-metric counts above
    /// it do not say better.
    pub fn csv_line(&self) -> Option<String> {
        let marked = |s: Status| {
            Mark::ALL
                .iter()
                .any(|m| m.token() == s.as_str() && self.count(*m) > 0)
        };
        let tokens: Vec<String> = [Status::Unstable, Status::Noisy]
            .into_iter()
            .filter(|s| marked(*s))
            .map(|s| format!("`{}`", s.as_str()))
            .collect();
        if tokens.is_empty() {
            return None;
        }
        Some(format!(
            "results.csv: `<metric>_status` is {}; a point's `status` is the worst of its metrics'",
            tokens.join(" or ")
        ))
    }

    /// The metric's marks, where it has any.
    pub fn of_metric(&self, metric: &str) -> Option<&MetricMarks> {
        self.metrics.iter().find(|m| m.metric == metric)
    }
}

/// A series' marked values, per cause: (count, the cause's word, the largest amount). The counts
/// and causes are the analysis's (one per x, from the rows themselves, as the report and
/// analysis.md tell them); the largest amount the series' own placement spread, or the tally's
/// for its metric (a metric split into series by grouping axes shares it). The causes came from
/// the tally of the session's own rows: a resume that measured none of a run's processes-marked
/// values called them "placement" (review 19b F2).
fn series_parts(s: &SeriesAnalysis, tally: &Tally) -> Vec<(usize, Vec<Mark>, Option<f64>)> {
    let m = tally.of_metric(&s.metric);
    let largest = |mark: Mark| m.map(|m| m.largest[mark.at()]).filter(|l| *l > 0.0);
    let mut parts = Vec::new();
    if s.marked.unstable > 0 {
        let placement_spread = s.placement.as_ref().map(|p| p.max_spread);
        parts.push(match (s.marked.placement() > 0, s.marked.processes > 0) {
            (false, true) => (
                s.marked.unstable,
                vec![Mark::Processes],
                largest(Mark::Processes),
            ),
            (true, true) => (
                s.marked.unstable,
                vec![Mark::Placement, Mark::Processes],
                placement_spread,
            ),
            _ => (
                s.marked.unstable,
                vec![Mark::Placement],
                placement_spread.or(largest(Mark::Placement)),
            ),
        });
    }
    if s.marked.noisy > 0 {
        parts.push((s.marked.noisy, vec![Mark::Noisy], largest(Mark::Noisy)));
    }
    parts
}

/// A series' marked values in a few words, for the series table: `264 placement, up to 69 %`,
/// `3 noisy, up to 1.4 %`; `-` for none.
pub fn series_marks(s: &SeriesAnalysis, tally: &Tally) -> String {
    let parts: Vec<String> = series_parts(s, tally)
        .into_iter()
        .map(|(n, marks, largest)| {
            let words: Vec<&str> = marks.iter().map(|m| m.word()).collect();
            up_to(&format!("{} {}", count(n), words.join(" or ")), largest)
        })
        .collect();
    if parts.is_empty() {
        return "-".into();
    }
    parts.join("; ")
}

/// A series' marked values in a sentence, for the report's findings: `264 of 512 values vary with
/// buffer placement, up to 69 %`; `None` for none.
pub fn series_sentence(s: &SeriesAnalysis, tally: &Tally) -> Option<String> {
    let of = s.data.iter().filter(|p| p.1.is_some()).count();
    let parts: Vec<String> = series_parts(s, tally)
        .into_iter()
        .enumerate()
        .map(|(i, (n, marks, largest))| {
            let verbs: Vec<&str> = marks.iter().map(|m| m.verb(n)).collect();
            let head = if i == 0 {
                format!(
                    "{} of {} values {}",
                    count(n),
                    count(of),
                    verbs.join(" or ")
                )
            } else {
                format!("{} {}", count(n), verbs.join(" or "))
            };
            up_to(&head, largest)
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// `264 placement, up to 69 %` (without the bound where there is none).
fn up_to(head: &str, largest: Option<f64>) -> String {
    match largest.filter(|v| *v > 0.0) {
        Some(v) => format!("{head}, up to {}", share(v)),
        None => head.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unstable_value_is_put_down_to_placement_unless_only_processes_explain_it() {
        let t = 0.007;
        // (status, spread, repeat_spread, mark)
        let cases = [
            (Status::Ok, Some(0.5), Some(0.5), None),
            (Status::RunFailed, None, None, None),
            (Status::Noisy, Some(0.5), None, Some(Mark::Noisy)),
            // One process: only the core marks a value, by its placements.
            (Status::Unstable, Some(0.02), None, Some(Mark::Placement)),
            (Status::Unstable, None, None, Some(Mark::Placement)),
            // Several: the placements within the target, so the processes disagreed.
            (
                Status::Unstable,
                Some(0.005),
                Some(0.02),
                Some(Mark::Processes),
            ),
            (Status::Unstable, None, Some(0.02), Some(Mark::Processes)),
            // Both beyond the target: placement, which moves the processes too.
            (
                Status::Unstable,
                Some(0.02),
                Some(0.02),
                Some(Mark::Placement),
            ),
        ];
        for (status, spread, repeat, want) in cases {
            assert_eq!(
                Mark::of(status, spread, repeat, t),
                want,
                "{status:?} {spread:?} {repeat:?}"
            );
        }
    }

    #[test]
    fn counts_group_their_thousands_and_shares_keep_a_digit_that_shows() {
        let cases = [
            (0, "0"),
            (512, "512"),
            (6144, "6,144"),
            (1234567, "1,234,567"),
        ];
        for (n, want) in cases {
            assert_eq!(count(n), want);
        }
        assert_eq!(share(0.688), "69 %");
        assert_eq!(share(0.019), "1.9 %");
        assert_eq!(share(0.0996), "10 %");
    }

    fn row(statuses: &[(&str, Status, f64)]) -> Row {
        Row {
            point: crate::points::Point {
                index: 0,
                id: "p".into(),
                values: vec![],
            },
            status: statuses.iter().map(|s| s.1).max().unwrap_or(Status::Ok),
            statuses: statuses.iter().map(|s| (s.0.to_string(), s.1)).collect(),
            values: statuses
                .iter()
                .flat_map(|s| {
                    [
                        (format!("{}_spread", s.0), s.2),
                        (format!("{}_rel_ci", s.0), s.2),
                    ]
                })
                .collect(),
            build_s: 0.0,
            run_s: 0.0,
            cached: false,
            gpu: Default::default(),
            error: String::new(),
        }
    }

    #[test]
    fn the_tally_counts_values_per_cause_and_says_them_with_the_csv_tokens() {
        let mut t = Tally::default();
        let mut rows = std::collections::BTreeMap::new();
        for r in [
            row(&[("g", Status::Unstable, 0.2), ("s", Status::Ok, 0.001)]),
            row(&[("g", Status::Unstable, 0.5), ("s", Status::Noisy, 0.03)]),
            row(&[("g", Status::Ok, 0.001), ("s", Status::Ok, 0.001)]),
        ] {
            t.add_row(&r, 0.01);
            *rows.entry(r.status).or_insert(0) += 1;
        }
        assert_eq!(
            (t.values, t.count(Mark::Placement), t.count(Mark::Noisy)),
            (6, 2, 1)
        );
        assert_eq!(t.of_metric("g").unwrap().largest[0], 0.5);
        assert_eq!(
            t.clauses(),
            [
                "2 of 6 values vary with buffer placement (1 of 2 metrics)",
                "1 noisy (1 of 2 metrics)"
            ]
        );
        assert_eq!(
            t.legend(0.007),
            [
                "placement: its buffer placements differ beyond the 0.7 % target and the noise; the value is their median",
                "noisy: its confidence interval stayed wider than the 0.7 % target within the time allowed"
            ]
        );
        assert_eq!(
            t.csv_line().unwrap(),
            "results.csv: `<metric>_status` is `unstable` or `noisy`; a point's `status` is the worst of its metrics'"
        );
        assert_eq!(Tally::default().csv_line(), None);
    }

    #[test]
    fn a_rows_marks_come_worst_cause_first_and_largest_first() {
        let r = row(&[
            ("a", Status::Unstable, 0.1),
            ("b", Status::Noisy, 0.05),
            ("c", Status::Unstable, 0.3),
            ("d", Status::Ok, 0.0),
        ]);
        let marks: Vec<(&str, Mark)> = row_marks(&r, 0.01)
            .into_iter()
            .map(|m| (m.0, m.1))
            .collect();
        assert_eq!(
            marks,
            [
                ("c", Mark::Placement),
                ("a", Mark::Placement),
                ("b", Mark::Noisy)
            ]
        );
    }
}
