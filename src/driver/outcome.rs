//! How a point ends: why it was not measured ([`PointError`], typed with its source until the
//! row's `error` cell is written) and what its run gave ([`Ran`]).

use crate::exec::{ExecError, Exit, Outcome};
use crate::render::RenderError;
use crate::store::Status;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// Why a point has no measurement: its build, its start or its run failed.
#[derive(Debug, thiserror::Error)]
pub enum PointError {
    #[error(transparent)]
    Render(#[from] RenderError),
    #[error("cannot write headers into `{}`: {source}", dir.display())]
    WriteHeaders {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read the bench's files: {0}")]
    ReadBench(#[source] std::io::Error),
    #[error("cannot create a build folder in `{}`: {source}", cache.display())]
    Scratch {
        cache: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The compiler could not be started.
    #[error(transparent)]
    StartBuild(ExecError),
    /// The compiler ended without success (or ran out of time).
    #[error("build {}{} (log: {})", outcome.describe(), colon(first), log.display())]
    Build {
        outcome: Outcome,
        /// The log's first error line.
        first: Option<String>,
        log: PathBuf,
    },
    #[error("cannot store the build in the cache: {0}")]
    CacheStore(#[source] std::io::Error),
    /// The build left one of the names sweep keeps in its folder (the binary, the dependency
    /// list, the log) as a link, a FIFO or a folder: sweep would read or write through it (review
    /// 14a F1, F2: a wrapper's links made sweep write outside, a FIFO hung it).
    #[error("the build left `{name}` in its folder as no regular file (a link, a FIFO or a folder), where sweep keeps its own (log: {})", log.display())]
    BuildLeftNoFile { name: String, log: PathBuf },
    /// The program could not be started, or waited for.
    #[error(transparent)]
    Start(ExecError),
    #[error("program {} (log: {})", outcome.describe(), stderr.display())]
    TimedOut { outcome: Outcome, stderr: PathBuf },
    #[error("wrong result: {what} (log: {})", stdout.display())]
    WrongResult { what: String, stdout: PathBuf },
    #[error("program {}{} (log: {})", outcome.describe(), colon(last_error), stderr.display())]
    Failed {
        outcome: Outcome,
        /// The last line of its stderr that says what went wrong.
        last_error: Option<String>,
        stderr: PathBuf,
    },
    /// A file of the bench changed while the run ran (after it started, before this point's
    /// build ended): the point's program may be the new one, the earlier rows' the old.
    #[error("the bench `{bench}` changed while the run ran (a file of its folder or `cuda/common/` was edited): this point's program would not be the earlier points'")]
    BenchChanged { bench: String },
    /// The program printed more than sweep reads for metrics ([`crate::parse::MAX_OUTPUT`]).
    #[error("the program printed {} MiB on stdout, more than the {} MiB sweep reads for metrics (hint: print less, or write the bulk to a file of its own; log: {})", bytes >> 20, crate::parse::MAX_OUTPUT >> 20, stdout.display())]
    TooMuchOutput { bytes: u64, stdout: PathBuf },
    /// A file of sweep's own for the point (its command line, a control's folder) cannot be written.
    #[error("cannot write `{}`: {source}", path.display())]
    WriteFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The program's output, which sweep kept in the point's folder, cannot be read back (the
    /// run folder moved or removed while the point ran, no descriptors left): the failure is the
    /// run's, not the program's.
    #[error("cannot read `{}`, the program's output: {source}", path.display())]
    ReadOutput {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The point failed where the disk is full: what it wrote may have been cut, so the failure
    /// is the disk's, not the point's (`what`: how it failed).
    #[error("the file system of `{}` is full ({free} bytes free), so what the point wrote may be cut: {what}", dir.display())]
    Full {
        dir: PathBuf,
        free: u64,
        what: String,
    },
    #[error("no metric {} in the output{}{}{} (log: {})", quoted(missing), printed(unreadable), in_unit(wrong_unit), bad_stats(bad_stat), stdout.display())]
    NoMetric {
        missing: Vec<String>,
        /// Of those, the ones printed but not as a finite number: column -> the text.
        unreadable: BTreeMap<String, String>,
        /// Of those, the ones printed in another unit than the spec's: column -> (printed, spec's).
        wrong_unit: BTreeMap<String, (String, String)>,
        /// Of those, the ones whose line has a statistic that cannot be: column -> (the field
        /// as printed, why).
        bad_stat: BTreeMap<String, (String, &'static str)>,
        stdout: PathBuf,
    },
    /// Metrics missing from stdout that the program printed on stderr, where sweep does not
    /// read them: the log named is stderr's, the file that has them.
    #[error("no metric {} in the output: {} on stderr, not stdout (hint: sweep reads metrics from stdout; log: {})", quoted(missing), quoted(on_stderr), stderr.display())]
    OnStderr {
        missing: Vec<String>,
        on_stderr: Vec<String>,
        stderr: PathBuf,
    },
}

/// `: `x` printed `rel_ci=-1`, never negative`, for the metrics with a statistic that cannot be.
fn bad_stats(bad: &BTreeMap<String, (String, &'static str)>) -> String {
    let each: Vec<String> = bad
        .iter()
        .map(|(m, (field, why))| format!(": `{m}` printed `{}`, {why}", field.escape_debug()))
        .collect();
    each.concat()
}

fn colon(line: &Option<String>) -> String {
    line.as_ref().map(|l| format!(": {l}")).unwrap_or_default()
}

/// `: `x` printed `nan`, not a finite number`, for the metrics the output has but cannot be read.
fn printed(unreadable: &BTreeMap<String, String>) -> String {
    if unreadable.is_empty() {
        return String::new();
    }
    let each: Vec<String> = unreadable
        .iter()
        .map(|(m, t)| format!("`{m}` printed `{}`", t.escape_debug()))
        .collect();
    format!(": {}, not a finite number", each.join(", "))
}

/// `: `x` printed in `GB/s`, not the spec's `MB/s``, for the metrics printed in another unit.
fn in_unit(wrong_unit: &BTreeMap<String, (String, String)>) -> String {
    let each: Vec<String> = wrong_unit
        .iter()
        .map(|(m, (printed, spec))| {
            format!(
                ": `{m}` printed in `{}`, not the spec's `{}` (hint: make the spec's unit the program's)",
                printed.escape_debug(),
                spec.escape_debug()
            )
        })
        .collect();
    each.concat()
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|m| format!("`{m}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `e`, from starting a program, says the machine has no resources to spare for it
/// (too many open files, processes or threads, no memory): the run's trouble, not the point's;
/// recorded as `run_failed`, every later point failed alike for good.
fn no_resources(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EMFILE) | Some(libc::ENFILE) | Some(libc::EAGAIN) | Some(libc::ENOMEM)
    )
}

impl PointError {
    /// Whether this failure is the run's, not the point's: a file of sweep's own could not be
    /// written (disk full, read-only). The run then stops before recording the point, so that a
    /// resume measures it.
    pub(super) fn stops_the_run(&self) -> bool {
        use crate::exec::ExecError;
        use crate::store::space::no_room;
        match self {
            PointError::WriteHeaders { .. }
            | PointError::Scratch { .. }
            | PointError::CacheStore(_)
            | PointError::WriteFile { .. }
            | PointError::Full { .. }
            | PointError::BenchChanged { .. }
            | PointError::StartBuild(ExecError::Log { .. }) => true,
            // The program put something that is no file in its output's place (a FIFO, review
            // 16a A2): its own failure, not the run's.
            PointError::ReadOutput { source, .. } => {
                source.kind() != std::io::ErrorKind::InvalidInput
            }
            PointError::Start(ExecError::Spawn { source, .. })
            | PointError::StartBuild(ExecError::Spawn { source, .. }) => {
                no_room(source) || no_resources(source)
            }
            // Out of descriptors or memory while reading the bench: every point alike.
            PointError::ReadBench(e) => no_resources(e),
            PointError::Render(crate::render::RenderError::Io { source, .. }) => {
                no_resources(source)
            }
            // No process to render in: every point would fail alike.
            PointError::Render(e) => e.environment(),
            _ => false,
        }
    }

    /// This failure, or [`PointError::Full`] when `dir`'s file system is full: a program or
    /// compiler that failed there may have lost what it wrote.
    pub(super) fn or_full(self, dir: &std::path::Path) -> PointError {
        match crate::store::space::free_bytes(dir) {
            Some(free) if free < crate::store::space::FULL_BELOW && !self.stops_the_run() => {
                PointError::Full {
                    dir: dir.to_path_buf(),
                    free,
                    what: self.to_string(),
                }
            }
            _ => self,
        }
    }

    /// The point's status in the results CSV.
    pub(super) fn status(&self) -> Status {
        match self {
            PointError::Render(_)
            | PointError::WriteHeaders { .. }
            | PointError::ReadBench(_)
            | PointError::Scratch { .. }
            | PointError::StartBuild(_)
            | PointError::CacheStore(_)
            | PointError::BuildLeftNoFile { .. }
            | PointError::BenchChanged { .. } => Status::BuildFailed,
            // Never written: the run stops before recording the point.
            PointError::WriteFile { .. }
            | PointError::ReadOutput { .. }
            | PointError::Full { .. } => Status::RunFailed,
            PointError::Build { outcome, .. } => match outcome.exit {
                Exit::TimedOut(_) => Status::Timeout,
                _ => Status::BuildFailed,
            },
            PointError::Start(_) | PointError::Failed { .. } | PointError::TooMuchOutput { .. } => {
                Status::RunFailed
            }
            PointError::TimedOut { .. } => Status::Timeout,
            PointError::WrongResult { .. } => Status::WrongResult,
            PointError::NoMetric { .. } | PointError::OnStderr { .. } => Status::NoMetric,
        }
    }
}

/// What running a built point gave: its metric values and time, and its status (`ok`, `noisy`
/// or `unstable`) or why it has none. Shared ([`Arc`]) because a build's failure is every run's
/// of that point (a control re-run included).
pub(super) struct Ran {
    pub(super) values: BTreeMap<String, f64>,
    /// Each metric's own status, by name (see `parse::Parsed::statuses`).
    pub(super) statuses: BTreeMap<String, Status>,
    pub(super) run_s: f64,
    pub(super) verdict: Result<Status, Arc<PointError>>,
}

impl Ran {
    /// A point that did not run, or ran without a usable result.
    pub(super) fn failed(e: impl Into<Arc<PointError>>) -> Ran {
        Ran {
            values: BTreeMap::new(),
            statuses: BTreeMap::new(),
            run_s: 0.0,
            verdict: Err(e.into()),
        }
    }

    pub(super) fn status(&self) -> Status {
        match &self.verdict {
            Ok(s) => *s,
            Err(e) => e.status(),
        }
    }

    /// The failure, when it is the run's rather than the point's (see [`PointError::stops_the_run`]).
    pub(super) fn stops_the_run(&self) -> Option<Arc<PointError>> {
        self.verdict
            .as_ref()
            .err()
            .filter(|e| e.stops_the_run())
            .cloned()
    }

    /// The row's `error` cell: empty for a measured point.
    pub(super) fn error(&self) -> String {
        self.verdict
            .as_ref()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn ended(exit: Exit) -> Outcome {
        Outcome {
            exit,
            elapsed: Duration::from_millis(10),
        }
    }

    /// Review 9b: at 19 open files a template could not be read ("Too many open files") and its
    /// point was recorded `build_failed` for good; the machine's want of descriptors (or memory)
    /// while reading the bench stops the run instead, like a program that cannot start.
    #[test]
    fn running_out_of_descriptors_while_reading_the_bench_stops_the_run() {
        let emfile = || std::io::Error::from_raw_os_error(libc::EMFILE);
        let render = PointError::Render(crate::render::RenderError::Io {
            path: "cuda/x/params.h.tera".into(),
            source: emfile(),
        });
        assert!(render.stops_the_run());
        assert!(PointError::ReadBench(emfile()).stops_the_run());
        let missing = PointError::ReadBench(std::io::Error::from_raw_os_error(libc::ENOENT));
        assert!(!missing.stops_the_run(), "a missing file is the bench's");
    }

    /// Every reason a point fails, as results.csv's `error` cell, the terminal and the report
    /// write it: what failed first (`build`, `program`), then how, then where its log is.
    #[test]
    fn every_failure_reads_as_a_sentence_with_its_status() {
        let io = || std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let log = || PathBuf::from("p/stderr.txt");
        let cases: Vec<(PointError, Status, &str)> = vec![
            (
                PointError::Build {
                    outcome: ended(Exit::Code(1)),
                    first: Some("x.cu(3): error: y".into()),
                    log: "p/build.log".into(),
                },
                Status::BuildFailed,
                "build failed with exit code 1: x.cu(3): error: y (log: p/build.log)",
            ),
            (
                PointError::Build {
                    outcome: ended(Exit::TimedOut(Duration::from_secs(2))),
                    first: None,
                    log: "p/build.log".into(),
                },
                Status::Timeout,
                "build timed out after 2 s (log: p/build.log)",
            ),
            (
                PointError::Build {
                    outcome: ended(Exit::Signal(libc::SIGKILL)),
                    first: None,
                    log: "p/build.log".into(),
                },
                Status::BuildFailed,
                "build killed by signal 9 (SIGKILL) (log: p/build.log)",
            ),
            (
                PointError::Failed {
                    outcome: ended(Exit::Signal(libc::SIGSEGV)),
                    last_error: None,
                    stderr: log(),
                },
                Status::RunFailed,
                "program killed by signal 11 (SIGSEGV) (log: p/stderr.txt)",
            ),
            (
                PointError::Failed {
                    outcome: ended(Exit::Code(2)),
                    last_error: Some("main.cu:40: cudaMalloc: out of memory".into()),
                    stderr: log(),
                },
                Status::RunFailed,
                "program failed with exit code 2: main.cu:40: cudaMalloc: out of memory (log: p/stderr.txt)",
            ),
            (
                PointError::TimedOut {
                    outcome: ended(Exit::TimedOut(Duration::from_millis(1500))),
                    stderr: log(),
                },
                Status::Timeout,
                "program timed out after 1.5 s (log: p/stderr.txt)",
            ),
            (
                PointError::WrongResult {
                    what: "c[3] = 2, expected 4".into(),
                    stdout: "p/stdout.txt".into(),
                },
                Status::WrongResult,
                "wrong result: c[3] = 2, expected 4 (log: p/stdout.txt)",
            ),
            (
                PointError::TooMuchOutput {
                    bytes: 300 << 20,
                    stdout: "p/stdout.txt".into(),
                },
                Status::RunFailed,
                "the program printed 300 MiB on stdout, more than the 64 MiB sweep reads for metrics (hint: print less, or write the bulk to a file of its own; log: p/stdout.txt)",
            ),
            (
                PointError::Start(ExecError::NotFound {
                    program: "./saw".into(),
                }),
                Status::RunFailed,
                "`./saw` not found (hint: put it on PATH or name it with a full path)",
            ),
            (
                PointError::StartBuild(ExecError::Spawn {
                    line: "nvcc -o saw saw.cu".into(),
                    source: io(),
                }),
                Status::BuildFailed,
                "cannot start `nvcc -o saw saw.cu`: permission denied",
            ),
            (
                PointError::ReadBench(io()),
                Status::BuildFailed,
                "cannot read the bench's files: permission denied",
            ),
            (
                PointError::WriteHeaders {
                    dir: "p/include".into(),
                    source: io(),
                },
                Status::BuildFailed,
                "cannot write headers into `p/include`: permission denied",
            ),
            (
                PointError::Scratch {
                    cache: ".sweep-cache".into(),
                    source: io(),
                },
                Status::BuildFailed,
                "cannot create a build folder in `.sweep-cache`: permission denied",
            ),
            (
                PointError::CacheStore(io()),
                Status::BuildFailed,
                "cannot store the build in the cache: permission denied",
            ),
            (
                PointError::WriteFile {
                    path: "p/cmd.txt".into(),
                    source: io(),
                },
                Status::RunFailed,
                "cannot write `p/cmd.txt`: permission denied",
            ),
            (
                PointError::Full {
                    dir: "out".into(),
                    free: 4096,
                    what: "program failed with exit code 1 (log: p/stderr.txt)".into(),
                },
                Status::RunFailed,
                "the file system of `out` is full (4096 bytes free), so what the point wrote may be cut: program failed with exit code 1 (log: p/stderr.txt)",
            ),
        ];
        for (e, status, words) in cases {
            assert_eq!((e.status(), e.to_string()), (status, words.to_string()));
        }
    }

    #[test]
    fn a_failure_gives_the_status_and_the_words_of_its_row() {
        let no_metric = Ran::failed(PointError::NoMetric {
            missing: vec!["copy_gb_per_s".into(), "mflops".into()],
            unreadable: BTreeMap::new(),
            wrong_unit: BTreeMap::new(),
            bad_stat: BTreeMap::new(),
            stdout: "p/stdout.txt".into(),
        });
        assert_eq!(no_metric.status(), Status::NoMetric);
        assert_eq!(
            no_metric.error(),
            "no metric `copy_gb_per_s`, `mflops` in the output (log: p/stdout.txt)"
        );
        let nan = Ran::failed(PointError::NoMetric {
            missing: vec!["mflops".into()],
            unreadable: [("mflops".to_string(), "nan".to_string())].into(),
            wrong_unit: BTreeMap::new(),
            bad_stat: BTreeMap::new(),
            stdout: "p/stdout.txt".into(),
        });
        assert_eq!(
            nan.error(),
            "no metric `mflops` in the output: `mflops` printed `nan`, not a finite number (log: p/stdout.txt)"
        );
        let ok = Ran {
            values: BTreeMap::new(),
            statuses: BTreeMap::new(),
            run_s: 1.0,
            verdict: Ok(Status::Noisy),
        };
        assert_eq!((ok.status(), ok.error()), (Status::Noisy, String::new()));
    }
}
