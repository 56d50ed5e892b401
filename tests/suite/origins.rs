//! One origin contract, one conformance suite (issue 23): the same table of HTTP cases against
//! every origin fencepost has — `serve` over `public/current`, `serve --from file://`,
//! `serve --from s3://` (moto on 127.0.0.1) and the edge Worker in workerd (miniflare, over
//! an R2 bucket copied from the folder) — all serving the same deployed revision. Every case
//! must give the same status, body bytes, `ETag`, `Cache-Control`, `Content-Type` (and the
//! other headers the contract names) on all four. Then what matters to caches: a pointer move
//! between two requests, conditional requests across it, a tampered blob, an unreadable
//! pointer; load while the pointer moves; the seeds' two racing pipelines read through the
//! edge; and the edge's R2 reads with a warm cache.
mod edge;
mod faults;
mod load;
mod previews;

use crate::common::*;
use fencepost_bucket::layout;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// `static/manifest.json` of the features site: a web app's manifest.
const WEB_MANIFEST: &str =
    "{\"name\": \"Features\", \"start_url\": \"/\", \"display\": \"standalone\"}\n";

/// Before `posts/secret`'s instant.
const BEFORE: &str = "2026-12-01T00:00:00Z";

/// `posts/secret` is due.
const LAUNCH: &str = "2026-12-02T09:00:00Z";

/// Headers every origin must answer alike (absent on one means absent on all).
const SAME_HEADERS: &[&str] = &[
    "etag",
    "cache-control",
    "content-type",
    "x-revision",
    "location",
    "allow",
    "retry-after",
    "x-content-type-options",
    "content-security-policy",
    "x-robots-tag",
];

/// One request of the table and the status every origin must answer it with.
struct Case {
    method: &'static str,
    target: String,
    headers: Vec<(&'static str, String)>,
    status: u16,
}

fn case(method: &'static str, target: &str, status: u16) -> Case {
    Case {
        method,
        target: target.to_string(),
        headers: Vec::new(),
        status,
    }
}

fn with(mut c: Case, name: &'static str, value: &str) -> Case {
    c.headers.push((name, value.to_string()));
    c
}

/// An origin under test: its name and address (and what keeps it running).
struct Origin {
    name: &'static str,
    addr: String,
    _keep: Box<dyn std::any::Any>,
}

/// The features site, published and built, an advisory withdrawn (a 410 notice), an SVG and
/// a file larger than the origins read whole (streamed), deployed to a folder and to S3, and
/// the four origins over it. Pointers are read on every request (TTL 0), so "the next
/// request" means the next one.
struct Four {
    site: TestSite,
    bucket: PathBuf,
    moto: Moto,
    origins: Vec<Origin>,
}

fn s3_env(moto: &Moto) -> Vec<(String, String)> {
    Moto::env(&moto.endpoint)
}

fn deploy_both(s: &TestSite, bucket: &Path, moto: &Moto, now: &str) {
    let folder = format!("file://{}", bucket.display());
    s.json(&["deploy", "--to", &folder, "--now", now]);
    s.json_env(
        &["deploy", "--to", "s3://site/www", "--now", now],
        &s3_env(moto),
    );
}

/// The features site with a transparency log, an SVG, a large file, aliases and a withdrawn
/// advisory, published and built.
fn features_site() -> TestSite {
    let s = fixture("features");
    let toml = std::fs::read_to_string(s.path("fencepost.toml"))
        .unwrap()
        .replacen(
            "taxonomies = [\"tags\"]\n",
            "taxonomies = [\"tags\"]\ncommit_before_reveal = true\n",
            1,
        );
    // The site keeps a transparency log: its files are cases of the table like any other.
    s.write(
        "fencepost.toml",
        &format!("{toml}\n[serve]\npointer_ttl_ms = 0\n\n[transparency]\nlog = true\nskey_file = \".tlog-skey\"\n"),
    );
    let keys = fencepost_tlog::note::generate("example.org/features").unwrap();
    s.write(".tlog-skey", &keys.skey);
    s.write(".tlog-vkey", &keys.vkey);
    s.write(
        "static/logo.svg",
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"4\" height=\"4\"><rect width=\"4\" height=\"4\"/></svg>\n",
    );
    // 5 MiB of varied bytes: above the 4 MiB every bucket origin reads whole.
    let big: Vec<u8> = (0..5 * 1024 * 1024u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    std::fs::write(s.path("static/big.bin"), &big).unwrap();
    // A web app's manifest, as documentation themes ship: a file of the site like any other
    // (the revision's own manifest is in its `.fencepost/`, which no origin serves).
    s.write("static/manifest.json", WEB_MANIFEST);
    // Old URLs: each answered 301 to its item; the embargoed item's is nowhere yet.
    for (post, aliases) in [
        ("hello", "[\"/old/hello/\", \"/2019/hello.html\"]"),
        ("secret", "[\"/old/secret/\"]"),
    ] {
        let file = format!("content/posts/{post}.md");
        let text = std::fs::read_to_string(s.path(&file)).unwrap();
        s.write(
            &file,
            &text.replacen("+++\n", &format!("+++\naliases = {aliases}\n"), 1),
        );
    }
    s.publish(BEFORE);
    let adv = std::fs::read_to_string(s.path("content/advisories/adv-2.md")).unwrap();
    s.write(
        "content/advisories/adv-2.md",
        &adv.replacen(
            "severity = \"low\"",
            "severity = \"low\"\nwithdrawn = true",
            1,
        ),
    );
    s.json(&["publish", "--build", "--now", BEFORE]);
    s
}

fn four() -> Four {
    let s = features_site();
    let moto = Moto::start();
    moto.bucket("site");
    let bucket = s.path("bucket");
    deploy_both(&s, &bucket, &moto, BEFORE);
    let folder_url = format!("file://{}", bucket.display());
    let local = s.serve(&[]);
    let folder = s.serve(&["--from", &folder_url]);
    let s3 = s.serve_env(&["--from", "s3://site/www"], &s3_env(&moto));
    // The edge reads its objects under a prefix, as a bucket shared with other things would.
    let edge = Edge::start(&bucket, "www", &["--pointer-ttl-ms", "0"]);
    let origins = vec![
        Origin {
            name: "serve",
            addr: local.addr.clone(),
            _keep: Box::new(local),
        },
        Origin {
            name: "serve --from file://",
            addr: folder.addr.clone(),
            _keep: Box::new(folder),
        },
        Origin {
            name: "serve --from s3://",
            addr: s3.addr.clone(),
            _keep: Box::new(s3),
        },
        Origin {
            name: "edge Worker (miniflare)",
            addr: edge.addr.clone(),
            _keep: Box::new(edge),
        },
    ];
    Four {
        site: s,
        bucket,
        moto,
        origins,
    }
}

impl Four {
    fn edge(&self) -> &Edge {
        self.origins[3]._keep.downcast_ref::<Edge>().unwrap()
    }

    /// The live revision's manifest entry for `path`.
    fn entry(&self, path: &str) -> Value {
        let m: Value = serde_json::from_slice(
            &std::fs::read(self.site.current_dir().join(".fencepost/manifest.json")).unwrap(),
        )
        .unwrap();
        m["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == path)
            .unwrap_or_else(|| panic!("{path} is not in the live revision"))
            .clone()
    }

    fn etag(&self, path: &str) -> String {
        format!("\"{}\"", self.entry(path)["sha256"].as_str().unwrap())
    }

    /// Runs every case on `origins` (indexes into the four): each answers with the case's
    /// status, and all alike.
    fn check(&self, cases: &[Case], origins: &[usize]) {
        for c in cases {
            let headers: Vec<(&str, &str)> =
                c.headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let answers: Vec<(&str, HttpResponse)> = origins
                .iter()
                .map(|&i| {
                    let o = &self.origins[i];
                    let r = try_http(&o.addr, c.method, &c.target, &headers)
                        .unwrap_or_else(|e| panic!("{} {} on {}: {e}", c.method, c.target, o.name));
                    (o.name, r)
                })
                .collect();
            let what = format!("{} {} {:?}", c.method, c.target, c.headers);
            for (name, r) in &answers {
                assert_eq!(r.status, c.status, "{what} on {name}: {}", r.text());
            }
            let (first, base) = &answers[0];
            for (name, r) in &answers[1..] {
                assert!(
                    r.body == base.body,
                    "{what}: {name} answered other bytes than {first} ({} vs {} bytes)",
                    r.body.len(),
                    base.body.len()
                );
                for h in SAME_HEADERS {
                    assert_eq!(
                        r.header(h),
                        base.header(h),
                        "{what}: {h} differs between {name} and {first}"
                    );
                }
                if c.status != 304 {
                    assert_eq!(
                        r.header("content-length"),
                        base.header("content-length"),
                        "{what}: content-length differs between {name} and {first}"
                    );
                }
            }
        }
    }
}

const ALL: &[usize] = &[0, 1, 2, 3];

const BUCKETS: &[usize] = &[1, 2, 3];

/// The table: what every origin answers for the same revision.
fn table(f: &Four) -> Vec<Case> {
    let immutable = f.site.current_dir().join(".fencepost/manifest.json");
    let m: Value = serde_json::from_slice(&std::fs::read(immutable).unwrap()).unwrap();
    let hashed = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["cache"] == "immutable")
        .expect("a fingerprinted static file")["path"]
        .as_str()
        .unwrap()
        .to_string();
    let log_file = |prefix: &str| {
        let found = m["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["path"].as_str().unwrap().starts_with(prefix));
        format!("/{}", found.expect(prefix)["path"].as_str().unwrap())
    };
    let tile = log_file(".well-known/fencepost/log/tile/0/");
    let bundle = log_file(".well-known/fencepost/log/tile/entries/");
    let mut cases = vec![
        // The transparency log: tiles immutable, the checkpoint revalidated, item JSON from
        // its reveal on (and nothing of an embargoed item).
        case("GET", "/.well-known/fencepost/log/checkpoint", 200),
        case("HEAD", "/.well-known/fencepost/log/checkpoint", 200),
        case("GET", &tile, 200),
        case("GET", &bundle, 200),
        case("GET", "/.well-known/fencepost/items/posts/hello.json", 200),
        case("GET", "/.well-known/fencepost/items/posts/secret.json", 404),
        case("GET", "/", 200),
        case("HEAD", "/", 200),
        case("GET", "/posts/hello/", 200),
        case("GET", "/posts/hello/index.html", 200),
        case("GET", "/posts/hello/?utm_source=feed", 200),
        case("GET", "/posts/hel%6co/", 200),
        case("GET", "/posts/hello", 301),
        case("HEAD", "/posts/hello", 301),
        case("GET", "/tags/", 200),
        case("GET", "/atom.xml", 200),
        case("GET", "/rss.xml", 200),
        case("GET", "/sitemap.xml", 200),
        case("GET", &format!("/{hashed}"), 200),
        case("GET", "/style.css", 200),
        case("GET", "/logo.svg", 200),
        case("GET", "/big.bin", 200),
        case("GET", "/manifest.json", 200),
        case("HEAD", "/manifest.json", 200),
        case("GET", "/.fencepost/manifest.json", 404),
        case("GET", "/.fencepost/manifest.idx", 404),
        case("GET", "/.fencepost/", 404),
        case("HEAD", "/big.bin", 200),
        case("GET", "/old/hello/", 301),
        case("HEAD", "/old/hello/", 301),
        case("GET", "/old/hello/index.html", 301),
        case("GET", "/2019/hello.html", 301),
        case("GET", "/old/hello", 301),
        case("GET", "/old/secret/", 404),
        case("GET", "/advisories/adv-2/", 410),
        case("HEAD", "/advisories/adv-2/", 410),
        case("GET", "/advisories/adv-1/", 200),
        case("GET", "/no/such/page/", 404),
        case("GET", "/posts/secret/", 404),
        case("HEAD", "/no/such/page/", 404),
    ];
    cases.extend(conditional_cases(f));
    cases.extend(refused_cases());
    cases
}

/// Conditional requests, against the home page's and the 404 page's tags.
fn conditional_cases(f: &Four) -> Vec<Case> {
    let home = f.etag("index.html");
    let not_found = f.etag("404.html");
    vec![
        with(case("GET", "/", 304), "If-None-Match", &home),
        with(case("HEAD", "/", 304), "If-None-Match", &home),
        with(case("GET", "/", 304), "If-None-Match", &format!("W/{home}")),
        with(
            case("GET", "/", 304),
            "If-None-Match",
            &format!("\"x\", {home}"),
        ),
        with(case("GET", "/", 304), "If-None-Match", "*"),
        with(case("GET", "/", 200), "If-None-Match", "\"0000\""),
        with(case("GET", "/no/such/", 404), "If-None-Match", &not_found),
        with(
            case("GET", "/manifest.json", 304),
            "If-None-Match",
            &f.etag("manifest.json"),
        ),
    ]
}

/// Only GET and HEAD; traversal and encodings: dot segments resolve as the URL standard says
/// (never above the root); what could mean something else once decoded is refused.
fn refused_cases() -> Vec<Case> {
    vec![
        // Only GET and HEAD.
        case("POST", "/", 405),
        case("PUT", "/posts/hello/", 405),
        case("DELETE", "/", 405),
        case("OPTIONS", "/", 405),
        // Traversal and encodings: dot segments resolve as the URL standard says (never above
        // the root); what could mean something else once decoded is refused.
        case("GET", "/../secret.txt", 404),
        case("GET", "/../../../../etc/passwd", 404),
        case("GET", "/%2e%2e/%2E%2E/etc/passwd", 404),
        case("GET", "/posts/../posts/hello/", 200),
        case("GET", "/posts/%2e%2e/posts/hello/", 200),
        case("GET", "/./index.html", 200),
        case("GET", "/posts/hello/..", 200),
        case("GET", "/answers/..%2f..%2fsecret.txt", 400),
        case("GET", "/..%5csecret.txt", 400),
        case("GET", "/index.html%00.css", 400),
        case("GET", "//etc/passwd", 400),
        case("GET", "/%ff", 400),
        case("GET", "/caf%C3%A9/", 404),
    ]
}

#[test]
fn the_same_table_of_http_cases_on_every_origin_and_what_caches_need_across_a_move() {
    let f = four();
    f.check(&table(&f), ALL);
    a_sites_own_manifest_is_served_as_written(&f);
    every_origin_serves_the_one_log(&f);
    an_alias_names_its_item(&f);
    let after = a_move_is_seen_by_the_next_request(&f);
    faults::a_missing_shard_is_a_503_never_a_404(&f, &after);
    faults::a_tampered_blob_is_never_served(&f);
    faults::an_unreadable_or_missing_pointer_is_a_503(&f);
}

/// The site's `static/manifest.json` is what every origin answers at `/manifest.json`, with
/// its own ETag: the revision's bookkeeping never overwrites it (it once did, on disk).
fn a_sites_own_manifest_is_served_as_written(f: &Four) {
    let sha = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(WEB_MANIFEST));
    assert_eq!(f.etag("manifest.json"), format!("\"{sha}\""));
    for o in &f.origins {
        let r = http(&o.addr, "GET", "/manifest.json", &[]);
        assert_eq!(r.text(), WEB_MANIFEST, "{}", o.name);
        assert_eq!(
            r.header("etag"),
            Some(format!("\"{sha}\"").as_str()),
            "{}",
            o.name
        );
    }
    assert_eq!(f.site.current_file("manifest.json"), WEB_MANIFEST);
}

/// The log every origin serves is the one log: `tlog verify` holds on each, with the same
/// checkpoint; its tiles may be cached for good, its checkpoint never without asking.
fn every_origin_serves_the_one_log(f: &Four) {
    let vkey = std::fs::read_to_string(f.site.path(".tlog-vkey")).unwrap();
    let mut checkpoints = BTreeSet::new();
    for o in &f.origins {
        let url = format!("http://{}/", o.addr);
        let v = f.site.json(&["tlog", "verify", &url, "--vkey", &vkey]);
        assert!(
            v["entries"]["reveal"].as_u64().unwrap() >= 2,
            "{}: {v}",
            o.name
        );
        checkpoints.insert(v["checkpoint"].to_string());
    }
    assert_eq!(checkpoints.len(), 1);
    let o = &f.origins[0].addr;
    let cases = table(f);
    let tile = &cases
        .iter()
        .find(|c| c.target.contains("/log/tile/0/"))
        .unwrap()
        .target;
    let r = try_http(o, "GET", tile, &[]).unwrap();
    assert_eq!(
        r.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    let r = try_http(o, "GET", "/.well-known/fencepost/log/checkpoint", &[]).unwrap();
    assert_eq!(
        r.header("cache-control"),
        Some("public, max-age=0, must-revalidate")
    );
}

/// An alias's 301 names its item (every origin alike, by the table's `location` check), and a
/// static host gets a page that sends a browser there.
fn an_alias_names_its_item(f: &Four) {
    let r = try_http(&f.origins[0].addr, "GET", "/old/hello/", &[]).unwrap();
    assert_eq!(r.header("location"), Some("/posts/hello/"));
    let page = f.site.current_file("old/hello/index.html");
    assert!(
        page.contains("http-equiv=\"refresh\"") && page.contains("rel=\"canonical\""),
        "{page}"
    );
}

/// The revision every origin names in `x-revision`.
fn all_name(f: &Four, name: &str) {
    for o in &f.origins {
        let r = try_http(&o.addr, "GET", "/", &[]).unwrap();
        assert_eq!(r.header("x-revision"), Some(name), "{}", o.name);
    }
}

/// A pointer move between two requests: the next request sees the new revision. Returns the
/// table after the move.
fn a_move_is_seen_by_the_next_request(f: &Four) -> Vec<Case> {
    let first = f.site.current_dir();
    let first_name = first.file_name().unwrap().to_string_lossy().to_string();
    let old_home = f.etag("index.html");
    let old_about = f.etag("about/index.html");
    all_name(f, &first_name);
    f.site.json(&["publish", "--build", "--now", LAUNCH]);
    deploy_both(&f.site, &f.bucket, &f.moto, LAUNCH);
    f.edge().wait_pointer(&f.bucket);
    let second = f.site.current_dir();
    assert_ne!(first, second);
    let second_name = second.file_name().unwrap().to_string_lossy().to_string();
    let mut after = table(f);
    for c in after.iter_mut() {
        if c.target == "/posts/secret/" || c.target.ends_with("/items/posts/secret.json") {
            c.status = 200;
        }
        if c.target == "/old/secret/" {
            c.status = 301;
        }
    }
    after.extend([
        case("GET", "/tags/zeppelin/", 200),
        // Conditional requests across the move: the home page changed, so the old tag gets the
        // new page; a page that did not change is still a 304.
        with(case("GET", "/", 200), "If-None-Match", &old_home),
        with(case("GET", "/about/", 304), "If-None-Match", &old_about),
    ]);
    f.check(&after, ALL);
    all_name(f, &second_name);
    for o in &f.origins {
        let r = try_http(&o.addr, "GET", "/", &[]).unwrap();
        assert_ne!(r.header("etag"), Some(old_home.as_str()));
    }
    after
}

fn s3_store(moto: &Moto) -> object_store::aws::AmazonS3 {
    moto.store("site")
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// Deletes `key` from the moto bucket `site`.
fn s3_delete(moto: &Moto, key: &str) {
    use object_store::ObjectStoreExt;
    block_on(s3_store(moto).delete(&object_store::path::Path::from(key))).unwrap();
}

/// Writes `key` in the moto bucket `site` (someone with write access to the bucket).
fn s3_put(moto: &Moto, key: &str, bytes: Vec<u8>) {
    use object_store::ObjectStoreExt;
    block_on(s3_store(moto).put(&object_store::path::Path::from(key), bytes.into())).unwrap();
}

/// The file a request target of the load test maps to.
fn file_of(target: &str) -> String {
    format!("{}index.html", target.trim_start_matches('/'))
}

/// What a load-test client saw: origin, target, status, `X-Revision`, sha256 of the body.
type Seen = (&'static str, String, u16, Option<String>, String);

/// Every file's sha256 in the revision folder `dir`, by path.
fn manifest_shas(dir: &Path) -> BTreeMap<String, String> {
    let m: Value =
        serde_json::from_slice(&std::fs::read(dir.join(".fencepost/manifest.json")).unwrap())
            .unwrap();
    m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["sha256"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}
