//! What a spec says about how its results are named on charts: words for axes and metrics
//! (`label`) and which metrics share a chart (`family`). Read leniently from the spec's text, so
//! that the copy of the spec in a run's manifest names its charts (an older spec without these
//! keys names nothing, and a newer key does not stop the charts).
//!
//! ```toml
//! description = "Shared-memory stores"
//! [[axis]]
//! name = "threads"
//! label = "threads per block"
//! [[metric]]
//! name = "shared_nc_grid"
//! unit = "MFlops"
//! label = "no conflict"
//! family = "Shared-memory stores, grid"
//! ```

use serde::Deserialize;

/// The chart names of a spec.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Labels {
    pub description: Option<String>,
    /// (axis name, label).
    pub axes: Vec<(String, String)>,
    /// Metrics in spec order: (name, label, family).
    pub metrics: Vec<(String, Option<String>, Option<String>)>,
}

#[derive(Deserialize)]
struct File {
    description: Option<String>,
    #[serde(default, rename = "axis")]
    axes: Vec<Named>,
    #[serde(default, rename = "metric")]
    metrics: Vec<Named>,
}

#[derive(Deserialize)]
struct Named {
    name: Option<String>,
    label: Option<String>,
    family: Option<String>,
}

/// Text worth showing: trimmed, not empty.
fn words(s: Option<String>) -> Option<String> {
    s.map(|t| t.trim().to_string()).filter(|t| !t.is_empty())
}

impl Labels {
    /// The labels of spec text `text`; none when it does not parse.
    pub fn from_text(text: &str) -> Labels {
        let Ok(file) = toml::from_str::<File>(text) else {
            return Labels::default();
        };
        Labels {
            description: words(file.description),
            axes: file
                .axes
                .into_iter()
                .filter_map(|a| Some((a.name?, words(a.label)?)))
                .collect(),
            metrics: file
                .metrics
                .into_iter()
                .filter_map(|m| Some((m.name?, words(m.label), words(m.family))))
                .collect(),
        }
    }

    /// The words for axis `name`: its label, else its name with spaces for `_`.
    pub fn axis(&self, name: &str) -> String {
        self.axes
            .iter()
            .find(|(a, _)| a == name)
            .map_or_else(|| name.replace('_', " "), |(_, l)| l.clone())
    }

    /// The label of metric `name`, if the spec gives one.
    pub fn metric(&self, name: &str) -> Option<&str> {
        self.metrics
            .iter()
            .find(|m| m.0 == name)
            .and_then(|m| m.1.as_deref())
    }

    /// The family of metric `name`, if the spec gives one.
    pub fn family(&self, name: &str) -> Option<&str> {
        self.metrics
            .iter()
            .find(|m| m.0 == name)
            .and_then(|m| m.2.as_deref())
    }

    /// The families in the order of their first metric, each with its metrics in spec order.
    pub fn families(&self) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for (name, _, family) in &self.metrics {
            let Some(f) = family else { continue };
            match out.iter_mut().find(|(k, _)| k == f) {
                Some((_, v)) => v.push(name.clone()),
                None => out.push((f.clone(), vec![name.clone()])),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_families_come_from_the_spec_text() {
        let l = Labels::from_text(
            r#"
description = "Stores"
future_key = 1
[[axis]]
name = "threads"
label = "threads per block"
[[metric]]
name = "a_grid"
label = "no conflict"
family = "Shared, grid"
[[metric]]
name = "b_grid"
label = "2-way"
family = "Shared, grid"
[[metric]]
name = "c"
label = "  "
"#,
        );
        assert_eq!(l.description.as_deref(), Some("Stores"));
        assert_eq!(l.axis("threads"), "threads per block");
        assert_eq!(l.axis("block_size"), "block size");
        assert_eq!(l.metric("a_grid"), Some("no conflict"));
        assert_eq!(l.metric("c"), None, "blank is no label");
        assert_eq!(l.family("b_grid"), Some("Shared, grid"));
        assert_eq!(
            l.families(),
            [(
                "Shared, grid".to_string(),
                vec!["a_grid".into(), "b_grid".into()]
            )]
        );
        assert_eq!(Labels::from_text("not toml ["), Labels::default());
    }
}
