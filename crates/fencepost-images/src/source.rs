//! A source image: its bytes (read once, hashed once), and what its header says — size,
//! kind, EXIF orientation — read without decoding a pixel, so a decompression bomb (a few KB
//! of PNG that says 50,000 × 50,000) is refused by the pixel budget before anything is
//! allocated for it.

use super::ImageError;
use std::sync::Arc;

/// A source image's bytes, with the file's name (for the output's name and every error) and
/// its SHA-256 (what every output is keyed by: the content, not the path).
#[derive(Debug, Clone)]
pub struct Source {
    /// Where it was read, as the site names it (`static/a.jpg`, `content/posts/x/b.png`).
    pub name: String,
    pub bytes: Arc<Vec<u8>>,
    pub sha256: String,
}

impl Source {
    pub fn new(name: &str, bytes: Arc<Vec<u8>>) -> Source {
        let sha256 = fencepost_core::digest::sha256_hex(&bytes);
        Source {
            name: name.to_string(),
            bytes,
            sha256,
        }
    }

    /// The file's name without folders or extension, in the letters a URL keeps as they are
    /// (`IMG 0042.JPG` → `IMG-0042`): the readable part of an output's name, as Zola's.
    pub fn stem(&self) -> String {
        let file = self.name.rsplit('/').next().unwrap_or("");
        let stem = file.rsplit_once('.').map_or(file, |(s, _)| s);
        let clean: String = stem
            .chars()
            .map(
                |c| match c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    true => c,
                    false => '-',
                },
            )
            .take(64)
            .collect();
        match clean.is_empty() {
            true => "image".into(),
            false => clean,
        }
    }
}

/// The kinds of image read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Jpeg,
    Png,
    Gif,
    WebP,
    Bmp,
    /// Read for its size; not decoded (no AVIF decoder is built in).
    Avif,
    Other,
}

impl Kind {
    /// Zola's `auto` picks JPEG for a lossy source, PNG for a lossless one.
    pub fn lossy(&self) -> bool {
        !matches!(self, Kind::Png | Kind::Gif | Kind::Bmp)
    }
}

/// What a source's header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    /// As displayed: a photo turned by its EXIF orientation is as wide as it is shown.
    pub width: u32,
    pub height: u32,
    /// As stored.
    pub stored: (u32, u32),
    pub kind: Kind,
    /// EXIF orientation (1–8; 1 when there is none).
    pub orientation: u32,
}

impl Meta {
    /// The header of `source`, refused when it is larger than `max_pixels`.
    pub fn read(source: &Source, max_pixels: u64) -> Result<Meta, ImageError> {
        let bytes = &source.bytes[..];
        let kind = match imagesize::image_type(bytes) {
            Ok(imagesize::ImageType::Jpeg) => Kind::Jpeg,
            Ok(imagesize::ImageType::Png) => Kind::Png,
            Ok(imagesize::ImageType::Gif) => Kind::Gif,
            Ok(imagesize::ImageType::Webp) => Kind::WebP,
            Ok(imagesize::ImageType::Bmp) => Kind::Bmp,
            Ok(imagesize::ImageType::Heif(_)) => Kind::Avif,
            Ok(_) => Kind::Other,
            Err(e) => {
                return Err(ImageError::Decode {
                    name: source.name.clone(),
                    why: format!("not an image this reads: {e}"),
                })
            }
        };
        let size = imagesize::blob_size(bytes).map_err(|e| ImageError::Decode {
            name: source.name.clone(),
            why: format!("its header cannot be read: {e}"),
        })?;
        let stored = (size.width as u32, size.height as u32);
        if stored.0 == 0 || stored.1 == 0 {
            return Err(ImageError::Decode {
                name: source.name.clone(),
                why: "it is 0 pixels wide or high".into(),
            });
        }
        let pixels = size.width as u64 * size.height as u64;
        if pixels > max_pixels {
            return Err(ImageError::TooLarge {
                name: source.name.clone(),
                width: size.width as u64,
                height: size.height as u64,
                max_pixels,
            });
        }
        let orientation = match kind {
            Kind::Jpeg | Kind::Png | Kind::WebP => orientation(bytes),
            _ => 1,
        };
        let (width, height) = match orientation {
            5..=8 => (stored.1, stored.0),
            _ => stored,
        };
        Ok(Meta {
            width,
            height,
            stored,
            kind,
            orientation,
        })
    }
}

/// The EXIF orientation in `bytes`' container, 1 when it has none.
fn orientation(bytes: &[u8]) -> u32 {
    let mut cursor = std::io::Cursor::new(bytes);
    exif::Reader::new()
        .read_from_container(&mut cursor)
        .ok()
        .and_then(|e| {
            e.get_field(exif::Tag::Orientation, exif::In::PRIMARY)
                .and_then(|f| f.value.get_uint(0))
        })
        .filter(|o| (1..=8).contains(o))
        .unwrap_or(1)
}
