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
//! On PostgreSQL the batch first locks the lease row ([`lease::lock`]), so a takeover cannot
//! commit in between; the revision bump locks the revision row, which orders the audit
//! appends of racing hosts by commit.
//!
//! On PostgreSQL the page statement also re-checks that the page is due by the database's
//! own clock (`due_at <=` the transaction's start, `transaction_timestamp()`, which is never
//! later than the commit): no host clock — measured once a cycle, and stepped since, or a
//! `--now` ahead of the real clock — decides a publication on a shared ledger. A page it
//! refuses is [`Outcome::NotDue`]: nothing written, the item back to pending, its attempt
//! not counted. Only a simulated calendar (`--allow-future-now`) is not re-checked. SQLite's
//! clock is the host's: there the decision clock is the ledger's already.
//!
//! One-way rules live in the statement too: an indexable page never returns to noindex, and
//! a page that has its image never loses it.

use crate::args;
use crate::audit::AuditAction;
use crate::db::{join, Args, Step};
use crate::items::{Action, State};
use crate::lease::{self, Lease};
use crate::{LedgerError, Tx};
use fencepost_core::clock::Instant;
use fencepost_core::item::ItemId;
use fencepost_core::item::ItemName;

/// The render-ready public fields of a page.
#[derive(Debug, Clone, PartialEq)]
pub struct PageFields {
    pub title: String,
    /// `YYYY-MM-DD`, or `""` for an item without a day.
    pub day: String,
    /// Declared fields and `[extra]`, as canonical JSON.
    pub data: String,
    pub body_html: String,
    /// The body before `<!-- more -->`, when it has the marker.
    pub summary_html: Option<String>,
    /// Taxonomy terms, canonical JSON (`{"tags":["Rust"]}`); `""` for none.
    pub terms: String,
    pub image_source: Option<String>,
    pub image_sha256: Option<String>,
    pub indexable: bool,
    /// When the item was due.
    pub due_at: Instant,
    /// The item's JSON for the site's transparency log (none: the site keeps no log).
    pub item_json: Option<String>,
}

impl PageFields {
    /// sha256 over the public fields: equal hashes mean nothing public differs.
    pub fn content_hash(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        for f in [
            self.title.as_str(),
            &self.day,
            &self.data,
            &self.body_html,
            self.image_sha256.as_deref().unwrap_or(""),
            if self.indexable { "1" } else { "0" },
        ] {
            h.update(f.len().to_string().as_bytes());
            h.update(b":");
            h.update(f.as_bytes());
        }
        // Fields added later count only when set, so a page without them keeps the hash it
        // had before they existed (an upgraded ledger does not see every page as changed).
        if let Some(s) = &self.summary_html {
            h.update(b"summary:");
            h.update(s.len().to_string().as_bytes());
            h.update(b":");
            h.update(s.as_bytes());
        }
        if !self.terms.is_empty() {
            h.update(b"terms:");
            h.update(self.terms.len().to_string().as_bytes());
            h.update(b":");
            h.update(self.terms.as_bytes());
        }
        hex::encode(h.finalize())
    }
}

/// Everything one item's commit batch needs, decided before the batch runs.
#[derive(Debug, Clone)]
pub struct Commit {
    pub id: ItemId,
    pub name: ItemName,
    pub action: Action,
    pub lease: Lease,
    /// The item state preflight left it in.
    pub expected_state: State,
    /// The page's content_version at preflight (0: no page).
    pub expected_version: i64,
    /// The item's source hash at preflight (None: the file is gone).
    pub source_hash: Option<String>,
    /// The page to write, for `Publish`, `Update` and `Renotice`.
    pub page: Option<PageFields>,
    /// For `Withdraw`: whether the page keeps a notice (its collection's `on_withdraw`
    /// now), recorded with the withdrawal so a later switch of `on_withdraw` never brings
    /// back a page that was removed.
    pub notice: bool,
    pub token: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Published,
    Updated,
    Withdrawn,
    /// A withdrawn item's notice re-rendered from its edited file.
    Renoticed,
    Unchanged,
    LeaseLost,
    Conflict,
    /// The page is not due by the ledger's own clock (PostgreSQL's): nothing was written.
    NotDue,
}

#[derive(Debug, Clone)]
pub struct CommitResult {
    pub outcome: Outcome,
    pub revision: i64,
    pub content_version: Option<i64>,
}

/// One item's batch, as steps: the writes that need no revision (the lease row locked
/// first: on PostgreSQL that keeps a takeover out until we commit), then the ones that take
/// the revision row, then the read-back.
struct Parts {
    write: Vec<Step>,
    record: Vec<Step>,
    read_back: Step,
    content_hash: Option<String>,
}

fn parts(tx: &Tx<'_>, c: &Commit, now: Instant, due: DueCheck) -> Parts {
    let content_hash = c.page.as_ref().map(PageFields::content_hash);
    // A first publication is re-checked; an update's page is public already.
    let check_due = due != DueCheck::AsGiven && c.action == Action::Publish;
    let guard = args! {
        "lease_key" => c.lease.key, "owner" => c.lease.owner.0, "fence" => c.lease.fence.0,
        "now" => now.0, "check_due" => check_due,
    };
    let write = write_steps(c, guard, &content_hash, now);
    let record = record_steps(c, guard, &content_hash, now, due.given());
    let due_at = c.page.as_ref().map_or(0, |p| p.due_at.0);
    if check_due {
        tx.due_by_ledger(due_at);
    }
    let read_back = Step::query(
        "pages.read_back",
        &join(guard, args! { "item" => c.id.0, "due_at" => due_at }),
    );
    Parts {
        write,
        record,
        read_back,
        content_hash,
    }
}

/// The lease row locked, then the page (and its body) written, or withdrawn — each under
/// the lease guard and the state and version preflight saw.
fn write_steps(
    c: &Commit,
    guard: Args<'_>,
    content_hash: &Option<String>,
    now: Instant,
) -> Vec<Step> {
    let expected_state = c.expected_state.as_str();
    let mut write = vec![lease::lock_step(&c.lease, now)];
    match (c.action, &c.page) {
        (Action::Publish | Action::Update, Some(p)) => {
            write.push(Step::exec(
                "pages.write_page",
                &join(
                    guard,
                    args! {
                        "item" => c.id.0, "content_hash" => *content_hash, "source_hash" => c.source_hash,
                        "title" => p.title, "day" => p.day, "data" => p.data, "due_at" => p.due_at.0,
                        "summary_html" => p.summary_html, "terms" => p.terms,
                        "image_source" => p.image_source, "image_sha256" => p.image_sha256,
                        "indexable" => p.indexable, "token" => c.token,
                        "expected_state" => expected_state, "expected_version" => c.expected_version,
                    },
                ),
            ));
            write.push(Step::exec(
                "pages.write_body",
                args! { "item" => c.id.0, "token" => c.token, "body_html" => p.body_html },
            ));
            if let Some(json) = &p.item_json {
                let digest = fencepost_core::digest::sha256_hex(json.as_bytes());
                write.push(Step::exec(
                    "tlog.record_public",
                    args! { "item" => c.id.0, "token" => c.token, "json" => json, "json_digest" => digest },
                ));
            }
        }
        (Action::Renotice, Some(p)) => {
            write.push(Step::exec(
                "pages.renotice_page",
                &join(
                    guard,
                    args! {
                        "item" => c.id.0, "content_hash" => *content_hash, "source_hash" => c.source_hash,
                        "title" => p.title, "day" => p.day, "data" => p.data,
                        "summary_html" => p.summary_html, "terms" => p.terms, "token" => c.token,
                        "expected_state" => expected_state, "expected_version" => c.expected_version,
                    },
                ),
            ));
            write.push(Step::exec(
                "pages.write_body",
                args! { "item" => c.id.0, "token" => c.token, "body_html" => p.body_html },
            ));
        }
        _ => write.push(Step::exec(
            "pages.withdraw_page",
            &join(
                guard,
                args! {
                    "item" => c.id.0, "token" => c.token, "source_hash" => c.source_hash,
                    "expected_state" => expected_state, "expected_version" => c.expected_version,
                    "notice" => c.notice,
                },
            ),
        )),
    }
    write
}

/// The item's new state, the revision bumped and stamped, the audit entry; for an update
/// whose page came out the same, that recorded instead of a new version.
fn record_steps(
    c: &Commit,
    guard: Args<'_>,
    content_hash: &Option<String>,
    now: Instant,
    now_given: bool,
) -> Vec<Step> {
    let new_state = match c.action {
        Action::Withdraw | Action::Renotice => State::Withdrawn,
        Action::Publish | Action::Update => State::Published,
    };
    let action = match c.action {
        Action::Publish => AuditAction::Publish,
        Action::Update => AuditAction::Update,
        Action::Withdraw => AuditAction::Withdraw,
        Action::Renotice => AuditAction::Notice,
    }
    .as_str();
    let mut detail = serde_json::json!({
        "item": c.name.to_string(),
        "content_version": c.expected_version + 1,
        "content_hash": content_hash,
        "source_hash": c.source_hash,
        "owner": c.lease.owner.0,
        "fence": c.lease.fence.0,
    });
    // An instant given by hand (`--now`) is said so: `fencepost log` shows it. (Absent
    // otherwise, so entries read as before.)
    if now_given {
        detail["now_given"] = serde_json::Value::Bool(true);
    }
    let detail = detail.to_string();
    let token = args! { "item" => c.id.0, "token" => c.token };
    let mut record = vec![
        Step::exec(
            "pages.set_item_state",
            args! { "item" => c.id.0, "token" => c.token, "new_state" => new_state.as_str(), "now" => now.0 },
        ),
        Step::exec("pages.bump_revision", token),
        Step::exec("pages.stamp_revision", token),
        Step::exec(
            "pages.audit",
            args! {
                "item" => c.id.0, "token" => c.token, "now" => now.0, "action" => action,
                "subject" => format!("item:{}", c.id.0), "detail" => detail,
            },
        ),
    ];
    // An edit that renders the same: the new source hash is remembered, with no revision.
    let same = match c.action {
        Action::Update => Some("pages.record_same_content"),
        Action::Renotice => Some("pages.record_same_notice"),
        Action::Publish | Action::Withdraw => None,
    };
    if let (Some(statement), Some(hash)) = (same, content_hash) {
        record.push(Step::exec(
            statement,
            &join(
                guard,
                args! {
                    "item" => c.id.0, "token" => c.token, "source_hash" => c.source_hash,
                    "content_hash" => hash, "expected_state" => c.expected_state.as_str(),
                },
            ),
        ));
    }
    record
}

/// Whether the page statement re-checks the due instant by the ledger's own clock (see the
/// module's comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DueCheck {
    /// By the ledger's clock, where it has one of its own (PostgreSQL).
    ByLedger,
    /// The instant was given by hand (`--now`): re-checked by the ledger's clock as well,
    /// and the audit entry says the instant was given.
    Given,
    /// The instant given stands (`--allow-future-now`: a simulated calendar); the audit
    /// entry says it was given.
    AsGiven,
}

impl DueCheck {
    pub fn for_clock(clock: &fencepost_core::clock::Clock) -> DueCheck {
        match (clock.overrules_due(), clock.is_given()) {
            (false, _) => DueCheck::AsGiven,
            (true, true) => DueCheck::Given,
            (true, false) => DueCheck::ByLedger,
        }
    }

    /// Whether the commit's instant was given by hand.
    fn given(self) -> bool {
        matches!(self, DueCheck::Given | DueCheck::AsGiven)
    }
}

/// Runs one item's batch inside the caller's write transaction and reads back the outcome.
pub fn commit(
    tx: &Tx<'_>,
    c: &Commit,
    now: Instant,
    due: DueCheck,
) -> Result<CommitResult, LedgerError> {
    Ok(commit_all(tx, &[c], now, due)?.remove(0))
}

/// Runs the batches of several items inside the caller's write transaction, as three
/// pipelines (every item's writes, every item's revision and audit records, every read-back),
/// and reads back each outcome. Each item's batch is exactly [`commit`]'s; only the round
/// trips are shared. The revision row is taken in the second pipeline, so racing hosts hold
/// it for two flights, not for the whole batch.
pub fn commit_all(
    tx: &Tx<'_>,
    commits: &[&Commit],
    now: Instant,
    due: DueCheck,
) -> Result<Vec<CommitResult>, LedgerError> {
    let parts: Vec<Parts> = commits.iter().map(|c| parts(tx, c, now, due)).collect();
    let writes: Vec<Step> = parts.iter().flat_map(|p| p.write.iter().cloned()).collect();
    tx.pipeline(&writes)?;
    fencepost_core::fail_point!("publish.commit.after_page");
    let records: Vec<Step> = parts
        .iter()
        .flat_map(|p| p.record.iter().cloned())
        .collect();
    tx.pipeline(&records)?;
    fencepost_core::fail_point!("publish.commit.before_read_back");
    let reads: Vec<Step> = parts.iter().map(|p| p.read_back.clone()).collect();
    let outs = tx.pipeline(&reads)?;
    commits
        .iter()
        .zip(&parts)
        .zip(outs)
        .map(|((c, p), out)| {
            let rows = out.rows();
            let r = rows
                .first()
                .ok_or_else(|| LedgerError::Internal("pages.read_back answered no row".into()))?;
            let back = ReadBack {
                token: r.get(0)?,
                content_version: r.get(1)?,
                content_hash: r.get(2)?,
                source_hash: r.get(3)?,
                withdrawn: r.get::<Option<bool>>(4)?.unwrap_or(false),
                revision: r.get(5)?,
                lease_ok: r.get(6)?,
                due_ok: r.get::<Option<bool>>(7)?.unwrap_or(true),
            };
            Ok(decide(c, p.content_hash.as_deref(), &back))
        })
        .collect()
}

struct ReadBack {
    token: Option<String>,
    content_version: Option<i64>,
    content_hash: Option<String>,
    source_hash: Option<String>,
    withdrawn: bool,
    revision: i64,
    lease_ok: bool,
    /// Whether the page is due by the ledger's own clock (always, where it has none).
    due_ok: bool,
}

fn decide(c: &Commit, content_hash: Option<&str>, back: &ReadBack) -> CommitResult {
    let landed = back.token.as_deref() == Some(c.token.as_str());
    let outcome = if landed {
        match c.action {
            Action::Publish => Outcome::Published,
            Action::Update => Outcome::Updated,
            Action::Withdraw => Outcome::Withdrawn,
            Action::Renotice => Outcome::Renoticed,
        }
    } else if matches!(c.action, Action::Update | Action::Renotice)
        && back.lease_ok
        && back.withdrawn == (c.action == Action::Renotice)
        && back.content_hash.as_deref() == content_hash
        && back.source_hash == c.source_hash
    {
        Outcome::Unchanged
    } else if !back.lease_ok {
        Outcome::LeaseLost
    } else if c.action == Action::Publish && !back.due_ok {
        Outcome::NotDue
    } else {
        Outcome::Conflict
    };
    CommitResult {
        outcome,
        revision: back.revision,
        content_version: back.content_version,
    }
}
