//! Step 1 of a publish run: scan the collections' folders against the stat cache and record
//! what they say in the ledger. Broken files are reported and their items held as they are;
//! everything else is synced.

use super::drafts::{self, Draft};
use super::hosts;
use super::PublishError;
use fencepost_core::clock::{Clock, Instant};
use fencepost_core::item::ItemName;
use fencepost_core::item::Shown;
use fencepost_ledger::items::hosts::{Candidate, Verdict};
use fencepost_ledger::items::State;
use fencepost_ledger::items::{self, Seen};
use fencepost_ledger::{self as ledger, Ledger};
use fencepost_site::content::{self, Broken, ContentError, Scan};
use fencepost_site::Site;
use std::collections::HashSet;

/// A file that cannot be read or does not validate, as the run reports it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Invalid {
    pub file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    pub error: String,
    /// The URL the item would have had, when another page of the site has it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The item held as it is (nothing published, updated or withdrawn), when it is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<serde_json::Value>,
}

/// What the scan left for planning.
pub struct Synced {
    /// Items held because a file of theirs is broken: not planned at all this run.
    pub held: HashSet<ItemName>,
    pub invalid: Vec<Invalid>,
    pub files_read: usize,
    /// `.md` files no collection owns.
    pub unclaimed: Vec<String>,
    /// The items of `held`, with their files, errors and due instants.
    pub held_items: Vec<Held>,
    /// Items parked because this host's checkout disagrees with another's (`hosts.rs`).
    pub disagreed: Vec<Disagreed>,
    /// Items whose file says `draft = true` (`drafts.rs`).
    pub drafts: Vec<Draft>,
}

fn invalid(b: &Broken, site: &Site) -> Invalid {
    let (line, key) = match &b.error {
        ContentError::Invalid { line, key, .. } => (*line, Some(key.clone())),
        ContentError::FrontMatter { line, .. } => (Some(*line), None),
        ContentError::DuplicateId { .. } | ContentError::IdCase { .. } => {
            (None, Some("id".to_string()))
        }
        ContentError::UrlTaken { line, .. } => (*line, Some("id".to_string())),
        ContentError::AliasTaken { line, .. } => (*line, Some("aliases".to_string())),
        _ => (None, None),
    };
    Invalid {
        file: b.path.clone(),
        line,
        key,
        error: b.error.to_string(),
        url: match &b.error {
            ContentError::UrlTaken { url, .. } | ContentError::AliasTaken { url, .. } => {
                Some(url.clone())
            }
            _ => None,
        },
        item: b.name.as_ref().map(|n| n.shown(site.collections.naming)),
    }
}

/// Items the ledger has a file for that the tree no longer has: neither listed unchanged, nor
/// read, nor held. Files the scan missed but that are there again now (an editor's
/// save-by-rename, a checkout) are not taken for gone: the next scan reads them. A file no
/// collection owns any more (its collection renamed or removed from fencepost.toml) is gone,
/// and so is the item of a file that now names another item (its `id` was changed): the old
/// id has no file, exactly as if its file had been removed.
fn gone<'c>(
    site: &Site,
    cache: &'c fencepost_core::item::StatCache,
    scan: &Scan,
) -> Vec<(&'c str, &'c ItemName)> {
    // Every known file listed and unchanged (each listed path is one cache entry): nothing is
    // gone, and no set of every item is built (the common run: nothing or something new).
    if scan.unchanged.len() == cache.len() {
        return Vec::new();
    }
    let present = scan.present();
    let renamed: std::collections::HashMap<&str, &ItemName> = scan
        .read
        .iter()
        .map(|f| (f.path.as_str(), &f.item.name))
        .collect();
    cache
        .iter()
        .filter(|(path, c)| {
            !present.contains(&c.name)
                && (renamed
                    .get(path.as_str())
                    .is_some_and(|now| **now != c.name)
                    || !site.root.join(path).exists()
                    || content::owner(&site.collections, path).is_none())
        })
        .map(|(path, c)| (path.as_str(), &c.name))
        .collect()
}

/// What the tree says, read but not yet written to the ledger: the scan, the stat cache it
/// was made against, and this host's stats of a shared ledger.
pub(super) struct Tree {
    pub(super) scan: Scan,
    cache: fencepost_core::item::StatCache,
    local: Option<super::stat_cache::Local>,
}

/// Lists and reads the tree against the stat cache, with every check a file must pass
/// (term spellings, plain pages, URLs). Writes nothing: `status` reads the held items
/// from it too.
pub(super) fn read_tree(
    site: &Site,
    ledger: &mut Ledger,
    clock: &Clock,
) -> Result<Tree, PublishError> {
    // The tree is listed and stat-ed on another thread while the stat cache is read (each is
    // about a tenth of a second at 100,000 files).
    let (listed, cached) = std::thread::scope(|scope| {
        let lister = scope.spawn(|| content::list_item_files(&site.root, &site.collections));
        let cached = ledger.read(|tx| Ok((items::stat_cache(tx)?, ledger::status::ledger_id(tx)?)));
        (
            lister
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p)),
            cached,
        )
    });
    let (mut cache, ledger_id) = cached?;
    let listed = listed?;
    fencepost_core::fail_point!("publish.after_list");
    // A shared ledger keeps no stats: this host's come from its own file.
    let local = ledger
        .shared()
        .then(|| super::stat_cache::Local::load(site, &ledger_id));
    if let Some(l) = &local {
        l.overlay(&mut cache);
    }
    let mut scan: Scan = content::scan_listed(
        &site.root,
        &site.collections,
        listed,
        &cache,
        site.config.publish.max_item_bytes,
    );
    if content::scan::reads_terms(&scan) {
        // Spellings already published win over a new one with the same slug.
        let known = ledger.read(items::terms_by_file)?;
        content::scan::hold_respelled_terms(&mut scan, &known, clock.now(), &site.collections);
    }
    let plain = super::claims::check_plain_pages(site, &mut scan);
    super::claims::hold_taken_urls(site, ledger, &mut scan, &plain)?;
    super::aliases::hold_taken_aliases(site, ledger, &mut scan, &plain)?;
    super::claims::hold_oversized(ledger, &mut scan);
    Ok(Tree { scan, cache, local })
}

/// Scans and syncs. Fails only when a folder cannot be listed or the ledger cannot be
/// written: a broken file is reported in [`Synced::invalid`]. `retry` names items re-armed by
/// a person on this host: its checkout's version of them is written even over another
/// host's (see `hosts.rs`).
pub fn scan_and_sync(
    site: &Site,
    ledger: &mut Ledger,
    clock: &Clock,
    phase: &dyn Fn(&str),
    retry: &HashSet<ItemName>,
) -> Result<Synced, PublishError> {
    let Tree { scan, cache, local } = read_tree(site, ledger, clock)?;
    phase("scan");
    fencepost_core::fail_point!("publish.after_scan");
    let now = clock.now();
    let gone = gone(site, &cache, &scan);
    let seen = seen(&scan);
    let collections = &site.collections;
    let due = |collection: &str, day: Option<&str>, explicit| {
        let c = collections.get(collection)?;
        let day = day.and_then(|d| chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").ok());
        c.due_at(day, explicit).ok()
    };
    let host = hosts::host_name(site);
    let candidates = hosts::candidates(local.as_ref(), &cache, &seen, &gone, retry);
    let verdicts = ledger.write(|tx| {
        let verdicts = items::hosts::judge(tx, &candidates, &host, now)?;
        let alone = hosts::left_alone(&candidates, &verdicts);
        let (drafts, gone_drafts) = drafts::settle(tx, &scan.read)?;
        let gone: Vec<&ItemName> = gone
            .iter()
            .map(|g| g.1)
            .filter(|n| !alone.contains(n))
            .chain(gone_drafts)
            .collect();
        if alone.is_empty() && drafts.is_empty() {
            items::sync(tx, &seen, &gone, &due, &host, now)?;
        } else {
            let seen: Vec<Seen<'_>> = seen
                .iter()
                .filter(|s| !alone.contains(s.name))
                .cloned()
                .chain(drafts)
                .collect();
            items::sync(tx, &seen, &gone, &due, &host, now)?;
        }
        commit_before_reveal(site, tx, &scan, now)?;
        Ok(verdicts)
    })?;
    if let Some(l) = local {
        l.save(&cache, &scan.read, &scan.present());
    }
    fencepost_core::fail_point!("publish.after_sync");
    let mut out = synced(site, &scan);
    out.held_items = held_of(site, ledger, &scan, now)?;
    out.disagreed = disagreed(site, &candidates, verdicts);
    out.drafts = drafts::listed(site, &scan.read);
    fencepost_core::drop_later((scan, cache));
    Ok(out)
}

/// Commitments to the items read of collections with `commit_before_reveal`, each to its
/// file's JSON under a fresh salt: for an item not public yet whose JSON is new or changed.
/// One still embargoed is logged now, in this transaction (a changed text as a `recommit`
/// naming the commitment it replaces), so the log holds it before its instant whatever runs
/// next; one due already is logged with its reveal by the build ("committed at its reveal":
/// the log never vouches that a text written after its instant was fixed before it).
fn commit_before_reveal(
    site: &Site,
    tx: &ledger::Tx<'_>,
    scan: &Scan,
    now: Instant,
) -> Result<(), ledger::LedgerError> {
    if !site.config.transparency.log {
        return Ok(());
    }
    for f in &scan.read {
        let item = &f.item;
        let committing = site
            .collections
            .get(&item.name.collection)
            .is_some_and(|c| c.commit_before_reveal);
        if !committing || item.draft {
            continue;
        }
        let json = item.transparency_json();
        let salt = fencepost_tlog::entry::fresh_salt();
        let commitment = fencepost_tlog::entry::commitment(&salt, json.as_bytes());
        let salt = hex::encode(salt);
        match item.due > now {
            true => {
                let logged = ledger::transparency::commit_before_instant(
                    tx,
                    &item.name,
                    &json,
                    &salt,
                    &commitment,
                )?;
                if let Some(index) = logged {
                    tracing::info!(item = %item.name, index, "commitment logged before the item's instant");
                }
            }
            false => {
                ledger::transparency::record_pending(tx, &item.name, &json, &salt, &commitment)?
            }
        }
    }
    Ok(())
}

/// The items parked for disagreeing checkouts, as the run reports them (each logged).
fn disagreed(site: &Site, candidates: &[Candidate<'_>], verdicts: Vec<Verdict>) -> Vec<Disagreed> {
    candidates
        .iter()
        .zip(verdicts)
        .filter_map(|(c, v)| match v {
            Verdict::Parked {
                disagreement,
                newly,
            } => {
                let id = Shown(c.name.shown(site.collections.naming));
                tracing::warn!(item = %id, newly, "{}", disagreement.describe());
                Some(Disagreed {
                    id,
                    disagreement,
                    newly,
                })
            }
            _ => None,
        })
        .collect()
}

/// An item parked because this host's checkout has it otherwise than the host whose write
/// the ledger keeps.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Disagreed {
    pub id: Shown,
    #[serde(flatten)]
    pub disagreement: items::Disagreement,
    /// Parked by this run (else it already was, for the same disagreement).
    pub newly: bool,
}

/// What the ledger is told of each file read (drafts apart: see `drafts.rs`).
fn seen(scan: &Scan) -> Vec<Seen<'_>> {
    scan.read
        .iter()
        .filter(|f| !f.item.draft)
        .map(super::seen::seen_of)
        .collect()
}

/// The run's account of the scan: items held for a broken file, the broken files, the files
/// no collection owns (each logged).
fn synced(site: &Site, scan: &Scan) -> Synced {
    for b in &scan.broken {
        tracing::warn!(file = %b.path, error = %b.error, "held: this file's item is left as it is");
    }
    let unclaimed = content::unclaimed(&site.root, &site.collections);
    for f in &unclaimed {
        tracing::warn!(file = %f, "belongs to no collection and is not a plain page (content/<name>.md): not published");
    }
    let mut invalid: Vec<Invalid> = scan.broken.iter().map(|b| invalid(b, site)).collect();
    // A file of static/ where fencepost keeps its own: no item to hold, the build leaves it out.
    for (file, error) in content::claims::reserved_static(&site.root) {
        tracing::warn!(file = %file, "refused: a path fencepost keeps for itself");
        invalid.push(Invalid {
            file,
            line: None,
            key: None,
            error,
            url: None,
            item: None,
        });
    }
    Synced {
        held: scan.held().collect(),
        invalid,
        files_read: scan.read.len(),
        unclaimed,
        held_items: Vec::new(),
        disagreed: Vec::new(),
        drafts: Vec::new(),
    }
}

/// An item held because a file of its is broken.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Held {
    /// The item, as the site names items.
    pub id: Shown,
    pub file: String,
    pub error: String,
    /// When it is due: from its file when that still reads so far, else as the ledger last
    /// accepted it; absent when neither can tell.
    pub due_at: Option<Instant>,
    /// It is due now (or public, with an edit waiting), or its due instant cannot be told:
    /// what is held is held from the public.
    pub due: bool,
}

/// The held items of `scan`, each with its due instant (see `held.rs`).
pub(super) fn held_of(
    site: &Site,
    ledger: &mut Ledger,
    scan: &Scan,
    now: Instant,
) -> Result<Vec<Held>, PublishError> {
    let mut out = Vec::new();
    for b in &scan.broken {
        let Some(name) = &b.name else { continue };
        let known = ledger.read(|tx| items::due_of(tx, name))?;
        let guessed = site.collections.get(&name.collection).and_then(|c| {
            let text = std::fs::read_to_string(site.root.join(&b.path)).ok()?;
            content::guess_due(&text, c)
        });
        let due_at = guessed.or(known.map(|k| k.0));
        let public = known.is_some_and(|k| k.1 == State::Published);
        out.push(Held {
            id: Shown(name.shown(site.collections.naming)),
            file: b.path.clone(),
            error: b.error.to_string(),
            due_at,
            due: public || due_at.is_none_or(|t| t <= now),
        });
    }
    Ok(out)
}
