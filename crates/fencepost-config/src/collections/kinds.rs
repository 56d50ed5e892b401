//! The kinds a collection chooses among: what a withdrawn item's URL keeps, how ids are
//! written, when an item is due.

use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnWithdraw {
    /// The page is gone (404) once withdrawn.
    #[default]
    Remove,
    /// The URL keeps a notice page, served with status 410, left out of every list.
    Notice,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdKind {
    /// The `id` key, a positive integer.
    Integer,
    /// The `id` key, or the file's stem when absent: `[a-z0-9][a-z0-9-]{0,79}`.
    Slug,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DueRule {
    /// The end of `day` (the next local midnight) plus the grace period.
    EndOfDay,
    /// The start of `day` (its local midnight) plus the grace period.
    StartOfDay,
    /// The item's own `publish_at`, which is then required.
    PublishAt,
}
