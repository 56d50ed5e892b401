//! The edge Worker (`edge/cloudflare/`) in workerd: racing pipelines read through it, its cache
//! reads the pointer once per TTL, its pure rules, its wrangler example, its timeouts and its
//! memory budget.
use crate::common::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The reader: every item page through the edge, again and again until `stop`. A page may
/// answer 200 only once the newest round begun (`started`, 1-based into `rounds`) could have
/// published it, and never 404 again after. Returns the round each item was first seen in,
/// and how many pages it read.
fn edge_reader(
    addr: String,
    started: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    rounds: Vec<String>,
) -> std::thread::JoinHandle<(BTreeMap<i64, usize>, usize)> {
    std::thread::spawn(move || {
        let mut first_seen: BTreeMap<i64, usize> = BTreeMap::new();
        let mut reads = 0;
        while !stop.load(Ordering::Relaxed) {
            for i in 1..=8 {
                let r = try_http(&addr, "GET", &format!("/answers/{i}/"), &[]).unwrap();
                // The newest round begun when the answer came: nothing it could not have
                // published may be visible.
                let begun = started.load(Ordering::SeqCst);
                reads += 1;
                match r.status {
                    200 => {
                        let now = begun
                            .checked_sub(1)
                            .map(|k| rounds[k].as_str())
                            .unwrap_or("2026-11-01T00:00:00Z");
                        assert!(
                            format!("2026-11-{:02}T00:10:00Z", i + 1).as_str() <= now,
                            "item {i} visible before its instant (latest round: {now})"
                        );
                        first_seen.entry(i).or_insert(begun);
                    }
                    404 => assert!(
                        !first_seen.contains_key(&i),
                        "item {i} went back after it was live"
                    ),
                    other => panic!("item {i}: {other} through the edge"),
                }
            }
        }
        (first_seen, reads)
    })
}

/// One pipeline, `publish --build && deploy --to url` at `now`, on a thread; its publish JSON.
fn pipeline(root: std::path::PathBuf, now: String, url: String) -> std::thread::JoinHandle<Value> {
    std::thread::spawn(move || {
        let run = |args: &[&str]| {
            let out = fencepost()
                .arg("--site")
                .arg(&root)
                .args(args)
                .args(["--json", "--now", &now])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            serde_json::from_slice::<Value>(&out.stdout).unwrap()
        };
        let p = run(&["publish", "--build"]);
        run(&["deploy", "--to", &url]);
        p
    })
}

/// The seeds' integration scenario, read through the edge: two `publish --build && deploy`
/// pipelines at once, over several rounds of a clock that moves forward, one site and one
/// bucket. A reader fetching every item page through the Worker all along sees each page
/// appear once, never before its instant (the latest round's `--now`), and never go back.
#[test]
fn two_racing_pipelines_read_through_the_edge_each_page_once_at_its_instant_never_back() {
    let s = TestSite::new();
    // Item i is played on 2026-11-0i and due at 00:10 the next day.
    for i in 1..=8 {
        s.item(i, &format!("2026-11-{i:02}"));
    }
    let bucket = s.path("bucket");
    let url = format!("file://{}", bucket.display());
    // Round r runs at 2026-11-(2r)T00:20Z: items 1..=2r-1 are due by then; item 8 never is.
    let rounds: Vec<String> = (1..=4)
        .map(|r| format!("2026-11-{:02}T00:20:00Z", 2 * r))
        .collect();
    let due_by = |now: &str| -> BTreeSet<i64> {
        (1..=8)
            .filter(|i| format!("2026-11-{:02}T00:10:00Z", i + 1).as_str() <= now)
            .collect()
    };
    // Round 0: the bucket starts with a revision of nothing due.
    s.json(&["publish", "--build", "--now", "2026-11-01T00:00:00Z"]);
    s.json(&["deploy", "--to", &url, "--now", "2026-11-01T00:00:00Z"]);
    let edge = Edge::start(&bucket, "", &["--pointer-ttl-ms", "0"]);
    let started = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let reader = edge_reader(
        edge.addr.clone(),
        started.clone(),
        stop.clone(),
        rounds.clone(),
    );
    let mut published = Vec::new();
    for (k, now) in rounds.iter().enumerate() {
        started.store(k + 1, Ordering::SeqCst);
        let pipelines: Vec<_> = (0..2)
            .map(|_| pipeline(s.root().to_path_buf(), now.clone(), url.clone()))
            .collect();
        for p in pipelines {
            published.extend(ids(&p.join().unwrap(), "published"));
        }
        // Once the round is done and its pointer in R2, the edge shows exactly what is due.
        edge.wait_pointer(&bucket);
        let visible: BTreeSet<i64> = (1..=8)
            .filter(|i| edge.get(&format!("/answers/{i}/")).status == 200)
            .collect();
        assert_eq!(visible, due_by(now), "after round {}", k + 1);
    }
    stop.store(true, Ordering::Relaxed);
    let (first_seen, reads) = reader.join().expect("the reader saw every rule hold");
    // Each item published once, by one pipeline of one round.
    published.sort();
    assert_eq!(published, (1..=7).collect::<Vec<_>>());
    assert_eq!(
        first_seen.keys().copied().collect::<Vec<_>>(),
        (1..=7).collect::<Vec<_>>()
    );
    assert!(reads > 50, "the reader read {reads} pages");
}

/// With a warm cache the Worker reads nothing from R2 but the pointer, at most once per
/// POINTER_TTL_MS in its isolate.
#[test]
fn with_a_warm_cache_the_edge_reads_only_the_pointer_once_per_ttl() {
    let s = TestSite::new();
    for i in 1..=30 {
        s.item(i, &format!("2026-11-{i:02}"));
    }
    s.json(&["publish", "--build", "--now", NOW]);
    let bucket = s.path("bucket");
    s.json(&[
        "deploy",
        "--to",
        &format!("file://{}", bucket.display()),
        "--now",
        NOW,
    ]);
    let edge = Edge::start(&bucket, "", &["--pointer-ttl-ms", "200", "--stats"]);
    let targets: Vec<String> = std::iter::once("/".to_string())
        .chain((1..=30).map(|i| format!("/answers/{i}/")))
        .chain(["/atom.xml".to_string(), "/no/such/".to_string()])
        .collect();
    for t in &targets {
        edge.get(t);
    }
    let before = edge.stats();
    let started = Instant::now();
    for n in 0..1000 {
        let r = edge.get(&targets[n % targets.len()]);
        assert!(r.status == 200 || r.status == 404);
    }
    let ms = started.elapsed().as_millis() as u64;
    let after = edge.stats();
    let delta =
        |k: &str| after["reads"][k].as_u64().unwrap() - before["reads"][k].as_u64().unwrap();
    assert_eq!(delta("root"), 0, "{after}");
    assert_eq!(delta("shard"), 0, "{after}");
    assert_eq!(delta("blob"), 0, "{after}");
    let pointer = delta("pointer");
    assert!(
        pointer <= ms / 200 + 1,
        "{pointer} pointer reads in {ms} ms at a 200 ms TTL"
    );
    assert!(
        pointer >= 1,
        "a second of requests and the pointer never re-read ({ms} ms)"
    );
}

/// The Worker's pure rules (the pointer TTL, request paths, a preview's token and links),
/// table-tested in node with the same tables and vectors as their Rust twins.
#[test]
fn the_workers_pure_rules_pass_their_tables() {
    let out = std::process::Command::new("node")
        .arg("--test")
        .arg(edge_dir().join("worker.test.mjs"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run node (scripts/test installs it): {e}"));
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("# pass 4"));
}

/// The example `wrangler.toml` names what the Worker reads: its module, the R2 binding `SITE`,
/// and the vars `PREFIX` and `POINTER_TTL_MS`.
#[test]
fn the_wrangler_example_binds_what_the_worker_reads() {
    let text = std::fs::read_to_string(edge_dir().join("wrangler.toml")).unwrap();
    let w: toml::Value = toml::from_str(&text).unwrap();
    let main = w["main"].as_str().unwrap();
    assert!(edge_dir().join(main).exists(), "main = {main}");
    assert_eq!(w["r2_buckets"][0]["binding"].as_str(), Some("SITE"));
    let worker = std::fs::read_to_string(edge_dir().join(main)).unwrap();
    for var in ["PREFIX", "POINTER_TTL_MS"] {
        assert!(w["vars"].get(var).is_some(), "{var} missing from [vars]");
        assert!(
            worker.contains(&format!("env.{var}")),
            "the Worker does not read {var}"
        );
    }
    assert!(worker.contains("env.SITE.get("));
    // The ledger proxy's own section: its module, the D1 binding `DB`, its vars.
    let proxy = &w["env"]["ledger-proxy"];
    let main = proxy["main"].as_str().unwrap();
    let code = std::fs::read_to_string(edge_dir().join(main)).unwrap();
    assert_eq!(proxy["d1_databases"][0]["binding"].as_str(), Some("DB"));
    assert!(code.contains("env.DB.batch("));
    for var in ["MAX_REQUEST_BYTES"] {
        assert!(proxy["vars"].get(var).is_some(), "{var} missing");
        assert!(
            code.contains(&format!("env.{var}")),
            "the proxy does not read {var}"
        );
    }
    assert!(code.contains("env.LEDGER_TOKEN"));
    assert!(
        proxy.get("r2_buckets").is_none(),
        "the proxy reads no bucket"
    );
}

/// A site with one public page, deployed to a folder bucket: (the site, the bucket).
fn one_page_in_a_folder_bucket() -> (TestSite, tempfile::TempDir) {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.json(&["publish", "--build", "--now", NOW]);
    let bucket = tempfile::tempdir().unwrap();
    let url = format!("file://{}", bucket.path().display());
    s.json(&["deploy", "--to", &url, "--now", NOW]);
    (s, bucket)
}

/// Issue 35.8: the Worker keeps `serve --from`'s bounds. Every R2 call is raced against
/// BUCKET_TIMEOUT_MS: a bucket that does not answer is a 503 after that long, not a request
/// that hangs for as long as the bucket does (a bucket that answers in time serves as ever).
#[test]
fn the_worker_answers_503_when_the_bucket_is_too_slow() {
    let (_s, bucket) = one_page_in_a_folder_bucket();
    let slow = Edge::start(
        bucket.path(),
        "",
        &[
            "--bucket-delay-ms",
            "4000",
            "--bucket-timeout-ms",
            "500",
            "--pointer-ttl-ms",
            "0",
        ],
    );
    let started = Instant::now();
    let r = http(&slow.addr, "GET", "/answers/1/", &[]);
    assert_eq!(r.status, 503, "{}", r.text());
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "answered after {:?}",
        started.elapsed()
    );
    drop(slow);
    let in_time = Edge::start(
        bucket.path(),
        "",
        &[
            "--bucket-delay-ms",
            "50",
            "--bucket-timeout-ms",
            "2000",
            "--pointer-ttl-ms",
            "0",
        ],
    );
    assert_eq!(http(&in_time.addr, "GET", "/answers/1/", &[]).status, 200);
}

/// Issue 35.8: the Worker's memory of paths has a byte budget, not only a count: a flood of
/// long made-up paths stays within 4 MiB (6,000 paths of 16 KB used to take 307 MiB).
#[test]
fn the_workers_memory_of_paths_has_a_byte_budget() {
    let (_s, bucket) = one_page_in_a_folder_bucket();
    let edge = Edge::start(bucket.path(), "", &["--stats"]);
    let long = "x".repeat(8 * 1024);
    for i in 0..800 {
        let r = http(&edge.addr, "GET", &format!("/{i}-{long}"), &[]);
        assert_eq!(r.status, 404);
    }
    let stats: Value =
        serde_json::from_str(&http(&edge.addr, "GET", "/__fencepost/edge-stats", &[]).text())
            .unwrap();
    let bytes = stats["shard_index_bytes"].as_u64().unwrap();
    assert!(bytes <= 4 << 20, "{stats}");
    assert!(
        stats["shard_index_paths"].as_u64().unwrap() < 800,
        "the budget stopped it: {stats}"
    );
}

/// Issue 46.9: the Worker never serves a ledger's prefix. A `PREFIX` that holds a ledger's
/// log (a misconfigured Worker, a ledger deployed beside the site) answers 503 to everything,
/// as `serve --from` refuses to start on one.
#[test]
fn the_worker_answers_503_over_a_prefix_that_holds_a_ledger() {
    let (_s, bucket) = one_page_in_a_folder_bucket();
    let edge = Edge::start(bucket.path(), "", &[]);
    assert_eq!(edge.get("/answers/1/").status, 200);
    drop(edge);
    std::fs::create_dir_all(bucket.path().join("log")).unwrap();
    std::fs::write(
        bucket.path().join("log/00000000000000000001"),
        b"SQLite format 3\0",
    )
    .unwrap();
    let edge = Edge::start(bucket.path(), "", &[]);
    let r = edge.get("/answers/1/");
    assert_eq!(r.status, 503, "{}", r.text());
    assert_eq!(edge.get("/").status, 503);
}

/// Issue 47.6: the Worker's parsed shards are bounded in bytes (SHARD_MEMORY_BYTES), as its
/// blobs and path memory are: a count let a large site's shards outgrow the isolate. With a
/// budget of a few shards, every page of a 28-item site still answers 200, and what the isolate
/// keeps stays within the budget.
#[test]
fn the_workers_shard_memory_has_a_byte_budget() {
    let s = TestSite::new();
    for i in 1..=28 {
        s.item(i, &format!("2026-11-{:02}", i));
    }
    s.json(&["publish", "--build", "--now", NOW]);
    let bucket = tempfile::tempdir().unwrap();
    let url = format!("file://{}", bucket.path().display());
    s.json(&["deploy", "--to", &url, "--now", NOW]);
    let budget = 8000u64;
    let edge = Edge::start(
        bucket.path(),
        "",
        &["--stats", "--shard-memory-bytes", &budget.to_string()],
    );
    for round in 0..2 {
        for i in 1..=28 {
            let r = edge.get(&format!("/answers/{i}/"));
            assert_eq!(r.status, 200, "round {round}, item {i}");
            assert!(r.text().contains(&format!("Item {i}")));
        }
    }
    let stats = edge.stats();
    let (bytes, kept) = (
        stats["shard_bytes"].as_u64().unwrap(),
        stats["shards"].as_u64().unwrap(),
    );
    assert!(bytes <= budget, "{stats}");
    assert!(kept >= 1 && kept < 28, "the budget evicted: {stats}");
}
