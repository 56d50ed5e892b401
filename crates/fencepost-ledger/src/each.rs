//! Rows read in place: [`Tx::each_row`] hands each row of a query to a closure as cells whose
//! text is borrowed from the engine's buffer, where [`Tx::rows`] makes every row a list of
//! owned values first. For the few reads of a whole table on a hot path (the stat cache:
//! 100,000 rows, four texts each, read by every `publish`), that list and its strings were
//! most of the read. Same statement, same answer, every engine: on SQLite the rows are
//! stepped through; on PostgreSQL (whose client hands over whole rows anyway) the owned rows
//! are lent cell by cell.

use super::db::Args;
pub use super::db::Cell;
use super::{LedgerError, Tx, TxInner};

impl Tx<'_> {
    /// Runs read-only query `name` and hands `f` each row's cells, in the statement's order.
    /// A statement that is not a plain `SELECT` is refused before it runs, on every engine:
    /// what writes goes through [`Tx::rows`] and [`Tx::exec`], which a bucket ledger records.
    pub fn each_row(
        &self,
        name: &'static str,
        args: Args<'_>,
        mut f: impl FnMut(&[Cell<'_>]) -> Result<(), LedgerError>,
    ) -> Result<(), LedgerError> {
        let stmt = self.dialect().statement(name)?;
        if !reads_only(&stmt.text) {
            return Err(LedgerError::Internal(format!(
                "statement {name} is not a plain SELECT: each_row only reads"
            )));
        }
        match &self.inner {
            TxInner::Sqlite(tx) => {
                let values = stmt.bind(name, args)?;
                let mut failed = None;
                super::sqlite::each(tx, &stmt.text, &values, &mut |cells| {
                    f(cells).map_err(|e| failed = Some(e)).is_ok()
                })
                .map_err(|e| self.err(name, e))?;
                failed.map_or(Ok(()), Err)
            }
            TxInner::Postgres(_) => {
                for row in self.rows(name, args)? {
                    let cells: Vec<Cell<'_>> = row.values.iter().map(Cell::from).collect();
                    f(&cells)?;
                }
                Ok(())
            }
        }
    }
}

/// Whether statement text is one plain `SELECT` (comments and blank lines before it aside).
/// `WITH` is refused with the rest: on PostgreSQL a common table expression may write. (One
/// statement only: both engines prepare a single statement with bound parameters.)
fn reads_only(text: &str) -> bool {
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("--"))
        .unwrap_or("");
    first
        .get(..6)
        .is_some_and(|w| w.eq_ignore_ascii_case("select"))
}
