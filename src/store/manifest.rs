//! `manifest.json`: what ran, where, with what; saved whole or not at all.

use super::schema::Dialect;
use super::{StoreError, MANIFEST};
use crate::points::{Order, Split};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The version of this sweep (Cargo.toml), for the manifest of a run it starts.
pub const SWEEP_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The git commit of the source this sweep was built from, `<sha>-dirty` when its files differed
/// from it, `unknown` when it was built without git or outside the repository (build.rs).
pub const SWEEP_COMMIT: &str = env!("SWEEP_COMMIT");

/// The labels of the spec copied into the manifest of run folder `run_dir` (none without one).
pub fn labels_of_run(run_dir: &Path) -> crate::spec::Labels {
    Manifest::load(run_dir)
        .map(|m| crate::spec::Labels::from_text(&m.spec))
        .unwrap_or_default()
}

/// Where a run folder stands, as its manifest says (`"running"`, `"finished"`, ...).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunState {
    /// Points are being measured (or the process died without saying otherwise).
    #[default]
    Running,
    /// Every point has its row.
    Finished,
    /// Stopped (Ctrl-C, a write error, a signal) before every point had its row: resumable.
    Interrupted,
    /// A merge of shards of which some were not finished.
    Incomplete,
    /// A `sweep build` folder: builds only, never a run to resume.
    Build,
}

impl RunState {
    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Running => "running",
            RunState::Finished => "finished",
            RunState::Interrupted => "interrupted",
            RunState::Incomplete => "incomplete",
            RunState::Build => "build",
        }
    }
}

impl std::fmt::Display for RunState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// GPU state read at the start and the end of a run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct GpuState {
    pub index: String,
    pub name: String,
    pub uuid: String,
    pub driver: String,
    pub compute_cap: String,
    pub sm_clock_mhz: String,
    pub mem_clock_mhz: String,
    pub temperature_c: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct MetricInfo {
    pub name: String,
    pub unit: String,
    pub column: String,
    /// The spec's `better` (`higher`, `lower`, `neither`); none where the spec left it to the
    /// unit, and in runs from before the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub better: Option<String>,
    /// The spec's `model`, in the form `spec::Model` parses; none where the spec has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// `manifest.json`: what ran, where, with what.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Manifest {
    pub sweep: String,
    /// The spec's path as given to `sweep run`, relative to `cwd` when relative.
    pub spec_path: String,
    /// The working folder `sweep run` started in (absolute), so that `sweep resume` finds the
    /// spec, and resolves it the same way, from any folder.
    #[serde(default)]
    pub cwd: String,
    /// The build cache the run started with, absolute (`--cache`, `$SWEEP_CACHE` or
    /// `<output>/.cache` made absolute at the start): `sweep resume` from any folder builds into
    /// the same one. None in runs from before the field (`<output>/.cache` then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<String>,
    pub spec_hash: String,
    /// `Bench::fingerprint` of the bench folder (and `cuda/common/`) when the run started: a
    /// resume refuses to add rows from another program. Empty: a run made before sweep recorded it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub bench_hash: String,
    pub spec: String,
    pub bench: String,
    pub axes: Vec<String>,
    pub metrics: Vec<MetricInfo>,
    pub columns: Vec<String>,
    pub dialect: Dialect,
    pub points_total: usize,
    pub point_ids: Vec<String>,
    pub shard: Option<String>,
    /// `--split` (`"series"`, `"points"`); a build folder's or a merge's has none (`""`).
    #[serde(with = "word_or_empty")]
    pub split: Option<Split>,
    /// `--order` (`"sweep"`, `"shuffled"`); none (`""`) as `split`.
    #[serde(with = "word_or_empty")]
    pub order: Option<Order>,
    pub seed: u64,
    /// `--prestart` of the run: programs started ahead of the one measuring (it moves numbers on
    /// some GPUs; docs/measurements.md). A resumed run keeps it. None: a build folder, a merge, or a run
    /// made before sweep recorded it (the default was 1 then).
    #[serde(default)]
    pub prestart: Option<usize>,
    /// Milliseconds each GPU rested between two programs while sweep held the CUDA driver and a
    /// context on it (0: not held, each program loaded the driver itself). None: a run made before
    /// sweep recorded it (not held then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rest_ms: Option<u64>,
    pub jobs: usize,
    pub host: String,
    pub git_commit: String,
    /// The bench folder's tracked files differed from that commit when the run started (`git
    /// status`): the commit alone does not name what ran. None in runs from before the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_dirty: Option<bool>,
    /// The sweep that started the run: its version ([`SWEEP_VERSION`]) and the commit of its
    /// source ([`SWEEP_COMMIT`]); a resumed run keeps them. None in runs from before the fields,
    /// and in a merge of runs that differ in them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep_commit: Option<String>,
    pub command: Vec<String>,
    pub compiler: String,
    pub compiler_version: String,
    /// Where `compiler` resolved when the run (re)started, links followed ([`Toolchain::program`]
    /// of `compile`): a wrapper of the same name and release earlier on PATH builds other
    /// programs, and a resume refuses it. None in runs from before the field (not checked then).
    ///
    /// [`Toolchain::program`]: crate::compile::Toolchain::program
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiler_path: Option<String>,
    pub arch: Option<String>,
    pub gpus_start: Vec<GpuState>,
    pub gpus_end: Vec<GpuState>,
    pub started: String,
    pub finished: Option<String>,
    pub state: RunState,
    pub counts: BTreeMap<String, usize>,
    /// Times of each point's build and run, seconds since the start (for overlap checks).
    #[serde(default)]
    pub timeline: Vec<TimelineEntry>,
    #[serde(default)]
    pub resumed: Vec<String>,
    /// Command-line overrides of the spec (`-a`, `--set`, `--timing`, `--filter`), as arguments;
    /// `spec` is the spec with them applied, and `sweep resume` applies them again.
    #[serde(default)]
    pub overrides: Vec<String>,
}

/// A word of the manifest that may be empty: `""` is `None`, any other word the value it names.
mod word_or_empty {
    use serde::de::IntoDeserializer;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(super) fn serialize<S: Serializer, T: Serialize>(
        v: &Option<T>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => v.serialize(s),
            None => s.serialize_str(""),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        d: D,
    ) -> Result<Option<T>, D::Error> {
        let word = String::deserialize(d)?;
        if word.is_empty() {
            return Ok(None);
        }
        T::deserialize(word.as_str().into_deserializer()).map(Some)
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TimelineEntry {
    pub point_id: String,
    pub build_start: f64,
    pub build_end: f64,
    pub run_start: f64,
    pub run_end: f64,
    pub cached: bool,
}

impl Manifest {
    pub fn load(dir: &Path) -> Result<Manifest, StoreError> {
        if super::staging::is_staging(dir) {
            return Err(StoreError::Staging {
                dir: dir.to_path_buf(),
            });
        }
        let path = dir.join(MANIFEST);
        // One that is no file is refused, not read: a pipe would block every reader, `/dev/zero`
        // fill the memory.
        if std::fs::metadata(&path).is_ok_and(|m| !m.is_file()) {
            return Err(StoreError::ManifestNotAFile { path });
        }
        let text = std::fs::read_to_string(&path).map_err(|e| StoreError::Read {
            path: path.clone(),
            cause: e.into(),
        })?;
        serde_json::from_str(&text).map_err(|e| StoreError::Read {
            path,
            cause: e.into(),
        })
    }

    /// Refuses a run's manifest (of `dir`) whose axes or metrics are none: every spec has an
    /// axis and a metric, so a list emptied by hand made the readers say "every axis is a
    /// category ()", naming none, or "no metric columns" of a CSV full of them. A build folder's
    /// (state `build`) lists neither and is no run to read.
    pub fn check_lists(&self, dir: &Path) -> Result<(), StoreError> {
        if self.state == RunState::Build {
            return Ok(());
        }
        for (empty, what) in [
            (self.axes.is_empty(), "axis"),
            (self.metrics.is_empty(), "metric"),
        ] {
            if empty {
                return Err(StoreError::ManifestListsNone {
                    path: dir.join(MANIFEST),
                    what,
                });
            }
        }
        // A metric or axis listed twice: compare counted its values twice, export's long form
        // wrote every row twice (review 13b F7). No spec makes one.
        let mut seen = std::collections::HashSet::new();
        let names = self
            .metrics
            .iter()
            .map(|m| ("metric", m.column.as_str()))
            .chain(self.axes.iter().map(|a| ("axis", a.as_str())));
        for (what, name) in names {
            if !seen.insert(name) {
                return Err(StoreError::ManifestListsTwice {
                    path: dir.join(MANIFEST),
                    what,
                    name: crate::units::visible(name).into_owned(),
                });
            }
        }
        Ok(())
    }

    /// Written to a temporary file and renamed, so a crash never leaves half a manifest.
    pub fn save(&self, dir: &Path) -> Result<(), StoreError> {
        save_manifest(self, dir)
    }
}

/// Saves `manifest` (a [`Manifest`], or one that flattens one in) as `dir/manifest.json`: written
/// to a temporary file and renamed, so a crash never leaves half a manifest.
pub fn save_manifest(manifest: &impl Serialize, dir: &Path) -> Result<(), StoreError> {
    let path = dir.join(MANIFEST);
    let text = serde_json::to_string_pretty(manifest).map_err(|e| StoreError::Write {
        path: path.clone(),
        cause: e.into(),
    })?;
    super::write_atomic(&path, text.as_bytes()).map_err(super::write_err(&path))
}

#[cfg(test)]
mod state_tests {
    use super::RunState;

    #[test]
    fn a_run_state_is_written_as_the_word_manifests_always_had() {
        for s in [
            RunState::Running,
            RunState::Finished,
            RunState::Interrupted,
            RunState::Incomplete,
            RunState::Build,
        ] {
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{}\"", s.as_str()));
            assert_eq!(serde_json::from_str::<RunState>(&json).unwrap(), s);
        }
        assert!(serde_json::from_str::<RunState>("\"paused\"").is_err());
    }
}

#[cfg(test)]
mod word_tests {
    use super::Manifest;
    use crate::points::{Order, Split};

    /// A manifest an earlier sweep wrote (an H100 run committed in tests/fixtures).
    const OLD: &str = include_str!("../../tests/fixtures/h100/aos_soa/manifest.json");

    #[test]
    fn an_old_manifest_reads_its_split_and_order_and_writes_the_same_words() {
        let m: Manifest = serde_json::from_str(OLD).unwrap();
        assert_eq!(
            (m.split, m.order),
            (Some(Split::Series), Some(Order::Sweep))
        );
        let back = serde_json::to_value(&m).unwrap();
        assert_eq!(
            (&back["split"], &back["order"]),
            (&"series".into(), &"sweep".into())
        );
    }

    #[test]
    fn every_split_and_order_word_and_the_empty_one_read_back() {
        let mut v: serde_json::Value = serde_json::from_str(OLD).unwrap();
        for (split, order, want) in [
            (
                "points",
                "shuffled",
                (Some(Split::Points), Some(Order::Shuffled)),
            ),
            ("series", "sweep", (Some(Split::Series), Some(Order::Sweep))),
            // A build folder's manifest (and so a merge of one's) has neither.
            ("", "", (None, None)),
        ] {
            v["split"] = split.into();
            v["order"] = order.into();
            let m: Manifest = serde_json::from_value(v.clone()).unwrap();
            assert_eq!((m.split, m.order), want);
            let back = serde_json::to_value(&m).unwrap();
            assert_eq!(
                (&back["split"], &back["order"]),
                (&split.into(), &order.into())
            );
        }
        v["split"] = "diagonal".into();
        assert!(serde_json::from_value::<Manifest>(v).is_err());
    }

    /// Manifests of runs made before `sweep_version` and `sweep_commit` (every fixture) still
    /// load, without them, and are written back without them.
    #[test]
    fn every_fixture_manifest_loads_without_the_sweep_keys() {
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut n = 0;
        for e in walkdir::WalkDir::new(fixtures)
            .into_iter()
            .filter_map(Result::ok)
        {
            if e.file_name() != "manifest.json" {
                continue;
            }
            let dir = e.path().parent().unwrap();
            let m = Manifest::load(dir).unwrap_or_else(|err| panic!("{err}"));
            let raw: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(e.path()).unwrap()).unwrap();
            let back = serde_json::to_value(&m).unwrap();
            for key in ["sweep_version", "sweep_commit"] {
                // Absent in the file: absent in memory and written back without it; present (runs
                // made since): kept as it was.
                assert_eq!(back.get(key), raw.get(key), "{}: {key}", dir.display());
            }
            if raw.get("sweep_version").is_none() {
                assert_eq!((&m.sweep_version, &m.sweep_commit), (&None, &None));
                n += 1;
            }
        }
        // halfwarp_counters was re-run since (2026-11-27) and has them.
        assert!(n >= 14, "{n} fixture manifests");
    }

    #[test]
    fn a_default_manifest_writes_empty_words_as_before() {
        let back = serde_json::to_value(Manifest::default()).unwrap();
        assert_eq!((&back["split"], &back["order"]), (&"".into(), &"".into()));
    }
}
