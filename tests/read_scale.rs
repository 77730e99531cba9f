//! The read side scales with the rows of a run (issue 38 item 12): `analyze` and `compare` of a
//! synthetic run of ten times the rows take about ten times as long. Runs of many short series
//! (4 points each: no curve to analyse, the reading, grouping and matching alone) at 10^4 and
//! 10^5 rows run with the other tests; runs of 10^5 and 10^6 rows of series of 1000 points are
//! ignored: they want a release build (`cargo test --release --test integration -- --ignored
//! read_scale`); `bench/read_scale.sh` measures the same with the binary and keeps its output.
//! Most of their time is the curve analysis of each series (bench/read_scale.txt).

use std::path::Path;
use std::time::{Duration, Instant};
use sweep::store::{Manifest, MetricInfo, RunState};

/// A run folder of `rows` points over axes x = 1..`per` and g (a group per `per` rows, named
/// `s0`, `s1`, …: a category, so that x is the axis analysed however short), one metric that
/// steps down every 32 x, scaled by `factor`.
fn synthetic_run(dir: &Path, rows: usize, per: usize, factor: f64) {
    std::fs::create_dir_all(dir).unwrap();
    let columns: Vec<String> = [
        "point_id",
        "index",
        "x",
        "g",
        "status",
        "copy_gb_per_s",
        "copy_rel_ci",
        "copy_spread",
        "build_s",
        "run_s",
        "cached",
        "gpu_index",
        "gpu_name",
        "gpu_uuid",
        "error",
    ]
    .map(String::from)
    .into();
    let mut text = columns.join(",") + "\n";
    for i in 0..rows {
        let (x, g) = (i % per + 1, i / per);
        let v = factor * (1000.0 - 20.0 * ((x - 1) / 32) as f64 + (i * 7919 % 101) as f64 / 1e3);
        text += &format!("p{i:012x},{i},{x},s{g},ok,{v:.4},0.001,0.002,0.1,0.2,1,0,H100,u,\n");
    }
    std::fs::write(sweep::store::RunDir::new(dir).results(), text).unwrap();
    Manifest {
        sweep: "scale".into(),
        spec: "bench = \"b\"\n".into(),
        bench: "b".into(),
        axes: vec!["x".into(), "g".into()],
        metrics: vec![MetricInfo {
            name: "copy".into(),
            unit: "GB/s".into(),
            column: "copy_gb_per_s".into(),
            ..Default::default()
        }],
        columns,
        points_total: rows,
        state: RunState::Finished,
        ..Default::default()
    }
    .save(dir)
    .unwrap();
}

/// Seconds that `analyze` and `compare` take on runs of `rows` rows, series of `per` points
/// (the least of `tries` tries: the other tests share the machine).
fn times(rows: usize, per: usize, tries: usize) -> (Duration, Duration) {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    synthetic_run(&a, rows, per, 1.0);
    synthetic_run(&b, rows, per, 0.99);
    let csv = sweep::store::RunDir::new(&a).results();
    let (mut analyze, mut compare) = (Duration::MAX, Duration::MAX);
    for _ in 0..tries {
        let start = Instant::now();
        let analysis = sweep::analyze::analyze_csv(&csv, &Default::default()).unwrap();
        analyze = analyze.min(start.elapsed());
        assert_eq!(analysis.series.len(), rows / per, "a series per g");
        let start = Instant::now();
        let c = sweep::compare::compare(&a, &b, &Default::default()).unwrap();
        compare = compare.min(start.elapsed());
        assert_eq!((c.matched, c.points.len()), (rows, rows));
        assert_eq!(c.series.len(), rows / per);
    }
    (analyze, compare)
}

/// Ten times the rows, ten times the time: a step that grows with the square of the rows, the
/// series or the points (a scan of the groups for each row, of the points for each series)
/// takes a hundred times as long at 2.5·10^4 series.
#[test]
fn many_short_series_read_in_linear_time() {
    let (a4, c4) = times(10_000, 4, 2);
    let (a5, c5) = times(100_000, 4, 2);
    eprintln!(
        "10^4 rows: analyze {a4:?}, compare {c4:?}; 10^5 rows: analyze {a5:?}, compare {c5:?}"
    );
    for (what, small, large) in [("analyze", a4, a5), ("compare", c4, c5)] {
        assert!(
            large.as_secs_f64() < 25.0 * small.as_secs_f64() + 0.5,
            "{what}: 10^4 rows {small:?}, 10^5 rows {large:?}"
        );
    }
}

#[test]
#[ignore = "10^6 rows: run with --release (bench/read_scale.sh keeps its figures)"]
fn analyze_and_compare_of_a_million_rows_grow_linearly() {
    let (a5, c5) = times(100_000, 1000, 1);
    let (a6, c6) = times(1_000_000, 1000, 1);
    eprintln!(
        "10^5 rows: analyze {a5:?}, compare {c5:?}; 10^6 rows: analyze {a6:?}, compare {c6:?}"
    );
    for (what, small, large) in [("analyze", a5, a6), ("compare", c5, c6)] {
        // The issue measured 208 s (analyze) and 378 s (compare) on 2 cores.
        assert!(
            large < Duration::from_secs(180),
            "{what} of 10^6 rows took {large:?}"
        );
        // Ten times the rows: about ten times the time, well short of the hundred of a square.
        assert!(
            large.as_secs_f64() < 20.0 * small.as_secs_f64() + 1.0,
            "{what}: 10^5 rows {small:?}, 10^6 rows {large:?}"
        );
    }
}
