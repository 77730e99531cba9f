//! Reading the two runs: the results CSV of a run folder, each point's row by its axis values,
//! and where each metric's value and uncertainty columns lie.

use super::{CompareError, Side};
use crate::analyze::load::{carries_values, stat_column, MetricColumn};
use crate::store::schema::{Dialect, GPU_NAME_COLUMN, STATUS_COLUMN};
use crate::store::Run as Table;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A map keyed by the numbers of [`Keys`]: hashed by multiplying and rotating (rustc's Fx hash),
/// not SipHash, whose guard against chosen keys numbers that sweep gives out do not need.
pub(super) type KeyMap<V> = HashMap<Box<[u32]>, V, BuildHasherDefault<NumberHasher>>;

/// The hasher of [`KeyMap`].
#[derive(Default, Clone, Copy)]
pub(super) struct NumberHasher(u64);

impl NumberHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for NumberHasher {
    /// A slice of numbers comes as its bytes: eight at a time.
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            self.add(u64::from_le_bytes(w.try_into().unwrap_or_default()));
        }
        for b in words.remainder() {
            self.add(u64::from(*b));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

pub(super) fn listed(names: &[String]) -> String {
    if names.is_empty() {
        return "none".to_string();
    }
    names
        .iter()
        .map(|a| format!("`{}`", crate::units::visible(a)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A cell as a key: numbers in one spelling (`32`, `32.0` and `3.2e1` match), text as written
/// (`"x"` and `"x "` are two values of a text axis, as analyze reads them: trimmed, they were
/// one, and the run refused as holding "two rows of the point", review 13b F10). An
/// integer is kept exact: past 2^53 an f64 holds no longer every one, and the points of a legal
/// axis (`9007199254740992`, `9007199254740993`) were one key, the run refused as holding "two
/// rows of the point".
pub(super) fn key(cell: &str, dialect: Dialect) -> String {
    if let Ok(n) = cell.trim().parse::<i128>() {
        return n.to_string();
    }
    match dialect.parse_number(cell) {
        // -0 is 0, as the integer `-0` is.
        Some(v) => format!("{}", v + 0.0),
        None => cell.to_string(),
    }
}

/// The axis values of both runs as numbers: each value of an axis (as [`key`] spells it) gets
/// one, in order of first appearance, so that a point's key is a few integers that A's and B's
/// rows share, made without a String a row.
#[derive(Debug, Clone)]
pub(super) struct Keys {
    /// Per axis, the value of each number.
    values: Vec<Vec<String>>,
    numbers: Vec<HashMap<String, u32>>,
}

impl Keys {
    pub(super) fn new(axes: usize) -> Keys {
        Keys {
            values: vec![Vec::new(); axes],
            numbers: vec![HashMap::new(); axes],
        }
    }

    fn number(&mut self, axis: usize, value: String) -> u32 {
        if let Some(&n) = self.numbers[axis].get(&value) {
            return n;
        }
        let n = self.values[axis].len() as u32;
        self.values[axis].push(value.clone());
        self.numbers[axis].insert(value, n);
        n
    }

    /// The value of number `n` of axis `axis`.
    pub(super) fn value(&self, axis: usize, n: u32) -> &str {
        &self.values[axis][n as usize]
    }

    /// What each axis' number is multiplied by to pack a key into one integer (its numbers in
    /// mixed radix, each axis' base its count of values); `None` when the counts multiply to
    /// 2^64 or more (many axes, each with very many values).
    pub(super) fn strides(&self) -> Option<Vec<u64>> {
        let mut strides = Vec::with_capacity(self.values.len());
        let mut next: u64 = 1;
        for values in &self.values {
            strides.push(next);
            next = next.checked_mul(values.len().max(1) as u64)?;
        }
        Some(strides)
    }

    /// The values of a key, in axis order.
    pub(super) fn values<'a>(&'a self, key: &'a [u32]) -> impl Iterator<Item = &'a str> + 'a {
        key.iter().enumerate().map(|(axis, &n)| self.value(axis, n))
    }
}

/// A map keyed by packed keys ([`pack`]).
type NumberMap<V> = HashMap<u64, V, BuildHasherDefault<NumberHasher>>;

/// The points of a run by key: packed into one integer where [`Keys::strides`] allows (with
/// them), else by the key's numbers.
enum Index {
    Packed(NumberMap<usize>, Vec<u64>),
    Numbers(KeyMap<usize>),
}

/// A key as one integer: its numbers in mixed radix. Below 2^64 with `strides` from
/// [`Keys::strides`], since each number is below its axis' count.
fn pack(key: &[u32], strides: &[u64]) -> u64 {
    key.iter()
        .zip(strides)
        .map(|(&n, &s)| u64::from(n) * s)
        .sum()
}

/// One run read for comparison.
pub(super) struct Run {
    pub(super) table: Table,
    /// The key of each row ([`Keys`]): its axis values in the order of A's axes, `width` numbers
    /// a row.
    keys: Vec<u32>,
    width: usize,
    /// Row of each point (its first), by its key (`index`).
    by_key: Index,
    /// The rows of the points, in order of first appearance (`index`).
    pub(super) firsts: Vec<usize>,
    status: Option<usize>,
    /// Per metric column, the 95 % half-width between processes from the run's control re-runs.
    between: HashMap<String, f64>,
    /// The axes the keys are made of, and whether the CSV has every one of them.
    axes: Vec<String>,
    whole: bool,
}

impl Run {
    /// Reads the keys of `table`'s rows by `axes` (its own when `None`) into `keys`, which both
    /// runs share.
    pub(super) fn read(
        table: Table,
        axes: Option<&[String]>,
        keys: &mut Keys,
    ) -> Result<Run, CompareError> {
        // A run's rows are its points' (one row each, every id one its manifest lists), as every
        // reader of a run checks: two rows of one id or a row of an unlisted one were compared as
        // "only in B" (review 16b B10).
        table.check_ids()?;
        let axes = axes.unwrap_or(&table.axes).to_vec();
        let cols: Vec<Option<usize>> = axes
            .iter()
            .map(|a| table.header.iter().position(|h| h == a))
            .collect();
        let width = cols.len();
        let mut row_keys = Vec::with_capacity(table.rows.len() * width);
        {
            // A cell seen before in its column is not spelled again: the same as the row
            // before's (an axis that moves slowly), or looked up.
            let mut seen: Vec<HashMap<&str, u32>> = vec![HashMap::new(); width];
            let mut before: Vec<Option<(&str, u32)>> = vec![None; width];
            for row in &table.rows {
                for (axis, c) in cols.iter().enumerate() {
                    let cell = c.and_then(|c| row.get(c)).unwrap_or("");
                    let n = match before[axis].filter(|b| b.0 == cell) {
                        Some((_, n)) => n,
                        None => match seen[axis].get(cell) {
                            Some(&n) => n,
                            None => {
                                let n = keys.number(axis, key(cell, table.dialect));
                                seen[axis].insert(cell, n);
                                n
                            }
                        },
                    };
                    before[axis] = Some((cell, n));
                    row_keys.push(n);
                }
            }
        }
        let status = table.column(STATUS_COLUMN);
        let between = crate::analyze::controls::between_processes(&table)?
            .unwrap_or_default()
            .into_iter()
            .map(|b| (b.column, b.u95))
            .collect();
        // (Where the CSV lacks an axis of A's, every key is alike: the missing axis is the
        // error, said after this, not two rows of one point.)
        let whole = cols.iter().all(Option::is_some);
        Ok(Run {
            table,
            keys: row_keys,
            width,
            by_key: Index::Numbers(KeyMap::default()),
            firsts: Vec::new(),
            status,
            between,
            axes,
            whole,
        })
    }

    /// The key of `row`.
    pub(super) fn key(&self, row: usize) -> &[u32] {
        &self.keys[row * self.width..(row + 1) * self.width]
    }

    /// Finds the points among the rows (`firsts`) and indexes them by key, once both runs'
    /// values are numbered: `strides` from [`Keys::strides`] (keys packed into one integer,
    /// 16 bytes a point in the index), or `None` (the keys' numbers, boxed). A second row of a
    /// point is refused: only the first would be compared, and `--fail-on-slower` would pass on
    /// a row it never looked at.
    pub(super) fn index(
        &mut self,
        strides: Option<&[u64]>,
        keys: &Keys,
    ) -> Result<(), CompareError> {
        let rows = self.table.rows.len();
        let mut firsts = Vec::new();
        let mut twice = None;
        self.by_key = match strides {
            Some(strides) => {
                let mut index = NumberMap::default();
                for row in 0..rows {
                    match index.entry(pack(self.key(row), strides)) {
                        Entry::Vacant(e) => {
                            e.insert(row);
                            firsts.push(row);
                        }
                        Entry::Occupied(e) => {
                            twice = twice.or(Some((*e.get(), row)));
                        }
                    }
                }
                Index::Packed(index, strides.to_vec())
            }
            None => {
                let mut index = KeyMap::default();
                for row in 0..rows {
                    let k = self.key(row);
                    match index.get(k) {
                        None => {
                            index.insert(k.into(), row);
                            firsts.push(row);
                        }
                        Some(&first) => twice = twice.or(Some((first, row))),
                    }
                }
                Index::Numbers(index)
            }
        };
        self.firsts = firsts;
        match twice.filter(|_| self.whole) {
            Some((first, second)) => {
                let point: Vec<String> = self
                    .axes
                    .iter()
                    .zip(keys.values(self.key(second)))
                    .map(|(a, v)| format!("{a}={}", v.escape_debug()))
                    .collect();
                Err(CompareError::TwoRows {
                    path: self.table.path.clone(),
                    point: point.join(" "),
                    first: first + 1,
                    second: second + 1,
                })
            }
            None => Ok(()),
        }
    }

    /// The row of the point with key `key`, when the run has it.
    pub(super) fn row_of(&self, key: &[u32]) -> Option<usize> {
        match &self.by_key {
            Index::Packed(index, strides) => index.get(&pack(key, strides)).copied(),
            Index::Numbers(index) => index.get(key).copied(),
        }
    }

    fn cell(&self, row: usize, col: Option<usize>) -> &str {
        col.and_then(|c| self.table.rows[row].get(c)).unwrap_or("")
    }

    pub(super) fn value(&self, row: usize, col: Option<usize>) -> Option<f64> {
        self.table
            .number(self.cell(row, col))
            .filter(|v| v.is_finite())
    }

    /// The status of a row that was not measured, or `None` for ok, noisy and unstable.
    pub(super) fn failed_status(&self, row: usize) -> Option<&str> {
        let s = self.cell(row, self.status);
        (self.status.is_some() && !carries_values(s)).then_some(s)
    }

    pub(super) fn side(&self) -> Side {
        let gpu = self
            .table
            .column(GPU_NAME_COLUMN)
            .and_then(|c| {
                self.table
                    .rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .find(|v| !v.is_empty())
            })
            .map(str::to_string);
        Side {
            path: self.table.path.clone(),
            gpu,
            rows: self.table.rows.len(),
        }
    }
}

/// Where a metric's value and uncertainty lie in one run.
pub(super) struct MetricCols {
    pub(super) value: Option<usize>,
    /// The run's between-process 95 % half-width of this metric (its control re-runs), or 0.
    between: f64,
    rel_ci: Option<usize>,
    spread: Option<usize>,
    repeat_spread: Option<usize>,
}

impl MetricCols {
    pub(super) fn of(run: &Run, m: &MetricColumn) -> MetricCols {
        let header = &run.table.header;
        MetricCols {
            value: header.iter().position(|h| *h == m.column),
            between: run.between.get(&m.column).copied().unwrap_or(0.0),
            rel_ci: stat_column(header, m, "rel_ci"),
            spread: stat_column(header, m, "spread"),
            repeat_spread: stat_column(header, m, "repeat_spread"),
        }
    }

    /// max(sqrt(rel_ci^2 + between^2), spread / 2, repeat_spread / 2) of a row (between: the
    /// run's 95 % half-width between processes, from its control re-runs), 0 when it has none.
    pub(super) fn uncertainty(&self, run: &Run, row: usize) -> f64 {
        let ci = run.value(row, self.rel_ci).map_or(0.0, f64::abs);
        [(self.spread, 0.5), (self.repeat_spread, 0.5)]
            .iter()
            .filter_map(|&(c, f)| run.value(row, c).map(|v| v.abs() * f))
            .fold(ci.hypot(self.between), f64::max)
    }
}

/// The metrics both runs have (by column), or those `y` names.
pub(super) fn common_metrics(
    a: &Run,
    b: &Run,
    y: &[String],
) -> Result<Vec<MetricColumn>, CompareError> {
    let mut common: Vec<MetricColumn> = a
        .table
        .metrics
        .iter()
        .filter(|m| b.table.metrics.iter().any(|n| n.column == m.column))
        .cloned()
        .collect();
    // Which way is better as each side's spec has it, said or implied by its unit (a CSV alone
    // has no spec: the other side's decides). Review 16b B4: a spec that implied `higher` beside
    // one that said `lower` passed, and A's sense decided unsaid.
    let sense = |t: &Table, m: &MetricColumn| {
        m.better.or_else(|| {
            t.manifest
                .as_ref()
                .map(|_| crate::spec::Better::for_metric(&m.name, &crate::analyze::sense_of(m).0))
        })
    };
    for m in &mut common {
        let Some(n) = b.table.metrics.iter().find(|n| n.column == m.column) else {
            continue;
        };
        let (sa, sb) = (sense(&a.table, m), sense(&b.table, n));
        if sa.is_some() && sb.is_some() && sa != sb {
            return Err(CompareError::BetterDiffers {
                column: m.column.clone(),
                a: a.table.path.clone(),
                b: b.table.path.clone(),
            });
        }
        m.better = sa.or(sb);
    }
    let columns =
        |ms: &[MetricColumn]| listed(&ms.iter().map(|m| m.column.clone()).collect::<Vec<_>>());
    if common.is_empty() {
        return Err(CompareError::NoCommonMetric {
            a: a.table.path.clone(),
            b: b.table.path.clone(),
            metrics_a: columns(&a.table.metrics),
            metrics_b: columns(&b.table.metrics),
        });
    }
    let units_differ = |ms: &[MetricColumn]| -> Result<(), CompareError> {
        for m in ms {
            let Some(n) = b.table.metrics.iter().find(|n| n.column == m.column) else {
                continue;
            };
            if !m.unit.is_empty() && !n.unit.is_empty() && m.unit != n.unit {
                return Err(CompareError::UnitDiffers {
                    column: m.column.clone(),
                    unit_a: crate::units::visible(&m.unit).into_owned(),
                    unit_b: crate::units::visible(&n.unit).into_owned(),
                    a: a.table.path.clone(),
                    b: b.table.path.clone(),
                });
            }
        }
        Ok(())
    };
    if y.is_empty() {
        units_differ(&common)?;
        return Ok(common);
    }
    let mut named: Vec<MetricColumn> = y
        .iter()
        .map(|name| {
            common
                .iter()
                .find(|m| m.column == *name || m.name == *name)
                .cloned()
                .ok_or_else(|| CompareError::UnknownMetric {
                    name: name.clone(),
                    common: columns(&common),
                })
        })
        .collect::<Result<_, _>>()?;
    // A metric named twice (`--y copy,copy_gb_per_s`) is compared once, not counted twice.
    let mut seen = std::collections::HashSet::new();
    named.retain(|m| seen.insert(m.column.clone()));
    units_differ(&named)?;
    Ok(named)
}

/// Both runs must have the same axes, in any order.
pub(super) fn same_axes(a: &Table, b: &Table) -> Result<(), CompareError> {
    let missing = |from: &Table, other: &Table| -> Vec<String> {
        other
            .axes
            .iter()
            .filter(|x| !from.axes.contains(x))
            .cloned()
            .collect()
    };
    for (lacking, other) in [(b, a), (a, b)] {
        let m = missing(lacking, other);
        if !m.is_empty() {
            return Err(CompareError::Axes {
                lacking: lacking.path.clone(),
                other: other.path.clone(),
                axes: listed(&m),
                both: format!(
                    "`{}` has {}, `{}` has {}",
                    a.path.display(),
                    listed(&a.axes),
                    b.path.display(),
                    listed(&b.axes)
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_numbers_match_whatever_their_spelling() {
        let (comma, semicolon) = (Dialect::Comma, Dialect::Semicolon);
        assert_eq!(key("32", comma), key("32.0", comma));
        assert_eq!(key("32", comma), key("3.2e1", comma));
        assert_eq!(key("0,5", semicolon), key("0.5", comma));
        assert_ne!(
            key(" shared ", comma),
            key("shared", comma),
            "text keeps its blanks"
        );
        assert_ne!(key("32", comma), key("33", comma));
        // Integers past 2^53 stay apart; one spelled as a float still meets its integer.
        assert_ne!(
            key("9007199254740993", comma),
            key("9007199254740992", comma)
        );
        assert_eq!(
            key("9007199254740992", comma),
            key("9.007199254740992e15", comma)
        );
    }

    /// Both runs' rows get their keys from one `Keys`: a value spelled two ways (in two
    /// dialects) is one number; a point's first row is indexed, and a second row of it refused.
    #[test]
    fn keys_of_both_runs_share_their_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            Table::open(&p).unwrap()
        };
        let a = write(
            "a.csv",
            "point_id,index,n,v,status,copy_gb_per_s\na,0,32,x,ok,1\nb,1,64,x,ok,2\nc,2,32.0,x,ok,3\n",
        );
        let b = write(
            "b.csv",
            "point_id;index;v;n;status;copy_gb_per_s\na;0;x;0,64e2;ok;1\nb;1;y;3,2e1;ok;2\n",
        );
        let mut keys = Keys::new(2);
        let mut a = Run::read(a, None, &mut keys).unwrap();
        let axes = a.table.axes.clone();
        let mut b = Run::read(b, Some(&axes), &mut keys).unwrap();
        let values = |r: &Run, row| keys.values(r.key(row)).collect::<Vec<_>>().join(" ");
        assert_eq!(values(&a, 2), "32 x");
        assert_eq!(values(&b, 0), "64 x");
        assert_eq!(values(&b, 1), "32 y");
        // Packed into one integer, or by the numbers themselves: the same points.
        for strides in [keys.strides(), None] {
            let twice = a.index(strides.as_deref(), &keys).unwrap_err();
            assert!(
                matches!(&twice, CompareError::TwoRows { point, first: 1, second: 3, .. } if point == "n=32 v=x"),
                "{twice:?}"
            );
            b.index(strides.as_deref(), &keys).unwrap();
            assert_eq!(a.firsts, [0, 1], "32 and 32.0 are one point");
            assert_eq!(b.firsts, [0, 1]);
            assert_eq!(b.row_of(a.key(1)), Some(0));
            assert_eq!(b.row_of(a.key(0)), None);
            assert_eq!(a.row_of(b.key(1)), None);
        }
    }

    #[test]
    fn keys_pack_below_two_to_the_64_or_not_at_all() {
        let mut keys = Keys::new(3);
        for n in 0..1000u32 {
            keys.number(0, n.to_string());
        }
        keys.number(1, "a".into());
        keys.number(2, "x".into());
        keys.number(2, "y".into());
        let strides = keys.strides().unwrap();
        assert_eq!(strides, [1, 1000, 1000]);
        assert_eq!(pack(&[999, 0, 1], &strides), 1999);
        // Three axes of 2^16 values and one of 2^15: 2^63 keys pack; 2^64 do not.
        let mut wide = Keys::new(4);
        for (axis, count) in [(0, 1u32 << 16), (1, 1 << 16), (2, 1 << 16), (3, 1 << 15)] {
            for n in 0..count {
                wide.number(axis, n.to_string());
            }
        }
        assert_eq!(wide.strides(), Some(vec![1, 1 << 16, 1 << 32, 1 << 48]));
        for n in 1u32 << 15..1 << 16 {
            wide.number(3, n.to_string());
        }
        assert_eq!(wide.strides(), None);
    }
}
