//! What a merge writes: the merged run folder, its CSVs and its manifest, each whole or not at all.

use super::inputs::Input;
use super::summary::MergedManifest;
use super::MergeError;
use crate::store::{self, Dialect, Manifest};
use std::path::{Path, PathBuf};

fn write_err(path: &Path) -> impl Fn(std::io::Error) -> MergeError + '_ {
    move |e| MergeError::Write {
        path: path.to_path_buf(),
        cause: e.into(),
    }
}

/// `--out`, or a new `<stamp>-merged` folder beside the first run; the folder holds a manifest
/// (state `running`) from the start, as every run folder does.
pub(super) fn out_dir(
    first: &Input,
    out: Option<&Path>,
    run: &Manifest,
) -> Result<PathBuf, MergeError> {
    let placeholder = Manifest {
        state: crate::store::RunState::Running,
        ..run.clone()
    };
    let dir = match out {
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
            std::fs::create_dir_all(dir).map_err(write_err(dir))?;
            placeholder.save(dir)?;
            dir.to_path_buf()
        }
        None => {
            let abs = first.dir.canonicalize().map_err(write_err(&first.dir))?;
            let sweep_dir = abs.parent().unwrap_or(&abs);
            let dir = store::new_run_dir(sweep_dir, "", "-merged", &placeholder)?;
            // A merged run keeps no point folders: the logs stay in the shard runs.
            let _ = std::fs::remove_dir(store::RunDir::new(&dir).points());
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
