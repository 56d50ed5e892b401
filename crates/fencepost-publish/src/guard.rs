//! Step 2b of a publish run: a mistyped `[collections.posts]` (`[collections.post]`), a
//! renamed folder or a collection dropped from `fencepost.toml` makes every file of that
//! collection look removed. A run that would withdraw every public item of a collection
//! because their files are gone (or because the collection is gone from the config) does
//! not: those withdrawals are held, the collection is named under `invalid` with the way to
//! do it on purpose (`publish --allow-withdraw-collection NAME`), everything else goes
//! ahead, and the run exits 1. Withdrawals the files ask for (`withdrawn = true`) and
//! expiries are on purpose and never held. A collection with one public item may lose it
//! (deleting the only post is an ordinary edit) unless the collection itself is gone.
//!
//! And whatever the collections: a run that would withdraw more of the site's public items
//! because their files are gone than `publish.mass_withdrawal_items` (3) and more than
//! `publish.mass_withdrawal_share` (10 %) of them withdraws none ([`keep_the_site`]). The
//! adversary is the wrong checkout: a new site made from a copy of another's fencepost.toml
//! (same id, same ledger URL), a checkout of another branch, a content folder moved away —
//! each looks exactly like every item deleted. Named under `invalid` with the count and the
//! way to do it on purpose (`publish --allow-mass-withdrawal`); `run` never does.

use super::{Options, PublishError, Report};
use fencepost_config::collections::Collections;
use fencepost_config::PublishConfig;
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

/// Whether item `v` of `due` would be withdrawn because its file is gone (not because it asks
/// to be, or expires).
fn file_gone(v: &ItemView, report: &Report) -> bool {
    v.state == State::Published && v.source_hash.is_none() && !report.expiring.contains(&v.id)
}

/// `due` without the withdrawals of a run that would take down more of the site than
/// `publish.mass_withdrawal_items` and `publish.mass_withdrawal_share` allow (see the module
/// doc).
pub(super) fn keep_the_site(
    ledger: &mut Ledger,
    due: Vec<ItemView>,
    config: &PublishConfig,
    opts: &Options,
    report: &mut Report,
) -> Result<Vec<ItemView>, PublishError> {
    let gone = due.iter().filter(|v| file_gone(v, report)).count();
    if gone <= config.mass_withdrawal_items || opts.allow_mass_withdrawal {
        return Ok(due);
    }
    let public: usize = (ledger.read(items::published_by_collection)?.values())
        .map(|n| *n as usize)
        .sum();
    if (gone as f64) <= config.mass_withdrawal_share * public as f64 {
        return Ok(due);
    }
    let kept: Vec<ItemView> = due.into_iter().filter(|v| !file_gone(v, report)).collect();
    let error = format!(
        "this run would withdraw {gone} of the site's {public} public items because their files are gone: more than publish.mass_withdrawal_items ({}) and more than publish.mass_withdrawal_share ({:.0} %) allow. Nothing was withdrawn. Is this the site's own checkout? A site copied from another's fencepost.toml shares its ledger.url and ledger.site_id (give it its own), a checkout of another branch or a moved content folder looks the same. To withdraw them on purpose, run `fencepost publish --allow-mass-withdrawal` (each withdrawal is audited)",
        config.mass_withdrawal_items,
        config.mass_withdrawal_share * 100.0
    );
    tracing::error!(items = gone, public, "refused a mass withdrawal");
    report.invalid.push(super::Invalid {
        file: "content".into(),
        line: None,
        key: None,
        error,
        url: None,
        item: None,
    });
    Ok(kept)
}
