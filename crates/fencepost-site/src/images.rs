//! Images as files: recognising their type, where the content-addressed store keeps them, and
//! the one loader for local images that publish, `build --preview` and watch mode share (inside
//! `content/`, a regular file, within `images.max_bytes`, a known type). Fetching and recording
//! them under a lease is publish's (`publish::image`).

use crate::Site;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The file extension and content type of an image, from its first bytes.
pub fn sniff(bytes: &[u8]) -> Option<(&'static str, &'static str)> {
    let starts = |p: &[u8]| bytes.starts_with(p);
    if starts(b"\x89PNG\r\n\x1a\n") {
        Some(("png", "image/png"))
    } else if starts(b"\xff\xd8\xff") {
        Some(("jpg", "image/jpeg"))
    } else if starts(b"GIF87a") || starts(b"GIF89a") {
        Some(("gif", "image/gif"))
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some(("webp", "image/webp"))
    } else if bytes.len() >= 12
        && &bytes[4..8] == b"ftyp"
        && (&bytes[8..12] == b"avif" || &bytes[8..12] == b"avis")
    {
        Some(("avif", "image/avif"))
    } else {
        let head = String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]);
        let head = head.trim_start_matches('\u{feff}').trim_start();
        if head.starts_with("<svg") || (head.starts_with("<?xml") && head.contains("<svg")) {
            Some(("svg", "image/svg+xml"))
        } else {
            None
        }
    }
}

/// Where the store keeps an image.
pub fn blob_path(store: &Path, sha256: &str, content_type: &str) -> PathBuf {
    store
        .join(&sha256[..2])
        .join(format!("{sha256}.{}", extension(content_type)))
}

/// The file extension the store and the site use for an image type.
pub fn extension(content_type: &str) -> &'static str {
    match content_type {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/avif" => "avif",
        "image/svg+xml" => "svg",
        _ => "bin",
    }
}

/// Reads a regular file of at most `max` bytes without ever blocking on it: opened
/// non-blocking (a FIFO or device is refused, not waited on), checked on the opened
/// descriptor, and read no further than `max + 1` bytes. `what` names the key that sets `max`.
pub fn read_regular(path: &Path, max: u64, what: &str) -> Result<Vec<u8>, String> {
    let file = fencepost_core::os::open_nonblocking(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!(
            "{} is not a regular file (a FIFO, device or folder); replace it with a file",
            path.display()
        ));
    }
    if meta.len() > max {
        return Err(format!(
            "{} is {} bytes, more than {what} = {max}",
            path.display(),
            meta.len()
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if bytes.len() as u64 > max {
        return Err(format!(
            "{} grew past {what} = {max} while being read",
            path.display()
        ));
    }
    Ok(bytes)
}

/// Reads a local image (`content/...`): it must resolve inside `content/` (a symlink may not
/// lead out), be a regular file, and be at most `images.max_bytes`.
pub fn load_local_bytes(site: &Site, rel: &str) -> Result<Vec<u8>, String> {
    let path = site.root.join(rel);
    // The parse step refused `..`; a symlink may still point out of content/.
    let content = site
        .content_dir()
        .canonicalize()
        .map_err(|e| format!("content/: {e}"))?;
    let real = path
        .canonicalize()
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if !real.starts_with(&content) {
        return Err(format!("{} resolves outside content/", path.display()));
    }
    read_regular(&real, site.config.images.max_bytes, "images.max_bytes")
}

/// A local image as publish, `build --preview` and watch mode all load it: the checks of
/// `read_local`, then a recognised image type. Returns the bytes and their content type.
pub fn load_local(site: &Site, rel: &str) -> Result<(Vec<u8>, &'static str), String> {
    let bytes = load_local_bytes(site, rel)?;
    let (_, content_type) = sniff(&bytes).ok_or(NOT_AN_IMAGE)?;
    Ok((bytes, content_type))
}

pub const NOT_AN_IMAGE: &str = "not an image: PNG, JPEG, GIF, WebP, AVIF or SVG expected";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_common_formats() {
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\nrest").unwrap().0, "png");
        assert_eq!(sniff(b"\xff\xd8\xff\xe0").unwrap().0, "jpg");
        assert_eq!(
            sniff(b"<?xml version=\"1.0\"?>\n<svg xmlns=\"\"/>")
                .unwrap()
                .0,
            "svg"
        );
        assert!(sniff(b"hello world").is_none());
    }
}
