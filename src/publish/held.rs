//! Held items, for operators: an item whose file is broken is held as it is (see `scan`),
//! which must not stay a line on stderr — a typo that holds tomorrow's page has to page
//! someone. Each held item is named with its file, the error and its due instant, in
//! `publish`'s report, `status`, the JSON line of each `run` cycle and `/metrics`
//! (`fencepost_items_held`; `fencepost_last_cycle_ok` is 0 while one that is due is held).

use super::sync::read_tree;
use super::PublishError;
use crate::clock::{Clock, Instant};
use crate::content::{self, Scan};
use crate::item::Shown;
use crate::ledger::items::{self, State};
use crate::ledger::Ledger;
use crate::site::Site;

/// An item held because a file of its is broken.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Held {
    /// The item, as the site names items.
    pub id: Shown,
    pub file: String,
    pub error: String,
    /// When it is due: from its file when that still reads so far, else as the ledger last
    /// accepted it; absent when neither can tell.
    pub due_at: Option<Instant>,
    /// It is due now (or public, with an edit waiting), or its due instant cannot be told:
    /// what is held is held from the public.
    pub due: bool,
}

/// The held items of `scan`, each with its due instant.
pub(super) fn of(
    site: &Site,
    ledger: &mut Ledger,
    scan: &Scan,
    now: Instant,
) -> Result<Vec<Held>, PublishError> {
    let mut out = Vec::new();
    for b in &scan.broken {
        let Some(name) = &b.name else { continue };
        let known = ledger.read(|tx| items::due_of(tx, name))?;
        let guessed = site.collections.get(&name.collection).and_then(|c| {
            let text = std::fs::read_to_string(site.root.join(&b.path)).ok()?;
            content::guess_due(&text, c)
        });
        let due_at = guessed.or(known.map(|k| k.0));
        let public = known.is_some_and(|k| k.1 == State::Published);
        out.push(Held {
            id: Shown(name.shown(site.collections.naming)),
            file: b.path.clone(),
            error: b.error.to_string(),
            due_at,
            due: public || due_at.is_none_or(|t| t <= now),
        });
    }
    Ok(out)
}

/// The items held now, from a read of the tree that writes nothing (`fencepost status`).
/// No ledger yet: none.
pub fn held(site: &Site, clock: &Clock) -> Result<Vec<Held>, PublishError> {
    if !site.ledger_exists() {
        return Ok(Vec::new());
    }
    let mut ledger = site.open_ledger()?;
    let tree = read_tree(site, &mut ledger, clock)?;
    of(site, &mut ledger, &tree.scan, clock.now())
}
