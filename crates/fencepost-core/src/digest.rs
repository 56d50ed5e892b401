//! The one content hash every stage uses: sha256, written in lower-case hex.

use sha2::{Digest, Sha256};

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex32(&Sha256::digest(bytes).into())
}

/// A 32-byte digest in lower-case hex: the same text as `hex::encode`, made through a table
/// into one buffer (`hex::encode` pushes one `char` at a time; a build makes a few hundred
/// thousand of these).
pub fn hex32(digest: &[u8; 32]) -> String {
    let mut out = [0u8; 64];
    hex::encode_to_slice(digest, &mut out).expect("64 bytes hold 32 in hex");
    String::from_utf8(out.to_vec()).expect("hex is ASCII")
}

#[cfg(test)]
mod tests {
    #[test]
    fn hex32_writes_what_hex_encode_writes() {
        let d: [u8; 32] = std::array::from_fn(|i| (i as u8).wrapping_mul(37));
        assert_eq!(super::hex32(&d), hex::encode(d));
        assert_eq!(
            super::sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
