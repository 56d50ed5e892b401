//! The log's calls on D1 (see [`super`]): list, read and create-if-absent its entries, its
//! snapshots, each a handful of statements in one batch. An entry too large for one batch is
//! staged first (its parts in `fp_staged`, a batch at a time) and committed by one batch that
//! moves them into `fp_log` with the head — all of it, or none.

use super::{st, Failed, St, BATCH_BYTES, D1, PART_BYTES, READ_AHEAD};
use crate::bucket::store::{Stamp, SNAPSHOTS_KEPT};
use crate::LedgerError;
use base64::Engine as _;
use serde_json::{json, Value as Json};
use std::collections::HashMap;

impl D1 {
    pub(crate) fn list_from(&self, seq: i64) -> Result<Vec<Stamp>, LedgerError> {
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

    pub(crate) fn head_entry(&self, seq: i64) -> Result<Option<Stamp>, LedgerError> {
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

    pub(crate) fn entries(
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
            let digest = fencepost_core::digest::sha256_hex(&bytes);
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

    /// The refusal of an entry whose pages D1's clock found not yet due.
    fn not_due(&self, not_before: Option<i64>) -> LedgerError {
        LedgerError::NotDueByStore {
            ledger: self.name.clone(),
            not_before: fencepost_core::clock::Instant(not_before.unwrap_or(0)),
        }
    }

    pub(crate) fn create_entry(
        &self,
        seq: i64,
        bytes: Vec<u8>,
        revision: Option<i64>,
        not_before: Option<i64>,
    ) -> Result<Option<Stamp>, LedgerError> {
        let stamp = Stamp {
            seq,
            bytes: bytes.len() as u64,
            etag: Some(fencepost_core::digest::sha256_hex(&bytes)),
        };
        let what = format!("writing log entry {seq}");
        let parts = parts_of(&bytes);
        let head = st(
            "UPDATE fp_head SET seq = CASE WHEN seq = ?1 THEN ?2 ELSE -1 END WHERE id = 1",
            vec![json!(seq - 1), json!(seq)],
        );
        let due = not_before.map(due_guard);
        let site = revision.map(|r| {
            st(
                "INSERT INTO fp_site_state (id, publication_revision, log_seq) VALUES (1, ?1, ?2) ON CONFLICT (id) DO UPDATE SET publication_revision = excluded.publication_revision, log_seq = excluded.log_seq",
                vec![json!(r), json!(seq)],
            )
        });
        let rows = self.part_rows("fp_log", seq, &stamp, parts);
        let direct: Vec<St> = std::iter::once(head.clone())
            .chain(due.clone())
            .chain(rows.iter().cloned())
            .chain(site.clone())
            .collect();
        let stmts = if super::encode(&direct).is_ok() {
            direct
        } else {
            // Too large for one request: the parts go ahead into fp_staged, and the commit
            // moves them (all of them, checked by count) into fp_log with the head.
            self.stage(&what, rows)?;
            let n = stamp.bytes.div_ceil(PART_BYTES as u64).max(1);
            let mut stmts = vec![
                head,
                due.clone().unwrap_or_else(|| st("SELECT 1", vec![])),
                st(
                    "UPDATE fp_head SET seq = -1 WHERE (SELECT count(*) FROM fp_staged WHERE writer = ?1 AND seq = ?2) != ?3",
                    vec![json!(self.writer), json!(seq), json!(n)],
                ),
                st(
                    "INSERT INTO fp_log (seq, part, parts, bytes, sha256, writer, data) SELECT seq, part, parts, bytes, sha256, writer, data FROM fp_staged WHERE writer = ?1 AND seq = ?2",
                    vec![json!(self.writer), json!(seq)],
                ),
                // Its own parts, and any a writer that lost a race for an entry left behind.
                st("DELETE FROM fp_staged WHERE seq <= ?1", vec![json!(seq)]),
            ];
            stmts.extend(site);
            stmts
        };
        let answer = self.batch(&what, stmts).map(|_| ());
        self.entry_written(&what, stamp, not_before, answer)
    }

    /// What the commit batch of `stamp` decided: this writer's entry (`Some`), another's
    /// (`None`), or a failure — read back where the answer was lost or refused.
    fn entry_written(
        &self,
        what: &str,
        stamp: Stamp,
        not_before: Option<i64>,
        answer: Result<(), Failed>,
    ) -> Result<Option<Stamp>, LedgerError> {
        let seq = stamp.seq;
        match answer {
            Ok(()) => Ok(Some(stamp)),
            Err(Failed::Constraint(why)) if why.contains("fp_not_due") => {
                Err(self.not_due(not_before))
            }
            // Another writer's entry — or this one's, whose first answer was lost.
            Err(Failed::Constraint(why)) => match self.is_mine(what, &stamp)? {
                true => {
                    tracing::debug!(ledger = %self.name, seq, "the batch was refused with this writer's own entry there: its first answer was lost");
                    Ok(Some(stamp))
                }
                false => {
                    tracing::debug!(ledger = %self.name, seq, why, "another writer took the entry");
                    Ok(None)
                }
            },
            // No answer, even after the retries: the batch may have run all the same. Read back
            // before reporting a failure — this writer's entry there is its commit (a lease
            // taken, a page published), which a failure would leave held or unreported.
            Err(e @ Failed::Unanswered(_)) => match self.is_mine(what, &stamp) {
                Ok(true) => {
                    tracing::info!(ledger = %self.name, seq, "no answer came for the batch, but this writer's entry is there: committed");
                    Ok(Some(stamp))
                }
                _ => Err(self.failed(&what, e)),
            },
            Err(e) => Err(self.failed(&what, e)),
        }
    }

    /// Whether the entry at `stamp.seq` is this writer's: its id and digest there.
    fn is_mine(&self, what: &str, stamp: &Stamp) -> Result<bool, LedgerError> {
        let there = self.run(
            what,
            vec![st(
                "SELECT writer, sha256 FROM fp_log WHERE seq = ?1 AND part = 0",
                vec![json!(stamp.seq)],
            )],
        )?;
        let row = there.results.into_iter().flatten().next();
        Ok(row.as_ref().is_some_and(|r| {
            r.get("writer").and_then(Json::as_str) == Some(self.writer.as_str())
                && r.get("sha256").and_then(Json::as_str) == stamp.etag.as_deref()
        }))
    }

    /// One `INSERT` into `table` per part of entry `seq`.
    fn part_rows(
        &self,
        table: &str,
        seq: i64,
        stamp: &Stamp,
        parts: Vec<(String, usize)>,
    ) -> Vec<St> {
        let sql = format!(
            "INSERT INTO {table} (seq, part, parts, bytes, sha256, writer, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
        );
        parts
            .into_iter()
            .enumerate()
            .map(|(i, (part, n))| {
                st(
                    &sql,
                    vec![
                        json!(seq),
                        json!(i),
                        json!(n),
                        json!(stamp.bytes),
                        json!(stamp.etag),
                        json!(self.writer),
                        json!(part),
                    ],
                )
            })
            .collect()
    }

    /// Uploads an entry's parts into `fp_staged`, a batch at a time (a batch sent again
    /// after a lost answer replaces what its first try wrote).
    fn stage(&self, what: &str, rows: Vec<St>) -> Result<(), LedgerError> {
        let per_batch = (BATCH_BYTES / (PART_BYTES * 2)).max(1);
        let mut rows = rows.into_iter().peekable();
        while rows.peek().is_some() {
            let batch: Vec<St> = rows
                .by_ref()
                .take(per_batch)
                .map(|r| St {
                    sql: r.sql.replacen(
                        "INSERT INTO fp_log",
                        "INSERT OR REPLACE INTO fp_staged",
                        1,
                    ),
                    params: r.params,
                })
                .collect();
            self.run(what, batch)?;
        }
        Ok(())
    }

    pub(crate) fn snapshots(&self) -> Result<Vec<i64>, LedgerError> {
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

    pub(crate) fn snapshot(&self, seq: i64) -> Result<Option<Vec<u8>>, LedgerError> {
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
    pub(crate) fn put_snapshot(&self, seq: i64, bytes: Vec<u8>) -> Result<bool, LedgerError> {
        let (size, sha) = (bytes.len(), fencepost_core::digest::sha256_hex(&bytes));
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

    pub(crate) fn prune_snapshots(&self, newest: i64) -> Result<(), LedgerError> {
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

#[cfg(test)]
mod tests {
    use super::super::VALUE_BYTES;
    use super::*;

    #[test]
    fn parts_cover_the_bytes_within_d1s_value_limit() {
        let bytes = vec![7u8; PART_BYTES * 2 + 5];
        let parts = parts_of(&bytes);
        assert_eq!(parts.len(), 3);
        assert!(parts.iter().all(|(p, n)| p.len() <= VALUE_BYTES && *n == 3));
        assert_eq!(parts_of(&[]).len(), 1);
    }
}

/// The pages an entry makes public are due by D1's clock, checked in the batch as the head is:
/// one that is not (the latest due instant, `not_before`, still ahead) inserts a row the named
/// CHECK refuses, and D1 rolls the whole batch back (`fp_not_due`), whatever the runner decided.
fn due_guard(not_before: i64) -> St {
    st(
        "INSERT INTO fp_due_guard (early) SELECT 1 WHERE CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) < ?1",
        vec![json!(not_before)],
    )
}
