//! The publish job: preflight → slow work → guarded commit.
//!
//! 1. Scan the content tree (stat cache) and sync what it says into the ledger. A tree that
//!    cannot be read completely stops the run before anything is written.
//! 2. Plan from one snapshot: which items are due for a publication, an update or a
//!    withdrawal.
//! 3. For each batch of due items: take each item's lease (one upsert; a live lease is
//!    someone else's and the item is skipped), re-read the item under the lease (preflight)
//!    and mark new publications `processing`, all in one transaction.
//! 4. Slow work outside any transaction: read and render the Markdown, fetch and store the
//!    image.
//! 5. Commit: each item's guarded, token-chained batch (see [`crate::ledger::pages`]), then
//!    release the leases, in one transaction.
//!
//! An interrupted run leaves items `processing` under a lease that expires; the next run
//! re-drives them. A run that lost its lease changes nothing.

pub mod image;
mod prepare;
pub mod stat_cache;
pub mod sync;

use crate::clock::{Clock, Instant};
use crate::content::{ContentError, ImageSource};
use crate::item::{ItemName, Shown};
use crate::ledger::items::{self, Action, ItemId, ItemView, Plan, State};
use crate::ledger::lease::{self, Lease, OwnerId};
use crate::ledger::pages::{self, Commit, Outcome};
use crate::ledger::{self, Ledger, LedgerError};
use crate::site::Site;
use rayon::prelude::*;
use std::collections::HashMap;
pub use sync::Invalid;

#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    #[error(transparent)]
    Content(#[from] ContentError),
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    #[error("--retry {0}: the ledger has no item {0} (`fencepost status` lists parked items; name an item as collection/id)")]
    NoSuchItem(String),
}

#[derive(Debug, Clone, Default)]
pub struct Options {
    pub lease_secs: u64,
    /// Items to re-arm before the run (`--retry ID`): parked ones become due again.
    pub retry: Vec<ItemName>,
    /// The lease owner to use (default: a new random one). `fencepost run` names it so it can
    /// give the leases back if it abandons the run at its shutdown deadline.
    pub owner: Option<OwnerId>,
    /// Re-render every published item (`--rerender`, after a change to `[markdown]`): an
    /// item whose page comes out different is updated, the rest stay as they are.
    pub rerender: bool,
}

/// An item this run could not publish, and why; it is retried by the next run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Failed {
    pub id: Shown,
    pub error: String,
}

/// What one run did. `revision` is the publication revision when the run ended.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Report {
    pub owner: String,
    pub published: Vec<Shown>,
    pub updated: Vec<Shown>,
    pub withdrawn: Vec<Shown>,
    /// Those of `withdrawn` taken down because their `expire_at` came.
    pub expired: Vec<Shown>,
    pub unchanged: usize,
    pub skipped_locked: Vec<Shown>,
    /// The rows of `skipped_locked` (what `publish --build` waits for).
    #[serde(skip)]
    pub skipped_ids: Vec<ItemId>,
    pub lease_lost: Vec<Shown>,
    pub conflict: Vec<Shown>,
    pub revision: i64,
    pub failed: Vec<Failed>,
    pub embargoed: usize,
    pub next_embargo_at: Option<Instant>,
    /// After this run: the earliest of the next publication and the next expiry the ledger
    /// knows (what `build` writes to `current.json` and deploy to the bucket pointer).
    pub next_change_at: Option<Instant>,
    pub files_read: usize,
    /// Items skipped because they are parked (see `fencepost status`; `--retry ID`).
    pub parked: Vec<Shown>,
    /// Items re-armed by `--retry`.
    pub retried: Vec<Shown>,
    /// Files that cannot be read or do not validate: each holds back only its own item, and
    /// the run exits non-zero after publishing everything else.
    pub invalid: Vec<Invalid>,
    /// `.md` files under `content/` that no collection owns and that are no plain page.
    pub unclaimed: Vec<String>,
    /// For each item in `published`: its due instant and the commit's instant (the embargo
    /// lag `fencepost run` reports).
    #[serde(skip)]
    pub published_at: Vec<(Shown, Instant, Instant)>,
    /// Items due to be withdrawn only because their expiry came (for `expired`).
    #[serde(skip)]
    pub expiring: std::collections::HashSet<ItemId>,
}

/// An item claimed under its lease, with what preflight saw.
struct Claimed {
    view: ItemView,
    action: Action,
    lease: Lease,
    expected_state: State,
}

enum Prepared {
    Commit(Box<Commit>),
    Failed {
        id: ItemId,
        lease: Lease,
        error: String,
    },
    /// The file changed after preflight: leave it to the next run, which sees the new file.
    Stale {
        id: ItemId,
        lease: Lease,
    },
    Locked {
        id: ItemId,
        lease: Lease,
    },
}

/// Waits (at most `wait_secs`) until nobody holds the leases of `ids`: the other publisher
/// that held them has committed (or its leases expired). `publish --build` calls it for the
/// items it skipped, so it builds what the ledger holds after that publisher's commit — the
/// job that deploys last then deploys the newest revision. Returns whether they are free.
pub fn wait_for_items(
    site: &Site,
    clock: &Clock,
    ids: &[ItemId],
    wait_secs: u64,
) -> Result<bool, PublishError> {
    let mut ledger = site.open_ledger()?;
    let started = std::time::Instant::now();
    loop {
        let now = clock.now();
        let busy = ledger.read(|tx| {
            for &id in ids {
                if lease::held(tx, &lease::LeaseKey::Publication(id), now)? {
                    return Ok(true);
                }
            }
            Ok(false)
        })?;
        if !busy {
            return Ok(true);
        }
        if started.elapsed().as_secs() >= wait_secs {
            tracing::warn!(items = ?ids, wait_secs, "items are still held by another publisher; building what the ledger holds now");
            return Ok(false);
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

pub fn run(site: &Site, clock: &Clock, opts: &Options) -> Result<Report, PublishError> {
    let started = std::time::Instant::now();
    let phase = |name: &str| {
        tracing::info!(
            phase = name,
            ms = started.elapsed().as_millis() as u64,
            "publish phase done"
        )
    };
    let mut ledger = site.open_or_create_ledger()?;
    let owner = opts.owner.clone().unwrap_or_else(OwnerId::random);
    let mut report = Report {
        owner: owner.0.clone(),
        ..Report::default()
    };
    tracing::debug!(owner = %owner.0, "publish run starts");
    let naming = site.collections.naming;
    if !opts.retry.is_empty() {
        let now = clock.now();
        let missing = ledger.write(|tx| {
            for name in &opts.retry {
                match items::id_of(tx, name)? {
                    Some(id) if items::retry(tx, id, now)? => {}
                    _ => return Ok(Some(name.clone())),
                }
            }
            Ok(None)
        })?;
        if let Some(name) = missing {
            return Err(PublishError::NoSuchItem(
                Shown(name.shown(naming)).to_string(),
            ));
        }
        report.retried = opts.retry.iter().map(|n| Shown(n.shown(naming))).collect();
    }

    // 1. Scan and sync.
    let synced = sync::scan_and_sync(site, &mut ledger, clock, &phase)?;
    report.files_read = synced.files_read;
    report.invalid = synced.invalid;
    report.unclaimed = synced.unclaimed;
    phase("sync");

    // 2. Plan.
    let now = clock.now();
    let (views, current) = ledger.read(|tx| {
        if opts.rerender {
            return Ok((items::every_view(tx)?, 0));
        }
        let views = items::candidate_views(tx)?;
        let current = items::count_published_current(tx, &views)?;
        Ok((views, current))
    })?;
    report.unchanged += current;
    let mut due = Vec::new();
    for v in views {
        if synced.held.contains(&v.name) {
            // Its file is broken: nothing is published, updated or withdrawn for it.
            continue;
        }
        match v.plan_with(now, opts.rerender) {
            Plan::Act(Action::Withdraw) if v.present() && v.expired(now) => {
                report.expiring.insert(v.id);
                due.push(v)
            }
            Plan::Act(_) => due.push(v),
            Plan::Current => report.unchanged += 1,
            Plan::Embargoed(at) => {
                report.embargoed += 1;
                report.next_embargo_at = Some(report.next_embargo_at.map_or(at, |n| n.min(at)));
            }
            Plan::Parked => report.parked.push(Shown(v.name.shown(naming))),
            Plan::Idle => {}
        }
    }
    tracing::info!(
        due = due.len(),
        unchanged = report.unchanged,
        embargoed = report.embargoed,
        "planned"
    );

    // Items whose image must come over the network go one at a time, so one slow fetch
    // cannot outlast the lease of a whole batch.
    let (remote, local): (Vec<ItemView>, Vec<ItemView>) = due.into_iter().partition(|v| {
        !v.image_stored
            && v.image_source
                .as_deref()
                .is_some_and(|s| matches!(ImageSource::from_key(s), ImageSource::Remote(_)))
    });
    let batch = site.config.publish.batch_size;
    let batches = local.chunks(batch).chain(remote.chunks(1));
    for chunk in batches {
        run_batch(&mut ledger, site, clock, opts, &owner, chunk, &mut report)?;
    }

    report.revision = ledger.read(ledger::status::revision)?;
    report.next_change_at = ledger.read(ledger::public::next_change)?;
    phase("commit");
    Ok(report)
}

fn run_batch(
    ledger: &mut Ledger,
    site: &Site,
    clock: &Clock,
    opts: &Options,
    owner: &OwnerId,
    chunk: &[ItemView],
    report: &mut Report,
) -> Result<(), PublishError> {
    let ids: Vec<ItemId> = chunk.iter().map(|v| v.id).collect();
    let naming = site.collections.naming;
    let names: HashMap<ItemId, &ItemName> = chunk.iter().map(|v| (v.id, &v.name)).collect();
    let due: HashMap<ItemId, Instant> = chunk.iter().map(|v| (v.id, v.publish_at)).collect();
    let shown = |id: &ItemId| {
        Shown(
            names
                .get(id)
                .map_or(serde_json::Value::from(id.0), |n| n.shown(naming)),
        )
    };
    // 3. Leases (see lease::acquire_all), then preflight under them in one transaction.
    let now = clock.now();
    let max_attempts = site.config.publish.max_attempts;
    let keys: Vec<lease::LeaseKey<'_>> = ids
        .iter()
        .map(|&id| lease::LeaseKey::Publication(id))
        .collect();
    let taken = lease::acquire_all(ledger, &keys, owner, now, opts.lease_secs)?;
    let ids = &ids[..];
    let mut held = Vec::with_capacity(ids.len());
    for (&id, t) in ids.iter().zip(taken) {
        match t {
            Some(l) => held.push((id, l)),
            None => {
                report.skipped_locked.push(shown(&id));
                report.skipped_ids.push(id);
            }
        }
    }
    if held.is_empty() {
        return Ok(());
    }
    enum Preflight {
        Claimed(Box<Claimed>),
        Parked(ItemId),
        Current,
        Nothing,
    }
    // The closure may run again (a PostgreSQL retry), so it only returns what it saw.
    // Two pipelines: every view, then every item's lease-guarded step.
    let preflight = ledger.write(|tx| {
        let ids: Vec<ItemId> = held.iter().map(|(id, _)| *id).collect();
        let views = items::views(tx, &ids)?;
        let mut steps = Vec::new();
        let mut out = Vec::with_capacity(held.len());
        for ((id, held), view) in held.iter().zip(views) {
            let (id, held) = (*id, held.clone());
            out.push(
                match view.as_ref().map(|v| v.plan_with(now, opts.rerender)) {
                    // (A parked item that plans an action is being taken down: its attempts were
                    // another operation's.)
                    Some(Plan::Act(_))
                        if view.as_ref().is_some_and(|v| {
                            v.attempts >= i64::from(max_attempts) && v.parked_at.is_none()
                        }) =>
                    {
                        // Every earlier attempt ended without a recorded failure (they crashed):
                        // stop trying until someone re-arms it.
                        steps.extend(items::guarded_steps("items.park", id, &held, now, &[]));
                        steps.push(lease::release_step(&held, now));
                        Preflight::Parked(id)
                    }
                    Some(Plan::Act(action)) => {
                        let view = view.expect("planned from a view");
                        let (statement, expected_state) = if action == Action::Publish {
                            ("items.mark_processing", State::Processing)
                        } else {
                            ("items.claim", view.state)
                        };
                        steps.extend(items::guarded_steps(statement, id, &held, now, &[]));
                        Preflight::Claimed(Box::new(Claimed {
                            view,
                            action,
                            lease: held,
                            expected_state,
                        }))
                    }
                    other => {
                        // Another run finished it since we planned; nothing to do.
                        steps.push(lease::release_step(&held, now));
                        if other == Some(Plan::Current) {
                            Preflight::Current
                        } else {
                            Preflight::Nothing
                        }
                    }
                },
            );
        }
        tx.pipeline(&steps)?;
        Ok(out)
    })?;
    let mut claimed = Vec::with_capacity(preflight.len());
    for p in preflight {
        match p {
            Preflight::Claimed(c) => claimed.push(*c),
            Preflight::Parked(id) => report.parked.push(shown(&id)),
            Preflight::Current => report.unchanged += 1,
            Preflight::Nothing => {}
        }
    }
    if claimed.is_empty() {
        return Ok(());
    }
    crate::fail_point!("publish.after_preflight");

    // 4. Slow work: images first (they need the ledger), then Markdown in parallel.
    let mut images = Vec::with_capacity(claimed.len());
    for c in &claimed {
        let needs = c.action != Action::Withdraw && c.view.image_source.is_some();
        images.push(match (needs, c.view.image_source.as_deref()) {
            (true, Some(src)) => Some(image::ensure(
                ledger,
                site,
                &ImageSource::from_key(src),
                owner,
                clock,
                opts.lease_secs,
            )),
            _ => None,
        });
    }
    let prepared: Vec<Prepared> = claimed
        .into_par_iter()
        .zip(images)
        .map(|(c, img)| prepare::prepare(site, c, img, clock.now()))
        .collect();
    crate::fail_point!("publish.before_commit");

    // 5. Commit every item's batch and release the leases, in one transaction.
    let now = clock.now();
    let results = ledger.write(|tx| {
        // Every item's commit batch, pipelined together (see pages::commit_all).
        let commits: Vec<&Commit> = prepared
            .iter()
            .filter_map(|p| match p {
                Prepared::Commit(c) => Some(&**c),
                _ => None,
            })
            .collect();
        let mut committed = pages::commit_all(tx, &commits, now)?.into_iter();
        let mut results = Vec::with_capacity(prepared.len());
        let mut releases = Vec::with_capacity(prepared.len());
        for p in &prepared {
            match p {
                Prepared::Commit(c) => {
                    let r = committed.next().expect("one result per commit");
                    releases.push(lease::release_step(&c.lease, now));
                    results.push((c.id, Ok(Some(r.outcome))));
                }
                Prepared::Failed {
                    id,
                    lease: held,
                    error,
                } => {
                    let still_held =
                        items::record_failure(tx, *id, error, held, max_attempts, now)?;
                    releases.push(lease::release_step(held, now));
                    results.push((
                        *id,
                        if still_held {
                            Err(error.clone())
                        } else {
                            Ok(Some(Outcome::LeaseLost))
                        },
                    ));
                }
                Prepared::Stale { id, lease: held } => {
                    releases.push(lease::release_step(held, now));
                    results.push((*id, Ok(Some(Outcome::Conflict))));
                }
                Prepared::Locked { id, lease: held } => {
                    // Back to pending so a later run picks it up once the image is stored.
                    items::record_failure(
                        tx,
                        *id,
                        "waiting for another run to fetch its image",
                        held,
                        // Waiting on another run is not a failure of this item.
                        u32::MAX,
                        now,
                    )?;
                    releases.push(lease::release_step(held, now));
                    results.push((*id, Ok(None)));
                }
            }
        }
        tx.pipeline(&releases)?;
        Ok(results)
    })?;
    crate::fail_point!("publish.after_commit");
    for (id, r) in results {
        let name = shown(&id);
        match r {
            Ok(None) => {
                report.skipped_locked.push(name);
                report.skipped_ids.push(id);
            }
            Ok(Some(Outcome::Published)) => {
                if let Some(&at) = due.get(&id) {
                    report.published_at.push((name.clone(), at, now));
                }
                report.published.push(name)
            }
            Ok(Some(Outcome::Updated)) => report.updated.push(name),
            Ok(Some(Outcome::Withdrawn)) => {
                if report.expiring.contains(&id) {
                    report.expired.push(name.clone());
                }
                report.withdrawn.push(name)
            }
            Ok(Some(Outcome::Unchanged)) => report.unchanged += 1,
            Ok(Some(Outcome::LeaseLost)) => {
                tracing::warn!(item = %name, "lease lost before commit; nothing was written");
                report.lease_lost.push(name)
            }
            Ok(Some(Outcome::Conflict)) => {
                tracing::warn!(
                    item = %name,
                    "item changed under this run; nothing was written, the next run retries"
                );
                report.conflict.push(name)
            }
            Err(error) => {
                tracing::warn!(item = %name, %error, "could not publish; the next run retries");
                report.failed.push(Failed { id: name, error });
            }
        }
    }
    Ok(())
}
