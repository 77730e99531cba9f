//! Which run folder a `sweep run` works in: a new one, the one `--resume` names, or the latest
//! unfinished run of the spec; and the lock that keeps two sweeps out of one run folder.

use super::{DriverError, Options};
use crate::compile::Toolchain;
use crate::gpu::{self, HeldLock};
use crate::points;
use crate::spec::Spec;
use crate::store::{self, GpuState, Manifest};
use std::path::{Path, PathBuf};

/// The run folder to resume: the one named by `--resume`, else the latest unfinished run of this
/// sweep (and shard); None when a new run starts.
pub(super) fn pick_run_dir(
    spec: &Spec,
    opts: &Options,
    bench_hash: &str,
    toolchain: &Toolchain,
    gpus: &[GpuState],
) -> Result<Option<PathBuf>, DriverError> {
    let shard = opts.build.shard.map(|s| format!("{}/{}", s.index, s.count));
    if let Some(dir) = &opts.resume {
        let m = Manifest::load(dir).map_err(|source| DriverError::BadResume {
            dir: dir.display().to_string(),
            source,
        })?;
        if m.spec_hash != spec.hash {
            if !opts.force {
                return Err(DriverError::SpecChanged {
                    dir: dir.display().to_string(),
                    changes: store::spec_changes(&m.spec, &spec.text).join(", "),
                });
            }
            // --force with a changed spec starts a new run, as the hint says: never the new
            // spec's points in the old run.
            return Ok(None);
        }
        return resumable(dir, &m, opts, spec, bench_hash, toolchain, gpus);
    }
    let unfinished = store::runs_of(&opts.build.output, &spec.name)
        .into_iter()
        .rev()
        .find_map(|d| {
            Manifest::load(&d)
                .ok()
                // Build folders (and those of older versions, whose manifest was empty) are not runs.
                .filter(|m| {
                    m.shard == shard && m.state != store::RunState::Build && !m.spec_hash.is_empty()
                })
                .map(|m| (d, m))
        })
        .filter(|(_, m)| m.state != store::RunState::Finished);
    if let Some((dir, m)) = unfinished {
        if m.spec_hash == spec.hash {
            return resumable(&dir, &m, opts, spec, bench_hash, toolchain, gpus);
        }
        if !opts.force {
            let changes = store::spec_changes(&m.spec, &spec.text).join(", ");
            // Another spec file of the same name (`other/x.toml` beside `sweeps/x.toml`) shares
            // `output/x/`: it did not change, it is another spec.
            if let Some(theirs) = other_spec_file(&m, spec) {
                return Err(DriverError::SpecOfSameName {
                    dir: dir.display().to_string(),
                    theirs,
                    changes,
                });
            }
            return Err(DriverError::SpecChanged {
                dir: dir.display().to_string(),
                changes,
            });
        }
    }
    Ok(None)
}

/// The spec file that started the run of manifest `m`, when it is another file than `spec`'s
/// (both still there); None when it is the same file, or cannot be told.
fn other_spec_file(m: &Manifest, spec: &Spec) -> Option<String> {
    let theirs = Path::new(&m.cwd).join(&m.spec_path).canonicalize().ok()?;
    let ours = spec.path.canonicalize().ok()?;
    (theirs != ours).then(|| theirs.display().to_string())
}

/// `dir` (a run of this spec) if it can be resumed with these options: its rows keep the dialect
/// they were written in, and its point ids are of this version's scheme. `--force` starts a new run
/// instead of an old-id run.
fn resumable(
    dir: &Path,
    m: &Manifest,
    opts: &Options,
    spec: &Spec,
    bench_hash: &str,
    toolchain: &Toolchain,
    gpus: &[GpuState],
) -> Result<Option<PathBuf>, DriverError> {
    let shown = dir.display().to_string();
    // Another release of the compiler (another toolkit loaded, another `cc` first on PATH) builds
    // other programs; its headers may lie elsewhere, unchanged, so build-inputs.txt misses it.
    if !m.compiler_version.is_empty()
        && (m.compiler != toolchain.compiler || m.compiler_version != toolchain.version)
    {
        if opts.force {
            return Ok(None);
        }
        return Err(DriverError::CompilerChanged {
            dir: shown,
            compiler: toolchain.compiler.clone(),
            was: m.compiler_version.clone(),
            now: toolchain.version.clone(),
        });
    }
    // The same release from another place (a wrapper `nvcc` earlier on PATH that adds flags):
    // `--version` says the same, the programs differ. Runs from before the field are not checked.
    let now = toolchain.program().map(|p| p.display().to_string());
    if let Some(was) = m
        .compiler_path
        .as_ref()
        .filter(|&was| now.as_ref() != Some(was))
    {
        if opts.force {
            return Ok(None);
        }
        return Err(DriverError::CompilerMoved {
            dir: shown,
            compiler: toolchain.compiler.clone(),
            was: was.clone(),
            now: now.unwrap_or_else(|| "not found".into()),
        });
    }
    if let Some(e) = other_device(dir, m, spec, toolchain, gpus) {
        if opts.force {
            return Ok(None);
        }
        return Err(e);
    }
    if !m.bench_hash.is_empty() && m.bench_hash != bench_hash {
        if opts.force {
            return Ok(None);
        }
        return Err(DriverError::BenchChanged {
            dir: shown,
            bench: spec.bench.clone(),
        });
    }
    // What the builds read beside the bench (a header through `-I/elsewhere`, the toolkit's):
    // changed, the remaining points would be built from it.
    let inputs = store::read_regular(&store::RunDir::new(dir).build_inputs()).unwrap_or_default();
    if let Some(file) = crate::cache::Cache::new(&opts.build.cache).first_changed(&inputs, true) {
        if opts.force {
            return Ok(None);
        }
        return Err(DriverError::InputChanged { dir: shown, file });
    }
    if m.point_ids.first().is_some_and(|id| points::legacy_id(id)) {
        if opts.force {
            return Ok(None);
        }
        return Err(DriverError::OldIds { dir: shown });
    }
    if let Some((link, target)) = planted_link(dir) {
        if opts.force {
            return Ok(None);
        }
        return Err(DriverError::LinkInRun {
            dir: shown,
            link: link.display().to_string(),
            target,
        });
    }
    // A shard's points are those its split deals it: resumed with another split, the run took
    // another shard's points beside its own (merge then refused them as duplicates), and ended
    // `interrupted` (exit 130) with nothing left to do.
    if let (Some(shard), Some(split)) = (&m.shard, m.split) {
        if split != opts.build.split {
            if opts.force {
                return Ok(None);
            }
            return Err(DriverError::SplitDiffers {
                dir: shown,
                shard: shard.clone(),
                theirs: split.as_str(),
                asked: opts.build.split.as_str(),
            });
        }
    }
    if let Some(d) = opts.dialect.filter(|&d| d != m.dialect) {
        return Err(DriverError::DialectDiffers {
            dir: shown,
            theirs: m.dialect.name(),
            asked: d.name(),
        });
    }
    Ok(Some(dir.to_path_buf()))
}

/// Why the remaining points of the run in `dir` cannot be measured here: the GPUs chosen now
/// (`--gpus`, this node's) are of a model that measured none of its rows, or the builds now target
/// another arch than its rows' (one curve would hold rows of two GPUs). A run that measured nothing
/// on a GPU yet (no row names one) may move; so may one of several models (`--gpus all` on a mixed
/// host) resumed on any of them. Each row names its GPU, so `--gpus` and Slurm shards (a folder
/// each) are judged by what they measured, not by the GPUs the last start claimed.
fn other_device(
    dir: &Path,
    m: &Manifest,
    spec: &Spec,
    toolchain: &Toolchain,
    gpus: &[GpuState],
) -> Option<DriverError> {
    let header = store::header(spec);
    let csv = store::RunDir::new(dir).results();
    // Unreadable rows are the session's to report, when it reads them to append.
    let done = store::read_done_as_is(&csv, &header).unwrap_or_default();
    if done.is_empty() {
        return None;
    }
    let shown = dir.display().to_string();
    if let Some(col) = header
        .iter()
        .position(|c| c == store::schema::GPU_NAME_COLUMN)
    {
        let measured: std::collections::BTreeSet<&str> = done
            .values()
            .filter_map(|row| row.get(col))
            .map(String::as_str)
            .filter(|name| !name.is_empty())
            .collect();
        let stranger = gpus.iter().find(|g| !measured.contains(g.name.as_str()));
        if let Some(g) = stranger.filter(|_| !measured.is_empty()) {
            return Some(DriverError::GpuChanged {
                dir: shown,
                was: measured.into_iter().collect::<Vec<_>>().join("`, `"),
                now: format!("{} ({})", g.index, g.name),
            });
        }
    }
    match (&m.arch, &toolchain.arch) {
        (Some(was), Some(now)) if was != now => Some(DriverError::ArchChanged {
            dir: shown,
            was: was.clone(),
            now: now.clone(),
        }),
        _ => None,
    }
}

/// The first link in the run folder `dir`, at any depth (links not followed), and what it is a
/// link to: a symbolic link (its target), or a file with other names (a hard link: another name
/// of the same file, e.g. from `cp -al`). Sweep makes neither, and a resume would write through
/// one (results.csv, run.lock, a point's stdout.txt or folder) to wherever it points. The run
/// folder itself may be reached through links.
fn planted_link(dir: &Path) -> Option<(PathBuf, String)> {
    use std::os::unix::fs::MetadataExt;
    walkdir::WalkDir::new(dir)
        .min_depth(1)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .find_map(|e| {
            let target = if e.path_is_symlink() {
                std::fs::read_link(e.path())
                    .map(|t| format!("`{}`", t.display()))
                    .unwrap_or_default()
            } else {
                let names = e.metadata().ok().filter(|m| m.is_file())?.nlink();
                if names < 2 {
                    return None;
                }
                format!("a file of {names} names: a hard link")
            };
            Some((e.into_path(), target))
        })
}

/// Holds the run folder itself and `<run>/run.lock` (see [`gpu::lock_file`]) for the run. The
/// folder's lock holds when run.lock is removed by hand while the run runs: a second sweep would
/// make a new run.lock, lock that, and append to the same results.csv beside the first (review
/// 11a H1). Where a file system cannot lock a folder (flock on NFS wants a file open for
/// writing), run.lock alone holds, as before.
pub(super) fn lock_run(run_dir: &Path, holder: &str) -> Result<HeldLock, DriverError> {
    let in_use = || DriverError::RunInUse {
        dir: run_dir.display().to_string(),
    };
    let folder = match std::fs::File::open(run_dir) {
        Ok(f) => match f.try_lock() {
            Ok(()) => Some(f),
            Err(std::fs::TryLockError::WouldBlock) => return Err(in_use()),
            Err(std::fs::TryLockError::Error(_)) => None,
        },
        Err(_) => None,
    };
    let held =
        gpu::lock_file(store::RunDir::new(run_dir).lock(), holder, false).map_err(|e| match e {
            gpu::LockError::Io { path, source } => store::StoreError::Write {
                path,
                cause: source.into(),
            }
            .into(),
            gpu::LockError::Held { .. } => in_use(),
        })?;
    Ok(match folder {
        Some(f) => held.with(f),
        None => held,
    })
}
