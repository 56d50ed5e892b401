//! What a test observes of a site's ledger: read through the `Ledger` API, the reads the
//! binary itself makes, never hand-written SQL — so a test does not depend on the schema and
//! reads SQLite and PostgreSQL alike. (Tests that corrupt a ledger on purpose, acting as a
//! writer that skips the Rust rules, still write SQL: see `TestSite::ledger`.)

use super::TestSite;
use fencepost_ledger::items::{self, ItemView, State};
use fencepost_ledger::{audit, lease, public, LedgerError, Tx};

impl TestSite {
    /// Runs `f` in one read transaction of the site's ledger.
    pub fn read<T>(&self, f: impl FnMut(&Tx<'_>) -> Result<T, LedgerError>) -> T {
        let site = fencepost_site::Site::open(self.dir.path()).unwrap();
        site.open_ledger().unwrap().read(f).unwrap()
    }

    /// Like [`TestSite::read`], but `None` while the ledger is still being created by a
    /// process that runs meanwhile.
    pub fn try_read<T>(&self, f: impl FnMut(&Tx<'_>) -> Result<T, LedgerError>) -> Option<T> {
        let site = fencepost_site::Site::open(self.dir.path()).ok()?;
        if !site.ledger_exists() {
            return None;
        }
        site.open_ledger().ok()?.read(f).ok()
    }

    /// Every item the ledger knows, with its page.
    pub fn items(&self) -> Vec<ItemView> {
        self.read(items::every_view)
    }

    /// The item with id `id` (in whichever collection).
    pub fn ledger_item(&self, id: &str) -> ItemView {
        let all = self.items();
        let found = all.iter().find(|i| &*i.name.id == id);
        found
            .unwrap_or_else(|| panic!("no item {id} in {all:?}"))
            .clone()
    }

    /// How many items are in `state`.
    pub fn items_in(&self, state: State) -> usize {
        self.items().iter().filter(|i| i.state == state).count()
    }

    /// How many items have a page (public, or withdrawn and kept as a notice).
    pub fn pages(&self) -> usize {
        self.items().iter().filter(|i| i.page.is_some()).count()
    }

    /// The public pages at the ledger's revision (what a build renders).
    pub fn public_pages(&self) -> Vec<public::PublicPage> {
        self.read(public::pages)
    }

    /// The body of item `id`'s page as published.
    pub fn body(&self, id: &str) -> String {
        let row = self.ledger_item(id).id;
        self.read(|tx| public::body(tx, row))
            .expect("the item has a page body")
    }

    /// The audit log, oldest first.
    pub fn audit(&self) -> Vec<audit::Entry> {
        let mut entries = self.read(|tx| audit::newest(tx, i64::MAX));
        entries.reverse();
        entries
    }

    /// How many audit entries have `action` (`publish`, `rollback`, …).
    pub fn audited(&self, action: &str) -> usize {
        self.audit().iter().filter(|e| e.action == action).count()
    }

    /// The fence of the lease `key` (`publication:1`, …), if it was ever taken.
    pub fn fence(&self, key: &str) -> Option<i64> {
        self.read(|tx| lease::fence(tx, key))
    }
}
