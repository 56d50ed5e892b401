//! The bucket origin (`serve --from`): follows deploys, refuses tampering and foreign roots,
//! reads only what a request needs, times out plainly.
use crate::common::*;
use fencepost_bucket::remote::Remote;
use serde_json::Value;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The bucket origin never serves a root built from a ledger other than the one the pointer
/// names (a pointer rewritten by hand, or by a tool that skipped the ownership check).
#[test]
fn serve_from_refuses_a_root_from_another_ledger() {
    let (s, bucket, url) = one_item_and_a_bucket();
    s.json(&["deploy", "--to", &url, "--now", NOW]);
    let srv = s.serve(&["--from", &url]);
    assert_eq!(srv.get("/answers/1/").status, 200);
    drop(srv);
    let path = bucket.path().join("current");
    let mut p: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    p["ledger_id"] = Value::String("someone-elses-ledger".into());
    std::fs::write(&path, serde_json::to_vec(&p).unwrap()).unwrap();
    let srv = s.serve(&["--from", &url]);
    let r = srv.get("/answers/1/");
    assert_eq!(r.status, 503, "{}", r.text());
}

#[test]
fn serve_from_a_bucket_follows_deploys_refuses_tampering_and_503s() {
    let moto = Moto::start();
    moto.bucket("origin");
    let s = site_with_revisions(1);
    s.write("fencepost.toml", "[serve]\npointer_ttl_ms = 200\n");
    let env = Moto::env(&moto.endpoint);
    let deploy = |s: &TestSite| {
        s.json_env(&["deploy", "--to", "s3://origin/www", "--now", NOW], &env);
    };
    deploy(&s);
    let srv = s.serve_env(&["--from", "s3://origin/www"], &env);
    let r = srv.get("/answers/1/");
    assert_eq!(r.status, 200);
    assert!(r.header("x-revision").unwrap().starts_with("1-"));
    assert_eq!(
        r.header("cache-control"),
        Some("public, max-age=0, must-revalidate")
    );
    let etag = r.header("etag").unwrap().to_string();
    assert_eq!(
        http(&srv.addr, "GET", "/answers/1/", &[("If-None-Match", &etag)]).status,
        304
    );
    assert_eq!(srv.get("/no/such/").status, 404);
    assert_eq!(srv.get("/answers").status, 301);
    // A new revision is seen within the pointer's TTL.
    s.item(2, "2026-11-02");
    s.json(&["publish", "--build", "--now", NOW]);
    deploy(&s);
    wait_for("the new revision to be served", || {
        srv.get("/answers/2/").status == 200
    });
    // A tampered blob is refused (a file not served yet, so not in memory).
    let settings = Moto::settings(&moto.endpoint);
    let settings: Vec<(&str, &str)> = settings.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let remote = Remote::open_with("s3://origin/www", &settings).unwrap();
    let sha = {
        let m: serde_json::Value = serde_json::from_slice(
            &std::fs::read(s.current_dir().join(".fencepost/manifest.json")).unwrap(),
        )
        .unwrap();
        m["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == "robots.txt")
            .unwrap()["sha256"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // Someone with write access to the bucket swaps the blob's bytes.
    {
        use object_store::ObjectStoreExt;
        let store = moto.store("origin");
        rt().block_on(store.put(
            &object_store::path::Path::from(format!("www/objects/{sha}")),
            b"User-agent: *\nDisallow: /evil\n".to_vec().into(),
        ))
        .unwrap();
    }
    let r = srv.get("/robots.txt");
    assert_eq!(r.status, 503, "{}", r.text());
    assert!(!r.text().contains("evil"));
    // The pointer cannot be read: 503, never a stale 200.
    rt().block_on(remote.delete("current")).unwrap();
    wait_for("the unreadable pointer to be noticed", || {
        srv.get("/answers/1/").status == 503
    });
    assert_eq!(srv.get("/").header("cache-control"), Some("no-store"));
    assert_eq!(srv.stop().code(), Some(0));
}

/// `serve --from URL` with `env`.
fn serve_from(s: &TestSite, url: &str, env: &[(String, String)]) -> Server {
    s.serve_env(&["--from", url], env)
}

fn gets(proxy: &Proxy) -> Vec<String> {
    proxy
        .log
        .lock()
        .unwrap()
        .iter()
        .filter(|(m, _, _)| m == "GET")
        .map(|(_, p, _)| p.clone())
        .collect()
}

fn site_with_items(n: i64) -> TestSite {
    let s = TestSite::new();
    for i in 1..=n {
        s.item(
            i,
            &format!("2026-{:02}-{:02}", 1 + (i - 1) / 28 % 11, 1 + (i - 1) % 28),
        );
    }
    s.json(&["publish", "--build", "--now", NOW]);
    s
}

#[test]
fn after_a_deploy_a_request_waits_only_for_its_own_objects() {
    let moto = Moto::start();
    moto.bucket("fast");
    let proxy = Proxy::start(&moto.endpoint, false);
    let s = site_with_items(300);
    s.write(
        "fencepost.toml",
        &format!(
            "{}\n[serve]\npointer_ttl_ms = 100\n",
            std::fs::read_to_string(s.path("fencepost.toml")).unwrap()
        ),
    );
    let direct = Moto::env(&moto.endpoint);
    s.json_env(&["deploy", "--to", "s3://fast/www", "--now", NOW], &direct);
    let srv = serve_from(&s, "s3://fast/www", &Moto::env(&proxy.endpoint));
    assert_eq!(srv.get("/answers/1/").status, 200);
    // A new revision: 300 pages spread over some 250 shards. Every bucket request now takes
    // 30 ms; reading the whole manifest would take seconds.
    s.item(301, "2026-11-29");
    s.json(&["publish", "--build", "--now", NOW]);
    s.json_env(&["deploy", "--to", "s3://fast/www", "--now", NOW], &direct);
    proxy.delay_ms.store(30, Ordering::SeqCst);
    // Past the configured 100 ms pointer TTL, so the next request reads the new pointer.
    std::thread::sleep(Duration::from_millis(150));
    let before = gets(&proxy).len();
    let started = Instant::now();
    let r = srv.get("/answers/301/");
    let took = started.elapsed();
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.header("x-revision").unwrap().starts_with("301-"));
    let fetched = gets(&proxy)[before..].to_vec();
    assert!(
        fetched.len() <= 4,
        "the first request after a deploy read {} objects: {fetched:?}",
        fetched.len()
    );
    assert!(took < Duration::from_secs(1), "took {took:?}");
    // Concurrent requests for one new path fetch its objects once.
    let before = gets(&proxy).len();
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let addr = srv.addr.clone();
            std::thread::spawn(move || http(&addr, "GET", "/answers/150/", &[]).status)
        })
        .collect();
    for t in threads {
        assert_eq!(t.join().unwrap(), 200);
    }
    let fetched = gets(&proxy)[before..].to_vec();
    let objects: Vec<&String> = fetched
        .iter()
        .filter(|p| !p.ends_with("/current"))
        .collect();
    assert!(
        objects.len() <= 2,
        "one shard and one blob, once: {fetched:?}"
    );
}

/// A bucket whose pointer's next_change_at is 2026-12-06T00:10Z (an embargoed item), served
/// by an origin whose clock says `origin_now` and that reads the bucket through a counting
/// proxy; nothing is deployed after that. Sends GET /answers/1/ for `for_` and returns (the
/// requests answered, the pointer reads they caused).
fn pointer_reads_after_the_instant(
    bucket: &str,
    serve: &str,
    origin_now: &str,
    for_: Duration,
) -> (usize, usize) {
    let moto = Moto::start();
    moto.bucket(bucket);
    let proxy = Proxy::start(&moto.endpoint, false);
    let s = site_with_items(3);
    s.item(4, "2026-12-05");
    s.json(&["publish", "--build", "--now", NOW]);
    s.write(
        "fencepost.toml",
        &format!(
            "{}\n[serve]\n{serve}\n",
            std::fs::read_to_string(s.path("fencepost.toml")).unwrap()
        ),
    );
    let target = format!("s3://{bucket}/www");
    s.json_env(
        &["deploy", "--to", &target, "--now", NOW],
        &Moto::env(&moto.endpoint),
    );
    let srv = s.serve_env(
        &["--from", &target, "--now", origin_now],
        &Moto::env(&proxy.endpoint),
    );
    let reads = || {
        gets(&proxy)
            .iter()
            .filter(|p| p.ends_with("/current"))
            .count()
    };
    let before = reads();
    let started = Instant::now();
    let mut n = 0;
    while started.elapsed() < for_ {
        assert_eq!(srv.get("/answers/1/").status, 200);
        n += 1;
    }
    (n, reads() - before)
}

#[test]
fn a_past_next_change_caps_nothing_and_one_request_reads_the_pointer() {
    // The origin's clock is a day past that instant, and nothing was deployed since.
    let (n, pointer_reads) = pointer_reads_after_the_instant(
        "past",
        "pointer_ttl_ms = 1000",
        "2026-12-07T00:00:00Z",
        Duration::from_millis(700),
    );
    assert!(n > 20, "{n} requests");
    assert!(
        pointer_reads <= 2,
        "{pointer_reads} pointer reads for {n} requests within one TTL"
    );
}

#[test]
fn just_past_its_next_change_the_pointer_is_read_every_hot_interval_by_one_request() {
    // A second past that instant: its deploy is due any moment, so the pointer is read every
    // 100 ms (not every second), still by one request at a time.
    let (n, pointer_reads) = pointer_reads_after_the_instant(
        "hot",
        "pointer_ttl_ms = 1000\npointer_hot_ms = 100",
        "2026-12-06T00:10:01Z",
        Duration::from_millis(1000),
    );
    assert!(n > 30, "{n} requests");
    assert!(
        (4..=12).contains(&pointer_reads),
        "{pointer_reads} pointer reads for {n} requests in 1 s at a 100 ms hot interval"
    );
}

#[test]
fn a_hanging_bucket_gives_a_plain_503_within_the_timeout_and_holds_no_one_else() {
    let moto = Moto::start();
    moto.bucket("hang");
    let proxy = Proxy::start(&moto.endpoint, false);
    let s = site_with_items(3);
    s.write(
        "fencepost.toml",
        &format!(
            "{}\n[serve]\nbucket_timeout_ms = 500\npointer_ttl_ms = 100\n",
            std::fs::read_to_string(s.path("fencepost.toml")).unwrap()
        ),
    );
    s.json_env(
        &["deploy", "--to", "s3://hang/www", "--now", NOW],
        &Moto::env(&moto.endpoint),
    );
    let srv = serve_from(&s, "s3://hang/www", &Moto::env(&proxy.endpoint));
    assert_eq!(srv.get("/answers/1/").status, 200);
    // The bucket stops answering (each request hangs for a minute).
    proxy.delay_ms.store(60_000, Ordering::SeqCst);
    // Past the configured 100 ms pointer TTL, so the next requests must ask the bucket.
    std::thread::sleep(Duration::from_millis(150));
    let started = Instant::now();
    let threads: Vec<_> = ["/answers/2/", "/answers/3/", "/robots.txt", "/answers/2/"]
        .into_iter()
        .map(|p| {
            let addr = srv.addr.clone();
            std::thread::spawn(move || (http(&addr, "GET", p, &[]), Instant::now()))
        })
        .collect();
    for t in threads {
        let (r, at) = t.join().unwrap();
        let waited = at - started;
        // The known revision keeps serving while the pointer is re-read; an object the
        // origin does not hold yet is a 503 after the timeout.
        assert!(r.status == 200 || r.status == 503, "{}", r.status);
        assert!(waited < Duration::from_secs(3), "waited {waited:?}");
        if r.status == 503 {
            let body = r.text();
            assert!(
                !body.contains("127.0.0.1") && !body.contains("hang") && !body.contains("timeout"),
                "the public sees the bucket's details: {body}"
            );
            assert_eq!(r.header("cache-control"), Some("no-store"));
        }
    }
}

#[test]
fn large_files_stream_head_reads_no_body_and_a_corrupt_one_is_cut_off() {
    let s = site_with_items(2);
    // A 48 MiB static file: above the in-memory limit, so it streams.
    let big: Vec<u8> = (0..48 * 1024 * 1024u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(s.path("static/big.bin"), &big).unwrap();
    s.json(&["build", "--now", NOW]);
    let bucket = tempfile::tempdir().unwrap();
    let url = format!("file://{}", bucket.path().display());
    s.json(&["deploy", "--to", &url, "--now", NOW]);
    let srv = serve_from(&s, &url, &[]);
    let r = srv.get("/big.bin");
    assert_eq!(r.status, 200);
    assert!(r.body == big, "{} bytes", r.body.len());
    let head = http(&srv.addr, "HEAD", "/big.bin", &[]);
    assert_eq!(head.status, 200);
    assert_eq!(
        head.header("content-length"),
        Some(big.len().to_string().as_str())
    );
    assert!(head.body.is_empty());
    // Six readers at once: the origin holds chunks, not six copies of the file.
    let readers: Vec<_> = (0..6)
        .map(|_| {
            let addr = srv.addr.clone();
            std::thread::spawn(move || http(&addr, "GET", "/big.bin", &[]).body.len())
        })
        .collect();
    for r in readers {
        assert_eq!(r.join().unwrap(), big.len());
    }
    let status = std::fs::read_to_string(format!("/proc/{}/status", srv.child.id())).unwrap();
    let peak_kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    assert!(
        peak_kb < 120 * 1024,
        "the origin peaked at {} MiB serving a 48 MiB file to six readers",
        peak_kb / 1024
    );
    // Corrupt the blob in the bucket: the response is cut off before it is whole.
    let sha = fencepost_core::digest::sha256_hex(&big);
    let mut bad = big.clone();
    bad[40_000_000] ^= 1;
    std::fs::write(bucket.path().join("objects").join(&sha), &bad).unwrap();
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(&srv.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    c.write_all(b"GET /big.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut raw = Vec::new();
    let _ = c.read_to_end(&mut raw);
    let body_start = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    assert!(
        raw.len() - body_start < big.len(),
        "a corrupt large blob was sent whole"
    );
}
