//! `sweep merge`: joins the runs of a sweep's shards into one run folder with one results CSV
//! (rows in sweep order) and one manifest that lists the runs it came from.
//!
//! The inputs must be runs of one spec text (same hash) with the same CSV header and dialect.
//! Every point of the sweep must appear exactly once: a point in two runs stops the merge
//! (nothing is written); missing points are named, and the rows there are are still merged, so the
//! user sees what is missing and which shards to run again (the manifest's `missing` lists them
//! all, its `state` is `incomplete`). Inputs are only read, never repaired: a shard still running
//! can be merged as it stands.

use crate::points::{self, Point, Shard};
use crate::spec::Spec;
use crate::store::schema::STATUS_COLUMN;
use crate::store::{self, Dialect, Manifest};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// `sweep merge --help`, after the options.
pub const HELP: &str = "\
A sweep folder (output/<sweep>) stands for the latest run of each of its shards. The runs must
come from one spec text, with one CSV header and dialect; the merged CSV keeps that dialect, and
the runs' control re-runs go together into the merged controls.csv.

Exit codes:
  0    every point of the sweep merged, whatever its status
  1    points missing: the rest is merged, and its manifest.json lists the missing ones (state
       `incomplete`); or points in two runs: nothing written
  3    runs of different specs, headers or dialects, or a run that cannot be read";

/// How many points a one-line message names before it says "and N more".
const NAMED: usize = 5;

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
    #[error(transparent)]
    Store(#[from] store::StoreError),
    #[error("run `{other}` is of another spec than `{first}` (spec sha256 {other_hash:.12} vs {first_hash:.12}) (hint: merge the shards of one spec text)")]
    SpecDiffers {
        first: String,
        other: String,
        first_hash: String,
        other_hash: String,
    },
    #[error("run `{other}` has another CSV header than `{first}`: {detail}")]
    HeaderDiffers {
        first: String,
        other: String,
        detail: String,
    },
    #[error("run `{other}` is written in the {other_dialect} CSV dialect and `{first}` in the {first_dialect} one (hint: merge runs of one --csv-dialect)")]
    DialectDiffers {
        first: String,
        other: String,
        first_dialect: String,
        other_dialect: String,
    },
    #[error("the spec saved in `{dir}` does not expand: {reason}")]
    Spec { dir: String, reason: String },
    #[error("run `{dir}` holds point `{id}`, which its spec does not have (hint: was its results.csv edited?)")]
    Foreign { dir: String, id: String },
    #[error("run `{dir}` was made by an older sweep, whose point ids (`{id}`) lack the `p` prefix (hint: merge it with the sweep that made it, or re-run it)")]
    OldIds { dir: String, id: String },
    #[error("{count} points appear more than once: {list} (hint: pass one run per shard; nothing was written)")]
    Duplicates { count: usize, list: String },
    #[error("`{dir}` already holds a merged run (hint: pick another --out, or remove it)")]
    OutExists { dir: String },
    #[error("cannot write `{path}`: {reason}")]
    Write { path: PathBuf, reason: String },
}

impl MergeError {
    pub fn exit_code(&self) -> i32 {
        match self {
            MergeError::Duplicates { .. } => crate::exit::POINTS_FAILED,
            MergeError::Write { .. } => crate::exit::ENVIRONMENT,
            _ => crate::exit::BAD_INPUT,
        }
    }
}

/// `manifest.json` of a merged run: a run manifest (which `sweep` reads as any other), plus where
/// its rows came from and which points are missing.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MergedManifest {
    #[serde(flatten)]
    pub run: Manifest,
    pub merged_from: Vec<Source>,
    pub missing: Vec<MissingPoint>,
}

/// One merged run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Source {
    pub run: String,
    pub shard: Option<String>,
    pub state: String,
    pub host: String,
    pub rows: usize,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MissingPoint {
    pub point_id: String,
    pub index: usize,
    /// `threads=5 variant=naive`
    pub point: String,
    /// The shard it belongs to (`1/4`), when the inputs are shards of one count.
    pub shard: Option<String>,
}

/// What a merge wrote.
#[derive(Debug)]
pub struct Merged {
    pub dir: PathBuf,
    pub csv: PathBuf,
    pub runs: usize,
    pub total: usize,
    pub rows: usize,
    pub counts: BTreeMap<String, usize>,
    pub missing: Vec<MissingPoint>,
    spec_path: String,
    shards: Option<(usize, String)>,
    /// Each input shard (`1/4`) -> its run's state.
    states: BTreeMap<String, String>,
}

impl Merged {
    pub fn summary(&self) -> String {
        let counts: Vec<String> = self
            .counts
            .iter()
            .map(|(s, n)| format!("{n} {s}"))
            .collect();
        format!(
            "merged {} runs: {} of {} points ({}) into {}",
            self.runs,
            self.rows,
            self.total,
            if counts.is_empty() {
                "no rows".into()
            } else {
                counts.join(", ")
            },
            self.csv.display()
        )
    }

    /// The one-line error when points are missing: which, and how to run them.
    pub fn missing_error(&self) -> Option<String> {
        if self.missing.is_empty() {
            return None;
        }
        let named = name_points(
            self.missing.iter().map(|m| (&m.point_id, &m.point)),
            self.missing.len(),
        );
        let shards: BTreeSet<&str> = self
            .missing
            .iter()
            .filter_map(|m| m.shard.as_deref())
            .collect();
        let hint = match &self.shards {
            Some((count, split)) if !shards.is_empty() => {
                let split = if split == "series" {
                    String::new()
                } else {
                    format!(" --split {split}")
                };
                let owners: Vec<String> = shards
                    .iter()
                    .map(|s| match self.states.get(*s) {
                        Some(state) => format!("{s} (run state `{state}`)"),
                        None => format!("{s} (no run given)"),
                    })
                    .collect();
                let which = match shards.len() {
                    1 => shards
                        .iter()
                        .next()
                        .copied()
                        .unwrap_or_default()
                        .to_string(),
                    _ => format!("<i>/{count}"),
                };
                format!(
                    "they belong to shard {}; `sweep run {spec} --shard {which}{split}`, or `sweep slurm {spec} --shards {count}{split} --submit`, runs them; then merge again",
                    owners.join(", "),
                    spec = self.spec_path,
                )
            }
            _ => "`sweep resume` the runs, then merge again".into(),
        };
        Some(format!(
            "{} of {} points missing: {named}; the other {} are merged into `{}` (hint: {hint})",
            self.missing.len(),
            self.total,
            self.rows,
            self.csv.display()
        ))
    }
}

/// `` `a1b2c3` (threads=5), `d4e5f6` (threads=6) and 3 more ``
fn name_points<'a>(points: impl Iterator<Item = (&'a String, &'a String)>, count: usize) -> String {
    let mut list: Vec<String> = points
        .take(NAMED)
        .map(|(id, label)| format!("`{id}` ({label})"))
        .collect();
    if count > NAMED {
        list.push(format!("and {} more", count - NAMED));
    }
    list.join(", ")
}

/// A run folder given to merge, read.
struct Input {
    dir: PathBuf,
    manifest: Manifest,
    header: Option<Vec<String>>,
    rows: Vec<Vec<String>>,
}

impl Input {
    fn name(&self) -> String {
        self.dir.display().to_string()
    }
}

/// The run folders to merge. Each argument is a run folder, or a sweep folder (`output/<sweep>`),
/// which stands for the latest run of each of its shards.
pub fn resolve(args: &[PathBuf]) -> Result<Vec<PathBuf>, MergeError> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for arg in args {
        if arg.join(store::MANIFEST).is_file() {
            dirs.push(arg.clone());
            continue;
        }
        // The runs directly in `arg`, oldest first: the latest run of each shard wins.
        // (shard count, split, index) -> run
        let mut latest: BTreeMap<(usize, String, usize), PathBuf> = BTreeMap::new();
        for run in store::runs_of(arg, "") {
            let Ok(m) = Manifest::load(&run) else {
                continue;
            };
            if let Some(s) = m.shard.as_deref().and_then(|s| s.parse::<Shard>().ok()) {
                latest.insert((s.count, m.split, s.index), run);
            }
        }
        let shardings: BTreeSet<String> = latest
            .keys()
            .map(|(n, split, _)| format!("{n} shards split by {split}"))
            .collect();
        match shardings.len() {
            0 => {
                return Err(MergeError::NotARun {
                    dir: arg.display().to_string(),
                })
            }
            1 => dirs.extend(latest.into_values()),
            _ => {
                return Err(MergeError::MixedShardings {
                    dir: arg.display().to_string(),
                    shardings: shardings.into_iter().collect::<Vec<_>>().join(", "),
                })
            }
        }
    }
    // The same folder given twice is one input.
    let mut seen = BTreeSet::new();
    dirs.retain(|d| seen.insert(d.canonicalize().unwrap_or_else(|_| d.clone())));
    if dirs.is_empty() {
        return Err(MergeError::NoInput);
    }
    Ok(dirs)
}

/// A CSV read without changing it (a shard may still be writing): its header (None: no CSV
/// yet) and its rows of the header's width.
fn read_csv(path: &Path, dialect: Dialect) -> Result<Table, MergeError> {
    Ok(match store::read::read_whole_lines(path, dialect)? {
        Some(csv) => (Some(csv.header.clone()), csv.full_rows()),
        None => (None, Vec::new()),
    })
}

/// A CSV read: its header (None: no CSV yet) and its rows.
type Table = (Option<Vec<String>>, Vec<Vec<String>>);

fn load(dir: &Path) -> Result<Input, MergeError> {
    let manifest = Manifest::load(dir)?;
    let (header, rows) = read_csv(&dir.join(store::RESULTS), manifest.dialect)?;
    Ok(Input {
        dir: dir.to_path_buf(),
        manifest,
        header,
        rows,
    })
}

/// Checks that every input is a run of the first one's spec, header and dialect.
fn check_alike(inputs: &[Input]) -> Result<(), MergeError> {
    let first = &inputs[0];
    for other in &inputs[1..] {
        if other.manifest.spec_hash != first.manifest.spec_hash {
            return Err(MergeError::SpecDiffers {
                first: first.name(),
                other: other.name(),
                first_hash: first.manifest.spec_hash.clone(),
                other_hash: other.manifest.spec_hash.clone(),
            });
        }
        if other.manifest.dialect != first.manifest.dialect {
            let name = |d: Dialect| d.name().to_string();
            return Err(MergeError::DialectDiffers {
                first: first.name(),
                other: other.name(),
                first_dialect: name(first.manifest.dialect),
                other_dialect: name(other.manifest.dialect),
            });
        }
    }
    let with_header: Vec<&Input> = inputs.iter().filter(|i| i.header.is_some()).collect();
    if let Some((first, rest)) = with_header.split_first() {
        let a = first.header.as_deref().unwrap_or_default();
        for other in rest {
            let b = other.header.as_deref().unwrap_or_default();
            if a != b {
                let detail = match a.iter().zip(b).position(|(x, y)| x != y) {
                    Some(i) => format!("column {} is `{}` there and `{}` here", i + 1, b[i], a[i]),
                    None => format!("{} columns there, {} here", b.len(), a.len()),
                };
                return Err(MergeError::HeaderDiffers {
                    first: first.name(),
                    other: other.name(),
                    detail,
                });
            }
        }
    }
    Ok(())
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
    let spec_err = |reason: String| MergeError::Spec {
        dir: first.name(),
        reason,
    };
    let spec = Spec::parse(Path::new(&first.manifest.spec_path), &first.manifest.spec)
        .map_err(|e| spec_err(e.to_string()))?;
    let all: Vec<Point> = points::expand(&spec).map_err(|e| spec_err(e.to_string()))?;
    let position: BTreeMap<&str, usize> = all
        .iter()
        .enumerate()
        .map(|(k, p)| (p.id.as_str(), k))
        .collect();

    // Every row once, by its place in the sweep.
    let mut slots: Vec<Vec<(usize, usize)>> = vec![Vec::new(); all.len()];
    for (i, input) in inputs.iter().enumerate() {
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
                    format!("{}; in {}", all[k].label(), runs.join(" and ")),
                )
            })
            .collect();
        return Err(MergeError::Duplicates {
            count: twice.len(),
            list: name_points(labels.iter().map(|(a, b)| (a, b)), labels.len()),
        });
    }

    // The shard each missing point belongs to, when the inputs are shards of one count and split.
    let shardings: BTreeSet<(usize, String)> = inputs
        .iter()
        .filter_map(|i| {
            let s = i.manifest.shard.as_deref()?.parse::<Shard>().ok()?;
            Some((s.count, i.manifest.split.clone()))
        })
        .collect();
    let shards = (shardings.len() == 1)
        .then(|| shardings.into_iter().next())
        .flatten();
    let owner: Option<Vec<usize>> = shards.as_ref().map(|(count, split)| {
        let split = if split == "points" {
            points::Split::Points
        } else {
            points::Split::Series
        };
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
        state: if complete { "finished" } else { "incomplete" }.into(),
        counts: counts.clone(),
        timeline: Vec::new(),
        resumed: Vec::new(),
        ..first.manifest.clone()
    };
    let manifest = MergedManifest {
        run,
        merged_from: inputs
            .iter()
            .map(|i| Source {
                run: i.name(),
                shard: i.manifest.shard.clone(),
                state: i.manifest.state.clone(),
                host: i.manifest.host.clone(),
                rows: i.rows.len(),
            })
            .collect(),
        missing,
    };

    let dir = out_dir(first, opts.out.as_deref(), &manifest.run)?;
    let csv = dir.join(store::RESULTS);
    write_csv(&csv, &header, &rows, first.manifest.dialect)?;
    // The control re-runs of every input (same header), so that the merged run's analysis and
    // compare still know the spread between processes.
    let mut controls: Vec<Vec<String>> = Vec::new();
    for i in &inputs {
        if let (Some(h), more) = read_csv(&i.dir.join(store::CONTROLS), first.manifest.dialect)? {
            if h == header {
                controls.extend(more);
            }
        }
    }
    if !controls.is_empty() {
        let refs: Vec<&Vec<String>> = controls.iter().collect();
        write_csv(
            &dir.join(store::CONTROLS),
            &header,
            &refs,
            first.manifest.dialect,
        )?;
    }
    save(&manifest, &dir)?;
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
            .filter_map(|i| Some((i.manifest.shard.clone()?, i.manifest.state.clone())))
            .collect(),
    })
}

fn write_err(path: &Path) -> impl Fn(std::io::Error) -> MergeError + '_ {
    move |e| MergeError::Write {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
}

/// `--out`, or a new `<stamp>-merged` folder beside the first run; the folder holds a manifest
/// (state `running`) from the start, as every run folder does.
fn out_dir(first: &Input, out: Option<&Path>, run: &Manifest) -> Result<PathBuf, MergeError> {
    let placeholder = Manifest {
        state: "running".into(),
        ..run.clone()
    };
    let dir = match out {
        Some(dir) => {
            if dir.join(store::MANIFEST).exists() || dir.join(store::RESULTS).exists() {
                return Err(MergeError::OutExists {
                    dir: dir.display().to_string(),
                });
            }
            std::fs::create_dir_all(dir).map_err(write_err(dir))?;
            placeholder.save(dir)?;
            dir.to_path_buf()
        }
        None => {
            let abs = first.dir.canonicalize().map_err(write_err(&first.dir))?;
            let sweep_dir = abs.parent().unwrap_or(&abs);
            let dir = store::new_run_dir(sweep_dir, "", "-merged", &placeholder)?;
            // A merged run keeps no point folders: the logs stay in the shard runs.
            let _ = std::fs::remove_dir(dir.join(store::POINTS));
            // Named as the user named the inputs (relative stays relative).
            match (first.dir.parent(), dir.file_name()) {
                (Some(p), Some(name)) => p.join(name),
                _ => dir,
            }
        }
    };
    Ok(dir)
}

/// Written to a temporary file and renamed: a reader never sees half a CSV.
fn write_csv(
    path: &Path,
    header: &[String],
    rows: &[&Vec<String>],
    dialect: Dialect,
) -> Result<(), MergeError> {
    let name = path
        .file_name()
        .map_or("results.csv".into(), |n| n.to_string_lossy());
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    let mut text = store::record(header, dialect);
    for row in rows {
        text.extend(store::record(row, dialect));
    }
    std::fs::write(&tmp, text).map_err(write_err(&tmp))?;
    std::fs::rename(&tmp, path).map_err(write_err(path))
}

/// Saved as every manifest is; a failure to write it is the environment's, as for the CSV.
fn save(manifest: &MergedManifest, dir: &Path) -> Result<(), MergeError> {
    store::manifest::save_manifest(manifest, dir).map_err(|e| match e {
        store::StoreError::Write { path, reason } => MergeError::Write { path, reason },
        e => MergeError::Store(e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lists_are_cut_to_a_line() {
        let pts: Vec<(String, String)> = (0..8)
            .map(|i| (format!("id{i}"), format!("threads={i}")))
            .collect();
        let s = name_points(pts.iter().map(|(a, b)| (a, b)), pts.len());
        assert_eq!(
            s,
            "`id0` (threads=0), `id1` (threads=1), `id2` (threads=2), `id3` (threads=3), `id4` (threads=4), and 3 more"
        );
    }
}
