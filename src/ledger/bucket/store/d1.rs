//! The log in a Cloudflare D1 database, through the proxy Worker fencepost ships
//! (`edge/cloudflare/ledger-proxy.js`): one POST of a batch of statements per call, run by
//! `env.DB.batch` — atomically, all or none — and answered with each statement's rows and
//! changes and the Worker's clock. D1 has no interactive transaction, so nothing here needs
//! one: a transaction runs on the local replica (see [`crate::ledger::bucket`]), and its
//! commit is one batch.
//!
//! ```text
//! fp_head        (id = 1, seq)                     the newest entry: the commit's compare-and-set
//! fp_log         (seq, part, parts, bytes, sha256, writer, data)   entries, base64, in parts
//! fp_snapshots   (seq, part, parts, bytes, sha256, data)           snapshots, the same way
//! fp_site_state  (id = 1, publication_revision, log_seq)           what the edge Worker reads
//! ```
//!
//! **A commit is one batch that fails as a whole when it loses.** Its first statement moves
//! the head from the entry the replica stands at to the next one — or, when the head is
//! elsewhere, to -1, which the head's `CHECK (seq >= 0)` refuses: D1 then rolls the whole
//! batch back, and the writer catches up and runs its transaction again, as on a bucket (or
//! as PostgreSQL re-runs a transaction it aborted). The entry's rows (primary key `(seq,
//! part)`) are a second guard, and the publication revision the edge reads moves in the same
//! batch, so it is never ahead of or behind the log. A batch whose answer was lost (a timeout,
//! a proxy killed mid-request) is sent again; if the first landed, the second is refused by
//! the head, and the entry is read back: this writer's own id and digest there mean it
//! committed.
//!
//! **D1's limits are checked here, by name, before anything is sent**: a statement of at most
//! 100,000 bytes and 100 bound parameters, a value of at most 2,000,000 bytes (entries and
//! snapshots are cut into parts of 1,400,000 bytes, base64-encoded), integers within 2^53
//! (they travel as JSON numbers), and a batch within the proxy's request bound
//! ([`BATCH_BYTES`]; an entry that cannot fit one batch is refused, never split — its parts
//! must land together).
//!
//! **Time is the Worker's**: every answer carries the Worker's `Date.now()` at the batch, so
//! a runner measures its clock against Cloudflare's as it does against a bucket's
//! `Last-Modified` (see [`crate::ledger::bucket::clock`]), to the millisecond.

use super::{Skew, Stamp, SNAPSHOTS_KEPT};
use crate::ledger::LedgerError;
use base64::Engine as _;
use serde_json::{json, Value as Json};
use std::cell::RefCell;
use std::collections::HashMap;
use std::io::Read;
use std::time::Duration;

/// The environment variable that holds the proxy's bearer token (its `LEDGER_TOKEN` secret).
pub(crate) const TOKEN_ENV: &str = "FENCEPOST_D1_TOKEN";
/// D1's longest statement, in bytes.
const STATEMENT_BYTES: usize = 100_000;
/// D1's most bound parameters per statement.
const PARAMS: usize = 100;
/// D1's largest string, BLOB or row, in bytes.
pub(crate) const VALUE_BYTES: usize = 2_000_000;
/// Raw bytes per part of an entry or snapshot (base64 makes 1,866,668 of them).
const PART_BYTES: usize = 1_400_000;
/// The largest batch sent: the proxy's default `MAX_REQUEST_BYTES`.
pub(crate) const BATCH_BYTES: usize = 32 * 1024 * 1024;
/// The largest answer read (a catch-up's entries).
const ANSWER_BYTES: u64 = 256 * 1024 * 1024;
/// Entries read ahead with a listing, and per request after it.
const READ_AHEAD: i64 = 32;
/// The largest integer a JSON number carries exactly.
const JSON_INT: i64 = (1 << 53) - 1;

/// The tables the log keeps, made (if absent) by the first batch each process sends.
const TABLES: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS fp_head (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL CHECK (seq >= 0))",
    "INSERT OR IGNORE INTO fp_head (id, seq) VALUES (1, 0)",
    "CREATE TABLE IF NOT EXISTS fp_log (seq INTEGER NOT NULL, part INTEGER NOT NULL, parts INTEGER NOT NULL, bytes INTEGER NOT NULL, sha256 TEXT NOT NULL, writer TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (seq, part), CHECK (part >= 0 AND part < parts)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS fp_snapshots (seq INTEGER NOT NULL, part INTEGER NOT NULL, parts INTEGER NOT NULL, bytes INTEGER NOT NULL, sha256 TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (seq, part), CHECK (part >= 0 AND part < parts)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS fp_site_state (id INTEGER PRIMARY KEY CHECK (id = 1), publication_revision INTEGER NOT NULL, log_seq INTEGER NOT NULL)",
];

/// The endpoints whose tables this process has made sure of.
static READY: std::sync::Mutex<std::collections::BTreeSet<String>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// Whether `url` names a D1 ledger.
pub(super) fn is_d1(url: &str) -> bool {
    url.starts_with("d1+https://") || url.starts_with("d1+http://")
}

/// A D1 log, reached through its proxy Worker.
pub(in crate::ledger) struct D1 {
    agent: ureq::Agent,
    /// `https://HOST[/path]/batch`.
    endpoint: String,
    token: String,
    /// How errors name it (the URL it was opened from; it holds no credentials).
    name: String,
    url: String,
    writer: String,
    /// Entries read with a listing, for the catch-up that follows it.
    read_ahead: RefCell<HashMap<i64, (Vec<u8>, Stamp)>>,
}

/// One statement of a batch.
struct St {
    sql: String,
    params: Vec<Json>,
}

fn st(sql: &str, params: Vec<Json>) -> St {
    St {
        sql: sql.to_string(),
        params,
    }
}

/// What a batch answered: each statement's rows, and the Worker's clock.
struct Answer {
    results: Vec<Vec<serde_json::Map<String, Json>>>,
    now_ms: i64,
}

/// Why a batch did not run.
enum Failed {
    /// A statement violated a constraint: D1 rolled the whole batch back.
    Constraint(String),
    /// No answer (the proxy or the network failed) after the tries allowed.
    Unanswered(String),
    /// Anything else, said in full.
    Refused(LedgerError),
}

impl D1 {
    pub(super) fn open(url: &str, name: &str) -> Result<D1, LedgerError> {
        let endpoint = endpoint(url)
            .map_err(|why| LedgerError::Location(format!("{name}: {why}. Nothing was created")))?;
        let token = std::env::var(TOKEN_ENV).ok().filter(|t| !t.trim().is_empty()).ok_or_else(|| {
            LedgerError::Location(format!(
                "{name}: a D1 ledger is reached through its proxy Worker with a bearer token, read from {TOKEN_ENV} (the proxy's LEDGER_TOKEN secret; see docs/deploy.md), which is not set. Nothing was created"
            ))
        })?;
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(Duration::from_secs(10))
            .timeout(Duration::from_secs(120))
            .build();
        Ok(D1 {
            agent,
            endpoint,
            token: token.trim().to_string(),
            name: name.to_string(),
            url: url.to_string(),
            writer: uuid::Uuid::new_v4().simple().to_string(),
            read_ahead: RefCell::default(),
        })
    }

    pub(super) fn open_again(other: &D1) -> Result<D1, LedgerError> {
        D1::open(&other.url, &other.name)
    }

    pub(super) fn short_id(&self) -> String {
        crate::digest::sha256_hex(self.endpoint.as_bytes())[..16].to_string()
    }

    pub(super) fn writer(&self) -> &str {
        &self.writer
    }

    pub(super) fn object_name(&self, rel: &str) -> String {
        format!("{} ({rel})", self.name)
    }

    pub(super) fn entry_name(&self, seq: i64) -> String {
        format!("{} (fp_log entry {seq})", self.name)
    }

    pub(super) fn snapshot_name(&self, seq: i64) -> String {
        format!("{} (fp_snapshots snapshot {seq})", self.name)
    }

    fn location(&self, what: &str, why: &str) -> LedgerError {
        LedgerError::Location(format!("{}: {what}: {why}", self.name))
    }

    /// Runs `stmts` as one batch (after the tables' statements, the first time), trying again
    /// when no answer came.
    fn batch(&self, what: &str, mut stmts: Vec<St>) -> Result<Answer, Failed> {
        let ready = READY
            .lock()
            .map(|r| r.contains(&self.endpoint))
            .unwrap_or(false);
        let skip = if ready { 0 } else { TABLES.len() };
        if !ready {
            let mut all: Vec<St> = TABLES.iter().map(|t| st(t, vec![])).collect();
            all.append(&mut stmts);
            stmts = all;
        }
        let body = self.encode(what, &stmts).map_err(Failed::Refused)?;
        let mut attempt = 0u32;
        loop {
            match self.send(&body) {
                Ok(mut answer) => {
                    if !ready {
                        if let Ok(mut r) = READY.lock() {
                            r.insert(self.endpoint.clone());
                        }
                    }
                    answer.results.drain(..skip.min(answer.results.len()));
                    return Ok(answer);
                }
                Err(Failed::Unanswered(why)) if attempt < 5 => {
                    attempt += 1;
                    tracing::debug!(ledger = %self.name, what, attempt, error = %why, "the D1 proxy did not answer; sending the batch again");
                    std::thread::sleep(Duration::from_millis(100 << attempt));
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The request's bytes, refused by name when D1 or the proxy would refuse it.
    fn encode(&self, what: &str, stmts: &[St]) -> Result<Vec<u8>, LedgerError> {
        for s in stmts {
            let refuse = |why: String| self.location(what, &format!("{why}; nothing was sent"));
            if s.sql.len() > STATEMENT_BYTES {
                return Err(refuse(format!(
                    "a statement of {} bytes is longer than D1 takes ({STATEMENT_BYTES})",
                    s.sql.len()
                )));
            }
            if s.params.len() > PARAMS {
                return Err(refuse(format!(
                    "a statement with {} parameters is more than D1 binds ({PARAMS})",
                    s.params.len()
                )));
            }
            for p in &s.params {
                match p {
                    Json::String(t) if t.len() > VALUE_BYTES => {
                        return Err(refuse(format!("a value of {} bytes is larger than D1 stores ({VALUE_BYTES})", t.len())))
                    }
                    Json::Number(n) if n.as_i64().is_none_or(|i| !(-JSON_INT..=JSON_INT).contains(&i)) => {
                        return Err(refuse(format!("the integer {n} is past 2^53, which D1 carries as a JSON number and would round")))
                    }
                    _ => {}
                }
            }
        }
        let body: Vec<Json> = stmts
            .iter()
            .map(|s| json!({"sql": s.sql, "params": s.params}))
            .collect();
        let bytes = serde_json::to_vec(&json!({ "statements": body }))
            .map_err(|e| LedgerError::Internal(format!("encoding a D1 batch: {e}")))?;
        if bytes.len() > BATCH_BYTES {
            return Err(self.location(what, &format!("the batch is {} bytes, more than the proxy takes in one request ({BATCH_BYTES}); nothing was sent", bytes.len())));
        }
        Ok(bytes)
    }

    fn send(&self, body: &[u8]) -> Result<Answer, Failed> {
        let sent = self
            .agent
            .post(&self.endpoint)
            .set("Authorization", &format!("Bearer {}", self.token))
            .set("Content-Type", "application/json")
            .send_bytes(body);
        let (status, resp) = match sent {
            Ok(r) => (r.status(), r),
            Err(ureq::Error::Status(code, r)) => (code, r),
            Err(ureq::Error::Transport(t)) => return Err(Failed::Unanswered(t.to_string())),
        };
        let mut text = Vec::new();
        if let Err(e) = resp.into_reader().take(ANSWER_BYTES).read_to_end(&mut text) {
            return Err(Failed::Unanswered(format!("reading the answer: {e}")));
        }
        let v: Json = match serde_json::from_slice(&text) {
            Ok(v) => v,
            Err(_) if matches!(status, 502..=504) => {
                return Err(Failed::Unanswered(format!("HTTP {status}")))
            }
            Err(e) => {
                return Err(Failed::Refused(self.location(
                    "reading the proxy's answer",
                    &format!("HTTP {status}, not the proxy's JSON ({e}): is {} the ledger proxy (edge/cloudflare/ledger-proxy.js)?", self.endpoint),
                )))
            }
        };
        let error = v["error"].as_str().unwrap_or("").to_string();
        match status {
            200 => parse_answer(&v).ok_or_else(|| {
                Failed::Refused(self.location("reading the proxy's answer", "it is not a batch's results"))
            }),
            409 => Err(Failed::Constraint(error)),
            401 | 403 => Err(Failed::Refused(self.location(
                "sending a batch",
                &format!("the proxy refused the token in {TOKEN_ENV} ({error}): set it to the proxy's LEDGER_TOKEN secret. Nothing was written"),
            ))),
            502..=504 | 429 => Err(Failed::Unanswered(format!("HTTP {status}: {error}"))),
            _ => Err(Failed::Refused(self.location(
                "running a batch",
                &format!("the proxy answered HTTP {status}: {error}"),
            ))),
        }
    }

    /// [`Self::batch`] where a constraint failure is an error too.
    fn run(&self, what: &str, stmts: Vec<St>) -> Result<Answer, LedgerError> {
        self.batch(what, stmts).map_err(|e| self.failed(what, e))
    }

    fn failed(&self, what: &str, e: Failed) -> LedgerError {
        match e {
            Failed::Refused(e) => e,
            Failed::Constraint(why) => self.location(what, &why),
            Failed::Unanswered(why) => self.location(
                what,
                &format!("the proxy did not answer ({why}) after 6 tries; run again when it does"),
            ),
        }
    }

    pub(super) fn probe(&self, clock: bool) -> Result<Option<Skew>, LedgerError> {
        let sent_ms = crate::clock::host_millis();
        let answer = self.run(
            "reading the Worker's clock",
            vec![st("SELECT 1 AS one", vec![])],
        )?;
        let answered_ms = crate::clock::host_millis();
        // D1 enforces a primary key: create-if-absent needs no probing.
        Ok(clock.then_some(Skew {
            min_ms: sent_ms - answer.now_ms - 1,
            max_ms: answered_ms - answer.now_ms,
            store_ms: answer.now_ms,
            host_ms: answered_ms,
        }))
    }

    pub(super) fn list_from(&self, seq: i64) -> Result<Vec<Stamp>, LedgerError> {
        let from = seq.max(1);
        let answer = self.run(
            "listing the log",
            vec![
                st("SELECT seq, bytes, sha256 FROM fp_log WHERE seq >= ?1 AND part = 0 ORDER BY seq", vec![json!(from)]),
                st(READ_PARTS_RANGE, vec![json!(seq + 1), json!(seq + READ_AHEAD)]),
            ],
        )?;
        let mut results = answer.results.into_iter();
        let listed = results.next().unwrap_or_default();
        let stamps = listed
            .iter()
            .map(|r| {
                stamp_of(r).ok_or_else(|| {
                    self.location("listing the log", "a row without seq, bytes or sha256")
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let ahead = self.assemble("fp_log", results.next().unwrap_or_default())?;
        *self.read_ahead.borrow_mut() = ahead;
        Ok(stamps)
    }

    pub(super) fn head_entry(&self, seq: i64) -> Result<Option<Stamp>, LedgerError> {
        let answer = self.run(
            "reading the log",
            vec![st(
                "SELECT seq, bytes, sha256 FROM fp_log WHERE seq = ?1 AND part = 0",
                vec![json!(seq)],
            )],
        )?;
        Ok(answer
            .results
            .into_iter()
            .flatten()
            .next()
            .as_ref()
            .and_then(stamp_of))
    }

    pub(super) fn entries(
        &self,
        seqs: &[i64],
    ) -> Result<Vec<Option<(Vec<u8>, Stamp)>>, LedgerError> {
        let mut have = std::mem::take(&mut *self.read_ahead.borrow_mut());
        let missing: Vec<i64> = seqs
            .iter()
            .copied()
            .filter(|s| !have.contains_key(s))
            .collect();
        for chunk in missing.chunks(READ_AHEAD as usize) {
            let stmts = chunk
                .iter()
                .map(|s| st(READ_PARTS_RANGE, vec![json!(s), json!(s)]))
                .collect();
            let answer = self.run("reading the log", stmts)?;
            have.extend(self.assemble("fp_log", answer.results.into_iter().flatten().collect())?);
        }
        Ok(seqs.iter().map(|s| have.remove(s)).collect())
    }

    /// Whole entries (or snapshots) from their parts' rows, each checked against its length
    /// and digest; one with a part missing is left out (a snapshot still being written), one
    /// whose bytes do not match is refused by name.
    fn assemble(
        &self,
        table: &str,
        rows: Vec<serde_json::Map<String, Json>>,
    ) -> Result<HashMap<i64, (Vec<u8>, Stamp)>, LedgerError> {
        let mut parts: std::collections::BTreeMap<i64, Vec<serde_json::Map<String, Json>>> =
            Default::default();
        for r in rows {
            let Some(seq) = r.get("seq").and_then(Json::as_i64) else {
                continue;
            };
            parts.entry(seq).or_default().push(r);
        }
        let mut out = HashMap::new();
        for (seq, rows) in parts {
            let Some(stamp) = stamp_of(&rows[0]) else {
                continue;
            };
            let want = rows[0].get("parts").and_then(Json::as_i64).unwrap_or(0);
            let whole = rows.len() as i64 == want
                && rows
                    .iter()
                    .enumerate()
                    .all(|(i, r)| r.get("part").and_then(Json::as_i64) == Some(i as i64));
            if !whole {
                continue;
            }
            let mut bytes = Vec::with_capacity(stamp.bytes as usize);
            for r in &rows {
                let data = r.get("data").and_then(Json::as_str).unwrap_or("");
                let raw = base64::engine::general_purpose::STANDARD.decode(data).map_err(|e| {
                    self.location(&format!("reading {table} {seq}"), &format!("a part is not base64 ({e}): the row was written by something other than fencepost"))
                })?;
                bytes.extend_from_slice(&raw);
            }
            let digest = crate::digest::sha256_hex(&bytes);
            if bytes.len() as u64 != stamp.bytes || Some(&digest) != stamp.etag.as_ref() {
                return Err(LedgerError::Log {
                    ledger: self.name.clone(),
                    problem: format!(
                        "{table} {seq} in {} is damaged: its parts give {} bytes with sha256 {digest}, where its row records {} bytes with sha256 {}. It was changed after it was written; restore the database from D1's Time Travel (`wrangler d1 time-travel restore`). Nothing was written",
                        self.name, bytes.len(), stamp.bytes, stamp.etag.as_deref().unwrap_or("-")
                    ),
                });
            }
            out.insert(seq, (bytes, stamp));
        }
        Ok(out)
    }

    pub(super) fn create_entry(
        &self,
        seq: i64,
        bytes: Vec<u8>,
        revision: Option<i64>,
    ) -> Result<Option<Stamp>, LedgerError> {
        let stamp = Stamp {
            seq,
            bytes: bytes.len() as u64,
            etag: Some(crate::digest::sha256_hex(&bytes)),
        };
        let what = format!("writing log entry {seq}");
        let mut stmts = vec![st(
            "UPDATE fp_head SET seq = CASE WHEN seq = ?1 THEN ?2 ELSE -1 END WHERE id = 1",
            vec![json!(seq - 1), json!(seq)],
        )];
        stmts.extend(parts_of(&bytes).into_iter().enumerate().map(|(i, (part, parts))| {
            st(
                "INSERT INTO fp_log (seq, part, parts, bytes, sha256, writer, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                vec![json!(seq), json!(i), json!(parts), json!(stamp.bytes), json!(stamp.etag), json!(self.writer), json!(part)],
            )
        }));
        if let Some(r) = revision {
            stmts.push(st(
                "INSERT INTO fp_site_state (id, publication_revision, log_seq) VALUES (1, ?1, ?2) ON CONFLICT (id) DO UPDATE SET publication_revision = excluded.publication_revision, log_seq = excluded.log_seq",
                vec![json!(r), json!(seq)],
            ));
        }
        match self.batch(&what, stmts) {
            Ok(_) => Ok(Some(stamp)),
            Err(Failed::Constraint(why)) => {
                // Another writer's entry — or this one's, whose first answer was lost.
                let there = self.run(
                    &what,
                    vec![st(
                        "SELECT writer, sha256 FROM fp_log WHERE seq = ?1 AND part = 0",
                        vec![json!(seq)],
                    )],
                )?;
                let row = there.results.into_iter().flatten().next();
                let mine = row.as_ref().is_some_and(|r| {
                    r.get("writer").and_then(Json::as_str) == Some(self.writer.as_str())
                        && r.get("sha256").and_then(Json::as_str) == stamp.etag.as_deref()
                });
                if mine {
                    tracing::debug!(ledger = %self.name, seq, "the batch was refused with this writer's own entry there: its first answer was lost");
                    return Ok(Some(stamp));
                }
                tracing::debug!(ledger = %self.name, seq, why, "another writer took the entry");
                Ok(None)
            }
            Err(e) => Err(self.failed(&what, e)),
        }
    }

    pub(super) fn snapshots(&self) -> Result<Vec<i64>, LedgerError> {
        let answer = self.run(
            "listing snapshots",
            vec![st(
                "SELECT seq FROM fp_snapshots WHERE part = 0 ORDER BY seq",
                vec![],
            )],
        )?;
        Ok(answer
            .results
            .into_iter()
            .flatten()
            .filter_map(|r| r.get("seq").and_then(Json::as_i64))
            .collect())
    }

    pub(super) fn snapshot(&self, seq: i64) -> Result<Option<Vec<u8>>, LedgerError> {
        let answer = self.run(
            &format!("reading snapshot {seq}"),
            vec![st(
                "SELECT seq, part, parts, bytes, sha256, data FROM fp_snapshots WHERE seq = ?1 ORDER BY part",
                vec![json!(seq)],
            )],
        )?;
        let rows = answer.results.into_iter().flatten().collect();
        Ok(self
            .assemble("fp_snapshots", rows)?
            .remove(&seq)
            .map(|(b, _)| b))
    }

    /// Parts go in batches within [`BATCH_BYTES`], the first alone deciding who writes it: a
    /// snapshot with a part missing is not whole, and no reader takes it.
    pub(super) fn put_snapshot(&self, seq: i64, bytes: Vec<u8>) -> Result<bool, LedgerError> {
        let (size, sha) = (bytes.len(), crate::digest::sha256_hex(&bytes));
        let what = format!("writing snapshot {seq}");
        let rows: Vec<St> = parts_of(&bytes)
            .into_iter()
            .enumerate()
            .map(|(i, (part, parts))| {
                st(
                    "INSERT INTO fp_snapshots (seq, part, parts, bytes, sha256, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    vec![json!(seq), json!(i), json!(parts), json!(size), json!(sha), json!(part)],
                )
            })
            .collect();
        let per_batch = (BATCH_BYTES / (PART_BYTES * 2)).max(1);
        let mut batches = Vec::new();
        let mut rows = rows.into_iter().peekable();
        while rows.peek().is_some() {
            batches.push(rows.by_ref().take(per_batch).collect::<Vec<_>>());
        }
        for (i, batch) in batches.into_iter().enumerate() {
            match self.batch(&what, batch) {
                Ok(_) => {}
                Err(Failed::Constraint(_)) if i == 0 => {
                    return Ok(self.snapshot(seq)?.is_some_and(|there| there == bytes));
                }
                Err(e) => return Err(self.failed(&what, e)),
            }
        }
        Ok(true)
    }

    pub(super) fn prune_snapshots(&self, newest: i64) -> Result<(), LedgerError> {
        let all = self.snapshots()?;
        let old: Vec<i64> = all
            .iter()
            .copied()
            .filter(|s| *s <= newest)
            .rev()
            .skip(SNAPSHOTS_KEPT)
            .collect();
        if old.is_empty() {
            return Ok(());
        }
        let stmts = old
            .iter()
            .map(|s| st("DELETE FROM fp_snapshots WHERE seq = ?1", vec![json!(s)]))
            .collect();
        self.run("pruning snapshots", stmts).map(drop)
    }
}

/// Every part of the entries from `?1` to `?2`, in order.
const READ_PARTS_RANGE: &str = "SELECT seq, part, parts, bytes, sha256, data FROM fp_log WHERE seq BETWEEN ?1 AND ?2 ORDER BY seq, part";

/// `bytes` in base64 parts of at most [`PART_BYTES`] raw bytes, each with the count of parts.
fn parts_of(bytes: &[u8]) -> Vec<(String, usize)> {
    let chunks: Vec<&[u8]> = if bytes.is_empty() {
        vec![&[][..]]
    } else {
        bytes.chunks(PART_BYTES).collect()
    };
    let n = chunks.len();
    chunks
        .into_iter()
        .map(|c| (base64::engine::general_purpose::STANDARD.encode(c), n))
        .collect()
}

fn stamp_of(r: &serde_json::Map<String, Json>) -> Option<Stamp> {
    Some(Stamp {
        seq: r.get("seq")?.as_i64()?,
        bytes: r.get("bytes")?.as_u64()?,
        etag: Some(r.get("sha256")?.as_str()?.to_string()),
    })
}

fn parse_answer(v: &Json) -> Option<Answer> {
    let results = v["results"]
        .as_array()?
        .iter()
        .map(|r| {
            r["rows"].as_array().map(|rows| {
                rows.iter()
                    .filter_map(|row| row.as_object().cloned())
                    .collect()
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Answer {
        results,
        now_ms: v["now"].as_i64()?,
    })
}

/// `d1+https://HOST[/path]` → `https://HOST[/path]/batch`; plain http only to this host
/// (the token would otherwise cross the network in the clear).
fn endpoint(url: &str) -> Result<String, String> {
    let rest = url.strip_prefix("d1+").ok_or("not a d1+https:// URL")?;
    let u = url::Url::parse(rest).map_err(|e| format!("not a URL ({e})"))?;
    if !u.username().is_empty() || u.password().is_some() {
        return Err("a D1 ledger's URL holds no credentials: the proxy's token comes from FENCEPOST_D1_TOKEN".into());
    }
    if u.query().is_some() || u.fragment().is_some() {
        return Err("a D1 ledger's URL has no query or fragment".into());
    }
    let loopback = matches!(u.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"));
    if u.scheme() == "http" && !loopback {
        return Err("d1+http:// is only for a proxy on this host (tests, `node edge/cloudflare/d1-dev.mjs`); the token would cross the network in the clear — use d1+https://".into());
    }
    Ok(format!("{}/batch", u.as_str().trim_end_matches('/')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_d1_url_names_the_proxys_batch_endpoint_and_keeps_its_token_off_the_network() {
        assert_eq!(
            endpoint("d1+https://ledger.example.com").unwrap(),
            "https://ledger.example.com/batch"
        );
        assert_eq!(
            endpoint("d1+https://example.com/fp/").unwrap(),
            "https://example.com/fp/batch"
        );
        assert_eq!(
            endpoint("d1+http://127.0.0.1:8787").unwrap(),
            "http://127.0.0.1:8787/batch"
        );
        assert!(endpoint("d1+http://ledger.example.com")
            .unwrap_err()
            .contains("clear"));
        assert!(endpoint("d1+https://u:p@example.com")
            .unwrap_err()
            .contains("credentials"));
    }

    #[test]
    fn parts_cover_the_bytes_within_d1s_value_limit() {
        let bytes = vec![7u8; PART_BYTES * 2 + 5];
        let parts = parts_of(&bytes);
        assert_eq!(parts.len(), 3);
        assert!(parts.iter().all(|(p, n)| p.len() <= VALUE_BYTES && *n == 3));
        assert_eq!(parts_of(&[]).len(), 1);
    }
}
