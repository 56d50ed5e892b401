//! One entry of a bucket ledger's log, as bytes: either the statements one write transaction
//! ran that changed something (JSON), or a whole database (the first entry, a schema
//! migration), which is a SQLite file as it stands.
//!
//! A statement entry carries the statements' text, not their names, so a later fencepost
//! whose statement files changed replays exactly what the writer ran; and what each one
//! answered (rows changed, or the digest of the rows a `RETURNING` query gave), so a replay
//! that would differ is caught at the statement, not discovered later in the audit chain.

use crate::db::Value;
use crate::sqlite::{Effect, Recorded};
use serde::{Deserialize, Serialize};

/// What an entry holds.
pub(crate) enum Body {
    Statements(Statements),
    /// A whole SQLite database, at this entry.
    Image(Vec<u8>),
}

/// A statement entry: what one write transaction changed, the ledger it was written to, and
/// (in an entry with no statements, written after a snapshot) what that snapshot must equal.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Statements {
    pub(crate) statements: Vec<Recorded>,
    /// The schema version the statements ran on (a replica on another one cannot replay them).
    pub(crate) schema: i64,
    /// The id of the ledger this entry belongs to (entries written before it was carried say
    /// nothing): a replica of another ledger refuses it.
    pub(crate) ledger: Option<String>,
    pub(crate) snapshot: Option<SnapshotRecord>,
}

/// What a snapshot must equal to be trusted: its position and the digest of its bytes — and
/// of the ledger's tables it holds (`replica::tables_digest`), which `verify` recomputes by
/// replaying the log to that position: a snapshot of an edited cache is vouched for as bytes
/// but not as tables. (Absent in records older releases wrote.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SnapshotRecord {
    pub(crate) seq: i64,
    pub(crate) sha256: String,
    pub(crate) bytes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tables: Option<String>,
}

const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";
const FORMAT: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Wire {
    fencepost_ledger_log: u32,
    seq: i64,
    /// The schema version the statements ran on (a replica on another one cannot replay them).
    schema: i64,
    /// Which process wrote it (a random id per process).
    writer: String,
    /// The ledger's id (`site_state.ledger_id`); absent in entries older than it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ledger: Option<String>,
    /// In an entry written after a snapshot: what the snapshot must equal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    snapshot: Option<SnapshotRecord>,
    /// Each distinct statement text once.
    texts: Vec<String>,
    statements: Vec<WireStatement>,
}

#[derive(Serialize, Deserialize)]
struct WireStatement {
    text: usize,
    args: Vec<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    changed: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rows: Option<String>,
}

/// The bytes of statement entry `seq`, written by `writer`.
pub(crate) fn encode(seq: i64, writer: &str, entry: &Statements) -> Vec<u8> {
    let mut texts: Vec<String> = Vec::new();
    let statements = entry
        .statements
        .iter()
        .map(|r| {
            let text = match texts.iter().position(|t| *t == r.sql) {
                Some(i) => i,
                None => {
                    texts.push(r.sql.clone());
                    texts.len() - 1
                }
            };
            let (changed, rows) = match &r.effect {
                Effect::Changed(n) => (Some(*n), None),
                Effect::Rows(d) => (None, Some(d.clone())),
            };
            WireStatement {
                text,
                args: r.values.iter().map(to_json).collect(),
                changed,
                rows,
            }
        })
        .collect();
    let wire = Wire {
        fencepost_ledger_log: FORMAT,
        seq,
        schema: entry.schema,
        writer: writer.to_string(),
        ledger: entry.ledger.clone(),
        snapshot: entry.snapshot.clone(),
        texts,
        statements,
    };
    serde_json::to_vec(&wire).expect("log entries serialise")
}

/// Reads entry `seq`'s bytes.
pub(crate) fn decode(seq: i64, bytes: Vec<u8>) -> Result<Body, String> {
    if bytes.starts_with(SQLITE_MAGIC) {
        return Ok(Body::Image(bytes));
    }
    let wire: Wire = serde_json::from_slice(&bytes).map_err(|e| format!("not a log entry: {e}"))?;
    if wire.fencepost_ledger_log != FORMAT {
        return Err(format!(
            "log format {} is newer than this fencepost understands ({FORMAT}): upgrade fencepost",
            wire.fencepost_ledger_log
        ));
    }
    if wire.seq != seq {
        return Err(format!("it says it is entry {}", wire.seq));
    }
    let mut out = Vec::with_capacity(wire.statements.len());
    for st in wire.statements {
        let sql = wire
            .texts
            .get(st.text)
            .ok_or_else(|| format!("statement text {} is missing", st.text))?;
        let effect = match (st.changed, st.rows) {
            (Some(n), None) => Effect::Changed(n),
            (None, Some(d)) => Effect::Rows(d),
            _ => return Err("a statement without its one effect".into()),
        };
        let values = st.args.iter().map(from_json).collect::<Result<_, _>>()?;
        out.push(Recorded {
            sql: sql.clone(),
            values,
            effect,
        });
    }
    Ok(Body::Statements(Statements {
        statements: out,
        schema: wire.schema,
        ledger: wire.ledger,
        snapshot: wire.snapshot,
    }))
}

fn to_json(v: &Value) -> serde_json::Value {
    match v {
        Value::Null => serde_json::Value::Null,
        Value::Int(i) => serde_json::Value::from(*i),
        Value::Text(t) => serde_json::Value::from(t.as_str()),
    }
}

fn from_json(v: &serde_json::Value) -> Result<Value, String> {
    match v {
        serde_json::Value::Null => Ok(Value::Null),
        serde_json::Value::String(s) => Ok(Value::Text(s.clone())),
        serde_json::Value::Number(n) => n
            .as_i64()
            .map(Value::Int)
            .ok_or_else(|| format!("argument {n} is not an integer")),
        other => Err(format!("argument {other} is not a value")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_reads_back_as_written() {
        let recorded = vec![
            Recorded {
                sql: "UPDATE t SET a = ?1 WHERE b = ?2".into(),
                values: vec![Value::Int(i64::MAX), Value::Text("é\"\n".into())],
                effect: Effect::Changed(2),
            },
            Recorded {
                sql: "UPDATE t SET a = ?1 WHERE b = ?2".into(),
                values: vec![Value::Null, Value::Int(-1)],
                effect: Effect::Rows("ab".into()),
            },
        ];
        let entry = Statements {
            statements: recorded,
            schema: 11,
            ledger: Some("abc".into()),
            snapshot: Some(SnapshotRecord {
                seq: 5,
                sha256: "00".into(),
                bytes: 3,
                tables: Some("11".into()),
            }),
        };
        let bytes = encode(7, "w", &entry);
        let Body::Statements(back) = decode(7, bytes.clone()).unwrap() else {
            panic!("not statements")
        };
        assert_eq!(back, entry);
        assert!(decode(8, bytes).is_err(), "an entry under another name");
    }

    #[test]
    fn an_entry_from_before_the_ledger_id_and_snapshot_records_still_reads() {
        let old = br#"{"fencepost_ledger_log":1,"seq":2,"schema":11,"writer":"w","texts":["UPDATE t SET a = 1"],"statements":[{"text":0,"args":[],"changed":1}]}"#;
        let Body::Statements(back) = decode(2, old.to_vec()).unwrap() else {
            panic!("not statements")
        };
        assert_eq!((back.ledger, back.snapshot, back.schema), (None, None, 11));
        assert_eq!(back.statements.len(), 1);
    }
}
