//! A reader's check of a published log, end to end: the checkpoint's signature, every tile
//! (authenticated against the signed root by Go's algorithm), every entry's form, each
//! revealed item's JSON as served against its commitment or its latest update, and
//! consistency with a checkpoint the reader saved before. Where the bytes come from is the
//! caller's ([`Source`]): a site over HTTP, a folder.
//!
//! **What a reveal proves, and from when.** The log holds no clock: what it proves of a reveal
//! is the order of entries. Alone, it says how many revision entries (published revisions)
//! separate the commitment a reveal opens from the reveal ([`Reveal::revisions_before`]; 0:
//! "committed at its reveal", as for an item first written after its instant). Only a
//! checkpoint the reader saved earlier turns order into time: a commitment inside it was
//! fixed before the reader saved it. With `since`, every reveal newer than the saved
//! checkpoint whose commitment the checkpoint does not hold is named in [`Report::late`] — its
//! text was fixed after the reader last looked, whatever the operator claims — and each
//! commitment superseded before its reveal (a `recommit` entry) is named too.

use super::entry::{commitment, ChangeKind, Entry};
use super::tiles::{entries_path, parse_bundle, tile_path, HEIGHT, WIDTH};
use super::{note, Hash, TlogError};
use serde::Serialize;
use std::collections::BTreeMap;
use tlog_tiles::{HashReader, Tile, TileHashReader, TileReader};

/// Where the log's files are fetched from, by their path under the site's
/// `/.well-known/fencepost/` (`log/checkpoint`, `log/tile/0/000`, `items/posts/a.json`).
pub trait Source {
    /// The file's bytes; `Ok(None)` when there is no such file (404).
    fn get(&self, path: &str) -> Result<Option<Vec<u8>>, String>;
}

/// What a check found: a log that holds.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub origin: String,
    pub size: u64,
    /// The root hash, base64.
    pub root: String,
    /// Entries by kind (`revision`, `commit`, `reveal`, `change`).
    pub entries: BTreeMap<String, u64>,
    /// Public revealed items whose JSON was fetched and is the one the log vouches for (its
    /// commitment, or its latest update's digest), `<collection>/<id>`.
    pub revealed: Vec<String>,
    /// How many `change` entries each item has.
    pub changes: BTreeMap<String, u64>,
    /// Each witness given and the time (Unix seconds) of its valid cosignature.
    pub witnessed: BTreeMap<String, u64>,
    /// The size of the checkpoint given with `since`, proven a prefix of this log.
    pub consistent_with: Option<u64>,
    /// Every reveal, in log order: the commitment it opens and what the log proves of when.
    pub reveals: Vec<Reveal>,
    /// With `since`: the reveals newer than the saved checkpoint whose commitment it does not
    /// hold (`<collection>/<id>`). Not empty: the promise "committed before" does not hold
    /// for them, and the commands exit 1 naming each.
    pub late: Vec<String>,
    /// The checkpoint as served (save it: the next check proves the log grew from it).
    pub checkpoint: String,
}

/// One reveal as the log tells it.
#[derive(Debug, Clone, Serialize)]
pub struct Reveal {
    pub item: String,
    /// The reveal's entry.
    pub entry: u64,
    /// The commit (or recommit) entry it opens.
    pub commit: u64,
    /// Revision entries between the commitment and the reveal: 0 is "committed at its
    /// reveal". Never a claim about the item's instant, which the log does not hold.
    pub revisions_before: u64,
    /// The commitments this one superseded (recommits), newest first: entry indexes.
    pub superseded: Vec<u64>,
    /// With `since`: whether the checkpoint saved before holds the commitment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_saved_checkpoint: Option<bool>,
}

impl Reveal {
    /// In words: what the log proves of it.
    pub fn describe(&self) -> String {
        let mut out = match self.revisions_before {
            0 => format!(
                "{}: committed at its reveal (entries {} and {})",
                self.item, self.commit, self.entry
            ),
            n => format!(
                "{}: committed at entry {}, {n} revision(s) before its reveal at entry {}",
                self.item, self.commit, self.entry
            ),
        };
        if !self.superseded.is_empty() {
            let was: Vec<String> = self.superseded.iter().map(|i| i.to_string()).collect();
            out += &format!(
                "; recommitted at entry {} (its text changed before the reveal; superseded commitment(s) at entry {})",
                self.commit,
                was.join(", ")
            );
        }
        match self.in_saved_checkpoint {
            Some(true) => out += "; the checkpoint you saved holds the commitment",
            Some(false) => {
                out += "; NOT in the checkpoint you saved: its text was fixed after you last looked"
            }
            None => {}
        }
        out
    }
}

/// The most entries a reader's check reads: 2^22, some 4 million — a site committing and
/// revealing 100,000 items and publishing a revision a day for a century is under a tenth
/// of it. What it bounds is the server's say: a checkpoint signed for 2^40 entries (its
/// publisher may be the hostile party) is refused before a tile is read, and the check holds
/// at most this many entries (each at most 64 KiB as a bundle allows) in memory.
pub const MAX_ENTRIES: u64 = 1 << 22;

fn bounded(size: u64) -> Result<(), TlogError> {
    match size > MAX_ENTRIES {
        true => Err(TlogError::TooLarge {
            size,
            max: MAX_ENTRIES,
        }),
        false => Ok(()),
    }
}

fn fetch(source: &dyn Source, path: &str) -> Result<Vec<u8>, TlogError> {
    match source.get(path) {
        Ok(Some(bytes)) => Ok(bytes),
        Ok(None) => Err(TlogError::Missing { path: path.into() }),
        Err(why) => Err(TlogError::Fetch {
            path: path.into(),
            why,
        }),
    }
}

/// Go's tiles (height 8) from C2SP paths under `log/`.
/// A tile that cannot be fetched is kept here: the Merkle crate sees only "invalid input",
/// and the reader is told what failed (a 404, a redirect refused, the deadline), not that a
/// proof does not hold.
struct Tiles<'a>(&'a dyn Source, std::cell::RefCell<Option<TlogError>>);

impl<'a> Tiles<'a> {
    fn new(source: &'a dyn Source) -> Tiles<'a> {
        Tiles(source, std::cell::RefCell::new(None))
    }

    /// Why a Merkle step failed: a fetch of one of its tiles, else the proof itself.
    fn why(&self, e: tlog_tiles::Error) -> TlogError {
        self.1.take().unwrap_or_else(|| TlogError::merkle(e))
    }
}

impl TileReader for Tiles<'_> {
    fn height(&self) -> u8 {
        HEIGHT
    }

    fn read_tiles(&self, tiles: &[Tile]) -> Result<Vec<Vec<u8>>, tlog_tiles::Error> {
        tiles
            .iter()
            .map(|t| {
                let path = tile_path(t.level(), t.level_index(), u64::from(t.width()));
                fetch(self.0, &format!("log/{path}")).map_err(|e| {
                    let why = tlog_tiles::Error::InvalidInput(e.to_string());
                    self.1.replace(Some(e));
                    why
                })
            })
            .collect()
    }

    fn save_tiles(&self, _: &[Tile], _: &[Vec<u8>]) {}
}

/// Checks the log `source` serves against the verifier key `vkey`; with `since` (a signed
/// checkpoint saved earlier), proves that this log extends that one.
pub fn check(source: &dyn Source, vkey: &str, since: Option<&[u8]>) -> Result<Report, TlogError> {
    check_witnessed(source, vkey, since, &[])
}

/// [`check`], and the checkpoint must carry a valid cosignature of each of `witnesses`.
pub fn check_witnessed(
    source: &dyn Source,
    vkey: &str,
    since: Option<&[u8]>,
    witnesses: &[super::witness::Witness],
) -> Result<Report, TlogError> {
    note::verifier(vkey)?; // a key that is not one is refused before anything is fetched
    let signed = fetch(source, "log/checkpoint")?;
    let checkpoint = note::open_checkpoint(&signed, vkey)?;
    let witnessed = witnesses
        .iter()
        .map(|w| Ok((w.name.clone(), w.cosigned_at(&signed)?)))
        .collect::<Result<BTreeMap<String, u64>, TlogError>>()?;
    let (size, root) = (checkpoint.size(), *checkpoint.hash());
    bounded(size)?;
    let tiles = Tiles::new(source);
    let reader = TileHashReader::new(size, root, &tiles);
    let computed = tlog_tiles::tree_hash(size, &reader).map_err(|e| tiles.why(e))?;
    if computed != root {
        return Err(TlogError::Merkle {
            why: "the tiles do not hash to the checkpoint's root".into(),
        });
    }
    let entries = read_entries(source, &tiles, &reader, size)?;
    let mut report = Report {
        origin: checkpoint.origin().to_string(),
        size,
        root: base64_of(&root),
        entries: BTreeMap::new(),
        revealed: Vec::new(),
        changes: BTreeMap::new(),
        witnessed,
        consistent_with: None,
        reveals: Vec::new(),
        late: Vec::new(),
        checkpoint: String::from_utf8_lossy(&signed).into_owned(),
    };
    check_entries(source, &entries, &mut report)?;
    if let Some(old) = since {
        let old = note::open_checkpoint(old, vkey)?;
        if old.size() > size {
            return Err(TlogError::Merkle {
                why: format!(
                    "the log went backwards: {size} entries now, {} in the checkpoint saved before",
                    old.size()
                ),
            });
        }
        if old.size() > 0 {
            let proof =
                tlog_tiles::prove_tree(size, old.size(), &reader).map_err(|e| tiles.why(e))?;
            tlog_tiles::check_tree(&proof, size, root, old.size(), *old.hash()).map_err(|_| {
                TlogError::Merkle {
                    why: format!(
                        "the log of {size} entries does not extend the one of {} saved before: it was rewritten",
                        old.size()
                    ),
                }
            })?;
        }
        report.consistent_with = Some(old.size());
        for r in &mut report.reveals {
            r.in_saved_checkpoint = Some(r.commit < old.size());
            if r.entry >= old.size() && r.commit >= old.size() {
                report.late.push(r.item.clone());
            }
        }
    }
    Ok(report)
}

/// Whether the log `source` serves extends the log whose checkpoint is `old`: the same
/// origin, signed by the same key (by its id: a deploy compares two logs of its own site and
/// may not hold the verifier key), no fewer entries, and a consistency proof from the new
/// tree's tiles. What is refused is a log that would go backwards, be rewritten, or move to a
/// key its readers do not hold.
pub fn extends(source: &dyn Source, old: &[u8]) -> Result<(), TlogError> {
    let parse = |b: &[u8]| {
        tlog_tiles::Checkpoint::from_reader(&mut std::io::Cursor::new(b), false)
            .map_err(|e| TlogError::Checkpoint { why: e.to_string() })
    };
    let old_signed = old;
    let new_signed = fetch(source, "log/checkpoint")?;
    let old = parse(old_signed)?;
    let new = parse(&new_signed)?;
    let bad = |why: String| Err(TlogError::Merkle { why });
    if old.origin() != new.origin() {
        return bad(format!(
            "the log's origin would change from {:?} to {:?}",
            old.origin(),
            new.origin()
        ));
    }
    if new.size() < old.size() {
        return bad(format!(
            "the log would shrink from {} entries to {}",
            old.size(),
            new.size()
        ));
    }
    let (old_keys, new_keys) = (
        note::key_ids(old_signed, old.origin()),
        note::key_ids(&new_signed, new.origin()),
    );
    if let Some(old_key) = old_keys.first() {
        if !new_keys.iter().any(|k| old_keys.contains(k)) {
            return Err(TlogError::KeyChanged {
                origin: old.origin().to_string(),
                old: old_key.clone(),
                new: new_keys.first().cloned().unwrap_or_else(|| "(none)".into()),
            });
        }
    }
    let tiles = Tiles::new(source);
    let reader = TileHashReader::new(new.size(), *new.hash(), &tiles);
    let proof =
        tlog_tiles::prove_tree(new.size(), old.size(), &reader).map_err(|e| tiles.why(e))?;
    tlog_tiles::check_tree(&proof, new.size(), *new.hash(), old.size(), *old.hash())
        .map_err(TlogError::merkle)
}

/// A c2sp.org/tlog-proof that `item`'s commitment is in the log `source` serves: the proof of
/// the commit entry its (last) reveal names, in the tree of the checkpoint served, with that
/// reveal entry's text as the proof's `extra` (it carries the salt). Every entry read is
/// checked against the checkpoint's tree; with `vkey` the checkpoint's signature is checked
/// too, else the reader's check of the proof ([`super::proof::Proof::check_item`]) is what
/// vouches for it.
pub fn prove(
    source: &dyn Source,
    item: &str,
    vkey: Option<&str>,
) -> Result<super::proof::Proof, TlogError> {
    if let Some(vkey) = vkey {
        note::verifier(vkey)?;
    }
    let signed = fetch(source, "log/checkpoint")?;
    let checkpoint = match vkey {
        Some(vkey) => note::open_checkpoint(&signed, vkey)?,
        None => tlog_tiles::Checkpoint::from_reader(&mut std::io::Cursor::new(&signed), false)
            .map_err(|e| TlogError::Checkpoint { why: e.to_string() })?,
    };
    let (size, root) = (checkpoint.size(), *checkpoint.hash());
    bounded(size)?;
    let tiles = Tiles::new(source);
    let reader = TileHashReader::new(size, root, &tiles);
    let entries = read_entries(source, &tiles, &reader, size)?;
    let (reveal, commit) = entries
        .iter()
        .rev()
        .find_map(|e| match e {
            Entry::Reveal { item: i, commit, .. } if i == item => Some((e, *commit)),
            _ => None,
        })
        .ok_or_else(|| TlogError::Reveal {
            item: item.into(),
            why: "the log has no reveal of it (not revealed yet, or not an item of a collection that commits before it reveals)".into(),
        })?;
    let hashes = tlog_tiles::prove_record(size, commit, &reader).map_err(|e| tiles.why(e))?;
    // A recommit's text names the entry it supersedes, which the reader cannot rebuild from
    // the item's JSON alone: it rides in `extra` after the reveal.
    let mut extra = reveal.to_text();
    if let Some(e @ Entry::Recommit { .. }) = entries.get(commit as usize) {
        extra += &e.to_text();
    }
    Ok(super::proof::Proof {
        extra: Some(extra.into_bytes()),
        index: commit,
        hashes,
        checkpoint: signed,
    })
}

/// Every entry of the bundles, each checked against the (authenticated) level-0 tiles.
fn read_entries(
    source: &dyn Source,
    tiles: &Tiles<'_>,
    reader: &TileHashReader<'_>,
    size: u64,
) -> Result<Vec<Entry>, TlogError> {
    // Never sized from the checkpoint (a number the server chose): grown as bundles are read.
    let mut entries = Vec::new();
    for n in 0..size.div_ceil(WIDTH) {
        let width = (size - n * WIDTH).min(WIDTH);
        let path = entries_path(n, width);
        let bundle = parse_bundle(&path, &fetch(source, &format!("log/{path}"))?)?;
        let indexes: Vec<u64> = (0..width)
            .map(|i| tlog_tiles::stored_hash_index(0, n * WIDTH + i))
            .collect();
        let hashes = reader.read_hashes(&indexes).map_err(|e| tiles.why(e))?;
        for (i, (bytes, hash)) in bundle.iter().zip(&hashes).enumerate() {
            let index = n * WIDTH + i as u64;
            if tlog_tiles::record_hash(bytes) != *hash {
                return Err(TlogError::Merkle {
                    why: format!("entry {index} in {path} is not the entry the tree holds"),
                });
            }
            let entry = Entry::parse(bytes).map_err(|e| TlogError::Entry {
                why: format!("entry {index}: {e}"),
            })?;
            entries.push(entry);
        }
    }
    Ok(entries)
}

/// Each entry's meaning: a reveal names an earlier commit entry; then each revealed item's
/// JSON as served is the one the log vouches for — the committed text (`sha256(salt ‖ JSON)`
/// is the commitment) until its first `update`, the digest of its latest `update` or
/// `return` after that. A withdrawn or expired item is not public: its JSON is not checked.
fn check_entries(
    source: &dyn Source,
    entries: &[Entry],
    report: &mut Report,
) -> Result<(), TlogError> {
    // Per revealed item: (its salt and commitment, the latest change after the reveal).
    let mut items: BTreeMap<String, ((&[u8; 32], &str), Option<&Entry>)> = BTreeMap::new();
    // Revision entries before each index, to count those between a commitment and a reveal.
    let mut revisions = Vec::with_capacity(entries.len() + 1);
    revisions.push(0u64);
    for e in entries {
        let n = revisions.last().copied().unwrap_or(0);
        revisions.push(n + u64::from(matches!(e, Entry::Revision { .. })));
    }
    for (index, entry) in entries.iter().enumerate() {
        let kind = match entry {
            Entry::Revision { .. } => "revision",
            Entry::Commit { .. } => "commit",
            Entry::Recommit { supersedes, .. } => {
                superseded(entries, index as u64, *supersedes)?;
                "recommit"
            }
            Entry::Change { item, .. } => {
                *report.changes.entry(item.clone()).or_default() += 1;
                if let Some((_, latest)) = items.get_mut(item) {
                    *latest = Some(entry);
                }
                "change"
            }
            Entry::Reveal { item, salt, .. } => {
                let (reveal, committed) = reveal_at(entries, index, &revisions)?;
                items.insert(item.clone(), ((salt, committed), None));
                report.reveals.push(reveal);
                "reveal"
            }
        };
        *report.entries.entry(kind.into()).or_default() += 1;
    }
    for (item, ((salt, committed), latest)) in items {
        let bad = |why: String| TlogError::Reveal {
            item: item.clone(),
            why,
        };
        match latest {
            Some(Entry::Change {
                change: ChangeKind::Withdraw | ChangeKind::Expire,
                ..
            }) => continue,
            Some(Entry::Change { digest, .. }) => {
                let json = fetch(source, &format!("items/{item}.json"))?;
                if hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&json)) != *digest {
                    return Err(bad(format!(
                        "the JSON served for it is not the one its latest change entry names ({digest}): it changed without an entry in the log"
                    )));
                }
            }
            _ => {
                let json = fetch(source, &format!("items/{item}.json"))?;
                if commitment(salt, &json) != committed {
                    return Err(bad(
                        "the JSON served for it does not match its commitment: it is not the text fixed before its instant, and no change entry accounts for it".into(),
                    ));
                }
            }
        }
        report.revealed.push(item);
    }
    Ok(())
}

/// The reveal at `index` (a reveal entry) and the commitment it opens, an earlier commit or
/// recommit entry; `revisions[i]`: the revision entries before entry `i`.
fn reveal_at<'e>(
    entries: &'e [Entry],
    index: usize,
    revisions: &[u64],
) -> Result<(Reveal, &'e str), TlogError> {
    let Entry::Reveal { item, commit, .. } = &entries[index] else {
        unreachable!("called for a reveal entry");
    };
    let opened = entries
        .get(*commit as usize)
        .filter(|_| (*commit as usize) < index);
    let Some(committed) = opened.and_then(Entry::commitment) else {
        return Err(TlogError::Reveal {
            item: item.clone(),
            why: format!("entry {index} names entry {commit}, which is not an earlier commit"),
        });
    };
    let reveal = Reveal {
        item: item.clone(),
        entry: index as u64,
        commit: *commit,
        revisions_before: revisions[index] - revisions[*commit as usize + 1],
        superseded: superseded_chain(entries, *commit),
        in_saved_checkpoint: None,
    };
    Ok((reveal, committed))
}

/// Checks recommit entry `index`'s `supersedes`: an earlier commit or recommit entry.
fn superseded(entries: &[Entry], index: u64, supersedes: u64) -> Result<(), TlogError> {
    let earlier = entries
        .get(supersedes as usize)
        .filter(|_| supersedes < index);
    match earlier.and_then(Entry::commitment) {
        Some(_) => Ok(()),
        None => Err(TlogError::Entry {
            why: format!(
                "entry {index}: recommit supersedes entry {supersedes}, which is not an earlier commitment"
            ),
        }),
    }
}

/// The commitments the one at `commit` superseded, newest first (each checked earlier).
fn superseded_chain(entries: &[Entry], mut commit: u64) -> Vec<u64> {
    let mut out = Vec::new();
    while let Some(Entry::Recommit { supersedes, .. }) = entries.get(commit as usize) {
        out.push(*supersedes);
        commit = *supersedes;
    }
    out
}

fn base64_of(h: &Hash) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(h.0)
}
