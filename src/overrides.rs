//! Command-line overrides of a spec, in the style of nvbench's `-a`: `-a threads=17:80`,
//! `-a variant=naive,shared`, `--set n=4096`, `--timing target_rel_ci=0.02`, `--filter "..."`.
//!
//! They edit the spec's TOML before it is read, so an overridden spec is checked, expanded and
//! run exactly like a file: `plan` lists what `run` does. The spec a run records (manifest `spec`)
//! is the edited one, headed by a comment naming the overrides, so its hash changes with them and
//! resume refuses a changed override as it refuses a changed spec; `sweep resume` applies the
//! overrides the manifest lists.

use crate::spec::{Spec, SpecError};
use std::path::{Path, PathBuf};

/// The overrides, as given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overrides {
    /// `-a NAME=LO:HI[:STEP]` or `-a NAME=V1,V2,...`
    pub axes: Vec<(String, String)>,
    /// `--set KEY=VALUE` of a `[vars]` constant
    pub vars: Vec<(String, String)>,
    /// `--timing KEY=VALUE` of the `[timing]` table
    pub timing: Vec<(String, String)>,
    pub filter: Option<String>,
}

/// The keys `[timing]` takes (the spec refuses others).
const TIMING_KEYS: [&str; 9] = [
    "warmup",
    "min_samples",
    "min_time_ms",
    "max_time_ms",
    "target_rel_ci",
    "flush_l2",
    "rated_sm_mhz",
    "batch",
    "placements",
];

impl Overrides {
    pub fn is_empty(&self) -> bool {
        self.axes.is_empty()
            && self.vars.is_empty()
            && self.timing.is_empty()
            && self.filter.is_none()
    }

    /// The overrides as command-line arguments, in a fixed order (what the manifest records).
    pub fn to_args(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (k, v) in &self.axes {
            out.push(format!("-a {k}={v}"));
        }
        for (k, v) in &self.vars {
            out.push(format!("--set {k}={v}"));
        }
        for (k, v) in &self.timing {
            out.push(format!("--timing {k}={v}"));
        }
        if let Some(f) = &self.filter {
            out.push(format!("--filter {f}"));
        }
        out
    }

    /// Reads back what [`Overrides::to_args`] wrote.
    pub fn from_args(args: &[String]) -> Option<Overrides> {
        let mut o = Overrides::default();
        for a in args {
            let (flag, rest) = a.split_once(' ')?;
            if flag == "--filter" {
                o.filter = Some(rest.to_string());
                continue;
            }
            let (k, v) = rest.split_once('=')?;
            let pair = (k.to_string(), v.to_string());
            match flag {
                "-a" => o.axes.push(pair),
                "--set" => o.vars.push(pair),
                "--timing" => o.timing.push(pair),
                _ => return None,
            }
        }
        Some(o)
    }
}

/// An argument of `-a`, `--set` or `--timing` that is not `KEY=VALUE`.
#[derive(Debug, thiserror::Error)]
#[error("`{arg}` is not KEY=VALUE (hint: e.g. threads=17:80)")]
pub struct NotKeyValue {
    pub arg: String,
}

/// `KEY=VALUE` as clap hands it over; the error names the argument.
pub fn key_value(s: &str) -> Result<(String, String), NotKeyValue> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() && !v.trim().is_empty() => {
            Ok((k.trim().to_string(), v.trim().to_string()))
        }
        _ => Err(NotKeyValue { arg: s.to_string() }),
    }
}

/// Why a spec with overrides does not load: the spec's own error, or an override that does not
/// apply to it.
#[derive(Debug, thiserror::Error)]
pub enum OverridesError {
    #[error(transparent)]
    Spec(Box<SpecError>),
    #[error("{path}: {source}")]
    Bad {
        path: PathBuf,
        #[source]
        source: Box<BadOverride>,
    },
}

impl From<SpecError> for OverridesError {
    fn from(e: SpecError) -> Self {
        OverridesError::Spec(Box::new(e))
    }
}

/// Why the overrides cannot be applied to a spec ([`OverridesError::Bad`] adds the spec's path):
/// each names the argument, and a hint.
#[derive(Debug, thiserror::Error)]
pub enum BadOverride {
    /// The spec's own text is no TOML (the file alone would say where).
    #[error("{}", source.message())]
    Toml {
        #[source]
        source: toml::de::Error,
    },
    #[error(
        "`-a {name}={value}`: the spec has no axis `{name}` (hint: its axes are {})",
        list(axes)
    )]
    NoAxis {
        name: String,
        value: String,
        axes: Vec<String>,
    },
    #[error("`-a {name}={value}`: a bracket that is not closed (hint: {AXIS_FORMS}; quote the argument in the shell)")]
    Bracket { name: String, value: String },
    #[error("`-a {name}={value}`: a range takes integers LO:HI or LO:HI:STEP (hint: a list is V1,V2,...)")]
    NotARange { name: String, value: String },
    #[error(
        "`-a {name}={value}`: an empty value in the list (hint: V1,V2,... with no empty item)"
    )]
    EmptyItem { name: String, value: String },
    #[error(
        "`-a {name}={value}`: axis `{name}` takes numbers, and `{item}` {what} (hint: {hint})"
    )]
    NotANumber {
        name: String,
        value: String,
        item: String,
        what: &'static str,
        hint: String,
    },
    #[error(
        "`--set {key}={value}`: [vars] `{key}` is a number, and `{value}` {what} (hint: {hint})"
    )]
    VarNotNumber {
        key: String,
        value: String,
        what: &'static str,
        hint: String,
    },
    #[error(
        "`--set {key}={value}`: the spec's [vars] has no `{key}` (hint: it has {})",
        list(known)
    )]
    NoVar {
        key: String,
        value: String,
        known: Vec<String>,
    },
    #[error("`--timing {key}={value}`: [timing] has no key `{key}` (hint: {})", TIMING_KEYS.join(", "))]
    NoTimingKey { key: String, value: String },
    /// The edited table cannot be written back as TOML.
    #[error("{source}")]
    Write {
        #[source]
        source: toml::ser::Error,
    },
    /// The edited spec is refused: the spec's error, less its `path:line: ` (the line is the
    /// edited text's, which the user never saw).
    #[error("with {args}: {}", unplaced(path, source))]
    Edited {
        args: String,
        path: PathBuf,
        #[source]
        source: Box<SpecError>,
    },
}

/// `e`'s message without its leading `path[:line]: `.
fn unplaced(path: &Path, e: &SpecError) -> String {
    let message = e.to_string();
    let rest = message
        .strip_prefix(&path.display().to_string())
        .unwrap_or(&message);
    let rest = rest.trim_start_matches(|c: char| c == ':' || c.is_ascii_digit());
    rest.strip_prefix(' ').unwrap_or(rest).to_string()
}

/// A TOML scalar from the command line: an integer, a finite float, true/false, else a string
/// (`nan`, `inf` and `1e999` are no numbers: they would render as no C constant; nor is an
/// integer past 64 bits, which as a float would render as another integer).
fn scalar(s: &str) -> toml::Value {
    if let Ok(i) = s.parse::<i64>() {
        toml::Value::Integer(i)
    } else if let Some(f) = s
        .parse::<f64>()
        .ok()
        .filter(|f| f.is_finite() && !integer_digits(s))
    {
        toml::Value::Float(f)
    } else if s == "true" || s == "false" {
        toml::Value::Boolean(s == "true")
    } else {
        toml::Value::String(s.to_string())
    }
}

/// Why `s`, given where a number belongs, is none: what it is, and a hint where one fits better
/// than the place's own (`0x10` is read by no number parser here: say its decimal).
fn not_a_number(s: &str) -> (&'static str, Option<String>) {
    let past_64_bits = || {
        (
            "is an integer past 64 bits, which sweep does not read",
            Some(format!("integers from {} to {}", i64::MIN, i64::MAX)),
        )
    };
    if integer_digits(s) {
        return past_64_bits();
    }
    if s.parse::<f64>().is_ok() {
        return ("is not a finite number", None);
    }
    let (sign, digits) = match s.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, s.strip_prefix('+').unwrap_or(s)),
    };
    let radix = [
        ("0x", 16),
        ("0X", 16),
        ("0o", 8),
        ("0O", 8),
        ("0b", 2),
        ("0B", 2),
    ]
    .into_iter()
    .find_map(|(p, r)| digits.strip_prefix(p).map(|d| (d, r)));
    if let Some(n) = radix.and_then(|(d, r)| i128::from_str_radix(d, r).ok()) {
        if i64::try_from(sign * n).is_err() {
            return past_64_bits();
        }
        return (
            "is not a decimal number, which is all sweep reads",
            Some(format!("write it as {}", sign * n)),
        );
    }
    ("is not a number", None)
}

/// Whether `s` is written as an integer: digits after an optional sign.
fn integer_digits(s: &str) -> bool {
    let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

fn is_number(v: &toml::Value) -> bool {
    matches!(v, toml::Value::Integer(_) | toml::Value::Float(_))
}

/// Whether the spec's `[[axis]]` table takes numbers: a `range`, `pow2`, or `values` of numbers.
fn numeric_axis(axis: &toml::Table) -> bool {
    axis.contains_key("range")
        || axis.contains_key("pow2")
        || axis
            .get("values")
            .and_then(|v| v.as_array())
            .is_some_and(|v| !v.is_empty() && v.iter().all(is_number))
}

/// The forms `-a` takes, for hints.
const AXIS_FORMS: &str = "a list V1,V2,... or [V1,V2,...], a range LO:HI[:STEP] or [LO:HI:STEP]";

/// The values of `-a name=value`: a range (`[lo, hi]` or `[lo, hi, step]`, inclusive) or a list,
/// in nvbench's forms too (`[32,64]`, `[1:64:8]`). A `numeric` axis takes numbers only.
#[allow(clippy::type_complexity)]
fn axis_values(
    name: &str,
    value: &str,
    numeric: bool,
) -> Result<(Option<Vec<i64>>, Vec<toml::Value>), BadOverride> {
    let (n, v) = (name.to_string(), value.to_string());
    let inner = match (value.strip_prefix('['), value.ends_with(']')) {
        (Some(rest), true) => rest.strip_suffix(']').unwrap_or(rest).trim(),
        (None, false) => value,
        _ => return Err(BadOverride::Bracket { name: n, value: v }),
    };
    let parts: Vec<&str> = inner.split(':').collect();
    let range_ints =
        || -> Option<Vec<i64>> { parts.iter().map(|p| p.trim().parse().ok()).collect() };
    let not_a_range = || BadOverride::NotARange {
        name: n.clone(),
        value: v.clone(),
    };
    if parts.len() == 2 || parts.len() == 3 {
        return range_ints()
            .map(|r| (Some(r), Vec::new()))
            .ok_or_else(not_a_range);
    }
    if parts.len() > 3 && range_ints().is_some() {
        return Err(not_a_range());
    }
    let items: Vec<&str> = inner.split(',').map(str::trim).collect();
    if items.iter().any(|v| v.is_empty()) {
        return Err(BadOverride::EmptyItem { name: n, value: v });
    }
    let values: Vec<toml::Value> = items.iter().map(|v| scalar(v)).collect();
    if numeric {
        if let Some((item, _)) = items.iter().zip(&values).find(|(_, v)| !is_number(v)) {
            let (what, hint) = not_a_number(item);
            return Err(BadOverride::NotANumber {
                name: n,
                value: v,
                item: item.to_string(),
                what,
                hint: hint.unwrap_or_else(|| AXIS_FORMS.to_string()),
            });
        }
    }
    Ok((None, values))
}

/// The `[[axis]]` keys that say which values an axis takes.
const AXIS_VALUE_KEYS: [&str; 4] = ["range", "step", "pow2", "values"];

/// Reads the spec at `path` with the overrides applied.
pub fn load(path: &Path, o: &Overrides) -> Result<Spec, OverridesError> {
    let spec = Spec::load(path)?;
    if o.is_empty() {
        return Ok(spec);
    }
    apply(path, &spec.text, o)
}

/// The spec `text` (from `path`) with the overrides applied; the file must be valid on its own.
pub fn apply(path: &Path, text: &str, o: &Overrides) -> Result<Spec, OverridesError> {
    let whole = |source: BadOverride| OverridesError::Bad {
        path: path.to_path_buf(),
        source: Box::new(source),
    };
    let mut table: toml::Table = text
        .parse()
        .map_err(|source| whole(BadOverride::Toml { source }))?;
    let axes: Vec<String> = table
        .get("axis")
        .and_then(|a| a.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|t| t.get("name")?.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    for (name, value) in &o.axes {
        let Some(axis) = table
            .get_mut("axis")
            .and_then(|a| a.as_array_mut())
            .and_then(|a| {
                a.iter_mut()
                    .find(|t| t.get("name").and_then(|n| n.as_str()) == Some(name))
            })
            .and_then(|t| t.as_table_mut())
        else {
            return Err(whole(BadOverride::NoAxis {
                name: name.clone(),
                value: value.clone(),
                axes,
            }));
        };
        let numeric = numeric_axis(axis);
        for k in AXIS_VALUE_KEYS {
            axis.remove(k);
        }
        let (range, list) = axis_values(name, value, numeric).map_err(whole)?;
        if let Some(ints) = range {
            axis.insert(
                "range".into(),
                toml::Value::Array(vec![ints[0].into(), ints[1].into()]),
            );
            if let Some(step) = ints.get(2) {
                axis.insert("step".into(), (*step).into());
            }
        } else {
            axis.insert("values".into(), toml::Value::Array(list));
        }
    }
    for (key, value) in &o.vars {
        let vars = table.get_mut("vars").and_then(|v| v.as_table_mut());
        match vars {
            Some(vars) if vars.contains_key(key) => {
                let v = scalar(value);
                let was_number = matches!(
                    vars.get(key),
                    Some(toml::Value::Integer(_) | toml::Value::Float(_))
                );
                if was_number && !is_number(&v) {
                    let (what, hint) = not_a_number(value);
                    return Err(whole(BadOverride::VarNotNumber {
                        key: key.clone(),
                        value: value.clone(),
                        what,
                        hint: hint.unwrap_or_else(|| {
                            "an integer or a float such as 4096 or 1.5e3".into()
                        }),
                    }));
                }
                vars.insert(key.clone(), v);
            }
            vars => {
                let known: Vec<String> = vars
                    .map(|v| v.keys().cloned().collect())
                    .unwrap_or_default();
                return Err(whole(BadOverride::NoVar {
                    key: key.clone(),
                    value: value.clone(),
                    known,
                }));
            }
        }
    }
    for (key, value) in &o.timing {
        if !TIMING_KEYS.contains(&key.as_str()) {
            return Err(whole(BadOverride::NoTimingKey {
                key: key.clone(),
                value: value.clone(),
            }));
        }
        let timing = table
            .entry("timing")
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if let Some(t) = timing.as_table_mut() {
            t.insert(key.clone(), scalar(value));
        }
    }
    if let Some(f) = &o.filter {
        table.insert("filter".into(), toml::Value::String(f.clone()));
    }
    let edited = format!(
        "# {} with the command-line overrides: {}\n{}",
        path.display(),
        o.to_args().join(" "),
        toml::to_string(&table).map_err(|source| whole(BadOverride::Write { source }))?
    );
    let mut spec = Spec::parse(path, &edited).map_err(|e| {
        whole(BadOverride::Edited {
            args: o.to_args().join(" "),
            path: path.to_path_buf(),
            source: Box::new(e),
        })
    })?;
    spec.overrides = o.to_args();
    Ok(spec)
}

/// `names` in backticks, or `none`.
fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = "# a comment\nbench = \"b\"\ncompiler = \"cc\"\n[vars]\nn = 1024\n[timing]\ntarget_rel_ci = 0.01\n[[axis]]\nname = \"threads\"\nrange = [1, 512]\n[[axis]]\nname = \"variant\"\nvalues = [\"naive\", \"shared\", \"padded\"]\n[[metric]]\npattern = \"mflops\"\n";

    fn with(o: Overrides) -> Result<Spec, OverridesError> {
        apply(Path::new("sweeps/t.toml"), SPEC, &o)
    }

    #[test]
    fn overrides_edit_axes_vars_timing_and_filter() {
        let s = with(Overrides {
            axes: vec![
                ("threads".into(), "17:80:7".into()),
                ("variant".into(), "naive,shared".into()),
            ],
            vars: vec![("n".into(), "4096".into())],
            timing: vec![("target_rel_ci".into(), "0.02".into())],
            filter: Some("threads > 20".into()),
        })
        .unwrap();
        let threads: Vec<String> = s.axes[0].values.iter().map(|v| v.to_string()).collect();
        assert_eq!(
            threads,
            ["17", "24", "31", "38", "45", "52", "59", "66", "73", "80"]
        );
        assert_eq!(s.axes[1].values.len(), 2);
        assert_eq!(s.vars["n"].to_string(), "4096");
        assert_eq!(s.target_rel_ci(), 0.02);
        assert_eq!(s.filter.as_deref(), Some("threads > 20"));
        assert!(s.text.starts_with("# sweeps/t.toml with the command-line overrides: -a threads=17:80:7 -a variant=naive,shared --set n=4096 --timing target_rel_ci=0.02 --filter threads > 20\n"));
        let plain = Spec::parse(Path::new("sweeps/t.toml"), SPEC).unwrap();
        assert_ne!(s.hash, plain.hash, "an override is a change of the spec");
        assert_eq!(
            Overrides::from_args(&s.overrides).unwrap().to_args(),
            s.overrides
        );
    }

    #[test]
    fn nvbench_list_and_range_forms_in_brackets() {
        let values = |v: &str, axis: &str| -> Vec<String> {
            let s = with(Overrides {
                axes: vec![(axis.into(), v.into())],
                ..Overrides::default()
            })
            .unwrap();
            let a = s.axes.iter().find(|a| a.name == axis).unwrap();
            a.values.iter().map(|v| v.to_string()).collect()
        };
        assert_eq!(values("[32,64]", "threads"), ["32", "64"]);
        assert_eq!(values("[ 32, 64 ]", "threads"), ["32", "64"]);
        assert_eq!(
            values("[1:64:8]", "threads"),
            ["1", "9", "17", "25", "33", "41", "49", "57"]
        );
        assert_eq!(values("[4:6]", "threads"), ["4", "5", "6"]);
        assert_eq!(values("[128]", "threads"), ["128"]);
        assert_eq!(values("[naive,padded]", "variant"), ["naive", "padded"]);
        assert_eq!(
            values("nan,inf", "variant"),
            ["nan", "inf"],
            "a text axis takes them as text"
        );
        let s = with(Overrides {
            axes: vec![("threads".into(), "[32,64]".into())],
            ..Overrides::default()
        })
        .unwrap();
        assert_eq!(
            s.axes[0].values,
            [crate::spec::Value::Int(32), crate::spec::Value::Int(64)]
        );
    }

    #[test]
    fn bad_overrides_name_the_argument_and_hint() {
        let cases = [
            (
                Overrides {
                    axes: vec![("thread".into(), "1:2".into())],
                    ..Overrides::default()
                },
                "sweeps/t.toml: `-a thread=1:2`: the spec has no axis `thread` (hint: its axes are `threads`, `variant`)",
            ),
            (
                Overrides {
                    axes: vec![("threads".into(), "a:b".into())],
                    ..Overrides::default()
                },
                "sweeps/t.toml: `-a threads=a:b`: a range takes integers LO:HI or LO:HI:STEP (hint: a list is V1,V2,...)",
            ),
            (
                Overrides {
                    axes: vec![("threads".into(), "1:3:1:4".into())],
                    ..Overrides::default()
                },
                "sweeps/t.toml: `-a threads=1:3:1:4`: a range takes integers LO:HI or LO:HI:STEP (hint: a list is V1,V2,...)",
            ),
            (
                Overrides {
                    axes: vec![("threads".into(), "1,,2".into())],
                    ..Overrides::default()
                },
                "sweeps/t.toml: `-a threads=1,,2`: an empty value in the list (hint: V1,V2,... with no empty item)",
            ),
            (
                Overrides {
                    vars: vec![("m".into(), "1".into())],
                    ..Overrides::default()
                },
                "sweeps/t.toml: `--set m=1`: the spec's [vars] has no `m` (hint: it has `n`)",
            ),
            (
                Overrides {
                    timing: vec![("target".into(), "1".into())],
                    ..Overrides::default()
                },
                "sweeps/t.toml: `--timing target=1`: [timing] has no key `target` (hint: warmup, min_samples,",
            ),
            (
                Overrides {
                    axes: vec![("threads".into(), "80:17".into())],
                    ..Overrides::default()
                },
                "sweeps/t.toml: with -a threads=80:17: axis `threads` is empty: 80..17 step 1 (hint: start must be <= end)",
            ),
        ];
        for (o, want) in cases {
            let e = with(o).unwrap_err().to_string();
            assert!(e.starts_with(want), "{e}");
        }
        let axis = |v: &str| Overrides {
            axes: vec![("threads".into(), v.into())],
            ..Overrides::default()
        };
        let refusals = [
            (axis("[32,64"), "sweeps/t.toml: `-a threads=[32,64`: a bracket that is not closed (hint: a list V1,V2,... or [V1,V2,...], a range LO:HI[:STEP] or [LO:HI:STEP]; quote the argument in the shell)"),
            (axis("32,64]"), "sweeps/t.toml: `-a threads=32,64]`: a bracket that is not closed"),
            (axis("[]"), "sweeps/t.toml: `-a threads=[]`: an empty value in the list"),
            (axis("[1:a:8]"), "sweeps/t.toml: `-a threads=[1:a:8]`: a range takes integers LO:HI or LO:HI:STEP"),
            (axis("32,abc"), "sweeps/t.toml: `-a threads=32,abc`: axis `threads` takes numbers, and `abc` is not a number (hint: a list V1,V2,... or [V1,V2,...], a range LO:HI[:STEP] or [LO:HI:STEP])"),
            (axis("[32,nan]"), "sweeps/t.toml: `-a threads=[32,nan]`: axis `threads` takes numbers, and `nan` is not a finite number"),
            (axis("1e999"), "sweeps/t.toml: `-a threads=1e999`: axis `threads` takes numbers, and `1e999` is not a finite number"),
            (axis("32,9223372036854775808"), "sweeps/t.toml: `-a threads=32,9223372036854775808`: axis `threads` takes numbers, and `9223372036854775808` is an integer past 64 bits, which sweep does not read (hint: integers from -9223372036854775808 to 9223372036854775807)"),
            (
                Overrides { vars: vec![("n".into(), "-99999999999999999999".into())], ..Overrides::default() },
                "sweeps/t.toml: `--set n=-99999999999999999999`: [vars] `n` is a number, and `-99999999999999999999` is an integer past 64 bits, which sweep does not read (hint: integers from -9223372036854775808 to 9223372036854775807)",
            ),
            (axis("0x10000000000000000"), "sweeps/t.toml: `-a threads=0x10000000000000000`: axis `threads` takes numbers, and `0x10000000000000000` is an integer past 64 bits"),
            (axis("32,0x40"), "sweeps/t.toml: `-a threads=32,0x40`: axis `threads` takes numbers, and `0x40` is not a decimal number, which is all sweep reads (hint: write it as 64)"),
            (
                Overrides { vars: vec![("n".into(), "0x10".into())], ..Overrides::default() },
                "sweeps/t.toml: `--set n=0x10`: [vars] `n` is a number, and `0x10` is not a decimal number, which is all sweep reads (hint: write it as 16)",
            ),
            (
                Overrides { vars: vec![("n".into(), "-0b101".into())], ..Overrides::default() },
                "sweeps/t.toml: `--set n=-0b101`: [vars] `n` is a number, and `-0b101` is not a decimal number, which is all sweep reads (hint: write it as -5)",
            ),
            (
                Overrides { vars: vec![("n".into(), "lots".into())], ..Overrides::default() },
                "sweeps/t.toml: `--set n=lots`: [vars] `n` is a number, and `lots` is not a number (hint: an integer or a float such as 4096 or 1.5e3)",
            ),
            (
                Overrides { vars: vec![("n".into(), "1e999".into())], ..Overrides::default() },
                "sweeps/t.toml: `--set n=1e999`: [vars] `n` is a number, and `1e999` is not a finite number (hint: an integer or a float such as 4096 or 1.5e3)",
            ),
            (
                Overrides { vars: vec![("n".into(), "inf".into())], ..Overrides::default() },
                "sweeps/t.toml: `--set n=inf`: [vars] `n` is a number, and `inf` is not a finite number",
            ),
        ];
        for (o, want) in refusals {
            let e = with(o).unwrap_err().to_string();
            assert!(e.starts_with(want), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
        assert_eq!(
            key_value("threads").unwrap_err().to_string(),
            "`threads` is not KEY=VALUE (hint: e.g. threads=17:80)"
        );
    }
}
