//! A run's cancellation token: set by the first Ctrl-C (through the CLI), by a CSV that cannot
//! take its row, or by a runner that meets a file it cannot write. One per run, so nothing
//! carries over from one run to the next in the same process.

use crate::store::{self, Manifest};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Cheap to clone: every clone is the same token.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<Inner>);

#[derive(Debug, Default)]
struct Inner {
    stop: AtomicBool,
    /// The sweep is over: its manifest has its last word (`finished` or `interrupted`), and what
    /// is left (the report, the analysis, the charts, the exports) writes files through temporary
    /// ones, so that a signal may end sweep at once (see [`Cancel::sweep_over`]).
    over: AtomicBool,
    /// The run folder in progress, for [`Cancel::mark_interrupted`].
    run_dir: Mutex<Option<PathBuf>>,
}

impl Cancel {
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// No new build or run starts; the current points finish and are written. Returns whether
    /// the token was cancelled already (a second Ctrl-C).
    pub fn cancel(&self) -> bool {
        self.0.stop.swap(true, Ordering::SeqCst)
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.stop.load(Ordering::SeqCst)
    }

    /// The run's manifest has its last word: from now on a Ctrl-C or SIGTERM has no point to
    /// finish, and ends sweep at once (exit 130) rather than after the analysis and the charts.
    pub(super) fn sweep_over(&self) {
        self.0.over.store(true, Ordering::SeqCst);
    }

    pub fn is_sweep_over(&self) -> bool {
        self.0.over.load(Ordering::SeqCst)
    }

    /// The run folder in progress, once chosen.
    pub fn run_dir(&self) -> Option<PathBuf> {
        self.0.run_dir.lock().ok().and_then(|d| d.clone())
    }

    /// The run folder the run works in (for [`Cancel::mark_interrupted`]).
    pub(super) fn working_in(&self, dir: PathBuf) {
        if let Ok(mut d) = self.0.run_dir.lock() {
            *d = Some(dir);
        }
    }

    /// Writes `interrupted` into the manifest of the run in progress: for a second Ctrl-C or
    /// SIGTERM, which ends sweep at once, before the driver can say so itself.
    pub fn mark_interrupted(&self) {
        if let Some(dir) = self.run_dir() {
            if let Ok(mut m) = Manifest::load(&dir) {
                if m.state == store::RunState::Running {
                    m.state = store::RunState::Interrupted;
                    let _ = m.save(&dir);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_shared_by_its_clones_and_a_new_one_starts_clear() {
        let a = Cancel::new();
        let b = a.clone();
        assert!(!b.is_cancelled());
        assert!(!a.cancel(), "the first cancel");
        assert!(b.is_cancelled());
        assert!(b.cancel(), "the second is seen as such");
        assert!(!Cancel::new().is_cancelled(), "nothing carries over");
    }
}
