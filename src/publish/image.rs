//! Fetching an item's image (a file under `content/` or an http(s) URL) and storing it
//! content-addressed at `<store>/<aa>/<sha256>.<ext>`, exactly once per source, under the
//! lease `image:<source>`. A stored image is never fetched again; a failed fetch is recorded
//! and retried by the next run.

use crate::clock::Clock;
use crate::content::{sha256_hex, ImageSource};
use crate::ledger::images::{self, StoredImage};
use crate::ledger::lease::OwnerId;
use crate::ledger::{lease, with_write, Ledger, LedgerError};
use crate::site::Site;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("image {image}: another run is fetching it")]
    Locked { image: String },
    #[error("image {image}: {why}")]
    Failed { image: String, why: String },
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

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

/// Writes `bytes` to `path` via a temporary name, fsync and rename, so a reader never sees a
/// partial blob. Idempotent: content-addressed blobs are equal when their names are.
fn write_blob(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if path.metadata().is_ok_and(|m| m.len() == bytes.len() as u64) {
        return Ok(());
    }
    let dir = path.parent().expect("blob paths have a parent");
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(".tmp-{}", uuid::Uuid::new_v4().simple()));
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, path)?;
    std::fs::File::open(dir)?.sync_all()
}

/// Reads a regular file of at most `max` bytes without ever blocking on it: opened
/// non-blocking (a FIFO or device is refused, not waited on), checked on the opened
/// descriptor, and read no further than `max + 1` bytes. `what` names the key that sets `max`.
pub fn read_regular(path: &Path, max: u64, what: &str) -> Result<Vec<u8>, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
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
fn read_local(site: &Site, rel: &str) -> Result<Vec<u8>, String> {
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
/// [`read_local`], then a recognised image type. Returns the bytes and their content type.
pub fn load_local(site: &Site, rel: &str) -> Result<(Vec<u8>, &'static str), String> {
    let bytes = read_local(site, rel)?;
    let (_, content_type) = sniff(&bytes).ok_or(NOT_AN_IMAGE)?;
    Ok((bytes, content_type))
}

const NOT_AN_IMAGE: &str = "not an image: PNG, JPEG, GIF, WebP, AVIF or SVG expected";

fn read_source(site: &Site, source: &ImageSource) -> Result<Vec<u8>, String> {
    let max = site.config.images.max_bytes;
    match source {
        ImageSource::Local(rel) => read_local(site, rel),
        ImageSource::Remote(url) => {
            let agent = ureq::AgentBuilder::new()
                .timeout(Duration::from_secs(site.config.images.fetch_timeout_secs))
                .build();
            let resp = agent
                .get(url)
                .call()
                .map_err(|e| format!("fetch failed: {e}"))?;
            let mut bytes = Vec::new();
            resp.into_reader()
                .take(max + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| format!("fetch failed while reading: {e}"))?;
            if bytes.len() as u64 > max {
                return Err(format!("larger than images.max_bytes = {max}"));
            }
            Ok(bytes)
        }
    }
}

/// Makes sure the image is stored and returns it. Reads a local file each time (cheap, and a
/// changed file gets stored again); fetches a URL only if it was never stored.
pub fn ensure(
    ledger: &mut Ledger,
    site: &Site,
    source: &ImageSource,
    owner: &OwnerId,
    clock: &Clock,
    lease_secs: u64,
) -> Result<StoredImage, ImageError> {
    let key = source.key().to_string();
    let store = site.image_store();
    let known = images::lookup(ledger.conn(), &key).map_err(|e| ledger.err(e))?;
    let local_bytes = match source {
        ImageSource::Local(_) => Some(read_source(site, source)),
        ImageSource::Remote(_) => None,
    };
    if let Some(k) = &known {
        let blob_ok = blob_path(&store, &k.sha256, &k.content_type).exists();
        let same = match &local_bytes {
            Some(Ok(b)) => sha256_hex(b) == k.sha256,
            Some(Err(_)) => false,
            None => true,
        };
        if same && blob_ok {
            return Ok(k.clone());
        }
    }
    if let ImageSource::Remote(_) = source {
        if let Some((attempts, last)) =
            images::parked(ledger.conn(), &key).map_err(|e| ledger.err(e))?
        {
            return Err(ImageError::Failed {
                image: key,
                why: format!(
                    "parked after {attempts} failed fetches (last: {last}); `fencepost publish --retry ID` re-arms it"
                ),
            });
        }
    }
    let now = clock.now();
    let Some(held) = with_write(ledger, |tx| {
        lease::acquire(tx, &images::lease_key(&key), owner, now, lease_secs)
    })?
    else {
        return Err(ImageError::Locked { image: key });
    };
    let result = (|| {
        let bytes = match local_bytes {
            Some(b) => b?,
            None => read_source(site, source)?,
        };
        crate::fail_point!("image.after_fetch");
        let (_, content_type) = sniff(&bytes).ok_or(NOT_AN_IMAGE)?;
        let img = StoredImage {
            sha256: sha256_hex(&bytes),
            bytes: bytes.len() as i64,
            content_type: content_type.to_string(),
        };
        write_blob(&blob_path(&store, &img.sha256, content_type), &bytes)
            .map_err(|e| format!("cannot write to the image store {}: {e}", store.display()))?;
        Ok::<_, String>(img)
    })();
    let now = clock.now();
    match result {
        Ok(img) => {
            let recorded = with_write(ledger, |tx| {
                let ok = images::record_stored(tx, &key, &img, &held, now)?;
                lease::release(tx, &held, now)?;
                Ok(ok)
            })?;
            if recorded {
                Ok(img)
            } else {
                Err(ImageError::Failed {
                    image: key,
                    why: "lost the image lease before recording it".into(),
                })
            }
        }
        Err(why) => {
            with_write(ledger, |tx| {
                let max = match source {
                    ImageSource::Remote(_) => Some(site.config.publish.max_attempts),
                    ImageSource::Local(_) => None,
                };
                images::record_failed(tx, &key, &why, &held, max, now)?;
                lease::release(tx, &held, now)
            })?;
            Err(ImageError::Failed { image: key, why })
        }
    }
}

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
