//! What every reader of a run checks of each of its rows, whatever it read them into: that its
//! status words are sweep's, its metric values numbers, and its axis values those of the point
//! its id names.
//! [`super::Run::read`], the resume and merge each read rows their own way; the checks are one.

use super::{Dialect, Manifest, StoreError};
use crate::schema::{Status, POINT_ID_COLUMN, STATUS_COLUMN};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// A row's cells by column, whatever holds them (empty past the end of a short row).
pub trait Cells {
    fn cell(&self, col: usize) -> &str;
}

impl Cells for csv::StringRecord {
    fn cell(&self, col: usize) -> &str {
        self.get(col).unwrap_or_default()
    }
}

impl<T: Cells> Cells for &T {
    fn cell(&self, col: usize) -> &str {
        (**self).cell(col)
    }
}

impl Cells for Vec<String> {
    fn cell(&self, col: usize) -> &str {
        self.get(col).map_or("", String::as_str)
    }
}

/// The checks of the rows of one CSV of a run (`results.csv`, `controls.csv`, a pass's), read
/// against its manifest.
pub struct RowCheck<'m> {
    path: PathBuf,
    bench: &'m str,
    dialect: Dialect,
    status: Option<usize>,
    /// Each metric's own status column (`<metric>_status`), where the header has it.
    own_statuses: Vec<usize>,
    /// Each metric's value column, where the header has it.
    values: Vec<(&'m str, usize)>,
    id: Option<usize>,
    axes: Vec<(&'m str, usize)>,
    /// The ids the manifest lists; a row of another is told as such by its reader.
    listed: HashSet<&'m str>,
    kinds: Vec<u8>,
}

impl<'m> RowCheck<'m> {
    /// The checks of `path`, whose columns are `header`, a CSV of the run of `manifest`. The axis
    /// values are checked only where the manifest lists its points' ids of today's scheme (an
    /// older run's ids were hashed otherwise).
    pub fn new(path: &Path, manifest: &'m Manifest, header: &[String], dialect: Dialect) -> Self {
        let col = |name: &str| header.iter().position(|h| h == name);
        let ids = manifest
            .point_ids
            .first()
            .is_some_and(|id| !crate::points::legacy_id(id));
        RowCheck {
            path: path.to_path_buf(),
            bench: &manifest.bench,
            dialect,
            status: col(STATUS_COLUMN),
            own_statuses: manifest
                .metrics
                .iter()
                .filter_map(|m| col(&crate::schema::metric_status_column(&m.name)))
                .collect(),
            values: manifest
                .metrics
                .iter()
                .filter_map(|m| col(&m.column).map(|c| (m.column.as_str(), c)))
                .collect(),
            id: col(POINT_ID_COLUMN).filter(|_| ids),
            axes: manifest
                .axes
                .iter()
                .filter_map(|a| col(a).map(|c| (a.as_str(), c)))
                .collect(),
            listed: match ids {
                true => manifest.point_ids.iter().map(String::as_str).collect(),
                false => HashSet::new(),
            },
            kinds: Vec::new(),
        }
    }

    /// Checks `row`; `at` says where it is ("its row 2 after the header", "the row of the point
    /// `p…`"), for the error.
    pub fn row(&mut self, row: &impl Cells, at: impl Fn() -> String) -> Result<(), StoreError> {
        // A status no sweep writes (`OK`, `done`, edited by hand) was read as a failure by one
        // reader and as a gap by another, unsaid (review 13b F9); a metric's own status so
        // edited fell back to the row's (review 17 C8).
        let words = self.status.iter().map(|&c| (c, false));
        let own = self.own_statuses.iter().map(|&c| (c, true));
        for (c, may_be_empty) in words.chain(own) {
            let word = row.cell(c);
            let known = match Status::parse(word) {
                Some(s) => !may_be_empty || s.measured(),
                None => may_be_empty && word.is_empty(),
            };
            if !known {
                return Err(StoreError::UnknownStatus {
                    path: self.path.clone(),
                    at: at(),
                    word: crate::units::visible(word).into_owned(),
                });
            }
        }
        // A metric's value is a number or nothing (a failed point's): other text was a gap in
        // the analysis and a text cell in the workbook, unsaid (review 16b B2).
        if let Some((column, c)) = self.values.iter().find(|&&(_, c)| {
            let v = row.cell(c);
            !v.is_empty() && self.dialect.parse_number(v).is_none()
        }) {
            return Err(StoreError::NotANumber {
                path: self.path.clone(),
                at: format!("the metric column `{column}` ({})", at()),
                cell: crate::units::visible(row.cell(*c)).into_owned(),
            });
        }
        // The axis values against the id (their hash): an axis cell edited by hand moved a point
        // to another x in every reader (review 17 C2), and two rows at one point's values, under
        // two ids, had their median drawn (review 16b B1).
        let Some(id) = self.id.map(|c| row.cell(c)) else {
            return Ok(());
        };
        if !self.listed.contains(id) {
            return Ok(());
        }
        let cells: Vec<(&str, &str)> = self.axes.iter().map(|&(a, c)| (a, row.cell(c))).collect();
        let made =
            crate::points::values_make_id(self.bench, &cells, self.dialect, id, &mut self.kinds);
        if made == Some(false) {
            // Text that a tool decomposed (`é` as `e` + U+0301) looks as the point's own.
            let values: Vec<String> = cells
                .iter()
                .map(|(a, v)| match crate::spec::nfc::decomposed(v) {
                    Some(points) => format!("{a}={v} (written decomposed: {points})"),
                    None => format!("{a}={v}"),
                })
                .collect();
            return Err(StoreError::NotItsPoint {
                path: self.path.clone(),
                row: format!(
                    "a row of the point `{}` ({})",
                    crate::units::visible(id),
                    at()
                ),
                values: crate::units::visible(&values.join(" ")).into_owned(),
            });
        }
        Ok(())
    }

    /// Checks every row of `rows`, in file order.
    pub fn all<R: Cells>(&mut self, rows: impl IntoIterator<Item = R>) -> Result<(), StoreError> {
        for (i, row) in rows.into_iter().enumerate() {
            self.row(&row, || format!("its row {} after the header", i + 1))?;
        }
        Ok(())
    }
}

/// The CSVs a run keeps beside its results.csv (`controls.csv`, `passes/*.csv`), checked as its
/// results are (the header, the status words, the axis values, the ids listed) and left as they
/// are: a resume refuses a run whose kept CSVs were edited before it changes anything (review 17
/// C7: the manifest went from `finished` to `interrupted`, and controls.csv was rewritten).
pub fn check_kept(
    run_dir: &Path,
    manifest: &Manifest,
    header: &[String],
) -> Result<(), StoreError> {
    let run = super::RunDir::new(run_dir);
    let mut kept = vec![run.controls()];
    if let Ok(entries) = std::fs::read_dir(run.passes()) {
        let mut passes: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "csv"))
            .collect();
        passes.sort();
        kept.extend(passes);
    }
    let listed: HashSet<&str> = manifest.point_ids.iter().map(String::as_str).collect();
    let id = header
        .iter()
        .position(|h| h == POINT_ID_COLUMN)
        .unwrap_or(0);
    for path in kept.iter().filter(|p| p.symlink_metadata().is_ok()) {
        let rows = super::read::read_rows_as_is(path, header)?;
        RowCheck::new(path, manifest, header, manifest.dialect).all(&rows)?;
        if let Some(row) = rows
            .iter()
            .position(|r| !listed.is_empty() && !listed.contains(r.cell(id)))
        {
            return Err(StoreError::ForeignRow {
                path: path.clone(),
                point: crate::units::visible(rows[row].cell(id)).into_owned(),
                row: row + 1,
            });
        }
    }
    Ok(())
}
