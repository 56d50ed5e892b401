//! A deploy target — a bucket (or folder) that serves finished revisions — as every operation
//! on it sees it: deploy, and `rollback --to` and `gc --to` (`history`) alike. Its one name
//! whatever the spelling and its owner ([`claim`]: `name_target`, `check_owner`), the lease
//! every operation takes and the wait for it ([`claim`]), the objects it holds ([`objects`]:
//! listings, reads of roots and shards, uploads), a rollback's receipt ([`receipt`]), the
//! error type and outcomes. It stands on `bucket/`, the ledger and `output/`; `deploy/` and
//! `history/` stand beside each other on it.

pub mod claim;
mod error;
pub mod objects;
mod plan;
pub mod receipt;

pub use error::{lost_lease, runtime, DeployError, Outcome};
pub use plan::{Plan, Repair};
