//! What a merge gives back: its manifest, and the one-line summary and missing-points error.

use crate::store::Manifest;
use crate::words::plural;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// How many points a one-line message names before it says "and N more".
const NAMED: usize = 5;

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
    pub state: crate::store::RunState,
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
    pub(super) spec_path: String,
    pub(super) shards: Option<(usize, Option<crate::points::Split>)>,
    /// Each input shard (`1/4`) -> its run's state.
    pub(super) states: BTreeMap<String, String>,
}

impl Merged {
    pub fn summary(&self) -> String {
        let counts: Vec<String> = self
            .counts
            .iter()
            .map(|(s, n)| format!("{n} {s}"))
            .collect();
        format!(
            "merged {}: {} of {} ({}) into {}",
            plural(self.runs, "run"),
            self.rows,
            plural(self.total, "point"),
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
                let split = match split {
                    Some(crate::points::Split::Series) => String::new(),
                    other => format!(" --split {}", other.map_or("", |s| s.as_str())),
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
            "{} of {} missing: {named}; the other {} {} merged into `{}` (hint: {hint})",
            self.missing.len(),
            plural(self.total, "point"),
            self.rows,
            if self.rows == 1 { "is" } else { "are" },
            self.csv.display()
        ))
    }
}

/// `` `a1b2c3` (threads=5), `d4e5f6` (threads=6) and 3 more ``
pub(super) fn name_points<'a>(
    points: impl Iterator<Item = (&'a String, &'a String)>,
    count: usize,
) -> String {
    let mut list: Vec<String> = points
        .take(NAMED)
        .map(|(id, label)| format!("`{id}` ({label})"))
        .collect();
    if count > NAMED {
        list.push(format!("and {} more", count - NAMED));
    }
    list.join(", ")
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
