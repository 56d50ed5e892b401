//! The ledger (`src/ledger/`): its contract on SQLite, PostgreSQL and the bucket, and how a
//! ledger is opened, created and refused.
mod contract;
mod due;
mod in_bucket;
mod opening;
mod trust;
