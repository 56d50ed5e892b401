//! A rollback on a site that keeps a transparency log: the log grows, it never goes back.
//!
//! The revision rolled back to was built with the log as it was then, shorter than the one
//! readers have seen since. So before the pointer moves, its folder is re-issued: the same
//! files, and the log brought to it — a change entry for every item whose state the log says
//! otherwise than the folder serves (an update or a return to the folder's JSON, a
//! withdrawal of an item it does not have), then its revision entry — with tiles and a signed
//! checkpoint that extend every checkpoint served before. The log is caught up with that
//! revision, so the next build announces the way forward again.
//!
//! A crash after the entries are appended and before the folder is in place leaves the
//! served log behind the ledger's (a prefix: consistent, never backwards); `rollback` run
//! again appends nothing more and finishes.

use super::{finish_append, write_files};
use crate::report::BuildError;
use crate::well_known::{served_items, LOG_DIR};
use fencepost_ledger::transparency as stored;
use fencepost_ledger::{Ledger, LedgerError, Tx};
use fencepost_output::id::RevisionId;
use fencepost_output::manifest::Manifest;
use fencepost_output::public::Public;
use fencepost_output::revision::Staging;
use fencepost_site::Site;
use fencepost_tlog::entry::{ChangeKind, Entry};
use std::collections::BTreeMap;

/// Re-issues the complete, not live, revision folder `id` with the site's log brought to it
/// (see the module doc). On a site whose log is turned off, a folder built while it was on
/// is re-issued without its log: it serves none, as every revision built since does — never
/// the shorter log it was built with, which readers who saw a later one would take for a log
/// rewritten. Nothing for a folder without a log on such a site.
pub fn reissue(
    site: &Site,
    ledger: &mut Ledger,
    public: &Public,
    id: &RevisionId,
) -> Result<(), BuildError> {
    let dir = public.revision_dir(id);
    let signer = super::signer(site)?;
    let old = Manifest::read(&dir)?;
    let mut manifest = old.clone();
    manifest.files.retain(|e| !e.path.starts_with(LOG_DIR));
    let Some(signer) = signer else {
        if manifest.files.len() == old.files.len() {
            return Ok(());
        }
        tracing::warn!(revision = %id, "the log is turned off: the revision rolled back to is re-issued without the log it was built with");
        return restage(public, &dir, id, &mut manifest);
    };
    let digest = super::files_digest(&manifest);
    let files = manifest.files.iter();
    let served = served_items(files.map(|e| (e.path.as_str(), e.sha256.as_str())));
    let audit = old.audit_tip.as_ref().and_then(|t| t.hash.clone());
    let ledger_id = old.ledger_id.clone().unwrap_or_default();
    let revision = revision_entry(&ledger_id, id, &digest, audit.as_deref());
    let appended = roll_back_to(ledger, &served, &revision, id.revision)?;
    fencepost_core::fail_point!("rollback.after_log_append");
    let staging = Staging::create(public.dir(), &id.to_string())?;
    for e in &manifest.files {
        let to = crate::sink::place(&staging.path, &e.path)?;
        crate::sink::link_or_copy(&dir.join(&e.path), &to)?;
    }
    let prev = (dir.clone(), fencepost_output::carried::Carried::read(&dir)?);
    write_files(
        ledger,
        &signer,
        appended,
        &mut manifest,
        &staging.path,
        Some(&prev),
    )?;
    staging.replace_revision(&manifest, &id.to_string())?;
    Ok(())
}

/// The folder `dir` of revision `id` re-issued with `manifest`'s files only (all of them in
/// `dir`, linked).
fn restage(
    public: &Public,
    dir: &std::path::Path,
    id: &RevisionId,
    manifest: &mut Manifest,
) -> Result<(), BuildError> {
    let staging = Staging::create(public.dir(), &id.to_string())?;
    for e in &manifest.files {
        let to = crate::sink::place(&staging.path, &e.path)?;
        crate::sink::link_or_copy(&dir.join(&e.path), &to)?;
    }
    staging.replace_revision(manifest, &id.to_string())?;
    Ok(())
}

/// A revision entry's text.
pub fn revision_entry(
    ledger_id: &str,
    id: &RevisionId,
    files_digest: &str,
    audit: Option<&str>,
) -> String {
    Entry::Revision {
        ledger: ledger_id.to_string(),
        revision: id.revision as u64,
        build: id.fingerprint.clone(),
        manifest: files_digest.to_string(),
        audit: audit.unwrap_or(super::ZERO).to_string(),
    }
    .to_text()
}

/// The log brought to a revision rolled back to, which serves `served` (`collection/id` →
/// the SHA-256 of its JSON there), in one transaction: its change entries, then `revision`
/// (see the module doc); the log's size and root after.
pub fn roll_back_to(
    ledger: &mut Ledger,
    served: &BTreeMap<String, String>,
    revision: &str,
    at: i64,
) -> Result<(u64, fencepost_tlog::Hash), LedgerError> {
    ledger.write(|tx| roll_back(tx, served, revision.to_string(), at))
}

/// The change entries that take the log's view of each revealed item to what `served` holds
/// (`collection/id` → the SHA-256 of its JSON there), then `revision`.
fn roll_back(
    tx: &Tx<'_>,
    served: &BTreeMap<String, String>,
    revision: String,
    at: i64,
) -> Result<(u64, fencepost_tlog::Hash), LedgerError> {
    tx.rows("audit.lock", &[])?;
    let none = fencepost_core::digest::sha256_hex(b"");
    let mut texts = Vec::new();
    for (id, item, shown, digest) in stored::shown_items(tx)? {
        let (change, now) = match (served.get(&item), shown.as_str()) {
            (Some(d), "public") if *d != digest => (ChangeKind::Update, d),
            (Some(d), "withdraw" | "expire") => (ChangeKind::Return, d),
            (None, "public") => (ChangeKind::Withdraw, &none),
            _ => continue,
        };
        let shown = match change {
            ChangeKind::Withdraw => "withdraw",
            _ => "public",
        };
        stored::shown(tx, id, shown, now)?;
        texts.push(
            Entry::Change {
                item,
                change,
                digest: now.clone(),
            }
            .to_text(),
        );
    }
    finish_append(tx, texts, revision, at)
}
