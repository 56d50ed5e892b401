//! The ledger (`crates/fencepost-ledger/src/`): its contract on SQLite, PostgreSQL, the bucket and D1, and how a
//! ledger is opened, created and refused.
mod claims;
mod contract;
mod d1;
mod due;
mod in_bucket;
mod opening;
mod trust;
