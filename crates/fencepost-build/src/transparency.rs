//! The build's part of the transparency log (`docs/transparency.md`): bring the log up to the
//! revision being built, then write its tiles and signed checkpoint into the revision, so the
//! revision and its checkpoint go live together (one pointer move).
//!
//! 1. The manifest's digest, before the log's own files join it (the revision entry names it,
//!    and the log's files cannot name themselves).
//! 2. One ledger transaction, at the snapshot's revision (a publish that moved the ledger on
//!    meanwhile makes the build start again): the entries that bring the log up to it —
//!    commitments not logged yet, then for each page changed since the log last caught up a
//!    reveal, an update, a withdrawal, an expiry or a return — and the revision entry, unless
//!    the log ends with this very revision entry already (a build run again). The log only
//!    ever grows: a build of an older revision appends what undoes the newer one's changes.
//! 3. The tiles of the log at its new size: a full tile the previous revision holds is linked
//!    from it (full tiles never change), the rest read from the ledger — O(log n) of them
//!    after one publication.
//!
//! Nothing here names an embargoed item: a commitment is a salted digest, and an item's JSON
//! is written only once a page of it is public.

mod reissue;

pub use reissue::{reissue, revision_entry, roll_back_to};

use super::plan::{Job, Planned};
use super::report::{io, BuildError};
use super::reuse::Previous;
use super::sink;
use super::well_known::LOG_DIR;
use fencepost_core::item::ItemId;
use fencepost_ledger::transparency::{self as stored, Changed, Hashes};
use fencepost_ledger::{Ledger, LedgerError, Snapshot, Tx};
use fencepost_output::manifest::{self, CacheClass, Manifest};
use fencepost_site::Site;
use fencepost_tlog::entry::{commitment, fresh_salt, ChangeKind, Entry};
use fencepost_tlog::note::LogSigner;
use fencepost_tlog::tiles::{entries_path, tile_path};
use std::path::Path;
use std::sync::Arc;

/// The log's signing key, when the site keeps a log: `FENCEPOST_TLOG_SKEY`, else the file
/// `transparency.skey_file` names.
pub fn signer(site: &Site) -> Result<Option<LogSigner>, BuildError> {
    use fencepost_config::transparency::SKEY_ENV;
    let t = &site.config.transparency;
    if !t.log {
        return Ok(None);
    }
    let bad = |why: String| BuildError::Transparency { why };
    let skey = match (std::env::var(SKEY_ENV), &t.skey_file) {
        (Ok(k), _) if !k.trim().is_empty() => k,
        (_, Some(file)) => {
            let path = site.root.join(file);
            std::fs::read_to_string(&path).map_err(|e| {
                bad(format!("cannot read transparency.skey_file {}: {e}", path.display()))
            })?
        }
        _ => return Err(bad(format!("[transparency] log = true, and no signing key: set {SKEY_ENV} (a CI secret) or transparency.skey_file to the key `fencepost tlog keygen ORIGIN` printed"))),
    };
    LogSigner::from_skey(skey.trim())
        .map(Some)
        .map_err(|e| bad(e.to_string()))
}

/// The size the checkpoint in revision folder `dir` names (none: it has no log).
pub(super) fn checkpoint_size(dir: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(dir.join(LOG_DIR).join("checkpoint")).ok()?;
    text.lines().nth(1)?.parse().ok()
}

/// Reads the JSON of each public item whose file the previous revision cannot give.
pub(super) fn fill_item_json(
    files: &mut [Planned],
    snap: &Snapshot<'_>,
    prev: Option<&Previous>,
) -> Result<(), BuildError> {
    for p in files {
        let Job::ItemJson { row, json, .. } = &mut p.job else {
            continue;
        };
        let kept = prev.is_some_and(|(_, m)| m.find(&p.path).is_some_and(|i| m.key(i) == p.key));
        if !kept {
            *json = snap.item_json(ItemId(*row))?.map(Arc::from);
        }
    }
    Ok(())
}

/// The revision the log is brought up to.
pub(super) struct At<'a> {
    pub(super) id: &'a fencepost_output::id::RevisionId,
    pub(super) ledger_id: &'a str,
    pub(super) audit_tip: Option<&'a str>,
    pub(super) now: fencepost_core::clock::Instant,
    /// The collections that commit before they reveal: the log holds their items.
    pub(super) committing: Vec<String>,
}

/// Steps 1–3 (see the module doc): the log's files written into `staging` and added to the
/// manifest. `Ok(false)`: the ledger moved past the snapshot's revision; nothing was written.
pub(super) fn write_log(
    ledger: &mut Ledger,
    signer: &LogSigner,
    at: &At<'_>,
    manifest: &mut Manifest,
    staging: &Path,
    prev: Option<&Previous>,
) -> Result<bool, BuildError> {
    if let Some((dir, _)) = prev {
        // The key never changes under a log readers already hold (checked before appending).
        if let Ok(old) = std::fs::read(dir.join(LOG_DIR).join("checkpoint")) {
            signer
                .extends_key_of(&old)
                .map_err(|e| BuildError::Transparency { why: e.to_string() })?;
        }
    }
    let digest = files_digest(manifest);
    let Some((size, root)) = ledger.write(|tx| catch_up(tx, at, &digest))? else {
        return Ok(false);
    };
    fencepost_core::fail_point!("build.after_log_append");
    write_files(ledger, signer, (size, root), manifest, staging, prev)?;
    Ok(true)
}

/// What a revision entry's `manifest` names: SHA-256 over the revision's files in path order,
/// the log's own files excepted, each as its path, a NUL, the hex SHA-256 of its bytes and a
/// newline. Anyone holding the revision's files can recompute it; it is not the bytes of
/// `manifest.json`, which carries the build's own bookkeeping.
pub(super) fn files_digest(manifest: &Manifest) -> String {
    let files = manifest.files.iter();
    files_digest_of(files.map(|e| (e.path.as_str(), e.sha256.as_str())))
}

/// [`files_digest`] of (path, hex SHA-256) pairs in path order.
pub fn files_digest_of<'a>(files: impl Iterator<Item = (&'a str, &'a str)>) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for (path, sha256) in files.filter(|(p, _)| !p.starts_with(LOG_DIR)) {
        h.update(path.as_bytes());
        h.update(b"\0");
        h.update(sha256.as_bytes());
        h.update(b"\n");
    }
    hex::encode(h.finalize())
}

/// The log's files at `size` written into `staging` (full tiles `prev` holds linked from it)
/// and their entries spliced into the manifest.
fn write_files(
    ledger: &mut Ledger,
    signer: &LogSigner,
    appended: (u64, fencepost_tlog::Hash),
    manifest: &mut Manifest,
    staging: &Path,
    prev: Option<&Previous>,
) -> Result<(), BuildError> {
    let kept = |path: &str| prev.and_then(|(_, m)| m.find(path));
    let files = log_files(ledger, signer, appended, &|p| kept(p).is_some())?;
    let mut entries = Vec::with_capacity(files.len());
    for (path, bytes) in files {
        let dst = sink::place(staging, &path)?;
        let entry = match (bytes, prev) {
            (Some(bytes), _) => {
                std::fs::write(&dst, &bytes).map_err(io(&dst))?;
                entry_of(&path, &bytes)
            }
            (None, Some((dir, m))) => {
                sink::link_or_copy(&dir.join(&path), &dst)?;
                m.entry(m.find(&path).expect("kept: in the previous manifest"))
            }
            (None, None) => unreachable!("a file is kept only from a previous revision"),
        };
        entries.push(entry);
    }
    // The log's paths share a prefix: one run of the sorted list, spliced in whole.
    entries.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    let at = manifest
        .files
        .partition_point(|e| e.path.as_str() < LOG_DIR);
    manifest.files.splice(at..at, entries);
    Ok(())
}

/// Step 2: the entries appended in one transaction; the log's size and root after.
fn catch_up(
    tx: &Tx<'_>,
    at: &At<'_>,
    manifest: &str,
) -> Result<Option<(u64, fencepost_tlog::Hash)>, LedgerError> {
    tx.rows("audit.lock", &[])?;
    if fencepost_ledger::status::revision(tx)? != at.id.revision {
        return Ok(None);
    }
    let start = stored::size(tx)?;
    let mut texts: Vec<String> = Vec::new();
    for (item, salt, digest) in stored::unlogged_commitments(tx)? {
        let index = start + texts.len() as u64;
        stored::committed(tx, item, &salt, &digest, index)?;
        texts.push(Entry::Commit { commit: digest }.to_text());
    }
    for c in stored::changed_pages(tx, stored::revision(tx)?)? {
        // An item the log has not revealed, of a collection that does not commit (any more):
        // not in the log. One it revealed stays, its changes logged.
        if c.shown.is_none() && !at.committing.contains(&c.collection) {
            continue;
        }
        let next = start + texts.len() as u64;
        texts.extend(changes(tx, &c, next, at.now)?.iter().map(Entry::to_text));
    }
    let revision = revision_entry(at.ledger_id, at.id, manifest, at.audit_tip);
    finish_append(tx, texts, revision, at.id.revision).map(Some)
}

/// Appends `texts` and then the revision entry (that alone not when the log ends with it
/// already: a step run again appends nothing); the log caught up with `caught_up`; the size
/// and root after.
fn finish_append(
    tx: &Tx<'_>,
    mut texts: Vec<String>,
    revision: String,
    caught_up: i64,
) -> Result<(u64, fencepost_tlog::Hash), LedgerError> {
    let start = stored::size(tx)?;
    let last = match start {
        0 => None,
        n => stored::entries(tx, n - 1, n)?.pop(),
    };
    if !texts.is_empty() || last.as_deref() != Some(revision.as_str()) {
        texts.push(revision);
    }
    let size = stored::append(tx, &texts)?;
    stored::caught_up(tx, caught_up)?;
    let hashes = Hashes::new(tx);
    let root = tlog_tiles::tree_hash(size, &hashes).map_err(|e| hashes.error(e))?;
    Ok((size, root))
}

const ZERO: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// What the log must say of one changed page, its state in `tlog_items` moved along.
/// `next`: the index its first entry gets.
fn changes(
    tx: &Tx<'_>,
    c: &Changed,
    next: u64,
    now: fencepost_core::clock::Instant,
) -> Result<Vec<Entry>, LedgerError> {
    let (Some(json), Some(digest)) = (&c.json, &c.json_digest) else {
        // A page made before the site kept a log (or while it kept none): not in the log.
        return Ok(Vec::new());
    };
    let item = format!("{}/{}", c.collection, c.key);
    let change = |change, digest: &str| Entry::Change {
        item: item.clone(),
        change,
        digest: digest.to_string(),
    };
    let mut out = Vec::new();
    match (c.shown.as_deref(), c.withdrawn) {
        (None, false) => {
            let salt = c
                .salt
                .as_deref()
                .and_then(|s| <[u8; 32]>::try_from(hex::decode(s).ok()?).ok());
            let logged = match (salt, &c.commitment, c.commit_index) {
                (Some(s), Some(cm), Some(i)) if commitment(&s, json.as_bytes()) == *cm => {
                    Some((s, i as u64))
                }
                _ => None,
            };
            let (salt, index) = match logged {
                Some(l) => l,
                None => {
                    // No commitment before the instant holds this text: one now, then the reveal.
                    let salt = fresh_salt();
                    let cm = commitment(&salt, json.as_bytes());
                    stored::committed(tx, c.item, &hex::encode(salt), &cm, next)?;
                    out.push(Entry::Commit { commit: cm });
                    (salt, next)
                }
            };
            out.push(Entry::Reveal {
                item: item.clone(),
                commit: index,
                salt,
            });
            stored::shown(tx, c.item, "public", digest)?;
        }
        (Some("public"), false) if c.shown_digest.as_deref() != Some(digest) => {
            out.push(change(ChangeKind::Update, digest));
            stored::shown(tx, c.item, "public", digest)?;
        }
        (Some("public"), true) => {
            let expired = c.expire_at.is_some_and(|t| t <= now.0);
            let (kind, shown) = match expired {
                true => (ChangeKind::Expire, "expire"),
                false => (ChangeKind::Withdraw, "withdraw"),
            };
            let none = fencepost_core::digest::sha256_hex(b"");
            out.push(change(kind, &none));
            stored::shown(tx, c.item, shown, &none)?;
        }
        (Some(_), false) if c.shown.as_deref() != Some("public") => {
            out.push(change(ChangeKind::Return, digest));
            stored::shown(tx, c.item, "public", digest)?;
        }
        _ => {}
    }
    Ok(out)
}

/// The bytes of hash tile `t`, or of its entry bundle, read from the ledger.
fn tile_bytes(
    tx: &Tx<'_>,
    hashes: &Hashes<'_, '_>,
    t: &tlog_tiles::Tile,
    bundle: bool,
) -> Result<Vec<u8>, LedgerError> {
    if !bundle {
        return t.read_data(hashes).map_err(|e| hashes.error(e));
    }
    let (from, width) = (t.level_index() * 256, u64::from(t.width()));
    let mut bytes = Vec::new();
    for e in stored::entries(tx, from, from + width)? {
        bytes.extend_from_slice(&(e.len() as u16).to_be_bytes());
        bytes.extend_from_slice(e.as_bytes());
    }
    Ok(bytes)
}

/// Every file of the log at `size` (each tile and bundle, then the signed checkpoint), with
/// its bytes read from the ledger — `None` for a full tile `have` says is stored already
/// (full tiles never change).
pub fn log_files(
    ledger: &mut Ledger,
    signer: &LogSigner,
    (size, root): (u64, fencepost_tlog::Hash),
    have: &dyn Fn(&str) -> bool,
) -> Result<Vec<(String, Option<Vec<u8>>)>, LedgerError> {
    let mut out = ledger.read(|tx| {
        let hashes = Hashes::new(tx);
        let mut out = Vec::new();
        for t in tlog_tiles::Tile::new_tiles(8, 0, size) {
            let width = u64::from(t.width());
            let mut paths = vec![(tile_path(t.level(), t.level_index(), width), false)];
            if t.level() == 0 {
                paths.push((entries_path(t.level_index(), width), true));
            }
            for (path, bundle) in paths {
                let path = format!("{LOG_DIR}/{path}");
                let bytes = match width == 256 && have(&path) {
                    true => None,
                    false => Some(tile_bytes(tx, &hashes, &t, bundle)?),
                };
                out.push((path, bytes));
            }
        }
        Ok(out)
    })?;
    let checkpoint = signer.sign_checkpoint(size, root);
    out.push((format!("{LOG_DIR}/checkpoint"), Some(checkpoint)));
    Ok(out)
}

/// The manifest entry of a log file: tiles and bundles never change (c2sp.org/tlog-tiles:
/// immutable), the checkpoint does (revalidated).
pub fn entry_of(path: &str, bytes: &[u8]) -> manifest::Entry {
    let sha256 = fencepost_core::digest::sha256_hex(bytes);
    let (cache, content_type) = match path.ends_with("/checkpoint") {
        true => (CacheClass::Asset, "text/plain; charset=utf-8"),
        false => (CacheClass::Immutable, "application/octet-stream"),
    };
    manifest::Entry {
        path: path.to_string(),
        key: format!("tlog:{sha256}"),
        sha256,
        bytes: bytes.len() as u64,
        content_type: content_type.to_string(),
        cache,
        max_age: cache.max_age(),
        links: Vec::new(),
        location: None,
    }
}
