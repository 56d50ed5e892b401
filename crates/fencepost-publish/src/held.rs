//! Held items, for operators: an item whose file is broken is held as it is (see `scan`),
//! which must not stay a line on stderr — a typo that holds tomorrow's page has to page
//! someone. Each held item is named with its file, the error and its due instant, in
//! `publish`'s report, `status`, the JSON line of each `run` cycle and `/metrics`
//! (`fencepost_items_held`; `fencepost_last_cycle_ok` is 0 while one that is due is held).

use super::drafts::Draft;
use super::sync::{held_of, read_tree, Held};
use super::PublishError;
use fencepost_core::clock::Clock;
use fencepost_site::Site;

/// The items held now, and the drafts, from a read of the tree that writes nothing
/// (`fencepost status`). No ledger yet: none.
pub fn held(site: &Site, clock: &Clock) -> Result<(Vec<Held>, Vec<Draft>), PublishError> {
    if !site.ledger_exists() {
        return Ok((Vec::new(), Vec::new()));
    }
    let mut ledger = site.open_ledger()?;
    let tree = read_tree(site, &mut ledger, clock)?;
    let drafts = super::drafts::listed(site, &tree.scan.read);
    Ok((held_of(site, &mut ledger, &tree.scan, clock.now())?, drafts))
}
