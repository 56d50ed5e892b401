//! Hosts that disagree (issue 35.7). Several `run` hosts share one PostgreSQL ledger, each
//! syncing its own checkout into it. When two checkouts have one file differently, each
//! host's sync wrote its version over the other's, and each write made a new publication:
//! two hosts whose checkouts differed by one file flipped that item 72 times in 20 s.
//!
//! The rule: a host never writes back, over another host's change, what its own checkout
//! has had all along. Each host remembers what its checkout had at each path when it last
//! scanned (`stat_cache::Local`, kept beside its state for a shared ledger), so it tells its
//! own changes from another host's:
//! - a file it reads now as it had it at its last scan, while the ledger has something
//!   else: another host changed it, and writing it would undo that change;
//! - a file its checkout lacks and never had, while the ledger has it: withdrawing it would
//!   undo another host's addition.
//!
//! If the ledger's row was written by another host, such an item is parked, naming both hosts
//! and what each has (`status`, the run's JSON, `/metrics`). It stays as the ledger has it,
//! and nothing is published for it until the checkouts agree — this host reads the ledger's
//! version and its sync releases the item, or the other host's checkout comes round to this
//! one's and its write (a change of its own) re-arms it — or a person runs `publish --retry
//! ID` on the host whose file is right, which writes that host's version.
//!
//! Why a host's memory and not a time window ("undone within N minutes"): how far a
//! checkout may lag (a pull every five minutes, a queued CI job) is nothing a window can
//! know, while a host always knows whether its own file changed. A host that remembers
//! nothing (a stateless runner, a first run) trusts its checkout as before: it cannot tell,
//! and a runner's checkout is the commit it was given. A SQLite ledger has one host.

use super::stat_cache::Local;
use fencepost_core::item::ItemName;
use fencepost_ledger::items::hosts::{Candidate, Verdict};
use fencepost_ledger::items::Seen;
use fencepost_site::Site;
use std::collections::HashSet;

/// This host's name in a shared ledger: `FENCEPOST_HOST` when set, else the machine's name
/// and the site's folder (two checkouts on one machine are two hosts).
pub fn host_name(site: &Site) -> String {
    match std::env::var("FENCEPOST_HOST") {
        Ok(h) if !h.trim().is_empty() => h.trim().to_string(),
        _ => format!(
            "{}:{}",
            fencepost_core::os::host_name(),
            site.root.display()
        ),
    }
}

/// The writes a sync would make that may undo another host's change: files read as this
/// host had them at its last scan while the ledger has them otherwise, and files this host
/// would mark gone that it never had. `retry` names items a person re-armed here: this
/// host's version of those is written.
pub(super) fn candidates<'a>(
    local: Option<&Local>,
    cache: &fencepost_core::item::StatCache,
    seen: &[Seen<'a>],
    gone: &[(&'a str, &'a ItemName)],
    retry: &HashSet<ItemName>,
) -> Vec<Candidate<'a>> {
    let Some(local) = local.filter(|l| l.remembers()) else {
        return Vec::new();
    };
    let undoes = |s: &Seen<'_>| {
        local.last_hash(s.path) == Some(s.source_hash)
            && cache.get(s.path).map(|c| c.source_hash.as_str()) != Some(s.source_hash)
    };
    let read = seen.iter().filter(|s| undoes(s)).map(|s| Candidate {
        name: s.name,
        hash: Some(s.source_hash),
    });
    let lacked = gone
        .iter()
        .filter(|(path, _)| local.last_hash(path).is_none())
        .map(|(_, name)| Candidate { name, hash: None });
    read.chain(lacked)
        .filter(|c| !retry.contains(c.name))
        .collect()
}

/// The items a sync leaves alone after [`fencepost_ledger::items::hosts::judge`]: every
/// candidate not to be synced as usual (parked, or raced and left to the next run).
pub(super) fn left_alone<'a>(
    candidates: &[Candidate<'a>],
    verdicts: &[Verdict],
) -> HashSet<&'a ItemName> {
    candidates
        .iter()
        .zip(verdicts)
        .filter(|(_, v)| **v != Verdict::Sync)
        .map(|(c, _)| c.name)
        .collect()
}
