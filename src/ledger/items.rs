//! The items ledger: what the content tree says (synced from a scan, with the stat cache) and
//! where each item is in its life: pending → processing → published → withdrawn.
//!
//! Syncing records observations of the content tree; it is idempotent and takes no lease.
//! Everything that moves an item's state is lease-guarded.

use crate::clock::Instant;
use crate::content::{CachedFile, FileStat, ItemId, ReadFile};
use crate::lease_guard;
use crate::ledger::lease::Lease;
use rusqlite::{named_params, Connection, OptionalExtension};
use std::collections::{HashMap, HashSet};

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

    fn parse(s: &str) -> rusqlite::Result<State> {
        Ok(match s {
            "pending" => State::Pending,
            "processing" => State::Processing,
            "published" => State::Published,
            "withdrawn" => State::Withdrawn,
            other => {
                return Err(rusqlite::Error::FromSqlConversionFailure(
                    0,
                    rusqlite::types::Type::Text,
                    format!("unknown item state {other:?}").into(),
                ))
            }
        })
    }
}

/// What the ledger knows of one item, joined with its page and image.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemView {
    pub id: ItemId,
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
}

/// What a publish run should do with an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Make a not-yet-public item public (first time, or again after a withdrawal).
    Publish,
    /// Re-render a public item whose file changed.
    Update,
    /// Take a public item down: its file is gone or says `withdrawn = true`.
    Withdraw,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    Act(Action),
    /// Not due until this instant.
    Embargoed(Instant),
    /// Public state already matches the file.
    Current,
    /// Never published and has no file to publish (removed, or withdrawn before it was due).
    Idle,
    /// Parked after too many failed attempts: nothing is tried until it is re-armed.
    Parked,
}

impl ItemView {
    /// Whether the tree currently asks for this item to be public.
    pub fn present(&self) -> bool {
        self.source_hash.is_some() && !self.wants_withdrawn
    }

    /// Decides what to do, from the ledger alone. Pure, so it is the same at the candidate
    /// scan and at preflight under the lease.
    pub fn plan(&self, now: Instant) -> Plan {
        if self.parked_at.is_some() {
            return Plan::Parked;
        }
        match self.state {
            State::Pending | State::Processing | State::Withdrawn => {
                if self.present() {
                    if self.publish_at <= now {
                        Plan::Act(Action::Publish)
                    } else {
                        Plan::Embargoed(self.publish_at)
                    }
                } else if self.state == State::Withdrawn {
                    Plan::Current
                } else {
                    Plan::Idle
                }
            }
            State::Published => {
                if !self.present() {
                    Plan::Act(Action::Withdraw)
                } else if self.page.as_ref().map(|p| &p.source_hash) != self.source_hash.as_ref() {
                    Plan::Act(Action::Update)
                } else {
                    Plan::Current
                }
            }
        }
    }
}

const STAT_CACHE: &str =
    "SELECT id, source_path, source_hash, source_size, source_mtime_ns, source_ino
     FROM items WHERE source_hash IS NOT NULL";

/// A changed file (a new source hash) re-arms a parked item: the editor fixed something.
const UPSERT_SEEN: &str = "INSERT INTO items (id, source_path, source_hash, source_size, source_mtime_ns, source_ino,
                        wants_withdrawn, day, publish_at, explicit_publish_at, image_source, updated_at)
     VALUES (:id, :path, :hash, :size, :mtime_ns, :ino, :wants_withdrawn, :day, :publish_at,
             :explicit_publish_at, :image_source, :now)
     ON CONFLICT (id) DO UPDATE SET
         parked_at = CASE WHEN items.source_hash IS excluded.source_hash THEN items.parked_at END,
         attempts = CASE WHEN items.source_hash IS excluded.source_hash THEN items.attempts ELSE 0 END,
         explicit_publish_at = excluded.explicit_publish_at,
         source_path = excluded.source_path, source_hash = excluded.source_hash,
         source_size = excluded.source_size, source_mtime_ns = excluded.source_mtime_ns,
         source_ino = excluded.source_ino, wants_withdrawn = excluded.wants_withdrawn,
         day = excluded.day, publish_at = excluded.publish_at, image_source = excluded.image_source,
         updated_at = excluded.updated_at
     WHERE items.source_hash IS NOT excluded.source_hash OR items.source_path IS NOT excluded.source_path
        OR items.source_size IS NOT excluded.source_size OR items.source_mtime_ns IS NOT excluded.source_mtime_ns
        OR items.source_ino IS NOT excluded.source_ino";

const MARK_GONE: &str =
    "UPDATE items SET source_hash = NULL, source_size = NULL, source_mtime_ns = NULL,
                      source_ino = NULL, updated_at = :now
     WHERE id = :id AND source_hash IS NOT NULL";

/// A never-published item whose file is gone leaves no trace, once no run holds it. Swept on
/// every sync, not only when the file goes: a run that held the lease at that moment must not
/// leave the row behind for ever.
const FORGET_UNPUBLISHED: &str = "DELETE FROM items
     WHERE source_hash IS NULL AND state IN ('pending', 'processing')
       AND NOT EXISTS (SELECT 1 FROM pages WHERE item_id = items.id)
       AND NOT EXISTS (SELECT 1 FROM job_leases WHERE key = 'publication:' || items.id AND expires_at > :now)";

/// Items not yet public are due at their file's own `publish_at`, or at the end of their day
/// plus the grace window as configured *now* (`:grace_ms`): a changed window applies to every
/// item still waiting, in either direction.
const RECOMPUTE_DUE: &str = "UPDATE items
     SET publish_at = coalesce(explicit_publish_at, unixepoch(day, '+1 day') * 1000 + :grace_ms)
     WHERE state <> 'published'
       AND publish_at IS NOT coalesce(explicit_publish_at, unixepoch(day, '+1 day') * 1000 + :grace_ms)";

const VIEW_COLUMNS: &str = "SELECT i.id, i.state, i.source_path, i.source_hash, i.wants_withdrawn, i.publish_at,
            i.image_source, img.state = 'stored' AND img.sha256 IS NOT NULL,
            p.content_version, p.source_hash, p.indexable, p.image_source, p.image_sha256, p.withdrawn,
            i.attempts, i.parked_at
     FROM items i
     LEFT JOIN pages p ON p.item_id = i.id
     LEFT JOIN images img ON img.source = i.image_source";

const MARK_PROCESSING: &str = concat!(
    "UPDATE items SET state = 'processing', attempts = attempts + 1, updated_at = :now
     WHERE id = :item AND state IN ('pending', 'processing', 'withdrawn') AND ",
    lease_guard!()
);

/// Counts an attempt at an update or a withdrawal (a publication counts in MARK_PROCESSING).
const CLAIM: &str = concat!(
    "UPDATE items SET attempts = attempts + 1, updated_at = :now WHERE id = :item AND ",
    lease_guard!()
);

/// Records a failure; after `:max_attempts` attempts the item is parked.
const RECORD_FAILURE: &str = concat!(
    "UPDATE items SET state = CASE WHEN state = 'processing' THEN 'pending' ELSE state END,
                      last_error = :error, updated_at = :now,
                      parked_at = CASE WHEN attempts >= :max_attempts THEN :now ELSE parked_at END
     WHERE id = :item AND ",
    lease_guard!()
);

/// Parks an item that reached its attempts without ever recording a failure (every attempt
/// crashed the run, say).
const PARK: &str = concat!(
    "UPDATE items SET parked_at = :now, updated_at = :now,
                      state = CASE WHEN state = 'processing' THEN 'pending' ELSE state END,
                      last_error = coalesce(last_error, 'no attempt finished (the runs stopped or crashed)')
     WHERE id = :item AND parked_at IS NULL AND ",
    lease_guard!()
);

/// Re-arms a parked item, and its image if that was parked too.
const RETRY_ITEM: &str = "UPDATE items SET parked_at = NULL, attempts = 0, updated_at = :now
     WHERE id = :item";
const RETRY_IMAGE: &str = "UPDATE images SET parked_at = NULL, attempts = 0, updated_at = :now
     WHERE parked_at IS NOT NULL AND source = (SELECT image_source FROM items WHERE id = :item)";

/// Parked items, for `status`.
const PARKED: &str = "SELECT id, attempts, parked_at, coalesce(last_error, '') FROM items
     WHERE parked_at IS NOT NULL ORDER BY id";

pub fn stat_cache(conn: &Connection) -> rusqlite::Result<HashMap<String, CachedFile>> {
    let mut stmt = conn.prepare(STAT_CACHE)?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(1)?,
            CachedFile {
                id: ItemId(r.get(0)?),
                source_hash: r.get(2)?,
                stat: FileStat {
                    size: r.get::<_, Option<i64>>(3)?.unwrap_or(-1),
                    mtime_ns: r.get::<_, Option<i64>>(4)?.unwrap_or(-1),
                    ino: r.get::<_, Option<i64>>(5)?.unwrap_or(-1),
                },
            },
        ))
    })?;
    rows.collect()
}

/// Counts of what [`sync`] changed.
#[derive(Debug, Default, Clone, Copy)]
pub struct SyncReport {
    pub seen: usize,
    pub gone: usize,
}

/// Records a scan: every read file's fields, and which known items lost their file.
/// Runs inside the caller's write transaction.
/// `known`: ids the ledger has a file for (the stat cache's ids), to find the ones now gone.
pub fn sync(
    conn: &Connection,
    read: &[ReadFile],
    known: &[ItemId],
    present: &HashSet<ItemId>,
    grace_minutes: u32,
    now: Instant,
) -> rusqlite::Result<SyncReport> {
    let mut report = SyncReport::default();
    let mut upsert = conn.prepare_cached(UPSERT_SEEN)?;
    for f in read {
        let item = &f.item;
        report.seen += upsert.execute(named_params! {
            ":id": item.id.0,
            ":path": f.path,
            ":hash": f.source_hash,
            ":size": f.stat.size,
            ":mtime_ns": f.stat.mtime_ns,
            ":ino": f.stat.ino,
            ":wants_withdrawn": item.withdrawn,
            ":day": item.day.to_string(),
            ":publish_at": item.due_at(grace_minutes).0,
            ":explicit_publish_at": item.publish_at.map(|t| t.0),
            ":image_source": item.image.as_ref().map(|i| i.key()),
            ":now": now.0,
        })?;
    }
    let mut gone = conn.prepare_cached(MARK_GONE)?;
    for id in known
        .iter()
        .filter(|id| !present.contains(id))
        .map(|id| id.0)
    {
        report.gone += gone.execute(named_params! { ":id": id, ":now": now.0 })?;
    }
    conn.prepare_cached(FORGET_UNPUBLISHED)?
        .execute(named_params! { ":now": now.0 })?;
    conn.prepare_cached(RECOMPUTE_DUE)?
        .execute(named_params! { ":grace_ms": i64::from(grace_minutes) * 60_000 })?;
    Ok(report)
}

fn view_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ItemView> {
    let page = match r.get::<_, Option<i64>>(8)? {
        None => None,
        Some(content_version) => Some(PageView {
            content_version,
            source_hash: r.get(9)?,
            indexable: r.get(10)?,
            image_source: r.get(11)?,
            image_sha256: r.get(12)?,
            withdrawn: r.get(13)?,
        }),
    };
    Ok(ItemView {
        id: ItemId(r.get(0)?),
        state: State::parse(&r.get::<_, String>(1)?)?,
        source_path: r.get(2)?,
        source_hash: r.get(3)?,
        wants_withdrawn: r.get(4)?,
        publish_at: Instant(r.get(5)?),
        image_source: r.get(6)?,
        image_stored: r.get::<_, Option<bool>>(7)?.unwrap_or(false),
        page,
        attempts: r.get(14)?,
        parked_at: r.get::<_, Option<i64>>(15)?.map(Instant),
    })
}

/// A published item whose page matches its file: the common case, left out of
/// [`candidate_views`] so a large site does not materialise every row on every run.
const PUBLISHED_AND_CURRENT: &str =
    "i.state = 'published' AND i.source_hash IS NOT NULL AND i.wants_withdrawn = 0
     AND p.source_hash = i.source_hash";

/// Every item except those published and current (see [`count_published_current`]), in due
/// order. [`ItemView::plan`] decides about each.
pub fn candidate_views(conn: &Connection) -> rusqlite::Result<Vec<ItemView>> {
    let sql =
        format!("{VIEW_COLUMNS} WHERE NOT ({PUBLISHED_AND_CURRENT}) ORDER BY i.publish_at, i.id");
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([], view_from_row)?;
    rows.collect()
}

/// How many items [`candidate_views`] leaves out (their plan is [`Plan::Current`]).
pub fn count_published_current(conn: &Connection) -> rusqlite::Result<usize> {
    let sql = format!("SELECT count(*) FROM items i JOIN pages p ON p.item_id = i.id WHERE {PUBLISHED_AND_CURRENT}");
    conn.prepare_cached(&sql)?
        .query_row([], |r| r.get::<_, i64>(0))
        .map(|n| n as usize)
}

pub fn view(conn: &Connection, id: ItemId) -> rusqlite::Result<Option<ItemView>> {
    let sql = format!("{VIEW_COLUMNS} WHERE i.id = :id");
    conn.prepare_cached(&sql)?
        .query_row(named_params! { ":id": id.0 }, view_from_row)
        .optional()
}

/// Marks an item as being published by this lease holder. Returns whether it still held it.
pub fn mark_processing(
    conn: &Connection,
    id: ItemId,
    lease: &Lease,
    now: Instant,
) -> rusqlite::Result<bool> {
    let n = conn
        .prepare_cached(MARK_PROCESSING)?
        .execute(named_params! {
            ":item": id.0, ":now": now.0,
            ":lease_key": lease.key, ":owner": lease.owner.0, ":fence": lease.fence.0,
        })?;
    Ok(n == 1)
}

/// Records why this run could not publish an item; a `processing` item goes back to
/// `pending` so the next run retries it, until it has had `max_attempts` attempts: then it
/// is parked.
pub fn record_failure(
    conn: &Connection,
    id: ItemId,
    error: &str,
    lease: &Lease,
    max_attempts: u32,
    now: Instant,
) -> rusqlite::Result<bool> {
    let n = conn
        .prepare_cached(RECORD_FAILURE)?
        .execute(named_params! {
            ":item": id.0, ":error": error, ":now": now.0, ":max_attempts": max_attempts,
            ":lease_key": lease.key, ":owner": lease.owner.0, ":fence": lease.fence.0,
        })?;
    Ok(n == 1)
}

/// Counts an attempt at an update or a withdrawal under the lease.
pub fn claim(conn: &Connection, id: ItemId, lease: &Lease, now: Instant) -> rusqlite::Result<bool> {
    let n = conn.prepare_cached(CLAIM)?.execute(named_params! {
        ":item": id.0, ":now": now.0,
        ":lease_key": lease.key, ":owner": lease.owner.0, ":fence": lease.fence.0,
    })?;
    Ok(n == 1)
}

/// Parks an item under the lease (its attempts are used up).
pub fn park(conn: &Connection, id: ItemId, lease: &Lease, now: Instant) -> rusqlite::Result<bool> {
    let n = conn.prepare_cached(PARK)?.execute(named_params! {
        ":item": id.0, ":now": now.0,
        ":lease_key": lease.key, ":owner": lease.owner.0, ":fence": lease.fence.0,
    })?;
    Ok(n == 1)
}

/// Re-arms a parked item (and its parked image). Returns whether the item exists.
pub fn retry(conn: &Connection, id: ItemId, now: Instant) -> rusqlite::Result<bool> {
    let n = conn
        .prepare_cached(RETRY_ITEM)?
        .execute(named_params! { ":item": id.0, ":now": now.0 })?;
    conn.prepare_cached(RETRY_IMAGE)?
        .execute(named_params! { ":item": id.0, ":now": now.0 })?;
    Ok(n == 1)
}

/// A parked item, as `status` lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Parked {
    pub id: i64,
    pub attempts: i64,
    pub since: Instant,
    pub error: String,
}

pub fn parked(conn: &Connection) -> rusqlite::Result<Vec<Parked>> {
    conn.prepare_cached(PARKED)?
        .query_map([], |r| {
            Ok(Parked {
                id: r.get(0)?,
                attempts: r.get(1)?,
                since: Instant(r.get(2)?),
                error: r.get(3)?,
            })
        })?
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(
        state: State,
        hash: Option<&str>,
        page_hash: Option<&str>,
        publish_at: i64,
    ) -> ItemView {
        ItemView {
            id: ItemId(1),
            state,
            source_path: "content/answers/1.md".into(),
            source_hash: hash.map(str::to_string),
            wants_withdrawn: false,
            publish_at: Instant(publish_at),
            image_source: None,
            image_stored: false,
            attempts: 0,
            parked_at: None,
            page: page_hash.map(|h| PageView {
                content_version: 1,
                source_hash: h.into(),
                indexable: true,
                image_source: None,
                image_sha256: None,
                withdrawn: state == State::Withdrawn,
            }),
        }
    }

    #[test]
    fn plans_follow_the_item_life() {
        let now = Instant(100);
        assert_eq!(
            view(State::Pending, Some("a"), None, 100).plan(now),
            Plan::Act(Action::Publish)
        );
        assert_eq!(
            view(State::Pending, Some("a"), None, 101).plan(now),
            Plan::Embargoed(Instant(101))
        );
        assert_eq!(
            view(State::Processing, Some("a"), None, 1).plan(now),
            Plan::Act(Action::Publish)
        );
        assert_eq!(view(State::Pending, None, None, 1).plan(now), Plan::Idle);
        assert_eq!(
            view(State::Published, Some("a"), Some("a"), 1).plan(now),
            Plan::Current
        );
        assert_eq!(
            view(State::Published, Some("b"), Some("a"), 1).plan(now),
            Plan::Act(Action::Update)
        );
        assert_eq!(
            view(State::Published, None, Some("a"), 1).plan(now),
            Plan::Act(Action::Withdraw)
        );
        assert_eq!(
            view(State::Withdrawn, None, Some("a"), 1).plan(now),
            Plan::Current
        );
        assert_eq!(
            view(State::Withdrawn, Some("a"), Some("a"), 1).plan(now),
            Plan::Act(Action::Publish)
        );
        let mut w = view(State::Published, Some("a"), Some("a"), 1);
        w.wants_withdrawn = true;
        assert_eq!(w.plan(now), Plan::Act(Action::Withdraw));
        w.parked_at = Some(Instant(50));
        assert_eq!(w.plan(now), Plan::Parked);
    }
}
