//! Exit codes, in one place. `sweep --help` and the README list them.

/// Every point measured (status `ok`, `noisy` or `unstable`): a value that varies with buffer
/// placement or is noisy is a measurement, not a failure; the summary counts them.
pub const OK: i32 = 0;
/// Some points failed (build, run, timeout, wrong result or no metric); the CSV has every row.
pub const POINTS_FAILED: i32 = 1;
/// The command line is wrong (clap's own exit code).
pub const USAGE: i32 = 2;
/// The spec, a template, a bench folder or a results file is wrong.
pub const BAD_INPUT: i32 = 3;
/// The environment cannot run the sweep: no nvcc, no GPU visible, the GPU is locked by another sweep,
/// no ncu for `[profile]` counters, a file of the run cannot be written (disk full, read-only),
/// a resume under another compiler (release or path) or on another GPU model or arch.
pub const ENVIRONMENT: i32 = 4;
/// `sweep compare --fail-on-slower PCT`: a point of run B is slower than run A's by more than PCT %.
pub const SLOWER: i32 = 5;
/// Interrupted by Ctrl-C (the finished rows are kept; `sweep run` again resumes).
pub const INTERRUPTED: i32 = 130;

pub const HELP: &str = "\
Exit codes:
  0    every point measured, marked values included (varying with buffer placement, noisy)
  1    some points failed (a resumed run's earlier rows included); the CSV holds every row and
       the reason; `compare --fail-on-slower`: B failed (or has no value) at points A measured
  2    usage error
  3    bad input: spec, template, bench folder or results file
  4    environment: nvcc missing, no GPU visible, GPU or run folder in use by another sweep,
       ncu missing for [profile] counters, disk full or read-only (the run stops; resume it),
       a resume under another compiler or on another GPU model than the run's
  5    slower than allowed: `sweep compare --fail-on-slower PCT` found a point slower by more than PCT %
  130  interrupted (Ctrl-C or SIGTERM); run again to resume";
