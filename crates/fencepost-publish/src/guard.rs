//! Step 2b of a publish run: a mistyped `[collections.posts]` (`[collections.post]`), a
//! renamed folder or a collection dropped from `fencepost.toml` makes every file of that
//! collection look removed. A run that would withdraw every public item of a collection
//! because their files are gone (or because the collection is gone from the config) does
//! not: those withdrawals are held, the collection is named under `invalid` with the way to
//! do it on purpose (`publish --allow-withdraw-collection NAME`), everything else goes
//! ahead, and the run exits 1. Withdrawals the files ask for (`withdrawn = true`) and
//! expiries are on purpose and never held. A collection with one public item may lose it
//! (deleting the only post is an ordinary edit) unless the collection itself is gone.

use super::{Options, PublishError, Report};
use fencepost_config::collections::Collections;
use fencepost_ledger::items::{self, ItemView, State};
use fencepost_ledger::Ledger;
use std::collections::HashMap;

/// `due` without the withdrawals that would empty a collection by accident.
pub(super) fn keep_collections(
    ledger: &mut Ledger,
    due: Vec<ItemView>,
    collections: &Collections,
    opts: &Options,
    report: &mut Report,
) -> Result<Vec<ItemView>, PublishError> {
    // Withdrawals because the file is gone, per collection.
    let mut gone: HashMap<&str, usize> = HashMap::new();
    for v in &due {
        if v.state == State::Published
            && v.source_hash.is_none()
            && !report.expiring.contains(&v.id)
        {
            *gone.entry(v.name.collection.as_ref()).or_default() += 1;
        }
    }
    if gone.is_empty() {
        return Ok(due);
    }
    let public = ledger.read(items::published_by_collection)?;
    let configured = |c: &str| collections.get(c).is_some();
    let mut refused: Vec<String> = Vec::new();
    for (coll, n) in gone {
        let all = public.get(coll).copied().unwrap_or(0) as usize;
        let missing = !configured(coll);
        let allowed = opts.allow_withdraw_collection.iter().any(|a| a == coll);
        if n == all && (all >= 2 || missing) && !allowed {
            refused.push(coll.to_string());
        }
    }
    if refused.is_empty() {
        return Ok(due);
    }
    refused.sort();
    let mut kept = Vec::with_capacity(due.len());
    let mut held: HashMap<String, usize> = HashMap::new();
    for v in due {
        let c = v.name.collection.to_string();
        if refused.contains(&c) && v.state == State::Published && v.source_hash.is_none() {
            *held.entry(c).or_default() += 1;
        } else {
            kept.push(v);
        }
    }
    for c in refused {
        let n = held.get(&c).copied().unwrap_or(0);
        let why = if configured(&c) {
            format!("every file of collection {c} is gone")
        } else {
            format!("collection {c} is gone from fencepost.toml (a renamed or mistyped [collections.{c}] table?)")
        };
        let error = format!(
            "this run would withdraw every public item of collection {c} ({n}): {why}. Nothing of it was withdrawn. Put the table or folder back; to withdraw the whole collection on purpose, run `fencepost publish --allow-withdraw-collection {c}` (each withdrawal is audited)"
        );
        tracing::error!(collection = %c, items = n, "refused to withdraw a whole collection");
        report.invalid.push(super::Invalid {
            file: "fencepost.toml".into(),
            line: None,
            key: Some(format!("collections.{c}")),
            error,
            url: None,
            item: None,
        });
    }
    Ok(kept)
}
