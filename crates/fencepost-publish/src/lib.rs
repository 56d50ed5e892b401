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
//! 5. Commit: each item's guarded, token-chained batch (see [`fencepost_ledger::pages`]), then
//!    release the leases, in one transaction.
//!
//! An interrupted run leaves items `processing` under a lease that expires; the next run
//! re-drives them. A run that lost its lease changes nothing.

mod aliases;
mod batch;
mod claims;
pub mod decide;
mod drafts;
mod guard;
mod held;
mod hosts;
pub mod image;
mod prepare;
mod seen;
pub mod stat_cache;
pub mod sync;

use batch::Batch;
use decide::Plan;
pub use drafts::Draft;
use fencepost_core::clock::{Clock, Instant};
use fencepost_core::item::ItemId;
use fencepost_core::item::{ItemName, Shown};
use fencepost_ledger::items::Action;
use fencepost_ledger::items::{self, ItemView, State};
use fencepost_ledger::lease::{self, Lease, OwnerId};
use fencepost_ledger::pages::Commit;
use fencepost_ledger::{self as ledger, Ledger, LedgerError};
use fencepost_site::content::{ContentError, ImageSource};
use fencepost_site::Site;
pub use held::held;
pub use hosts::host_name;
pub use sync::Disagreed;
pub use sync::Held;
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
    /// Collections this run may withdraw whole (`--allow-withdraw-collection NAME`): without
    /// it, a run that would take down every public item of a collection refuses to.
    pub allow_withdraw_collection: Vec<String>,
    /// Let this run withdraw more public items (their files gone) than
    /// `publish.mass_withdrawal_items` and `publish.mass_withdrawal_share` allow
    /// (`--allow-mass-withdrawal`); `fencepost run` never does.
    pub allow_mass_withdrawal: bool,
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
    /// What this checkout may be wrong about, said before anything else (stderr too): a
    /// `base_url` other than the one the ledger last built with.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    pub published: Vec<Shown>,
    pub updated: Vec<Shown>,
    pub withdrawn: Vec<Shown>,
    /// Withdrawn items whose notice was re-rendered from their edited file.
    pub renoticed: Vec<Shown>,
    /// Those of `withdrawn` taken down because their `expire_at` came.
    pub expired: Vec<Shown>,
    pub unchanged: usize,
    pub skipped_locked: Vec<Shown>,
    /// The rows of `skipped_locked` (what `publish --build` waits for).
    #[serde(skip)]
    pub skipped_ids: Vec<ItemId>,
    pub lease_lost: Vec<Shown>,
    pub conflict: Vec<Shown>,
    /// Items this host's clock found due but the ledger's own clock (PostgreSQL's) did not,
    /// as their page was written: nothing written, each back to pending for the next run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_due: Vec<Shown>,
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
    /// Items held as they are because a file of theirs is broken (each also under
    /// `invalid`), with their due instants: what `status`, `run` and `/metrics` report.
    pub held: Vec<Held>,
    /// Items parked because this host's checkout has them otherwise than the host whose
    /// write the ledger keeps, naming both hosts (see `fencepost status`).
    pub disagreed: Vec<Disagreed>,
    /// Items kept out of everything public by `draft = true` (never counted elsewhere).
    pub drafts: Vec<Draft>,
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
        let ms = started.elapsed().as_millis() as u64;
        tracing::info!(phase = name, ms, "publish phase done")
    };
    let mut ledger = site.open_or_create_ledger()?;
    let owner = opts.owner.clone().unwrap_or_else(OwnerId::random);
    tracing::debug!(owner = %owner.0, "publish run starts");
    let mut report = Report {
        owner: owner.0.clone(),
        ..Report::default()
    };
    let naming = site.collections.naming;
    report.retried = rearm(&mut ledger, clock.now(), &opts.retry, naming)?;

    // 1. Scan and sync.
    let retry = opts.retry.iter().cloned().collect();
    let synced = sync::scan_and_sync(site, &mut ledger, clock, &phase, &retry)?;
    report.files_read = synced.files_read;
    report.invalid = synced.invalid;
    report.unclaimed = synced.unclaimed;
    report.held = synced.held_items;
    report.disagreed = synced.disagreed;
    report.drafts = synced.drafts;
    phase("sync");

    // 2. Plan.
    let due = plan(
        &mut ledger,
        clock.now(),
        opts,
        &synced.held,
        &site.collections,
        &mut report,
    )?;

    let due = guard::keep_collections(&mut ledger, due, &site.collections, opts, &mut report)?;
    let due = guard::keep_the_site(&mut ledger, due, &site.config.publish, opts, &mut report)?;

    // 3–5, a batch at a time (see batch.rs). Items whose image must come over the network
    // go one at a time, so one slow fetch cannot outlast the lease of a whole batch.
    let (remote, local): (Vec<ItemView>, Vec<ItemView>) = due.into_iter().partition(fetches_image);
    let batch = site.config.publish.batch_size;
    for chunk in local.chunks(batch).chain(remote.chunks(1)) {
        Batch::new(site, clock, opts, &owner, chunk).run(&mut ledger, &mut report)?;
    }

    // One read for what the report ends with (on a bucket ledger, each read asks the log).
    let now = clock.now();
    let (revision, next, built) = ledger.read(|tx| {
        Ok((
            ledger::status::revision(tx)?,
            ledger::public::next_change(tx, now)?,
            ledger::status::built_base_url(tx)?,
        ))
    })?;
    report.revision = revision;
    report.next_change_at = next;
    report
        .warnings
        .extend(other_base_url(site, ledger.name(), built));
    phase("commit");
    Ok(report)
}

/// A warning when the ledger last built with another `base_url` (`built`) than this
/// checkout's: a site made from a copy of another's fencepost.toml, a checkout of another
/// site's branch.
fn other_base_url(site: &Site, ledger: &str, built: Option<String>) -> Option<String> {
    let here = &site.config.base_url;
    built.filter(|b| b != here).map(|b| {
        let w = format!(
            "the ledger {ledger} last built this site with base_url {b:?}, and this checkout's is {here:?}: is this the same site? (A site made from a copy of another's fencepost.toml shares its ledger; give it its own ledger.url and ledger.site_id.) The next build records {here:?}"
        );
        tracing::warn!("{w}");
        w
    })
}

/// `--retry`: re-arms the named items (parked ones become due again), all or none.
fn rearm(
    ledger: &mut Ledger,
    now: Instant,
    names: &[ItemName],
    naming: fencepost_core::item::Naming,
) -> Result<Vec<Shown>, PublishError> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let missing = ledger.write(|tx| {
        for name in names {
            match items::id_of(tx, name)? {
                Some(id) if items::retry(tx, id, now)? => {}
                _ => return Ok(Some(name.clone())),
            }
        }
        Ok(None)
    })?;
    if let Some(name) = missing {
        let shown = Shown(name.shown(naming)).to_string();
        return Err(PublishError::NoSuchItem(shown));
    }
    Ok(names.iter().map(|n| Shown(n.shown(naming))).collect())
}

/// Step 2, from one read: the items due for a publication, an update or a withdrawal; the
/// rest counted into the report. An item whose file is broken (`held`) is left alone.
fn plan(
    ledger: &mut Ledger,
    now: Instant,
    opts: &Options,
    held: &std::collections::HashSet<ItemName>,
    collections: &fencepost_config::collections::Collections,
    report: &mut Report,
) -> Result<Vec<ItemView>, PublishError> {
    let naming = collections.naming;
    // A notice is re-rendered only where the collection keeps notices now (a page withdrawn
    // before the ledger recorded its notice follows the config, as it always did).
    let keeps_notice = |v: &ItemView| {
        collections
            .get(&v.name.collection)
            .is_some_and(|c| c.on_withdraw == fencepost_config::collections::OnWithdraw::Notice)
    };
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
    // A held item is left alone — but for its expiry: that was decided when a valid file
    // was read, and a broken edit since must not keep the page up past it.
    let leave = |v: &ItemView| {
        held.contains(&v.name) && !(v.state == items::State::Published && v.expired(now))
    };
    for v in views.into_iter().filter(|v| !leave(v)) {
        match decide::plan_with(&v, now, opts.rerender) {
            Plan::Act(Action::Withdraw) if v.present() && v.expired(now) => {
                report.expiring.insert(v.id);
                due.push(v)
            }
            Plan::Act(Action::Renotice) if !keeps_notice(&v) => report.unchanged += 1,
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
    let (unchanged, embargoed) = (report.unchanged, report.embargoed);
    tracing::info!(due = due.len(), unchanged, embargoed, "planned");
    Ok(due)
}

/// Whether publishing `v` fetches its image over the network.
fn fetches_image(v: &ItemView) -> bool {
    !v.image_stored
        && v.image_source
            .as_deref()
            .is_some_and(|s| matches!(ImageSource::from_key(s), ImageSource::Remote(_)))
}
