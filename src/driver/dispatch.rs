//! Where the driver's events go: each one, in turn, to the CSVs (results, a `repeat` run's raw
//! rows, control re-runs), the summary, the timeline and the user's reporter (progress, live
//! report). The runners only emit; what a finished point leaves behind is written by these
//! listeners.

use crate::events::{Event, Reporter, Summary};
use crate::store::{CsvSink, StoreError, TimelineEntry};
use std::collections::HashMap;

/// Which rows a [`CsvWriter`] takes.
#[derive(Clone, Copy)]
pub(super) enum Rows {
    /// Points' rows (`Finished`): `results.csv`, or the pass CSV of a `repeat` run's earlier pass.
    Points,
    /// The last pass's own rows (`Raw`), into its pass CSV; with `recheck`, the held points' rows
    /// (`Held`, then `Raw`) into `passes/recheck.csv`.
    Raw,
    /// Control re-runs (`Control`), into `controls.csv`.
    Controls,
}

/// A CSV that appends the rows of one kind of event; keeps the last write error for the driver.
pub(super) struct CsvWriter {
    sink: CsvSink,
    rows: Rows,
    error: Option<StoreError>,
}

impl CsvWriter {
    pub(super) fn new(sink: CsvSink, rows: Rows) -> CsvWriter {
        CsvWriter {
            sink,
            rows,
            error: None,
        }
    }

    /// The file on disk, or the write error that stopped the sweep.
    pub(super) fn finish(self) -> Result<(), StoreError> {
        match self.error {
            Some(e) => Err(e),
            None => {
                self.sink.sync();
                Ok(())
            }
        }
    }
}

impl Reporter for CsvWriter {
    fn on(&mut self, event: &Event) {
        let row = match (event, self.rows) {
            (Event::Finished { row, .. }, Rows::Points)
            | (Event::Raw { row }, Rows::Raw)
            | (Event::Held { row, .. }, Rows::Raw)
            | (Event::Control { row }, Rows::Controls) => row,
            _ => return,
        };
        // After a failed write the file may end in a torn row: nothing more goes after it (a
        // resume cuts it).
        if self.error.is_some() {
            return;
        }
        if let Err(e) = self.sink.append(row) {
            self.error = Some(e);
        }
    }
}

/// When each point was built and run (for the manifest's `timeline`), from `Built` and
/// `Finished`: a point built but never run (the sweep stopped) has no entry.
#[derive(Default)]
pub(super) struct Timeline {
    /// Build start and end of points built and not run yet.
    built: HashMap<String, (f64, f64)>,
    pub(super) entries: Vec<TimelineEntry>,
}

impl Reporter for Timeline {
    fn on(&mut self, event: &Event) {
        match event {
            Event::Built {
                point,
                started,
                ended,
                ..
            } => {
                self.built.insert(point.id.clone(), (*started, *ended));
            }
            Event::Finished {
                row,
                run_start,
                run_end,
            } => {
                let (build_start, build_end) = self.built.remove(&row.point.id).unwrap_or_default();
                self.entries.push(TimelineEntry {
                    point_id: row.point.id.clone(),
                    build_start,
                    build_end,
                    run_start: *run_start,
                    run_end: *run_end,
                    cached: row.cached,
                });
            }
            _ => {}
        }
    }
}

/// Every listener of a run, called in this order for each event.
pub(super) struct Dispatch<'r> {
    /// The CSVs of the pass in progress (set by the driver before it starts, taken after).
    pub(super) csvs: Vec<CsvWriter>,
    /// What the pass in progress did (reset by `Started`).
    pub(super) summary: Summary,
    pub(super) timeline: Timeline,
    reporter: &'r mut dyn Reporter,
}

impl<'r> Dispatch<'r> {
    pub(super) fn new(reporter: &'r mut dyn Reporter) -> Dispatch<'r> {
        Dispatch {
            csvs: Vec::new(),
            summary: Summary::default(),
            timeline: Timeline::default(),
            reporter,
        }
    }

    /// Hands `event` to every listener; false when a CSV could not be written (the sweep must
    /// stop: its rows would be lost).
    pub(super) fn on(&mut self, event: &Event) -> bool {
        let mut ok = true;
        for csv in &mut self.csvs {
            csv.on(event);
            ok &= csv.error.is_none();
        }
        self.summary.on(event);
        self.timeline.on(event);
        self.reporter.on(event);
        ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::points::Point;
    use crate::store::{Row, Status};
    use std::path::Path;

    fn point(id: &str) -> Point {
        Point {
            index: 0,
            id: id.into(),
            values: vec![],
        }
    }

    fn row(p: &Point, status: Status, cached: bool) -> Row {
        Row {
            point: p.clone(),
            status,
            statuses: Default::default(),
            values: Default::default(),
            build_s: if cached { 0.0 } else { 1.0 },
            run_s: 0.5,
            cached,
            gpu: Default::default(),
            error: String::new(),
        }
    }

    fn started(todo: usize) -> Event<'static> {
        Event::Started {
            run_dir: Path::new("/runs/x"),
            total: 5,
            todo,
            resumed: true,
            jobs: 1,
            gpus: &[],
            pass: None,
        }
    }

    #[test]
    fn the_timeline_has_an_entry_for_each_point_run_with_its_build_times() {
        let (a, b) = (point("pa"), point("pb"));
        let mut t = Timeline::default();
        for (p, from) in [(&a, 1.0), (&b, 2.0)] {
            t.on(&Event::Built {
                point: p,
                cached: false,
                failed: false,
                started: from,
                ended: from + 0.5,
            });
        }
        t.on(&Event::Finished {
            row: &row(&a, Status::Ok, false),
            run_start: 3.0,
            run_end: 4.0,
        });
        // `pb` was built, then the sweep stopped: no entry.
        assert_eq!(t.entries.len(), 1);
        let e = &t.entries[0];
        assert_eq!(
            (
                e.point_id.as_str(),
                e.build_start,
                e.build_end,
                e.run_start,
                e.run_end
            ),
            ("pa", 1.0, 1.5, 3.0, 4.0)
        );
    }

    #[test]
    fn each_csv_takes_the_rows_of_its_own_event() {
        let dir = tempfile::tempdir().unwrap();
        let header = vec!["point_id".to_string(), "status".to_string()];
        let open = |name: &str, rows: Rows| {
            let sink = CsvSink::open(&dir.path().join(name), header.clone(), Default::default());
            CsvWriter::new(sink.unwrap(), rows)
        };
        let mut user = Summary::default();
        let mut d = Dispatch::new(&mut user);
        d.csvs = vec![
            open("results.csv", Rows::Points),
            open("raw.csv", Rows::Raw),
            open("controls.csv", Rows::Controls),
        ];
        let (a, b, c) = (point("pa"), point("pb"), point("pc"));
        let finished = row(&a, Status::Ok, false);
        assert!(d.on(&Event::Raw {
            row: &row(&b, Status::Noisy, false)
        }));
        assert!(d.on(&Event::Finished {
            row: &finished,
            run_start: 0.0,
            run_end: 1.0,
        }));
        assert!(d.on(&Event::Control {
            row: &row(&c, Status::RunFailed, false)
        }));
        for csv in std::mem::take(&mut d.csvs) {
            csv.finish().unwrap();
        }
        let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
        assert_eq!(read("results.csv"), "point_id,status\r\npa,ok\r\n");
        assert_eq!(read("raw.csv"), "point_id,status\r\npb,noisy\r\n");
        assert_eq!(read("controls.csv"), "point_id,status\r\npc,run_failed\r\n");
    }

    #[test]
    fn the_summary_starts_with_each_pass_and_counts_its_rows() {
        let p = point("pa");
        let mut s = Summary::default();
        s.on(&started(3));
        s.on(&Event::Finished {
            row: &row(&p, Status::RunFailed, false),
            run_start: 0.0,
            run_end: 1.0,
        });
        s.on(&Event::Finished {
            row: &row(&p, Status::Ok, true),
            run_start: 1.0,
            run_end: 2.0,
        });
        assert_eq!((s.total, s.skipped, s.failed()), (5, 2, 1));
        s.on(&Event::Built {
            point: &p,
            cached: false,
            failed: false,
            started: 0.0,
            ended: 1.0,
        });
        assert_eq!((s.compiled(), s.from_cache()), (1, 0));
        assert_eq!(s.csv, Path::new("/runs/x/results.csv"));
        // A later pass starts over.
        s.on(&started(5));
        assert_eq!((s.skipped, s.failed(), s.compiled()), (0, 0, 0));
    }

    /// Review 21 F1, F2: a `repeat` run's builds are counted over its passes from the builds
    /// themselves (a point compiled once is compiled, though later passes find it cached), and
    /// its slowest runs are one process's, not the combined row's sum.
    #[test]
    fn a_repeat_runs_summary_counts_its_builds_and_one_processes_time() {
        let (a, b) = (point("pa"), point("pb"));
        let pass = |p| Event::Started {
            run_dir: Path::new("/runs/x"),
            total: 2,
            todo: 2,
            resumed: false,
            jobs: 1,
            gpus: &[],
            pass: Some((p, 2)),
        };
        let built = |point, cached| Event::Built {
            point,
            cached,
            failed: false,
            started: 0.0,
            ended: 0.0,
        };
        let mut s = Summary::default();
        s.on(&pass(1));
        s.on(&built(&a, false));
        s.on(&built(&b, true));
        s.on(&pass(2));
        s.on(&built(&a, true));
        s.on(&built(&b, true));
        assert_eq!((s.compiled(), s.from_cache()), (1, 1));
        let mut raw = row(&a, Status::Ok, true);
        raw.run_s = 1.5;
        s.on(&Event::Raw { row: &raw });
        let mut combined = row(&a, Status::Ok, true);
        combined.run_s = 3.5;
        s.on(&Event::Finished {
            row: &combined,
            run_start: 0.0,
            run_end: 1.0,
        });
        assert_eq!(s.slowest, vec![(a.label(), 1.5)]);
    }
}
