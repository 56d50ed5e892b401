//! The hash-chained audit log. Each entry's `current_hash` is sha256 over the previous
//! entry's hash and the entry's own fields, computed inside the committing statement by the
//! SQL function `fp_audit_hash`, so the chain order is the commit order. [`verify`]
//! recomputes the chain with the same Rust function.

use rusqlite::functions::FunctionFlags;
use rusqlite::Connection;
use sha2::{Digest, Sha256};

/// What an audit entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditAction {
    Publish,
    Update,
    Withdraw,
    /// `public/current` or a bucket's pointer moved back.
    Rollback,
    /// A revision went live on a deploy target.
    Deploy,
}

impl AuditAction {
    pub fn as_str(self) -> &'static str {
        match self {
            AuditAction::Publish => "publish",
            AuditAction::Update => "update",
            AuditAction::Withdraw => "withdraw",
            AuditAction::Rollback => "rollback",
            AuditAction::Deploy => "deploy",
        }
    }
}

/// `previous_hash` of the first entry.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The hash of one entry. Fields are length-prefixed so no two entries encode alike.
pub fn entry_hash(
    previous_hash: &str,
    seq: i64,
    at: i64,
    action: &str,
    subject: &str,
    revision: i64,
    detail: &str,
) -> String {
    let mut h = Sha256::new();
    for field in [
        previous_hash,
        &seq.to_string(),
        &at.to_string(),
        action,
        subject,
        &revision.to_string(),
        detail,
    ] {
        h.update(field.len().to_string().as_bytes());
        h.update(b":");
        h.update(field.as_bytes());
        h.update(b";");
    }
    hex::encode(h.finalize())
}

/// Registers `fp_audit_hash(previous_hash, seq, at, action, subject, revision, detail)`.
pub fn register_functions(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_scalar_function(
        "fp_audit_hash",
        7,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            Ok(entry_hash(
                &ctx.get::<String>(0)?,
                ctx.get(1)?,
                ctx.get(2)?,
                &ctx.get::<String>(3)?,
                &ctx.get::<String>(4)?,
                ctx.get(5)?,
                &ctx.get::<String>(6)?,
            ))
        },
    )
}

/// Appends an entry when `:condition_token` is NULL or a page carries it (see
/// [`super::pages`]); binds `:now`, `:action`, `:subject`, `:detail`.
/// The tip is read inside the statement, so the entry always chains onto the latest one.
#[macro_export]
macro_rules! audit_append_select {
    ($condition:expr) => {
        concat!(
            "INSERT INTO audit_log (seq, at, action, subject, revision, detail, previous_hash, current_hash)
             SELECT tip.seq + 1, :now, :action, :subject, rev.r, :detail, tip.hash,
                    fp_audit_hash(tip.hash, tip.seq + 1, :now, :action, :subject, rev.r, :detail)
             FROM (SELECT coalesce((SELECT seq FROM audit_log ORDER BY seq DESC LIMIT 1), 0) AS seq,
                          coalesce((SELECT current_hash FROM audit_log ORDER BY seq DESC LIMIT 1), '",
            "0000000000000000000000000000000000000000000000000000000000000000",
            "') AS hash) AS tip,
                  (SELECT publication_revision AS r FROM site_state WHERE id = 1) AS rev
             WHERE ",
            $condition
        )
    };
}

const ENTRIES: &str =
    "SELECT seq, at, action, subject, revision, detail, previous_hash, current_hash
     FROM audit_log ORDER BY seq";

/// One audit entry as stored.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Entry {
    pub seq: i64,
    pub at: i64,
    pub action: String,
    pub subject: String,
    pub revision: i64,
    pub detail: String,
    pub previous_hash: String,
    pub current_hash: String,
}

/// Where the chain breaks, if it does.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Break {
    pub seq: i64,
    pub reason: String,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Verification {
    pub entries: i64,
    pub tip: String,
    pub first_break: Option<Break>,
}

/// Walks the whole chain in order, recomputing every hash.
pub fn verify(conn: &Connection) -> rusqlite::Result<Verification> {
    let mut stmt = conn.prepare(ENTRIES)?;
    let mut rows = stmt.query([])?;
    let mut prev = GENESIS.to_string();
    let mut expected_seq = 1;
    let mut entries = 0;
    while let Some(r) = rows.next()? {
        let e = Entry {
            seq: r.get(0)?,
            at: r.get(1)?,
            action: r.get(2)?,
            subject: r.get(3)?,
            revision: r.get(4)?,
            detail: r.get(5)?,
            previous_hash: r.get(6)?,
            current_hash: r.get(7)?,
        };
        entries += 1;
        let broken = |reason: String| {
            Ok(Verification {
                entries,
                tip: prev.clone(),
                first_break: Some(Break { seq: e.seq, reason }),
            })
        };
        if e.seq != expected_seq {
            return broken(format!(
                "sequence gap: expected entry {expected_seq}, found {}",
                e.seq
            ));
        }
        if e.previous_hash != prev {
            return broken(format!(
                "previous_hash {} does not match the hash of entry {} ({})",
                e.previous_hash,
                e.seq - 1,
                prev
            ));
        }
        let h = entry_hash(
            &e.previous_hash,
            e.seq,
            e.at,
            &e.action,
            &e.subject,
            e.revision,
            &e.detail,
        );
        if h != e.current_hash {
            return broken(format!(
                "content does not match its hash (stored {}, recomputed {h})",
                e.current_hash
            ));
        }
        prev = h;
        expected_seq += 1;
    }
    Ok(Verification {
        entries,
        tip: prev,
        first_break: None,
    })
}

const ANCHOR: &str = "SELECT audit_tip_seq, audit_tip_hash FROM site_state WHERE id = 1";
const HASH_AT: &str = "SELECT current_hash FROM audit_log WHERE seq = :seq";

/// [`verify`], then the chain's end against its anchor: the seq and hash of the newest entry,
/// which a trigger records beside the publication revision in the statement that appends.
/// Deleting the newest entries leaves a chain that links up, but not one that reaches its
/// anchor.
pub fn verify_anchored(conn: &Connection) -> rusqlite::Result<Verification> {
    let v = verify(conn)?;
    if v.first_break.is_some() {
        return Ok(v);
    }
    let (seq, hash): (i64, Option<String>) = conn
        .prepare_cached(ANCHOR)?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    let reason = if seq > v.entries {
        Some(format!(
            "truncated: the ledger's anchor says the chain reaches entry {seq} ({}), but it ends at entry {}",
            hash.as_deref().unwrap_or("-"),
            v.entries
        ))
    } else if seq < v.entries {
        Some(format!(
            "the ledger's anchor names entry {seq}, but the chain goes on to entry {}: entries were added behind the ledger's back",
            v.entries
        ))
    } else if seq > 0 && hash.as_deref() != Some(v.tip.as_str()) {
        Some(format!(
            "the newest entry hashes to {}, not to the {} the ledger anchored",
            v.tip,
            hash.as_deref().unwrap_or("-")
        ))
    } else {
        None
    };
    Ok(Verification {
        first_break: reason.map(|reason| Break {
            seq: seq.max(v.entries),
            reason,
        }),
        ..v
    })
}

/// The hash of entry `seq`, if the chain holds it.
pub fn hash_at(conn: &Connection, seq: i64) -> rusqlite::Result<Option<String>> {
    use rusqlite::OptionalExtension;
    conn.prepare_cached(HASH_AT)?
        .query_row(rusqlite::named_params! { ":seq": seq }, |r| r.get(0))
        .optional()
}

const APPEND_ONCE: &str = crate::audit_append_select!(
    "NOT EXISTS (SELECT 1 FROM audit_log WHERE action = :action AND subject = :subject)"
);

/// Appends an entry unless one with the same action and subject exists (a receipt that a
/// re-driven step may try to write twice). Returns whether it appended.
pub fn append_once(
    conn: &Connection,
    now: crate::clock::Instant,
    action: AuditAction,
    subject: &str,
    detail: &str,
) -> rusqlite::Result<bool> {
    let n = conn
        .prepare_cached(APPEND_ONCE)?
        .execute(rusqlite::named_params! {
            ":now": now.0, ":action": action.as_str(), ":subject": subject, ":detail": detail,
        })?;
    Ok(n == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_prefixing_separates_fields() {
        let a = entry_hash(GENESIS, 1, 2, "ab", "c", 1, "");
        let b = entry_hash(GENESIS, 1, 2, "a", "bc", 1, "");
        assert_ne!(a, b);
    }

    #[test]
    fn sql_function_matches_rust() {
        let conn = Connection::open_in_memory().unwrap();
        register_functions(&conn).unwrap();
        let h: String = conn
            .query_row(
                "SELECT fp_audit_hash(?1, 3, 4, 'publish', 'item:1', 9, '{}')",
                [GENESIS],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(h, entry_hash(GENESIS, 3, 4, "publish", "item:1", 9, "{}"));
    }
}
