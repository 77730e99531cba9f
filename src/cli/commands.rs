//! What each subcommand does: loads what it needs and calls the library; a failure comes back as
//! a [`CliError`] (src/cli/error.rs), which `main` prints and maps to its exit code.

use super::args::*;
use super::error::CliError;
use super::outputs;
use std::path::{Path, PathBuf};
use sweep::driver;
use sweep::events::terminal::Terminal;
use sweep::events::{Event, Reporter};
use sweep::exit;
use sweep::export::Format as ExportFormat;
use sweep::overrides::Overrides;
use sweep::points::{Shard, Split};
use sweep::report::{Make, MakeError};
use sweep::spec::Spec;
use sweep::store::run::{ANALYSIS_CSV, ANALYSIS_JSON, ANALYSIS_MD};
use sweep::store::RunDir;
use sweep::words::plural;

fn load(spec: &Path) -> Result<Spec, CliError> {
    Ok(Spec::load(spec)?)
}

/// The spec with the command-line overrides applied.
fn load_with(spec: &Path, over: &OverrideArgs) -> Result<Spec, CliError> {
    Ok(sweep::overrides::load(spec, &over.overrides())?)
}

fn cache_dir(place: &Where) -> PathBuf {
    place
        .cache
        .clone()
        .or_else(|| std::env::var_os("SWEEP_CACHE").map(PathBuf::from))
        .unwrap_or_else(|| place.output.join(".cache"))
}

/// Where builds go and how many at once: what `sweep build` needs, and `sweep run` with it.
fn build_options(place: &Where, sharding: &Sharding) -> driver::BuildOptions {
    driver::BuildOptions {
        output: place.output.clone(),
        cache: cache_dir(place),
        jobs: place.jobs.unwrap_or_else(cores),
        shard: sharding.shard,
        split: sharding.split,
        cancel: driver::Cancel::new(),
    }
}

fn options(args: &RunArgs, resume: Option<PathBuf>) -> driver::Options {
    driver::Options {
        build: build_options(&args.place, &args.sharding),
        dialect: args.csv_dialect,
        order: args.order,
        seed: args.seed,
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

/// The first Ctrl-C (or SIGTERM) cancels the run (saying `first`); the second kills what it
/// started and ends sweep at once; before the run (or the build) has its folder, the first does.
/// Once the sweep is over (its manifest final), the first ends sweep at once: what
/// is left (report, analysis, charts, exports) writes through temporary files, so none is torn.
fn install_ctrl_c(
    cancel: &driver::Cancel,
    spec: &Spec,
    exports: &[ExportFormat],
    first: &'static str,
) {
    let cancel = cancel.clone();
    let spec = spec.clone();
    let exports = exports.to_vec();
    let _ = ctrlc::set_handler(move || {
        let again = cancel.cancel();
        // No run folder yet (the compiler's `--version`, the GPU's lock, a `sweep build`): no
        // point to finish and no row to keep, so nothing is waited for.
        if !again && cancel.run_dir().is_none() {
            sweep::exec::kill_all();
            sweep::exec::remove_query_folders();
            say("\ninterrupted before any point ran: what it started is killed; run the same command again");
            std::process::exit(exit::INTERRUPTED);
        }
        if again || cancel.is_sweep_over() {
            sweep::exec::kill_all();
            sweep::exec::remove_query_folders();
            cancel.mark_interrupted();
            if again {
                say("\ninterrupted twice: children killed; finished rows are in the CSV");
            } else {
                say(&format!(
                    "\n{}",
                    after_the_sweep(&spec, &exports, cancel.run_dir())
                ));
            }
            std::process::exit(exit::INTERRUPTED);
        }
        say(first);
    });
}

/// A line on stderr, lost where stderr went away (a run ignores SIGPIPE: see main.rs).
fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// What a Ctrl-C or SIGTERM after the last point says: the run's rows and manifest are whole,
/// and how to write what was left (the analysis with the spec's `[analyze]` choices).
fn after_the_sweep(spec: &Spec, exports: &[ExportFormat], run_dir: Option<PathBuf>) -> String {
    let dir = run_dir.map_or("RUN".to_string(), |d| d.display().to_string());
    let mut select = String::new();
    if let Some(cfg) = &spec.analyze {
        if let Some(x) = &cfg.x {
            select.push_str(&format!(" --x {x}"));
        }
        if !cfg.y.is_empty() {
            select.push_str(&format!(" --y {}", cfg.y.join(",")));
        }
        if let Some(by) = &cfg.by {
            select.push_str(&format!(" --by {}", by.join(",")));
        }
    }
    // The exports asked for with --export too (review 12a L2: the hint left them out).
    let export = match exports {
        [] => String::new(),
        formats => {
            let names: Vec<String> = formats
                .iter()
                .filter_map(clap::ValueEnum::to_possible_value)
                .map(|v| v.get_name().to_string())
                .collect();
            format!(", `sweep export {dir} --format {}`", names.join(","))
        }
    };
    format!("interrupted after the sweep: every row and the manifest are written, the report, analysis, charts or exports maybe not (hint: `sweep analyze {dir}{select}`, `sweep plot {dir}{select}`{export} and `sweep report {dir}` write them)")
}

/// What `sweep run` and `sweep resume` do: the sweep ([`driver::run_sweep`]), then
/// `--export-json`, the analysis and the exports; all that the terminal shows of it is the
/// [`Terminal`] reporter's, from the driver's events and from this function's after the sweep
/// (`Analyzed`, `Wrote`, `Done`, a warning for what failed after the sweep).
fn run(spec: &Spec, args: &RunArgs, resume: Option<PathBuf>) -> Result<i32, CliError> {
    // Where no run folder can be made (a file, or under one, or a link to nothing): the user's
    // to change (exit 2), not the environment's (exit 4, as a full disk).
    let output = &args.place.output;
    if output.exists() && !output.is_dir() {
        return Err(CliError::Usage(format!(
            "--output `{}` is a file, not a folder (hint: --output names the folder that holds the runs, made if missing)",
            super::error::one_line(&output.display().to_string())
        )));
    }
    outputs::refuse_a_path_under_no_folder("--output", Some(output))?;
    // JSON on stdout: every other line goes to stderr, so that stdout parses as one document.
    let json_on_stdout = args.export_json.as_deref().is_some_and(outputs::is_stdout);
    if let Some(path) = args.export_json.as_deref().filter(|_| !json_on_stdout) {
        export_json_outside_runs(path)?;
        let mut inputs = vec![spec.path.clone()];
        if let Ok(bench) = sweep::render::Bench::locate(spec) {
            inputs.extend(bench.input_files().unwrap_or_default());
        }
        outputs::refuse_own_inputs(
            &format!("--export-json {}", path.display()),
            &[path.to_path_buf()],
            &inputs,
            "name a new file for the JSON, or `-` for stdout",
        )?;
    }
    let opts = options(args, resume);
    install_ctrl_c(
        &opts.build.cancel,
        spec,
        &args.export,
        "\ninterrupted: finishing the current point (Ctrl-C again to kill it)",
    );
    let terminal = Terminal::new(spec, args.quiet);
    let terminal = match json_on_stdout {
        true => terminal.summary_on_stderr(),
        false => terminal,
    };
    let mut out = sweep::report::html::Live::new(Box::new(terminal));
    let summary = driver::run_sweep(spec, &opts, &mut out)?;
    // A Ctrl-C or SIGTERM while the last point ran: the sweep is over, and nothing more is made.
    if opts.build.cancel.is_cancelled() && !summary.interrupted {
        out.on(&Event::Warning(&after_the_sweep(
            spec,
            &args.export,
            Some(summary.run_dir.clone()),
        )));
        return Ok(exit::INTERRUPTED);
    }
    // An export asked for that could not be written: the rows are whole, but what the user
    // asked for did not happen, so the run exits with that failure's code (the first's).
    let mut export_failed: Option<i32> = None;
    if let Some(path) = &args.export_json {
        let written = sweep::store::Run::open_dir(&summary.run_dir).and_then(|run| {
            if json_on_stdout {
                json_to_stdout(&run, path)
            } else {
                sweep::export::write_json(&run, path)
            }
        });
        match written {
            // What went to stdout is no file to list.
            Ok(()) if json_on_stdout => {}
            Ok(()) => out.on(&Event::Wrote(path)),
            Err(e) => {
                let e = CliError::Store(e);
                export_failed = export_failed.or(Some(e.exit_code()));
                out.on(&Event::Warning(&format!(
                    "--export-json at the end of the run failed: {e}"
                )));
            }
        }
    }
    let analysis = spec
        .analyze
        .as_ref()
        // A shard dealt no point (more shards than series) has no curve to analyse: the
        // analysis only warned that its results.csv had no rows.
        .filter(|_| !args.no_analyze && !summary.interrupted && summary.total > 0);
    if let Some(cfg) = analysis {
        let opts = sweep::analyze::AnalyzeOptions::of_spec(spec, cfg);
        let what = if cfg.plot {
            Make::AnalysisAndCharts
        } else {
            Make::Analysis
        };
        match sweep::report::make(&summary.csv, &opts, None, what) {
            Ok(made) => {
                if let Some(a) = &made.analysis {
                    out.on(&Event::Analyzed(a));
                }
                if let Some(n) = &made.note {
                    out.on(&Event::Note(n));
                }
                for f in &made.files {
                    out.on(&Event::Wrote(f));
                }
            }
            Err(e) => {
                let e = CliError::from(e);
                // A file system that is full or read-only fails the run as an export's does: the
                // analysis and charts the spec asks for are missing. An analysis that the results
                // do not allow stays a warning: every point was measured.
                if e.exit_code() == exit::ENVIRONMENT {
                    export_failed = export_failed.or(Some(exit::ENVIRONMENT));
                }
                out.on(&Event::Warning(&format!(
                    "the analysis at the end of the run failed: {e}"
                )));
            }
        }
    }
    if !args.export.is_empty() && !summary.interrupted {
        match export_files(&summary.run_dir, &args.export, None, None, false) {
            Ok(files) => files.iter().for_each(|f| out.on(&Event::Wrote(f))),
            Err(e) => {
                export_failed = export_failed.or(Some(e.exit_code()));
                out.on(&Event::Warning(&format!(
                    "the export at the end of the run failed: {e}"
                )));
            }
        }
    }
    out.on(&Event::Done { summary: &summary });
    Ok(if summary.interrupted {
        exit::INTERRUPTED
    } else if let Some(code) = export_failed {
        code
    } else if summary.failed() + summary.failed_before > 0 {
        exit::POINTS_FAILED
    } else {
        exit::OK
    })
}

/// `--export-json -` (or `/dev/stdout`): the run's JSON written to stdout, whatever stdout is (a
/// pipe, a terminal, a file the shell opened, in append mode too), never replaced by a rename.
fn json_to_stdout(run: &sweep::store::Run, path: &Path) -> Result<(), sweep::store::StoreError> {
    use std::io::Write as _;
    let failed = |cause: std::io::Error| sweep::store::StoreError::Write {
        path: path.to_path_buf(),
        cause: cause.into(),
    };
    let v = sweep::export::run_json(run)?;
    let text = serde_json::to_string_pretty(&v).map_err(|e| failed(e.into()))?;
    if stdout_was_closed() {
        return Err(failed(std::io::Error::from_raw_os_error(libc::EBADF)));
    }
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.write_all(b"\n"))
        .and_then(|()| stdout.flush())
        .map_err(failed)
}

/// Whether sweep started with stdout closed (`>&-`): Rust's runtime then opens `/dev/null` on
/// it, read-write, and every write to it succeeds, so the JSON sent there would be lost unsaid. A
/// shell's `> /dev/null` opens it write-only: that is the user's choice, and no failure.
fn stdout_was_closed() -> bool {
    // SAFETY: fstat and fcntl only read the state of fd 1 into a local.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        libc::fstat(libc::STDOUT_FILENO, &mut st) == 0
            && st.st_mode & libc::S_IFMT == libc::S_IFCHR
            && st.st_rdev == libc::makedev(1, 3)
            && libc::fcntl(libc::STDOUT_FILENO, libc::F_GETFL) & libc::O_ACCMODE == libc::O_RDWR
    }
}

/// Refuses an `--export-json` file inside a run folder (one holding manifest.json, or a folder
/// under one): `--export-json RUN/results.csv` on a resume replaced the run's results with JSON
/// (exit 0), and its manifest or a point's log would go the same way.
fn export_json_outside_runs(path: &Path) -> Result<(), CliError> {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let run = abs
        .ancestors()
        .skip(1)
        .find(|d| sweep::store::RunDir::new(d).is_run());
    if let Some(run) = run {
        return Err(CliError::Usage(format!(
            "`--export-json {}` is inside the run folder `{}`: it would replace a file of that run (hint: write it elsewhere, or use `sweep export RUN --format json`, which writes into RUN/export/)",
            path.display(),
            run.display()
        )));
    }
    // Said before the sweep, not as a warning after hours of it (exit 0 and no file).
    let folder = abs.parent().filter(|p| !p.as_os_str().is_empty());
    if abs.is_dir() || folder.is_some_and(|f| !f.is_dir()) {
        return Err(CliError::Usage(format!(
            "`--export-json {}`: {} (hint: name a file in a folder that exists)",
            path.display(),
            if abs.is_dir() {
                "it is a folder".to_string()
            } else {
                format!(
                    "its folder `{}` does not exist",
                    folder.unwrap_or(&abs).display()
                )
            }
        )));
    }
    Ok(())
}

/// A resume measures what the run set out to: its own shard, dealt as it was. Without `--shard`,
/// `sweep resume` of shard 0/2 measured every point of the sweep into that shard's folder (the
/// other shard's too: merge then refused the duplicates), exit 0; and of a `sweep build` folder
/// it ran the sweep into the build folder. Another `--shard` than the run's is refused.
fn resume_as_started(
    run_dir: &Path,
    m: &sweep::store::Manifest,
    args: &mut RunArgs,
) -> Result<(), CliError> {
    let shown = run_dir.display();
    if m.state == sweep::store::RunState::Build {
        return Err(CliError::Usage(format!(
            "`{shown}` is a `sweep build` folder, not a run: there is nothing to resume (hint: `sweep run SPEC` measures the sweep, using the builds)"
        )));
    }
    // A merge's manifest says shard `merged`: the resume took it for a run and refused it as
    // one dealt "by points", or went on to measure into the merged folder.
    if m.shard.as_deref() == Some("merged") {
        return Err(CliError::Usage(format!(
            "`{shown}` is a `sweep merge` folder, not a run: there is nothing to resume (hint: resume the shard runs its manifest lists under `merged_from`, then merge again)"
        )));
    }
    let Some(shard) = m.shard.as_deref().and_then(|s| s.parse::<Shard>().ok()) else {
        // A whole run given a shard: the resume measured that shard's points of it, said the
        // rest "already done" and exited 130 (review 18b F2).
        if let Some(given) = args.sharding.shard {
            return Err(CliError::Usage(format!(
                "`--shard {}/{}`: `{shown}` is a whole run, of no shard (hint: leave out --shard; a resume measures its run's own points)",
                given.index, given.count
            )));
        }
        return Ok(());
    };
    match args.sharding.shard {
        Some(given) if (given.index, given.count) != (shard.index, shard.count) => {
            Err(CliError::Usage(format!(
                "`--shard {}/{}`: `{shown}` is the run of shard {}/{} (hint: leave out --shard; a resume measures its run's own shard)",
                given.index, given.count, shard.index, shard.count
            )))
        }
        _ => {
            args.sharding.shard = Some(shard);
            if let Some(split) = m.split {
                args.sharding.split = split;
            }
            Ok(())
        }
    }
}

/// A resume works where its run started, whatever folder it is called from: the output folder
/// is the run's own (`<output>/<sweep>/<stamp>`), and the build cache the one it started with
/// (recorded absolute in its manifest), unless `--cache` names another, read from where the
/// user is; a run from before the record takes `$SWEEP_CACHE`, else `<output>/.cache`. Relative
/// paths read after the move into the run's folder of start named other folders: the resume
/// rebuilt every point into a new `output/.cache` there.
fn resume_in_place(run_dir: &Path, m: &sweep::store::Manifest, place: &mut Where) {
    let here = |p: PathBuf| std::path::absolute(&p).unwrap_or(p);
    if let Some(output) = run_dir.parent().and_then(Path::parent) {
        place.output = output.to_path_buf();
    }
    let given = place.cache.take().map(here);
    let recorded = m.cache.as_ref().map(PathBuf::from);
    let ambient = std::env::var_os("SWEEP_CACHE").map(|c| here(PathBuf::from(c)));
    let default = here(place.output.join(".cache"));
    place.cache = Some(given.or(recorded).or(ambient).unwrap_or(default));
}

/// The resume of a finished run with nothing to do: it says so and changes nothing (the
/// manifest, report, analysis and charts stay as the run's end wrote them), and exits as the run
/// did (1 when rows failed).
fn left_as_it_was(run_dir: &Path, m: &sweep::store::Manifest, points: usize, failed: usize) -> i32 {
    let analyzed = sweep::analyze::AnalyzeOptions::of_run(m).is_some();
    let before = match failed {
        0 => format!("{points} already done before"),
        n => format!("{points} already done before, {n} of them failed"),
    };
    let failed_hint = if failed > 0 {
        format!(
            "; failed rows stay: `sweep run {} --force` measures the sweep anew",
            sweep::units::visible(&m.spec_path)
        )
    } else {
        String::new()
    };
    let dir = run_dir.display();
    // The run's end could not write its analysis (a full disk): the resume writes none either
    // (review 19b F7: the hint offered only the report).
    // (A shard of no point has none to make: review 20b #3.)
    let draws = if analyzed && points > 0 && !RunDir::new(run_dir).analysis_md().exists() {
        format!("its analysis is missing: `sweep analyze {dir}` and `sweep plot {dir}` write it, `sweep report {dir}` the page")
    } else {
        format!("`sweep report {dir}` draws it again")
    };
    println!(
        "nothing to do: `{dir}` is finished ({before}); it is left as it was (hint: {draws}{failed_hint})"
    );
    if failed > 0 {
        exit::POINTS_FAILED
    } else {
        exit::OK
    }
}

/// `sweep resume`: the run's spec with the overrides it started with, read from the folder it
/// started in, run again into the same folder.
fn resume(run_dir: PathBuf, args: &RunArgs) -> Result<i32, CliError> {
    let run_dir = std::path::absolute(&run_dir).unwrap_or(run_dir);
    // A file of the run (its results.csv, as the read hint offers) stands for its folder
    // (review 11a M5: `.../results.csv/manifest.json`: not a directory).
    let run_dir = match run_dir.parent() {
        Some(dir) if run_dir.is_file() => dir.to_path_buf(),
        _ => run_dir,
    };
    // `--export-json` names a file from where the user is, not from the run's folder of start.
    let mut args = args.clone();
    if let Some(path) = args.export_json.as_ref().filter(|p| !outputs::is_stdout(p)) {
        args.export_json = Some(std::path::absolute(path).unwrap_or_else(|_| path.clone()));
    }
    let m = sweep::store::Manifest::load(&run_dir).map_err(CliError::Store)?;
    // A resume writes into its run's own folder: another `--output` was taken and ignored
    // (review 19b F7).
    let given = std::path::absolute(&args.place.output).unwrap_or(args.place.output.clone());
    let own = run_dir.parent().and_then(Path::parent);
    if args.place.output != Path::new(super::args::DEFAULT_OUTPUT)
        && own.is_some_and(|o| sweep::files::real_path(o) != sweep::files::real_path(&given))
    {
        return Err(CliError::Usage(format!(
            "`--output {}`: a resume writes into its run's own folder `{}` (hint: leave out --output; `sweep run SPEC --output DIR` starts a new run there)",
            args.place.output.display(),
            run_dir.display()
        )));
    }
    resume_as_started(&run_dir, &m, &mut args)?;
    // (Another `--csv-dialect` goes on to the resume, which refuses it: review 20b #4.)
    let same_dialect = args.csv_dialect.is_none_or(|d| d == m.dialect);
    if args.export.is_empty() && args.export_json.is_none() && !args.force && same_dialect {
        if let Some((points, failed)) = driver::finished_as_is(&run_dir, &m)? {
            return Ok(left_as_it_was(&run_dir, &m, points, failed));
        }
    }
    resume_in_place(&run_dir, &m, &mut args.place);
    let args = &args;
    // From any folder: work in the one the run started in, where its spec path, output and
    // cache paths mean what they meant then.
    if Path::new(&m.spec_path).is_relative() && Path::new(&m.cwd).is_dir() {
        std::env::set_current_dir(&m.cwd).map_err(|source| CliError::EnterDir {
            dir: m.cwd.clone(),
            source,
        })?;
    }
    let over = Overrides::from_args(&m.overrides).ok_or_else(|| CliError::BadOverrides {
        run_dir: run_dir.clone(),
        overrides: m.overrides.clone(),
    })?;
    let spec = sweep::overrides::load(Path::new(&m.spec_path), &over)?;
    run(&spec, args, Some(run_dir))
}

/// `sweep plan`: the points `sweep run` would run, in its order, and their count.
fn plan(spec: &Spec, sharding: &Sharding) -> Result<i32, CliError> {
    let points = driver::plan(spec, sharding.shard, sharding.split)?;
    println!("{:>6}  {:<13}  point", "index", "id");
    for p in &points {
        println!("{:>6}  {:<13}  {}", p.index, p.id, p.label());
    }
    if spec.repeat > 1 {
        println!(
            "{}, each in {} processes (repeat: pass 1 in this order, the others shuffled)",
            plural(points.len(), "point"),
            spec.repeat
        );
    } else if spec.rechecks() {
        println!(
            "{} (recheck: one whose samples fall into two groups runs in {} more processes at the end)",
            plural(points.len(), "point"),
            spec.recheck
        );
    } else {
        println!("{}", plural(points.len(), "point"));
    }
    Ok(exit::OK)
}

/// `sweep render`: the headers of point `point` printed, or written into `out` with the command
/// that builds it by hand (the sweep's own build command, [`sweep::compile::by_hand`]).
fn render(spec: &Spec, point: usize, out: Option<PathBuf>) -> Result<i32, CliError> {
    let points = driver::plan(spec, None, Split::Series)?;
    let p = points.get(point).ok_or_else(|| CliError::NoPoint {
        point,
        last: points.len() - 1,
    })?;
    let bench = sweep::render::Bench::locate(spec)?;
    let rendered = sweep::render::render(&bench, spec, p)?;
    if let Some(dir) = &out {
        let mut inputs = vec![spec.path.clone()];
        inputs.extend(bench.input_files().unwrap_or_default());
        outputs::refuse_own_inputs(
            &format!("--out {}", dir.display()),
            &rendered
                .iter()
                .map(|r| dir.join(&r.file))
                .collect::<Vec<_>>(),
            &inputs,
            "name a folder of its own with --out, not the bench's",
        )?;
    }
    let Some(dir) = out else {
        for r in &rendered {
            println!("// ---- {} ({}) ----", r.file, p.label());
            print!("{}", r.text);
        }
        return Ok(exit::OK);
    };
    sweep::render::write(&rendered, &dir).map_err(|source| CliError::WriteHeaders {
        dir: dir.clone(),
        source,
    })?;
    println!(
        "wrote {} header(s) for {} into {}",
        rendered.len(),
        p.label(),
        dir.display()
    );
    let build = sweep::compile::by_hand(spec, &bench, p, &dir);
    println!("build by hand: {}", build.line());
    Ok(exit::OK)
}

/// `sweep build`: every point (or `sample` of them) compiled into the cache.
fn build(
    spec: &Spec,
    place: &Where,
    sharding: &Sharding,
    sample: Option<usize>,
) -> Result<i32, CliError> {
    let opts = build_options(place, sharding);
    // The builds in flight are killed at the first Ctrl-C (see `exec::wait_unless`).
    install_ctrl_c(
        &opts.cancel,
        spec,
        &[],
        "\ninterrupted: stopping the builds",
    );
    let r = driver::build_only(spec, &opts, sample)?;
    for f in &r.failed {
        eprintln!("build failed: {f}");
    }
    println!(
        "{}built {}, {} from cache, {} failed, in {:.1} s (arch {} from {}; logs in {})",
        if r.interrupted { "interrupted: " } else { "" },
        plural(r.built, "point"),
        r.cached,
        r.failed.len(),
        r.wall.as_secs_f64(),
        r.arch.as_deref().unwrap_or("host"),
        r.arch_from,
        r.dir.display()
    );
    Ok(if r.interrupted {
        eprintln!("run the same command again to build the rest");
        exit::INTERRUPTED
    } else if r.failed.is_empty() {
        exit::OK
    } else {
        exit::POINTS_FAILED
    })
}

/// `sweep cache stats` and `sweep cache clean`.
fn cache(action: &str, place: &Where) -> Result<i32, CliError> {
    let cache = sweep::cache::Cache::new(cache_dir(place));
    let clean = action == "clean";
    let s = if clean { cache.clean()? } else { cache.stats() };
    println!(
        "cache {} {} {}, {:.1} MiB",
        cache.dir.display(),
        if clean { "removed" } else { "holds" },
        plural(s.entries, "build"),
        s.bytes as f64 / 1048576.0
    );
    if s.in_use > 0 {
        println!(
            "and kept {} that running sweeps use (`sweep cache clean` again once they end)",
            plural(s.in_use, "build")
        );
    }
    if s.building > 0 {
        println!(
            "and {} that running sweeps are making",
            plural(s.building, "build")
        );
    }
    if s.partial > 0 {
        println!(
            "and {} unfinished builds of killed sweeps, {:.1} MiB{}",
            s.partial,
            s.partial_bytes as f64 / 1048576.0,
            if clean {
                ""
            } else {
                " (the next sweep or `sweep cache clean` removes them)"
            }
        );
    }
    Ok(exit::OK)
}

/// `sweep export`: the run in each format, into `out` (default `<run_dir>/export`).
fn export(
    run_dir: &Path,
    formats: &[sweep::export::Format],
    dialect: Option<sweep::store::Dialect>,
    out: Option<PathBuf>,
) -> Result<i32, CliError> {
    for path in export_files(run_dir, formats, dialect, out, true)? {
        eprintln!("wrote {}", path.display());
    }
    Ok(exit::OK)
}

/// The names `sweep export` writes into its folder in format `f`.
fn exported(f: sweep::export::Format) -> &'static [&'static str] {
    use sweep::export::Format;
    match f {
        Format::Xlsx => &["results.xlsx"],
        Format::Csv => &[sweep::store::RESULTS, ANALYSIS_CSV],
        Format::Json => &["run.json"],
        Format::Long => &[sweep::export::long::CSV, sweep::export::long::JSON],
    }
}

/// The files of `sweep export` (what `sweep run --export` writes too).
fn export_files(
    run_dir: &Path,
    formats: &[sweep::export::Format],
    dialect: Option<sweep::store::Dialect>,
    out: Option<PathBuf>,
    refuse_empty: bool,
) -> Result<Vec<PathBuf>, CliError> {
    let run = sweep::store::Run::open_dir(run_dir).map_err(CliError::Store)?;
    let typed = sweep::export::Typed::of(&run).map_err(CliError::Store)?;
    // `sweep export` of a run without a row would write empty files and say it did (as analyze
    // and compare, it is refused); `run --export` of a sweep with no point to run writes them.
    if refuse_empty && typed.results.rows.is_empty() {
        return Err(CliError::Export(sweep::export::ExportError::NoRows {
            path: run.path.clone(),
        }));
    }
    let out = match out {
        // Through a link, --out may reach the run's own files (a run folder as --out is the
        // export's to refuse, naming it).
        Some(out) if !RunDir::new(&out).is_run() => {
            let dir = RunDir::new(run_dir);
            let written: Vec<PathBuf> = formats
                .iter()
                .flat_map(|f| exported(*f))
                .map(|name| out.join(name))
                .collect();
            outputs::refuse_own_inputs(
                &format!("--out {}", out.display()),
                &written,
                &[
                    dir.results(),
                    dir.manifest(),
                    dir.analysis_csv(),
                    dir.analysis_json(),
                ],
                "name a folder of its own with --out, or leave it out for RUN/export",
            )?;
            out
        }
        Some(out) => out,
        // The run's own export/ (a --out the user names may be a link of theirs).
        None => {
            let own = sweep::store::RunDir::new(run_dir).export();
            sweep::store::run::own_dir(&own).map_err(|source| {
                CliError::Export(sweep::export::ExportError::Write {
                    path: own.clone(),
                    source,
                })
            })?;
            own
        }
    };
    let mut files = Vec::new();
    for f in formats {
        files.extend(sweep::export::export(&typed, *f, dialect, &out).map_err(CliError::Export)?);
    }
    Ok(files)
}

/// What `sweep analyze` and `sweep plot` analyse: the `--x`, `--y` and `--by` given, else the
/// `[analyze]` of the spec of the run whose results.csv it is (as the run's own analysis did),
/// then with what it asks in words, for an error.
fn analyze_options(
    select: &Select,
    results: &Path,
) -> (sweep::analyze::AnalyzeOptions, Option<String>) {
    let asked = sweep::analyze::AnalyzeOptions {
        x: select.x.clone(),
        y: select.y.clone(),
        by: select.by.clone(),
    };
    if asked.x.is_some() || !asked.y.is_empty() || asked.by.is_some() {
        return (asked, None);
    }
    let of_spec = RunDir::of_csv(results)
        .filter(|d| d.results() == results)
        .and_then(|d| sweep::store::Manifest::load(d.path()).ok())
        .and_then(|m| sweep::analyze::AnalyzeOptions::of_run(&m));
    match of_spec {
        Some(opts) => {
            let mut words = Vec::new();
            if let Some(x) = &opts.x {
                words.push(format!("x = {x:?}"));
            }
            if !opts.y.is_empty() {
                words.push(format!("y = {:?}", opts.y));
            }
            if let Some(by) = &opts.by {
                words.push(format!("by = {by:?}"));
            }
            let words = sweep::units::visible(&words.join(", ")).into_owned();
            (opts, Some(words).filter(|w| !w.is_empty()))
        }
        None => (asked, None),
    }
}

/// An analysis error as the spec's `[analyze]` (`asked`) made it.
fn as_asked(e: MakeError, asked: Option<String>) -> CliError {
    match (e, asked) {
        (MakeError::Analyze(source), Some(asked)) => CliError::SpecAnalyze {
            asked,
            source: Box::new(source),
        },
        (e, _) => e.into(),
    }
}

/// `sweep analyze`: the analysis written beside the CSV (or into `--out`); its markdown on
/// stdout, so that it pipes, and the files it wrote on stderr.
fn analyze(results: &Path, select: &Select) -> Result<i32, CliError> {
    let results = RunDir::results_of(results);
    let beside = results.parent().map(Path::to_path_buf).unwrap_or_default();
    let out = select.out.clone().unwrap_or(beside);
    let option = match &select.out {
        Some(dir) => format!("--out {}", dir.display()),
        None => "the analysis beside the CSV".to_string(),
    };
    outputs::refuse_own_inputs(
        &option,
        &[ANALYSIS_JSON, ANALYSIS_CSV, ANALYSIS_MD].map(|f| out.join(f)),
        std::slice::from_ref(&results),
        "name another folder with --out, or rename the CSV",
    )?;
    let (opts, asked) = analyze_options(select, &results);
    let made = sweep::report::make(&results, &opts, select.out.as_deref(), Make::Analysis)
        .map_err(|e| as_asked(e, asked))?;
    if let Some(a) = &made.analysis {
        print!("{}", a.to_markdown());
    }
    for f in made.files {
        eprintln!("wrote {}", f.display());
    }
    Ok(exit::OK)
}

/// `sweep plot`: the charts in `charts/` beside the CSV (or under `--out`); the files it wrote
/// on stdout, a note of the series left without a chart on stderr.
fn plot(results: &Path, select: &Select, look: &LookArgs) -> Result<i32, CliError> {
    let results = RunDir::results_of(results);
    let (opts, asked) = analyze_options(select, &results);
    let metrics = look.metrics.clone();
    let look = sweep::report::Look {
        size: look.size.unwrap_or(sweep::report::Look::default().size),
        title: look.title.clone(),
        x_label: look.x_label.clone(),
        y_label: look.y_label.clone(),
        formats: look.format.iter().copied().map(Into::into).collect(),
    };
    let what = Make::Charts {
        look: &look,
        metrics: &metrics,
    };
    let made = sweep::report::make(&results, &opts, select.out.as_deref(), what)
        .map_err(|e| as_asked(e, asked))?;
    if let Some(note) = &made.note {
        eprintln!("note: {note}");
    }
    for f in made.files {
        println!("wrote {}", f.display());
    }
    Ok(exit::OK)
}

/// `sweep report`: `report.html` written into the run folder.
fn report(run_dir: PathBuf, out: Option<PathBuf>) -> Result<i32, CliError> {
    let run = RunDir::new(&run_dir);
    if !run.is_run() {
        return Err(CliError::NotRunFolder { dir: run_dir });
    }
    if let Some(dir) = &out {
        outputs::refuse_own_inputs(
            &format!("--out {}", dir.display()),
            &[dir.join(sweep::store::run::REPORT)],
            &[
                run.results(),
                run.manifest(),
                run.analysis_json(),
                run.analysis_csv(),
                run.analysis_md(),
            ],
            "name a folder of its own with --out",
        )?;
    }
    let path = sweep::report::html::write_to(&run_dir, out.as_deref()).map_err(CliError::Report)?;
    eprintln!("wrote {}", path.display());
    Ok(exit::OK)
}

/// Each subcommand, with what it was given: one function each.
pub(crate) fn dispatch(cli: Cli) -> Result<i32, CliError> {
    match cli.command {
        Command::Run { spec, over, args } => run(&load_with(&spec, &over)?, &args, None),
        Command::Resume { run_dir, args } => resume(run_dir, &args),
        Command::Plan {
            spec,
            over,
            sharding,
        } => plan(&load_with(&spec, &over)?, &sharding),
        Command::Render {
            spec,
            over,
            point,
            out,
        } => render(&load_with(&spec, &over)?, point, out),
        Command::Build {
            spec,
            over,
            place,
            sharding,
            sample,
        } => build(&load_with(&spec, &over)?, &place, &sharding, sample),
        Command::List { dir } => {
            list(&dir);
            Ok(exit::OK)
        }
        Command::Cache { action, place } => cache(&action, &place),
        Command::RenderWorker => Ok(sweep::render::serve()),
        Command::Analyze { results, select } => {
            outputs::refuse_a_file_as_folder(select.out.as_deref())?;
            outputs::refuse_inside_a_run(select.out.as_deref(), &[])?;
            analyze(&results, &select)
        }
        Command::Plot {
            results,
            select,
            look,
        } => {
            outputs::refuse_a_file_as_folder(select.out.as_deref())?;
            outputs::refuse_inside_a_run(select.out.as_deref(), &[])?;
            plot(&results, &select, &look)
        }
        Command::Compare {
            run_a,
            run_b,
            y,
            out,
            fail_on_slower,
        } => {
            outputs::refuse_a_file_as_folder(out.as_deref())?;
            outputs::refuse_inside_a_run(out.as_deref(), &[])?;
            compare(&run_a, &run_b, y, out, fail_on_slower)
        }
        Command::Export {
            run_dir,
            format,
            dialect,
            out,
        } => {
            outputs::refuse_a_file_as_folder(out.as_deref())?;
            outputs::refuse_inside_a_run(out.as_deref(), &["export"])?;
            export(&run_dir, &format, dialect, out)
        }
        Command::Report { run_dir, out } => {
            outputs::refuse_a_file_as_folder(out.as_deref())?;
            outputs::refuse_inside_a_run(out.as_deref(), &[])?;
            report(run_dir, out)
        }
        Command::Merge { runs, out } => {
            outputs::refuse_a_path_under_no_folder("--out", out.as_deref())?;
            merge(&runs, out)
        }
        Command::Slurm {
            spec,
            shards,
            split,
            partition,
            gres,
            time,
            cpus_per_task,
            csv_dialect,
            place,
            submit,
        } => {
            let binary = std::env::current_exe().map_err(CliError::CurrentExe)?;
            let req = sweep::slurm::Request {
                shards,
                split,
                binary,
                cache: cache_dir(&place),
                output: place.output,
                jobs: place.jobs,
                dialect: csv_dialect,
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
) -> Result<i32, CliError> {
    if let Some(pct) = fail_on_slower.filter(|p| !(p.is_finite() && *p >= 0.0)) {
        return Err(CliError::NotPercentage(pct));
    }
    if let Some(dir) = &out {
        outputs::refuse_own_inputs(
            &format!("--out {}", dir.display()),
            &["compare.csv", "compare.md"].map(|f| dir.join(f)),
            &[RunDir::results_of(a), RunDir::results_of(b)],
            "name another folder with --out",
        )?;
        // Refused before the comparison is printed (review 12b L1: it was printed whole, then
        // refused with exit 2).
        if RunDir::new(dir).is_run() {
            return Err(sweep::compare::CompareError::OutIsARun { out: dir.clone() }.into());
        }
    }
    let c = sweep::compare::compare(a, b, &sweep::compare::Options { y })?;
    print!("{}", c.to_markdown());
    if let Some(dir) = out {
        for f in c.write_files(&dir)? {
            eprintln!("wrote {}", f.display());
        }
    }
    if fail_on_slower.is_some() && c.points.is_empty() {
        return Err(CliError::NothingCompared {
            matched: c.matched,
            failed: c.failed.len() + c.unvalued.len(),
        });
    }
    if let Some(msg) = fail_on_slower.and_then(|_| c.lost()) {
        return Err(CliError::LostInB(msg));
    }
    // A B that did not measure every point of its own (interrupted, still running) and lacks
    // some A measured: those may be the slower ones (review 16b B11: 1 of 16 passed the gate).
    if fail_on_slower.is_some() && !c.only_a.is_empty() {
        let dir = c.b.path.parent().unwrap_or(Path::new(""));
        if let Ok(m) = sweep::store::Manifest::load(dir) {
            if m.point_ids.len() > c.b.rows {
                return Err(CliError::LostInB(format!(
                    "--fail-on-slower: B measured {} of its {} points ({}) and lacks {} that A measured (first: {}); nothing shows they are not slower (hint: `sweep resume {}` first)",
                    c.b.rows,
                    m.point_ids.len(),
                    m.state.as_str(),
                    c.only_a.len(),
                    c.only_a[0],
                    dir.display()
                )));
            }
        }
    }
    match fail_on_slower.and_then(|pct| c.too_slow(pct)) {
        Some(msg) => Err(CliError::Slower(msg)),
        None => Ok(exit::OK),
    }
}

fn merge(runs: &[PathBuf], out: Option<PathBuf>) -> Result<i32, CliError> {
    let dirs = sweep::merge::resolve(runs)?;
    let opts = sweep::merge::Options {
        out,
        command: std::env::args().collect(),
    };
    let merged = sweep::merge::merge(&dirs, &opts)?;
    println!("{}", merged.summary());
    match merged.missing_error() {
        Some(msg) => Err(CliError::MissingPoints(msg)),
        None => Ok(exit::OK),
    }
}

fn slurm(spec: &Path, req: sweep::slurm::Request, submit: bool) -> Result<i32, CliError> {
    let spec = load(spec)?;
    let job = sweep::slurm::Job::new(&spec, req)?;
    let prepared = sweep::slurm::prepare(&job)?;
    let (warnings, lines) = prepared.describe(&job);
    for w in warnings {
        eprintln!("warning: {w}");
    }
    for l in lines {
        println!("{l}");
    }
    if submit && !prepared.todo.is_empty() {
        let id = sweep::slurm::submit(&prepared.sbatch)?;
        let logs = job.sweep_dir().join(format!("slurm-{id}_<task>.out"));
        println!(
            "submitted job array {id} (shards {}); task logs: {}",
            sweep::slurm::ranges(&prepared.todo),
            logs.display()
        );
    }
    Ok(exit::OK)
}

/// `sweep list`: the benches and sweeps of the project in `dir`.
/// A sweep's size as `sweep list` says it: `64 points`, `256 points (threads 64 x mode 4)`, and
/// with a filter `71 points (filtered from variant 3 x offset 33 x stride 37 = 3663)`.
fn size_words(size: &sweep::points::Size) -> String {
    let dims: Vec<String> = size
        .dims
        .iter()
        .map(|(names, n)| format!("{} {n}", super::error::one_line(&names.join("+"))))
        .collect();
    match (size.kept, size.dims.len()) {
        (None, 0 | 1) => plural(size.total, "point"),
        (None, _) => format!("{} ({})", plural(size.total, "point"), dims.join(" x ")),
        (Some(kept), _) => format!(
            "{} (filtered from {} = {})",
            plural(kept, "point"),
            dims.join(" x "),
            size.total
        ),
    }
}

fn list(dir: &Path) {
    let benches = sweep::project::benches(dir);
    println!("benches ({}):", benches.len());
    for b in &benches {
        let templates: Vec<String> = b
            .templates
            .iter()
            .filter_map(|t| t.file_name().map(|f| f.to_string_lossy().into_owned()))
            .collect();
        // Names are the user's files': a line break or escape in one is shown escaped, as
        // errors show it, never echoed to the terminal.
        println!(
            "  {:<16} {}  [{}]",
            super::error::one_line(&b.name),
            super::error::one_line(&b.source.display().to_string()),
            super::error::one_line(&templates.join(", "))
        );
    }
    let sweeps = sweep::project::sweeps(dir);
    println!("sweeps ({}):", sweeps.len());
    for s in sweeps {
        let line = match s.read {
            Ok((bench, size)) => format!(
                "bench {:<14} {}",
                super::error::one_line(&bench),
                size_words(&size)
            ),
            Err(err) => format!("error: {}", super::error::one_line(&err.to_string())),
        };
        println!(
            "  {:<28} {line}",
            super::error::one_line(&s.path.display().to_string())
        );
    }
}
