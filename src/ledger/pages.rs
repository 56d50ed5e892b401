//! The publish commit: one atomic batch per item, chained by a commit token.
//!
//! The first statement writes the page only when every precondition holds, re-checked in
//! SQL: the lease (owner, fence, expiry), the item's state and the source hash seen at
//! preflight, the image (when the page has one) being stored, and the page still being at
//! the content version preflight saw. It stamps a fresh random token on the row. Every later
//! statement is conditioned on that token being there, so when the first statement writes
//! nothing, the whole batch writes nothing. No statement depends on Rust reading the result
//! of an earlier one; the batch ends by reading the outcome back.
//!
//! The page's body goes to `page_bodies` in the same batch, under the same token condition.
//!
//! One-way rules live in the statement too: an indexable page never returns to noindex, and
//! a page that has its image never loses it.

use crate::audit_append_select;
use crate::clock::Instant;
use crate::content::ItemId;
use crate::lease_guard;
use crate::ledger::audit::AuditAction;
use crate::ledger::items::{Action, State};
use crate::ledger::lease::Lease;
use rusqlite::{named_params, Connection};

/// The render-ready public fields of a page.
#[derive(Debug, Clone, PartialEq)]
pub struct PageFields {
    pub title: String,
    pub day: String,
    pub price: String,
    pub body_html: String,
    pub image_source: Option<String>,
    pub image_sha256: Option<String>,
    pub indexable: bool,
}

impl PageFields {
    /// sha256 over the public fields: equal hashes mean nothing public differs.
    pub fn content_hash(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        for f in [
            self.title.as_str(),
            &self.day,
            &self.price,
            &self.body_html,
            self.image_sha256.as_deref().unwrap_or(""),
            if self.indexable { "1" } else { "0" },
        ] {
            h.update(f.len().to_string().as_bytes());
            h.update(b":");
            h.update(f.as_bytes());
        }
        hex::encode(h.finalize())
    }
}

/// Everything one item's commit batch needs, decided before the batch runs.
#[derive(Debug, Clone)]
pub struct Commit {
    pub id: ItemId,
    pub action: Action,
    pub lease: Lease,
    /// The item state preflight left it in.
    pub expected_state: State,
    /// The page's content_version at preflight (0: no page).
    pub expected_version: i64,
    /// The item's source hash at preflight (None: the file is gone).
    pub source_hash: Option<String>,
    /// The page to write, for `Publish` and `Update`.
    pub page: Option<PageFields>,
    pub token: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Published,
    Updated,
    Withdrawn,
    Unchanged,
    LeaseLost,
    Conflict,
}

#[derive(Debug, Clone)]
pub struct CommitResult {
    pub outcome: Outcome,
    pub revision: i64,
    pub content_version: Option<i64>,
}

const WRITE_PAGE: &str = concat!(
    "INSERT INTO pages (item_id, content_version, content_hash, source_hash, title, day, price,
                        image_source, image_sha256, indexable, withdrawn, revision, first_published_at,
                        updated_at, commit_token)
     SELECT :item, 1, :content_hash, :source_hash, :title, :day, :price,
            :image_source, :image_sha256, :indexable, 0, 0, :now, :now, :token
     WHERE ",
    lease_guard!(),
    "
       AND EXISTS (SELECT 1 FROM items WHERE id = :item AND state = :expected_state AND source_hash = :source_hash)
       AND (:image_sha256 IS NULL OR EXISTS (SELECT 1 FROM images WHERE source = :image_source
                                              AND sha256 = :image_sha256 AND state = 'stored'))
       AND coalesce((SELECT content_version FROM pages WHERE item_id = :item), 0) = :expected_version
     ON CONFLICT (item_id) DO UPDATE SET
         content_version = pages.content_version + 1,
         content_hash = excluded.content_hash,
         source_hash = excluded.source_hash,
         title = excluded.title, day = excluded.day, price = excluded.price,
         image_source = CASE WHEN excluded.image_sha256 IS NULL THEN pages.image_source ELSE excluded.image_source END,
         image_sha256 = coalesce(excluded.image_sha256, pages.image_sha256),
         indexable = max(pages.indexable, excluded.indexable),
         withdrawn = 0,
         updated_at = excluded.updated_at,
         commit_token = excluded.commit_token
     WHERE pages.withdrawn = 1 OR pages.content_hash <> excluded.content_hash"
);

const WITHDRAW_PAGE: &str = concat!(
    "UPDATE pages SET withdrawn = 1, content_version = content_version + 1, updated_at = :now,
                      commit_token = :token
     WHERE item_id = :item AND withdrawn = 0 AND content_version = :expected_version AND ",
    lease_guard!(),
    "
       AND EXISTS (SELECT 1 FROM items WHERE id = :item AND state = :expected_state
                   AND source_hash IS :source_hash)"
);

/// The file changed but renders to the same public page: remember the new source hash so
/// the item stops looking changed, without a revision bump.
const RECORD_SAME_CONTENT: &str = concat!(
    "UPDATE pages SET source_hash = :source_hash
     WHERE item_id = :item AND commit_token <> :token AND withdrawn = 0 AND content_hash = :content_hash
       AND EXISTS (SELECT 1 FROM items WHERE id = :item AND state = :expected_state AND source_hash = :source_hash)
       AND ",
    lease_guard!()
);

macro_rules! token_landed {
    () => {
        "EXISTS (SELECT 1 FROM pages WHERE item_id = :item AND commit_token = :token)"
    };
}

const WRITE_BODY: &str = concat!(
    "INSERT INTO page_bodies (item_id, body_html) SELECT :item, :body_html WHERE ",
    token_landed!(),
    " ON CONFLICT (item_id) DO UPDATE SET body_html = excluded.body_html"
);

const SET_ITEM_STATE: &str = concat!(
    "UPDATE items SET state = :new_state, last_error = NULL, attempts = 0, parked_at = NULL,
                      updated_at = :now WHERE id = :item AND ",
    token_landed!()
);

const BUMP_REVISION: &str = concat!(
    "UPDATE site_state SET publication_revision = publication_revision + 1 WHERE id = 1 AND ",
    token_landed!()
);

const STAMP_PAGE_REVISION: &str =
    "UPDATE pages SET revision = (SELECT publication_revision FROM site_state WHERE id = 1)
     WHERE item_id = :item AND commit_token = :token";

const AUDIT: &str = audit_append_select!(token_landed!());

const READ_BACK: &str = concat!(
    "SELECT p.commit_token, p.content_version, p.content_hash, p.source_hash, p.withdrawn,
            (SELECT publication_revision FROM site_state WHERE id = 1), ",
    lease_guard!(),
    "
     FROM (SELECT 1) LEFT JOIN pages p ON p.item_id = :item"
);

/// Runs one item's batch inside the caller's write transaction and reads back the outcome.
pub fn commit(conn: &Connection, c: &Commit, now: Instant) -> rusqlite::Result<CommitResult> {
    let guard = named_params! {
        ":lease_key": c.lease.key, ":owner": c.lease.owner.0, ":fence": c.lease.fence.0, ":now": now.0,
    };
    let content_hash = c.page.as_ref().map(PageFields::content_hash);
    let expected_state = c.expected_state.as_str();
    match (c.action, &c.page) {
        (Action::Publish | Action::Update, Some(p)) => {
            let mut params = guard.to_vec();
            params.extend_from_slice(named_params! {
                ":item": c.id.0, ":content_hash": content_hash, ":source_hash": c.source_hash,
                ":title": p.title, ":day": p.day, ":price": p.price,
                ":image_source": p.image_source, ":image_sha256": p.image_sha256,
                ":indexable": p.indexable, ":token": c.token,
                ":expected_state": expected_state, ":expected_version": c.expected_version,
            });
            conn.prepare_cached(WRITE_PAGE)?
                .execute(params.as_slice())?;
            conn.prepare_cached(WRITE_BODY)?.execute(named_params! {
                ":item": c.id.0, ":token": c.token, ":body_html": p.body_html,
            })?;
        }
        _ => {
            let mut params = guard.to_vec();
            params.extend_from_slice(named_params! {
                ":item": c.id.0, ":token": c.token, ":source_hash": c.source_hash,
                ":expected_state": expected_state, ":expected_version": c.expected_version,
            });
            conn.prepare_cached(WITHDRAW_PAGE)?
                .execute(params.as_slice())?;
        }
    }
    crate::fail_point!("publish.commit.after_page");
    let new_state = match c.action {
        Action::Withdraw => State::Withdrawn,
        Action::Publish | Action::Update => State::Published,
    };
    conn.prepare_cached(SET_ITEM_STATE)?
        .execute(named_params! {
            ":item": c.id.0, ":token": c.token, ":new_state": new_state.as_str(), ":now": now.0,
        })?;
    conn.prepare_cached(BUMP_REVISION)?
        .execute(named_params! { ":item": c.id.0, ":token": c.token })?;
    conn.prepare_cached(STAMP_PAGE_REVISION)?
        .execute(named_params! { ":item": c.id.0, ":token": c.token })?;
    let action = match c.action {
        Action::Publish => AuditAction::Publish,
        Action::Update => AuditAction::Update,
        Action::Withdraw => AuditAction::Withdraw,
    }
    .as_str();
    let detail = serde_json::json!({
        "content_version": c.expected_version + 1,
        "content_hash": content_hash,
        "source_hash": c.source_hash,
        "owner": c.lease.owner.0,
        "fence": c.lease.fence.0,
    })
    .to_string();
    conn.prepare_cached(AUDIT)?.execute(named_params! {
        ":item": c.id.0, ":token": c.token, ":now": now.0, ":action": action,
        ":subject": format!("item:{}", c.id.0), ":detail": detail,
    })?;
    if let (Action::Update, Some(hash)) = (c.action, &content_hash) {
        let mut params = guard.to_vec();
        params.extend_from_slice(named_params! {
            ":item": c.id.0, ":token": c.token, ":source_hash": c.source_hash, ":content_hash": hash,
            ":expected_state": expected_state,
        });
        conn.prepare_cached(RECORD_SAME_CONTENT)?
            .execute(params.as_slice())?;
    }
    crate::fail_point!("publish.commit.before_read_back");
    let back = conn.prepare_cached(READ_BACK)?.query_row(
        named_params! {
            ":item": c.id.0,
            ":lease_key": c.lease.key, ":owner": c.lease.owner.0, ":fence": c.lease.fence.0, ":now": now.0,
        },
        |r| {
            Ok(ReadBack {
                token: r.get(0)?,
                content_version: r.get(1)?,
                content_hash: r.get(2)?,
                source_hash: r.get(3)?,
                withdrawn: r.get::<_, Option<bool>>(4)?.unwrap_or(false),
                revision: r.get(5)?,
                lease_ok: r.get(6)?,
            })
        },
    )?;
    Ok(decide(c, content_hash.as_deref(), &back))
}

struct ReadBack {
    token: Option<String>,
    content_version: Option<i64>,
    content_hash: Option<String>,
    source_hash: Option<String>,
    withdrawn: bool,
    revision: i64,
    lease_ok: bool,
}

fn decide(c: &Commit, content_hash: Option<&str>, back: &ReadBack) -> CommitResult {
    let landed = back.token.as_deref() == Some(c.token.as_str());
    let outcome = if landed {
        match c.action {
            Action::Publish => Outcome::Published,
            Action::Update => Outcome::Updated,
            Action::Withdraw => Outcome::Withdrawn,
        }
    } else if c.action == Action::Update
        && back.lease_ok
        && !back.withdrawn
        && back.content_hash.as_deref() == content_hash
        && back.source_hash == c.source_hash
    {
        Outcome::Unchanged
    } else if !back.lease_ok {
        Outcome::LeaseLost
    } else {
        Outcome::Conflict
    };
    CommitResult {
        outcome,
        revision: back.revision,
        content_version: back.content_version,
    }
}
