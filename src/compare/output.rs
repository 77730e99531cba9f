//! What a comparison shows: the Markdown (stdout and `compare.md`) and `compare.csv`.

use super::{label, listed, CompareError, Comparison, PointCmp, Shape, Side, Verdict};
use super::{CSV_COLUMNS, LARGEST, NAMED};
use crate::analyze::reading::{human, percent};
use crate::report::{compare_chart, Curve, Names, RatioPoint};
use crate::spec::Labels;
use crate::words::plural;
use std::path::{Path, PathBuf};

/// `3 (threads=1, threads=2, and 1 more)`.
fn named(labels: &[String]) -> String {
    if labels.is_empty() {
        return "0".to_string();
    }
    // A value written decomposed looks like the composed one of the other run and is another
    // point: said, or the same point would be listed as only in A and only in B.
    let mut s = labels
        .iter()
        .take(NAMED)
        .map(|l| match crate::spec::nfc::decomposed(l) {
            Some(points) => format!(
                "{} (written decomposed: {points})",
                crate::units::visible(l)
            ),
            None => crate::units::visible(l).into_owned(),
        })
        .collect::<Vec<_>>()
        .join("; ");
    if labels.len() > NAMED {
        s += &format!("; and {} more", labels.len() - NAMED);
    }
    format!("{} ({s})", labels.len())
}

fn opt(v: Option<f64>) -> String {
    v.map_or("-".to_string(), human)
}

impl Comparison {
    /// The points `slower` by more than `pct` percent, the worst first.
    pub fn slower_than(&self, pct: f64) -> Vec<&PointCmp> {
        let mut v: Vec<&PointCmp> = self
            .points
            .iter()
            .filter(|p| p.verdict == Verdict::Slower && p.loss() > pct / 100.0)
            .collect();
        v.sort_by(|a, b| b.loss().total_cmp(&a.loss()));
        v
    }

    /// With `--fail-on-slower pct`: the one-line error when some point is `slower` by more than
    /// `pct` percent, naming the worst.
    pub fn too_slow(&self, pct: f64) -> Option<String> {
        let slower = self.slower_than(pct);
        let worst = slower.first()?;
        Some(format!(
            "{} of {} compared values slower than A by more than {pct} % (worst: `{}` at {}, {} % slower)",
            slower.len(),
            self.points.len(),
            self.metric_of(worst),
            self.label(worst),
            crate::schema::fixed(100.0 * worst.loss(), 1)
        ))
    }

    /// With `--fail-on-slower`: the one-line error when B failed, or has no value, at points A
    /// measured: nothing shows those are not slower, and a broken B must not pass the check on
    /// the few values it has.
    pub fn lost(&self) -> Option<String> {
        let first = self.lost_in_b.first()?;
        Some(format!(
            "--fail-on-slower: B failed or has no value at {} of {} matched points that A measured (first: {first}); nothing shows they are not slower (hint: `sweep compare` without it lists them)",
            self.lost_in_b.len(),
            self.matched
        ))
    }

    /// How many compared values have each verdict: (same, faster, slower).
    pub fn counts(&self) -> (usize, usize, usize) {
        self.series.iter().fold((0, 0, 0), |(s, f, l), c| {
            (s + c.same, f + c.faster, l + c.slower)
        })
    }

    pub fn label(&self, p: &PointCmp) -> String {
        label(&self.axes, self.axis_values(p))
    }

    /// The Markdown: a summary, a table per series, then the largest changes.
    pub fn to_markdown(&self) -> String {
        let side = |s: &Side| {
            let gpu = s.gpu.as_ref().map_or(String::new(), |g| format!(", {g}"));
            format!("`{}` ({}{gpu})", s.path.display(), plural(s.rows, "row"))
        };
        let mut out = format!(
            "## Compare B with A\n\nA: {}  \nB: {}\n\n",
            side(&self.a),
            side(&self.b)
        );
        let (same, faster, slower) = self.counts();
        out += &format!(
            "{} matched by {}; only in A: {}; only in B: {}.  \n",
            plural(self.matched, "point"),
            listed(&self.axes),
            named(&self.only_a),
            named(&self.only_b)
        );
        out += &format!("Failed (not compared): {}.  \n", named(&self.failed));
        if !self.unvalued.is_empty() {
            out += &format!(
                "Without a value above 0 (not compared): {}.  \n",
                named(&self.unvalued)
            );
        }
        if !self.differences.is_empty() {
            out += &format!(
                "Measured differently (values may move beyond their uncertainty): {}.  \n",
                self.differences.join("; ")
            );
        }
        out += &format!(
            "{} compared: {same} same, {faster} faster, {slower} slower \
             (same: |B/A - 1| <= u_A + u_B, u = max(sqrt(rel_ci^2 + between^2), spread/2, repeat_spread/2)).\n\n",
            plural(same + faster + slower, "value")
        );
        let x = self.x.as_deref().unwrap_or("x");
        let best = format!("best {x} A / B");
        let head = [
            "series",
            "compared",
            "B/A (geomean)",
            "same",
            "faster",
            "slower",
            "failed",
            "period A / B",
            "knee A / B",
            best.as_str(),
        ];
        let mut rows = Vec::new();
        for s in &self.series {
            let both = |f: fn(&Shape) -> Option<f64>| {
                format!(
                    "{} / {}",
                    opt(s.a.as_ref().and_then(f)),
                    opt(s.b.as_ref().and_then(f))
                )
            };
            rows.push(vec![
                s.name.clone(),
                s.compared().to_string(),
                s.geomean
                    .map_or("-".to_string(), |g| crate::schema::fixed(g, 3)),
                s.same.to_string(),
                s.faster.to_string(),
                s.slower.to_string(),
                s.failed.to_string(),
                both(|c| c.period),
                both(|c| c.knee),
                both(|c| c.best_x),
            ]);
        }
        out += &crate::units::markdown_table(&head, &rows);
        let mut changed: Vec<&PointCmp> = self
            .points
            .iter()
            .filter(|p| p.verdict != Verdict::Same)
            .collect();
        changed.sort_by(|a, b| b.ratio.ln().abs().total_cmp(&a.ratio.ln().abs()));
        out += "\n### Largest changes beyond the uncertainty\n\n";
        if changed.is_empty() && same == 0 {
            out += "None: no value was compared.\n";
            return out;
        }
        if changed.is_empty() {
            out += "None: every compared value is the same within u_A + u_B.\n";
            return out;
        }
        let mut rows = Vec::new();
        for p in changed.iter().take(LARGEST) {
            // A and B in one scale, the one A's value reads best in (96.53 GFLOP/s, not 96528 MFlops).
            let scale = crate::units::Scale::for_max(&self.series[p.series].unit, p.a.abs());
            rows.push(vec![
                self.label(p),
                self.metric_of(p).to_string(),
                scale.show(p.a),
                scale.show(p.b),
                crate::schema::fixed(p.ratio, 3),
                percent(p.u_a),
                percent(p.u_b),
                p.verdict.as_str().to_string(),
            ]);
        }
        out += &crate::units::markdown_table(
            &["point", "metric", "A", "B", "B/A", "u_A", "u_B", "verdict"],
            &rows,
        );
        if changed.len() > LARGEST {
            out += &format!(
                "\n{} more beyond the uncertainty: see compare.csv (--out).\n",
                changed.len() - LARGEST
            );
        }
        out
    }

    /// `compare.csv`: one row per compared point and metric, in A's dialect, RFC 4180.
    pub fn to_csv(&self) -> String {
        let d = self.dialect;
        // An axis name from a CSV's header may start like a formula (`=cmd|..`) as a value may.
        let mut header: Vec<String> = crate::schema::axis_columns(&self.axes, &CSV_COLUMNS)
            .iter()
            .map(|a| crate::store::formula_defused(a, d).into_owned())
            .collect();
        header.extend(CSV_COLUMNS.iter().map(|c| c.to_string()));
        let mut out = crate::store::record(&header, d);
        for p in &self.points {
            // For a spreadsheet: an axis value or a name that could start a formula is defused.
            let text = |t: &str| crate::store::formula_defused(t, d).into_owned();
            let mut row: Vec<String> = self.axis_values(p).map(text).collect();
            row.extend([
                text(self.metric_of(p)),
                d.number(p.a),
                d.number(p.b),
                d.number(p.ratio),
                d.number(p.u_a),
                d.number(p.u_b),
                p.verdict.as_str().to_string(),
            ]);
            out.extend(crate::store::record(&row, d));
        }
        String::from_utf8(out).unwrap_or_default()
    }

    /// Writes `compare.csv` and `compare.md` into `dir` (created if missing).
    pub fn write_files(&self, dir: &Path) -> Result<Vec<PathBuf>, CompareError> {
        let err = |path: &Path, source: std::io::Error| CompareError::Write {
            path: path.to_path_buf(),
            source,
        };
        // Its charts are named as a run's series charts are (`charts/<series>.png`).
        if crate::store::RunDir::new(dir).is_run() {
            return Err(CompareError::OutIsARun {
                out: dir.to_path_buf(),
            });
        }
        std::fs::create_dir_all(dir).map_err(|e| err(dir, e))?;
        let csv = dir.join("compare.csv");
        crate::store::write_atomic(&csv, self.to_csv().as_bytes()).map_err(|e| err(&csv, e))?;
        let md = dir.join("compare.md");
        crate::store::write_atomic(&md, self.to_markdown().as_bytes()).map_err(|e| err(&md, e))?;
        let mut files = vec![csv, md];
        // One chart per series with an x axis: A and B on shared axes, B/A beneath.
        if let Some(x) = &self.x {
            let charts = dir.join(crate::store::run::CHARTS);
            // Never through a link at the name (review 16b B6: a run's charts were replaced).
            if charts.is_symlink() {
                return Err(CompareError::OutLink {
                    to: std::fs::read_link(&charts).unwrap_or_default(),
                    charts,
                });
            }
            crate::store::run::own_dir(&charts).map_err(|e| err(&charts, e))?;
            let fail = |source| CompareError::Chart {
                path: charts.clone(),
                source: Box::new(source),
            };
            let labels = self.labels();
            // The points of each series, sorted out once (not a pass over all a series).
            let mut of_series: Vec<Vec<&PointCmp>> = vec![Vec::new(); self.series.len()];
            for p in &self.points {
                of_series[p.series].push(p);
            }
            for (si, s) in self.series.iter().enumerate() {
                if s.curve_a.is_empty() && s.curve_b.is_empty() {
                    continue;
                }
                let written = self
                    .chart(si, &of_series[si], x, &labels, &charts.join(&s.file_stem))
                    .map_err(fail)?;
                files.extend(written);
            }
        }
        Ok(files)
    }

    /// The spec's words for the runs' axes and metrics: A's, else B's where A's spec has none
    /// (an older run of the same sweep).
    fn labels(&self) -> Labels {
        let of = |side: &super::Side| {
            side.path
                .parent()
                .filter(|_| {
                    side.path
                        .file_name()
                        .is_some_and(|f| f == crate::store::RESULTS)
                })
                .map(crate::store::labels_of_run)
                .unwrap_or_default()
        };
        let a = of(&self.a);
        let named = |l: &Labels| l.metrics.iter().any(|m| m.1.is_some()) || !l.axes.is_empty();
        if named(&a) {
            a
        } else {
            of(&self.b)
        }
    }

    /// Writes the chart of series `si` (its compared points `points`) to `stem`: titled and labelled as `sweep plot` names the
    /// series, each run with its band, B/A with u_A + u_B beneath.
    fn chart(
        &self,
        si: usize,
        points: &[&PointCmp],
        x: &str,
        labels: &Labels,
        stem: &Path,
    ) -> Result<Vec<PathBuf>, crate::report::ReportError> {
        let s = &self.series[si];
        let metric = metric_of_column(labels, &s.metric);
        // The series' group: every axis but x, as the analysis of A grouped them.
        let by: Vec<&String> = self.axes.iter().filter(|a| *a != x).collect();
        let group: Vec<(String, String)> = by
            .iter()
            .zip(&s.group)
            .map(|(a, v)| (a.to_string(), v.clone()))
            .collect();
        let title = crate::report::series_title(labels, metric, &group, x);
        let x_at = self.axes.iter().position(|a| a == x);
        let mine: Vec<(f64, &PointCmp)> = points
            .iter()
            .filter_map(|&p| {
                let v = self.axis_values(p).nth(x_at?)?;
                // Keys hold numbers as Rust prints them (`read::key`).
                Some((v.parse::<f64>().ok()?, p))
            })
            .collect();
        let u_a: Vec<(f64, f64)> = mine.iter().map(|(x, p)| (*x, p.u_a)).collect();
        let u_b: Vec<(f64, f64)> = mine.iter().map(|(x, p)| (*x, p.u_b)).collect();
        let ratio: Vec<RatioPoint> = mine
            .iter()
            .map(|(x, p)| RatioPoint {
                x: *x,
                ratio: p.ratio,
                u: p.u_a + p.u_b,
            })
            .collect();
        let (label_a, label_b) = (
            format!("A: {}", self.a.label()),
            format!("B: {}", self.b.label()),
        );
        let curves = [
            Curve {
                label: &label_a,
                points: &s.curve_a,
                u: &u_a,
            },
            Curve {
                label: &label_b,
                points: &s.curve_b,
                u: &u_b,
            },
        ];
        let x_name = labels.axis(x);
        let names = Names {
            title: &title,
            x_name: &x_name,
            unit: &s.unit,
            quantity: labels.metric(metric).unwrap_or(metric),
        };
        compare_chart(stem, &names, &curves, &ratio, None)
    }
}

/// The metric of `column` (`shared_nc_grid` of `shared_nc_grid_mflops`): the longest metric
/// name of the spec that is the column or its start before a `_`; the column itself else.
fn metric_of_column<'a>(labels: &'a Labels, column: &'a str) -> &'a str {
    labels
        .metrics
        .iter()
        .map(|m| m.0.as_str())
        .filter(|m| {
            column == *m
                || column
                    .strip_prefix(m)
                    .is_some_and(|rest| rest.starts_with('_'))
        })
        .max_by_key(|m| m.len())
        .unwrap_or(column)
}
