//! A consistent, read-only view of the ledger: what a build renders from.

use super::{public, status, LedgerError, Tx};

/// A consistent view of the ledger (see [`crate::Ledger::snapshot`]).
pub struct Snapshot<'a> {
    pub(super) tx: Tx<'a>,
}

impl Snapshot<'_> {
    pub fn name(&self) -> &str {
        self.tx.name
    }

    pub fn revision(&self) -> Result<i64, LedgerError> {
        status::revision(&self.tx)
    }

    pub fn ledger_id(&self) -> Result<String, LedgerError> {
        status::ledger_id(&self.tx)
    }

    pub fn anchor(&self) -> Result<status::AuditTip, LedgerError> {
        status::anchor(&self.tx)
    }

    /// The audit chain's hash at entry `seq`, if the chain holds it.
    pub fn audit_hash_at(&self, seq: i64) -> Result<Option<String>, LedgerError> {
        super::audit::hash_at(&self.tx, seq)
    }

    pub fn pages(&self) -> Result<Vec<public::PublicPage>, LedgerError> {
        public::pages(&self.tx)
    }

    /// The pages changed after revision `since` (see [`public::pages_since`]).
    pub fn pages_since(&self, since: i64) -> Result<Vec<public::PublicPage>, LedgerError> {
        public::pages_since(&self.tx, since)
    }

    /// The next scheduled change the snapshot knows, as of `now` (see `public.next_change`).
    pub fn next_change(
        &self,
        now: fencepost_core::clock::Instant,
    ) -> Result<Option<fencepost_core::clock::Instant>, LedgerError> {
        public::next_change(&self.tx, now)
    }

    /// The transparency log's size in the ledger.
    pub fn tlog_size(&self) -> Result<u64, LedgerError> {
        super::transparency::size(&self.tx)
    }

    /// The item's JSON for the transparency log.
    pub fn item_json(
        &self,
        id: fencepost_core::item::ItemId,
    ) -> Result<Option<String>, LedgerError> {
        super::transparency::json(&self.tx, id)
    }

    pub fn body(&self, id: fencepost_core::item::ItemId) -> Result<Option<String>, LedgerError> {
        public::body(&self.tx, id)
    }
}
