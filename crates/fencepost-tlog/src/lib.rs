//! The transparency log's formats: what a reader's software checks, byte for byte.
//!
//! fencepost's log follows the C2SP specifications exactly, so that software fencepost did not
//! write can check it: [c2sp.org/tlog-tiles](https://c2sp.org/tlog-tiles) (the Merkle tree as
//! static tiles `tile/<L>/<N>[.p/<W>]` of up to 256 hashes, the entries as bundles
//! `tile/entries/<N>[.p/<W>]` of big-endian uint16 length-prefixed texts, RFC 6962 hashing),
//! [c2sp.org/tlog-checkpoint](https://c2sp.org/tlog-checkpoint) (origin, size, base64 root; no
//! extension lines) signed as a [c2sp.org/signed-note](https://c2sp.org/signed-note) with
//! Ed25519, and [c2sp.org/tlog-proof](https://c2sp.org/tlog-proof) for one entry.
//!
//! Chosen: Cloudflare's `signed_note` and `tlog_tiles` crates, line-by-line ports of Go's
//! `golang.org/x/mod/sumdb/note` and `sumdb/tlog` (what the Go checksum database runs, and what
//! a Go verifier of our log runs), for the signatures and the Merkle math: stored hashes, tree
//! hashes, record and consistency proofs. Rejected: Merkle code of our own (a second
//! implementation to get wrong in the one place where a mistake is a proof that lies); `ring`
//! for Ed25519 (it is in the tree, but the keys `keygen` prints are Go's note key texts, which
//! `signed_note` reads and writes). The crates name tiles by Go's sumdb paths (`tile/8/0/…`,
//! data tiles `tile/8/data/…`), not C2SP's: the paths are ours ([`tiles`]), the bytes theirs.
//!
//! Pure: no file, no clock, no ledger; the build and the reader commands stand on it.

pub mod check;
pub mod entry;
pub mod note;
pub mod proof;
pub mod tiles;
pub mod witness;

pub use tlog_tiles::Hash;

/// Everything that can be wrong with a key, a checkpoint, a tile, a bundle or a proof. No
/// variant carries a signing key: an error message is shown and logged.
#[derive(Debug, thiserror::Error)]
pub enum TlogError {
    #[error("{origin:?} cannot name a log: a log's origin is its key's name, non-empty, without spaces or '+' (a schema-less URL such as example.org/log)")]
    Origin { origin: String },
    #[error("the signing key is not a note signing key (PRIVATE+KEY+<origin>+<id>+<base64>, as `fencepost tlog keygen` prints it): {why}")]
    SigningKey { why: String },
    /// `name` is the text's first `+`-separated field only (the origin a key names), never
    /// the key material: what was given may be a secret pasted in the wrong place.
    #[error("the key given for {name:?} is not a note verifier key (<origin>+<id>+<base64>, as `fencepost tlog keygen` prints it)")]
    VerifierKey { name: String },
    #[error("the key given where a verifier key belongs is a signing key (PRIVATE+KEY+…), a secret: give the verifier key `fencepost tlog keygen` printed beside it (<origin>+<id>+<base64>). The signing key is not repeated here; if it was pasted where others can read it (a shell history, a CI log), make a new log key")]
    SigningKeyGiven,
    #[error("the checkpoint names {size} entries, more than a reader checks ({max}): refused before reading anything more (a log this size is not a site's, or the server is hostile)")]
    TooLarge { size: u64, max: u64 },
    #[error("the log's signing key changed: its checkpoints so far are signed by {origin}'s key {old}, this one by key {new}. A new key is a new log, which readers holding the old verifier key cannot check: sign with the key of the log you are extending, or start a new log under a new origin (transparency.skey_file / FENCEPOST_TLOG_SKEY)")]
    KeyChanged {
        origin: String,
        old: String,
        new: String,
    },
    #[error("witness {name}: {why}")]
    Witness { name: String, why: String },
    #[error("the checkpoint is not signed by {origin} with the verifier key given: {why}")]
    Signature { origin: String, why: String },
    #[error("not a checkpoint (origin, tree size and base64 root hash lines): {why}")]
    Checkpoint { why: String },
    #[error("log entry {index} is {len} bytes: an entry bundle holds entries of at most 65,535")]
    EntryTooLong { index: u64, len: usize },
    #[error("{path} is not served: a published log has its checkpoint, every tile and bundle its size needs, and the JSON of every revealed item")]
    Missing { path: String },
    #[error("cannot fetch {path}: {why}")]
    Fetch { path: String, why: String },
    #[error("the reveal of {item} does not hold: {why}")]
    Reveal { item: String, why: String },
    #[error("not a fencepost log entry: {why}")]
    Entry { why: String },
    #[error("entry bundle {path}: {why}")]
    Bundle { path: String, why: String },
    #[error("tile {path}: {why}")]
    Tile { path: String, why: String },
    #[error("not a tlog proof (c2sp.org/tlog-proof@v1): {why}")]
    Proof { why: String },
    #[error("the Merkle proof does not hold: {why}")]
    Merkle { why: String },
}

impl TlogError {
    fn merkle(e: tlog_tiles::Error) -> TlogError {
        TlogError::Merkle { why: e.to_string() }
    }
}
