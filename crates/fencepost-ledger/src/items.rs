//! The items ledger: what the content tree says (synced from a scan, with the stat cache) and
//! where each item is in its life: pending → processing → published → withdrawn.
//!
//! Syncing records observations of the content tree; it is idempotent and takes no lease.
//! Everything that moves an item's state is lease-guarded.

use crate::args;
use crate::db::{join, Row, Step};
use crate::lease::{self, Lease};
use crate::{LedgerError, Tx};
use fencepost_core::clock::Instant;
use fencepost_core::item::{CachedFile, FileStat, ItemId, ItemName};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Pending,
    Processing,
    Published,
    Withdrawn,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::Processing => "processing",
            State::Published => "published",
            State::Withdrawn => "withdrawn",
        }
    }

    fn parse(s: &str) -> Result<State, LedgerError> {
        Ok(match s {
            "pending" => State::Pending,
            "processing" => State::Processing,
            "published" => State::Published,
            "withdrawn" => State::Withdrawn,
            other => {
                return Err(LedgerError::Internal(format!(
                    "unknown item state {other:?}"
                )))
            }
        })
    }
}

/// What the ledger knows of one item, joined with its page and image.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemView {
    pub id: ItemId,
    pub name: ItemName,
    pub state: State,
    pub source_path: String,
    pub source_hash: Option<String>,
    pub wants_withdrawn: bool,
    pub publish_at: Instant,
    pub image_source: Option<String>,
    pub image_stored: bool,
    pub page: Option<PageView>,
    /// Claims so far without success (publish, update or withdrawal alike).
    pub attempts: i64,
    /// Set when the item was parked after too many failed attempts.
    pub parked_at: Option<Instant>,
    /// Its file's `expire_at`: from then on it is withdrawn (and never published).
    pub expire_at: Option<Instant>,
}

/// The parts of a page row that publishing decisions need.
#[derive(Debug, Clone, PartialEq)]
pub struct PageView {
    pub content_version: i64,
    pub source_hash: String,
    pub indexable: bool,
    pub image_source: Option<String>,
    pub image_sha256: Option<String>,
    pub withdrawn: bool,
    /// A withdrawn page keeps a notice: decided when it was withdrawn (`None`: withdrawn
    /// before the ledger recorded it; the collection's `on_withdraw` decides).
    pub notice: Option<bool>,
}

/// What a commit batch does to an item (publish decides which, in `publish::decide`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Make a not-yet-public item public (first time, or again after a withdrawal).
    Publish,
    /// Re-render a public item whose file changed.
    Update,
    /// Take a public item down: its file is gone or says `withdrawn = true`.
    Withdraw,
    /// Re-render the notice of a withdrawn item whose file changed (a redacted title or
    /// body, a reason added): its page stays withdrawn.
    Renotice,
}

impl ItemView {
    /// Whether the tree currently asks for this item to be public.
    pub fn present(&self) -> bool {
        self.source_hash.is_some() && !self.wants_withdrawn
    }

    /// Whether its file's `expire_at` has come by `now`.
    pub fn expired(&self, now: Instant) -> bool {
        self.expire_at.is_some_and(|at| at <= now)
    }

    /// Whether the tree asks for it to be public at `now`: present and not expired.
    pub fn wanted(&self, now: Instant) -> bool {
        self.present() && !self.expired(now)
    }
}

/// The ledger's stat cache: path → id, source hash and the file's stat as last scanned.
/// (A shared ledger answers without stats: each host keeps those; see publish::stat_cache.)
pub fn stat_cache(tx: &Tx<'_>) -> Result<fencepost_core::item::StatCache, LedgerError> {
    // Gathered first, then put in a map sized for them: grown insert by insert, the map
    // rehashed every row it held at each doubling (~1.3% of a one-item publish and build's CPU
    // at 100,000 items).
    let mut out = Vec::new();
    // Most rows share a handful of collection names: one allocation each.
    let mut names: Vec<std::sync::Arc<str>> = Vec::new();
    let text = |c: &crate::db::Cell<'_>| -> Result<String, LedgerError> {
        Ok(c.text()?.unwrap_or_default().to_string())
    };
    // Read in place: at 100,000 rows, a list of owned rows first was most of this read.
    tx.each_row("items.stat_cache", &[], |r| {
        let coll = r[0].text()?.unwrap_or_default();
        let collection = match names.iter().find(|n| &***n == coll) {
            Some(c) => c.clone(),
            None => {
                names.push(coll.into());
                names[names.len() - 1].clone()
            }
        };
        let id: std::sync::Arc<str> = r[1].text()?.unwrap_or_default().into();
        out.push((
            text(&r[2])?,
            CachedFile {
                name: ItemName { collection, id },
                source_hash: text(&r[3])?,
                stat: FileStat {
                    size: r[4].int()?.unwrap_or(-1),
                    changed_ns: r[5].int()?.unwrap_or(-1),
                    ino: r[6].int()?.unwrap_or(-1),
                },
            },
        ));
        Ok(())
    })?;
    let mut map =
        fencepost_core::item::StatCache::with_capacity_and_hasher(out.len(), Default::default());
    map.extend(out);
    Ok(map)
}

/// Counts of what [`sync`] changed.
#[derive(Debug, Default, Clone, Copy)]
pub struct SyncReport {
    pub seen: usize,
    pub gone: usize,
}

/// What one read file says, as the ledger records it.
#[derive(Debug, Clone)]
pub struct Seen<'a> {
    pub name: &'a ItemName,
    pub path: &'a str,
    pub stat: FileStat,
    pub source_hash: &'a str,
    pub wants_withdrawn: bool,
    /// `YYYY-MM-DD`, or `None` for an item without a day.
    pub day: Option<String>,
    /// When it is due (its collection's rule, or its own `publish_at`).
    pub due: Instant,
    pub explicit_publish_at: Option<Instant>,
    pub image_source: Option<&'a str>,
    /// Its `expire_at`.
    pub expire_at: Option<Instant>,
}

/// When an item not yet public is due, under the collections as configured now: (collection,
/// day, its own publish_at) → the instant, `None` when its collection is gone.
pub type DueRule<'a> = &'a dyn Fn(&str, Option<&str>, Option<Instant>) -> Option<Instant>;

/// Records a scan: every read file's fields, and which known items lost their file (`gone`),
/// then recomputes when items not yet public are due. Runs inside the caller's write
/// transaction.
pub fn sync(
    tx: &Tx<'_>,
    seen: &[Seen<'_>],
    gone: &[&ItemName],
    due: DueRule<'_>,
    host: &str,
    now: Instant,
) -> Result<SyncReport, LedgerError> {
    let mut report = SyncReport::default();
    // A shared ledger keeps no host's stats (they describe one checkout; each host keeps its
    // own beside it, see publish/stat_cache.rs): on a bucket ledger, which speaks SQLite,
    // every fresh runner would otherwise rewrite every row with stats of its own.
    let stats = |v: i64| (!tx.shared()).then_some(v);
    // In flights of a thousand statements (one per file): the same statements, fewer round
    // trips to a database over the network.
    let upserts: Vec<Step> = seen
        .iter()
        .map(|f| {
            Step::exec(
                "items.upsert_seen",
                args! {
                    "collection" => f.name.collection.as_ref(),
                    "key" => f.name.id.as_ref(),
                    "path" => f.path,
                    "hash" => f.source_hash,
                    "size" => stats(f.stat.size),
                    "mtime_ns" => stats(f.stat.changed_ns),
                    "ino" => stats(f.stat.ino),
                    "wants_withdrawn" => f.wants_withdrawn,
                    "day" => f.day.as_deref().unwrap_or(""),
                    "publish_at" => f.due.0,
                    "explicit_publish_at" => f.explicit_publish_at.map(|t| t.0),
                    "image_source" => f.image_source,
                    "expire_at" => f.expire_at.map(|t| t.0),
                    "host" => host,
                    "now" => now.0,
                },
            )
        })
        .collect();
    for chunk in upserts.chunks(1000) {
        report.seen += tx.pipeline(chunk)?.iter().map(|o| o.count()).sum::<usize>();
    }
    let gone: Vec<Step> = gone
        .iter()
        .map(|n| {
            Step::exec(
                "items.mark_gone",
                args! {
                    "collection" => n.collection.as_ref(),
                    "key" => n.id.as_ref(),
                    "host" => host,
                    "now" => now.0,
                },
            )
        })
        .collect();
    for chunk in gone.chunks(1000) {
        report.gone += tx.pipeline(chunk)?.iter().map(|o| o.count()).sum::<usize>();
    }
    tx.exec("items.forget_unpublished", args! { "now" => now.0 })?;
    tx.exec("items.touch_expired", args! { "now" => now.0 })?;
    recompute_due(tx, due)?;
    Ok(report)
}

/// Items not yet public are due at their file's own `publish_at`, or by their collection's
/// rule as configured now: a changed grace period or time zone applies in either direction.
fn recompute_due(tx: &Tx<'_>, due: DueRule<'_>) -> Result<(), LedgerError> {
    let mut steps = Vec::new();
    for r in tx.rows("items.not_public_due", &[])? {
        let (id, collection, day): (i64, String, String) = (r.get(0)?, r.get(1)?, r.get(2)?);
        let explicit = r.get::<Option<i64>>(3)?.map(Instant);
        let at: i64 = r.get(4)?;
        let day = (!day.is_empty()).then_some(day.as_str());
        if let Some(t) = due(&collection, day, explicit).filter(|t| t.0 != at) {
            steps.push(Step::exec(
                "items.set_due",
                args! { "id" => id, "publish_at" => t.0 },
            ));
        }
    }
    for chunk in steps.chunks(1000) {
        tx.pipeline(chunk)?;
    }
    Ok(())
}

/// The row of the item named `name`, if the ledger has it.
pub fn id_of(tx: &Tx<'_>, name: &ItemName) -> Result<Option<ItemId>, LedgerError> {
    tx.row(
        "items.id_of",
        args! { "collection" => name.collection.as_ref(), "key" => name.id.as_ref() },
    )?
    .map(|r| r.get(0).map(ItemId))
    .transpose()
}

fn view_from_row(r: &Row) -> Result<ItemView, LedgerError> {
    let page = match r.get::<Option<i64>>(8)? {
        None => None,
        Some(content_version) => Some(PageView {
            content_version,
            source_hash: r.get(9)?,
            indexable: r.get(10)?,
            image_source: r.get(11)?,
            image_sha256: r.get(12)?,
            withdrawn: r.get(13)?,
            notice: r.get(19)?,
        }),
    };
    Ok(ItemView {
        id: ItemId(r.get(0)?),
        state: State::parse(&r.get::<String>(1)?)?,
        source_path: r.get(2)?,
        source_hash: r.get(3)?,
        wants_withdrawn: r.get(4)?,
        publish_at: Instant(r.get(5)?),
        image_source: r.get(6)?,
        image_stored: r.get::<Option<bool>>(7)?.unwrap_or(false),
        page,
        attempts: r.get(14)?,
        parked_at: r.get::<Option<i64>>(15)?.map(Instant),
        name: ItemName::new(&r.get::<String>(16)?, &r.get::<String>(17)?),
        expire_at: r.get::<Option<i64>>(18)?.map(Instant),
    })
}

/// Every item except those published and current (their page matches their file: the
/// common case, left out so a large site does not materialise every row on every run), in
/// due order. `publish::decide` decides about each.
pub fn candidate_views(tx: &Tx<'_>) -> Result<Vec<ItemView>, LedgerError> {
    views_in_due_order(tx, "items.candidates")
}

/// The views statement `name` returns, in due order.
fn views_in_due_order(tx: &Tx<'_>, name: &'static str) -> Result<Vec<ItemView>, LedgerError> {
    let mut views = tx
        .rows(name, &[])?
        .iter()
        .map(view_from_row)
        .collect::<Result<Vec<ItemView>, LedgerError>>()?;
    views.sort_unstable_by_key(|v| (v.publish_at, v.id));
    Ok(views)
}

/// (file, terms JSON) of every page with terms whose item still has its file: the spellings
/// a new file's terms are checked against.
pub fn terms_by_file(tx: &Tx<'_>) -> Result<Vec<(String, String)>, LedgerError> {
    tx.rows("items.terms_by_file", &[])?
        .iter()
        .map(|r| Ok((r.get(0)?, r.get(1)?)))
        .collect()
}

/// Every item, in due order (`publish --rerender`).
pub fn every_view(tx: &Tx<'_>) -> Result<Vec<ItemView>, LedgerError> {
    views_in_due_order(tx, "items.every")
}

/// How many items [`candidate_views`] left out (their plan is `publish::decide::Plan::Current`), given what
/// it returned: every item less the candidates. Counting the items is answered by an index
/// (~3 ms at 100,000 items, where counting the published ones read every row, ~18 ms), and it
/// counts a published item with an expiry still to come once, as the candidates leave it out
/// or the plan finds it current — the count of published items left those out, and took them
/// off again when they were candidates.
pub fn count_published_current(tx: &Tx<'_>, candidates: &[ItemView]) -> Result<usize, LedgerError> {
    let items = tx.one("items.count", &[])?.get::<i64>(0)? as usize;
    Ok(items.saturating_sub(candidates.len()))
}

pub fn view(tx: &Tx<'_>, id: ItemId) -> Result<Option<ItemView>, LedgerError> {
    tx.row("items.view", args! { "id" => id.0 })?
        .as_ref()
        .map(view_from_row)
        .transpose()
}

/// A lease-guarded claim on one item that preflight pipelines with the others of its batch:
/// the statement is the ledger's business, the choice publish's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// For a publication (a first one, or again after a withdrawal): the item becomes
    /// `processing`, and the attempt counts.
    Publish,
    /// For an update, a withdrawal or a notice: the item keeps its state; the attempt counts.
    Change,
    /// Parks it: its attempts all ended without a recorded failure (the runs crashed). A
    /// `processing` item goes back to `pending`.
    Park,
}

impl Claim {
    fn statement(self) -> &'static str {
        match self {
            Claim::Publish => "items.mark_processing",
            Claim::Change => "items.claim",
            Claim::Park => "items.park",
        }
    }

    /// The item's state once the claim holds, from its state `before`.
    pub fn state_after(self, before: State) -> State {
        match self {
            Claim::Publish => State::Processing,
            Claim::Change => before,
            Claim::Park if before == State::Processing => State::Pending,
            Claim::Park => before,
        }
    }
}

/// `claim` on item `id` under `lease`, as pipeline steps (see [`lease::guarded_steps`]).
pub fn claim_steps(claim: Claim, id: ItemId, lease: &Lease, now: Instant) -> [Step; 2] {
    lease::guarded_steps(claim.statement(), lease, now, args! { "item" => id.0 })
}

fn guarded(
    tx: &Tx<'_>,
    statement: &'static str,
    id: ItemId,
    lease: &Lease,
    now: Instant,
    extra: crate::db::Args<'_>,
) -> Result<bool, LedgerError> {
    lease::guarded(
        tx,
        statement,
        lease,
        now,
        &join(args! { "item" => id.0 }, extra),
    )
}

/// Records why this run could not publish an item; a `processing` item goes back to
/// `pending` so the next run retries it, until it has had `max_attempts` attempts: then it
/// is parked.
pub fn record_failure(
    tx: &Tx<'_>,
    id: ItemId,
    error: &str,
    lease: &Lease,
    max_attempts: u32,
    now: Instant,
) -> Result<bool, LedgerError> {
    guarded(
        tx,
        "items.record_failure",
        id,
        lease,
        now,
        args! { "error" => error, "max_attempts" => max_attempts },
    )
}

/// An item whose page the ledger's own clock found not yet due (`Outcome::NotDue`): back to
/// `pending`, the attempt this run counted given back (being early is no failure of the
/// item, and must never park it). Whether the lease held.
pub fn not_yet_due(
    tx: &Tx<'_>,
    id: ItemId,
    lease: &Lease,
    now: Instant,
) -> Result<bool, LedgerError> {
    guarded(tx, "items.not_yet_due", id, lease, now, args! {})
}

/// `claim` on item `id` under `lease`, on its own; whether it held (false: the lease was lost).
pub fn claim(
    tx: &Tx<'_>,
    claim: Claim,
    id: ItemId,
    lease: &Lease,
    now: Instant,
) -> Result<bool, LedgerError> {
    guarded(tx, claim.statement(), id, lease, now, &[])
}

/// The views of several items, read in one pipeline (in the order of `ids`).
pub fn views(tx: &Tx<'_>, ids: &[ItemId]) -> Result<Vec<Option<ItemView>>, LedgerError> {
    let steps: Vec<Step> = ids
        .iter()
        .map(|id| Step::query("items.view", args! { "id" => id.0 }))
        .collect();
    tx.pipeline(&steps)?
        .into_iter()
        .map(|o| o.rows().first().map(view_from_row).transpose())
        .collect()
}

/// Re-arms a parked item (and its parked image). Returns whether the item exists.
pub fn retry(tx: &Tx<'_>, id: ItemId, now: Instant) -> Result<bool, LedgerError> {
    let n = tx.exec("items.retry_item", args! { "item" => id.0, "now" => now.0 })?;
    tx.exec(
        "items.retry_image",
        args! { "item" => id.0, "now" => now.0 },
    )?;
    Ok(n == 1)
}

/// A parked item, as `status` lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Parked {
    #[serde(skip)]
    pub name: ItemName,
    /// How output names the item (see [`ItemName::shown`]); set by the caller.
    pub id: serde_json::Value,
    pub attempts: i64,
    pub since: Instant,
    pub error: String,
    /// Set when it is parked because two hosts' checkouts have it differently.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disagreement: Option<Disagreement>,
    /// Its file, as the ledger last recorded it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

pub fn parked(tx: &Tx<'_>) -> Result<Vec<Parked>, LedgerError> {
    tx.rows("items.parked", &[])?
        .iter()
        .map(|r| {
            let disagreement = match r.get::<Option<String>>(6)? {
                Some(other_host) => Some(Disagreement {
                    ledger_host: r.get(8)?,
                    ledger_hash: r.get(9)?,
                    other_host,
                    other_hash: r.get(7)?,
                }),
                None => None,
            };
            Ok(Parked {
                name: ItemName::new(&r.get::<String>(4)?, &r.get::<String>(5)?),
                id: serde_json::Value::from(r.get::<i64>(0)?),
                attempts: r.get(1)?,
                since: Instant(r.get(2)?),
                error: match &disagreement {
                    Some(d) => d.describe(),
                    None => r.get(3)?,
                },
                disagreement,
                file: r.get(10)?,
            })
        })
        .collect()
}

pub mod hosts;
pub use hosts::Disagreement;
mod lookup;
pub use lookup::{aliased, due_of, keys_of, placed, published_by_collection, Placed};
