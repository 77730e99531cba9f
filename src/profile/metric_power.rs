//! `[profile] metric_power_ms`: each timing-core metric's own power. nvidia-smi's instant reading
//! changes about every 100 ms on an H100 while one metric measures for ~25 ms (power.rs), so the
//! timed run cannot say which metric drew what. After the timed run (and ncu, if any), before the
//! next gate opens, the program runs once more in the timing core's power mode
//! (`SWEEP_POWER_MS=n`): each metric's call loops back to back for n ms and the program prints the
//! loop's window (`@sweep power metric=NAME t0=.. t1=.. calls=..`). The samples inside a window,
//! less its first part while the reading catches up, give `<metric>__power_w`; the metric's timed
//! value over it gives `<metric>__<unit>_per_w` (MFlops/W, i.e. millions of flops per joule;
//! GB/s per W = GB per joule).

use super::config::SEP;
use super::power::{PowerSource, Sample};
use std::collections::BTreeMap;

/// Files in the point's folder: the power run's command line, stdout and stderr.
pub const CMD: &str = "power.cmd";
pub const STDOUT: &str = "power.stdout.txt";
pub const STDERR: &str = "power.stderr.txt";

/// The part of a window left out before averaging: the reading lags the load by up to ~100 ms
/// (one update) plus nvidia-smi's own averaging; at most this share of the window.
const SETTLE_S: f64 = 0.2;
const SETTLE_SHARE: f64 = 0.4;

/// The two columns a metric gets: its watts, and its value per watt.
pub fn columns(metric: &str, unit_slug: &str) -> [String; 2] {
    [
        format!("{metric}{SEP}power_w"),
        format!("{metric}{SEP}{unit_slug}_per_w"),
    ]
}

/// A column of the power pass (`<metric>__power_w`, `<metric>__<unit>_per_w`): not a counter (the
/// analysis never names it as one; the JSON export puts it under `power`).
pub fn is_column(column: &str) -> bool {
    column.contains(SEP) && (column.ends_with("__power_w") || column.ends_with("_per_w"))
}

/// One metric's loop, from its `@sweep power` line.
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    pub metric: String,
    pub t0: f64,
    pub t1: f64,
    pub calls: u64,
}

/// The windows the program printed; `window=none` (a derived value) gives none.
pub fn windows(stdout: &str) -> Vec<Window> {
    crate::parse::core_lines(stdout)
        .into_iter()
        .filter_map(|f| {
            let num = |k: &str| f.get(k).and_then(|v| v.parse::<f64>().ok());
            let (t0, t1, calls) = (num("t0")?, num("t1")?, num("calls")?);
            let metric = f.get("metric")?.clone();
            (t1 > t0).then_some(Window {
                metric,
                t0,
                t1,
                calls: calls as u64,
            })
        })
        .collect()
}

/// A metric in the power pass: its name, its value column and unit slug.
pub struct Wanted<'a> {
    pub metric: &'a str,
    pub value_column: String,
    pub unit_slug: String,
}

/// Each metric's watts (`<metric>__power_w`) from the windows and the samples. Returns the
/// columns and what kept some of them empty.
pub fn per_metric(
    windows: &[Window],
    source: &dyn PowerSource,
    wanted: &[Wanted],
) -> (BTreeMap<String, f64>, Vec<String>) {
    let mut out = BTreeMap::new();
    let mut problems = Vec::new();
    for w in wanted {
        let Some(win) = windows.iter().find(|x| x.metric == w.metric) else {
            problems.push(format!("no power window for `{}`", w.metric));
            continue;
        };
        let from = win.t0 + SETTLE_S.min(SETTLE_SHARE * (win.t1 - win.t0));
        let samples = source.between(from, win.t1);
        let Some(watts) = mean_watts(&samples) else {
            problems.push(format!(
                "no power sample in `{}`'s {:.0} ms window",
                w.metric,
                (win.t1 - win.t0) * 1e3
            ));
            continue;
        };
        let [power_col, _] = columns(w.metric, &w.unit_slug);
        out.insert(power_col, watts);
    }
    (out, problems)
}

/// Each metric's value per watt (`<metric>__<unit>_per_w`) from the row's final values: its value
/// (with `repeat`, the median over the processes) over its watts. Where either is missing, none.
pub fn add_per_watt(values: &mut BTreeMap<String, f64>, wanted: &[Wanted]) {
    for w in wanted {
        let [power_col, per_w_col] = columns(w.metric, &w.unit_slug);
        let (Some(v), Some(watts)) = (values.get(&w.value_column), values.get(&power_col)) else {
            continue;
        };
        if *watts > 0.0 {
            let per_w = v / watts;
            values.insert(per_w_col, per_w);
        }
    }
}

/// Runs the power pass of one measured point: `program` (the point's command, as the timed run
/// had it) with `SWEEP_POWER_MS`, its output in the point's folder, within `limit`; then the
/// columns of [`per_metric`]. The second value says why cells stay empty (`power: ...`).
pub fn run_pass(
    program: &crate::exec::Cmd,
    point_dir: &std::path::Path,
    every: std::time::Duration,
    limit: std::time::Duration,
    source: &dyn PowerSource,
    wanted: &[Wanted],
) -> (BTreeMap<String, f64>, Option<String>) {
    use crate::exec::Exit;
    let mut cmd = program.clone();
    cmd.env.insert(
        "SWEEP_POWER_MS".into(),
        format!("{}", every.as_secs_f64() * 1e3),
    );
    let _ = std::fs::write(point_dir.join(CMD), format!("{}\n", cmd.line()));
    let (out_path, err_path) = (point_dir.join(STDOUT), point_dir.join(STDERR));
    let sink = crate::exec::Sink::Split {
        stdout: &out_path,
        stderr: &err_path,
    };
    let fail = |why: String| (BTreeMap::new(), Some(format!("power: {why}")));
    let outcome = match crate::exec::run(&cmd, limit, sink) {
        Ok(o) => o,
        Err(e) => return fail(e.to_string()),
    };
    if let Exit::TimedOut(t) = outcome.exit {
        return fail(format!(
            "the power pass timed out after {} s (log: {})",
            t.as_secs_f64(),
            err_path.display()
        ));
    }
    if !outcome.success() {
        return fail(format!(
            "the power pass failed with {} (log: {})",
            outcome.describe(),
            err_path.display()
        ));
    }
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let (cols, problems) = per_metric(&windows(&stdout), source, wanted);
    let why = (!problems.is_empty()).then(|| {
        format!(
            "power: {} (log: {})",
            problems.join("; "),
            out_path.display()
        )
    });
    (cols, why)
}

/// How long a power pass may take: every metric's loop, plus the program's start-up and its
/// checks (the timed run's own limit).
pub fn limit(
    every: std::time::Duration,
    metrics: usize,
    run_timeout: std::time::Duration,
) -> std::time::Duration {
    every * (metrics as u32).max(1) * 2 + run_timeout
}

fn mean_watts(samples: &[Sample]) -> Option<f64> {
    (!samples.is_empty())
        .then(|| samples.iter().map(|s| s.watts).sum::<f64>() / samples.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples every 20 ms: 100 W before t = 10.1, 300 W after (the reading's step lags the load).
    struct Stepped;
    impl PowerSource for Stepped {
        fn between(&self, from: f64, to: f64) -> Vec<Sample> {
            (0..2000)
                .map(|i| 9.0 + i as f64 * 0.02)
                .filter(|t| *t >= from && *t <= to)
                .map(|t| Sample {
                    t,
                    watts: if t < 10.1 { 100.0 } else { 300.0 },
                    sm_mhz: 1980.0,
                    temp_c: 40.0,
                })
                .collect()
        }
    }

    fn wanted(metric: &str) -> Wanted<'_> {
        Wanted {
            metric,
            value_column: format!("{metric}_mflops"),
            unit_slug: "mflops".into(),
        }
    }

    #[test]
    fn windows_are_read_from_the_power_lines() {
        let out = "MFlops: 1\n@sweep power metric=add t0=10.000000 t1=11.000000 calls=4000\n\
                   @sweep power metric=ratio window=none\n@sweep metric=x unit=s value=1\n";
        assert_eq!(
            windows(out),
            [Window {
                metric: "add".into(),
                t0: 10.0,
                t1: 11.0,
                calls: 4000
            }]
        );
    }

    #[test]
    fn a_metric_gets_the_settled_mean_of_its_window_and_its_value_per_watt() {
        let w = windows("@sweep power metric=add t0=10.0 t1=11.0 calls=9\n");
        let (mut cols, problems) = per_metric(&w, &Stepped, &[wanted("add")]);
        assert!(problems.is_empty(), "{problems:?}");
        // The first 200 ms (the 100 W readings before the step) are left out.
        assert_eq!(cols["add__power_w"], 300.0);
        cols.insert("add_mflops".into(), 60_000.0);
        add_per_watt(&mut cols, &[wanted("add"), wanted("mul")]);
        assert_eq!(cols["add__mflops_per_w"], 200.0);
        assert!(!cols.contains_key("mul__mflops_per_w"));
    }

    #[test]
    fn a_missing_window_or_sample_leaves_the_cells_empty_and_says_why() {
        let w = windows("@sweep power metric=add t0=100.0 t1=101.0 calls=9\n");
        let (cols, problems) = per_metric(&w, &Stepped, &[wanted("add"), wanted("mul")]);
        assert!(cols.is_empty());
        assert_eq!(
            problems,
            [
                "no power sample in `add`'s 1000 ms window",
                "no power window for `mul`"
            ]
        );
    }
}
