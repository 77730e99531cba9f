//! A CSV's cells typed once, from their column: ids, statuses, errors and GPU names are text
//! whatever they look like; numbers are numbers in either dialect.

use super::Dialect;

/// One typed cell.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Empty,
    Number(f64),
    Text(String),
}

/// A CSV's header and rows, every cell typed.
#[derive(Clone, Debug)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// Types the cells of `rows` (written in `dialect`): a column in `text` is text; any other
    /// column is numbers where every non-empty cell reads as a finite number in the dialect,
    /// else text (an axis of names).
    pub fn typed(
        header: Vec<String>,
        rows: Vec<Vec<String>>,
        dialect: Dialect,
        text: &[&str],
    ) -> Table {
        let numeric: Vec<bool> = (0..header.len())
            .map(|c| {
                !text.contains(&header[c].as_str())
                    && rows.iter().all(|r| {
                        let f = r.get(c).map(String::as_str).unwrap_or_default();
                        f.is_empty() || dialect.parse_number(f).is_some()
                    })
            })
            .collect();
        let rows = rows
            .into_iter()
            .map(|r| {
                (0..header.len())
                    .map(|c| match r.get(c).map(String::as_str).unwrap_or_default() {
                        "" => Cell::Empty,
                        f if numeric[c] => {
                            dialect.parse_number(f).map_or(Cell::Empty, Cell::Number)
                        }
                        f => Cell::Text(f.to_string()),
                    })
                    .collect()
            })
            .collect();
        Table { header, rows }
    }

    pub fn column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    /// The table's rows as CSV text in `dialect`, for a spreadsheet: a text cell that could
    /// start a formula is defused ([`super::formula_defused`]).
    pub fn to_csv(&self, dialect: Dialect) -> Vec<u8> {
        // Column names carry the spec's metric and axis names, which may start like a formula.
        let header: Vec<String> = self
            .header
            .iter()
            .map(|h| super::formula_defused(h, dialect).into_owned())
            .collect();
        let mut out = super::record(&header, dialect);
        for r in &self.rows {
            let fields: Vec<String> = r
                .iter()
                .map(|c| match c {
                    Cell::Empty => String::new(),
                    Cell::Number(v) => dialect.number(*v),
                    Cell::Text(t) => super::formula_defused(t, dialect).into_owned(),
                })
                .collect();
            out.extend(super::record(&fields, dialect));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::schema::TEXT_COLUMNS;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn ids_and_statuses_stay_text_and_numbers_follow_the_dialect() {
        let header = s(&[
            "point_id", "threads", "variant", "status", "mflops", "error",
        ]);
        let rows = vec![
            s(&["096962288715", "1", "a", "ok", "3,597", ""]),
            s(&[
                "137798133e26",
                "2",
                "7",
                "run_failed",
                "",
                "exit 1; see log",
            ]),
        ];
        let t = Table::typed(header, rows, Dialect::Semicolon, &TEXT_COLUMNS);
        assert_eq!(t.rows[0][0], Cell::Text("096962288715".into()));
        assert_eq!(t.rows[1][0], Cell::Text("137798133e26".into()));
        assert_eq!(t.rows[0][1], Cell::Number(1.0));
        // An axis with one name among numbers is text throughout.
        assert_eq!(t.rows[1][2], Cell::Text("7".into()));
        assert_eq!(t.rows[0][4], Cell::Number(3.597));
        assert_eq!(t.rows[1][4], Cell::Empty);
        let csv = String::from_utf8(t.to_csv(Dialect::Comma)).unwrap();
        assert!(
            csv.contains("137798133e26,2,7,run_failed,,\"exit 1; see log\"\r\n"),
            "{csv}"
        );
        assert!(csv.contains(",3.597,"), "{csv}");
    }

    #[test]
    fn a_column_name_that_starts_like_a_formula_is_defused_too() {
        let header = s(&["point_id", "=HYPERLINK(\"http://x\")_mflops"]);
        let t = Table::typed(
            header,
            vec![s(&["a1", "-2.5"])],
            Dialect::Comma,
            &TEXT_COLUMNS,
        );
        let csv = String::from_utf8(t.to_csv(Dialect::Comma)).unwrap();
        let first = csv.lines().next().unwrap();
        assert!(first.starts_with("point_id,\"'=HYPERLINK("), "{first}");
        assert!(
            csv.contains("a1,-2.5"),
            "a negative number stays a number: {csv}"
        );
    }
}
