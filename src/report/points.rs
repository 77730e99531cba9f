//! What the CSV says of each point beyond its value (its uncertainty and status), for the bands
//! and marks of the charts.

use crate::analyze::Analysis;
use crate::events::marks::Mark;

/// What the CSV says of one point of a series beyond its value: x, the relative half-width of its
/// uncertainty (the larger of the 95 % confidence half-width within a placement and half the
/// spread over placements) and the status of the series' own metric there (`ok`, `noisy`,
/// `unstable`: [`crate::store::metric_status`]), or the row's status where it failed.
#[derive(Clone, Debug, PartialEq)]
pub struct PointInfo {
    pub x: f64,
    pub u: f64,
    pub status: String,
    /// Why the series' own metric marks it, in the terminal's words ([`Mark`]: `placement`,
    /// `processes`, `noisy`); `None` for an ok or failed point.
    pub mark: Option<Mark>,
}

/// [`PointInfo`] of every series of `analysis`, by series index, read from its CSV (empty lists
/// where the CSV has no such columns, or cannot be read). Sorted by x, one per x, whatever the
/// order of the rows: where several rows share an x, the one whose value is nearest the value the
/// analysis took there (their median) speaks for it.
pub fn point_info(analysis: &Analysis) -> Vec<Vec<PointInfo>> {
    use crate::analyze::load::{self, stat_column};
    use crate::store::schema::STATUS_COLUMN;
    use crate::store::{metric_status, metric_status_column, MetricCells};
    let Ok(table) = crate::store::Run::open(&analysis.source) else {
        return vec![Vec::new(); analysis.series.len()];
    };
    let (Some(xc), status) = (table.column(&analysis.x), table.column(STATUS_COLUMN)) else {
        return vec![Vec::new(); analysis.series.len()];
    };
    let target = table.target_rel_ci();
    let num = |c: Option<usize>, r: &crate::store::run::Row| {
        c.and_then(|c| r.get(c))
            .and_then(|v| table.number(v))
            .filter(|v| v.is_finite())
    };
    analysis
        .series
        .iter()
        .map(|s| {
            let Some(m) = table.metrics.iter().find(|m| m.column == s.column) else {
                return Vec::new();
            };
            let value = table.column(&m.column);
            let ci = stat_column(&table.header, m, "rel_ci");
            let spread = stat_column(&table.header, m, "spread");
            let own = table.column(&metric_status_column(&m.name));
            let repeat = stat_column(&table.header, m, "repeat_spread");
            let group: Vec<(Option<usize>, &str)> = s
                .group
                .iter()
                .map(|(a, v)| (table.column(a), v.as_str()))
                .collect();
            let rows: Vec<(f64, Option<f64>, PointInfo)> = table
                .rows
                .iter()
                .filter(|r| {
                    group
                        .iter()
                        .all(|(c, v)| c.and_then(|c| r.get(c)).is_some_and(|x| x == *v))
                })
                .filter_map(|r| {
                    let x = num(Some(xc), r)?;
                    let cell = |c: Option<usize>| c.and_then(|c| r.get(c));
                    let row_status = cell(status).unwrap_or_default();
                    let own_status = metric_status(
                        MetricCells {
                            row_status,
                            own: cell(own),
                            spread: num(spread, r),
                            rel_ci: num(ci, r),
                        },
                        target,
                    );
                    let info = PointInfo {
                        x,
                        u: num(ci, r)
                            .unwrap_or(0.0)
                            .max(num(spread, r).unwrap_or(0.0) / 2.0),
                        status: own_status.map_or(row_status, |st| st.as_str()).to_string(),
                        mark: own_status
                            .and_then(|st| Mark::of(st, num(spread, r), num(repeat, r), target)),
                    };
                    Some((x, num(value, r).filter(|_| own_status.is_some()), info))
                })
                .collect();
            load::one_row_per_x(rows, &s.data, |a, b| {
                a.u.total_cmp(&b.u).then(a.status.cmp(&b.status))
            })
            .into_iter()
            .map(|(_, info)| info)
            .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_point_brings_its_uncertainty_and_status_from_the_csv() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("results.csv");
        let mut text = String::from(
            "point_id,index,threads,variant,status,copy_gb_per_s,copy_rel_ci,copy_spread,build_s,run_s,cached,gpu_index,gpu_name,gpu_uuid,error\n",
        );
        for (i, (v, st, ci, sp)) in [
            ("a", "ok", "0.002", "0.01"),
            ("a", "unstable", "0.001", "0.2"),
            ("b", "noisy", "0.03", "0"),
        ]
        .iter()
        .enumerate()
        {
            text += &format!(
                "p{i},{i},{},{v},{st},{},{ci},{sp},1,1,0,0,G,u,\n",
                i + 1,
                100 + i
            );
        }
        std::fs::write(&csv, text).unwrap();
        let analysis = crate::analyze::analyze_csv(
            &csv,
            &crate::analyze::AnalyzeOptions {
                x: Some("threads".into()),
                ..Default::default()
            },
        )
        .unwrap();
        let info = point_info(&analysis);
        let of = |v: &str| {
            let i = analysis
                .series
                .iter()
                .position(|s| s.group == [("variant".to_string(), v.to_string())])
                .unwrap();
            info[i].clone()
        };
        // u is the larger of rel_ci and half the placement spread.
        let a = of("a");
        assert_eq!(a.len(), 2);
        assert_eq!((a[0].x, a[0].u, a[0].status.as_str()), (1.0, 0.005, "ok"));
        assert_eq!(
            (a[1].x, a[1].u, a[1].status.as_str()),
            (2.0, 0.1, "unstable")
        );
        // Marked in the terminal's words: unstable by its placements, noisy.
        assert_eq!((a[0].mark, a[1].mark), (None, Some(Mark::Placement)));
        let b = of("b");
        assert_eq!((b[0].x, b[0].u, b[0].status.as_str()), (3.0, 0.03, "noisy"));
        assert_eq!(b[0].mark, Some(Mark::Noisy));
    }
}
