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
    /// Each metric's own status column (`<metric>_status`) where the header has it, and its
    /// name.
    own_names: Vec<(usize, String)>,
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
        // An id of the scheme before today's was hashed otherwise: its row is not checked (each
        // row by its own id: review 18a F10, one legacy id in the manifest turned the check off
        // for every row).
        let ids = !manifest.point_ids.is_empty();
        RowCheck {
            path: path.to_path_buf(),
            bench: &manifest.bench,
            dialect,
            status: col(STATUS_COLUMN),
            own_names: manifest
                .metrics
                .iter()
                .filter_map(|m| {
                    let name = crate::schema::metric_status_column(&m.name);
                    col(&name).map(|c| (c, name))
                })
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
        // `None`: the row's own status; a name: that metric's own status column.
        let words = self.status.iter().map(|&c| (c, None));
        let own = self.own_names.iter().map(|(c, n)| (*c, Some(n.as_str())));
        for (c, own) in words.chain(own) {
            let word = row.cell(c);
            let known = match Status::parse(word) {
                Some(s) => own.is_none() || s.measured(),
                None => own.is_some() && word.is_empty(),
            };
            if known {
                continue;
            }
            let word = crate::units::visible(word).into_owned();
            let path = self.path.clone();
            return Err(match own {
                None => StoreError::UnknownStatus {
                    path,
                    at: at(),
                    word,
                },
                // A metric's own status is one of a measured value's (review 18a F4: a
                // `run_failed` there was "none of sweep's" beside a hint that listed it).
                Some(name) => StoreError::UnknownOwnStatus {
                    path,
                    at: format!("`{name}` of {}", at()),
                    word,
                },
            });
        }
        // A metric's value is a number or nothing (a failed point's): other text was a gap in
        // the analysis and a text cell in the workbook, unsaid (review 16b B2).
        // In the semicolon dialect sweep writes a decimal comma: a `.` there is a hand's (a
        // spreadsheet of those locales writes 2000 as `2.000`, which read as 2: review 19a M4).
        let dotted = |v: &str| self.dialect == Dialect::Semicolon && v.contains('.');
        if let Some((column, c)) = self.values.iter().find(|&&(_, c)| {
            let v = row.cell(c);
            // Finite, as `parse_number` reads it: a value sweep reads from a program's output
            // always is (`NaN` and `inf` were gaps too, review 18a F3).
            !v.is_empty() && (self.dialect.parse_number(v).is_none() || dotted(v))
        }) {
            let cell = row.cell(*c);
            let mark = match dotted(cell) {
                true => ", in the semicolon dialect, whose decimal mark is `,`",
                false => "",
            };
            return Err(StoreError::NotANumber {
                path: self.path.clone(),
                at: format!("the metric column `{column}` ({}){mark}", at()),
                cell: crate::units::visible(cell).into_owned(),
            });
        }
        // The axis values against the id (their hash): an axis cell edited by hand moved a point
        // to another x in every reader (review 17 C2), and two rows at one point's values, under
        // two ids, had their median drawn (review 16b B1).
        let Some(id) = self.id.map(|c| row.cell(c)) else {
            return Ok(());
        };
        if !self.listed.contains(id) || crate::points::legacy_id(id) {
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
/// results are and left as they are: a resume refuses a run whose kept CSVs were edited before
/// it changes anything (review 17 C7: the manifest went from `finished` to `interrupted`, and
/// controls.csv was rewritten; review 18b F1: a file at `passes/` was found after the manifest
/// was rewritten). The CSVs of the first `once_passes` passes (all but the last of `repeat`)
/// hold one row per point.
pub fn check_kept(
    run_dir: &Path,
    manifest: &Manifest,
    header: &[String],
    once_passes: u32,
) -> Result<(), StoreError> {
    let run = super::RunDir::new(run_dir);
    let once: Vec<PathBuf> = (0..once_passes)
        .map(|p| super::pass_csv(run_dir, p))
        .collect();
    let mut kept = vec![run.controls()];
    let passes = run.passes();
    if passes.symlink_metadata().is_ok_and(|m| !m.is_dir()) {
        return Err(StoreError::Read {
            path: passes,
            cause: std::io::Error::new(
                std::io::ErrorKind::NotADirectory,
                "it is no folder, where sweep keeps its passes' CSVs (hint: move it away; a resume makes the folder again)",
            )
            .into(),
        });
    }
    if let Ok(entries) = std::fs::read_dir(&passes) {
        let mut csvs: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "csv"))
            .collect();
        csvs.sort();
        kept.extend(csvs);
    }
    for path in kept.iter().filter(|p| p.symlink_metadata().is_ok()) {
        let rows = super::read::read_rows_as_is(path, header)?;
        check_kept_rows(path, manifest, header, &rows, once.contains(path))?;
    }
    Ok(())
}

/// The rows of a kept CSV `path` (read under the run's `header`), checked as the run's results
/// are: [`RowCheck`] and every id one the manifest lists. They may hold two rows of a point
/// (controls.csv and recheck.csv a point's processes, the last pass's CSV the process a kill cut
/// off before its point's row and the one a resume measured again), but for a CSV of `once` row
/// per point: a pass's before the last, where only a hand makes a second (review 18b F1, 19b F1:
/// merge took the later one beside a results row that combined the other). Resume and merge
/// both check them so (review 18b F3: merge wrote a run every reader then refused).
pub fn check_kept_rows(
    path: &Path,
    manifest: &Manifest,
    header: &[String],
    rows: &[Vec<String>],
    once: bool,
) -> Result<(), StoreError> {
    RowCheck::new(path, manifest, header, manifest.dialect).all(rows)?;
    let id = header
        .iter()
        .position(|h| h == POINT_ID_COLUMN)
        .unwrap_or(0);
    if let Some((row, point)) = unlisted(manifest, rows.iter().map(|r| r.cell(id))) {
        return Err(StoreError::ForeignRow {
            path: path.to_path_buf(),
            point: crate::units::visible(point).into_owned(),
            row: row + 1,
        });
    }
    if once {
        let mut first_at: std::collections::HashMap<&str, usize> = Default::default();
        for (at, row) in rows.iter().enumerate() {
            if let Some(first) = first_at.insert(row.cell(id), at + 1) {
                return Err(StoreError::TwoRows {
                    path: path.to_path_buf(),
                    point: crate::units::visible(row.cell(id)).into_owned(),
                    first,
                    second: at + 1,
                });
            }
        }
    }
    Ok(())
}

/// The first of `ids` (a CSV's point ids, in file order) that `manifest` does not list, with its
/// place among them; none where the manifest lists no point (an old run's).
pub fn unlisted<'a>(
    manifest: &Manifest,
    ids: impl IntoIterator<Item = &'a str>,
) -> Option<(usize, &'a str)> {
    if manifest.point_ids.is_empty() {
        return None;
    }
    let listed: HashSet<&str> = manifest.point_ids.iter().map(String::as_str).collect();
    ids.into_iter()
        .enumerate()
        .find(|(_, id)| !listed.contains(id))
}
