//! The local origin (`fencepost serve`, `crates/fencepost-serve/src/`): headers, conditional requests, caching
//! rules, pointer swaps mid-download, nothing outside the revision, slow clients.
mod from_bucket;
mod hardening;
mod slow;

use crate::common::*;
use std::time::{Duration, Instant};

// 5. A revision that disappears under the running origin: 503, never cached bytes or a 404.

#[test]
fn a_revision_deleted_under_the_running_origin_is_a_503() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.json(&["publish", "--build", "--now", NOW]);
    let srv = s.serve(&[]);
    assert_eq!(srv.get("/").status, 200); // now kept in memory
    assert_eq!(srv.get("/answers/1/").status, 200);
    let dir = s.current_dir();
    std::fs::remove_dir_all(&dir).unwrap();
    for path in ["/", "/answers/1/", "/no/such/"] {
        let r = srv.get(path);
        assert_eq!(r.status, 503, "{path}");
        assert_eq!(r.header("cache-control"), Some("no-store"));
        // The public is told nothing of the server's folders (issue 19).
        let body = r.text();
        assert!(
            !body.contains('/') && !body.contains("revision"),
            "{path}: {body}"
        );
    }
    // Moved away and another folder put in its place: the new one is read, not the cache.
    let again = s.build(&[]);
    assert_eq!(again["already_built"], false);
    assert_eq!(srv.get("/answers/1/").status, 200);
}

fn manifest_entry(s: &TestSite, path: &str) -> serde_json::Value {
    let m: serde_json::Value = serde_json::from_slice(
        &std::fs::read(s.current_dir().join(".fencepost/manifest.json")).unwrap(),
    )
    .unwrap();
    m["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
        .unwrap()
        .clone()
}

#[test]
fn origin_headers_conditional_requests_head_and_404() {
    let s = built_site();
    let srv = s.serve(&[]);
    let dir = s
        .current_dir()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let r = srv.get("/answers/1/");
    assert_eq!(r.status, 200);
    let entry = manifest_entry(&s, "answers/1/index.html");
    let etag = format!("\"{}\"", entry["sha256"].as_str().unwrap());
    assert_eq!(r.header("etag"), Some(etag.as_str()));
    assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
    assert_eq!(
        r.header("cache-control"),
        Some("public, max-age=0, must-revalidate")
    );
    assert_eq!(r.header("x-revision"), Some(dir.as_str()));
    // Every cache revalidates a URL-keyed response; nothing gives a CDN a longer lifetime.
    assert_eq!(r.header("cdn-cache-control"), None);
    assert!(r.text().contains("<h1>Item 1</h1>"));
    assert_eq!(r.body.len(), entry["bytes"].as_u64().unwrap() as usize);

    let not_modified = http(&srv.addr, "GET", "/answers/1/", &[("If-None-Match", &etag)]);
    assert_eq!(not_modified.status, 304);
    assert!(not_modified.body.is_empty());
    assert_eq!(not_modified.header("etag"), Some(etag.as_str()));
    assert_eq!(
        http(
            &srv.addr,
            "GET",
            "/answers/1/",
            &[("If-None-Match", "\"other\"")]
        )
        .status,
        200
    );
    assert_eq!(
        http(
            &srv.addr,
            "GET",
            "/answers/1/",
            &[("If-None-Match", "\"a\", *")]
        )
        .status,
        304
    );

    let head = http(&srv.addr, "HEAD", "/answers/1/index.html", &[]);
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    assert_eq!(
        head.header("content-length"),
        Some(entry["bytes"].to_string().as_str())
    );

    assert_eq!(srv.get("/").status, 200);
    assert_eq!(
        srv.get("/style.css").header("content-type"),
        Some("text/css; charset=utf-8")
    );
    let missing = srv.get("/no/such/page/");
    assert_eq!(missing.status, 404);
    assert!(
        missing.text().contains("Not found"),
        "the revision's own 404 page"
    );
    let slash = srv.get("/answers/2");
    assert_eq!(
        (slash.status, slash.header("location")),
        (301, Some("/answers/2/"))
    );
    assert_eq!(http(&srv.addr, "POST", "/", &[]).status, 405);
    assert_eq!(srv.stop().code(), Some(0), "graceful shutdown on SIGTERM");
}

/// Once published, no edge may serve the old version: every URL-keyed response (pages, the
/// home page, lists, feed, sitemaps, static files under their own names, 404s, 304s and
/// redirects) says `max-age=0, must-revalidate` to every cache; only URLs that name their
/// bytes (image blobs, hashed static files) may be kept for a year.
#[test]
fn only_urls_that_name_their_bytes_are_cached_long() {
    let s = TestSite::new();
    std::fs::create_dir_all(s.path("content/images")).unwrap();
    std::fs::write(s.path("content/images/a.png"), b"\x89PNG\r\n\x1a\nimage").unwrap();
    s.item_with(1, "2026-11-01", "image = \"images/a.png\"\n", "one");
    s.item(2, "2026-11-30"); // embargoed until 2026-12-01T00:10Z
    s.json(&["publish", "--build", "--now", NOW]);
    let srv = s.serve(&[]);
    let revalidate = Some("public, max-age=0, must-revalidate");
    let page = srv.get("/answers/1/");
    for (what, r) in [
        ("page", &page),
        ("home", &srv.get("/")),
        ("list", &srv.get("/answers/")),
        ("feed", &srv.get("/atom.xml")),
        ("sitemap", &srv.get("/sitemap.xml")),
        ("static under its own name", &srv.get("/style.css")),
        ("404", &srv.get("/no/such/page/")),
        ("redirect", &srv.get("/answers")),
        (
            "304",
            &http(
                &srv.addr,
                "GET",
                "/answers/1/",
                &[("If-None-Match", page.header("etag").unwrap())],
            ),
        ),
    ] {
        assert_eq!(r.header("cache-control"), revalidate, "{what}");
        assert_eq!(r.header("cdn-cache-control"), None, "{what}");
    }
    let html = page.text().replace("&#x2F;", "/"); // tera escapes slashes in attributes
    let img = &html[html.find("/images/").unwrap()..];
    let img = &img[..img.find('"').unwrap()];
    let css = &html[html.find("/style.").unwrap()..];
    let css = &css[..css.find('"').unwrap()];
    assert_ne!(
        css, "/style.css",
        "the shipped templates link the hashed stylesheet"
    );
    for url in [img, css] {
        let r = srv.get(url);
        assert_eq!(r.status, 200, "{url}");
        assert_eq!(
            r.header("cache-control"),
            Some("public, max-age=31536000, immutable"),
            "{url}"
        );
    }
}

#[test]
fn a_broken_pointer_is_a_503_never_a_stale_200() {
    let s = built_site();
    let srv = s.serve(&[]);
    assert_eq!(srv.get("/").status, 200);
    let current = s.current_dir();
    // Pointer missing.
    std::fs::rename(s.path("public/current"), s.path("public/current.away")).unwrap();
    // The public is told that the site is unavailable, never where its files are (issue 19);
    // the reason goes to the log.
    let plain = |r: &HttpResponse| {
        assert_eq!(r.status, 503);
        let body = r.text();
        assert!(
            body.contains("unavailable") && !body.contains('/') && !body.contains("revision"),
            "{body}"
        );
    };
    plain(&srv.get("/"));
    std::fs::rename(s.path("public/current.away"), s.path("public/current")).unwrap();
    assert_eq!(srv.get("/").status, 200);
    // Pointer names a revision that is not there.
    std::fs::remove_file(s.path("public/current")).unwrap();
    std::os::unix::fs::symlink("revisions/999-deadbeef00", s.path("public/current")).unwrap();
    plain(&srv.get("/"));
    // Pointer names an incomplete revision (no manifest).
    let incomplete = s.path("public/revisions/998-deadbeef00");
    std::fs::create_dir_all(&incomplete).unwrap();
    std::fs::write(incomplete.join("index.html"), "stale").unwrap();
    std::fs::remove_file(s.path("public/current")).unwrap();
    std::os::unix::fs::symlink("revisions/998-deadbeef00", s.path("public/current")).unwrap();
    plain(&srv.get("/"));
    // Back to the real one.
    std::fs::remove_file(s.path("public/current")).unwrap();
    std::os::unix::fs::symlink(&current, s.path("public/current")).unwrap();
    assert_eq!(srv.get("/").status, 200);
}

#[test]
fn nothing_outside_the_revision_can_be_read() {
    let s = built_site();
    std::fs::write(s.path("secret.txt"), "top secret").unwrap();
    let srv = s.serve(&[]);
    for target in [
        "/../secret.txt",
        "/../../../../etc/passwd",
        "/%2e%2e/secret.txt",
        "/%2E%2E/%2E%2E/etc/passwd",
        "/answers/..%2f..%2fsecret.txt",
        "/..%5csecret.txt",
        "/answers\\..\\..\\secret.txt",
        "/index.html%00.css",
        "//etc/passwd",
    ] {
        let r = http(&srv.addr, "GET", target, &[]);
        assert!(r.status == 400 || r.status == 404, "{target}: {}", r.status);
        assert!(
            !r.text().contains("top secret") && !r.text().contains("root:"),
            "{target}"
        );
    }
    // Dot segments resolve as the URL standard says (what every browser and the edge Worker's
    // runtime do): `/./index.html` is the revision's own index.html, never anything outside.
    assert_eq!(
        http(&srv.addr, "GET", "/./index.html", &[]).body,
        srv.get("/").body
    );
    // Absolute-form request target: only its path counts.
    let r = http(&srv.addr, "GET", "http://evil.example/../secret.txt", &[]);
    assert!(r.status == 400 || r.status == 404, "{}", r.status);
    // Symlinks planted in the revision that lead out of it are refused.
    let dir = s.current_dir();
    std::fs::remove_file(dir.join("answers/2/index.html")).unwrap();
    std::os::unix::fs::symlink(s.path("secret.txt"), dir.join("answers/2/index.html")).unwrap();
    let r = srv.get("/answers/2/");
    assert_eq!(r.status, 404);
    assert!(!r.text().contains("top secret"));
    std::fs::remove_dir_all(dir.join("answers/1")).unwrap();
    std::os::unix::fs::symlink(s.root(), dir.join("answers/1")).unwrap();
    let r = srv.get("/answers/1/secret.txt");
    assert!(!r.text().contains("top secret"));
    let r = srv.get("/answers/1/");
    assert_eq!(r.status, 404, "a directory symlink out of the tree");
}

#[test]
fn a_swap_in_the_middle_of_a_long_download_does_not_mix_revisions() {
    use std::io::{Read, Write};
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    let big_a: Vec<u8> = (0..8 * 1024 * 1024u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(s.path("static/big.bin"), &big_a).unwrap();
    s.json(&["publish", "--build", "--now", NOW]);
    let first = s
        .current_dir()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let srv = s.serve(&[]);
    let mut conn = std::net::TcpStream::connect(&srv.addr).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    write!(
        conn,
        "GET /big.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = vec![0u8; 64 * 1024];
    let n = conn.read(&mut raw).unwrap();
    raw.truncate(n);
    // Mid-download: a new revision with a different big.bin, the pointer moves, the old
    // revision is even garbage-collected.
    let big_b: Vec<u8> = big_a.iter().map(|b| b.wrapping_add(1)).collect();
    std::fs::write(s.path("static/big.bin"), &big_b).unwrap();
    s.item(2, "2026-11-02");
    s.json(&["publish", "--build", "--now", NOW]);
    s.json(&["gc", "--keep", "1", "--grace-secs", "0"]);
    assert!(!s.path(&format!("public/revisions/{first}")).exists());
    conn.read_to_end(&mut raw).unwrap();
    let r = parse_response(&raw, false);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-revision"), Some(first.as_str()));
    assert!(
        r.body == big_a,
        "the body must be the first revision's file, whole"
    );
    // The next request sees the new revision.
    let next = srv.get("/big.bin");
    assert_ne!(next.header("x-revision"), Some(first.as_str()));
    assert!(next.body == big_b);
}

#[test]
fn the_origin_notices_a_pointer_swap_on_the_next_request() {
    let s = built_site();
    let srv = s.serve(&[]);
    let a = srv.get("/").header("x-revision").unwrap().to_string();
    s.item(3, "2026-11-03");
    s.json(&["publish", "--build", "--now", NOW]);
    let b = srv.get("/").header("x-revision").unwrap().to_string();
    assert_ne!(a, b);
    assert!(b.starts_with("3-"));
    assert!(
        !srv.get("/").text().contains("fencepost live reload"),
        "origin pages carry no reload script"
    );
}

/// A revision is opened without parsing its manifest: the origin looks files up in
/// `manifest.idx` by binary search, so the first request after a swap never waits for a
/// large manifest. Shown by making the new revision's `manifest.json` unparseable (which no
/// build does): it is still served, with the index's ETags. A revision built before indexes
/// existed (no `manifest.idx`) is served from its manifest, parsed whole.
#[test]
fn the_origin_finds_files_in_the_index_without_parsing_the_manifest() {
    let s = built_site();
    let srv = s.serve(&[]);
    assert_eq!(srv.get("/").status, 200);
    s.item(3, "2026-11-03");
    s.json(&["publish", "--build", "--now", NOW]);
    let dir = s.current_dir();
    let manifest = std::fs::read_to_string(dir.join(".fencepost/manifest.json")).unwrap();
    let m: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    let sha = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["path"] == "answers/3/index.html")
        .unwrap()["sha256"]
        .as_str()
        .unwrap()
        .to_string();
    std::fs::write(dir.join(".fencepost/manifest.json"), "not a manifest").unwrap();
    let r = srv.get("/answers/3/");
    assert_eq!(r.status, 200);
    assert!(r.header("x-revision").unwrap().starts_with("3-"));
    assert_eq!(r.header("etag"), Some(format!("\"{sha}\"").as_str()));
    assert_eq!(srv.get("/answers/3").status, 301);
    assert_eq!(srv.get("/no/such/page/").status, 404);
    // Without an index (an older build), the manifest is what the origin reads.
    std::fs::write(dir.join(".fencepost/manifest.json"), &manifest).unwrap();
    std::fs::remove_file(dir.join(".fencepost/manifest.idx")).unwrap();
    let srv2 = s.serve(&[]);
    let r = srv2.get("/answers/3/");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("etag"), Some(format!("\"{sha}\"").as_str()));
}

/// Issue 18: the revision's bookkeeping files are never served (they are not in the list of
/// files the manifest names), so nothing the origin answers names an embargo instant.
#[test]
fn the_origin_never_serves_manifest_files() {
    let s = built_site();
    s.item(3, "2026-12-05");
    s.json(&["publish", "--build", "--now", NOW]);
    let srv = s.serve(&[]);
    for path in [
        "/manifest.json",
        "/manifest.idx",
        "/.fencepost/manifest.json",
        "/.fencepost/manifest.idx",
        "/.fencepost/",
        "/current.json",
        "/../current.json",
    ] {
        let r = srv.get(path);
        assert!(r.status == 404 || r.status == 400, "{path}: {}", r.status);
        assert!(!r.text().contains("2026-12-06"), "{path}");
    }
}
