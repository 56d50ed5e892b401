//! `rollback`, `gc` and `verify`, the operations on finished revisions, in one place: on `public/`
//! ([`local`]) and on a bucket ([`bucket`], `--to URL`). They come after build and deploy in
//! the data flow; on `public/` they stand on `output/` (its owner, [`Public`]) and the
//! ledger's audit log only.
//!
//! [`Public`]: fencepost_output::public::Public

pub mod bucket;
pub mod local;
pub mod verify;

use fencepost_ledger::LedgerError;
use fencepost_output::OutputError;

/// Why a local rollback or gc failed. (Their `--json` errors say `"kind": "build"`, as they
/// did when these lived in `build`: the kind is a contract.)
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The site's transparency log could not be brought to the revision rolled back to.
    #[error(transparent)]
    Log(#[from] Box<fencepost_build::BuildError>),
}
