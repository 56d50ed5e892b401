//! c2sp.org/tlog-proof: one entry's inclusion in a signed checkpoint, in a text a reader keeps
//! beside the entry and checks offline with the log's verifier key.

use super::entry::{commitment, Entry};
use super::{note, Hash, TlogError};
use base64::{engine::general_purpose::STANDARD, Engine};
use tlog_tiles::Checkpoint;

const HEADER: &str = "c2sp.org/tlog-proof@v1";

/// A parsed proof.
#[derive(Debug, Clone, PartialEq)]
pub struct Proof {
    /// Opaque, unauthenticated extra data (`extra` line), if any.
    pub extra: Option<Vec<u8>>,
    pub index: u64,
    /// The inclusion proof, the leaf's sibling first.
    pub hashes: Vec<Hash>,
    /// The signed checkpoint, verbatim.
    pub checkpoint: Vec<u8>,
}

impl Proof {
    /// The proof's text.
    pub fn to_text(&self) -> Vec<u8> {
        let mut out = format!("{HEADER}\n");
        if let Some(extra) = &self.extra {
            out.push_str(&format!("extra {}\n", STANDARD.encode(extra)));
        }
        out.push_str(&format!("index {}\n", self.index));
        for h in &self.hashes {
            out.push_str(&format!("{}\n", STANDARD.encode(h.0)));
        }
        out.push('\n');
        let mut bytes = out.into_bytes();
        bytes.extend_from_slice(&self.checkpoint);
        bytes
    }

    /// Parses a proof's text.
    pub fn parse(text: &[u8]) -> Result<Proof, TlogError> {
        let bad = |why: &str| TlogError::Proof { why: why.into() };
        let split = text
            .windows(2)
            .position(|w| w == b"\n\n")
            .ok_or_else(|| bad("no blank line before the checkpoint"))?;
        let head = std::str::from_utf8(&text[..split]).map_err(|_| bad("not UTF-8"))?;
        let checkpoint = text[split + 2..].to_vec();
        let mut lines = head.split('\n');
        if lines.next() != Some(HEADER) {
            return Err(bad("the first line is not c2sp.org/tlog-proof@v1"));
        }
        let mut line = lines.next().ok_or_else(|| bad("no index line"))?;
        let mut extra = None;
        if let Some(e) = line.strip_prefix("extra ") {
            extra = Some(STANDARD.decode(e).map_err(|_| bad("extra is not base64"))?);
            line = lines.next().ok_or_else(|| bad("no index line"))?;
        }
        let index = line
            .strip_prefix("index ")
            .filter(|i| *i == "0" || !i.starts_with('0'))
            .and_then(|i| i.parse().ok())
            .ok_or_else(|| bad("no index line (index N, no leading zeros)"))?;
        let hashes = lines
            .map(|l| {
                Hash::parse_hash(l).map_err(|_| bad("a proof line is not a base64 SHA-256 hash"))
            })
            .collect::<Result<Vec<Hash>, TlogError>>()?;
        Ok(Proof {
            extra,
            index,
            hashes,
            checkpoint,
        })
    }

    /// Checks a proof `fencepost tlog prove` wrote for an item whose JSON is `json`: its
    /// `extra` is the item's reveal entry (item and salt), and the commit entry that
    /// `sha256(salt ‖ json)` makes is entry `index` of the checkpoint's tree, signed by `vkey`.
    /// Returns the item (`<collection>/<id>`) and the checkpoint.
    pub fn check_item(&self, vkey: &str, json: &[u8]) -> Result<(String, Checkpoint), TlogError> {
        let extra = self.extra.as_deref().ok_or_else(|| TlogError::Proof {
            why: "no extra line: not a proof of an item's commitment".into(),
        })?;
        // The reveal, then (an item recommitted before its instant) the recommit entry.
        let (reveal, recommit) = match extra.windows(11).position(|w| w == b"\nfencepost/") {
            Some(at) => (&extra[..at + 1], Some(Entry::parse(&extra[at + 1..])?)),
            None => (extra, None),
        };
        let reveal = Entry::parse(reveal)?;
        let Entry::Reveal { item, commit, salt } = reveal else {
            return Err(TlogError::Proof {
                why: "its extra is not a reveal entry".into(),
            });
        };
        if commit != self.index {
            return Err(TlogError::Proof {
                why: format!(
                    "the reveal names entry {commit}, the proof entry {}",
                    self.index
                ),
            });
        }
        let entry = match recommit {
            Some(Entry::Recommit { commit, supersedes }) if commit == commitment(&salt, json) => {
                Entry::Recommit { commit, supersedes }
            }
            Some(_) => {
                return Err(TlogError::Proof {
                    why: "its extra's second entry is not the recommit of this text".into(),
                })
            }
            None => Entry::Commit {
                commit: commitment(&salt, json),
            },
        };
        let checkpoint = self.check(vkey, entry.to_text().as_bytes())?;
        Ok((item, checkpoint))
    }

    /// Checks that `entry` is entry `index` of the tree the checkpoint, signed by `vkey`,
    /// commits to. Returns that checkpoint.
    pub fn check(&self, vkey: &str, entry: &[u8]) -> Result<Checkpoint, TlogError> {
        let checkpoint = note::open_checkpoint(&self.checkpoint, vkey)?;
        tlog_tiles::check_record(
            &self.hashes,
            checkpoint.size(),
            *checkpoint.hash(),
            self.index,
            tlog_tiles::record_hash(entry),
        )
        .map_err(TlogError::merkle)?;
        Ok(checkpoint)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tiles::Tree;

    #[test]
    fn a_proof_round_trips_and_checks_only_its_own_entry() {
        let keys = note::generate("example.org/log").unwrap();
        let signer = note::LogSigner::from_skey(&keys.skey).unwrap();
        let entries: Vec<String> = (0..1000).map(|i| format!("entry {i}\n")).collect();
        let tree = Tree::of(&entries).unwrap();
        let proof = Proof {
            extra: Some(b"item posts/hello".to_vec()),
            index: 613,
            hashes: tree.prove_entry(613, 1000).unwrap(),
            checkpoint: signer.sign_checkpoint(1000, tree.root()),
        };
        let text = proof.to_text();
        let s = String::from_utf8(text.clone()).unwrap();
        assert!(
            s.starts_with("c2sp.org/tlog-proof@v1\nextra aXRlbSBwb3N0cy9oZWxsbw==\nindex 613\n"),
            "{s}"
        );
        let back = Proof::parse(&text).unwrap();
        assert_eq!(back, proof);
        assert_eq!(
            back.check(&keys.vkey, entries[613].as_bytes())
                .unwrap()
                .size(),
            1000
        );
        assert!(back.check(&keys.vkey, entries[612].as_bytes()).is_err());
        let mut moved = back.clone();
        moved.index = 614;
        assert!(moved.check(&keys.vkey, entries[613].as_bytes()).is_err());
        assert!(Proof::parse(b"c2sp.org/tlog-proof@v1\nindex 01\n\nx").is_err());
        assert!(Proof::parse(b"c2sp.org/tlog-proof@v2\nindex 1\n\nx").is_err());
    }
}
