//! Stage `report`: charts of each analysed series. (Placeholder API until it lands.)
use crate::analyze::Analysis;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot write chart `{path}`: {reason}")]
    Write { path: PathBuf, reason: String },
}

pub fn plot(_analysis: &Analysis, _dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    Ok(vec![])
}
