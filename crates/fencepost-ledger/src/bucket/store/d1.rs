//! The log in a Cloudflare D1 database, through the proxy Worker fencepost ships
//! (`edge/cloudflare/ledger-proxy.js`): one POST of a batch of statements per call, run by
//! `env.DB.batch` — atomically, all or none — and answered with each statement's rows and
//! changes and the Worker's clock. D1 has no interactive transaction, so nothing here needs
//! one: a transaction runs on the local replica (see [`crate::bucket`]), and its
//! commit is one batch.
//!
//! ```text
//! fp_head        (id = 1, seq)                     the newest entry: the commit's compare-and-set
//! fp_log         (seq, part, parts, bytes, sha256, writer, data)   entries, base64, in parts
//! fp_staged      (writer, seq, part, …)            parts of an entry larger than one batch
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
//! ([`BATCH_BYTES`]). An entry larger than one batch (a `ledger copy` into D1, a first publish
//! of thousands of pages) is split: its parts go ahead into `fp_staged`, a batch at a time,
//! and the commit batch moves them into `fp_log` — after checking, inside the batch, that
//! every part is there — with the head, so the entry lands whole or not at all.
//!
//! **Time is the Worker's**: every answer carries the Worker's `Date.now()` at the batch, so
//! a runner measures its clock against Cloudflare's as it does against a bucket's
//! `Last-Modified` (see [`crate::bucket::clock`]), to the millisecond.

mod log;

use super::{Skew, Stamp};
use crate::LedgerError;
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
    "CREATE TABLE IF NOT EXISTS fp_staged (writer TEXT NOT NULL, seq INTEGER NOT NULL, part INTEGER NOT NULL, parts INTEGER NOT NULL, bytes INTEGER NOT NULL, sha256 TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (writer, seq, part)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS fp_snapshots (seq INTEGER NOT NULL, part INTEGER NOT NULL, parts INTEGER NOT NULL, bytes INTEGER NOT NULL, sha256 TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (seq, part), CHECK (part >= 0 AND part < parts)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS fp_site_state (id INTEGER PRIMARY KEY CHECK (id = 1), publication_revision INTEGER NOT NULL, log_seq INTEGER NOT NULL)",
    // Never holds a row: a commit batch inserts one only when the Worker's clock says a page
    // it makes public is not due yet, and the named CHECK then rolls the whole batch back.
    "CREATE TABLE IF NOT EXISTS fp_due_guard (early INTEGER, CONSTRAINT fp_not_due CHECK (early IS NULL))",
];

/// The endpoints whose tables this process has made sure of.
static READY: std::sync::Mutex<std::collections::BTreeSet<String>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// Whether `url` names a D1 ledger.
pub(super) fn is_d1(url: &str) -> bool {
    url.starts_with("d1+https://") || url.starts_with("d1+http://")
}

/// A D1 log, reached through its proxy Worker.
pub(crate) struct D1 {
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
#[derive(Clone)]
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
        fencepost_core::digest::sha256_hex(self.endpoint.as_bytes())[..16].to_string()
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
        encode(stmts).map_err(|why| self.location(what, &format!("{why}; nothing was sent")))
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
        let sent_ms = fencepost_core::clock::host_millis();
        let answer = self.run(
            "reading the Worker's clock",
            vec![st("SELECT 1 AS one", vec![])],
        )?;
        let answered_ms = fencepost_core::clock::host_millis();
        // D1 enforces a primary key: create-if-absent needs no probing.
        Ok(clock.then_some(Skew {
            min_ms: sent_ms - answer.now_ms - 1,
            max_ms: answered_ms - answer.now_ms,
            store_ms: answer.now_ms,
            host_ms: answered_ms,
        }))
    }
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

/// A batch as the proxy takes it, or why D1 or the proxy would refuse it.
fn encode(stmts: &[St]) -> Result<Vec<u8>, String> {
    for s in stmts {
        if s.sql.len() > STATEMENT_BYTES {
            return Err(format!(
                "a statement of {} bytes is longer than D1 takes ({STATEMENT_BYTES})",
                s.sql.len()
            ));
        }
        if s.params.len() > PARAMS {
            return Err(format!(
                "a statement with {} parameters is more than D1 binds ({PARAMS})",
                s.params.len()
            ));
        }
        for p in &s.params {
            match p {
                Json::String(t) if t.len() > VALUE_BYTES => {
                    return Err(format!(
                        "a value of {} bytes is larger than D1 stores ({VALUE_BYTES})",
                        t.len()
                    ))
                }
                Json::Number(n)
                    if n.as_i64().is_none_or(|i| !(-JSON_INT..=JSON_INT).contains(&i)) =>
                {
                    return Err(format!(
                        "the integer {n} is past 2^53, which D1 carries as a JSON number and would round"
                    ))
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
        .map_err(|e| format!("encoding a D1 batch: {e}"))?;
    if bytes.len() > BATCH_BYTES {
        return Err(format!(
            "the batch is {} bytes, more than the proxy takes in one request ({BATCH_BYTES})",
            bytes.len()
        ));
    }
    Ok(bytes)
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

    /// Guards: D1's limits refused by name before a request leaves (issue 51).
    #[test]
    fn a_batch_past_d1s_limits_is_refused_by_name_before_it_is_sent() {
        let ok = st("SELECT ?1", vec![json!(1)]);
        assert!(encode(&[ok]).is_ok());
        let long = st(
            &format!("SELECT 1 -- {}", "x".repeat(STATEMENT_BYTES)),
            vec![],
        );
        assert!(encode(&[long])
            .unwrap_err()
            .contains("longer than D1 takes"));
        let many = st("SELECT 1", vec![json!(1); PARAMS + 1]);
        assert!(encode(&[many])
            .unwrap_err()
            .contains("more than D1 binds (100)"));
        let big = st("SELECT ?1", vec![json!("x".repeat(VALUE_BYTES + 1))]);
        assert!(encode(&[big])
            .unwrap_err()
            .contains("larger than D1 stores (2000000)"));
        let wide = st("SELECT ?1", vec![json!(JSON_INT + 1)]);
        assert!(encode(&[wide]).unwrap_err().contains("past 2^53"));
        let batch: Vec<St> = (0..20)
            .map(|_| st("SELECT ?1", vec![json!("x".repeat(VALUE_BYTES))]))
            .collect();
        assert!(encode(&batch)
            .unwrap_err()
            .contains("more than the proxy takes"));
    }
}
