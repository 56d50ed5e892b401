//! A finished revision held in memory: watch mode's preview, rendered by the build and served
//! by the origin alike (path → file), with no folder of `public/` involved.

use std::collections::HashMap;
use std::sync::Arc;

/// One file of an in-memory preview.
#[derive(Debug, Clone)]
pub struct MemoryFile {
    pub key: String,
    pub bytes: Arc<Vec<u8>>,
    pub sha256: String,
    pub content_type: &'static str,
}

/// A whole preview site in memory (watch mode): path → file.
#[derive(Debug, Clone, Default)]
pub struct MemorySite {
    pub id: crate::id::RevisionId,
    pub files: HashMap<String, MemoryFile>,
    /// Pages whose template failed for them alone (path → why): the preview answers their
    /// URL with why, the rest of the site as rendered.
    pub held: HashMap<String, String>,
}
