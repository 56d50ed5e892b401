//! The object store contract (`crates/fencepost-core/src/store/`) on memory, a folder and S3 over HTTP: conditional
//! writes, listings, and refusal of a store that ignores them.
use crate::common::*;
use fencepost_bucket::remote::{Remote, RemotePointer};
use fencepost_core::clock::Instant;
use fencepost_output::id::RevisionId;

fn pointer(revision: i64, manifest: &str) -> RemotePointer {
    RemotePointer::new(RevisionId::new(revision, "b"), manifest, Instant(0))
}

/// The contract every backend keeps (as Litestream tests every replica client).
async fn conformance(remote: &Remote) {
    // Create-if-absent.
    assert!(remote
        .create("conf/a", b"one".to_vec(), Some("text/plain"))
        .await
        .unwrap());
    assert!(!remote
        .create("conf/a", b"two".to_vec(), Some("text/plain"))
        .await
        .unwrap());
    assert_eq!(
        remote.get("conf/a").await.unwrap().as_deref(),
        Some(&b"one"[..])
    );
    assert!(remote.exists("conf/a").await.unwrap());
    assert!(!remote.exists("conf/b").await.unwrap());
    assert_eq!(remote.get("conf/b").await.unwrap(), None);
    // Listing.
    assert!(remote.create("conf/c", b"3".to_vec(), None).await.unwrap());
    let mut names: Vec<String> = remote
        .list("conf")
        .await
        .unwrap()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    names.sort();
    assert_eq!(names, ["a", "c"]);
    // The pointer: create-if-absent the first time, if-match after.
    assert_eq!(remote.read_pointer().await.unwrap(), None);
    assert!(remote.swap_pointer(None, &pointer(1, "m1")).await.unwrap());
    assert!(
        !remote.swap_pointer(None, &pointer(2, "m2")).await.unwrap(),
        "a second create-if-absent must lose"
    );
    let (p1, v1) = remote.read_pointer().await.unwrap().unwrap();
    assert_eq!(p1.manifest, "m1");
    assert!(remote
        .swap_pointer(Some(&v1), &pointer(2, "m2"))
        .await
        .unwrap());
    assert!(
        !remote
            .swap_pointer(Some(&v1), &pointer(3, "m3"))
            .await
            .unwrap(),
        "an if-match on a stale version must lose"
    );
    assert_eq!(
        remote.read_pointer().await.unwrap().unwrap().0.manifest,
        "m2"
    );
    // The probe passes on a store that enforces conditional writes.
    remote.probe().await.unwrap();
    remote.delete("conf/a").await.unwrap();
    remote.delete("conf/a").await.unwrap(); // deleting what is gone is fine
    assert!(!remote.exists("conf/a").await.unwrap());
}

#[test]
fn conformance_in_memory() {
    let r = Remote::open(&format!("memory://{}", unique("conf"))).unwrap();
    rt().block_on(conformance(&r));
}

#[test]
fn conformance_folder() {
    let d = tempfile::tempdir().unwrap();
    let r = Remote::open(&format!("file://{}", d.path().display())).unwrap();
    rt().block_on(conformance(&r));
}

#[test]
fn conformance_s3_over_http() {
    let moto = Moto::start();
    moto.bucket("conformance");
    let settings = Moto::settings(&moto.endpoint);
    let settings: Vec<(&str, &str)> = settings.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r = Remote::open_with("s3://conformance/site", &settings).unwrap();
    rt().block_on(conformance(&r));
}

#[test]
fn a_store_that_ignores_conditional_writes_is_refused() {
    let moto = Moto::start();
    moto.bucket("garage-like");
    let proxy = Proxy::start(&moto.endpoint, true);
    let settings = Moto::settings(&proxy.endpoint);
    let settings: Vec<(&str, &str)> = settings.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r = Remote::open_with("s3://garage-like/site", &settings).unwrap();
    let e = rt().block_on(r.probe()).unwrap_err().to_string();
    assert!(e.contains("does not enforce conditional writes"), "{e}");
    // Through the binary: a refusal, a non-zero exit, and nothing deployed.
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.json(&["publish", "--build", "--now", NOW]);
    let mut cmd = s.cmd(&["deploy", "--to", "s3://garage-like/site", "--now", NOW]);
    for (k, v) in Moto::env(&proxy.endpoint) {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("does not enforce conditional writes") && err.contains("Garage"),
        "{err}"
    );
    let settings = Moto::settings(&moto.endpoint);
    let settings: Vec<(&str, &str)> = settings.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let direct = Remote::open_with("s3://garage-like/site", &settings).unwrap();
    assert!(rt().block_on(direct.list("objects")).unwrap().is_empty());
    assert_eq!(rt().block_on(direct.read_pointer()).unwrap(), None);
}

/// Issue 19: the probe is remembered for the store, not the URL string: the same `s3://` URL
/// pointed at a store without conditional writes (through AWS_ENDPOINT_URL) is probed again,
/// and refused.
#[test]
fn the_same_url_at_another_endpoint_is_probed_again() {
    let moto = Moto::start();
    moto.bucket("twice");
    let proxy = Proxy::start(&moto.endpoint, true);
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.json(&["publish", "--build", "--now", NOW]);
    s.json_env(
        &["deploy", "--to", "s3://twice/site", "--now", NOW],
        &Moto::env(&moto.endpoint),
    );
    s.item(2, "2026-11-02");
    s.json(&["publish", "--build", "--now", NOW]);
    let mut cmd = s.cmd(&["deploy", "--to", "s3://twice/site", "--now", NOW]);
    for (k, v) in Moto::env(&proxy.endpoint) {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("does not enforce conditional writes"), "{err}");
    // Back at the first endpoint, nothing is probed again.
    let before = proxy.log.lock().unwrap().len();
    s.json_env(
        &["deploy", "--to", "s3://twice/site", "--now", NOW],
        &Moto::env(&moto.endpoint),
    );
    assert_eq!(proxy.log.lock().unwrap().len(), before);
}
