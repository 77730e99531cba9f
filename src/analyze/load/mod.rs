//! A run read ([`store::Run`]) into series: which axis is x, and one series per combination of
//! the other axes and per metric. Which columns are axes and metrics is the store's
//! ([`crate::store::columns`]).

pub(crate) use crate::store::columns::{stat_column, unit_of_column, MetricColumn};

use super::{AnalyzeError, AnalyzeOptions};
use crate::store::schema::{Status, POINT_ID_COLUMN, STATUS_COLUMN};
use crate::store::Run;

/// (x, value) pairs of one curve; `None` for failed points and empty cells.
type Curve = Vec<(f64, Option<f64>)>;

/// One series before analysis.
pub(crate) struct RawSeries {
    /// Values of the grouping axes, in axis order.
    pub group: Vec<(String, String)>,
    pub metric: MetricColumn,
    pub points: Curve,
    /// The timing core's placement spread of each point with a value (`<metric>_spread`), in
    /// the order of `points`; empty when the CSV has no such column.
    pub spread: Vec<(f64, f64)>,
    /// The relative 95 % half-width of each point with a value (`<metric>_rel_ci`), in the order
    /// of `points`; empty when the CSV has no such column.
    pub rel_ci: Vec<(f64, f64)>,
    /// The metric's own status at each measured point (`store::metric_status`), with its value,
    /// in the order of `points`.
    pub statuses: Vec<PointStatus>,
}

/// A point's x, its value and its metric's own status there.
pub(crate) type PointStatus = (f64, Option<f64>, Status);

/// Of the rows of one series, the one that speaks for each x, sorted by x: where several rows
/// share an x (series grouped by fewer axes, repeats in a CSV without point ids), the row whose value is
/// nearest the value the analysis took there (`data`: their median), then the least by `tie`, so
/// the order of the rows never decides. `rows`: (x, the row's value where it has one, what it
/// says).
pub(crate) fn one_row_per_x<T>(
    rows: Vec<(f64, Option<f64>, T)>,
    data: &[(f64, Option<f64>)],
    tie: impl Fn(&T, &T) -> std::cmp::Ordering,
) -> Vec<(f64, T)> {
    let mut rows: Vec<(f64, f64, T)> = rows
        .into_iter()
        .filter(|r| r.0.is_finite())
        .map(|(x, v, t)| {
            // `data` is sorted by x, one point per x: found by halving, not by a scan per row.
            let taken = data
                .binary_search_by(|p| p.0.partial_cmp(&x).unwrap_or(std::cmp::Ordering::Less))
                .ok()
                .and_then(|i| data[i].1);
            let distance = match (v, taken) {
                (Some(v), Some(t)) => (v - t).abs(),
                _ => f64::INFINITY,
            };
            (x, distance, t)
        })
        .collect();
    rows.sort_by(|a, b| {
        a.0.total_cmp(&b.0)
            .then(a.1.total_cmp(&b.1))
            .then_with(|| tie(&a.2, &b.2))
    });
    rows.dedup_by(|later, first| later.0 == first.0);
    rows.into_iter().map(|(x, _, t)| (x, t)).collect()
}

pub(crate) use crate::store::schema::carries_values;

/// How a run is read into series.
pub(crate) trait Series {
    fn is_numeric(&self, col: usize) -> bool;
    fn distinct(&self, col: usize) -> usize;
    fn select(
        &self,
        opts: &AnalyzeOptions,
    ) -> Result<(String, Vec<String>, Vec<MetricColumn>), AnalyzeError>;
    fn series(
        &self,
        x: &str,
        by: &[String],
        metrics: &[MetricColumn],
    ) -> Result<Vec<RawSeries>, AnalyzeError>;
}

/// Where to turn when axis `x` is not numeric: the numeric axes --x could take, or, when there is
/// none, bars.
fn other_x_hint(run: &Run, x: &str) -> String {
    let numeric: Vec<String> = run
        .axes
        .iter()
        .filter(|a| *a != x && run.column(a).is_some_and(|c| run.is_numeric(c)))
        .cloned()
        .collect();
    if numeric.is_empty() {
        "every axis is a category: `sweep plot` and `sweep report` without --x draw such a run as bars".to_string()
    } else {
        let named: Vec<String> = numeric.iter().map(|a| format!("`{a}`")).collect();
        format!(
            "the numeric axes are {}; name one with --x",
            named.join(", ")
        )
    }
}

impl Run {
    /// Of the axes that hold numbers and some text, the first one's first cell of text, as the
    /// error that names it.
    fn first_stray_cell(&self) -> Option<AnalyzeError> {
        self.axes.iter().find_map(|a| {
            let col = self.column(a)?;
            let cells = || self.rows.iter().map(|row| self.cell(row, col));
            cells().any(|c| self.number(c).is_some()).then_some(())?;
            let (line, value) = cells()
                .enumerate()
                .find(|(_, c)| !c.is_empty() && self.number(c).is_none())?;
            Some(AnalyzeError::NotNumeric {
                axis: a.clone(),
                value: value.to_string(),
                path: self.path.clone(),
                line: line + 2,
                hint: format!("mend that cell; else {}", other_x_hint(self, a)),
            })
        })
    }
}

impl Series for Run {
    /// Whether every non-empty value of the column is a number.
    fn is_numeric(&self, col: usize) -> bool {
        let mut any = false;
        for row in &self.rows {
            let c = self.cell(row, col);
            if c.is_empty() {
                continue;
            }
            if self.number(c).is_none() {
                return false;
            }
            any = true;
        }
        any
    }

    /// How many different cells the column has (a set: no sort of a million cells).
    fn distinct(&self, col: usize) -> usize {
        let mut seen: std::collections::HashSet<&str> = Default::default();
        for row in &self.rows {
            seen.insert(self.cell(row, col));
        }
        seen.len()
    }

    /// The x axis, the grouping axes and the metrics the options ask for.
    fn select(
        &self,
        opts: &AnalyzeOptions,
    ) -> Result<(String, Vec<String>, Vec<MetricColumn>), AnalyzeError> {
        if self.rows.is_empty() {
            return Err(AnalyzeError::NoRows {
                path: self.path.clone(),
            });
        }
        let listed = |names: &[String]| {
            names
                .iter()
                .map(|a| format!("`{a}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let known_axis = |name: &str| -> Result<(), AnalyzeError> {
            if self.axes.iter().any(|a| a == name) {
                Ok(())
            } else {
                Err(AnalyzeError::UnknownAxis {
                    name: name.to_string(),
                    path: self.path.clone(),
                    axes: listed(&self.axes),
                })
            }
        };
        let x = match &opts.x {
            Some(x) => {
                known_axis(x)?;
                x.clone()
            }
            None => {
                // The numeric axis with the most distinct values.
                let mut best: Option<(&String, usize)> = None;
                for a in &self.axes {
                    let Some(col) = self.column(a) else { continue };
                    if !self.is_numeric(col) {
                        continue;
                    }
                    let n = self.distinct(col);
                    if best.is_none_or(|(_, b)| n > b) {
                        best = Some((a, n));
                    }
                }
                match best {
                    Some((a, _)) => a.clone(),
                    // An axis of numbers but for a cell or a few (edited by hand, a cell of
                    // text pasted in) is named with its first such cell: "every axis is a
                    // category" would hide the one cell to mend.
                    None => {
                        return Err(self.first_stray_cell().unwrap_or_else(|| {
                            AnalyzeError::NoNumericAxis {
                                path: self.path.clone(),
                                axes: listed(&self.axes),
                            }
                        }))
                    }
                }
            }
        };
        let by = match &opts.by {
            Some(by) => {
                for b in by {
                    known_axis(b)?;
                }
                // A series runs along x: split by it too, it was dropped without a word, and the
                // axes left out merged into medians (review 19a M3).
                if by.contains(&x) {
                    return Err(AnalyzeError::ByNamesX {
                        x: x.clone(),
                        path: self.path.clone(),
                        others: listed(
                            &self
                                .axes
                                .iter()
                                .filter(|a| **a != x)
                                .cloned()
                                .collect::<Vec<_>>(),
                        ),
                    });
                }
                by.clone()
            }
            None => self.axes.iter().filter(|a| **a != x).cloned().collect(),
        };
        let mut metrics: Vec<MetricColumn> = if opts.y.is_empty() {
            self.metrics.clone()
        } else {
            let names: Vec<String> = self.metrics.iter().map(|m| m.column.clone()).collect();
            opts.y
                .iter()
                .map(|y| {
                    self.metrics
                        .iter()
                        .find(|m| m.column == *y || m.name == *y)
                        .cloned()
                        .ok_or_else(|| AnalyzeError::UnknownMetric {
                            name: y.clone(),
                            path: self.path.clone(),
                            metrics: listed(&names),
                        })
                })
                .collect::<Result<_, _>>()?
        };
        // A metric named twice (`--y copy,copy_gb_per_s`) is one series, analysed once.
        let mut seen = std::collections::HashSet::new();
        metrics.retain(|m| seen.insert(m.column.clone()));
        if metrics.is_empty() {
            return Err(AnalyzeError::NoMetrics {
                path: self.path.clone(),
            });
        }
        Ok((x, by, metrics))
    }

    /// One series per combination of the grouping axes (in order of first appearance) and metric.
    fn series(
        &self,
        x: &str,
        by: &[String],
        metrics: &[MetricColumn],
    ) -> Result<Vec<RawSeries>, AnalyzeError> {
        let x_col = self.column(x).ok_or_else(|| AnalyzeError::UnknownAxis {
            name: x.to_string(),
            path: self.path.clone(),
            axes: x.to_string(),
        })?;
        let by_cols: Vec<usize> = by.iter().filter_map(|b| self.column(b)).collect();
        let status_col = self.column(STATUS_COLUMN);
        let metric_cols: Vec<Option<usize>> =
            metrics.iter().map(|m| self.column(&m.column)).collect();
        // The placement spread of each metric, by name or by a prefix of its column.
        let spread_cols: Vec<Option<usize>> = metrics
            .iter()
            .map(|m| stat_column(&self.header, m, "spread"))
            .collect();
        let ci_cols: Vec<Option<usize>> = metrics
            .iter()
            .map(|m| stat_column(&self.header, m, "rel_ci"))
            .collect();
        let own_cols: Vec<Option<usize>> = metrics
            .iter()
            .map(|m| self.column(&crate::store::metric_status_column(&m.name)))
            .collect();
        let target = self.target_rel_ci();
        let mut statuses: Vec<Vec<Vec<PointStatus>>> = Vec::new();
        let mut spreads: Vec<Vec<Vec<(f64, f64)>>> = Vec::new();
        let mut cis: Vec<Vec<Vec<(f64, f64)>>> = Vec::new();
        // Each group's cells, borrowed from the rows: a row's group is looked up by its cells
        // (no String made a row), first against the row before's (rows of one group mostly
        // come together).
        let mut groups: Vec<Vec<&str>> = Vec::new();
        let mut group_of: std::collections::HashMap<Vec<&str>, usize> = Default::default();
        let mut key: Vec<&str> = Vec::with_capacity(by_cols.len());
        let mut last: Option<usize> = None;
        // Points of each group, then of each metric.
        let mut points: Vec<Vec<Curve>> = Vec::new();
        // The first cell of each x (by its number, -0 as 0) in each group: two cells written
        // apart that one number holds (integers past 2^53 (review 11b), `0` and `-0`, `1` and
        // `1.0` (review 12b H1)) are two points, which would be averaged as repeats of one.
        let mut first_x: std::collections::HashMap<(usize, u64), (&str, usize)> =
            Default::default();
        // A run's rows name their point: two rows of one point are refused, as every reader of
        // a run refuses them (review 12b H2: their median was taken).
        // Only in a run (its manifest beside the CSV): a CSV alone, made by hand or elsewhere,
        // may repeat an id, its rows read as repeats of their x as before.
        let id_col = self.manifest.as_ref().and(self.column(POINT_ID_COLUMN));
        self.check_ids()?;
        // And two rows of a run at one point's axis values, each under an id of its own (an
        // edited axis cell): their median was drawn, a value no point measured (review 16b B1).
        let axis_cols: Vec<usize> = match id_col {
            Some(_) => self.axes.iter().filter_map(|a| self.column(a)).collect(),
            None => Vec::new(),
        };
        let mut first_at: std::collections::HashMap<Vec<&str>, usize> = Default::default();
        for (line, row) in self.rows.iter().enumerate() {
            if id_col
                .map(|c| self.cell(row, c))
                .is_some_and(|id| !id.is_empty())
            {
                let at: Vec<&str> = axis_cols.iter().map(|&c| self.cell(row, c)).collect();
                if !axis_cols.is_empty() {
                    if let Some(&first) = first_at.get(&at) {
                        let values: Vec<String> = axis_cols
                            .iter()
                            .zip(&at)
                            .map(|(&c, v)| format!("{}={v}", self.header[c]))
                            .collect();
                        return Err(AnalyzeError::Store(crate::store::StoreError::TwoRows {
                            path: self.path.clone(),
                            point: crate::units::visible(&values.join(" ")).into_owned(),
                            first,
                            second: line + 1,
                        }));
                    }
                    first_at.insert(at, line + 1);
                }
            }
            let x_cell = self.cell(row, x_col);
            // `inf` and `nan` are no place on an axis: dropped, their rows vanished from the
            // readings unsaid (review 13b F4).
            let xv = self
                .number(x_cell)
                .filter(|v| v.is_finite())
                .ok_or_else(|| AnalyzeError::NotNumeric {
                    axis: x.to_string(),
                    value: x_cell.to_string(),
                    path: self.path.clone(),
                    line: line + 2,
                    hint: other_x_hint(self, x),
                })?;
            key.clear();
            key.extend(by_cols.iter().map(|&c| self.cell(row, c)));
            let known = last
                .filter(|&g| groups[g] == key)
                .or_else(|| group_of.get(key.as_slice()).copied());
            let g = match known {
                Some(g) => g,
                None => {
                    group_of.insert(key.clone(), groups.len());
                    groups.push(key.clone());
                    points.push(vec![Vec::new(); metrics.len()]);
                    spreads.push(vec![Vec::new(); metrics.len()]);
                    cis.push(vec![Vec::new(); metrics.len()]);
                    statuses.push(vec![Vec::new(); metrics.len()]);
                    groups.len() - 1
                }
            };
            last = Some(g);
            {
                let bits = if xv == 0.0 {
                    0.0f64.to_bits()
                } else {
                    xv.to_bits()
                };
                match first_x.entry((g, bits)) {
                    std::collections::hash_map::Entry::Vacant(e) => {
                        e.insert((x_cell, line + 2));
                    }
                    std::collections::hash_map::Entry::Occupied(e) => {
                        let (first, first_line) = *e.get();
                        if first.trim() != x_cell.trim() {
                            return Err(AnalyzeError::XTooClose {
                                axis: x.to_string(),
                                a: first.to_string(),
                                line_a: first_line,
                                b: x_cell.to_string(),
                                line_b: line + 2,
                                path: self.path.clone(),
                            });
                        }
                    }
                }
            }
            let ok = status_col.is_none_or(|c| carries_values(self.cell(row, c)));
            for (m, col) in metric_cols.iter().enumerate() {
                let value = col
                    .filter(|_| ok)
                    .and_then(|c| self.number(self.cell(row, c)))
                    .filter(|v| v.is_finite());
                points[g][m].push((xv, value));
                let spread = spread_cols[m]
                    .filter(|_| value.is_some())
                    .and_then(|c| self.number(self.cell(row, c)))
                    .filter(|v| v.is_finite());
                if let Some(s) = spread {
                    spreads[g][m].push((xv, s));
                }
                let stat = |c: Option<usize>| {
                    c.and_then(|c| self.number(self.cell(row, c)))
                        .filter(|v| v.is_finite())
                };
                if let Some(ci) = stat(ci_cols[m]).filter(|_| value.is_some()) {
                    cis[g][m].push((xv, ci));
                }
                let own = crate::store::metric_status(
                    crate::store::MetricCells {
                        row_status: status_col.map_or("ok", |c| self.cell(row, c)),
                        own: own_cols[m].map(|c| self.cell(row, c)),
                        spread: stat(spread_cols[m]),
                        rel_ci: stat(ci_cols[m]),
                    },
                    target,
                );
                if let (Some(st), Some(_)) = (own, value) {
                    statuses[g][m].push((xv, value, st));
                }
            }
        }
        let mut out = Vec::new();
        for ((((key, per_metric), per_spread), per_ci), per_status) in groups
            .into_iter()
            .zip(points)
            .zip(spreads)
            .zip(cis)
            .zip(statuses)
        {
            for ((((metric, pts), spread), rel_ci), statuses) in metrics
                .iter()
                .zip(per_metric)
                .zip(per_spread)
                .zip(per_ci)
                .zip(per_status)
            {
                out.push(RawSeries {
                    group: by
                        .iter()
                        .cloned()
                        .zip(key.iter().map(|v| v.to_string()))
                        .collect(),
                    metric: metric.clone(),
                    points: pts,
                    spread,
                    rel_ci,
                    statuses,
                });
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// A profiled run's CSV without its manifest: the `[profile]` counters (`<metric>__<counter>`)
    /// and the power columns are not metrics of their own; a metric whose name merely holds `__`
    /// still is.
    #[test]
    fn profile_columns_are_not_guessed_as_metrics() {
        let dir = tempfile::tempdir().unwrap();
        let csv = write(
            dir.path(),
            "results.csv",
            "point_id,index,k,status,fast_s,fast_rel_ci,fast__dram__bytes_read.sum,fast__shared_wavefronts_per_request,copy__v2_gb_per_s,power_w,power_max_w,energy_j,power_sm_mhz,power_temp_c,power_samples,build_s,run_s,cached,gpu_index,gpu_name,gpu_uuid,error
             a,0,1,ok,1,0.01,1001,1,5,250.5,250.5,38.2,1980,40,7,0.1,0.2,0,,,,
             b,1,2,ok,2,0.01,1002,2,6,250.5,250.5,38.7,1980,40,7,0.1,0.2,0,,,,
",
        );
        let t = Run::open(&csv).unwrap();
        let cols: Vec<&str> = t.metrics.iter().map(|m| m.column.as_str()).collect();
        assert_eq!(cols, ["fast_s", "copy__v2_gb_per_s"]);
    }

    #[test]
    fn columns_are_guessed_from_the_header_without_a_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let csv = write(
            dir.path(),
            "results.csv",
            "point_id,index,threads,variant,status,copy_gb_per_s,copy_median_gb_per_s,copy_rel_ci,copy_samples,build_s,run_s,cached,gpu_index,gpu_name,gpu_uuid,error\n\
             a,0,1,x,ok,10.5,10.4,0.01,12,0.5,0.1,false,0,H100,u,\n\
             b,1,2,x,run_failed,,,,,0.5,0.1,false,0,H100,u,boom\n",
        );
        let t = Run::open(&csv).unwrap();
        assert_eq!(t.axes, ["threads", "variant"]);
        let cols: Vec<&str> = t.metrics.iter().map(|m| m.column.as_str()).collect();
        assert_eq!(cols, ["copy_gb_per_s"]);
        assert_eq!(t.metrics[0].unit, "GB/s");
    }

    #[test]
    fn manifest_names_axes_and_metrics() {
        let dir = tempfile::tempdir().unwrap();
        let csv = write(
            dir.path(),
            "results.csv",
            "point_id,index,n,status,mflops,build_s\na,0,1,ok,5,0.1\n",
        );
        let manifest = crate::store::Manifest {
            axes: vec!["n".into()],
            metrics: vec![crate::store::MetricInfo {
                name: "mflops".into(),
                unit: "MFlops".into(),
                column: "mflops".into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        manifest.save(dir.path()).unwrap();
        let t = Run::open(&csv).unwrap();
        assert_eq!(t.axes, ["n"]);
        assert_eq!(
            t.metrics,
            [MetricColumn {
                name: "mflops".into(),
                unit: "MFlops".into(),
                column: "mflops".into(),
                ..Default::default()
            }]
        );
    }

    #[test]
    fn semicolon_dialect_reads_decimal_commas_and_failed_rows_are_gaps() {
        let dir = tempfile::tempdir().unwrap();
        let csv = write(
            dir.path(),
            "results.csv",
            "point_id;index;stride;status;copy_gb_per_s;error\na;0;1;ok;2713,5;\nb;1;2;timeout;;slow\nc;2;3;noisy;1000,25;\n",
        );
        let t = Run::open(&csv).unwrap();
        assert_eq!(t.dialect, crate::store::Dialect::Semicolon);
        let (x, by, metrics) = t.select(&AnalyzeOptions::default()).unwrap();
        assert_eq!((x.as_str(), by.len()), ("stride", 0));
        let s = t.series(&x, &by, &metrics).unwrap();
        assert_eq!(
            s[0].points,
            [(1.0, Some(2713.5)), (2.0, None), (3.0, Some(1000.25))]
        );
    }

    #[test]
    fn x_defaults_to_the_numeric_axis_with_most_values_and_series_split_by_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = String::from("point_id,index,variant,threads,status,mflops\n");
        for (i, (v, t)) in [("a", 1), ("a", 2), ("a", 3), ("b", 1), ("b", 2), ("b", 3)]
            .iter()
            .enumerate()
        {
            text += &format!("p{i},{i},{v},{t},ok,{}\n", t * 10);
        }
        let t = Run::open(&write(dir.path(), "results.csv", &text)).unwrap();
        let (x, by, metrics) = t.select(&AnalyzeOptions::default()).unwrap();
        assert_eq!(
            (x.as_str(), by.as_slice()),
            ("threads", ["variant".to_string()].as_slice())
        );
        let s = t.series(&x, &by, &metrics).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].group, [("variant".to_string(), "b".to_string())]);
    }

    #[test]
    fn unknown_axis_names_the_culprit_and_the_choices() {
        let dir = tempfile::tempdir().unwrap();
        let t = Run::open(&write(
            dir.path(),
            "results.csv",
            "point_id,index,n,status,mflops\na,0,1,ok,5\n",
        ))
        .unwrap();
        let opts = AnalyzeOptions {
            x: Some("threads".into()),
            ..Default::default()
        };
        let err = t.select(&opts).err().unwrap().to_string();
        assert!(err.starts_with("no axis `threads` in `"), "{err}");
        assert!(err.ends_with("(hint: the axes are `n`)"), "{err}");
    }

    #[test]
    fn a_csv_with_a_header_and_no_row_says_so() {
        let tmp = tempfile::tempdir().unwrap();
        let csv = write(
            tmp.path(),
            "results.csv",
            "point_id,index,threads,status,mflops,error\r\n",
        );
        let t = Run::open(&csv).unwrap();
        let err = t
            .select(&AnalyzeOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.ends_with(
                "has no rows yet (hint: analyse it once the run has measured some points)"
            ),
            "{err}"
        );
    }

    #[test]
    fn a_csv_without_status_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = Run::open(&write(dir.path(), "results.csv", "a,b\n1,2\n"))
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("has no `status` column"), "{err}");
    }
}
