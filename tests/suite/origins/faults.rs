//! What the four origins answer when the bucket is damaged under them (the case table's last
//! steps, `origins.rs`): a manifest shard missing, a blob tampered with, the pointer
//! unreadable or gone — a 503, never a 404 that says a page does not exist and never bytes
//! that are not the revision's.
use super::*;

/// A manifest shard missing from the bucket (one no origin has read yet): 503 on every bucket
/// origin for a path it holds, never a 404 that would say the page does not exist; put back,
/// it is served again (a failure is not remembered past the pointer's TTL).
pub(super) fn a_missing_shard_is_a_503_never_a_404(f: &Four, after: &[Case]) {
    let requested: BTreeSet<u32> = after
        .iter()
        .chain(table(f).iter())
        .flat_map(|c| {
            let p = c.target.split('?').next().unwrap().trim_start_matches('/');
            [
                p.to_string(),
                format!("{p}index.html"),
                format!("{p}/index.html"),
                "404.html".into(),
            ]
        })
        .map(|p| layout::shard_of(&p))
        .collect();
    let live = f.site.current_dir();
    let unread = manifest_shas(&live)
        .into_keys()
        .filter(|p| p.ends_with(".html") && p != "robots.txt")
        .find(|p| !requested.contains(&layout::shard_of(p)))
        .expect("a page in a shard no request has read");
    let root: Value = {
        let p: Value =
            serde_json::from_slice(&std::fs::read(f.bucket.join("current")).unwrap()).unwrap();
        let m = p["manifest"].as_str().unwrap();
        serde_json::from_slice(
            &std::fs::read(f.bucket.join(format!("manifests/{m}.json"))).unwrap(),
        )
        .unwrap()
    };
    let shard = root["shards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s[0].as_u64() == Some(u64::from(layout::shard_of(&unread))))
        .unwrap()[1]
        .as_str()
        .unwrap()
        .to_string();
    let key = format!("manifests/shards/{shard}.json");
    let kept = std::fs::read(f.bucket.join(&key)).unwrap();
    std::fs::remove_file(f.bucket.join(&key)).unwrap();
    s3_delete(&f.moto, &format!("www/{key}"));
    f.edge().wait_synced(&key, "");
    let target = format!("/{}", unread.trim_end_matches("index.html"));
    f.check(&[case("GET", &target, 503)], BUCKETS);
    // Put back, it is served again (a failure is not remembered past the pointer's TTL).
    std::fs::write(f.bucket.join(&key), &kept).unwrap();
    s3_put(&f.moto, &format!("www/{key}"), kept.clone());
    f.edge()
        .wait_synced(&key, &fencepost_core::digest::sha256_hex(&kept));
    f.check(&[case("GET", &target, 200)], ALL);
}

/// A blob tampered in the bucket (one no origin has read yet) is never served: 503 on every
/// bucket origin. (`serve` has no bucket: it serves the revision folder it built.)
pub(super) fn a_tampered_blob_is_never_served(f: &Four) {
    let sha = f.entry("robots.txt")["sha256"]
        .as_str()
        .unwrap()
        .to_string();
    let evil = b"User-agent: *\nDisallow: /evil\n".to_vec();
    std::fs::write(f.bucket.join(format!("objects/{sha}")), &evil).unwrap();
    s3_put(&f.moto, &format!("www/objects/{sha}"), evil.clone());
    f.edge().wait_synced(
        &format!("objects/{sha}"),
        &fencepost_core::digest::sha256_hex(&evil),
    );
    f.check(&[case("GET", "/robots.txt", 503)], BUCKETS);
    for &i in BUCKETS {
        let r = try_http(&f.origins[i].addr, "GET", "/robots.txt", &[]).unwrap();
        assert!(!r.text().contains("evil"), "{}", f.origins[i].name);
        assert_eq!(r.header("cache-control"), Some("no-store"));
    }
}

/// An unreadable pointer: 503 everywhere, never a stale 200; and a pointer that is missing
/// altogether.
pub(super) fn an_unreadable_or_missing_pointer_is_a_503(f: &Four) {
    let garbage = b"{ not a pointer".to_vec();
    std::fs::write(f.bucket.join("current"), &garbage).unwrap();
    s3_put(&f.moto, "www/current", garbage.clone());
    f.edge()
        .wait_synced("current", &fencepost_core::digest::sha256_hex(&garbage));
    let link = f.site.path("public/current");
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink("revisions/no-such-revision", &link).unwrap();
    f.check(
        &[
            case("GET", "/", 503),
            case("GET", "/posts/hello/", 503),
            case("HEAD", "/about/", 503),
        ],
        ALL,
    );
    std::fs::remove_file(f.bucket.join("current")).unwrap();
    f.edge().wait_synced("current", "");
    f.check(&[case("GET", "/", 503)], &[0, 1, 3]);
}
