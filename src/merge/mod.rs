//! `sweep merge`: joins the runs of a sweep's shards into one run folder with one results CSV
//! (rows in sweep order) and one manifest that lists the runs it came from.
//!
//! The inputs must be runs of one spec text (same hash) with the same CSV header and dialect,
//! built by one compiler from one version of the bench.
//! Every point of the sweep must appear exactly once: a point in two runs stops the merge
//! (nothing is written); missing points are named, and the rows there are are still merged, so the
//! user sees what is missing and which shards to run again (the manifest's `missing` lists them
//! all, its `state` is `incomplete`). Beside the rows go the runs' control re-runs (`controls.csv`)
//! and the processes behind the rows: every process of the points `recheck` measured again
//! (`passes/recheck.csv`) and, with `repeat = k`, each pass's own row of every point
//! (`passes/pass-<p>.csv`), each point's from the run its row comes from. Inputs are only read,
//! never repaired: a shard still running can be merged as it stands.
//!
//! `inputs.rs` finds and reads the runs, `output.rs` writes the merged folder, `summary.rs` holds
//! its manifest and messages; this file matches the rows to the sweep's points.

mod inputs;
mod output;
mod summary;

pub use inputs::resolve;
pub use summary::{Merged, MergedManifest, MissingPoint, Source};

use crate::points::{self, Point, Shard};
use crate::spec::Spec;
use crate::store::schema::STATUS_COLUMN;
use crate::store::{self, Manifest};
use inputs::{check_alike, header_detail, load, read_csv, Input};
use output::{save, write_csv, Target};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use summary::name_points;

/// `sweep merge --help`, after the options.
pub const HELP: &str = "\
A sweep folder (output/<sweep>) stands for the latest run of each of its shards. The runs must
come from one spec text, with one CSV header and dialect; the merged CSV keeps that dialect, and
the runs' control re-runs go together into the merged controls.csv, and the processes behind its
rows (those recheck measured again, and with repeat each pass's) into its passes/recheck.csv and
passes/pass-<p>.csv, each point's from the run its row comes from.

Exit codes:
  0    every point of the sweep merged, whatever its status
  1    points missing: the rest is merged, and its manifest.json lists the missing ones (state
       `incomplete`); or points in two runs: nothing written
  3    runs of different specs, headers or dialects (controls.csv and passes/*.csv included),
       runs built by another compiler or from another version of the bench, or a run that
       cannot be read: nothing written";

#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("no run folder given (hint: sweep merge output/<sweep>/<stamp>-shard-0-of-4 ..., or the sweep folder output/<sweep>)")]
    NoInput,
    #[error(
        "`{dir}` is neither a run folder (no manifest.json) nor a sweep folder holding shard runs"
    )]
    NotARun { dir: String },
    #[error("`{dir}` holds shard runs of several shardings: {shardings} (hint: pass the run folders to merge)")]
    MixedShardings { dir: String, shardings: String },
    #[error("run `{dir}` is given twice (as `{first}` and as `{second}`): a run would be merged with itself (hint: pass each shard's run once)")]
    GivenTwice {
        dir: String,
        first: String,
        second: String,
    },
    #[error(transparent)]
    Store(#[from] store::StoreError),
    #[error("run `{other}` is of another spec than `{first}` (spec sha256 {other_hash:.12} vs {first_hash:.12}) (hint: merge the shards of one spec text)")]
    SpecDiffers {
        first: String,
        other: String,
        first_hash: String,
        other_hash: String,
    },
    /// The runs' spec was overridden otherwise (`-a`, `--set`, `--timing`): other points or
    /// other programs, as another spec would be.
    #[error("run `{other}` was run with other overrides than `{first}`: {other_overrides} vs {first_overrides} (hint: merge the shards of one spec run with the same -a, --set and --timing)")]
    OverridesDiffer {
        first: String,
        other: String,
        first_overrides: String,
        other_overrides: String,
    },
    /// The runs' programs came from another compiler (release or place) or another bench: one
    /// curve would hold rows of two programs, and the merged manifest would name one of them.
    #[error("run `{other}` was built {what} than `{first}`: {values}: its rows come from other programs (hint: run that shard again with the others' {fix}, or merge the shards of one build)")]
    BuildDiffers {
        first: String,
        other: String,
        what: &'static str,
        fix: &'static str,
        /// `` `theirs` vs `first's` ``
        values: String,
    },
    #[error("run `{other}` has another CSV header than `{first}`: {detail}")]
    HeaderDiffers {
        first: String,
        other: String,
        detail: String,
    },
    /// A CSV kept beside a run's results.csv (`controls.csv`, `passes/*.csv`) with another header.
    #[error("`{path}` has another CSV header than the results.csv of its run: {detail} (hint: was it edited? nothing was written)")]
    KeptHeaderDiffers { path: String, detail: String },
    /// A pass's CSV lacks the row of a point whose results row combined it: the merged run would
    /// show a pass short of its processes (review 18b F3: merged silently).
    #[error("`{path}` has no row of the point `{point}`, whose row in the run's results.csv combines one of each pass (hint: was it edited? restore it from a copy, or measure that run again; nothing was written)")]
    PassRowMissing { path: String, point: String },
    #[error("run `{other}` is written in the {other_dialect} CSV dialect and `{first}` in the {first_dialect} one (hint: merge runs of one --csv-dialect)")]
    DialectDiffers {
        first: String,
        other: String,
        first_dialect: String,
        other_dialect: String,
    },
    #[error("the spec saved in `{dir}` does not expand: {source}")]
    Spec {
        dir: String,
        #[source]
        source: Box<crate::spec::SpecError>,
    },
    #[error("the spec saved in `{dir}` does not expand: {source}")]
    Points {
        dir: String,
        #[source]
        source: points::PointsError,
    },
    #[error("run `{dir}` holds point `{id}`, which its spec does not have (hint: was its results.csv edited?)")]
    Foreign { dir: String, id: String },
    #[error("run `{dir}` was made by an older sweep, whose point ids (`{id}`) lack the `p` prefix (hint: merge it with the sweep that made it, or re-run it)")]
    OldIds { dir: String, id: String },
    #[error("{} {} more than once: {list} (hint: {hint}; nothing was written)", crate::words::plural(*count, "point"), if *count == 1 { "appears" } else { "appear" })]
    Duplicates {
        count: usize,
        list: String,
        /// What to pass instead: one run per shard, of one sharding where they differ.
        hint: String,
    },
    #[error("--out `{dir}` {holds}: a merge writes a run folder of its own (hint: --out takes a new or empty folder; without --out the merge goes to <sweep folder>/<stamp>-merged)")]
    OutExists { dir: String, holds: String },
    #[error("cannot write `{path}`: {cause}{}", cause.write_hint())]
    Write {
        path: PathBuf,
        #[source]
        cause: crate::store::Cause,
    },
}

pub struct Options {
    /// The merged run folder [default: `<sweep folder of the first run>/<stamp>-merged`].
    pub out: Option<PathBuf>,
    /// The command line, for the manifest.
    pub command: Vec<String>,
}

/// `sweep merge`.
pub fn merge(dirs: &[PathBuf], opts: &Options) -> Result<Merged, MergeError> {
    let inputs: Vec<Input> = dirs.iter().map(|d| load(d)).collect::<Result<_, _>>()?;
    let first = inputs.first().ok_or(MergeError::NoInput)?;
    check_alike(&inputs)?;
    let spec = Spec::parse(Path::new(&first.manifest.spec_path), &first.manifest.spec).map_err(
        |source| MergeError::Spec {
            dir: first.name(),
            source: Box::new(source),
        },
    )?;
    let all: Vec<Point> = points::expand(&spec).map_err(|source| MergeError::Points {
        dir: first.name(),
        source,
    })?;
    let position: BTreeMap<&str, usize> = all
        .iter()
        .enumerate()
        .map(|(k, p)| (p.id.as_str(), k))
        .collect();

    // Every row once, by its place in the sweep.
    let mut slots: Vec<Vec<(usize, usize)>> = vec![Vec::new(); all.len()];
    for (i, input) in inputs.iter().enumerate() {
        let listed: std::collections::HashSet<&str> = input
            .manifest
            .point_ids
            .iter()
            .map(String::as_str)
            .collect();
        for (r, row) in input.rows.iter().enumerate() {
            let id = row.first().map(String::as_str).unwrap_or_default();
            if crate::points::legacy_id(id) {
                return Err(MergeError::OldIds {
                    dir: input.name(),
                    id: id.into(),
                });
            }
            let k = *position.get(id).ok_or_else(|| MergeError::Foreign {
                dir: input.name(),
                id: id.to_string(),
            })?;
            // A point of the spec, but not of this shard (its manifest lists its own): refused as
            // every reader of the shard refuses it (review 16b B7).
            if !listed.is_empty() && !listed.contains(id) {
                return Err(MergeError::Store(store::StoreError::ForeignRow {
                    path: store::RunDir::new(&input.dir).results(),
                    point: crate::units::visible(id).into_owned(),
                    row: r + 1,
                }));
            }
            // Two rows of one point in one run: refused as every reader of a run refuses them,
            // not told as a point two shards share (review 13b F6: "in X and X", exit 1).
            if let Some(&(_, first)) = slots[k].iter().find(|(j, _)| *j == i) {
                return Err(MergeError::Store(store::StoreError::TwoRows {
                    path: store::RunDir::new(&input.dir).results(),
                    point: crate::units::visible(id).into_owned(),
                    first: first + 1,
                    second: r + 1,
                }));
            }
            slots[k].push((i, r));
        }
    }
    let twice: Vec<usize> = (0..all.len()).filter(|&k| slots[k].len() > 1).collect();
    if !twice.is_empty() {
        let labels: Vec<(String, String)> = twice
            .iter()
            .map(|&k| {
                let runs: Vec<String> = slots[k]
                    .iter()
                    .map(|&(i, _)| format!("`{}`", inputs[i].name()))
                    .collect();
                (
                    all[k].id.clone(),
                    format!(
                        "{}; in {}{}",
                        all[k].label(),
                        runs.join(" and "),
                        differing(&inputs, &slots[k])
                    ),
                )
            })
            .collect();
        // Shards of several shardings (`--shard 0/2` beside `--shard 1/2 --split points`) share
        // points though each shard is passed once: the hint names the shardings.
        let shardings: BTreeSet<String> = inputs
            .iter()
            .map(|i| {
                match i
                    .manifest
                    .shard
                    .as_deref()
                    .and_then(|s| s.parse::<Shard>().ok())
                {
                    Some(s) => format!(
                        "{} split by {}",
                        crate::words::plural(s.count, "shard"),
                        i.manifest.split.map_or("series", |s| s.as_str())
                    ),
                    None => "a whole run".to_string(),
                }
            })
            .collect();
        let hint = if shardings.len() > 1 {
            format!(
                "the runs come from several shardings ({}): pass the shards of one `--shard I/N --split`, one run each",
                shardings.into_iter().collect::<Vec<_>>().join(", ")
            )
        } else {
            "pass one run per shard".to_string()
        };
        return Err(MergeError::Duplicates {
            count: twice.len(),
            list: name_points(labels.iter().map(|(a, b)| (a, b)), labels.len()),
            hint,
        });
    }

    // The shard each missing point belongs to, when the inputs are shards of one count and split.
    let shardings: BTreeSet<(usize, Option<points::Split>)> = inputs
        .iter()
        .filter_map(|i| {
            let s = i.manifest.shard.as_deref()?.parse::<Shard>().ok()?;
            Some((s.count, i.manifest.split))
        })
        .collect();
    let shards = (shardings.len() == 1)
        .then(|| shardings.into_iter().next())
        .flatten();
    let owner: Option<Vec<usize>> = shards.as_ref().map(|(count, split)| {
        let split = split.unwrap_or(points::Split::Series);
        points::assign(&all, *count, split, &points::x_axis(&spec))
    });
    let missing: Vec<MissingPoint> = (0..all.len())
        .filter(|&k| slots[k].is_empty())
        .map(|k| MissingPoint {
            point_id: all[k].id.clone(),
            index: all[k].index,
            point: all[k].label(),
            shard: match (&owner, &shards) {
                (Some(o), Some((count, _))) => Some(format!("{}/{count}", o[k])),
                _ => None,
            },
        })
        .collect();

    let header = inputs
        .iter()
        .find_map(|i| i.header.clone())
        .unwrap_or_else(|| first.manifest.columns.clone());
    let rows: Vec<&Vec<String>> = slots
        .iter()
        .filter_map(|s| s.first())
        .map(|&(i, r)| &inputs[i].rows[r])
        .collect();
    let processes: Vec<(PathBuf, Vec<Vec<String>>)> = kept_csvs(spec.repeat)
        .into_iter()
        .map(|kept| {
            let rows = kept_rows(&inputs, &slots, &all, &header, &kept)?;
            Ok((kept.path, rows))
        })
        .collect::<Result<_, MergeError>>()?;
    let controls = control_rows(&inputs, &header)?;
    let status = header.iter().position(|c| c == STATUS_COLUMN);
    let mut counts = BTreeMap::new();
    for row in &rows {
        if let Some(s) = status.and_then(|c| row.get(c)) {
            *counts.entry(s.clone()).or_insert(0) += 1;
        }
    }

    let complete = missing.is_empty();
    let started = inputs
        .iter()
        .map(|i| i.manifest.started.clone())
        .filter(|s| !s.is_empty())
        .min();
    let finished = inputs
        .iter()
        .filter_map(|i| i.manifest.finished.clone())
        .max();
    let hosts: BTreeSet<&str> = inputs
        .iter()
        .map(|i| i.manifest.host.as_str())
        .filter(|h| !h.is_empty())
        .collect();
    let mut gpus_start = Vec::new();
    let mut gpus_end = Vec::new();
    for i in &inputs {
        gpus_start.extend(i.manifest.gpus_start.iter().cloned());
        gpus_end.extend(i.manifest.gpus_end.iter().cloned());
    }
    let run = Manifest {
        points_total: all.len(),
        point_ids: all.iter().map(|p| p.id.clone()).collect(),
        columns: header.clone(),
        shard: Some("merged".into()),
        host: hosts.into_iter().collect::<Vec<_>>().join(","),
        command: opts.command.clone(),
        gpus_start,
        gpus_end,
        started: started.unwrap_or_default(),
        finished: if complete { finished } else { None },
        state: if complete {
            crate::store::RunState::Finished
        } else {
            crate::store::RunState::Incomplete
        },
        counts: counts.clone(),
        timeline: Vec::new(),
        resumed: Vec::new(),
        // One prestart where every part ran with the same; none where they differ.
        prestart: first
            .manifest
            .prestart
            .filter(|p| inputs.iter().all(|i| i.manifest.prestart == Some(*p))),
        // The sweep that made the runs, where it is one.
        sweep_version: agreed(&inputs, |m| &m.sweep_version),
        sweep_commit: agreed(&inputs, |m| &m.sweep_commit),
        ..first.manifest.clone()
    };
    let manifest = MergedManifest {
        run,
        merged_from: inputs
            .iter()
            .map(|i| Source {
                run: i.name(),
                shard: i.manifest.shard.clone(),
                state: i.manifest.state,
                host: i.manifest.host.clone(),
                rows: i.rows.len(),
            })
            .collect(),
        missing,
    };

    // Never into one of the runs it merges (review 18b F5: a merged run was written inside a
    // shard's folder, which then held another run).
    if let Some(out) = opts.out.as_deref() {
        let real = crate::files::real_path(out);
        if let Some(input) = inputs
            .iter()
            // The run's folder itself is told as one that holds a run.
            .find(|i| {
                i.dir
                    .canonicalize()
                    .is_ok_and(|d| real.starts_with(&d) && real != d)
            })
        {
            return Err(MergeError::OutExists {
                dir: out.display().to_string(),
                holds: format!("lies inside `{}`, a run it merges", input.name()),
            });
        }
    }
    let target = Target::stage(first, opts.out.as_deref())?;
    let dir = target.stage.clone();
    let written = (|| -> Result<(), MergeError> {
        let out = store::RunDir::new(&dir);
        write_csv(&out.results(), &header, &rows, first.manifest.dialect)?;
        if !controls.is_empty() {
            let refs: Vec<&Vec<String>> = controls.iter().collect();
            write_csv(&out.controls(), &header, &refs, first.manifest.dialect)?;
        }
        for (path, rows) in processes.iter().filter(|(_, rows)| !rows.is_empty()) {
            let path = dir.join(path);
            if let Some(passes) = path.parent() {
                std::fs::create_dir_all(passes).map_err(|e| MergeError::Write {
                    path: passes.to_path_buf(),
                    cause: e.into(),
                })?;
            }
            let refs: Vec<&Vec<String>> = rows.iter().collect();
            write_csv(&path, &header, &refs, first.manifest.dialect)?;
        }
        save(&manifest, &dir)
    })();
    if let Err(e) = written {
        return Err(target.abandon(e));
    }
    let dir = target.place()?;
    let csv = store::RunDir::new(&dir).results();
    Ok(Merged {
        dir,
        csv,
        runs: inputs.len(),
        total: all.len(),
        rows: rows.len(),
        counts,
        missing: manifest.missing,
        spec_path: first.manifest.spec_path.clone(),
        shards,
        states: inputs
            .iter()
            .filter_map(|i| Some((i.manifest.shard.clone()?, i.manifest.state.to_string())))
            .collect(),
    })
}

/// How the rows of one point in two runs differ, for a message: `, with other values: `saw_mflops`
/// 3000 in `A`, 1234 in `B`` (the first column that differs, timings of the build and run
/// aside), or nothing where they are alike.
fn differing(inputs: &[Input], slot: &[(usize, usize)]) -> String {
    let [(i, r), (j, s), ..] = slot else {
        return String::new();
    };
    let (a, b) = (&inputs[*i].rows[*r], &inputs[*j].rows[*s]);
    let header = inputs[*i].header.as_deref().unwrap_or_default();
    // What was measured, not how long its build and run took or whether it came from the cache.
    let bookkeeping = |c: usize| {
        header
            .get(c)
            .is_some_and(|h| ["build_s", "run_s", "cached"].contains(&h.as_str()))
    };
    match (0..a.len().max(b.len())).find(|&c| a.get(c) != b.get(c) && !bookkeeping(c)) {
        Some(c) => format!(
            ", with other values: `{}` {} in `{}`, {} in `{}`",
            header.get(c).map_or("?", String::as_str),
            a.get(c).map_or("", String::as_str),
            inputs[*i].name(),
            b.get(c).map_or("", String::as_str),
            inputs[*j].name()
        ),
        None => String::new(),
    }
}

/// The control re-runs of every input, so that the merged run's analysis and compare still know
/// the spread between processes. Read with the other inputs, before anything is written: a
/// controls.csv whose header differs from the results header is refused, not left out.
fn control_rows(inputs: &[Input], header: &[String]) -> Result<Vec<Vec<String>>, MergeError> {
    let mut controls = Vec::new();
    for input in inputs {
        let controls_csv = store::RunDir::new("").controls();
        controls.extend(read_kept(input, &controls_csv, header, false)?);
    }
    Ok(controls)
}

/// The rows of a CSV an input keeps beside its results.csv (`rel`, relative to its run folder;
/// none where it is missing), refused where its header differs from the results header, or
/// where it holds two rows of a point and is a CSV of `once` row per point.
fn read_kept(
    input: &Input,
    rel: &Path,
    header: &[String],
    once: bool,
) -> Result<Vec<Vec<String>>, MergeError> {
    let path = input.dir.join(rel);
    let (h, rows) = read_csv(&path, input.manifest.dialect)?;
    if let Some(h) = h.filter(|h| h != header) {
        return Err(MergeError::KeptHeaderDiffers {
            path: path.display().to_string(),
            detail: header_detail(
                (
                    &format!("{}", store::RunDir::new(&input.dir).results().display()),
                    header,
                ),
                (&path.display().to_string(), &h),
            ),
        });
    }
    store::rows::check_kept_rows(&path, &input.manifest, header, &rows, once)?;
    Ok(rows)
}

/// A CSV of processes that a run keeps beside its results.csv (same header), behind its rows.
struct Kept {
    /// Where, relative to the run folder.
    path: PathBuf,
    /// Whether a point has one row there (a pass of `repeat`: its last, the one its results row
    /// combined, as the run itself reads it) or several (`recheck`: every process, in the order
    /// they ran).
    one_per_point: bool,
    /// A pass before the last: one row per point, a second is refused (only a hand makes one;
    /// the last pass's may hold the process a kill cut off before its point's row). Merge took
    /// the later of two, beside a results row that combined the other (review 19b F1).
    once: bool,
}

/// The process CSVs of a run of a spec with `repeat`: `passes/recheck.csv`, and with `repeat` > 1
/// each pass's `passes/pass-<p>.csv`.
fn kept_csvs(repeat: u32) -> Vec<Kept> {
    let run = Path::new("");
    let passes = (0..repeat).filter(|_| repeat > 1).map(|p| Kept {
        path: store::pass_csv(run, p),
        one_per_point: true,
        once: p + 1 < repeat,
    });
    std::iter::once(Kept {
        path: store::recheck_csv(run),
        one_per_point: false,
        once: false,
    })
    .chain(passes)
    .collect()
}

/// The rows of the inputs' `kept` CSV that go with the merged rows: each point's from the run its
/// row comes from (`slots`), so that no process is there twice and none belongs to a row the merge
/// left out (a point of a shard that stopped before its row was written, a held point of a shard
/// that stopped before combining it: they stay in that run). In sweep order, and each point's
/// processes in the order they ran (with `recheck`, the first the one that showed two groups).
fn kept_rows(
    inputs: &[Input],
    slots: &[Vec<(usize, usize)>],
    all: &[Point],
    header: &[String],
    kept: &Kept,
) -> Result<Vec<Vec<String>>, MergeError> {
    // Per input: point id -> its processes.
    let mut held: Vec<BTreeMap<String, Vec<Vec<String>>>> = Vec::with_capacity(inputs.len());
    for input in inputs {
        let rows = read_kept(input, &kept.path, header, kept.once)?;
        let mut of_point: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::new();
        for row in rows {
            let id = row.first().cloned().unwrap_or_default();
            let list = of_point.entry(id).or_default();
            if kept.one_per_point {
                list.clear();
            }
            list.push(row);
        }
        held.push(of_point);
    }
    let mut out = Vec::new();
    for (slot, point) in slots.iter().zip(all) {
        if let Some(&(i, _)) = slot.first() {
            match held[i].remove(&point.id) {
                Some(rows) => out.extend(rows),
                None if kept.one_per_point => {
                    return Err(MergeError::PassRowMissing {
                        path: inputs[i].dir.join(&kept.path).display().to_string(),
                        point: point.label(),
                    })
                }
                None => {}
            }
        }
    }
    Ok(out)
}

/// A manifest field every input has and agrees on, else None.
fn agreed(inputs: &[Input], field: fn(&Manifest) -> &Option<String>) -> Option<String> {
    let first = field(&inputs.first()?.manifest).clone()?;
    inputs
        .iter()
        .all(|i| field(&i.manifest).as_ref() == Some(&first))
        .then_some(first)
}
