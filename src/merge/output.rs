//! What a merge writes: the merged run folder, its CSVs and its manifest, each whole or not at all.

use super::inputs::Input;
use super::summary::MergedManifest;
use super::MergeError;
use crate::store::{self, Dialect};
use std::path::{Path, PathBuf};

fn write_err(path: &Path) -> impl Fn(std::io::Error) -> MergeError + '_ {
    move |e| MergeError::Write {
        path: path.to_path_buf(),
        cause: e.into(),
    }
}

/// Where a merge goes: `--out`, or a new `<stamp>-merged` folder beside the first run. The merge
/// is written whole into a hidden folder beside it ([`Target::stage`]) and renamed into place
/// ([`Target::place`]): a merge killed half-way left a `-merged` folder whose manifest said
/// `running` and which had no results.csv (the report reloaded itself forever, a resume measured
/// every point again).
pub(super) struct Target {
    /// `--out` as given, or None for `<stamp>-merged` in `sweep_dir`.
    out: Option<PathBuf>,
    /// The folder the runs' sweep folder is (absolute), for the default name.
    sweep_dir: PathBuf,
    /// The first run's folder as the user named it: the merged one is named alike.
    first: PathBuf,
    /// The hidden folder the merge is written into.
    pub(super) stage: PathBuf,
}

impl Target {
    /// Checks `--out` (a new or empty folder only) and makes the hidden folder to write into.
    pub(super) fn stage(first: &Input, out: Option<&Path>) -> Result<Target, MergeError> {
        let abs = first.dir.canonicalize().map_err(write_err(&first.dir))?;
        let sweep_dir = abs.parent().unwrap_or(&abs).to_path_buf();
        let beside = match out {
            Some(dir) => {
                // Only a new or empty folder: one that holds a run, or anything of the user's (a
                // `controls.csv` of their own), would be mixed with the merge or overwritten by it.
                let run = store::RunDir::new(dir);
                let first_entry = std::fs::read_dir(dir).ok().and_then(|mut d| {
                    d.find_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
                });
                let holds = if run.manifest().exists() || run.results().exists() {
                    Some("already holds a run".to_string())
                } else if dir.exists() && !dir.is_dir() {
                    Some("is a file".to_string())
                } else {
                    first_entry.map(|f| format!("is not empty (it holds `{f}`)"))
                };
                if let Some(holds) = holds {
                    return Err(MergeError::OutExists {
                        dir: dir.display().to_string(),
                        holds,
                    });
                }
                let abs = std::path::absolute(dir).map_err(write_err(dir))?;
                let parent = abs.parent().map(Path::to_path_buf).unwrap_or(abs);
                std::fs::create_dir_all(&parent).map_err(write_err(dir))?;
                parent
            }
            None => sweep_dir.clone(),
        };
        store::staging::remove_dead(&beside);
        let stage = beside.join(store::staging::name(".merge-"));
        if stage.exists() {
            std::fs::remove_dir_all(&stage).map_err(write_err(&stage))?;
        }
        std::fs::create_dir(&stage).map_err(write_err(out.unwrap_or(&beside)))?;
        Ok(Target {
            out: out.map(Path::to_path_buf),
            sweep_dir,
            first: first.dir.clone(),
            stage,
        })
    }

    /// Removes the hidden folder of a merge that failed; the error names the place the merge was
    /// going to (`--out`, or the sweep folder), not the hidden folder.
    pub(super) fn abandon(self, e: MergeError) -> MergeError {
        let _ = std::fs::remove_dir_all(&self.stage);
        match e {
            MergeError::Write { path, cause } => {
                let place = self.out.clone().unwrap_or_else(|| self.sweep_dir.clone());
                let path = match path.strip_prefix(&self.stage) {
                    Ok(rel) => place.join(rel),
                    Err(_) => path,
                };
                MergeError::Write { path, cause }
            }
            e => e,
        }
    }

    /// Renames the written merge into place; the folder's name as the user named the inputs
    /// (relative stays relative), or `--out` as given.
    pub(super) fn place(self) -> Result<PathBuf, MergeError> {
        let placed = self.rename();
        if placed.is_err() {
            let _ = std::fs::remove_dir_all(&self.stage);
        }
        placed
    }

    fn rename(&self) -> Result<PathBuf, MergeError> {
        let placed = match &self.out {
            Some(dir) => {
                // An empty folder given as --out is replaced by the merge (rename needs it gone).
                if dir.is_dir() {
                    std::fs::remove_dir(dir).map_err(write_err(dir))?;
                }
                std::fs::rename(&self.stage, dir).map_err(write_err(dir))?;
                return Ok(dir.clone());
            }
            None => {
                let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
                store::place_run_dir(&self.stage, &self.sweep_dir, &stamp, "-merged")?
            }
        };
        Ok(match (self.first.parent(), placed.file_name()) {
            (Some(p), Some(name)) => p.join(name),
            _ => placed,
        })
    }
}

/// Written to a temporary file and renamed: a reader never sees half a CSV.
pub(super) fn write_csv(
    path: &Path,
    header: &[String],
    rows: &[&Vec<String>],
    dialect: Dialect,
) -> Result<(), MergeError> {
    let mut text = store::record(header, dialect);
    for row in rows {
        text.extend(store::record(row, dialect));
    }
    store::write_atomic(path, &text).map_err(write_err(path))
}

/// Saved as every manifest is; a failure to write it is the environment's, as for the CSV.
pub(super) fn save(manifest: &MergedManifest, dir: &Path) -> Result<(), MergeError> {
    store::manifest::save_manifest(manifest, dir).map_err(|e| match e {
        store::StoreError::Write { path, cause } => MergeError::Write { path, cause },
        e => MergeError::Store(e),
    })
}
