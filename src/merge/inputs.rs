//! The runs a merge reads: which folders an argument stands for, and each run's manifest and
//! rows, checked to be alike.

use super::MergeError;
use crate::points::{Shard, Split};
use crate::store::{self, Dialect, Manifest};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A run folder given to merge, read.
pub(super) struct Input {
    pub(super) dir: PathBuf,
    pub(super) manifest: Manifest,
    pub(super) header: Option<Vec<String>>,
    pub(super) rows: Vec<Vec<String>>,
}

impl Input {
    pub(super) fn name(&self) -> String {
        self.dir.display().to_string()
    }
}

/// The run folders to merge. Each argument is a run folder, or a sweep folder (`output/<sweep>`),
/// which stands for the latest run of each of its shards.
pub fn resolve(args: &[PathBuf]) -> Result<Vec<PathBuf>, MergeError> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    // How each of `dirs` was given: itself, or `<run> (in <sweep folder>)`.
    let mut given: Vec<String> = Vec::new();
    for arg in args {
        if store::RunDir::new(arg).is_run() {
            dirs.push(arg.clone());
            given.push(arg.display().to_string());
            continue;
        }
        // The runs directly in `arg`, oldest first: the latest run of each shard wins.
        // (shard count, split, index) -> run
        let mut latest: BTreeMap<(usize, Option<Split>, usize), PathBuf> = BTreeMap::new();
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
            .map(|(n, split, _)| {
                format!("{n} shards split by {}", split.map_or("", |s| s.as_str()))
            })
            .collect();
        match shardings.len() {
            0 => {
                return Err(MergeError::NotARun {
                    dir: arg.display().to_string(),
                })
            }
            1 => {
                for run in latest.into_values() {
                    given.push(format!("{} (in {})", run.display(), arg.display()));
                    dirs.push(run);
                }
            }
            _ => {
                return Err(MergeError::MixedShardings {
                    dir: arg.display().to_string(),
                    shardings: shardings.into_iter().collect::<Vec<_>>().join(", "),
                })
            }
        }
    }
    // The same folder given twice (as itself, by another path to it, or as the latest run of a
    // sweep folder given too) would merge a run with itself: refused, naming it.
    let mut seen: BTreeMap<PathBuf, &String> = BTreeMap::new();
    for (d, how) in dirs.iter().zip(&given) {
        let real = d.canonicalize().unwrap_or_else(|_| d.clone());
        if let Some(first) = seen.insert(real.clone(), how) {
            return Err(MergeError::GivenTwice {
                dir: real.display().to_string(),
                first: first.clone(),
                second: how.clone(),
            });
        }
    }
    if dirs.is_empty() {
        return Err(MergeError::NoInput);
    }
    Ok(dirs)
}

/// A CSV read without changing it (a shard may still be writing): its header (None: no CSV
/// yet) and its rows of the header's width.
pub(super) fn read_csv(path: &Path, dialect: Dialect) -> Result<Table, MergeError> {
    Ok(match store::read::read_whole_lines(path, dialect)? {
        Some(csv) => {
            let header = csv.header.clone();
            let rows = csv.full_rows().map_err(|e| store::StoreError::Read {
                path: path.to_path_buf(),
                cause: e.into(),
            })?;
            (Some(header), rows)
        }
        None => (None, Vec::new()),
    })
}

/// A CSV read: its header (None: no CSV yet) and its rows.
pub(super) type Table = (Option<Vec<String>>, Vec<Vec<String>>);

pub(super) fn load(dir: &Path) -> Result<Input, MergeError> {
    let manifest = Manifest::load(dir)?;
    manifest.check_lists(dir)?;
    let results = store::RunDir::new(dir).results();
    let (header, rows) = read_csv(&results, manifest.dialect)?;
    // A status no sweep writes, or a row at another point's axis values, would be merged in
    // and refused by every reader of the merge.
    if let Some(header) = &header {
        store::rows::RowCheck::new(&results, &manifest, header, manifest.dialect).all(&rows)?;
    }
    Ok(Input {
        dir: dir.to_path_buf(),
        manifest,
        header,
        rows,
    })
}

/// How `other`'s programs were built otherwise than `first`'s: another compiler release, another
/// compiler program of the same release (a wrapper earlier on PATH), or another bench (edited
/// between the shards). What a run did not record (older runs) is not checked.
fn build_differs(first: &Input, other: &Input) -> Option<MergeError> {
    let (a, b) = (&first.manifest, &other.manifest);
    let one_line = |v: &str| v.lines().next().unwrap_or_default().to_string();
    let differs = |what, fix, x: &str, y: &str| {
        Some(MergeError::BuildDiffers {
            first: first.name(),
            other: other.name(),
            what,
            fix,
            values: format!("`{y}` vs `{x}`"),
        })
    };
    if !a.compiler_version.is_empty()
        && !b.compiler_version.is_empty()
        && (a.compiler != b.compiler || a.compiler_version != b.compiler_version)
    {
        let (x, y) = (
            format!("{} {}", a.compiler, one_line(&a.compiler_version)),
            format!("{} {}", b.compiler, one_line(&b.compiler_version)),
        );
        return differs("with another compiler", "compiler", &x, &y);
    }
    if let (Some(x), Some(y)) = (&a.compiler_path, &b.compiler_path) {
        if x != y {
            return differs(
                "with another compiler program",
                "compiler first on PATH",
                x,
                y,
            );
        }
    }
    if !a.bench_hash.is_empty() && !b.bench_hash.is_empty() && a.bench_hash != b.bench_hash {
        let short = |h: &str| format!("bench `{}` {:.12}", a.bench, h);
        return differs(
            "from another version of its bench",
            "bench files",
            &short(&a.bench_hash),
            &short(&b.bench_hash),
        );
    }
    if a.arch.is_some() && b.arch.is_some() && a.arch != b.arch {
        let arch = |v: &Option<String>| v.clone().unwrap_or_default();
        return differs("for another arch", "arch", &arch(&a.arch), &arch(&b.arch));
    }
    None
}

/// Checks that every input is a run of the first one's spec, header and dialect.
pub(super) fn check_alike(inputs: &[Input]) -> Result<(), MergeError> {
    let first = &inputs[0];
    for other in &inputs[1..] {
        let (a, b) = (&first.manifest.overrides, &other.manifest.overrides);
        if other.manifest.spec_hash != first.manifest.spec_hash && a != b {
            // One spec text under other overrides: "another spec" sent the user to the text.
            let shown = |o: &[String]| match o.is_empty() {
                true => "none".to_string(),
                false => o
                    .iter()
                    .map(|o| format!("`{o}`"))
                    .collect::<Vec<_>>()
                    .join(" "),
            };
            return Err(MergeError::OverridesDiffer {
                first: first.name(),
                other: other.name(),
                first_overrides: shown(a),
                other_overrides: shown(b),
            });
        }
        if other.manifest.spec_hash != first.manifest.spec_hash {
            return Err(MergeError::SpecDiffers {
                first: first.name(),
                other: other.name(),
                first_hash: first.manifest.spec_hash.clone(),
                other_hash: other.manifest.spec_hash.clone(),
            });
        }
        if let Some(e) = build_differs(first, other) {
            return Err(e);
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
                return Err(MergeError::HeaderDiffers {
                    first: first.name(),
                    other: other.name(),
                    detail: header_detail((&first.name(), a), (&other.name(), b)),
                });
            }
        }
    }
    Ok(())
}

/// Where header `b` first differs from header `a`, each named by its file or run, for a message:
/// `column 6 is `saw_med_mflops` in `B` and `saw_median_mflops` in `A``.
pub(super) fn header_detail(
    (a_name, a): (&str, &[String]),
    (b_name, b): (&str, &[String]),
) -> String {
    match a.iter().zip(b).position(|(x, y)| x != y) {
        Some(i) => format!(
            "column {} is `{}` in `{b_name}` and `{}` in `{a_name}`",
            i + 1,
            b[i],
            a[i]
        ),
        None => format!(
            "{} columns in `{b_name}`, {} in `{a_name}`",
            b.len(),
            a.len()
        ),
    }
}
