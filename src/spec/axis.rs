//! An axis of a spec: `[[axis]]` as written, checked and expanded into its values.

use super::Value;
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AxisFile {
    pub(super) name: String,
    pub(super) range: Option<Vec<i64>>,
    pub(super) step: Option<i64>,
    pub(super) pow2: Option<Vec<i64>>,
    pub(super) values: Option<Vec<Value>>,
    #[serde(default)]
    pub(super) compiler_flags: bool,
}

#[derive(Clone, Debug)]
pub struct Axis {
    pub name: String,
    pub values: Vec<Value>,
    /// The value is split on spaces and added to the build command.
    pub compiler_flags: bool,
}

pub(super) fn valid_ident(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

pub(super) fn expand_axis(a: &AxisFile) -> Result<Axis, String> {
    let name = &a.name;
    if !valid_ident(name) {
        return Err(format!(
            "axis name `{name}` is not an identifier (hint: letters, digits and `_`, not starting with a digit)"
        ));
    }
    let given = [a.range.is_some(), a.pow2.is_some(), a.values.is_some()];
    if given.iter().filter(|g| **g).count() != 1 {
        return Err(format!(
            "axis `{name}` needs exactly one of `range`, `pow2`, `values`"
        ));
    }
    if a.step.is_some() && a.range.is_none() {
        return Err(format!("axis `{name}`: `step` only goes with `range`"));
    }
    let bounds =
        |key: &str, v: &Option<Vec<i64>>| -> Result<Option<[i64; 2]>, String> {
            match v.as_deref() {
                None => Ok(None),
                Some(&[from, to]) => Ok(Some([from, to])),
                Some(other) => {
                    Err(format!(
                "axis `{name}`: `{key}` has {} items (hint: two, `{key} = [first, last]`{})",
                other.len(),
                if key == "range" { ", and `step = n` for a step" } else { "" }
            ))
                }
            }
        };
    let (range, pow2) = (bounds("range", &a.range)?, bounds("pow2", &a.pow2)?);
    let values = if let Some([from, to]) = range {
        let step = a.step.unwrap_or(1);
        if step <= 0 {
            return Err(format!(
                "axis `{name}` has step {step} (hint: step must be > 0)"
            ));
        }
        if from > to {
            return Err(format!(
                "axis `{name}` is empty: {from}..{to} step {step} (hint: start must be <= end)"
            ));
        }
        let count = (to as i128 - from as i128) / step as i128 + 1;
        if count > 1_000_000 {
            return Err(format!(
                "axis `{name}` has {count} values (hint: at most 1000000)"
            ));
        }
        (0..count as i64)
            .map(|i| Value::Int(from + i * step))
            .collect()
    } else if let Some([from, to]) = pow2 {
        let pow = |v: i64| v > 0 && (v & (v - 1)) == 0;
        if !pow(from) || !pow(to) {
            return Err(format!(
                "axis `{name}`: pow2 bounds {from} and {to} must be powers of two"
            ));
        }
        if from > to {
            return Err(format!(
                "axis `{name}` is empty: pow2 {from}..{to} (hint: start must be <= end)"
            ));
        }
        let mut v = Vec::new();
        let mut x = Some(from);
        while let Some(p) = x.filter(|&p| p <= to) {
            v.push(Value::Int(p));
            x = p.checked_mul(2);
        }
        v
    } else {
        let values = a.values.clone().unwrap_or_default();
        if values.is_empty() {
            return Err(format!(
                "axis `{name}` is empty: values = [] (hint: list at least one value)"
            ));
        }
        values
    };
    if a.compiler_flags && values.iter().any(|v| !matches!(v, Value::Str(_))) {
        return Err(format!(
            "axis `{name}` has compiler_flags = true, so its values must be strings"
        ));
    }
    Ok(Axis {
        name: name.clone(),
        values,
        compiler_flags: a.compiler_flags,
    })
}
