//! `[preview]`: deployed previews (`fencepost preview`, docs/previews.md).

use serde::Deserialize;

/// `[preview]`: how long a deployed preview is kept.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PreviewConfig {
    /// `gc` removes a preview deployed more than this many days ago (its links stop working).
    pub keep_days: u64,
}

impl Default for PreviewConfig {
    fn default() -> Self {
        PreviewConfig { keep_days: 14 }
    }
}
