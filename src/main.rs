//! The `sweep` command line: parses arguments and calls the library.

use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use sweep::driver::{self, Order, STOP};
use sweep::events::Progress;
use sweep::exit;
use sweep::overrides::Overrides;
use sweep::points::{Shard, Split};
use sweep::spec::Spec;
use sweep::store::Dialect;

#[derive(Parser)]
#[command(name = "sweep", version, about = "Parameter sweeps of CUDA microbenchmarks, and what the curves mean", after_help = exit::HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Clone)]
struct Where {
    /// Folder that holds the runs (`<output>/<sweep>/<timestamp>/`)
    #[arg(long, default_value = "output")]
    output: PathBuf,
    /// Build cache folder [default: <output>/.cache, or $SWEEP_CACHE]
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Parallel builds [default: the number of cores]
    #[arg(long, short)]
    jobs: Option<usize>,
}

#[derive(Args, Clone)]
struct Sharding {
    /// Run only shard i of N (deterministic partition of the points), e.g. 0/4
    #[arg(long)]
    shard: Option<Shard>,
    /// How points are dealt to shards and GPUs
    #[arg(long, value_enum, default_value = "series")]
    split: Split,
}

/// Overrides of the spec on the command line (nvbench's `-a` style); `plan`, `render`, `build`
/// and `run` read the spec with them applied.
#[derive(Args, Clone, Default)]
struct OverrideArgs {
    /// Override an axis: `-a threads=17:80` (a range, `LO:HI[:STEP]`) or `-a variant=naive,shared`
    /// (a list); repeatable
    #[arg(short = 'a', long = "axis", value_name = "NAME=VALUES", value_parser = sweep::overrides::key_value)]
    axes: Vec<(String, String)>,
    /// Override a `[vars]` constant: `--set n=4096`; repeatable
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = sweep::overrides::key_value)]
    vars: Vec<(String, String)>,
    /// Override a `[timing]` setting: `--timing target_rel_ci=0.02`; repeatable
    #[arg(long, value_name = "KEY=VALUE", value_parser = sweep::overrides::key_value)]
    timing: Vec<(String, String)>,
    /// Replace the spec's filter: `--filter "threads % 32 == 0"`
    #[arg(long, value_name = "EXPR")]
    filter: Option<String>,
}

impl OverrideArgs {
    fn overrides(&self) -> Overrides {
        Overrides {
            axes: self.axes.clone(),
            vars: self.vars.clone(),
            timing: self.timing.clone(),
            filter: self.filter.clone(),
        }
    }
}

#[derive(Args, Clone)]
struct RunArgs {
    #[command(flatten)]
    place: Where,
    #[command(flatten)]
    sharding: Sharding,
    /// CSV dialect: `semicolon` writes `;` and decimal commas for uk/ru/pt/es spreadsheets
    #[arg(long, value_enum, default_value = "comma")]
    csv_dialect: Dialect,
    /// Order of the runs
    #[arg(long, value_enum, default_value = "sweep")]
    order: Order,
    /// Seed of `--order shuffled`
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// GPUs to use: `all`, or indices/UUIDs like `0,2` [default: the first visible GPU]
    #[arg(long)]
    gpus: Option<String>,
    /// Wait for a GPU another sweep holds, instead of refusing
    #[arg(long)]
    wait_lock: bool,
    /// Start a new run even when an unfinished run of a changed spec exists
    #[arg(long)]
    force: bool,
    /// No progress output (the summary is still printed)
    #[arg(long, short)]
    quiet: bool,
    /// Skip the analysis and charts that the spec's [analyze] asks for
    #[arg(long)]
    no_analyze: bool,
    /// How many GPU programs to start ahead, per GPU, while the current one measures (each
    /// creates its CUDA context, then waits at its start gate until the GPU is free)
    #[arg(long, value_name = "N", default_value_t = driver::DEFAULT_PRESTART)]
    prestart: usize,
    /// Same as --prestart 0: start each program after the previous one ended
    #[arg(long)]
    no_prestart: bool,
    /// Also write the run as JSON to FILE when it ends: the machine, and every point's axes,
    /// status, timings and metrics with their statistics (schema in src/export.rs)
    #[arg(long, value_name = "FILE")]
    export_json: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
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
    #[command(after_help = exit::HELP)]
    Plot {
        /// A results CSV (`output/<sweep>/<stamp>/results.csv`)
        results: PathBuf,
        #[command(flatten)]
        select: Select,
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
        #[command(flatten)]
        place: Where,
        /// Run sbatch on the script: only the shards without a finished run
        #[arg(long)]
        submit: bool,
    },
}

#[derive(Args, Clone)]
struct Select {
    /// The swept axis (x) [default: the numeric axis with the most values]
    #[arg(long)]
    x: Option<String>,
    /// Metric columns to analyse [default: every metric]
    #[arg(long, value_delimiter = ',')]
    y: Vec<String>,
    /// Axes that tell series apart [default: every axis but x]
    #[arg(long, value_delimiter = ',')]
    by: Option<Vec<String>>,
    /// Where analysis.json, analysis.csv and charts/ go [default: beside the CSV]
    #[arg(long)]
    out: Option<PathBuf>,
}

/// A failure with its exit code; printed as one line.
struct Fail(i32, String);

impl<E: std::fmt::Display> From<(i32, E)> for Fail {
    fn from((code, e): (i32, E)) -> Fail {
        Fail(code, e.to_string())
    }
}

fn main() -> ExitCode {
    // Like other command-line tools: `sweep list | head` ends quietly instead of panicking on a
    // closed stdout. (The start gate uses a socket with MSG_NOSIGNAL, so no child can raise it.)
    // SAFETY: sets the default disposition of one signal before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    // Before any thread: whatever ends sweep, what its programs started goes with them.
    sweep::exec::start_guard();
    match dispatch(cli) {
        Ok(code) => ExitCode::from(code as u8),
        Err(Fail(code, msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(code as u8)
        }
    }
}

fn load(spec: &Path) -> Result<Spec, Fail> {
    Spec::load(spec).map_err(|e| Fail(exit::BAD_INPUT, e.to_string()))
}

/// The spec with the command-line overrides applied.
fn load_with(spec: &Path, over: &OverrideArgs) -> Result<Spec, Fail> {
    sweep::overrides::load(spec, &over.overrides())
        .map_err(|e| Fail(exit::BAD_INPUT, e.to_string()))
}

fn cache_dir(place: &Where) -> PathBuf {
    place
        .cache
        .clone()
        .or_else(|| std::env::var_os("SWEEP_CACHE").map(PathBuf::from))
        .unwrap_or_else(|| place.output.join(".cache"))
}

fn options(args: &RunArgs, resume: Option<PathBuf>) -> driver::Options {
    driver::Options {
        output: args.place.output.clone(),
        cache: cache_dir(&args.place),
        jobs: args.place.jobs.unwrap_or_else(cores),
        dialect: args.csv_dialect,
        order: args.order,
        seed: args.seed,
        shard: args.sharding.shard,
        split: args.sharding.split,
        gpus: args.gpus.clone(),
        wait_lock: args.wait_lock,
        force: args.force,
        resume,
        command: std::env::args().collect(),
        prestart: if args.no_prestart { 0 } else { args.prestart },
    }
}

fn cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

fn install_ctrl_c() {
    let _ = ctrlc::set_handler(|| {
        if STOP.swap(true, std::sync::atomic::Ordering::SeqCst) {
            sweep::exec::kill_all();
            driver::mark_interrupted();
            eprintln!("\ninterrupted twice: children killed; finished rows are in the CSV");
            std::process::exit(exit::INTERRUPTED);
        }
        eprintln!("\ninterrupted: finishing the current point (Ctrl-C again to kill it)");
    });
}

fn run_sweep(spec: &Spec, args: &RunArgs, resume: Option<PathBuf>) -> Result<i32, Fail> {
    install_ctrl_c();
    let opts = options(args, resume);
    let summary = driver::run(spec, &opts, Box::new(Progress::new(args.quiet)))
        .map_err(|e| Fail(e.exit_code(), e.to_string()))?;
    print!("{}", summary.text());
    if let Some(path) = &args.export_json {
        sweep::export::write_json(&summary.run_dir, path)
            .map_err(|e| Fail(exit::ENVIRONMENT, e.to_string()))?;
        eprintln!("wrote {}", path.display());
    }
    if summary.interrupted {
        return Ok(exit::INTERRUPTED);
    }
    if let Some(cfg) = spec.analyze.clone().filter(|_| !args.no_analyze) {
        let select = Select {
            x: cfg.x,
            y: cfg.y,
            by: cfg.by,
            out: None,
        };
        if let Err(Fail(_, msg)) = analyze(&summary.csv, &select, cfg.plot) {
            eprintln!("warning: the analysis at the end of the run failed: {msg}");
        }
    }
    Ok(if summary.failed() > 0 {
        exit::POINTS_FAILED
    } else {
        exit::OK
    })
}

fn analyze(results: &Path, select: &Select, plot: bool) -> Result<(), Fail> {
    let opts = sweep::analyze::AnalyzeOptions {
        x: select.x.clone(),
        y: select.y.clone(),
        by: select.by.clone(),
    };
    let analysis = sweep::analyze::analyze_csv(results, &opts)
        .map_err(|e| Fail(exit::BAD_INPUT, e.to_string()))?;
    let out = select
        .out
        .clone()
        .unwrap_or_else(|| results.parent().map(Path::to_path_buf).unwrap_or_default());
    print!("{}", analysis.to_markdown());
    let mut files = analysis
        .write_files(&out)
        .map_err(|e| Fail(exit::BAD_INPUT, e.to_string()))?;
    if plot {
        files.extend(
            sweep::report::plot(&analysis, &out)
                .map_err(|e| Fail(exit::BAD_INPUT, e.to_string()))?,
        );
    }
    for f in files {
        eprintln!("wrote {}", f.display());
    }
    Ok(())
}

fn dispatch(cli: Cli) -> Result<i32, Fail> {
    match cli.command {
        Command::Run { spec, over, args } => {
            let spec = load_with(&spec, &over)?;
            run_sweep(&spec, &args, None)
        }
        Command::Resume { run_dir, args } => {
            let run_dir = std::path::absolute(&run_dir).unwrap_or(run_dir);
            let m = sweep::store::Manifest::load(&run_dir)
                .map_err(|e| Fail(exit::BAD_INPUT, e.to_string()))?;
            // From any folder: work in the one the run started in, where its spec path, output and
            // cache paths mean what they meant then.
            if Path::new(&m.spec_path).is_relative() && Path::new(&m.cwd).is_dir() {
                std::env::set_current_dir(&m.cwd).map_err(|e| {
                    Fail(exit::ENVIRONMENT, format!("cannot enter `{}`: {e}", m.cwd))
                })?;
            }
            let over = Overrides::from_args(&m.overrides).ok_or_else(|| {
                Fail(
                    exit::BAD_INPUT,
                    format!(
                        "`{}`: unreadable overrides {:?} in its manifest",
                        run_dir.display(),
                        m.overrides
                    ),
                )
            })?;
            let spec = sweep::overrides::load(Path::new(&m.spec_path), &over)
                .map_err(|e| Fail(exit::BAD_INPUT, e.to_string()))?;
            run_sweep(&spec, &args, Some(run_dir))
        }
        Command::Plan {
            spec,
            over,
            sharding,
        } => {
            let spec = load_with(&spec, &over)?;
            let points = driver::plan(&spec, sharding.shard, sharding.split)
                .map_err(|e| Fail(e.exit_code(), e.to_string()))?;
            println!("{:>6}  {:<12}  point", "index", "id");
            for p in &points {
                println!("{:>6}  {:<12}  {}", p.index, p.id, p.label());
            }
            if spec.repeat > 1 {
                println!(
                    "{} points, each in {} processes (repeat: pass 1 in this order, the others shuffled)",
                    points.len(),
                    spec.repeat
                );
            } else {
                println!("{} points", points.len());
            }
            Ok(exit::OK)
        }
        Command::Render {
            spec,
            over,
            point,
            out,
        } => {
            let spec = load_with(&spec, &over)?;
            let points = driver::plan(&spec, None, Split::Series)
                .map_err(|e| Fail(e.exit_code(), e.to_string()))?;
            let p = points.get(point).ok_or_else(|| {
                Fail(
                    exit::BAD_INPUT,
                    format!(
                        "point {point} does not exist (hint: the sweep has points 0..{})",
                        points.len() - 1
                    ),
                )
            })?;
            let bench = sweep::render::Bench::locate(&spec).map_err(|e| (exit::BAD_INPUT, e))?;
            let rendered =
                sweep::render::render(&bench, &spec, p).map_err(|e| (exit::BAD_INPUT, e))?;
            match out {
                Some(dir) => {
                    sweep::render::write(&rendered, &dir).map_err(|e| {
                        Fail(
                            exit::BAD_INPUT,
                            format!("cannot write headers into `{}`: {e}", dir.display()),
                        )
                    })?;
                    let source = bench.source.display();
                    let common = bench
                        .common
                        .as_ref()
                        .map(|c| format!(" -I{}", c.display()))
                        .unwrap_or_default();
                    println!(
                        "wrote {} header(s) for {} into {}",
                        rendered.len(),
                        p.label(),
                        dir.display()
                    );
                    let arch = if spec.is_nvcc() {
                        format!(
                            " -arch={}",
                            spec.arch.as_deref().unwrap_or(sweep::compile::DEFAULT_ARCH)
                        )
                    } else {
                        String::new()
                    };
                    println!(
                        "build by hand: {}{arch} -I{}{common} -o {}/bench {source} {}",
                        spec.compiler,
                        dir.display(),
                        dir.display(),
                        sweep::compile::point_flags(&spec, p).join(" ")
                    );
                }
                None => {
                    for r in &rendered {
                        println!("// ---- {} ({}) ----", r.file, p.label());
                        print!("{}", r.text);
                    }
                }
            }
            Ok(exit::OK)
        }
        Command::Build {
            spec,
            over,
            place,
            sharding,
            sample,
        } => {
            install_ctrl_c();
            let spec = load_with(&spec, &over)?;
            let opts = driver::Options {
                output: place.output.clone(),
                cache: cache_dir(&place),
                jobs: place.jobs.unwrap_or_else(cores),
                dialect: Dialect::Comma,
                order: Order::Sweep,
                seed: 0,
                shard: sharding.shard,
                split: sharding.split,
                gpus: None,
                wait_lock: false,
                force: false,
                resume: None,
                command: std::env::args().collect(),
                prestart: 0,
            };
            let r = driver::build_only(&spec, &opts, sample)
                .map_err(|e| Fail(e.exit_code(), e.to_string()))?;
            for f in &r.failed {
                eprintln!("build failed: {f}");
            }
            println!(
                "built {} points, {} from cache, {} failed, in {:.1} s (arch {} from {}; logs in {})",
                r.built,
                r.cached,
                r.failed.len(),
                r.wall.as_secs_f64(),
                r.arch.as_deref().unwrap_or("host"),
                r.arch_from,
                r.dir.display()
            );
            Ok(if r.failed.is_empty() {
                exit::OK
            } else {
                exit::POINTS_FAILED
            })
        }
        Command::List { dir } => {
            list(&dir);
            Ok(exit::OK)
        }
        Command::Cache { action, place } => {
            let cache = sweep::cache::Cache::new(cache_dir(&place));
            let s = if action == "clean" {
                cache.clean().map_err(|e| (exit::ENVIRONMENT, e))?
            } else {
                cache.stats()
            };
            let verb = if action == "clean" {
                "removed"
            } else {
                "holds"
            };
            println!(
                "cache {} {verb} {} builds, {:.1} MiB",
                cache.dir.display(),
                s.entries,
                s.bytes as f64 / 1048576.0
            );
            if s.partial > 0 {
                println!(
                    "and {} unfinished builds of killed sweeps, {:.1} MiB{}",
                    s.partial,
                    s.partial_bytes as f64 / 1048576.0,
                    if action == "clean" {
                        ""
                    } else {
                        " (the next sweep or `sweep cache clean` removes them)"
                    }
                );
            }
            Ok(exit::OK)
        }
        Command::Analyze { results, select } => analyze(&results, &select, false).map(|_| exit::OK),
        Command::Plot { results, select } => {
            let opts = sweep::analyze::AnalyzeOptions {
                x: select.x.clone(),
                y: select.y.clone(),
                by: select.by.clone(),
            };
            let a =
                sweep::analyze::analyze_csv(&results, &opts).map_err(|e| (exit::BAD_INPUT, e))?;
            let out = select
                .out
                .unwrap_or_else(|| results.parent().map(Path::to_path_buf).unwrap_or_default());
            for f in sweep::report::plot(&a, &out).map_err(|e| (exit::BAD_INPUT, e))? {
                println!("wrote {}", f.display());
            }
            Ok(exit::OK)
        }
        Command::Compare {
            run_a,
            run_b,
            y,
            out,
            fail_on_slower,
        } => compare(&run_a, &run_b, y, out, fail_on_slower),
        Command::Merge { runs, out } => merge(&runs, out),
        Command::Slurm {
            spec,
            shards,
            split,
            partition,
            gres,
            time,
            cpus_per_task,
            place,
            submit,
        } => {
            let binary = std::env::current_exe().map_err(|e| {
                (
                    exit::ENVIRONMENT,
                    format!("cannot find this sweep binary: {e}"),
                )
            })?;
            let req = sweep::slurm::Request {
                shards,
                split,
                binary,
                cache: cache_dir(&place),
                output: place.output,
                jobs: place.jobs,
                partition,
                gres,
                time,
                cpus_per_task,
            };
            slurm(&spec, req, submit)
        }
    }
}

fn compare(
    a: &Path,
    b: &Path,
    y: Vec<String>,
    out: Option<PathBuf>,
    fail_on_slower: Option<f64>,
) -> Result<i32, Fail> {
    if let Some(pct) = fail_on_slower.filter(|p| !(p.is_finite() && *p >= 0.0)) {
        return Err(Fail(
            exit::USAGE,
            format!("--fail-on-slower `{pct}` is not a percentage (hint: a number >= 0, like 5)"),
        ));
    }
    let c = sweep::compare::compare(a, b, &sweep::compare::Options { y })
        .map_err(|e| (exit::BAD_INPUT, e))?;
    print!("{}", c.to_markdown());
    if let Some(dir) = out {
        for f in c.write_files(&dir).map_err(|e| (exit::BAD_INPUT, e))? {
            eprintln!("wrote {}", f.display());
        }
    }
    match fail_on_slower.and_then(|pct| c.too_slow(pct)) {
        Some(msg) => Err(Fail(exit::SLOWER, msg)),
        None => Ok(exit::OK),
    }
}

fn merge(runs: &[PathBuf], out: Option<PathBuf>) -> Result<i32, Fail> {
    let fail = |e: sweep::merge::MergeError| Fail(e.exit_code(), e.to_string());
    let dirs = sweep::merge::resolve(runs).map_err(fail)?;
    let opts = sweep::merge::Options {
        out,
        command: std::env::args().collect(),
    };
    let merged = sweep::merge::merge(&dirs, &opts).map_err(fail)?;
    println!("{}", merged.summary());
    match merged.missing_error() {
        Some(msg) => Err(Fail(exit::POINTS_FAILED, msg)),
        None => Ok(exit::OK),
    }
}

fn slurm(spec: &Path, req: sweep::slurm::Request, submit: bool) -> Result<i32, Fail> {
    let fail = |e: sweep::slurm::SlurmError| Fail(e.exit_code(), e.to_string());
    let spec = load(spec)?;
    let job = sweep::slurm::Job::new(&spec, req).map_err(fail)?;
    let prepared = sweep::slurm::prepare(&job).map_err(fail)?;
    let (warnings, lines) = prepared.describe(&job);
    for w in warnings {
        eprintln!("warning: {w}");
    }
    for l in lines {
        println!("{l}");
    }
    if submit && !prepared.todo.is_empty() {
        let id = sweep::slurm::submit(&prepared.sbatch).map_err(fail)?;
        let logs = job.sweep_dir().join(format!("slurm-{id}_<task>.out"));
        println!(
            "submitted job array {id} (shards {}); task logs: {}",
            sweep::slurm::ranges(&prepared.todo),
            logs.display()
        );
    }
    Ok(exit::OK)
}

fn list(dir: &Path) {
    let benches: Vec<_> = walkdir::WalkDir::new(dir.join("cuda"))
        .min_depth(1)
        .max_depth(1)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_dir() && e.file_name() != "common")
        .filter_map(|e| sweep::render::Bench::open(e.path()).ok())
        .collect();
    println!("benches ({}):", benches.len());
    for b in &benches {
        let templates: Vec<String> = b
            .templates
            .iter()
            .filter_map(|t| t.file_name().map(|f| f.to_string_lossy().into_owned()))
            .collect();
        println!(
            "  {:<16} {}  [{}]",
            b.name,
            b.source.display(),
            templates.join(", ")
        );
    }
    let specs: Vec<_> = walkdir::WalkDir::new(dir.join("sweeps"))
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "toml"))
        .collect();
    println!("sweeps ({}):", specs.len());
    for e in specs {
        let line = match Spec::load(e.path()) {
            Ok(s) => match sweep::points::expand(&s) {
                Ok(p) => format!("bench {:<14} {} points", s.bench, p.len()),
                Err(err) => format!("error: {err}"),
            },
            Err(err) => format!("error: {err}"),
        };
        println!("  {:<28} {line}", e.path().display());
    }
}
