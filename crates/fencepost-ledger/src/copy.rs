//! `fencepost ledger copy`: moves a ledger, every table of it, into an empty one (a SQLite
//! ledger into a PostgreSQL database, typically).
//!
//! The source is read in one snapshot and its audit chain verified first; the target is
//! written in one transaction that refuses a target with anything in it, and verifies the
//! copy (row counts, revision, ledger id, the whole audit chain against its anchor) before it
//! commits. A copy that does not verify leaves the target as it was. The ledger id travels
//! with the data, so builds made before the copy are recognised as this ledger's after it.

use super::db::Value;
use super::{audit, status, Ledger, LedgerError, Tx};

/// The tables, parents before children, with their columns and the key to read them in.
/// `items.page_hash` is not copied: the target's triggers set it from each page as the pages
/// are written (it is a copy of `pages.source_hash`, see `0014_candidates.sql`).
const TABLES: &[(&str, &[&str], &str)] = &[
    (
        "job_leases",
        &["key", "owner_id", "fence", "expires_at", "updated_at"],
        "key",
    ),
    (
        "items",
        &[
            "id",
            "source_path",
            "source_hash",
            "source_size",
            "source_mtime_ns",
            "source_ino",
            "wants_withdrawn",
            "day",
            "publish_at",
            "image_source",
            "state",
            "attempts",
            "last_error",
            "updated_at",
            "parked_at",
            "explicit_publish_at",
            "collection",
            "item_key",
            "expire_at",
            "source_host",
            "disagree_host",
            "disagree_hash",
        ],
        "id",
    ),
    (
        "images",
        &[
            "source",
            "sha256",
            "bytes",
            "content_type",
            "state",
            "attempts",
            "last_error",
            "updated_at",
            "parked_at",
        ],
        "source",
    ),
    (
        "pages",
        &[
            "item_id",
            "content_version",
            "content_hash",
            "source_hash",
            "title",
            "day",
            "data",
            "image_source",
            "image_sha256",
            "indexable",
            "withdrawn",
            "revision",
            "first_published_at",
            "updated_at",
            "commit_token",
            "collection",
            "item_key",
            "due_at",
            "summary_html",
            "terms",
            "notice",
        ],
        "item_id",
    ),
    ("page_bodies", &["item_id", "body_html"], "item_id"),
    (
        "audit_log",
        &[
            "seq",
            "at",
            "action",
            "subject",
            "revision",
            "detail",
            "previous_hash",
            "current_hash",
        ],
        "seq",
    ),
    (
        "daily_results",
        &[
            "puzzle_id",
            "slot",
            "session_id",
            "outcome",
            "guesses_used",
            "created_at",
        ],
        "puzzle_id, slot",
    ),
    (
        "deploy_targets",
        &[
            "target",
            "probed_at",
            "probed_store",
            "deployed_revision",
            "deployed_build",
            "deployed_manifest",
            "deployed_at",
        ],
        "target",
    ),
    (
        "deploy_ops",
        &[
            "id",
            "target",
            "kind",
            "status",
            "step",
            "plan",
            "attempts",
            "last_error",
            "outcome",
            "created_at",
            "updated_at",
        ],
        "id",
    ),
];

/// At most this many parameters in one multi-row insert (PostgreSQL allows 65,535).
const MAX_PARAMS: usize = 30_000;

#[derive(Debug, Clone, serde::Serialize)]
pub struct CopyReport {
    pub from: String,
    pub to: String,
    /// Rows copied, per table.
    pub tables: std::collections::BTreeMap<&'static str, usize>,
    pub revision: i64,
    pub ledger_id: String,
    pub audit_entries: i64,
    pub audit_tip: String,
    /// The target's audit chain verified against its anchor, and every count matched.
    pub verified: bool,
}

struct SiteState {
    revision: i64,
    ledger_id: String,
    /// The site the ledger belongs to (travels with it).
    site_id: Option<String>,
    tip_seq: i64,
    tip_hash: Option<String>,
}

fn site_state(tx: &Tx<'_>) -> Result<SiteState, LedgerError> {
    let tip = status::anchor(tx)?;
    Ok(SiteState {
        revision: status::revision(tx)?,
        ledger_id: status::ledger_id(tx)?,
        site_id: status::site_id(tx)?,
        tip_seq: tip.seq,
        tip_hash: tip.hash,
    })
}

fn count(tx: &Tx<'_>, table: &str) -> Result<usize, LedgerError> {
    let r = tx.rows_generated(&format!("SELECT count(*) FROM {table}"), &[])?;
    Ok(r.first().map(|r| r.get::<i64>(0)).transpose()?.unwrap_or(0) as usize)
}

/// Copies `from` into the empty ledger `to`: read in one transaction, written and verified
/// in one, so a copy that does not match leaves nothing behind.
pub fn copy(from: &mut Ledger, to: &mut Ledger) -> Result<CopyReport, LedgerError> {
    let (from_name, to_name) = (from.name().to_string(), to.name().to_string());
    from.read(|src| {
        let source = read_source(src)?;
        to.write(|dst| {
            refuse_non_empty(dst, &to_name)?;
            let mut tables = std::collections::BTreeMap::new();
            for ((table, cols, _), rows) in TABLES.iter().zip(&source.data) {
                insert_rows(dst, table, cols, rows.iter().map(|r| r.values.as_slice()))?;
                tables.insert(*table, rows.len());
            }
            write_state(dst, &source.state)?;
            let cv = verify_copy(dst, &source)?;
            Ok(CopyReport {
                from: from_name.clone(),
                to: to_name.clone(),
                tables,
                revision: source.state.revision,
                ledger_id: source.state.ledger_id.clone(),
                audit_entries: cv.entries,
                audit_tip: cv.tip,
                verified: true,
            })
        })
    })
}

/// Everything a copy takes from the source, once its audit chain verifies.
struct Source {
    audit: audit::Verification,
    state: SiteState,
    /// Each table's rows, in the order of [`TABLES`].
    data: Vec<Vec<super::db::Row>>,
}

fn read_source(src: &Tx<'_>) -> Result<Source, LedgerError> {
    let audit = audit::verify_anchored(src)?;
    if let Some(b) = &audit.first_break {
        return Err(LedgerError::Copy(format!(
            "the source's audit chain is broken at entry {} ({}); `fencepost verify` says more. Nothing was copied",
            b.seq, b.reason
        )));
    }
    let state = site_state(src)?;
    let mut data = Vec::with_capacity(TABLES.len());
    for (table, cols, key) in TABLES {
        let sql = format!("SELECT {} FROM {table} ORDER BY {key}", cols.join(", "));
        data.push(src.rows_generated(&sql, &[])?);
    }
    Ok(Source { audit, state, data })
}

/// A copy goes only into a ledger with no rows and at revision 0.
fn refuse_non_empty(dst: &Tx<'_>, to_name: &str) -> Result<(), LedgerError> {
    let mut present = Vec::new();
    for (table, _, _) in TABLES {
        let n = count(dst, table)?;
        if n > 0 {
            present.push(format!("{n} {table}"));
        }
    }
    let dst_revision = status::revision(dst)?;
    if present.is_empty() && dst_revision == 0 {
        return Ok(());
    }
    let rows = match present.is_empty() {
        true => "no rows".to_string(),
        false => present.join(", "),
    };
    Err(LedgerError::Copy(format!(
        "{to_name} is not empty ({rows}, revision {dst_revision}); copy only into a new database, or drop this one's fencepost tables first"
    )))
}

/// The source's revision, ledger id and audit anchor; on PostgreSQL also no per-host stats
/// (see publish::stat_cache) and the item id sequence past every copied row.
fn write_state(dst: &Tx<'_>, state: &SiteState) -> Result<(), LedgerError> {
    dst.exec_generated(
        "UPDATE site_state SET publication_revision = :rev, ledger_id = :id,
                audit_tip_seq = :seq, audit_tip_hash = :hash, site_id = :site WHERE id = 1",
        &[
            Value::Int(state.revision),
            Value::Text(state.ledger_id.clone()),
            Value::Int(state.tip_seq),
            state.tip_hash.clone().map_or(Value::Null, Value::Text),
            state.site_id.clone().map_or(Value::Null, Value::Text),
        ],
    )?;
    if dst.dialect() == super::db::Dialect::Postgres {
        dst.exec_generated(
            "UPDATE items SET source_size = NULL, source_mtime_ns = NULL, source_ino = NULL",
            &[],
        )?;
        dst.rows_generated(
            "SELECT setval('items_id_seq', coalesce((SELECT max(id) FROM items), 0) + 1, false)",
            &[],
        )?;
    }
    Ok(())
}

/// Verifies the copy before it is committed: every count, the revision, ledger id and
/// anchor, and the audit chain, which must end where the source's does.
fn verify_copy(dst: &Tx<'_>, source: &Source) -> Result<audit::Verification, LedgerError> {
    for ((table, _, _), rows) in TABLES.iter().zip(&source.data) {
        let n = count(dst, table)?;
        if n != rows.len() {
            return Err(LedgerError::Copy(format!(
                "{table}: {n} rows in the target, {} in the source; nothing was committed",
                rows.len()
            )));
        }
    }
    let (copied, state) = (site_state(dst)?, &source.state);
    if (
        copied.revision,
        &copied.ledger_id,
        &copied.site_id,
        copied.tip_seq,
        &copied.tip_hash,
    ) != (
        state.revision,
        &state.ledger_id,
        &state.site_id,
        state.tip_seq,
        &state.tip_hash,
    ) {
        return Err(LedgerError::Copy(
            "the target's revision, ledger id, site id or audit anchor differ from the source's; nothing was committed".into(),
        ));
    }
    let cv = audit::verify_anchored(dst)?;
    if let Some(b) = &cv.first_break {
        return Err(LedgerError::Copy(format!(
            "the copied audit chain does not verify at entry {} ({}); nothing was committed",
            b.seq, b.reason
        )));
    }
    if cv.tip != source.audit.tip || cv.entries != source.audit.entries {
        return Err(LedgerError::Copy(
            "the copied audit chain ends elsewhere than the source's; nothing was committed".into(),
        ));
    }
    Ok(cv)
}

/// Multi-row inserts, as many rows per statement as the parameter limit allows.
fn insert_rows<'r>(
    tx: &Tx<'_>,
    table: &str,
    cols: &[&str],
    rows: impl Iterator<Item = &'r [Value]>,
) -> Result<(), LedgerError> {
    let per = (MAX_PARAMS / cols.len()).max(1);
    let rows: Vec<&[Value]> = rows.collect();
    for chunk in rows.chunks(per) {
        let mut sql = format!("INSERT INTO {table} ({}) VALUES ", cols.join(", "));
        let mut values = Vec::with_capacity(chunk.len() * cols.len());
        for (i, row) in chunk.iter().enumerate() {
            if i > 0 {
                sql.push_str(", ");
            }
            sql.push('(');
            for (j, v) in row.iter().enumerate() {
                if j > 0 {
                    sql.push_str(", ");
                }
                sql.push_str(&format!(":p{}", i * cols.len() + j));
                values.push(v.clone());
            }
            sql.push(')');
        }
        tx.exec_generated(&sql, &values)?;
    }
    Ok(())
}
