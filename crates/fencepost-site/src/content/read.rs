//! Reading one item file: bounded (never a FIFO), UTF-8, parsed against its collection, a
//! bundle's resources recorded, a translation's inherited instant taken from its original.

use super::item::{guess_name, parse_item_with, Item};
use super::ContentError;
use fencepost_config::collections::{Collection, Collections};
use fencepost_core::digest::sha256_hex;
use fencepost_core::item::ItemName;
use std::path::{Path, PathBuf};

/// Reads and parses one item file of `coll` (at most `max` bytes, see
/// `publish.max_item_bytes`), returning it with its content hash.
pub fn read_item(
    root: &Path,
    rel: &str,
    max: u64,
    coll: &Collection,
    collections: &Collections,
) -> Result<(Item, String), ContentError> {
    read_item_or_name(root, rel, max, coll, collections).map_err(|(e, _)| e)
}

/// [`read_item`], with a broken file's item when it can still be told.
pub(super) fn read_item_or_name(
    root: &Path,
    rel: &str,
    max: u64,
    coll: &Collection,
    collections: &Collections,
) -> Result<(Item, String), (ContentError, Option<ItemName>)> {
    let path = root.join(rel);
    let stem_name = || guess_name("", Path::new(rel), coll);
    let bytes = read_bounded(&path, max).map_err(|e| (e, stem_name()))?;
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        (
            ContentError::Invalid {
                path: PathBuf::from(rel),
                line: Some(
                    bytes[..e.valid_up_to()]
                        .iter()
                        .filter(|b| **b == b'\n')
                        .count()
                        + 1,
                ),
                key: "(file)".into(),
                why: format!("is not UTF-8 ({e})"),
            },
            stem_name(),
        )
    })?;
    let inherited = super::translation::original_path(collections, coll, rel)
        .map(|o| super::translation::inherited(root, &o, coll));
    match parse_item_with(text, Path::new(rel), coll, inherited) {
        Ok(item) => super::bundle::with_resources(root, rel, coll, item, sha256_hex(&bytes))
            .map_err(|e| (e, guess_name(text, Path::new(rel), coll))),
        Err(e) => Err((e, guess_name(text, Path::new(rel), coll))),
    }
}

/// Reads a content file of at most `max` bytes; never blocks on a FIFO.
fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>, ContentError> {
    use std::io::Read;
    let read_err = |source| ContentError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = fencepost_core::os::open_nonblocking(path).map_err(read_err)?;
    let meta = file.metadata().map_err(read_err)?;
    if !meta.is_file() {
        return Err(ContentError::Unreadable {
            path: path.to_path_buf(),
            why: "is not a regular file (a FIFO, socket or device)".into(),
        });
    }
    let mut bytes = Vec::with_capacity(meta.len().min(max) as usize);
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(read_err)?;
    if bytes.len() as u64 > max {
        return Err(ContentError::TooLarge {
            path: path.to_path_buf(),
            why: format!(
                "is larger than publish.max_item_bytes = {max}; shorten it or raise the limit in fencepost.toml"
            ),
        });
    }
    Ok(bytes)
}
