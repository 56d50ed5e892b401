//! Witnesses' cosignatures (c2sp.org/tlog-cosignature, Ed25519, type 0x04): a cosigner's
//! statement that at a time it saw this checkpoint as the largest consistent one of the log.
//! A log cannot date itself; a cosignature dated before an item's instant is the independent
//! evidence that the commitment was public then.
//!
//! The signed message is `cosignature/v1\ntime <unix seconds>\n` followed by the checkpoint's
//! note text; the signature line carries the key id, the 8-byte big-endian time and the
//! 64-byte signature. `signed_note` knows only plain Ed25519 notes, so these few lines are
//! ours, verified with `ring`.

use super::TlogError;
use base64::{engine::general_purpose::STANDARD, Engine};
use sha2::{Digest, Sha256};

/// Signature type of an Ed25519 cosignature.
const COSIGNATURE_V1: u8 = 0x04;

/// A witness's verifier key: `<name>+<hex key id>+<base64(0x04 ‖ 32-byte public key)>`.
#[derive(Debug, Clone)]
pub struct Witness {
    pub name: String,
    id: [u8; 4],
    key: [u8; 32],
}

/// The key id of an Ed25519 cosigner: SHA-256(name ‖ "\n" ‖ 0x04 ‖ public key)[:4].
pub fn key_id(name: &str, key: &[u8; 32]) -> [u8; 4] {
    let mut h = Sha256::new();
    h.update(name.as_bytes());
    h.update(b"\n");
    h.update([COSIGNATURE_V1]);
    h.update(key);
    h.finalize()[..4].try_into().expect("4 bytes")
}

/// The message a cosigner signs for `note_text` (the checkpoint without its signatures) at
/// `time`.
pub fn message(time: u64, note_text: &[u8]) -> Vec<u8> {
    let mut m = format!("cosignature/v1\ntime {time}\n").into_bytes();
    m.extend_from_slice(note_text);
    m
}

impl Witness {
    pub fn parse(vkey: &str) -> Result<Witness, TlogError> {
        let vkey = super::note::public_key_text(vkey)?;
        let bad = || super::note::not_a_verifier_key(vkey);
        let mut parts = vkey.trim().splitn(3, '+');
        let (name, id, key) = (parts.next(), parts.next(), parts.next());
        let (Some(name), Some(id), Some(key)) = (name, id, key) else {
            return Err(bad());
        };
        let id: [u8; 4] = hex::decode(id)
            .ok()
            .and_then(|b| b.try_into().ok())
            .ok_or_else(bad)?;
        let key = STANDARD.decode(key).map_err(|_| bad())?;
        let (ty, key) = key.split_first().ok_or_else(bad)?;
        let key: [u8; 32] = key.try_into().map_err(|_| bad())?;
        if *ty != COSIGNATURE_V1 || key_id(name, &key) != id || name.is_empty() {
            return Err(bad());
        }
        Ok(Witness {
            name: name.into(),
            id,
            key,
        })
    }

    /// The time of this witness's valid cosignature on the signed checkpoint `signed` (its
    /// note text and signature lines), or why there is none.
    pub fn cosigned_at(&self, signed: &[u8]) -> Result<u64, TlogError> {
        let bad = |why: &str| TlogError::Witness {
            name: self.name.clone(),
            why: why.into(),
        };
        let text = std::str::from_utf8(signed).map_err(|_| bad("the checkpoint is not UTF-8"))?;
        let (body, sigs) = text
            .split_once("\n\n")
            .ok_or_else(|| bad("the checkpoint has no signature lines"))?;
        let note_text = format!("{body}\n");
        let prefix = format!("— {} ", self.name);
        for line in sigs.lines() {
            let Some(b64) = line.strip_prefix(&prefix) else {
                continue;
            };
            let Ok(raw) = STANDARD.decode(b64) else {
                continue;
            };
            if raw.len() != 4 + 8 + 64 || raw[..4] != self.id {
                continue;
            }
            let time = u64::from_be_bytes(raw[4..12].try_into().expect("8 bytes"));
            let key = ring::signature::UnparsedPublicKey::new(&ring::signature::ED25519, &self.key);
            return key
                .verify(&message(time, note_text.as_bytes()), &raw[12..])
                .map(|()| time)
                .map_err(|_| bad("its cosignature does not verify"));
        }
        Err(bad("the checkpoint carries no cosignature by it"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cosignature_verifies_only_for_its_time_text_and_key() {
        let rng = ring::rand::SystemRandom::new();
        let pkcs8 = ring::signature::Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
        let pair = ring::signature::Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
        let key: [u8; 32] = ring::signature::KeyPair::public_key(&pair)
            .as_ref()
            .try_into()
            .unwrap();
        let name = "witness.example/w1";
        let mut vkey_bytes = vec![COSIGNATURE_V1];
        vkey_bytes.extend_from_slice(&key);
        let vkey = format!(
            "{name}+{}+{}",
            hex::encode(key_id(name, &key)),
            STANDARD.encode(&vkey_bytes)
        );
        let witness = Witness::parse(&vkey).unwrap();
        let body = "example.org/log\n3\nBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=\n";
        let sign = |time: u64, text: &str| {
            let sig = pair.sign(&message(time, text.as_bytes()));
            let mut raw = key_id(name, &key).to_vec();
            raw.extend_from_slice(&time.to_be_bytes());
            raw.extend_from_slice(sig.as_ref());
            format!("— {name} {}\n", STANDARD.encode(raw))
        };
        let signed = format!(
            "{body}\n— example.org/log AAAA\n{}",
            sign(1_700_000_000, body)
        );
        assert_eq!(
            witness.cosigned_at(signed.as_bytes()).unwrap(),
            1_700_000_000
        );
        // The same signature over another tree size, or a changed time: refused.
        let other = signed.replacen("\n3\n", "\n4\n", 1);
        assert!(witness.cosigned_at(other.as_bytes()).is_err());
        let forged_time = format!("{body}\n{}", sign(1, "x\n"));
        assert!(witness.cosigned_at(forged_time.as_bytes()).is_err());
        assert!(witness.cosigned_at(format!("{body}\n").as_bytes()).is_err());
        assert!(Witness::parse(&vkey.replace("+", "+0")).is_err());
    }
}
