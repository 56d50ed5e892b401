//! `[images]`: the image store of items' images (`store`, `max_bytes`,
//! `fetch_timeout_secs`), and how a site's images are processed (docs/images.md).

use serde::Deserialize;
use std::path::PathBuf;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ImagesConfig {
    /// Content-addressed image store, relative to the site root.
    pub store: PathBuf,
    /// Largest image accepted, in bytes.
    pub max_bytes: u64,
    /// Timeout for fetching one http(s) image, in seconds.
    pub fetch_timeout_secs: u64,
    /// Markdown images: the widths of the processed versions a page's `<img>` offers in its
    /// `srcset` (none: the image as it is, with its `width` and `height`). docs/images.md.
    pub widths: Vec<u32>,
    /// Markdown images: the formats offered as `<picture>` sources, best first (`avif`,
    /// `webp`, `jpg`, `png`); none: the `srcset` in the source's own kind (Zola's `auto`).
    pub formats: Vec<String>,
    /// Markdown images: the `sizes` attribute beside a `srcset` (default: the full width of
    /// the viewport up to the largest version's width).
    pub sizes: Option<String>,
    /// Markdown images: the quality of lossy versions (JPEG, WebP, AVIF), 1 to 100.
    pub quality: u8,
    /// Markdown images: AVIF's encoder speed, 1 (smallest files) to 10 (fastest).
    pub avif_speed: u8,
    /// The most pixels a source may have (its header is read first: a decompression bomb is
    /// refused before anything is allocated for it).
    pub max_pixels: u64,
}

impl Default for ImagesConfig {
    fn default() -> Self {
        ImagesConfig {
            store: PathBuf::from(".fencepost/images"),
            max_bytes: 20 * 1024 * 1024,
            fetch_timeout_secs: 30,
            widths: Vec::new(),
            formats: Vec::new(),
            sizes: None,
            quality: 80,
            avif_speed: 8,
            max_pixels: 120_000_000,
        }
    }
}

impl ImagesConfig {
    /// What serde cannot check: the formats' names.
    pub(crate) fn check(&self, path: &std::path::Path) -> Result<(), crate::ConfigError> {
        let known = ["avif", "webp", "jpg", "png"];
        match self.formats.iter().find(|f| !known.contains(&f.as_str())) {
            Some(bad) => Err(crate::ConfigError::Invalid {
                path: path.to_path_buf(),
                key: "images.formats",
                value: format!("{bad:?}"),
                why: "image formats are \"avif\", \"webp\", \"jpg\" and \"png\", best first",
            }),
            None => Ok(()),
        }
    }
}
