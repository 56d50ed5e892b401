//! `rollback` and `gc`, the operations on finished revisions, in one place: on `public/`
//! ([`local`]) and on a bucket ([`bucket`], `--to URL`). They come after build and deploy in
//! the data flow and use both; the two receipts a driver must finish after a crash stay
//! below them (`build::finish_rollback_receipt`, `deploy::receipt`).

pub mod bucket;
pub mod local;
