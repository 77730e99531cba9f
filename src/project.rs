//! A project folder as `sweep list` shows it: its benches (`cuda/<bench>/`) and its sweeps
//! (`sweeps/**/*.toml`), each spec read and expanded.

use crate::points::{self, PointsError};
use crate::render::Bench;
use crate::spec::{Spec, SpecError};
use std::path::{Path, PathBuf};

/// One spec of a project: its bench and size, or why it does not load.
pub struct Sweep {
    pub path: PathBuf,
    pub read: Result<(String, points::Size), SweepError>,
}

/// Why a spec of a project does not give its points.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error(transparent)]
    Points(#[from] PointsError),
}

/// The benches of `project`: every folder of `cuda/` but `common/` that holds a program, by name.
pub fn benches(project: &Path) -> Vec<Bench> {
    walkdir::WalkDir::new(project.join("cuda"))
        .min_depth(1)
        .max_depth(1)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_dir() && e.file_name() != "common")
        .filter_map(|e| Bench::open(e.path()).ok())
        .collect()
}

/// The sweeps of `project`: every `.toml` under `sweeps/`, by path, with its bench and its number
/// of points.
pub fn sweeps(project: &Path) -> Vec<Sweep> {
    walkdir::WalkDir::new(project.join("sweeps"))
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "toml"))
        .map(|e| Sweep {
            read: read(e.path()),
            path: e.into_path(),
        })
        .collect()
}

/// A spec's bench and size, from its axes alone: listing a project expands, renders and hashes
/// no point (as `plan` does), so that it takes no longer for a sweep of 200,000 points.
fn read(path: &Path) -> Result<(String, points::Size), SweepError> {
    let spec = Spec::load(path)?;
    let size = points::size(&spec)?;
    Ok((spec.bench, size))
}
