//! Small reads of the items table that the checks around publishing make: which ids a
//! collection has had (`new`), where each item stands (the URL check), how many public
//! items each collection has (the whole-collection guard) and a held item's due instant.

use super::{ItemName, State};
use crate::args;
use crate::{LedgerError, Tx};
use fencepost_core::clock::Instant;
use std::collections::HashMap;

/// How many public items each collection has.
pub fn published_by_collection(tx: &Tx<'_>) -> Result<HashMap<String, i64>, LedgerError> {
    tx.rows("items.published_by_collection", &[])?
        .into_iter()
        .map(|r| Ok((r.get(0)?, r.get(1)?)))
        .collect()
}

/// Where an item stands, for the URL check of `publish` (see `items.placed`).
#[derive(Debug, Clone)]
pub struct Placed {
    pub name: ItemName,
    /// `YYYY-MM-DD`, or `""`.
    pub day: String,
    pub due: Instant,
    pub state: State,
    pub has_file: bool,
}

/// Every item the ledger keeps, with what its URL is made from.
pub fn placed(tx: &Tx<'_>) -> Result<Vec<Placed>, LedgerError> {
    tx.rows("items.placed", &[])?
        .into_iter()
        .map(|r| {
            let (collection, key): (String, String) = (r.get(0)?, r.get(1)?);
            Ok(Placed {
                name: ItemName::new(&collection, &key),
                day: r.get(2)?,
                due: Instant(r.get(3)?),
                state: State::parse(&r.get::<String>(4)?)?,
                has_file: r.get::<bool>(5)?,
            })
        })
        .collect()
}

/// Every public item whose page's data names aliases, with that data (canonical JSON).
pub fn aliased(tx: &Tx<'_>) -> Result<Vec<(ItemName, String)>, LedgerError> {
    tx.rows("items.aliased", &[])?
        .into_iter()
        .map(|r| {
            let (collection, key, data): (String, String, String) =
                (r.get(0)?, r.get(1)?, r.get(2)?);
            Ok((ItemName::new(&collection, &key), data))
        })
        .collect()
}

/// An item's due instant and state, if the ledger has it.
pub fn due_of(tx: &Tx<'_>, name: &ItemName) -> Result<Option<(Instant, State)>, LedgerError> {
    tx.row(
        "items.due_of",
        args! { "collection" => name.collection.as_ref(), "key" => name.id.as_ref() },
    )?
    .map(|r| Ok((Instant(r.get(0)?), State::parse(&r.get::<String>(1)?)?)))
    .transpose()
}

/// Every id the ledger keeps of `collection`, whatever the item's state: a withdrawn item's
/// id stays its own, so `fencepost new` never gives it to a new item.
pub fn keys_of(tx: &Tx<'_>, collection: &str) -> Result<Vec<String>, LedgerError> {
    tx.rows("items.keys_of", args! { "collection" => collection })?
        .into_iter()
        .map(|r| r.get(0))
        .collect()
}
