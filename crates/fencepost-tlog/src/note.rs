//! Keys and signed checkpoints: a log's Ed25519 key in Go's note key texts, and its checkpoint
//! as a signed note.

use super::{Hash, TlogError};
use signed_note::{Note, StandardSigner, StandardVerifier, VerifierList};
use tlog_tiles::Checkpoint;

/// A log's key pair as `fencepost tlog keygen` prints it.
#[derive(Debug, Clone)]
pub struct KeyPair {
    /// `PRIVATE+KEY+<origin>+<id>+<base64>`: signs checkpoints; a secret.
    pub skey: String,
    /// `<origin>+<id>+<base64>`: what readers verify the log with; public.
    pub vkey: String,
}

/// Whether `origin` can name a log (and so its key): non-empty, no Unicode space, no `+`.
pub fn is_origin(origin: &str) -> bool {
    signed_note::is_key_name_valid(origin)
}

/// A new Ed25519 key pair for the log `origin`, from the operating system's randomness.
pub fn generate(origin: &str) -> Result<KeyPair, TlogError> {
    if !is_origin(origin) {
        return Err(TlogError::Origin {
            origin: origin.into(),
        });
    }
    let (skey, vkey) = signed_note::generate_key(&mut rand_core::OsRng, origin);
    Ok(KeyPair { skey, vkey })
}

/// The log's signer: its origin is its key's name.
pub struct LogSigner {
    signer: StandardSigner,
}

impl std::fmt::Debug for LogSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key itself.
        write!(f, "LogSigner({})", self.origin())
    }
}

impl LogSigner {
    /// Reads a signing key text (surrounding whitespace ignored). The error never repeats it.
    pub fn from_skey(skey: &str) -> Result<LogSigner, TlogError> {
        let signer = StandardSigner::new(skey.trim())
            .map_err(|e| TlogError::SigningKey { why: e.to_string() })?;
        Ok(LogSigner { signer })
    }

    pub fn origin(&self) -> &str {
        signed_note::Signer::name(&self.signer)
    }

    /// The key's id, hex (public: every signature line carries it).
    pub fn key_id(&self) -> String {
        format!("{:08x}", signed_note::Signer::key_id(&self.signer))
    }

    /// Refuses to sign on from the checkpoint `old` (one this log served before) when it was
    /// signed by another key: of the same name (a key made again for the same origin) or of
    /// another (a new origin). Readers hold the old verifier key; a checkpoint signed by a new
    /// one is a new log to them.
    pub fn extends_key_of(&self, old: &[u8]) -> Result<(), TlogError> {
        let text = String::from_utf8_lossy(old);
        let was = text.lines().next().unwrap_or("").to_string();
        let ids = key_ids(old, &was);
        let mine = self.key_id();
        match (was == self.origin(), ids.first()) {
            (true, Some(_)) if ids.contains(&mine) => Ok(()),
            (_, None) => Ok(()),
            (_, Some(old_id)) => Err(TlogError::KeyChanged {
                origin: was.clone(),
                old: old_id.clone(),
                new: format!("{} of {}", mine, self.origin()),
            }),
        }
    }

    /// The checkpoint of the tree of `size` entries with root `root`, signed: the bytes served
    /// at `<prefix>/checkpoint`.
    pub fn sign_checkpoint(&self, size: u64, root: Hash) -> Vec<u8> {
        let text = Checkpoint::new(self.origin(), size, root, "")
            .expect("a key's name is a valid origin")
            .to_bytes();
        let mut note = Note::new(&text, &[]).expect("a checkpoint is a valid note text");
        note.add_sigs(&[&self.signer])
            .expect("a key's name is a valid signer name");
        note.to_bytes()
    }
}

/// Parses a verifier key text. A signing key given in its place is refused as one, and no
/// error repeats the text beyond the origin it names.
pub fn verifier(vkey: &str) -> Result<StandardVerifier, TlogError> {
    let vkey = public_key_text(vkey)?;
    StandardVerifier::new(vkey).map_err(|_| not_a_verifier_key(vkey))
}

/// `text` trimmed, refused when it is a signing key (`PRIVATE+KEY+…`) given where a public
/// key belongs: the error never repeats it.
pub(crate) fn public_key_text(text: &str) -> Result<&str, TlogError> {
    let text = text.trim();
    match text.to_ascii_uppercase().starts_with("PRIVATE+KEY+") {
        true => Err(TlogError::SigningKeyGiven),
        false => Ok(text),
    }
}

/// The error for a key text that is not a verifier key, naming only its first field (the
/// origin it names), never the key material.
pub(crate) fn not_a_verifier_key(text: &str) -> TlogError {
    let name = text.trim().split('+').next().unwrap_or("");
    TlogError::VerifierKey {
        name: name.chars().take(100).collect(),
    }
}

/// The ids (hex, as in Go's note texts) of the keys named `origin` whose signature lines a
/// signed note carries, unverified: what a deploy compares to know the key did not change.
pub fn key_ids(signed: &[u8], origin: &str) -> Vec<String> {
    let text = String::from_utf8_lossy(signed);
    let Some((_, sigs)) = text.rsplit_once("\n\n") else {
        return Vec::new();
    };
    sigs.lines()
        .filter_map(|line| signed_note::Signature::from_bytes(line.as_bytes()).ok())
        .filter(|sig| sig.name() == origin)
        .map(|sig| format!("{:08x}", sig.id()))
        .collect()
}

/// A signed checkpoint checked against `vkey`: signed by it (other signatures, a witness's,
/// are left for their own checks), its origin the key's name, its text a checkpoint with no
/// extension lines.
pub fn open_checkpoint(signed: &[u8], vkey: &str) -> Result<Checkpoint, TlogError> {
    let verifier = verifier(vkey)?;
    let origin = signed_note::Verifier::name(&verifier).to_string();
    let note =
        Note::from_bytes(signed).map_err(|e| TlogError::Checkpoint { why: e.to_string() })?;
    let known = VerifierList::new(vec![Box::new(verifier)]);
    note.verify(&known).map_err(|e| TlogError::Signature {
        origin: origin.clone(),
        why: e.to_string(),
    })?;
    let checkpoint = Checkpoint::from_bytes(note.text())
        .map_err(|e| TlogError::Checkpoint { why: e.to_string() })?;
    if checkpoint.origin() != origin {
        return Err(TlogError::Checkpoint {
            why: format!(
                "its origin {:?} is not the key's name {origin:?}",
                checkpoint.origin()
            ),
        });
    }
    if !checkpoint.extension().is_empty() {
        return Err(TlogError::Checkpoint {
            why: "it has extension lines, which fencepost's log never writes".into(),
        });
    }
    Ok(checkpoint)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Go's known-answer vectors (golang.org/x/mod/sumdb/note, note_test.go).
    const GO_SKEY: &str =
        "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz";
    const GO_VKEY: &str = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
    const GO_NOTE: &str = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n\n— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n";

    #[test]
    fn go_s_signed_note_vector_is_reproduced_and_verified() {
        let signer = StandardSigner::new(GO_SKEY).unwrap();
        let text = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
        let mut note = Note::new(text.as_bytes(), &[]).unwrap();
        note.add_sigs(&[&signer]).unwrap();
        // Ed25519 is deterministic: the same key signs the same text with the same bytes.
        assert_eq!(String::from_utf8(note.to_bytes()).unwrap(), GO_NOTE);
        let known = VerifierList::new(vec![Box::new(verifier(GO_VKEY).unwrap())]);
        Note::from_bytes(GO_NOTE.as_bytes())
            .unwrap()
            .verify(&known)
            .unwrap();
        // One changed letter of the text: refused.
        let forged = GO_NOTE.replace("cryptography", "cryptographY");
        let note = Note::from_bytes(forged.as_bytes()).unwrap();
        assert!(note.verify(&known).is_err());
    }

    #[test]
    fn a_generated_key_signs_checkpoints_its_verifier_key_opens() {
        let keys = generate("example.org/log").unwrap();
        assert!(keys.skey.starts_with("PRIVATE+KEY+example.org/log+"));
        assert!(keys.vkey.starts_with("example.org/log+"));
        let signer = LogSigner::from_skey(&keys.skey).unwrap();
        let root = Hash([7; 32]);
        let signed = signer.sign_checkpoint(42, root);
        let text = String::from_utf8(signed.clone()).unwrap();
        assert!(
            text.starts_with("example.org/log\n42\nBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=\n\n— example.org/log "),
            "{text}"
        );
        let checkpoint = open_checkpoint(&signed, &keys.vkey).unwrap();
        assert_eq!((checkpoint.size(), *checkpoint.hash()), (42, root));
        // Another log's key does not open it; a changed size breaks the signature.
        let other = generate("example.org/log").unwrap();
        assert!(matches!(
            open_checkpoint(&signed, &other.vkey),
            Err(TlogError::Signature { .. })
        ));
        let forged = text.replacen("\n42\n", "\n43\n", 1);
        assert!(open_checkpoint(forged.as_bytes(), &keys.vkey).is_err());
    }

    #[test]
    fn bad_keys_and_origins_are_named_and_a_signing_key_never_is() {
        assert!(matches!(
            generate("has space"),
            Err(TlogError::Origin { .. })
        ));
        assert!(matches!(generate("a+b"), Err(TlogError::Origin { .. })));
        assert!(matches!(generate(""), Err(TlogError::Origin { .. })));
        let broken = GO_SKEY.replace("+AYEK", "+AYEL");
        let err = LogSigner::from_skey(&broken).unwrap_err().to_string();
        assert!(!err.contains("AYEL"), "{err}");
        assert!(verifier("nonsense").is_err());
        let signer = LogSigner::from_skey(GO_SKEY).unwrap();
        assert_eq!(format!("{signer:?}"), "LogSigner(PeterNeumann)");
    }
}
