//! One batch of due items, steps 3–5 of a publish run: take the leases, preflight under them,
//! the slow work outside any transaction, then one commit that releases the leases. Each step
//! is a method of [`Batch`]; [`Batch::run`] is their list.

use super::decide::{self, Plan};
use super::{image, prepare, Claimed, Failed, Options, Prepared, PublishError, Report};
use fencepost_core::clock::{Clock, Instant};
use fencepost_core::item::ItemId;
use fencepost_core::item::{ItemName, Shown};
use fencepost_ledger::db::Step;
use fencepost_ledger::items::Action;
use fencepost_ledger::items::{self, Claim, ItemView};
use fencepost_ledger::lease::{self, Lease, OwnerId};
use fencepost_ledger::pages::{self, Commit, Outcome};
use fencepost_ledger::Ledger;
use fencepost_site::content::ImageSource;
use fencepost_site::Site;
use rayon::prelude::*;
use std::collections::HashMap;

/// What preflight saw of one leased item.
enum Preflight {
    Claimed(Box<Claimed>),
    Parked(ItemId),
    Current,
    Nothing,
}

/// How one item's commit ended: `Ok(None)` when it waits on another run's image fetch.
type ItemResult = Result<Option<Outcome>, String>;

/// A batch of due items and the run it belongs to.
pub(super) struct Batch<'a> {
    site: &'a Site,
    clock: &'a Clock,
    opts: &'a Options,
    owner: &'a OwnerId,
    items: &'a [ItemView],
    names: HashMap<ItemId, &'a ItemName>,
}

impl<'a> Batch<'a> {
    pub(super) fn new(
        site: &'a Site,
        clock: &'a Clock,
        opts: &'a Options,
        owner: &'a OwnerId,
        items: &'a [ItemView],
    ) -> Batch<'a> {
        let names = items.iter().map(|v| (v.id, &v.name)).collect();
        Batch {
            site,
            clock,
            opts,
            owner,
            items,
            names,
        }
    }

    pub(super) fn run(&self, ledger: &mut Ledger, report: &mut Report) -> Result<(), PublishError> {
        let held = self.take_leases(ledger, report)?;
        if held.is_empty() {
            return Ok(());
        }
        let claimed = self.preflight(ledger, held, report)?;
        if claimed.is_empty() {
            return Ok(());
        }
        fencepost_core::fail_point!("publish.after_preflight");
        let prepared = self.slow_work(ledger, claimed);
        fencepost_core::fail_point!("publish.before_commit");
        let now = self.clock.now();
        let results = self.commit(ledger, &prepared, now)?;
        fencepost_core::fail_point!("publish.after_commit");
        self.tally(results, now, report);
        Ok(())
    }

    /// How an item is shown in the report (its collection/id, or its row for one not seen).
    fn shown(&self, id: ItemId) -> Shown {
        let naming = self.site.collections.naming;
        let name = self.names.get(&id);
        Shown(name.map_or(serde_json::Value::from(id.0), |n| n.shown(naming)))
    }

    /// Step 3a: each item's lease (see `lease::acquire_all`); an item someone else holds is
    /// skipped.
    fn take_leases(
        &self,
        ledger: &mut Ledger,
        report: &mut Report,
    ) -> Result<Vec<(ItemId, Lease)>, PublishError> {
        let ids: Vec<ItemId> = self.items.iter().map(|v| v.id).collect();
        let keys: Vec<lease::LeaseKey<'_>> = ids
            .iter()
            .map(|&id| lease::LeaseKey::Publication(id))
            .collect();
        let (now, secs) = (self.clock.now(), self.opts.lease_secs);
        let taken = lease::acquire_all(ledger, &keys, self.owner, now, secs)?;
        let mut held = Vec::with_capacity(ids.len());
        for (id, t) in ids.into_iter().zip(taken) {
            match t {
                Some(l) => held.push((id, l)),
                None => {
                    report.skipped_locked.push(self.shown(id));
                    report.skipped_ids.push(id);
                }
            }
        }
        Ok(held)
    }

    /// Step 3b: under the leases, in one transaction, every item is read again and claimed
    /// (new publications marked `processing`), parked, or let go. The closure may run again
    /// (a PostgreSQL retry), so it only returns what it saw. Two pipelines: every view, then
    /// every item's lease-guarded step.
    fn preflight(
        &self,
        ledger: &mut Ledger,
        held: Vec<(ItemId, Lease)>,
        report: &mut Report,
    ) -> Result<Vec<Claimed>, PublishError> {
        let now = self.clock.now();
        let seen = ledger.write(|tx| {
            let ids: Vec<ItemId> = held.iter().map(|(id, _)| *id).collect();
            let views = items::views(tx, &ids)?;
            let mut steps = Vec::new();
            let out: Vec<Preflight> = held
                .iter()
                .zip(views)
                .map(|((id, lease), view)| self.claim(*id, lease, view, now, &mut steps))
                .collect();
            tx.pipeline(&steps)?;
            Ok(out)
        })?;
        let mut claimed = Vec::with_capacity(seen.len());
        for p in seen {
            match p {
                Preflight::Claimed(c) => claimed.push(*c),
                Preflight::Parked(id) => report.parked.push(self.shown(id)),
                Preflight::Current => report.unchanged += 1,
                Preflight::Nothing => {}
            }
        }
        Ok(claimed)
    }

    /// What preflight does with one item, and the guarded steps that do it.
    fn claim(
        &self,
        id: ItemId,
        held: &Lease,
        view: Option<ItemView>,
        now: Instant,
        steps: &mut Vec<Step>,
    ) -> Preflight {
        let max_attempts = i64::from(self.site.config.publish.max_attempts);
        let plan = view
            .as_ref()
            .map(|v| decide::plan_with(v, now, self.opts.rerender));
        match (plan, view) {
            // Every earlier attempt ended without a recorded failure (they crashed): stop
            // trying until someone re-arms it. (A parked item that plans an action is being
            // taken down: its attempts were another operation's.)
            (Some(Plan::Act(_)), Some(v))
                if v.attempts >= max_attempts && v.parked_at.is_none() =>
            {
                steps.extend(items::claim_steps(Claim::Park, id, held, now));
                steps.push(lease::release_step(held, now));
                Preflight::Parked(id)
            }
            (Some(Plan::Act(action)), Some(view)) => {
                let claim = match action {
                    Action::Publish => Claim::Publish,
                    _ => Claim::Change,
                };
                let expected_state = claim.state_after(view.state);
                steps.extend(items::claim_steps(claim, id, held, now));
                Preflight::Claimed(Box::new(Claimed {
                    view,
                    action,
                    lease: held.clone(),
                    expected_state,
                }))
            }
            // Another run finished it since we planned; nothing to do.
            (plan, _) => {
                steps.push(lease::release_step(held, now));
                match plan {
                    Some(Plan::Current) => Preflight::Current,
                    _ => Preflight::Nothing,
                }
            }
        }
    }

    /// Step 4, outside any transaction: images first (they need the ledger), then the
    /// Markdown in parallel.
    fn slow_work(&self, ledger: &mut Ledger, claimed: Vec<Claimed>) -> Vec<Prepared> {
        let images: Vec<_> = claimed
            .iter()
            .map(|c| match c.view.image_source.as_deref() {
                // A withdrawal and a notice show no image: nothing is fetched for them.
                Some(src) if !matches!(c.action, Action::Withdraw | Action::Renotice) => {
                    Some(image::ensure(
                        ledger,
                        self.site,
                        &ImageSource::from_key(src),
                        self.owner,
                        self.clock,
                        self.opts.lease_secs,
                    ))
                }
                _ => None,
            })
            .collect();
        // The site's shortcodes, read once for the batch (`templates/shortcodes/`).
        let shortcodes =
            fencepost_site::shortcodes::Shortcodes::load(&self.site.root, &self.site.config);
        let sc = shortcodes.as_ref();
        claimed
            .into_par_iter()
            .zip(images)
            .map(|(c, img)| prepare::prepare(self.site, sc, c, img, self.clock.now()))
            .collect()
    }

    /// Step 5: every item's commit batch (pipelined together, see `pages::commit_all`), what
    /// failed recorded, and every lease released, in one transaction.
    fn commit(
        &self,
        ledger: &mut Ledger,
        prepared: &[Prepared],
        now: Instant,
    ) -> Result<Vec<(ItemId, ItemResult)>, PublishError> {
        // A ledger that checks due instants at its commit by its own clock (D1) refuses a
        // batch that makes a page public early, naming the latest due instant in it: the
        // first publications due then (or later) go back to pending, uncounted, and the rest
        // of the batch is committed again — down to what the ledger's clock agrees with.
        let mut hold_from = None;
        loop {
            match self.commit_some(ledger, prepared, now, hold_from) {
                Err(PublishError::Ledger(fencepost_ledger::LedgerError::NotDueByStore {
                    not_before,
                    ..
                })) if hold_from.is_none_or(|h: Instant| not_before < h) => {
                    tracing::warn!(%not_before, "the ledger's own clock says a page due then is not due yet: committing the batch without it");
                    hold_from = Some(not_before);
                }
                r => return r,
            }
        }
    }

    /// [`Batch::commit`]; with `hold_from`, every first publication due then or later is held
    /// back as not due (back to pending, its lease released) and the rest committed.
    fn commit_some(
        &self,
        ledger: &mut Ledger,
        prepared: &[Prepared],
        now: Instant,
        hold_from: Option<Instant>,
    ) -> Result<Vec<(ItemId, ItemResult)>, PublishError> {
        let max_attempts = self.site.config.publish.max_attempts;
        let held = |c: &Commit| {
            let due = c.page.as_ref().map(|p| p.due_at);
            c.action == fencepost_ledger::items::Action::Publish
                && matches!((hold_from, due), (Some(h), Some(d)) if d >= h)
        };
        Ok(ledger.write(|tx| {
            let commits: Vec<&Commit> = prepared
                .iter()
                .filter_map(|p| match p {
                    Prepared::Commit(c) if !held(c) => Some(&**c),
                    _ => None,
                })
                .collect();
            let due = pages::DueCheck::for_clock(self.clock);
            let mut committed = pages::commit_all(tx, &commits, now, due)?.into_iter();
            let mut results = Vec::with_capacity(prepared.len());
            let mut releases = Vec::with_capacity(prepared.len());
            for p in prepared {
                let (id, lease, result) = match p {
                    Prepared::Commit(c) if held(c) => {
                        items::not_yet_due(tx, c.id, &c.lease, now)?;
                        (c.id, &c.lease, Ok(Some(Outcome::NotDue)))
                    }
                    Prepared::Commit(c) => {
                        let r = committed.next().expect("one result per commit");
                        if r.outcome == Outcome::NotDue {
                            // Not a failure of the item: back to pending, uncounted.
                            items::not_yet_due(tx, c.id, &c.lease, now)?;
                        }
                        (c.id, &c.lease, Ok(Some(r.outcome)))
                    }
                    Prepared::Failed { id, lease, error } => {
                        // If the lease was lost meanwhile nothing is written, and the item's
                        // outcome is `LeaseLost`.
                        let held = items::record_failure(tx, *id, error, lease, max_attempts, now)?;
                        let r = match held {
                            true => Err(error.to_string()),
                            false => Ok(Some(Outcome::LeaseLost)),
                        };
                        (*id, lease, r)
                    }
                    Prepared::Stale { id, lease } => (*id, lease, Ok(Some(Outcome::Conflict))),
                    Prepared::Locked { id, lease } => {
                        // Back to pending so a later run picks it up once the image is
                        // stored; waiting on another run is not a failure of this item.
                        let why = "waiting for another run to fetch its image";
                        items::record_failure(tx, *id, why, lease, u32::MAX, now)?;
                        (*id, lease, Ok(None))
                    }
                };
                releases.push(lease::release_step(lease, now));
                results.push((id, result));
            }
            tx.pipeline(&releases)?;
            Ok(results)
        })?)
    }

    /// Each item's outcome, into the report.
    fn tally(&self, results: Vec<(ItemId, ItemResult)>, now: Instant, report: &mut Report) {
        let due: HashMap<ItemId, Instant> =
            self.items.iter().map(|v| (v.id, v.publish_at)).collect();
        for (id, r) in results {
            let name = self.shown(id);
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
                Ok(Some(Outcome::Renoticed)) => report.renoticed.push(name),
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
                Ok(Some(Outcome::NotDue)) => {
                    tracing::warn!(
                        item = %name,
                        "due by this host's clock but not by the ledger's: nothing was written, the next run publishes it at its instant"
                    );
                    report.not_due.push(name)
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
    }
}
