//! Listing the collections' folders and reading what changed.
//!
//! A file that cannot be read or does not validate is a [`Broken`] entry, never an error of
//! the whole scan: it holds back its own item (named when it can be told, see
//! [`super::item::guess_name`]) and nothing else. Only a folder that cannot be listed stops
//! the scan: a tree that cannot be listed completely must not be acted on (its files would
//! look removed, and their pages be withdrawn).

mod links;

use super::item::Item;
use super::read::read_item_or_name;
use super::{relative, ContentError};
use fencepost_config::collections::{Collection, Collections};
use fencepost_core::clock::Instant;
use fencepost_core::item::{FileStat, FolderStats, ItemName};
use links::{check_collection_dir, check_linked};
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// A file that was read in this scan.
#[derive(Debug, Clone)]
pub struct ReadFile {
    /// Site-relative path with `/` separators.
    pub path: String,
    pub stat: FileStat,
    pub source_hash: String,
    pub item: Item,
}

/// A file that could not be read or does not validate.
#[derive(Debug)]
pub struct Broken {
    pub path: String,
    pub error: ContentError,
    /// The item it is (or was) the file of, when that can be told: held as it is.
    pub name: Option<ItemName>,
}

#[derive(Debug, Default)]
pub struct Scan {
    /// Files whose stat matched the cache: (path, item).
    pub unchanged: Vec<(String, ItemName)>,
    /// New or changed files, read and parsed.
    pub read: Vec<ReadFile>,
    pub broken: Vec<Broken>,
}

impl Scan {
    /// Every item the tree has a file for, broken files' items included (they are held, not
    /// gone).
    pub fn present(&self) -> HashSet<ItemName> {
        let mut out = HashSet::with_capacity(self.unchanged.len() + self.read.len());
        out.extend(self.unchanged.iter().map(|(_, n)| n.clone()));
        out.extend(self.read.iter().map(|r| r.item.name.clone()));
        out.extend(self.held());
        out
    }

    /// Items held as they are because a file of theirs is broken.
    pub fn held(&self) -> impl Iterator<Item = ItemName> + '_ {
        self.broken.iter().filter_map(|b| b.name.clone())
    }
}

/// The listed files: (site-relative path, stat), and entries that are no readable file.
#[derive(Debug, Default)]
pub struct Listing {
    pub files: Vec<(String, FileStat)>,
    pub broken: Vec<Broken>,
}

/// The collection whose folder holds `rel` (a site-relative path).
pub fn owner<'a>(collections: &'a Collections, rel: &str) -> Option<&'a Collection> {
    let under = rel.strip_prefix("content/")?;
    let name = under.rsplit('/').next()?;
    // `hello.fr.md` beside `hello.md` is the French translation's (docs/languages.md).
    let beside = (collections.languages.of_file_name(name)).map(|(l, _)| l.code.as_str());
    collections.list.iter().find(|c| {
        under
            .strip_prefix(c.dir.as_str())
            .is_some_and(|r| r.starts_with('/'))
            && match beside {
                Some(code) => c.beside && c.lang == code,
                None => !c.beside,
            }
    })
}

/// Item files of every collection (`content/<dir>/**/*.md`, hidden files skipped), sorted per
/// collection, as absolute paths, without a stat per regular file. A symlink named `*.md` is
/// followed when it leads to a regular file inside `content/`; any other entry by that name
/// (a symlink leading out or nowhere, a FIFO, a socket) is a broken file.
pub fn list_item_paths(
    root: &Path,
    collections: &Collections,
) -> Result<(Vec<PathBuf>, Vec<Broken>), ContentError> {
    let (groups, broken) = list_item_groups(root, collections)?;
    Ok((
        groups
            .into_iter()
            .flat_map(|(dir, names)| names.into_iter().map(move |n| dir.join(n)))
            .collect(),
        broken,
    ))
}

type Groups = Vec<(PathBuf, Vec<std::ffi::OsString>)>;

/// [`list_item_paths`] as runs of names in one folder, in the same order: (folder, names).
fn list_item_groups(
    root: &Path,
    collections: &Collections,
) -> Result<(Groups, Vec<Broken>), ContentError> {
    let mut out = Vec::new();
    let mut broken = Vec::new();
    // Translations kept beside their originals are listed with them.
    for c in collections.list.iter().filter(|c| !c.beside) {
        let dir = root.join("content").join(&c.dir);
        if !dir.exists() {
            continue;
        }
        check_collection_dir(root, &dir)?;
        let mut linked = HashSet::new();
        let from = out.len();
        walk_items(root, &dir, &mut out, &mut broken, &mut linked)?;
        // The list page's text (`list_text`) is the site's own, not an item.
        let texts: Vec<&str> = (collections.list.iter())
            .filter(|t| t.name == c.name || (t.beside && t.original.as_ref() == Some(&c.name)))
            .filter_map(|t| t.list_text.as_deref())
            .collect();
        if !texts.is_empty() {
            for (_, names) in out[from..].iter_mut().filter(|(d, _)| *d == dir) {
                names.retain(|n| {
                    !texts
                        .iter()
                        .any(|t| n.as_os_str() == std::ffi::OsStr::new(t))
                });
            }
            out.retain(|(_, names)| !names.is_empty());
        }
    }
    Ok((out, broken))
}

/// One folder of the item walk: names sorted by bytes, each subfolder walked where its name
/// sorts (so the order is the full paths' order). The file type comes from the directory
/// entry, with no stat. A symlink to a folder is followed when it stays inside `content/`
/// (the rule for symlinked files) and named as an error otherwise, never skipped: skipping it
/// would leave its edits unpublished while its removals withdraw. `linked` holds the folders
/// reached through links, so a loop is named too.
fn walk_items(
    root: &Path,
    dir: &Path,
    out: &mut Groups,
    broken: &mut Vec<Broken>,
    linked: &mut HashSet<PathBuf>,
) -> Result<(), ContentError> {
    let read_err = |source| ContentError::Read {
        path: dir.to_path_buf(),
        source,
    };
    let mut entries = Vec::new();
    for e in std::fs::read_dir(dir).map_err(read_err)? {
        let e = e.map_err(read_err)?;
        let kind = e.file_type().map_err(read_err)?;
        entries.push((e.file_name(), kind));
    }
    entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut names = Vec::new();
    for (name, kind) in entries {
        let linked_dir = kind.is_symlink() && dir.join(&name).is_dir();
        if kind.is_dir() || linked_dir {
            if !names.is_empty() {
                out.push((dir.to_path_buf(), std::mem::take(&mut names)));
            }
            let sub = dir.join(&name);
            if linked_dir {
                let real = check_linked(root, &sub, "folder")?;
                if !linked.insert(real.clone())
                    || dir.canonicalize().is_ok_and(|d| d.starts_with(&real))
                {
                    return Err(ContentError::Unreadable {
                        path: PathBuf::from(relative(root, &sub)),
                        why: format!(
                            "is a symlink to {}, which it is already inside or was reached through another link: a loop",
                            real.display()
                        ),
                    });
                }
            }
            walk_items(root, &sub, out, broken, linked)?;
            continue;
        }
        let text = name.to_string_lossy();
        if text.starts_with('.') || !text.ends_with(".md") {
            continue;
        }
        if !kind.is_file() {
            if let Err(error) = check_linked(root, &dir.join(&name), "file") {
                broken.push(Broken {
                    path: relative(root, &dir.join(&name)),
                    error,
                    name: None,
                });
                continue;
            }
        }
        names.push(name);
    }
    if !names.is_empty() {
        out.push((dir.to_path_buf(), names));
    }
    Ok(())
}

/// Every item file with its stat, stat-ed in parallel: on a large tree the stats are most of
/// the scan. Each is taken relative to its open folder (`statat`), so the kernel resolves one
/// name, not the whole path.
pub fn list_item_files(root: &Path, collections: &Collections) -> Result<Listing, ContentError> {
    let (groups, broken) = list_item_groups(root, collections)?;
    let many = collections.languages.many();
    let mut files = Vec::with_capacity(groups.iter().map(|(_, n)| n.len()).sum());
    for (dir, names) in groups {
        let folder_stat = FolderStats::open(&dir).map_err(|source| ContentError::Read {
            path: dir.clone(),
            source,
        })?;
        let folder = relative(root, &dir);
        let stats: Vec<Result<Option<(String, FileStat)>, ContentError>> = names
            .into_par_iter()
            .map(|name| {
                let stat = folder_stat
                    .stat(&dir, &name)
                    .map_err(|source| ContentError::Read {
                        path: dir.join(&name),
                        source,
                    })?;
                let Some(mut stat) = stat else {
                    // Deleted between the listing and the stat: not there.
                    return Ok(None);
                };
                let text = name.to_string_lossy();
                if text == "index.md" || (text.starts_with("index.") && many) {
                    stat = super::bundle::stat_with_resources(&dir, stat);
                }
                let rel = format!("{folder}/{}", text.replace('\\', "/"));
                if many {
                    let original = owner(collections, &rel)
                        .and_then(|c| super::translation::original_path(collections, c, &rel));
                    if let Some(o) = original {
                        stat = super::translation::with_original(root, &o, stat);
                    }
                }
                Ok(Some((rel, stat)))
            })
            .collect();
        for r in stats {
            files.extend(r?);
        }
    }
    Ok(Listing { files, broken })
}

/// Scans the listed files against the stat cache: unchanged files by their cached item,
/// changed ones read and parsed (in parallel), broken ones reported with their item, and
/// every item claimed by two files held and reported with both.
pub fn scan_listed(
    root: &Path,
    collections: &Collections,
    listing: Listing,
    cache: &fencepost_core::item::StatCache,
    max_item_bytes: u64,
) -> Scan {
    let racy_after = SystemTime::now()
        .checked_sub(super::RACY_WINDOW)
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(i64::MAX);
    let mut scan = Scan {
        broken: listing.broken,
        ..Scan::default()
    };
    // A broken entry the ledger knows holds the item it was.
    for b in &mut scan.broken {
        if b.name.is_none() {
            b.name = cache.get(&b.path).map(|c| c.name.clone());
        }
    }
    let mut to_read = Vec::new();
    let mut unchanged = Vec::with_capacity(listing.files.len());
    for (rel, stat) in listing.files {
        match cache.get(&rel) {
            Some(c) if c.stat == stat && stat.changed_ns < racy_after => {
                unchanged.push((rel, c.name.clone()));
            }
            _ => to_read.push((rel, stat)),
        }
    }
    scan.unchanged = unchanged;
    // A file deleted after it was listed is simply not there: the run treats it as gone, and
    // a withdrawal is re-checked under the item's lease anyway.
    let results: Vec<Option<Result<ReadFile, Broken>>> = to_read
        .into_par_iter()
        .map(|(rel, stat)| {
            let coll = owner(collections, &rel)?;
            match read_item_or_name(root, &rel, max_item_bytes, coll, collections) {
                Ok((item, source_hash)) => Some(Ok(ReadFile {
                    path: rel,
                    stat,
                    source_hash,
                    item,
                })),
                Err((e, _)) if e.is_not_found() => None,
                Err((error, name)) => {
                    let name = name.or_else(|| cache.get(&rel).map(|c| c.name.clone()));
                    Some(Err(Broken {
                        path: rel,
                        error,
                        name,
                    }))
                }
            }
        })
        .collect();
    for r in results.into_iter().flatten() {
        match r {
            Ok(f) => scan.read.push(f),
            Err(b) => scan.broken.push(b),
        }
    }
    hold_duplicates(&mut scan);
    scan
}

/// Whether a file read in this scan carries taxonomy terms (then [`hold_respelled_terms`]
/// has something to check).
pub fn reads_terms(scan: &Scan) -> bool {
    scan.read.iter().any(|r| !r.item.terms.is_empty())
}

/// A term spelt two ways with one URL slug (`Rust` in one file, `rust` in another): the
/// spelling already published (`known`: (file, terms JSON) of published pages) wins, then
/// that of a file whose item is due at `now`, then the first file by path; each later one is
/// a broken file naming both. So an embargoed file never holds back a due one: of the two,
/// the embargoed file is held (and it is not due yet anyway). (A spelling that still reaches
/// the ledger twice, by files changed apart, is reconciled by the build: see
/// `build::terms`.)
pub fn hold_respelled_terms(
    scan: &mut Scan,
    known: &[(String, String)],
    now: Instant,
    collections: &Collections,
) {
    if !reads_terms(scan) {
        return;
    }
    scan.read.sort_by(|a, b| a.path.cmp(&b.path));
    // Each language has terms of its own (`/fr/tags/meta/` is not `/tags/meta/`).
    let lang = |path: &str| owner(collections, path).map_or(String::new(), |c| c.lang.clone());
    let mut first = published_spellings(scan, known, &lang);
    let mut order: Vec<usize> = (0..scan.read.len()).collect();
    order.sort_by_key(|&i| (scan.read[i].item.due > now, i));
    let mut bad: Vec<(usize, Broken)> = Vec::new();
    for i in order {
        let r = &scan.read[i];
        let language = lang(&r.path);
        'file: for (tax, t) in terms_of(&r.item.terms) {
            let slug = fencepost_config::taxonomies::term_slug(&t);
            match first.get(&(language.clone(), tax.clone(), slug.clone())) {
                Some((spelt, path)) if *spelt != t && *path != r.path => {
                    let why = format!(
                        "the term {t:?} has the URL slug {slug:?}, as {spelt:?} in {path} has: spell it the same in both files"
                    );
                    let error = ContentError::Invalid {
                        path: r.path.clone().into(),
                        line: None,
                        key: tax,
                        why,
                    };
                    let name = Some(r.item.name.clone());
                    bad.push((
                        i,
                        Broken {
                            path: r.path.clone(),
                            error,
                            name,
                        },
                    ));
                    break 'file;
                }
                Some(_) => {}
                None => {
                    first.insert((language.clone(), tax, slug), (t, r.path.clone()));
                }
            }
        }
    }
    bad.sort_by_key(|(i, _)| *i);
    for (i, b) in bad.into_iter().rev() {
        scan.read.remove(i);
        scan.broken.push(b);
    }
}

/// (language, taxonomy, slug) → (spelling, file) of the terms already published, each file's by path.
/// A file read again with the terms it was published with (a touched file, one inside the
/// racy window) still holds its spelling; one whose terms changed does not.
fn published_spellings(
    scan: &Scan,
    known: &[(String, String)],
    lang: &dyn Fn(&str) -> String,
) -> HashMap<(String, String, String), (String, String)> {
    let read: HashMap<&str, &str> = scan
        .read
        .iter()
        .map(|r| (r.path.as_str(), r.item.terms.as_str()))
        .collect();
    let mut seeds: Vec<&(String, String)> = known
        .iter()
        .filter(|(p, t)| read.get(p.as_str()).is_none_or(|now| now == t))
        .collect();
    seeds.sort();
    let mut first = HashMap::new();
    for (path, terms) in seeds {
        let language = lang(path);
        for (tax, t) in terms_of(terms) {
            let slug = fencepost_config::taxonomies::term_slug(&t);
            first
                .entry((language.clone(), tax, slug))
                .or_insert_with(|| (t, path.clone()));
        }
    }
    first
}

/// Every (taxonomy, term) of a terms JSON object, in order; nothing for anything else.
fn terms_of(terms: &str) -> Vec<(String, String)> {
    let Ok(serde_json::Value::Object(m)) = serde_json::from_str(terms) else {
        return Vec::new();
    };
    m.into_iter()
        .flat_map(|(tax, list)| {
            let list = match list {
                serde_json::Value::Array(a) => a,
                _ => Vec::new(),
            };
            list.into_iter()
                .filter_map(|t| t.as_str().map(str::to_string))
                .map(move |t| (tax.clone(), t))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Two files claiming one item: neither is taken, both are reported, the item is held. Only a
/// file read in this scan can claim another's item (unchanged files were checked when they
/// were read), so each read file is checked against the others and the unchanged ones.
fn hold_duplicates(scan: &mut Scan) {
    if scan.read.is_empty() {
        return;
    }
    // Keyed ignoring case: `FPSA-1` and `Fpsa-1` are one file on a case-insensitive file
    // system or bucket, so they clash like two files of one id.
    let folded = |n: &ItemName| (n.collection.clone(), n.id.to_ascii_lowercase());
    let mut read: HashMap<_, (&ItemName, &str)> = HashMap::with_capacity(scan.read.len());
    // Each clash: (name, path) of both files.
    let mut clashes: Vec<[(ItemName, String); 2]> = Vec::new();
    for r in &scan.read {
        if let Some((n, first)) = read.insert(folded(&r.item.name), (&r.item.name, &r.path)) {
            clashes.push([
                (n.clone(), first.to_string()),
                (r.item.name.clone(), r.path.clone()),
            ]);
        }
    }
    for (path, name) in &scan.unchanged {
        if let Some((n, other)) = read.get(&folded(name)) {
            clashes.push([
                (name.clone(), path.clone()),
                ((*n).clone(), other.to_string()),
            ]);
        }
    }
    if clashes.is_empty() {
        return;
    }
    let held: HashSet<ItemName> = clashes.iter().flatten().map(|c| c.0.clone()).collect();
    scan.unchanged.retain(|(_, n)| !held.contains(n));
    scan.read.retain(|r| !held.contains(&r.item.name));
    for mut pair in clashes {
        pair.sort_by(|a, b| a.1.cmp(&b.1));
        let [a, b] = pair;
        for ((name, path), (other_name, other)) in [(&a, &b), (&b, &a)] {
            let error = if name == other_name {
                ContentError::DuplicateId {
                    name: name.clone(),
                    first: other.clone(),
                    second: path.clone(),
                }
            } else {
                ContentError::IdCase {
                    name: name.clone(),
                    other: other_name.id.to_string(),
                    file: path.clone(),
                    other_file: other.clone(),
                }
            };
            scan.broken.push(Broken {
                path: path.clone(),
                error,
                name: Some(name.clone()),
            });
        }
    }
}

/// `.md` files under `content/` that no collection owns and that are not plain pages
/// (`content/<slug>.md`): named in a warning, never silently skipped.
pub fn unclaimed(root: &Path, collections: &Collections) -> Vec<String> {
    let content = root.join("content");
    let owned: Vec<PathBuf> = collections
        .list
        .iter()
        .map(|c| content.join(&c.dir))
        .collect();
    let mut out = Vec::new();
    let walk = walkdir::WalkDir::new(&content)
        .min_depth(1)
        .into_iter()
        .filter_entry(|e| {
            !e.file_name().to_string_lossy().starts_with('.')
                && !owned.iter().any(|o| o == e.path())
        });
    for e in walk.flatten() {
        let name = e.file_name().to_string_lossy();
        if e.depth() > 1 && name.ends_with(".md") && !e.file_type().is_dir() {
            out.push(relative(root, e.path()));
        }
    }
    out.sort();
    out
}
