//! Stage `points`: expands a spec's axes into the sweep's points (product, zip groups, filter),
//! gives each a stable id, and splits them into shards, series and orders.
//!
//! `sweep plan` and `sweep run` both call [`expand`]: what `plan` prints is what `run` does.

use crate::schema::Dialect;
use crate::spec::{Spec, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Position in sweep order (0-based), before any shard or shuffle.
    pub index: usize,
    /// Stable id: a hash of the bench and the axis values.
    pub id: String,
    /// Axis values in spec order.
    pub values: Vec<(String, Value)>,
}

impl Point {
    pub fn get(&self, axis: &str) -> Option<&Value> {
        self.values.iter().find(|(n, _)| n == axis).map(|(_, v)| v)
    }

    /// `threads=32 variant=naive`, on one line: a line break or other control character in a
    /// value is written as its escape (`\n`), so progress lines and errors stay one line each.
    pub fn label(&self) -> String {
        self.values
            .iter()
            .map(|(n, v)| {
                let v: String = v
                    .to_string()
                    .chars()
                    .map(|c| match c.is_control() {
                        true => c.escape_default().to_string(),
                        false => c.to_string(),
                    })
                    .collect();
                format!("{n}={v}")
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PointsError {
    #[error("{path}: zip group {group} joins axes of different lengths ({lengths}) (hint: zipped axes need as many values each)")]
    ZipLengths {
        path: String,
        group: String,
        lengths: String,
    },
    /// A filter that does not parse, or that fails at a point: `what` went wrong in our words
    /// (never evalexpr's own text), after where (`at threads=1 names ...`; a parse error has no
    /// point: `does not parse: ...`), and a hint.
    #[error("{path}: filter `{filter}` {what} (hint: {hint})")]
    Filter {
        path: String,
        filter: String,
        what: String,
        hint: String,
    },
    #[error("{path}: filter `{filter}` drops every one of the {} (hint: check the comparison against the axis ranges)", crate::words::plural(*total, "point"))]
    FilterDropsAll {
        path: String,
        filter: String,
        total: usize,
    },
    #[error("{path}: point `{label}` comes twice, at index {first} and {second} (hint: list each value of an axis once; in a zip group, each combination once)")]
    Duplicate {
        path: String,
        label: String,
        first: usize,
        second: usize,
    },
    /// Two points whose values differ only in type (`1`, `1.0`, `"1"`): results.csv writes them
    /// alike, or as one number (`1` and `"1e0"` on an axis of numbers), so no reader can tell
    /// their rows apart.
    #[error("{path}: points {first} and {second} are {what} in results.csv{dialect}: their values differ only in type or in how a number is written (hint: `1`, `1.0`, `\"1\"` and `\"1e0\"` are read as one number{}; list the value once, in one type)", if dialect.is_empty() { "" } else { ", and with a decimal comma `1.5` and `\"1,5\"`" })]
    WrittenAlike {
        /// Where only the semicolon dialect (a decimal comma) writes them alike: which.
        dialect: &'static str,
        path: String,
        /// `both \`threads=1\``, or the two labels where they differ.
        what: String,
        first: usize,
        second: usize,
    },
    #[error("{path}: the sweep has {count} points (hint: at most {max}; narrow an axis)")]
    TooMany {
        path: String,
        count: usize,
        max: usize,
    },
}

/// The most points a sweep may have (before its filter). Each point is a build and a run, a few
/// seconds each: 200,000 is already weeks of GPU time, and planning 4.2 M points took 46 s and 7 GB.
pub const MAX_POINTS: usize = 200_000;

/// A point's id: `p` and 12 hex digits of a hash of the bench and the axis values. The letter
/// first keeps a spreadsheet from reading an id as a number (`096962288715` lost its zero and
/// `137798133e26` became 1.4E+34 in LibreOffice), so ids always match `points/<id>/`.
pub fn point_id(bench: &str, values: &[(String, Value)]) -> String {
    let mut h = Sha256::new();
    h.update(bench.as_bytes());
    for (n, v) in values {
        h.update(b"\0");
        h.update(n.as_bytes());
        h.update(b"=");
        // The type matters: "1" and 1 are different points.
        h.update(match v {
            Value::Int(_) => b"i",
            Value::Float(_) => b"f",
            Value::Str(_) => b"s",
        });
        h.update(v.to_string().as_bytes());
    }
    format!("{ID_PREFIX}{}", crate::spec::hex(&h.finalize()[..6]))
}

/// An axis value as results.csv writes it in `dialect`: a float in its fewest digits (with a
/// decimal comma in the semicolon dialect), an integer or text as it is.
pub fn written(value: &Value, dialect: Dialect) -> String {
    match value {
        Value::Float(x) => dialect.number(*x),
        v => v.to_string(),
    }
}

/// Whether the axis cells of a row, as results.csv wrote them in `dialect` (`(axis, cell)` in
/// spec order), are the values of the point `id` of `bench`: a CSV cell keeps no type, so each
/// cell is tried as the types that write it (an integer, a float, text), the kinds that matched
/// the row before first (`kinds`, one per axis, kept between rows). `None`: too many axes to try
/// every type of (more than [`MAX_TRIED_AXES`] numeric cells), not checked.
pub fn values_make_id(
    bench: &str,
    cells: &[(&str, &str)],
    dialect: Dialect,
    id: &str,
    kinds: &mut Vec<u8>,
) -> Option<bool> {
    kinds.resize(cells.len(), 0);
    let typed: Vec<Vec<(u8, Value)>> = cells
        .iter()
        .zip(kinds.iter())
        .map(|((_, cell), &kind)| {
            let mut out = Vec::with_capacity(3);
            if let Ok(i) = cell.parse::<i64>() {
                out.push((0, Value::Int(i)));
            }
            if let Some(x) = dialect.parse_number(cell) {
                out.push((1, Value::Float(x)));
            }
            out.push((2, Value::Str(cell.to_string())));
            // The kind that matched last first.
            let last = out.iter().position(|(k, _)| *k == kind);
            if let Some(i) = last {
                out.swap(0, i);
            }
            out
        })
        .collect();
    let tries: usize = typed.iter().map(Vec::len).product();
    if typed.iter().filter(|t| t.len() > 1).count() > MAX_TRIED_AXES {
        return None;
    }
    let mut digits = vec![0usize; typed.len()];
    let mut values: Vec<(String, Value)> = Vec::with_capacity(cells.len());
    for _ in 0..tries {
        values.clear();
        values.extend(
            cells
                .iter()
                .zip(&typed)
                .zip(&digits)
                .map(|(((name, _), t), &d)| (name.to_string(), t[d].1.clone())),
        );
        if point_id(bench, &values) == id {
            for ((k, t), &d) in kinds.iter_mut().zip(&typed).zip(&digits) {
                *k = t[d].0;
            }
            return Some(true);
        }
        for d in (0..digits.len()).rev() {
            digits[d] += 1;
            if digits[d] < typed[d].len() {
                break;
            }
            digits[d] = 0;
        }
    }
    Some(false)
}

/// The most axes whose cells [`values_make_id`] tries as several types (3^11 ids at most, tried
/// only where the types that matched the row before do not: a row edited by hand, or an axis of
/// mixed types).
pub const MAX_TRIED_AXES: usize = 11;

/// The first character of every point id since ids stopped being bare hex digits.
pub const ID_PREFIX: char = 'p';

/// Whether `id` is a point id of the scheme before [`ID_PREFIX`] (12 bare hex digits).
pub fn legacy_id(id: &str) -> bool {
    id.len() == 12 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// How large a sweep is, from its axes and its filter alone (no point's id hashed nor its label
/// written): for `sweep list`, which reads every spec.
#[derive(Clone, Debug, PartialEq)]
pub struct Size {
    /// The points before the filter: the product of the dimensions' sizes.
    pub total: usize,
    /// Each dimension's axes (a zip group's together) and its number of values.
    pub dims: Vec<(Vec<String>, usize)>,
    /// The points the filter keeps, where the spec has one.
    pub kept: Option<usize>,
}

/// The size of the sweep `spec` ([`Size`]); the errors of [`expand`] that its axes alone show
/// (zip groups of unequal lengths, too many points).
pub fn size(spec: &Spec) -> Result<Size, PointsError> {
    let (dims, total) = dimensions(spec)?;
    let kept = match spec.filter {
        Some(_) => {
            let mut n = 0;
            walk(spec, &dims, total, |_| n += 1)?;
            if n == 0 {
                return Err(PointsError::FilterDropsAll {
                    path: spec.locate("filter"),
                    filter: spec.filter.clone().unwrap_or_default(),
                    total,
                });
            }
            Some(n)
        }
        None => None,
    };
    // A value written twice in one dimension makes a point twice: the sweep is refused as `plan`
    // refuses it (only then are its points expanded, to name them).
    let twice = dims.iter().any(|d| {
        let mut seen = std::collections::HashSet::new();
        (0..spec.axes[d[0]].values.len()).any(|k| {
            let written: Vec<String> = d
                .iter()
                .map(|&j| spec.axes[j].values[k].to_string())
                .collect();
            !seen.insert(written)
        })
    });
    if twice {
        expand(spec)?;
    }
    Ok(Size {
        total,
        dims: dims
            .iter()
            .map(|d| {
                let names = d.iter().map(|&j| spec.axes[j].name.clone()).collect();
                (names, spec.axes[d[0]].values.len())
            })
            .collect(),
        kept,
    })
}

/// The dimensions of the sweep (a zip group is one; every other axis is its own), as indices of
/// its axes, and the number of points they make, checked against [`MAX_POINTS`].
fn dimensions(spec: &Spec) -> Result<(Vec<Vec<usize>>, usize), PointsError> {
    let path = spec.path.display().to_string();
    // Dimensions: a zip group is one dimension; every other axis is its own.
    let mut dims: Vec<Vec<usize>> = Vec::new();
    for (i, axis) in spec.axes.iter().enumerate() {
        if let Some(group) = spec.zip.iter().find(|g| g.contains(&axis.name)) {
            let members: Vec<usize> = spec
                .axes
                .iter()
                .enumerate()
                .filter(|(_, a)| group.contains(&a.name))
                .map(|(j, _)| j)
                .collect();
            if members[0] != i {
                continue;
            }
            let lengths: Vec<usize> = members.iter().map(|&j| spec.axes[j].values.len()).collect();
            if lengths.iter().any(|&l| l != lengths[0]) {
                return Err(PointsError::ZipLengths {
                    path: spec.locate("zip"),
                    group: format!("[{}]", group.join(", ")),
                    lengths: lengths
                        .iter()
                        .map(|l| l.to_string())
                        .collect::<Vec<_>>()
                        .join(" vs "),
                });
            }
            dims.push(members);
        } else {
            dims.push(vec![i]);
        }
    }
    let sizes: Vec<usize> = dims.iter().map(|d| spec.axes[d[0]].values.len()).collect();
    let total = sizes
        .iter()
        .try_fold(1usize, |acc, &s| acc.checked_mul(s))
        .filter(|&t| t <= MAX_POINTS)
        .ok_or_else(|| PointsError::TooMany {
            path: path.clone(),
            count: sizes.iter().map(|&s| s as f64).product::<f64>() as usize,
            max: MAX_POINTS,
        })?;
    Ok((dims, total))
}

/// Every point of the spec, in sweep order (the last axis varies fastest), filtered.
pub fn expand(spec: &Spec) -> Result<Vec<Point>, PointsError> {
    let (dims, total) = dimensions(spec)?;
    let mut points = Vec::new();
    walk(spec, &dims, total, |values| {
        points.push(Point {
            index: points.len(),
            id: point_id(&spec.bench, &values),
            values,
        })
    })?;
    if points.is_empty() {
        return Err(PointsError::FilterDropsAll {
            path: spec.locate("filter"),
            filter: spec.filter.clone().unwrap_or_default(),
            total,
        });
    }
    no_point_twice(spec, &points)?;
    Ok(points)
}

/// Calls `kept` with the axis values of each point of the sweep that its filter keeps, in sweep
/// order: the points without their ids and labels.
fn walk(
    spec: &Spec,
    dims: &[Vec<usize>],
    total: usize,
    mut kept: impl FnMut(Vec<(String, Value)>),
) -> Result<(), PointsError> {
    let sizes: Vec<usize> = dims.iter().map(|d| spec.axes[d[0]].values.len()).collect();
    let filter = match &spec.filter {
        Some(f) => Some(evalexpr::build_operator_tree(f).map_err(|e| {
            let (reason, hint) = filter_words(&e, &names(spec));
            PointsError::Filter {
                path: spec.locate("filter"),
                filter: f.clone(),
                what: reason,
                hint,
            }
        })?),
        None => None,
    };

    let mut digits = vec![0usize; dims.len()];
    for _ in 0..total {
        let mut values: Vec<(String, Value)> = Vec::with_capacity(spec.axes.len());
        for (axis_index, axis) in spec.axes.iter().enumerate() {
            let dim = dims
                .iter()
                .position(|d| d.contains(&axis_index))
                .unwrap_or(0);
            values.push((axis.name.clone(), axis.values[digits[dim]].clone()));
        }
        let keep = match &filter {
            Some(tree) => eval_filter(tree, spec, &values).map_err(|e| {
                let (reason, hint) = filter_words(&e, &names(spec));
                let at: Vec<String> = values.iter().map(|(n, v)| format!("{n}={v}")).collect();
                PointsError::Filter {
                    path: spec.locate("filter"),
                    filter: spec.filter.clone().unwrap_or_default(),
                    what: format!("at {} {reason}", at.join(" ")),
                    hint,
                }
            })?,
            None => true,
        };
        if keep {
            kept(values);
        }
        // Odometer: the last dimension turns fastest.
        for d in (0..digits.len()).rev() {
            digits[d] += 1;
            if digits[d] < sizes[d] {
                break;
            }
            digits[d] = 0;
        }
    }
    Ok(())
}

/// Refuses a point that comes twice.
fn no_point_twice(spec: &Spec, points: &[Point]) -> Result<(), PointsError> {
    // One row per point: resume and merge key rows by the point id, compare, the analysis and
    // the charts by the axis values as results.csv writes them. A repeated value would make one
    // point stand for two (the second never runs, or counts as missing forever); values that
    // differ only in type (`1`, `1.0`, `"1"`) have ids of their own but one row's text, which
    // compare then refuses as two rows of one point.
    // The dialect is the run's choice (`--csv-dialect`), not the spec's: refused in either, as
    // the semicolon dialect writes `1.5` and `"1,5"` alike (review 14b F1: their rows were one
    // point's in every reader, averaged).
    for dialect in [Dialect::Comma, Dialect::Semicolon] {
        no_point_written_twice(spec, points, dialect)?;
    }
    Ok(())
}

fn no_point_written_twice(
    spec: &Spec,
    points: &[Point],
    dialect: Dialect,
) -> Result<(), PointsError> {
    // As results.csv writes it: a float by its shortest form in either dialect (`1e20`, as the
    // text `"1e20"` is written beside it).
    let cell = |v: &Value| written(v, dialect);
    // An axis whose every value is written as a number is read as numbers (its x, or a group's
    // number): `1` and `"1.0"`, `1` and `"1e0"` are one x there, and the run's analysis failed
    // after every point was measured (review 17 C3). Keyed by the number (-0 as 0).
    let mut numeric: std::collections::HashMap<&str, bool> = std::collections::HashMap::new();
    for p in points {
        for (n, v) in &p.values {
            let number = dialect.parse_number(&cell(v)).is_some();
            *numeric.entry(n.as_str()).or_insert(true) &= number;
        }
    }
    let mut seen: std::collections::HashMap<Vec<String>, usize> = std::collections::HashMap::new();
    for p in points {
        let written: Vec<String> = p
            .values
            .iter()
            .map(|(n, v)| {
                let text = cell(v);
                // An integer as itself (past 2^53 two integers are one float, and two points).
                let exact = text.parse::<i64>().ok().or_else(|| {
                    dialect
                        .parse_number(&text)
                        .filter(|x| x.fract() == 0.0 && x.abs() < 2f64.powi(53))
                        .map(|x| x as i64)
                });
                match (exact, dialect.parse_number(&text)) {
                    _ if !numeric[n.as_str()] => text,
                    (Some(i), _) => format!("i{i}"),
                    (None, Some(x)) => format!("f{:x}", (x + 0.0).to_bits()),
                    (None, None) => text,
                }
            })
            .collect();
        if let Some(&first) = seen.get(&written) {
            let path = spec.locate("[[axis]]");
            let (label, second) = (p.label(), p.index);
            return Err(match points[first].id == p.id {
                true => PointsError::Duplicate {
                    // No key to point at: the path, with the overrides when they made the axes.
                    path,
                    label,
                    first,
                    second,
                },
                false => PointsError::WrittenAlike {
                    dialect: match dialect {
                        Dialect::Comma => "",
                        Dialect::Semicolon => " with --csv-dialect semicolon",
                    },
                    path,
                    what: match points[first].label() {
                        l if l == label => format!("both `{label}`"),
                        l => format!("`{l}` and `{label}`, one point"),
                    },
                    first,
                    second,
                },
            });
        }
        seen.insert(written, p.index);
    }
    Ok(())
}

/// The names a filter may use: the axes, then the vars.
fn names(spec: &Spec) -> Vec<String> {
    spec.axes
        .iter()
        .map(|a| a.name.clone())
        .chain(spec.vars.keys().cloned())
        .collect()
}

/// What went wrong with a filter, in a few words, and a hint: never evalexpr's own text, which
/// names its types (`Expected a Value::Boolean, but got Int(3).`).
fn filter_words(e: &evalexpr::EvalexprError, names: &[String]) -> (String, String) {
    use evalexpr::EvalexprError as E;
    let example = "`threads % 32 == 0 && threads >= 64`";
    let known = format!("the axes and vars are {}", names.join(", "));
    match e {
        E::VariableIdentifierNotFound(name) => {
            // `thread` for `threads`, `block` for `blocks_per_sm`.
            let near = names
                .iter()
                .find(|n| n.starts_with(name.as_str()) || name.starts_with(n.as_str()));
            (
                format!("names `{name}`, which is no axis or var"),
                match near {
                    Some(n) => format!("did you mean `{n}`? {known}"),
                    None => known,
                },
            )
        }
        E::FunctionIdentifierNotFound(name) => (
            format!("calls `{name}`, which is no function"),
            format!("a filter compares axes and vars, e.g. {example}"),
        ),
        E::ExpectedBoolean { actual } => (
            format!("gives {actual}, not true or false"),
            format!("compare with ==, !=, <, >=, e.g. {example}"),
        ),
        E::UnmatchedLBrace | E::UnmatchedRBrace => (
            "does not parse: its parentheses do not pair up".to_string(),
            format!("close every `(`, e.g. {example}"),
        ),
        E::UnmatchedDoubleQuote => (
            "does not parse: a string has no closing `\"`".to_string(),
            "quote a string value whole, e.g. `variant == \"shared\"`".to_string(),
        ),
        E::ExpectedNumber { actual }
        | E::ExpectedInt { actual }
        | E::ExpectedFloat { actual }
        | E::ExpectedNumberOrString { actual } => (
            format!("does arithmetic or compares order on {actual}, which is no number"),
            format!("compare a string axis with == or !=; {known}"),
        ),
        E::WrongTypeCombination { .. } | E::TypeError { .. } => (
            "combines a number with a string".to_string(),
            format!(
                "compare a string axis with a quoted string, e.g. `variant == \"shared\"`; {known}"
            ),
        ),
        E::DivisionError { .. } | E::ModulationError { .. } => (
            "divides by zero".to_string(),
            format!("divide by a number that is never 0, e.g. {example}"),
        ),
        _ => (
            "does not parse or cannot be evaluated".to_string(),
            format!("write it as a comparison of axes and vars, e.g. {example}; {known}"),
        ),
    }
}

fn eval_filter(
    tree: &evalexpr::Node,
    spec: &Spec,
    values: &[(String, Value)],
) -> Result<bool, evalexpr::EvalexprError> {
    use evalexpr::{ContextWithMutableVariables, HashMapContext, Value as E};
    let mut ctx = HashMapContext::new();
    let as_e = |v: &Value| match v {
        Value::Int(i) => E::Int(*i),
        Value::Float(f) => E::Float(*f),
        Value::Str(s) => E::String(s.clone()),
    };
    for (n, v) in spec.vars.iter().chain(values.iter().map(|(n, v)| (n, v))) {
        ctx.set_value(n.clone(), as_e(v))?;
    }
    tree.eval_boolean_with_context(&ctx)
}

/// `--shard i/N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

/// A `--shard` that is not `i/N` with 0 <= i < N.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    #[error("shard `{shard}` is not of the form i/N (hint: --shard 0/4)")]
    Form { shard: String },
    #[error("shard `{shard}`: `{part}` is not a number")]
    NotANumber { shard: String, part: String },
    #[error("shard `{shard}`: need 0 <= i < N")]
    OutOfRange { shard: String },
}

impl std::str::FromStr for Shard {
    type Err = ShardError;
    fn from_str(s: &str) -> Result<Self, ShardError> {
        let shard = || s.to_string();
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| ShardError::Form { shard: shard() })?;
        let number = |part: &str| {
            part.trim()
                .parse::<usize>()
                .map_err(|_| ShardError::NotANumber {
                    shard: shard(),
                    part: part.to_string(),
                })
        };
        let (index, count) = (number(i)?, number(n)?);
        if count == 0 || index >= count {
            return Err(ShardError::OutOfRange { shard: shard() });
        }
        Ok(Shard { index, count })
    }
}

/// How points are spread over shards and GPUs (`--split`; in the manifest as `"series"` or
/// `"points"`).
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Split {
    /// Every point of a series to the same place, so no curve is stitched from two devices.
    Series,
    /// Points dealt round-robin, whatever their series.
    Points,
}

impl Split {
    /// The word `--split` takes and the manifest holds.
    pub fn as_str(self) -> &'static str {
        match self {
            Split::Series => "series",
            Split::Points => "points",
        }
    }
}

/// The order a run measures its points in (`--order`; in the manifest as `"sweep"` or
/// `"shuffled"`).
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Default,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// Sweep order (the last axis turns fastest).
    #[default]
    Sweep,
    /// A seeded shuffle (`--seed`), so slow drift of the GPU cannot pose as structure.
    Shuffled,
}

/// The axis a series runs along: `[analyze] x`, else the axis with the most values.
pub fn x_axis(spec: &Spec) -> String {
    if let Some(x) = spec.analyze.as_ref().and_then(|a| a.x.clone()) {
        return x;
    }
    let mut best = &spec.axes[0];
    for a in &spec.axes {
        if a.values.len() > best.values.len() {
            best = a;
        }
    }
    best.name.clone()
}

/// The series of a point: its values on every axis but `x`.
pub fn series_key(point: &Point, x: &str) -> String {
    point
        .values
        .iter()
        .filter(|(n, _)| n != x)
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Deals points into `count` groups; group `g` holds the points for which this returns `g`.
/// `Points` deals by position in `points`, not by sweep index, so a shard's points still spread.
pub fn assign(points: &[Point], count: usize, split: Split, x: &str) -> Vec<usize> {
    match split {
        Split::Points => (0..points.len()).map(|i| i % count).collect(),
        Split::Series => {
            let mut order: BTreeMap<String, usize> = BTreeMap::new();
            let mut next = 0;
            points
                .iter()
                .map(|p| {
                    let key = series_key(p, x);
                    let n = *order.entry(key).or_insert_with(|| {
                        next += 1;
                        next - 1
                    });
                    n % count
                })
                .collect()
        }
    }
}

/// The points of one shard (deterministic: same spec, same shard, same points).
pub fn shard(points: Vec<Point>, shard: Shard, split: Split, x: &str) -> Vec<Point> {
    let owner = assign(&points, shard.count, split, x);
    points
        .into_iter()
        .zip(owner)
        .filter(|(_, o)| *o == shard.index)
        .map(|(p, _)| p)
        .collect()
}

/// A seeded shuffle (splitmix64 + Fisher-Yates), so drift of the GPU cannot pose as structure.
pub fn shuffle<T>(items: &mut [T], seed: u64) {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    for i in (1..items.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        items.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn spec(extra: &str) -> Spec {
        let text = format!("bench = \"b\"\n{extra}\n[[metric]]\npattern = \"mflops\"\n");
        Spec::parse(Path::new("t.toml"), &text).unwrap()
    }

    fn labels(points: &[Point]) -> Vec<String> {
        points.iter().map(|p| p.label()).collect()
    }

    #[test]
    fn a_plan_of_millions_of_points_is_refused_at_once() {
        // 21 axes of 2 values and one of 2: 4.2 M points (planning them took 46 s and 7 GB).
        let axes: String = (0..22)
            .map(|i| format!("[[axis]]\nname=\"a{i}\"\nrange=[1,2]\n"))
            .collect();
        let t0 = std::time::Instant::now();
        let err = expand(&spec(&axes)).unwrap_err().to_string();
        assert!(t0.elapsed().as_secs() < 2);
        assert_eq!(
            err,
            "t.toml: the sweep has 4194304 points (hint: at most 200000; narrow an axis)"
        );
    }

    #[test]
    fn product_turns_the_last_axis_fastest() {
        let s =
            spec("[[axis]]\nname=\"a\"\nrange=[1,2]\n[[axis]]\nname=\"b\"\nvalues=[\"x\",\"y\"]");
        assert_eq!(
            labels(&expand(&s).unwrap()),
            ["a=1 b=x", "a=1 b=y", "a=2 b=x", "a=2 b=y"]
        );
    }

    #[test]
    fn zip_groups_advance_together() {
        let s = spec(
            "zip=[[\"n\",\"tile\"]]\n[[axis]]\nname=\"n\"\nvalues=[64,128]\n[[axis]]\nname=\"v\"\nvalues=[\"p\",\"q\"]\n[[axis]]\nname=\"tile\"\nvalues=[8,16]",
        );
        assert_eq!(
            labels(&expand(&s).unwrap()),
            [
                "n=64 v=p tile=8",
                "n=64 v=q tile=8",
                "n=128 v=p tile=16",
                "n=128 v=q tile=16"
            ]
        );
        let bad = spec("zip=[[\"n\",\"tile\"]]\n[[axis]]\nname=\"n\"\nvalues=[64,128]\n[[axis]]\nname=\"tile\"\nvalues=[8]");
        let err = expand(&bad).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "t.toml:2: zip group [n, tile] joins axes of different lengths (2 vs 1)"
            ),
            "{err}"
        );
    }

    #[test]
    fn a_label_is_one_line_whatever_the_values() {
        let s = spec("[[axis]]\nname=\"v\"\nvalues=[\"a\\nb\", \"c\\td \\\"e\\\"\"]");
        assert_eq!(labels(&expand(&s).unwrap()), ["v=a\\nb", "v=c\\td \"e\""]);
    }

    #[test]
    fn a_point_that_comes_twice_is_refused() {
        let twice = spec("[[axis]]\nname=\"threads\"\nvalues=[1,1,2]");
        assert_eq!(
            expand(&twice).unwrap_err().to_string(),
            "t.toml: point `threads=1` comes twice, at index 0 and 1 (hint: list each value of an axis once; in a zip group, each combination once)"
        );
        let zipped = spec("zip=[[\"n\",\"tile\"]]\n[[axis]]\nname=\"n\"\nvalues=[64,64,128]\n[[axis]]\nname=\"tile\"\nvalues=[8,16,8]");
        assert_eq!(
            expand(&zipped).unwrap().len(),
            3,
            "a value may repeat inside a zip group"
        );
        let same_combination = spec("zip=[[\"n\",\"tile\"]]\n[[axis]]\nname=\"n\"\nvalues=[64,64]\n[[axis]]\nname=\"tile\"\nvalues=[8,8]");
        assert!(expand(&same_combination)
            .unwrap_err()
            .to_string()
            .contains("point `n=64 tile=8` comes twice"));
        // 1, 1.0 and "1" have ids of their own, but results.csv writes each as `1`: compare
        // would refuse the run as two rows of one point.
        for values in ["1,\"1\"", "1,1.0", "2,\"1\",1.0"] {
            let typed = spec(&format!("[[axis]]\nname=\"threads\"\nvalues=[{values}]"));
            assert_eq!(
                expand(&typed).unwrap_err().to_string(),
                format!(
                    "t.toml: points {} and {} are both `threads=1` in results.csv: their values differ only in type or in how a number is written (hint: `1`, `1.0`, `\"1\"` and `\"1e0\"` are read as one number; list the value once, in one type)",
                    values.matches(',').count() - 1,
                    values.matches(',').count()
                ),
                "{values}"
            );
        }
        // On an axis of text too, as results.csv writes a float: by its shortest form.
        let big = spec("[[axis]]\nname=\"x\"\nvalues=[1e20,\"1e20\",\"a\"]");
        assert!(expand(&big)
            .unwrap_err()
            .to_string()
            .contains("points 0 and 1 are `x="));
        let apart = spec("[[axis]]\nname=\"x\"\nvalues=[1e20,\"100000000000000000000\",\"a\"]");
        assert_eq!(
            expand(&apart).unwrap().len(),
            3,
            "written `1e20` and `1000…`"
        );
        let distinct = spec("[[axis]]\nname=\"x\"\nvalues=[1,1.5,\"one\"]");
        assert_eq!(
            expand(&distinct).unwrap().len(),
            3,
            "written apart: three points"
        );
    }

    #[test]
    fn filter_drops_points_and_sees_vars() {
        let s = spec(
            "filter = \"threads * stride <= limit && v != \\\"skip\\\"\"\n[vars]\nlimit = 8\n[[axis]]\nname=\"threads\"\npow2=[1,8]\n[[axis]]\nname=\"stride\"\nvalues=[1,2]\n[[axis]]\nname=\"v\"\nvalues=[\"go\",\"skip\"]",
        );
        let pts = expand(&s).unwrap();
        assert_eq!(pts.len(), 7);
        assert!(pts
            .iter()
            .all(|p| p.get("v") == Some(&Value::Str("go".into()))));
        assert_eq!(
            pts.iter().map(|p| p.index).collect::<Vec<_>>(),
            (0..7).collect::<Vec<_>>()
        );
    }

    #[test]
    fn filter_errors_are_named() {
        let all = spec("filter = \"threads > 100\"\n[[axis]]\nname=\"threads\"\nrange=[1,4]");
        let err = expand(&all).unwrap_err().to_string();
        assert_eq!(err, "t.toml:2: filter `threads > 100` drops every one of the 4 points (hint: check the comparison against the axis ranges)");
        let unknown = spec("filter = \"thread > 1\"\n[[axis]]\nname=\"threads\"\nrange=[1,4]");
        let err = expand(&unknown).unwrap_err().to_string();
        assert_eq!(
            err,
            "t.toml:2: filter `thread > 1` at threads=1 names `thread`, which is no axis or var \
             (hint: did you mean `threads`? the axes and vars are threads)"
        );
        // In one line, in our words: never evalexpr's own text (`Value::Boolean`, `Int(3)`).
        for (filter, says) in [
            ("threads + 2", "filter `threads + 2` at threads=1 gives 3, not true or false (hint: compare with"),
            ("(threads > 1", "filter `(threads > 1` does not parse: its parentheses do not pair up (hint: close every `(`"),
            ("threads > \\\"a\\\"", "at threads=1 does arithmetic or compares order on \"a\", which is no number (hint:"),
        ] {
            let bad = spec(&format!(
                "filter = \"{filter}\"\n[[axis]]\nname=\"threads\"\nrange=[1,4]"
            ));
            let err = expand(&bad).unwrap_err().to_string();
            assert!(err.contains(says), "{err}");
            assert!(!err.contains('\n') && !err.contains("Value::") && !err.contains("Int("), "{err}");
        }
        // A filter further down is named at its own line; one set on the command line, by it.
        let later =
            spec("name = \"t\"\nfilter = \"thread > 1\"\n[[axis]]\nname=\"threads\"\nrange=[1,4]");
        let err = expand(&later).unwrap_err().to_string();
        assert!(err.starts_with("t.toml:3: filter"), "{err}");
        let mut overridden = later;
        overridden.overrides = vec!["--filter".into(), "thread > 1".into()];
        let err = expand(&overridden).unwrap_err().to_string();
        assert!(
            err.starts_with("t.toml (with --filter thread > 1): filter"),
            "{err}"
        );
    }

    /// Every point's cells, as results.csv writes them in either dialect, make its id back, and
    /// a cell of another value does not: ints, floats (`-0`, a decimal comma, an exponent), text
    /// that reads as a number, text.
    #[test]
    fn a_rows_cells_make_its_points_id_back() {
        let s = spec(
            "[[axis]]\nname=\"a\"\nvalues=[1,\"2\",-0.0,1.5,1e-12,\"x y\",\"2,5\",-7]\n\
             [[axis]]\nname=\"b\"\nvalues=[\"32\",64]",
        );
        let pts = expand(&s).unwrap();
        for dialect in [Dialect::Comma, Dialect::Semicolon] {
            let mut kinds = Vec::new();
            for p in &pts {
                let cells: Vec<(String, String)> = p
                    .values
                    .iter()
                    .map(|(n, v)| (n.clone(), written(v, dialect)))
                    .collect();
                let cells: Vec<(&str, &str)> = cells
                    .iter()
                    .map(|(n, c)| (n.as_str(), c.as_str()))
                    .collect();
                let made = values_make_id(&s.bench, &cells, dialect, &p.id, &mut kinds);
                assert_eq!(made, Some(true), "{dialect:?} {}", p.label());
                let mut moved = cells.clone();
                moved[0].1 = "60";
                let made = values_make_id(&s.bench, &moved, dialect, &p.id, &mut kinds);
                assert_eq!(made, Some(false), "{dialect:?} {}", p.label());
            }
        }
    }

    #[test]
    fn ids_are_stable_and_distinct() {
        let s = spec("[[axis]]\nname=\"a\"\nvalues=[1,\"2\",3]");
        let pts = expand(&s).unwrap();
        assert_ne!(
            point_id("b", &[("a".into(), Value::Int(1))]),
            point_id("b", &[("a".into(), Value::Str("1".into()))]),
            "an int and a string differ"
        );
        assert_eq!(pts[0].id, point_id("b", &[("a".into(), Value::Int(1))]));
        assert_eq!(pts[0].id.len(), 13);
        for p in &pts {
            // A spreadsheet must never read an id as a number (`1e5`, `0123`).
            assert!(
                p.id.starts_with(ID_PREFIX) && p.id.parse::<f64>().is_err(),
                "{}",
                p.id
            );
            assert!(!legacy_id(&p.id));
        }
        assert!(legacy_id("096962288715") && legacy_id("137798133e26"));
    }

    #[test]
    fn shards_partition_and_keep_series_whole() {
        let s = spec("[[axis]]\nname=\"threads\"\nrange=[1,10]\n[[axis]]\nname=\"v\"\nvalues=[\"a\",\"b\",\"c\"]");
        let pts = expand(&s).unwrap();
        let x = x_axis(&s);
        assert_eq!(x, "threads");
        for split in [Split::Series, Split::Points] {
            let mut seen: Vec<usize> = Vec::new();
            for i in 0..2 {
                let part = shard(pts.clone(), Shard { index: i, count: 2 }, split, &x);
                if split == Split::Series {
                    let series: std::collections::BTreeSet<String> =
                        part.iter().map(|p| series_key(p, &x)).collect();
                    for key in &series {
                        let whole = pts.iter().filter(|p| &series_key(p, &x) == key).count();
                        assert_eq!(
                            part.iter().filter(|p| &series_key(p, &x) == key).count(),
                            whole
                        );
                    }
                }
                seen.extend(part.iter().map(|p| p.index));
            }
            seen.sort();
            assert_eq!(
                seen,
                (0..30).collect::<Vec<_>>(),
                "{split:?}: every point exactly once"
            );
        }
        // Dealing a shard's points to two GPUs uses both, whatever the indices left in the shard.
        let half = shard(pts.clone(), Shard { index: 0, count: 2 }, Split::Points, &x);
        let owner = assign(&half, 2, Split::Points, &x);
        assert_eq!(owner.iter().filter(|&&o| o == 1).count(), half.len() / 2);
        assert!("2/2".parse::<Shard>().is_err());
        assert_eq!("1/4".parse::<Shard>(), Ok(Shard { index: 1, count: 4 }));
    }

    #[test]
    fn shuffle_is_seeded() {
        let mut a: Vec<u32> = (0..50).collect();
        let mut b = a.clone();
        shuffle(&mut a, 7);
        shuffle(&mut b, 7);
        assert_eq!(a, b);
        assert_ne!(a, (0..50).collect::<Vec<_>>());
        let mut c = a.clone();
        c.sort();
        assert_eq!(c, (0..50).collect::<Vec<_>>());
    }
}
