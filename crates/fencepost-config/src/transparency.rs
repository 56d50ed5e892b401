//! `[transparency]`: the site's public transparency log (see `docs/transparency.md`).
//!
//! The signing key is a secret: it comes from `FENCEPOST_TLOG_SKEY` (a CI secret) or from
//! the file `skey_file` names, never from fencepost.toml itself, and it is read when a build
//! needs it, not when the config loads (publish never signs).

use serde::Deserialize;
use std::path::PathBuf;

/// The environment variable that holds the log's signing key.
pub const SKEY_ENV: &str = "FENCEPOST_TLOG_SKEY";

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TransparencyConfig {
    /// Every build writes the log under `/.well-known/fencepost/` and signs its checkpoint.
    pub log: bool,
    /// A file holding the signing key (`fencepost tlog keygen` prints one), relative to the
    /// site root; `FENCEPOST_TLOG_SKEY` wins over it.
    pub skey_file: Option<PathBuf>,
}
