//! A preview link's token: `<id>.<expires>.<mac>` — a random id (16 hex digits, what the
//! origins' logs name), the Unix second it expires, and HMAC-SHA256 over the preview's name,
//! the id and the expiry under the site's preview key (`FENCEPOST_PREVIEW_KEY`, 64 hex digits
//! made by `fencepost preview keygen`), in hex.
//!
//! The adversary is anyone who has not been given a link: a reader guessing names, a holder of
//! one preview's link trying another's, a link that leaked after it expired, a server that
//! saw it in a `Referer`. None of them holds the key, so none can make or stretch a token; the
//! name is inside the MAC, so a token opens one preview only. The key never leaves the
//! environment of the machines that sign (CI) and serve (origins, the Worker's secret).
//! **Rejected**: JWTs (a library, algorithm negotiation, and nothing this needs), and
//! unsigned random tokens kept in the bucket (every origin would read a list on every request,
//! and a bucket reader would hold every live link).

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The environment variable the key is read from (signing and serving).
pub const KEY_ENV: &str = "FENCEPOST_PREVIEW_KEY";

const CONTEXT: &str = "fencepost-preview-v1";

/// A preview key: 32 bytes.
#[derive(Clone)]
pub struct Key([u8; 32]);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(…)")
    }
}

/// Why a key is refused (never its value).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("{KEY_ENV} is not set: previews need a key. Make one with `fencepost preview keygen` and keep it as a secret of CI and of every origin (the Worker's too); without it no preview is made or served")]
    Missing,
    #[error(
        "{KEY_ENV} is not a preview key (64 hex digits, as `fencepost preview keygen` prints one)"
    )]
    Malformed,
}

impl Key {
    /// A new random key.
    pub fn generate() -> Key {
        let mut k = [0u8; 32];
        getrandom::getrandom(&mut k).expect("the operating system gives random bytes");
        Key(k)
    }

    /// The key as `fencepost preview keygen` prints it.
    pub fn to_hex(&self) -> String {
        hex::encode(self.0)
    }

    pub fn parse(text: &str) -> Result<Key, KeyError> {
        let bytes = hex::decode(text.trim()).map_err(|_| KeyError::Malformed)?;
        let k: [u8; 32] = bytes.try_into().map_err(|_| KeyError::Malformed)?;
        Ok(Key(k))
    }

    /// The key in [`KEY_ENV`].
    pub fn from_env() -> Result<Key, KeyError> {
        match std::env::var(KEY_ENV) {
            Ok(v) if !v.trim().is_empty() => Key::parse(&v),
            _ => Err(KeyError::Missing),
        }
    }

    fn mac(&self, name: &str, id: &str, expires: i64) -> Hmac<Sha256> {
        let mut m = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes any key length");
        m.update(format!("{CONTEXT}\n{name}\n{id}\n{expires}").as_bytes());
        m
    }

    /// A token opening preview `name` until `expires` (Unix seconds).
    pub fn sign(&self, name: &str, expires: i64) -> String {
        let mut id = [0u8; 8];
        getrandom::getrandom(&mut id).expect("the operating system gives random bytes");
        let id = hex::encode(id);
        let mac = hex::encode(self.mac(name, &id, expires).finalize().into_bytes());
        format!("{id}.{expires}.{mac}")
    }

    /// The token's id and expiry when it opens preview `name` at `now` (Unix seconds); else
    /// why not (for the log only: every refusal is answered alike).
    pub fn verify(&self, token: &str, name: &str, now: i64) -> Result<Valid, &'static str> {
        let mut parts = token.split('.');
        let (Some(id), Some(exp), Some(mac), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err("malformed");
        };
        let hex16 = id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit());
        let expires: i64 = match (hex16, exp.parse()) {
            (true, Ok(e)) if exp.bytes().all(|b| b.is_ascii_digit()) => e,
            _ => return Err("malformed"),
        };
        let mac = hex::decode(mac).map_err(|_| "malformed")?;
        self.mac(name, id, expires)
            .verify_slice(&mac)
            .map_err(|_| "bad signature (another key or another preview)")?;
        if now >= expires {
            return Err("expired");
        }
        Ok(Valid {
            id: id.to_string(),
            expires,
        })
    }
}

/// A token that opens a preview.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Valid {
    pub id: String,
    pub expires: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_opens_its_preview_until_it_expires_and_nothing_else() {
        let k = Key::generate();
        let t = k.sign("pr-7", 1_000);
        let v = k.verify(&t, "pr-7", 999).unwrap();
        assert_eq!((v.id.len(), v.expires), (16, 1_000));
        assert_eq!(k.verify(&t, "pr-7", 1_000), Err("expired"));
        assert!(k.verify(&t, "pr-8", 1).is_err(), "another preview");
        assert!(
            Key::generate().verify(&t, "pr-7", 1).is_err(),
            "another key"
        );
        // Stretching the expiry breaks the MAC.
        let parts: Vec<&str> = t.split('.').collect();
        let stretched = format!("{}.{}.{}", parts[0], 9_999, parts[2]);
        assert!(k.verify(&stretched, "pr-7", 1).is_err());
        for bad in [
            "",
            "a.b",
            "a.b.c.d",
            &format!("{}.+1000.{}", parts[0], parts[2]),
        ] {
            assert_eq!(k.verify(bad, "pr-7", 1), Err("malformed"), "{bad}");
        }
    }

    #[test]
    fn a_key_is_64_hex_digits_and_never_printed_by_debug() {
        let k = Key::generate();
        assert_eq!(Key::parse(&k.to_hex()).unwrap().to_hex(), k.to_hex());
        assert_eq!(Key::parse("abc").unwrap_err(), KeyError::Malformed);
        assert!(!format!("{k:?}").contains(&k.to_hex()[..8]));
    }

    /// The Worker computes the same MAC with WebCrypto: this vector is checked there too
    /// (`edge/cloudflare/worker.test.mjs`).
    #[test]
    fn a_fixed_vector_both_origins_agree_on() {
        let k = Key::parse(&"11".repeat(32)).unwrap();
        let mac = hex::encode(
            k.mac("pr-7", "0123456789abcdef", 2_000_000_000)
                .finalize()
                .into_bytes(),
        );
        assert_eq!(mac, VECTOR_MAC);
    }

    const VECTOR_MAC: &str = "41325312b4c98b9ed46de3897d19ea3792f79b111d41e5282a6e940b48237491";
}
