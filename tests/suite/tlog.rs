//! The transparency log through the binary: keys, and (as it grows) the log a build writes,
//! every origin serves and readers' software checks.

use crate::common::*;
use serde_json::Value;

/// `tlog keygen ORIGIN` prints a signing key in Go's note text and the matching verifier key:
/// a checkpoint signed with the one opens with the other, and with no other key; each run
/// makes a new pair; an origin that cannot name a key is refused.
#[test]
fn keygen_prints_a_key_pair_whose_verifier_opens_what_its_signer_signs() {
    let keygen = |origin: &str| -> Value {
        let out = fencepost()
            .args(["tlog", "keygen", "--json", origin])
            .output()
            .unwrap();
        assert_success(&out);
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let keys = keygen("example.org/advisories");
    let skey = keys["skey"].as_str().unwrap();
    let vkey = keys["vkey"].as_str().unwrap();
    assert!(
        skey.starts_with("PRIVATE+KEY+example.org/advisories+"),
        "{keys}"
    );
    assert!(vkey.starts_with("example.org/advisories+"), "{keys}");
    // The key id is the same in both texts.
    assert_eq!(skey.split('+').nth(3), vkey.split('+').nth(1));

    let signer = fencepost::tlog::note::LogSigner::from_skey(skey).unwrap();
    let root = fencepost::tlog::Hash([1; 32]);
    let signed = signer.sign_checkpoint(3, root);
    let checkpoint = fencepost::tlog::note::open_checkpoint(&signed, vkey).unwrap();
    assert_eq!(checkpoint.origin(), "example.org/advisories");
    let other = keygen("example.org/advisories");
    assert_ne!(other["skey"], keys["skey"]);
    assert!(
        fencepost::tlog::note::open_checkpoint(&signed, other["vkey"].as_str().unwrap()).is_err()
    );

    let out = fencepost()
        .args(["tlog", "keygen", "--json", "two words"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cannot name a log"),
        "{err}"
    );
}
