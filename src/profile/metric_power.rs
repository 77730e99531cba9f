//! `[profile] metric_power_ms`: each timing-core metric's own power. nvidia-smi's instant reading
//! changes about every 100 ms on an H100 while one metric measures for ~25 ms (power.rs), so the
//! timed run cannot say which metric drew what. After the timed run (and ncu, if any), before the
//! next gate opens, the program runs once more in the timing core's power mode
//! (`SWEEP_POWER_MS=n`): each metric's call loops back to back for n ms and the program prints the
//! loop's window (`@sweep power metric=NAME t0=.. t1=.. calls=..`). The samples inside a window,
//! less its first part while the reading catches up, give `<metric>__power_w`; the metric's timed
//! value over it gives `<metric>__<unit>_per_w` (MFlops/W, i.e. millions of flops per joule;
//! GB/s per W = GB per joule).

use super::power::{PowerSource, Sample};
use crate::spec::profile::{metric_power_columns as columns, SEP};
use std::collections::BTreeMap;

/// Files in the point's folder: the power run's command line, stdout and stderr.
pub const CMD: &str = "power.cmd";
pub const STDOUT: &str = "power.stdout.txt";
pub const STDERR: &str = "power.stderr.txt";

/// The part of a window left out before averaging: the reading lags the load by up to ~100 ms
/// (one update) plus nvidia-smi's own averaging; at most this share of the window.
const SETTLE_S: f64 = 0.2;
const SETTLE_SHARE: f64 = 0.4;

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

/// What one `@sweep power` line says about its metric.
#[derive(Clone, Debug, PartialEq)]
pub enum Line {
    /// The loop's window.
    Window(Window),
    /// `window=none`: a derived value, which launches nothing of its own.
    NoLoad(String),
    /// A line that gives no window: the metric and why.
    Bad(String, String),
}

impl Line {
    fn metric(&self) -> &str {
        match self {
            Line::Window(w) => &w.metric,
            Line::NoLoad(m) | Line::Bad(m, _) => m,
        }
    }
}

/// The `@sweep power` lines the program printed (those without `metric=` say nothing).
pub fn lines(stdout: &str) -> Vec<Line> {
    let power: String = stdout
        .lines()
        .filter(|l| l.trim().starts_with("@sweep power "))
        .map(|l| format!("{}\n", l.trim()))
        .collect();
    crate::parse::core_lines(&power)
        .into_iter()
        .filter_map(|f| {
            let metric = f.get("metric")?.clone();
            if f.get("window").is_some_and(|w| w == "none") {
                return Some(Line::NoLoad(metric));
            }
            let num = |k: &str| {
                f.get(k)
                    .and_then(|v| v.parse::<f64>().ok())
                    .filter(|v| v.is_finite())
            };
            let calls = f.get("calls").and_then(|v| v.parse::<u64>().ok());
            Some(match (num("t0"), num("t1"), calls) {
                (Some(t0), Some(t1), Some(calls)) if t1 > t0 && calls > 0 => Line::Window(Window {
                    metric,
                    t0,
                    t1,
                    calls,
                }),
                (Some(t0), Some(t1), _) if t1 <= t0 => {
                    Line::Bad(metric, format!("t1 = {t1} is not after t0 = {t0}"))
                }
                (Some(_), Some(_), _) => {
                    Line::Bad(metric, "`calls` is not a whole number above 0".to_string())
                }
                _ => Line::Bad(metric, "`t0` or `t1` is not a number".to_string()),
            })
        })
        .collect()
}

/// The windows the program printed; `window=none` (a derived value) and bad lines give none.
pub fn windows(stdout: &str) -> Vec<Window> {
    lines(stdout)
        .into_iter()
        .filter_map(|l| match l {
            Line::Window(w) => Some(w),
            _ => None,
        })
        .collect()
}

/// A metric in the power pass: its name, its value column and unit slug.
pub struct Wanted<'a> {
    pub metric: &'a str,
    pub value_column: String,
    pub unit_slug: String,
}

/// How far a window may reach outside the power pass's process (clock rounding).
const SLACK_S: f64 = 0.5;

/// Each metric's watts (`<metric>__power_w`) from the program's power lines and the samples;
/// `pass`: when the power pass's process started and ended (a window outside it is not its).
/// Returns the columns and what kept some of them empty. A derived value (`window=none`) draws
/// no power of its own: its cells stay empty without a problem.
pub fn per_metric(
    lines: &[Line],
    source: &dyn PowerSource,
    wanted: &[Wanted],
    pass: Option<(f64, f64)>,
) -> (BTreeMap<String, f64>, Vec<String>) {
    let mut out = BTreeMap::new();
    let mut problems = Vec::new();
    for w in wanted {
        let mine: Vec<&Line> = lines.iter().filter(|l| l.metric() == w.metric).collect();
        let win = match mine.as_slice() {
            [] => {
                problems.push(format!("no power window for `{}`", w.metric));
                continue;
            }
            [Line::NoLoad(_)] => continue,
            [Line::Bad(_, why)] => {
                problems.push(format!("bad power window for `{}`: {why}", w.metric));
                continue;
            }
            [Line::Window(win)] => win,
            more => {
                problems.push(format!(
                    "{} power lines for `{}` (one expected)",
                    more.len(),
                    w.metric
                ));
                continue;
            }
        };
        if let Some((start, end)) = pass {
            if win.t0 < start - SLACK_S || win.t1 > end + SLACK_S {
                problems.push(format!(
                    "`{}`'s power window {:.3}..{:.3} lies outside the power pass ({start:.3}..{end:.3})",
                    w.metric, win.t0, win.t1
                ));
                continue;
            }
        }
        let from = win.t0 + SETTLE_S.min(SETTLE_SHARE * (win.t1 - win.t0));
        let samples = source.between(from, win.t1);
        let Some(watts) = mean_watts(&samples) else {
            let trouble = source
                .trouble()
                .map(|t| format!(": {t}"))
                .unwrap_or_default();
            problems.push(format!(
                "no power sample in `{}`'s {:.0} ms window{trouble}",
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
    let mut cmd = program.clone();
    cmd.env.insert(
        "SWEEP_POWER_MS".into(),
        format!("{}", every.as_secs_f64() * 1e3),
    );
    let _ = std::fs::write(point_dir.join(CMD), format!("{}\n", cmd.line()));
    let (out_path, err_path) = (point_dir.join(STDOUT), point_dir.join(STDERR));
    let started = super::power::now();
    if let Err(why) = super::run_program(&cmd, limit, &out_path, &err_path, "the power pass", None)
    {
        return (BTreeMap::new(), Some(format!("power: {why}")));
    }
    let ended = super::power::now();
    let stdout = crate::parse::read_capped(&out_path).unwrap_or_default();
    let (cols, problems) = per_metric(&lines(&stdout), source, wanted, Some((started, ended)));
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
        let w = lines("@sweep power metric=add t0=10.0 t1=11.0 calls=9\n");
        let (mut cols, problems) = per_metric(&w, &Stepped, &[wanted("add")], Some((9.9, 11.1)));
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
        let w = lines("@sweep power metric=add t0=100.0 t1=101.0 calls=9\n");
        let (cols, problems) = per_metric(&w, &Stepped, &[wanted("add"), wanted("mul")], None);
        assert!(cols.is_empty());
        assert_eq!(
            problems,
            [
                "no power sample in `add`'s 1000 ms window",
                "no power window for `mul`"
            ]
        );
    }

    #[test]
    fn a_derived_value_has_no_window_and_no_problem() {
        let w = lines(
            "@sweep power metric=add t0=10.0 t1=11.0 calls=9\n@sweep power metric=ratio window=none\n",
        );
        let (cols, problems) = per_metric(&w, &Stepped, &[wanted("add"), wanted("ratio")], None);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(cols.len(), 1);
        assert_eq!(cols["add__power_w"], 300.0);
    }

    #[test]
    fn bad_duplicate_or_foreign_windows_give_no_watts_and_say_why() {
        let out = "@sweep power metric=a t0=11.0 t1=10.0 calls=9\n\
                   @sweep power metric=b t0=nan t1=11.0 calls=9\n\
                   @sweep power metric=c t0=10.0 t1=11.0\n\
                   @sweep power metric=d t0=10.0 t1=11.0 calls=0\n\
                   @sweep power metric=e t0=10.0 t1=11.0 calls=1\n\
                   @sweep power metric=e t0=12.0 t1=13.0 calls=1\n\
                   @sweep power metric=f t0=0 t1=inf calls=1\n\
                   @sweep power metric=g t0=0 t1=20 calls=1\n\
                   @sweep power metric=h t0=10.0 t1=11.0 calls=1\n";
        let names = ["a", "b", "c", "d", "e", "f", "g", "h"];
        let want: Vec<Wanted> = names.iter().map(|n| wanted(n)).collect();
        let (cols, problems) = per_metric(&lines(out), &Stepped, &want, Some((9.9, 13.1)));
        assert_eq!(cols.keys().collect::<Vec<_>>(), ["h__power_w"]);
        assert_eq!(
            problems,
            [
                "bad power window for `a`: t1 = 10 is not after t0 = 11",
                "bad power window for `b`: `t0` or `t1` is not a number",
                "bad power window for `c`: `calls` is not a whole number above 0",
                "bad power window for `d`: `calls` is not a whole number above 0",
                "2 power lines for `e` (one expected)",
                "bad power window for `f`: `t0` or `t1` is not a number",
                "`g`'s power window 0.000..20.000 lies outside the power pass (9.900..13.100)",
            ]
        );
    }
}
