//! The log's entries: short UTF-8 texts whose first line names the kind, then `key value`
//! lines, each ending in a newline, spelled one way only.
//!
//! - `fencepost/revision/v1`: a revision made public (ledger id, revision, build, the digest of
//!   its manifest, the audit tip).
//! - `fencepost/commit/v1`: the commitment to an embargoed item's JSON, `sha256(salt ‖ JSON)`,
//!   and nothing else that names the item, its collection, its instant or its text.
//! - `fencepost/recommit/v1`: a new commitment to an embargoed item whose text changed before
//!   its instant, naming the entry of the commitment it supersedes (so a monitor sees, before
//!   the instant, that a committed text was replaced — not which item, nor what it says).
//! - `fencepost/reveal/v1`: the item made public, the index of its commitment and the salt.
//! - `fencepost/change/v1`: a later change of a public item, with its new content digest.
//!
//! Parsing is strict: the keys of a kind, in its order, once each, nothing else; a reader's
//! check of the log rejects any other text.

use super::TlogError;
use base64::{engine::general_purpose::STANDARD, Engine};
use sha2::{Digest, Sha256};

/// What happened to a public item after its reveal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Update,
    Withdraw,
    Expire,
    Return,
}

impl ChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Update => "update",
            ChangeKind::Withdraw => "withdraw",
            ChangeKind::Expire => "expire",
            ChangeKind::Return => "return",
        }
    }

    fn parse(s: &str) -> Option<ChangeKind> {
        Some(match s {
            "update" => ChangeKind::Update,
            "withdraw" => ChangeKind::Withdraw,
            "expire" => ChangeKind::Expire,
            "return" => ChangeKind::Return,
            _ => return None,
        })
    }
}

/// One entry of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Revision {
        ledger: String,
        revision: u64,
        build: String,
        /// Hex SHA-256 over the revision's files (path, NUL, hex SHA-256, newline each, in
        /// path order, the log's own files excepted).
        manifest: String,
        /// The audit chain's tip (hex) at that revision.
        audit: String,
    },
    Commit {
        /// Hex `sha256(salt ‖ item JSON)`.
        commit: String,
    },
    /// A commitment replacing the one at entry `supersedes` (a commit or recommit entry of
    /// the same item, never revealed): the item's text changed before its instant.
    Recommit { commit: String, supersedes: u64 },
    Reveal {
        /// `<collection>/<id>`.
        item: String,
        /// The index of the item's commit entry in the log.
        commit: u64,
        salt: [u8; 32],
    },
    Change {
        item: String,
        change: ChangeKind,
        /// Hex SHA-256 of the item's new JSON (or of nothing, withdrawn).
        digest: String,
    },
}

const REVISION: &str = "fencepost/revision/v1";
const COMMIT: &str = "fencepost/commit/v1";
const RECOMMIT: &str = "fencepost/recommit/v1";
const REVEAL: &str = "fencepost/reveal/v1";
const CHANGE: &str = "fencepost/change/v1";

/// `sha256(salt ‖ json)` in hex: what a commit entry holds.
pub fn commitment(salt: &[u8; 32], json: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(salt);
    h.update(json);
    hex::encode(h.finalize())
}

fn is_hex256(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A value a line can hold: non-empty, no spaces, no control characters.
fn is_token(s: &str) -> bool {
    !s.is_empty() && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'))
}

impl Entry {
    /// The commitment a commit or recommit entry holds.
    pub fn commitment(&self) -> Option<&str> {
        match self {
            Entry::Commit { commit } | Entry::Recommit { commit, .. } => Some(commit),
            _ => None,
        }
    }

    /// The entry's text.
    pub fn to_text(&self) -> String {
        match self {
            Entry::Revision {
                ledger,
                revision,
                build,
                manifest,
                audit,
            } => format!(
                "{REVISION}\nledger {ledger}\nrevision {revision}\nbuild {build}\nmanifest {manifest}\naudit {audit}\n"
            ),
            Entry::Commit { commit } => format!("{COMMIT}\ncommit {commit}\n"),
            Entry::Recommit { commit, supersedes } => {
                format!("{RECOMMIT}\ncommit {commit}\nsupersedes {supersedes}\n")
            }
            Entry::Reveal { item, commit, salt } => format!(
                "{REVEAL}\nitem {item}\ncommit {commit}\nsalt {}\n",
                STANDARD.encode(salt)
            ),
            Entry::Change {
                item,
                change,
                digest,
            } => format!(
                "{CHANGE}\nitem {item}\nchange {}\ndigest {digest}\n",
                change.as_str()
            ),
        }
    }

    /// Parses an entry's bytes, strictly.
    pub fn parse(bytes: &[u8]) -> Result<Entry, TlogError> {
        let bad = |why: String| TlogError::Entry { why };
        let text = std::str::from_utf8(bytes).map_err(|_| bad("not UTF-8".into()))?;
        let body = text
            .strip_suffix('\n')
            .ok_or_else(|| bad("does not end in a newline".into()))?;
        let mut lines = body.split('\n');
        let kind = lines.next().unwrap_or_default();
        let keys: &[&str] = match kind {
            REVISION => &["ledger", "revision", "build", "manifest", "audit"],
            COMMIT => &["commit"],
            RECOMMIT => &["commit", "supersedes"],
            REVEAL => &["item", "commit", "salt"],
            CHANGE => &["item", "change", "digest"],
            _ => return Err(bad(format!("unknown kind {kind:?}"))),
        };
        let values: Vec<&str> = lines
            .keyed(keys)
            .map_err(|why| bad(format!("{kind}: {why}")))?;
        let entry = Entry::of_fields(kind, &values)?;
        // One spelling only.
        if entry.to_text() != text {
            return Err(bad(format!(
                "{kind}: the entry's spelling is not well formed"
            )));
        }
        Ok(entry)
    }

    /// The entry of kind `kind` (one of the known ones) from its values, each checked.
    fn of_fields(kind: &str, values: &[&str]) -> Result<Entry, TlogError> {
        let bad = |why: String| TlogError::Entry { why };
        let field = |i: usize| values[i];
        let check = |ok: bool, what: &str| {
            if ok {
                Ok(())
            } else {
                Err(bad(format!("{kind}: {what} is not well formed")))
            }
        };
        let entry = match kind {
            REVISION => {
                check(is_token(field(0)), "ledger")?;
                check(is_number(field(1)), "revision")?;
                check(is_token(field(2)), "build")?;
                check(is_hex256(field(3)), "manifest")?;
                check(is_hex256(field(4)), "audit")?;
                Entry::Revision {
                    ledger: field(0).into(),
                    revision: field(1).parse().map_err(|_| bad("revision".into()))?,
                    build: field(2).into(),
                    manifest: field(3).into(),
                    audit: field(4).into(),
                }
            }
            COMMIT => {
                check(is_hex256(field(0)), "commit")?;
                Entry::Commit {
                    commit: field(0).into(),
                }
            }
            RECOMMIT => {
                check(is_hex256(field(0)), "commit")?;
                check(is_number(field(1)), "supersedes")?;
                Entry::Recommit {
                    commit: field(0).into(),
                    supersedes: field(1).parse().map_err(|_| bad("supersedes".into()))?,
                }
            }
            REVEAL => {
                check(is_item(field(0)), "item")?;
                check(is_number(field(1)), "commit")?;
                let salt = STANDARD
                    .decode(field(2))
                    .ok()
                    .and_then(|s| <[u8; 32]>::try_from(s).ok())
                    .filter(|s| STANDARD.encode(s) == field(2))
                    .ok_or_else(|| bad(format!("{kind}: salt is not 32 bytes of base64")))?;
                Entry::Reveal {
                    item: field(0).into(),
                    commit: field(1).parse().map_err(|_| bad("commit".into()))?,
                    salt,
                }
            }
            _ => {
                check(is_item(field(0)), "item")?;
                let change = ChangeKind::parse(field(1))
                    .ok_or_else(|| bad(format!("{kind}: unknown change {:?}", field(1))))?;
                check(is_hex256(field(2)), "digest")?;
                Entry::Change {
                    item: field(0).into(),
                    change,
                    digest: field(2).into(),
                }
            }
        };
        Ok(entry)
    }
}

/// 32 bytes from the operating system's randomness: the salt of a new commitment.
pub fn fresh_salt() -> [u8; 32] {
    use rand_core::RngCore;
    let mut salt = [0u8; 32];
    rand_core::OsRng.fill_bytes(&mut salt);
    salt
}

/// `<collection>/<id>`: two path-safe parts.
pub fn is_item(s: &str) -> bool {
    let safe = |p: &str| {
        !p.is_empty()
            && p != "."
            && p != ".."
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.~".contains(&b))
    };
    matches!(s.split_once('/'), Some((c, id)) if safe(c) && safe(id))
}

/// Lines matched one to one with the keys they must carry, in order.
trait KeyLines<'a> {
    fn keyed(self, keys: &[&str]) -> Result<Vec<&'a str>, String>;
}

impl<'a, I: Iterator<Item = &'a str>> KeyLines<'a> for I {
    fn keyed(mut self, keys: &[&str]) -> Result<Vec<&'a str>, String> {
        let mut values = Vec::with_capacity(keys.len());
        for key in keys {
            let line = self.next().ok_or_else(|| format!("no {key} line"))?;
            let value = line
                .strip_prefix(key)
                .and_then(|r| r.strip_prefix(' '))
                .ok_or_else(|| format!("expected a {key} line, found {line:?}"))?;
            values.push(value);
        }
        match self.next() {
            None => Ok(values),
            Some(extra) => Err(format!("an unexpected line {extra:?}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples() -> Vec<Entry> {
        vec![
            Entry::Revision {
                ledger: "0f3c2a".into(),
                revision: 12,
                build: "3".into(),
                manifest: "a".repeat(64),
                audit: "b".repeat(64),
            },
            Entry::Commit {
                commit: commitment(&[7; 32], b"{\"title\":\"x\"}"),
            },
            Entry::Reveal {
                item: "advisories/fp-2026-001".into(),
                commit: 1,
                salt: [7; 32],
            },
            Entry::Change {
                item: "advisories/fp-2026-001".into(),
                change: ChangeKind::Withdraw,
                digest: "c".repeat(64),
            },
            Entry::Recommit {
                commit: commitment(&[9; 32], b"{\"title\":\"y\"}"),
                supersedes: 1,
            },
        ]
    }

    #[test]
    fn entries_are_spelled_one_way_and_read_back() {
        let texts: Vec<String> = samples().iter().map(Entry::to_text).collect();
        assert_eq!(
            texts[2],
            "fencepost/reveal/v1\nitem advisories/fp-2026-001\ncommit 1\nsalt BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=\n"
        );
        assert_eq!(
            texts[1],
            format!(
                "fencepost/commit/v1\ncommit {}\n",
                commitment(&[7; 32], b"{\"title\":\"x\"}")
            )
        );
        for (e, t) in samples().iter().zip(&texts) {
            assert_eq!(&Entry::parse(t.as_bytes()).unwrap(), e);
        }
    }

    #[test]
    fn a_commit_names_nothing_but_its_hash() {
        let t = samples()[1].to_text();
        assert_eq!(t.lines().count(), 2);
        assert!(!t.contains("advisories") && !t.contains("title"));
        // sha256(salt ‖ json), not of either alone.
        assert_ne!(commitment(&[7; 32], b"{}"), commitment(&[8; 32], b"{}"));
    }

    #[test]
    fn anything_else_is_refused() {
        let good = samples()[2].to_text();
        for bad in [
            good.replace("\ncommit 1\n", "\ncommit 01\n"),
            good.replace("item ", "item  "),
            good.trim_end().to_string(),
            good.clone() + "extra line\n",
            good.replace("fencepost/reveal/v1", "fencepost/reveal/v2"),
            good.replace("advisories/fp-2026-001", "../x"),
            good.replace("BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=", "Bwc="),
            samples()[1].to_text().replace("commit ", "commit A"),
            samples()[3].to_text().replace("withdraw", "delete"),
            samples()[4]
                .to_text()
                .replace("supersedes 1", "supersedes -1"),
            samples()[4].to_text().replace("\nsupersedes 1", ""),
        ] {
            assert!(Entry::parse(bad.as_bytes()).is_err(), "{bad:?}");
        }
    }
}
