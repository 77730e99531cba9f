//! The command line's shape: subcommands, their options and the groups they share (clap).

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use sweep::driver;
use sweep::exit;
use sweep::export::Format as ExportFormat;
use sweep::overrides::Overrides;
use sweep::points::{Order, Shard, Split};
use sweep::store::Dialect;

#[derive(Parser)]
#[command(name = "sweep", version, about = "Parameter sweeps of CUDA microbenchmarks, and what the curves mean", after_help = exit::HELP)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The folder that holds the runs when `--output` names none.
pub(crate) const DEFAULT_OUTPUT: &str = "output";

#[derive(Args, Clone)]
pub(crate) struct Where {
    /// Folder that holds the runs (`<output>/<sweep>/<timestamp>/`)
    #[arg(long, default_value = DEFAULT_OUTPUT)]
    pub(crate) output: PathBuf,
    /// Build cache folder [default: <output>/.cache, or $SWEEP_CACHE]
    #[arg(long)]
    pub(crate) cache: Option<PathBuf>,
    /// Parallel builds, 1 or more [default: the number of cores]
    #[arg(long, short, value_parser = parse_jobs)]
    pub(crate) jobs: Option<usize>,
}

#[derive(Args, Clone)]
pub(crate) struct Sharding {
    /// Run only shard i of N (deterministic partition of the points), e.g. 0/4
    #[arg(long)]
    pub(crate) shard: Option<Shard>,
    /// How points are dealt to shards and GPUs
    #[arg(long, value_enum, default_value = "series")]
    pub(crate) split: Split,
}

/// Overrides of the spec on the command line (nvbench's `-a` style); `plan`, `render`, `build`
/// and `run` read the spec with them applied.
#[derive(Args, Clone, Default)]
pub(crate) struct OverrideArgs {
    /// Override an axis: `-a threads=17:80` (a range, `LO:HI[:STEP]` or `[LO:HI:STEP]`) or
    /// `-a variant=naive,shared` (a list, or `[V1,V2]`); repeatable
    #[arg(short = 'a', long = "axis", value_name = "NAME=VALUES", value_parser = sweep::overrides::key_value)]
    pub(crate) axes: Vec<(String, String)>,
    /// Override a `[vars]` constant: `--set n=4096`; repeatable
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = sweep::overrides::key_value)]
    pub(crate) vars: Vec<(String, String)>,
    /// Override a `[timing]` setting: `--timing target_rel_ci=0.02`; repeatable
    #[arg(long, value_name = "KEY=VALUE", value_parser = sweep::overrides::key_value)]
    pub(crate) timing: Vec<(String, String)>,
    /// Replace the spec's filter: `--filter "threads % 32 == 0"`
    #[arg(long, value_name = "EXPR")]
    pub(crate) filter: Option<String>,
}

impl OverrideArgs {
    pub(crate) fn overrides(&self) -> Overrides {
        Overrides {
            axes: self.axes.clone(),
            vars: self.vars.clone(),
            timing: self.timing.clone(),
            filter: self.filter.clone(),
        }
    }
}

#[derive(Args, Clone)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    pub(crate) place: Where,
    #[command(flatten)]
    pub(crate) sharding: Sharding,
    /// CSV dialect of results.csv: `semicolon` writes `;` and decimal commas for uk/ru/pt/es
    /// spreadsheets [default: comma; a resumed run keeps its own]
    #[arg(long, value_enum)]
    pub(crate) csv_dialect: Option<Dialect>,
    /// Order of the runs
    #[arg(long, value_enum, default_value = "sweep")]
    pub(crate) order: Order,
    /// Seed of `--order shuffled`
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// GPUs to use: `all`, or indices/UUIDs like `0,2` [default: the first visible GPU]
    #[arg(long)]
    pub(crate) gpus: Option<sweep::gpu::GpuChoice>,
    /// Wait for a GPU another sweep holds, instead of refusing
    #[arg(long)]
    pub(crate) wait_lock: bool,
    /// Start a new run even when an unfinished run of a changed spec exists
    #[arg(long)]
    pub(crate) force: bool,
    /// Only what went wrong (failed points, warnings) and the summary in one line
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// Skip the analysis and charts that the spec's [analyze] asks for
    #[arg(long)]
    pub(crate) no_analyze: bool,
    /// How many GPU programs to start ahead, per GPU, while the current one measures (each
    /// creates its CUDA context, then waits at its start gate until the GPU is free). Faster, but
    /// a program waiting beside a measurement moved some values by 8 % on some H100s
    /// (docs/measurements.md), so the default starts each program after the previous one ended
    #[arg(long, value_name = "N", default_value_t = driver::DEFAULT_PRESTART)]
    pub(crate) prestart: usize,
    /// Same as --prestart 0 (the default): start each program after the previous one ended
    #[arg(long)]
    pub(crate) no_prestart: bool,
    /// Also write the run in these formats into `<run>/export/` when it ends (after its
    /// analysis): xlsx, csv, json, comma-separated
    #[arg(long, value_enum, value_delimiter = ',', value_name = "FORMATS")]
    pub(crate) export: Vec<ExportFormat>,
    /// Also write the run as JSON to FILE when it ends: the machine, and every point's axes,
    /// status, timings and metrics with their statistics (schema in src/export/json.rs)
    #[arg(long, value_name = "FILE")]
    pub(crate) export_json: Option<PathBuf>,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Build and run every point of a sweep; resumes the latest unfinished run of the same spec
    #[command(after_help = exit::HELP)]
    Run {
        /// The sweep spec (`sweeps/<name>.toml`)
        spec: PathBuf,
        #[command(flatten)]
        over: OverrideArgs,
        #[command(flatten)]
        args: RunArgs,
    },
    /// Finish an unfinished run folder
    #[command(after_help = exit::HELP)]
    Resume {
        /// An unfinished run folder (`output/<sweep>/<stamp>`)
        run_dir: PathBuf,
        #[command(flatten)]
        args: RunArgs,
    },
    /// List the points of a sweep and their count, without building
    #[command(after_help = exit::HELP)]
    Plan {
        /// The sweep spec (`sweeps/<name>.toml`)
        spec: PathBuf,
        #[command(flatten)]
        over: OverrideArgs,
        #[command(flatten)]
        sharding: Sharding,
    },
    /// Print the rendered headers of one point
    #[command(after_help = exit::HELP)]
    Render {
        /// The sweep spec (`sweeps/<name>.toml`)
        spec: PathBuf,
        #[command(flatten)]
        over: OverrideArgs,
        /// Point index (from `sweep plan`)
        #[arg(long)]
        point: usize,
        /// Write the headers into this folder (to build the point by hand) instead of printing them
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Compile every point into the build cache (needs nvcc, not a GPU)
    #[command(after_help = exit::HELP)]
    Build {
        /// The sweep spec (`sweeps/<name>.toml`)
        spec: PathBuf,
        #[command(flatten)]
        over: OverrideArgs,
        #[command(flatten)]
        place: Where,
        #[command(flatten)]
        sharding: Sharding,
        /// Build only N points spread evenly over the sweep, the first and the last included
        /// (a compile check of the corners)
        #[arg(long)]
        sample: Option<usize>,
    },
    /// List the benches and sweeps found
    List {
        /// Project folder holding cuda/ and sweeps/
        #[arg(default_value = ".")]
        dir: PathBuf,
    },
    /// Build cache: `stats` or `clean`
    #[command(after_help = exit::HELP)]
    Cache {
        /// `stats`: entries and size; `clean`: remove every entry
        #[arg(value_parser = ["stats", "clean"])]
        action: String,
        #[command(flatten)]
        place: Where,
    },
    /// Period, phase, knee, drop and best x of every series of a results CSV
    #[command(after_help = exit::HELP)]
    Analyze {
        /// A results CSV (`output/<sweep>/<stamp>/results.csv`), or any CSV with a numeric axis
        results: PathBuf,
        #[command(flatten)]
        select: Select,
    },
    /// Charts (SVG and PNG) of every series of a results CSV
    #[command(after_help = PLOT_HELP)]
    Plot {
        /// A results CSV (`output/<sweep>/<stamp>/results.csv`)
        results: PathBuf,
        #[command(flatten)]
        select: Select,
        #[command(flatten)]
        look: LookArgs,
    },
    /// Two runs point by point: B/A, and same, faster or slower within both sides' uncertainty
    #[command(after_help = sweep::compare::HELP)]
    Compare {
        /// The reference run: a run folder or its results.csv
        run_a: PathBuf,
        /// The run compared with it: a run folder or its results.csv
        run_b: PathBuf,
        /// Metrics to compare, names or columns, comma-separated [default: every metric of both]
        #[arg(long, value_delimiter = ',', value_name = "METRICS")]
        y: Vec<String>,
        /// Also write compare.csv and compare.md into this folder
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Exit 5 when a point is `slower` by more than PCT percent
        #[arg(long, value_name = "PCT")]
        fail_on_slower: Option<f64>,
    },
    /// Write a run as xlsx (typed cells, charts), csv (in a chosen dialect), json, or long (one row
    /// per point and metric, csv and json)
    #[command(after_help = EXPORT_HELP)]
    Export {
        /// A run folder (`output/<sweep>/<stamp>`)
        run_dir: PathBuf,
        /// Formats, comma-separated
        #[arg(long, value_enum, value_delimiter = ',', default_value = "xlsx")]
        format: Vec<ExportFormat>,
        /// Dialect of the csv and long formats [default: the run's]
        #[arg(long, value_enum)]
        dialect: Option<Dialect>,
        /// Folder of the files [default: <run_dir>/export]
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Write report.html into a run folder: machine, progress, failures, charts and analysis
    /// in one self-contained page (a running sweep keeps its own current)
    Report {
        /// A run folder (`output/<sweep>/<stamp>`)
        run_dir: PathBuf,
        /// Folder of report.html, made if missing; nothing is written into the run folder then
        /// [default: <run_dir>]
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Join shard runs into one run folder: one CSV in sweep order, one manifest
    #[command(after_help = sweep::merge::HELP)]
    Merge {
        /// Run folders (output/<sweep>/<stamp>-shard-i-of-N), or a sweep folder (output/<sweep>:
        /// the latest run of each of its shards)
        #[arg(required = true)]
        runs: Vec<PathBuf>,
        /// The merged run folder [default: <stamp>-merged beside the first run]
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Write a Slurm job-array script that runs one shard per task; --submit submits it
    #[command(after_help = sweep::slurm::HELP)]
    Slurm {
        /// The sweep spec (`sweeps/<name>.toml`)
        spec: PathBuf,
        /// Number of shards, one array task each
        #[arg(long)]
        shards: usize,
        /// How points are dealt to shards
        #[arg(long, value_enum, default_value = "series")]
        split: Split,
        /// Slurm partition
        #[arg(long)]
        partition: Option<String>,
        /// Generic resources of each task, e.g. gpu:1
        #[arg(long)]
        gres: Option<String>,
        /// Time limit of each task, e.g. 02:00:00
        #[arg(long)]
        time: Option<String>,
        /// CPUs of each task (also its parallel builds)
        #[arg(long)]
        cpus_per_task: Option<usize>,
        /// CSV dialect of every task's results.csv (and so of the merged one)
        #[arg(long, value_enum, default_value = "comma")]
        csv_dialect: Dialect,
        #[command(flatten)]
        place: Where,
        /// Run sbatch on the script: only the shards without a finished run
        #[arg(long)]
        submit: bool,
    },
    /// Renders templates for the sweep that started it, one request a line on stdin: the
    /// process with memory and time limits that `sweep::render` sends every template to
    #[command(name = sweep::render::WORKER_COMMAND, hide = true)]
    RenderWorker,
}

impl Command {
    /// The subcommands that start builds and GPU programs, and so need the guard
    /// (`sweep::exec::start_guard`); the others start at most a short query.
    /// `run` and `resume`: a sweep that must reach its end whatever happens to its terminal.
    pub(crate) fn runs_a_sweep(&self) -> bool {
        matches!(self, Command::Run { .. } | Command::Resume { .. })
    }

    pub(crate) fn starts_programs(&self) -> bool {
        matches!(
            self,
            Command::Run { .. } | Command::Resume { .. } | Command::Build { .. }
        )
    }
}

#[derive(Args, Clone)]
pub(crate) struct Select {
    /// The swept axis (x) [default: the numeric axis with the most values]
    #[arg(long)]
    pub(crate) x: Option<String>,
    /// Metric columns to analyse [default: every metric]
    #[arg(long, value_delimiter = ',')]
    pub(crate) y: Vec<String>,
    /// Axes that tell series apart [default: every axis but x]
    #[arg(long, value_delimiter = ',')]
    pub(crate) by: Option<Vec<String>>,
    /// Where analysis.json, analysis.csv and charts/ go [default: beside the CSV]
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
}

/// How `sweep plot` draws: names, size, formats, and metrics overlaid.
#[derive(Args, Clone)]
pub(crate) struct LookArgs {
    /// Title of the charts [default: the experiment and its x axis, from the spec]
    #[arg(long)]
    pub(crate) title: Option<String>,
    /// Name of the x axis [default: the axis's `label` in the spec, else its name]
    #[arg(long, value_name = "LABEL")]
    pub(crate) x_label: Option<String>,
    /// Name of the y axis [default: the quantity and its unit, e.g. `throughput (TFLOP/s)`]
    #[arg(long, value_name = "LABEL")]
    pub(crate) y_label: Option<String>,
    /// Pixels of each chart, WIDTHxHEIGHT [default: 1260x660]
    #[arg(long, value_name = "WxH", value_parser = parse_size)]
    pub(crate) size: Option<(u32, u32)>,
    /// Formats, comma-separated; all drawn from one SVG
    #[arg(long, value_enum, value_delimiter = ',', default_value = "svg,png")]
    pub(crate) format: Vec<ChartFormat>,
    /// Only one chart: these metrics (names or columns, comma-separated) overlaid, with bands
    #[arg(long, value_delimiter = ',', value_name = "METRICS")]
    pub(crate) metrics: Vec<String>,
}

/// A chart file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ChartFormat {
    /// Vector, with the plot's frame on its root for readers
    Svg,
    /// The SVG rasterised, text antialiased in the built-in font
    Png,
    /// The SVG as a one-page PDF, text embedded
    Pdf,
}

impl From<ChartFormat> for sweep::report::Format {
    fn from(f: ChartFormat) -> Self {
        match f {
            ChartFormat::Svg => sweep::report::Format::Svg,
            ChartFormat::Png => sweep::report::Format::Png,
            ChartFormat::Pdf => sweep::report::Format::Pdf,
        }
    }
}

/// A `--size` that is not WIDTHxHEIGHT, or out of range.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SizeError {
    #[error("`{0}` is not WIDTHxHEIGHT in pixels (hint: e.g. 1260x660)")]
    Form(String),
    #[error("`{size}` is out of range (hint: from {}x{} to 8000x8000 pixels)", sweep::report::MIN_SIZE.0, sweep::report::MIN_SIZE.1)]
    Range { size: String },
}

/// A `--jobs` that is no count of parallel builds.
#[derive(Debug, thiserror::Error)]
#[error(
    "`{0}` is no number of parallel builds (hint: 1 or more; without --jobs, the number of cores)"
)]
pub(crate) struct JobsError(String);

/// `--jobs N`: 1 or more (no more build threads than points are made). `0` ran one build while
/// the run said "0 build jobs" and recorded `jobs: 0`.
pub(crate) fn parse_jobs(s: &str) -> Result<usize, JobsError> {
    match s.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(JobsError(s.to_string())),
    }
}

/// `1260x660` as (1260, 660); at least 480x300, at most 8000x8000.
pub(crate) fn parse_size(s: &str) -> Result<(u32, u32), SizeError> {
    let bad = || SizeError::Form(s.to_string());
    let (w, h) = s
        .to_ascii_lowercase()
        .split_once('x')
        .ok_or_else(bad)
        .and_then(|(w, h)| {
            Ok((
                w.trim().parse::<u32>().map_err(|_| bad())?,
                h.trim().parse::<u32>().map_err(|_| bad())?,
            ))
        })?;
    let (min_w, min_h) = sweep::report::MIN_SIZE;
    if w < min_w || h < min_h || w > 8000 || h > 8000 {
        return Err(SizeError::Range {
            size: s.to_string(),
        });
    }
    Ok((w, h))
}

const PLOT_HELP: &str = "\
Names on the charts come from the spec the run was made with (its copy in manifest.json): an
axis's `label` names x, a metric's `label` names its curve, and the metrics of one `family` are
overlaid on one chart (family-<name>.svg) with their uncertainty bands. See docs/spec.md.

Exit codes: 0 ok, 2 usage (a bad --size, --format or --metrics names none), 3 unreadable CSV.";

const EXPORT_HELP: &str = "\
Files (in --out, default <run_dir>/export):
  results.xlsx  sheets results (typed cells: numbers as numbers in every locale, ids and names as
                text; header frozen, autofilter), analysis, one 'chart <unit>' per family of
                metrics (a line chart against the swept axis) and manifest
  results.csv   and analysis.csv: in --dialect, UTF-8 with a byte-order mark, text quoted wherever
                a ',' or ';' could split it. Open them with the options in docs/usage.md (Spreadsheets).
                Text that could start a formula (=, +, -, @) is written with a leading '.
  run.json      the run as one document (schema in src/export/json.rs)
  results_long.csv, results_long.json  (--format long) one row per point and metric: point_id,
                index, the axes, metric, unit, value, rel_ci, ci (the 95 % half-width in the
                value's unit), spread, placements, samples, status (the metric's own), error";
