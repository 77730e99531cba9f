//! Stage `analyze`: turns a results CSV into period, phase, knee, drop and best x per series.
//! (Owned by the analysis work; placeholder API until it lands.)
use std::path::{Path, PathBuf};

#[cfg(test)]
mod accuracy;
pub mod curve;
mod fit;
mod fold;
mod staircase;
#[cfg(test)]
mod synth;


#[derive(Debug, Clone, Default)]
pub struct AnalyzeOptions {
    pub x: Option<String>,
    pub y: Vec<String>,
    pub by: Option<Vec<String>>,
}

#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    #[error("cannot read `{path}`: {reason}")]
    Read { path: PathBuf, reason: String },
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Analysis {}

impl Analysis {
    pub fn to_markdown(&self) -> String {
        String::new()
    }
    pub fn write_files(&self, _dir: &Path) -> Result<Vec<PathBuf>, AnalyzeError> {
        Ok(vec![])
    }
}

pub fn analyze_csv(path: &Path, _opts: &AnalyzeOptions) -> Result<Analysis, AnalyzeError> {
    Err(AnalyzeError::Read { path: path.to_path_buf(), reason: "analysis not implemented yet".into() })
}
