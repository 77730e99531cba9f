//! Where the driver's events go: each one, in turn, to the results CSV, the summary, the
//! timeline and the user's reporter (progress, live report). The runners only emit; what a
//! finished point leaves behind is written by these listeners.

use crate::events::{Event, Reporter, Summary};
use crate::store::{CsvSink, StoreError, TimelineEntry};
use std::collections::HashMap;

/// The CSV a pass appends its rows to (`results.csv`, or a pass CSV of a `repeat` run); keeps
/// the first write error for the driver.
pub(super) struct CsvWriter {
    sink: CsvSink,
    error: Option<StoreError>,
}

impl CsvWriter {
    pub(super) fn new(sink: CsvSink) -> CsvWriter {
        CsvWriter { sink, error: None }
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
        if let Event::Finished { row, .. } = event {
            if let Err(e) = self.sink.append(row) {
                self.error = Some(e);
            }
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
pub(super) struct Dispatch {
    /// The CSV of the pass in progress (set by the driver before the pass starts).
    pub(super) csv: Option<CsvWriter>,
    /// What the pass in progress did (reset by `Started`).
    pub(super) summary: Summary,
    pub(super) timeline: Timeline,
    reporter: Box<dyn Reporter>,
}

impl Dispatch {
    pub(super) fn new(reporter: Box<dyn Reporter>) -> Dispatch {
        Dispatch {
            csv: None,
            summary: Summary::default(),
            timeline: Timeline::default(),
            reporter,
        }
    }

    /// Hands `event` to every listener; false when the CSV could not be written (the sweep must
    /// stop: its rows would be lost).
    pub(super) fn on(&mut self, event: &Event) -> bool {
        let mut ok = true;
        if let Some(csv) = self.csv.as_mut() {
            csv.on(event);
            ok = csv.error.is_none();
        }
        self.summary.on(event);
        self.timeline.on(event);
        self.reporter.on(event);
        ok
    }
}
