//! The tree as c2sp.org/tlog-tiles serves it: hash tiles `tile/<L>/<N>[.p/<W>]` and entry
//! bundles `tile/entries/<N>[.p/<W>]`, 256 to a full one.
//!
//! [`Tree`] keeps every stored hash of the tree (the dense order of Go's sumdb/tlog: about two
//! per entry, 64 bytes), so a growth from size `a` to `b` yields exactly the tiles that changed
//! — the full ones completed and the partial ones at the right edge, O(log n) of them for one
//! entry — and proofs come from memory.

use super::{Hash, TlogError};
use tlog_tiles::{HashReader, Tile};

/// Tile height: 2^8 = 256 hashes (or entries) to a full tile.
pub const HEIGHT: u8 = 8;
/// Hashes (or entries) in a full tile.
pub const WIDTH: u64 = 1 << HEIGHT;
/// The longest entry a bundle can hold (its length is a uint16).
pub const MAX_ENTRY: usize = u16::MAX as usize;

/// `<N>` of a tile path: 3-digit groups, all but the last prefixed with `x`.
fn index_path(n: u64) -> String {
    let mut n = n;
    let mut out = format!("{:03}", n % 1000);
    while n >= 1000 {
        n /= 1000;
        out = format!("x{:03}/{out}", n % 1000);
    }
    out
}

/// `.p/<W>` for a partial tile, nothing for a full one.
fn width_suffix(width: u64) -> String {
    match width {
        WIDTH => String::new(),
        w => format!(".p/{w}"),
    }
}

/// The path of hash tile `index` at `level`, `width` hashes wide (256: full).
pub fn tile_path(level: u8, index: u64, width: u64) -> String {
    format!("tile/{level}/{}{}", index_path(index), width_suffix(width))
}

/// The path of entry bundle `index`, `width` entries long (256: full).
pub fn entries_path(index: u64, width: u64) -> String {
    format!("tile/entries/{}{}", index_path(index), width_suffix(width))
}

/// What a tile path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TilePath {
    /// The hash tile's level; `None` for an entry bundle.
    pub level: Option<u8>,
    pub index: u64,
    /// 1..=256 (256: a full tile).
    pub width: u64,
}

/// Parses a tile or bundle path, strictly: the one spelling [`tile_path`] and
/// [`entries_path`] write (no leading zeros in `<L>` or `<W>`, 3 digits per group).
pub fn parse_path(path: &str) -> Option<TilePath> {
    let rest = path.strip_prefix("tile/")?;
    let (kind, rest) = rest.split_once('/')?;
    let level = match kind {
        "entries" => None,
        l if l == "0" || (!l.starts_with('0') && l.len() <= 2) => {
            Some(l.parse::<u8>().ok().filter(|l| *l <= 63)?)
        }
        _ => return None,
    };
    let (index_part, width) = match rest.split_once(".p/") {
        Some((i, w)) if !w.starts_with('0') && w.bytes().all(|b| b.is_ascii_digit()) => {
            let w: u64 = w.parse().ok()?;
            (i, (1..WIDTH).contains(&w).then_some(w)?)
        }
        Some(_) => return None,
        None => (rest, WIDTH),
    };
    let groups: Vec<&str> = index_part.split('/').collect();
    let mut index: u64 = 0;
    for (i, g) in groups.iter().enumerate() {
        let digits = if i + 1 < groups.len() {
            g.strip_prefix('x')?
        } else {
            g
        };
        if digits.len() != 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        index = index.checked_mul(1000)?.checked_add(digits.parse().ok()?)?;
    }
    // One spelling only: `x000/001` is not `001`.
    (index_path(index) == index_part).then_some(TilePath {
        level,
        index,
        width,
    })
}

/// The whole tree's stored hashes.
#[derive(Debug, Clone, Default)]
pub struct Tree {
    stored: Vec<Hash>,
    size: u64,
}

impl HashReader for Tree {
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<Hash>, tlog_tiles::Error> {
        indexes
            .iter()
            .map(|i| {
                self.stored
                    .get(*i as usize)
                    .copied()
                    .ok_or(tlog_tiles::Error::IndexesNotInTree)
            })
            .collect()
    }
}

impl Tree {
    pub fn new() -> Tree {
        Tree::default()
    }

    /// The tree of `entries`, in order.
    pub fn of<E: AsRef<[u8]>>(entries: &[E]) -> Result<Tree, TlogError> {
        let mut tree = Tree::new();
        for e in entries {
            tree.append(e.as_ref())?;
        }
        Ok(tree)
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// Appends one entry (at index `size()`).
    pub fn append(&mut self, entry: &[u8]) -> Result<(), TlogError> {
        if entry.len() > MAX_ENTRY {
            return Err(TlogError::EntryTooLong {
                index: self.size,
                len: entry.len(),
            });
        }
        let hashes =
            tlog_tiles::stored_hashes(self.size, entry, self).map_err(TlogError::merkle)?;
        self.stored.extend(hashes);
        self.size += 1;
        Ok(())
    }

    /// The root hash of the tree at `size` (at most [`Tree::size`]).
    pub fn root_at(&self, size: u64) -> Result<Hash, TlogError> {
        tlog_tiles::tree_hash(size, self).map_err(TlogError::merkle)
    }

    pub fn root(&self) -> Hash {
        self.root_at(self.size)
            .expect("the whole tree is in memory")
    }

    /// The hash tiles a tree of `old_size` lacks at this size, with their bytes: every tile
    /// completed since, and the partial tiles at the new right edge (C2SP: a tree of 256 has a
    /// full level-0 tile and a level-1 tile of width 1).
    pub fn tiles_since(&self, old_size: u64) -> Vec<(String, Vec<u8>)> {
        Tile::new_tiles(HEIGHT, old_size.min(self.size), self.size)
            .into_iter()
            .map(|t| {
                let data = t.read_data(self).expect("the whole tree is in memory");
                let path = tile_path(t.level(), t.level_index(), u64::from(t.width()));
                (path, data)
            })
            .collect()
    }

    /// The inclusion proof of entry `index` in the tree at `size` (RFC 6962 order: the leaf's
    /// sibling first).
    pub fn prove_entry(&self, index: u64, size: u64) -> Result<Vec<Hash>, TlogError> {
        tlog_tiles::prove_record(size, index, self).map_err(TlogError::merkle)
    }

    /// The consistency proof from the tree at `old_size` to the tree at `size`.
    pub fn prove_consistency(&self, old_size: u64, size: u64) -> Result<Vec<Hash>, TlogError> {
        tlog_tiles::prove_tree(size, old_size, self).map_err(TlogError::merkle)
    }
}

/// The entry bundles a log of `old_size` entries lacks now that it holds `entries`: every
/// bundle completed since and the partial one at the new end, with their bytes.
pub fn bundles_since<E: AsRef<[u8]>>(entries: &[E], old_size: u64) -> Vec<(String, Vec<u8>)> {
    let size = entries.len() as u64;
    let old_size = old_size.min(size);
    if size == old_size {
        return Vec::new();
    }
    let first = old_size / WIDTH;
    let last = (size - 1) / WIDTH;
    (first..=last)
        .map(|n| {
            let start = n * WIDTH;
            let end = ((n + 1) * WIDTH).min(size);
            let mut bytes = Vec::new();
            for e in &entries[start as usize..end as usize] {
                let e = e.as_ref();
                bytes.extend_from_slice(&(e.len() as u16).to_be_bytes());
                bytes.extend_from_slice(e);
            }
            (entries_path(n, end - start), bytes)
        })
        .collect()
}

/// The entries of a bundle served at `path` (its width says how many there must be).
pub fn parse_bundle(path: &str, bytes: &[u8]) -> Result<Vec<Vec<u8>>, TlogError> {
    let bad = |why: String| TlogError::Bundle {
        path: path.into(),
        why,
    };
    let want = parse_path(path)
        .filter(|p| p.level.is_none())
        .ok_or_else(|| bad("not an entry bundle path".into()))?
        .width;
    // Counted while parsing: a bundle holding more entries than its path says is refused at
    // the first one too many, before it costs more than its path allows (a 32 MiB bundle of
    // empty entries would be 16 million of them).
    let mut entries = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        if entries.len() as u64 == want {
            return Err(bad(format!(
                "holds more than the {want} entries its path says: refused at entry {want}, before reading on"
            )));
        }
        let (len, tail) = rest
            .split_first_chunk::<2>()
            .ok_or_else(|| bad("a length prefix is cut short".into()))?;
        let len = u16::from_be_bytes(*len) as usize;
        if tail.len() < len {
            return Err(bad(format!("entry {} is cut short", entries.len())));
        }
        entries.push(tail[..len].to_vec());
        rest = &tail[len..];
    }
    if entries.len() as u64 != want {
        return Err(bad(format!(
            "holds {} entries, its path says {want}",
            entries.len()
        )));
    }
    Ok(entries)
}

/// Checks a hash tile's bytes: a whole number of hashes, as many as its path says.
pub fn check_tile_len(path: &str, bytes: &[u8]) -> Result<(), TlogError> {
    let want = parse_path(path)
        .filter(|p| p.level.is_some())
        .map(|p| p.width as usize * 32);
    match want {
        Some(n) if n == bytes.len() => Ok(()),
        Some(n) => Err(TlogError::Tile {
            path: path.into(),
            why: format!("{} bytes, its path says {n}", bytes.len()),
        }),
        None => Err(TlogError::Tile {
            path: path.into(),
            why: "not a hash tile path".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_c2sp_s() {
        assert_eq!(tile_path(0, 1234067, 256), "tile/0/x001/x234/067");
        assert_eq!(tile_path(1, 5, 17), "tile/1/005.p/17");
        assert_eq!(entries_path(0, 112), "tile/entries/000.p/112");
        assert_eq!(entries_path(1000, 256), "tile/entries/x001/000");
        for p in [
            "tile/0/x001/x234/067",
            "tile/1/005.p/17",
            "tile/entries/000.p/112",
            "tile/63/000",
        ] {
            let parsed = parse_path(p).unwrap();
            let back = match parsed.level {
                Some(l) => tile_path(l, parsed.index, parsed.width),
                None => entries_path(parsed.index, parsed.width),
            };
            assert_eq!(back, p);
        }
        for bad in [
            "tile/0/1",
            "tile/00/001",
            "tile/64/001",
            "tile/0/x000/001",
            "tile/0/001.p/0",
            "tile/0/001.p/256",
            "tile/0/001.p/017",
            "tile/0/001/",
            "tile/data/001",
            "tiles/0/001",
        ] {
            assert_eq!(parse_path(bad), None, "{bad}");
        }
    }

    /// C2SP's example: a tree of 70,000 is 273 full level-0 tiles, a partial one of 112, one
    /// full level-1 tile, a partial one of 17 and a partial level-2 tile of 1.
    #[test]
    fn a_tree_of_70000_has_the_tiles_c2sp_lists() {
        let entries: Vec<Vec<u8>> = (0..70_000u32).map(|i| i.to_be_bytes().to_vec()).collect();
        let tree = Tree::of(&entries).unwrap();
        let tiles = tree.tiles_since(0);
        let count = |prefix: &str, partial: bool| {
            tiles
                .iter()
                .filter(|(p, _)| p.starts_with(prefix) && p.contains(".p/") == partial)
                .count()
        };
        assert_eq!(count("tile/0/", false), 273);
        assert_eq!(count("tile/1/", false), 1);
        assert_eq!(count("tile/2/", false), 0);
        let partial: Vec<&str> = tiles
            .iter()
            .map(|(p, _)| p.as_str())
            .filter(|p| p.contains(".p/"))
            .collect();
        assert_eq!(
            partial,
            vec!["tile/0/273.p/112", "tile/1/001.p/17", "tile/2/000.p/1"]
        );
        for (p, bytes) in &tiles {
            check_tile_len(p, bytes).unwrap();
        }
        // A tree of 256: a full level-0 tile and a level-1 tile of width 1, which holds the
        // level-0 tile's hash (the tree's root).
        let tree = Tree::of(&entries[..256]).unwrap();
        let tiles = tree.tiles_since(0);
        let paths: Vec<&str> = tiles.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, vec!["tile/0/000", "tile/1/000.p/1"]);
        assert_eq!(tiles[1].1, tree.root().0.to_vec());
    }

    /// The root is RFC 6962's Merkle Tree Hash, computed here the slow way for every size up
    /// to 300; one entry added changes O(log n) tiles.
    #[test]
    fn roots_are_rfc6962_and_growth_writes_few_tiles() {
        fn mth(leaves: &[Hash]) -> Hash {
            match leaves.len() {
                1 => leaves[0],
                n => {
                    // The largest power of two smaller than n.
                    let mut k = 1;
                    while k * 2 < n {
                        k *= 2;
                    }
                    tlog_tiles::node_hash(mth(&leaves[..k]), mth(&leaves[k..]))
                }
            }
        }
        let mut tree = Tree::new();
        let mut leaves = Vec::new();
        for i in 0..300u32 {
            let e = format!("entry {i}\n");
            tree.append(e.as_bytes()).unwrap();
            leaves.push(tlog_tiles::record_hash(e.as_bytes()));
            assert_eq!(tree.root(), mth(&leaves), "size {}", i + 1);
        }
        assert_eq!(Tree::new().root(), tlog_tiles::EMPTY_HASH);
        let old = tree.size();
        tree.append(b"one more").unwrap();
        let changed = tree.tiles_since(old);
        assert!(
            changed.len() <= 3,
            "{:?}",
            changed.iter().map(|t| &t.0).collect::<Vec<_>>()
        );
        // Proofs check against the roots.
        let proof = tree.prove_entry(7, 200).unwrap();
        tlog_tiles::check_record(&proof, 200, tree.root_at(200).unwrap(), 7, leaves[7]).unwrap();
        let proof = tree.prove_consistency(100, 301).unwrap();
        tlog_tiles::check_tree(&proof, 301, tree.root(), 100, tree.root_at(100).unwrap()).unwrap();
    }

    #[test]
    fn bundles_hold_uint16_prefixed_entries_and_are_checked_on_reading() {
        let entries: Vec<String> = (0..300)
            .map(|i| format!("fencepost/x/v1\nn {i}\n"))
            .collect();
        let bundles = bundles_since(&entries, 0);
        assert_eq!(bundles[0].0, "tile/entries/000");
        assert_eq!(bundles[1].0, "tile/entries/001.p/44");
        assert_eq!(&bundles[0].1[..2], &(entries[0].len() as u16).to_be_bytes());
        let back = parse_bundle(&bundles[1].0, &bundles[1].1).unwrap();
        assert_eq!(back[43], entries[299].as_bytes());
        // Growing from 290 rewrites only the partial bundle.
        let grown = bundles_since(&entries, 290);
        assert_eq!(grown.len(), 1);
        assert!(parse_bundle("tile/entries/001.p/45", &bundles[1].1).is_err());
        assert!(parse_bundle(&bundles[1].0, &bundles[1].1[..10]).is_err());
        let long = vec![b'a'; MAX_ENTRY + 1];
        assert!(matches!(
            Tree::new().append(&long),
            Err(TlogError::EntryTooLong { .. })
        ));
    }
}
