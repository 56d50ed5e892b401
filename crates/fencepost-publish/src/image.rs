//! Fetching an item's image (a file under `content/` or an http(s) URL) and storing it
//! content-addressed at `<store>/<aa>/<sha256>.<ext>`, exactly once per source, under the
//! lease `image:<source>`. A stored image is never fetched again; a failed fetch is recorded
//! and retried by the next run.

use fencepost_core::clock::Clock;
use fencepost_core::digest::sha256_hex;
use fencepost_ledger::images::{self, StoredImage};
use fencepost_ledger::lease::OwnerId;
use fencepost_ledger::{lease, Ledger, LedgerError};
use fencepost_site::content::ImageSource;
use fencepost_site::images::{blob_path, load_local_bytes as read_local, sniff, NOT_AN_IMAGE};
use fencepost_site::Site;
use std::io::{Read, Write};
use std::path::Path;
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
    let known = ledger.read(|tx| images::lookup(tx, &key))?;
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
        if let Some((attempts, last)) = ledger.read(|tx| images::parked(tx, &key))? {
            return Err(ImageError::Failed {
                image: key,
                why: format!(
                    "parked after {attempts} failed fetches (last: {last}); `fencepost publish --retry ID` re-arms it"
                ),
            });
        }
    }
    let now = clock.now();
    let Some(held) = ledger
        .write(|tx| lease::acquire(tx, &lease::LeaseKey::Image(&key), owner, now, lease_secs))?
    else {
        return Err(ImageError::Locked { image: key });
    };
    let result = fetch_and_store(site, source, local_bytes, &store);
    let now = clock.now();
    match result {
        Ok(img) => {
            let recorded = ledger.write(|tx| {
                let ok = images::record_stored(tx, &key, &img, &held, now)?;
                lease::release(tx, &held, now)?;
                Ok(ok)
            })?;
            if recorded {
                return Ok(img);
            }
            let why = "lost the image lease before recording it".into();
            Err(ImageError::Failed { image: key, why })
        }
        Err(why) => {
            let max = match source {
                ImageSource::Remote(_) => Some(site.config.publish.max_attempts),
                ImageSource::Local(_) => None,
            };
            ledger.write(|tx| {
                images::record_failed(tx, &key, &why, &held, max, now)?;
                lease::release(tx, &held, now)
            })?;
            Err(ImageError::Failed { image: key, why })
        }
    }
}

/// Under the image's lease: its bytes (read already for a local file, else fetched), checked
/// to be an image, written to the store by content.
fn fetch_and_store(
    site: &Site,
    source: &ImageSource,
    local_bytes: Option<Result<Vec<u8>, String>>,
    store: &Path,
) -> Result<StoredImage, String> {
    let bytes = match local_bytes {
        Some(b) => b?,
        None => read_source(site, source)?,
    };
    fencepost_core::fail_point!("image.after_fetch");
    let (_, content_type) = sniff(&bytes).ok_or(NOT_AN_IMAGE)?;
    let img = StoredImage {
        sha256: sha256_hex(&bytes),
        bytes: bytes.len() as i64,
        content_type: content_type.to_string(),
    };
    write_blob(&blob_path(store, &img.sha256, content_type), &bytes)
        .map_err(|e| format!("cannot write to the image store {}: {e}", store.display()))?;
    Ok(img)
}
