//! Issue 52: [`Tx::each_row`] reads rows in place (the stat cache read by every `publish`)
//! where [`Tx::rows`] makes each row a list of owned values. On every engine both give the
//! same cells for the same statement, and `each_row` refuses a statement that writes before
//! it runs.
use crate::common::*;
use fencepost_ledger::db::Value;
use fencepost_ledger::each::Cell;
use fencepost_ledger::items;
use fencepost_ledger::LedgerError;

/// Guards: the stat cache read in place (items::stat_cache) answering what the owned read did.
pub(super) fn rows_read_in_place_are_the_rows_read_owned(b: Backend) {
    let s = TestSite::on(b);
    s.item(1, "2026-11-01")
        .item(2, "2026-11-02")
        .item(3, "2026-12-20");
    s.publish(NOW);
    let (owned, in_place) = s.read(|tx| {
        let owned: Vec<Vec<Value>> = tx
            .rows("items.stat_cache", &[])?
            .into_iter()
            .map(|r| r.values)
            .collect();
        let mut in_place: Vec<Vec<Value>> = Vec::new();
        tx.each_row("items.stat_cache", &[], |cells| {
            in_place.push(
                cells
                    .iter()
                    .map(|c| match c {
                        Cell::Null => Value::Null,
                        Cell::Int(i) => Value::Int(*i),
                        Cell::Text(t) => Value::Text(t.to_string()),
                    })
                    .collect(),
            );
            Ok(())
        })?;
        Ok((owned, in_place))
    });
    assert_eq!(owned.len(), 3, "{owned:?}");
    assert_eq!(in_place, owned);
    // And the cache built from it names every item by its path.
    let cache = s.read(items::stat_cache);
    let mut ids: Vec<String> = cache.values().map(|c| c.name.id.to_string()).collect();
    ids.sort();
    assert_eq!(ids, ["1", "2", "3"]);

    // An error from the closure stops the read and comes back as it was.
    let stopped = s.read(|tx| {
        let mut seen = 0;
        let r = tx.each_row("items.stat_cache", &[], |_| {
            seen += 1;
            Err(LedgerError::Internal("stop here".into()))
        });
        Ok((seen, r.unwrap_err().to_string()))
    });
    assert_eq!(stopped.0, 1);
    assert!(stopped.1.contains("stop here"), "{}", stopped.1);

    // A statement that writes is refused before it runs: item 3 keeps its instant.
    let before = s.ledger_item("3").publish_at;
    let refused = s.read(|tx| {
        let r = tx.each_row(
            "items.set_due",
            &[("publish_at", &0i64), ("id", &3i64)],
            |_| Ok(()),
        );
        Ok(r.unwrap_err().to_string())
    });
    assert!(
        refused.contains("items.set_due") && refused.contains("not a plain SELECT"),
        "{refused}"
    );
    assert_eq!(s.ledger_item("3").publish_at, before);
}
