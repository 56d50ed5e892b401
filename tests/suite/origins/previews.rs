//! Previews (issue 80) on the four origins: the preview rows of the HTTP table, and the leak
//! check. The adversaries: a reader without a link (no token, a guessed name, a forged or
//! expired token, another preview's token or cookie, a token signed with another key), the
//! caches and crawlers between (every preview answer private, never stored), and anyone
//! reading the public area of the bucket or the public origin before the instant — with a
//! preview of the embargoed post deployed to the same target.

use super::*;
use object_store::{ObjectStore, ObjectStoreExt};

/// The secret post's text: nowhere public before its instant.
const SECRET_TEXT: &str = "The airship goes up";

fn link(s: &TestSite, name: &str, path: &str, extra: &[&str]) -> String {
    let mut args = vec!["preview", "link", name, path, "--base", "http://origin/"];
    args.extend_from_slice(extra);
    let v = s.json(&args);
    let url = v["url"].as_str().unwrap().to_string();
    url.strip_prefix("http://origin").unwrap().to_string()
}

fn token_of(target: &str) -> String {
    target.split("fp_preview=").nth(1).unwrap().to_string()
}

/// Deploys preview `pr-7` of the features site as of the secret post's instant to the folder
/// bucket, to S3 and to the site's own previews, and waits for the edge to copy it.
fn deploy_previews(f: &Four) -> Value {
    let s = &f.site;
    let folder = format!("file://{}", f.bucket.display());
    let args = [
        "preview", "deploy", "pr-7", "--as-of", LAUNCH, "--now", BEFORE,
    ];
    let d = s.json(&[&args[..], &["--to", &folder]].concat());
    s.json_env(
        &[&args[..], &["--to", "s3://site/www"]].concat(),
        &s3_env(&f.moto),
    );
    s.json(&args);
    let pointer = std::fs::read(f.bucket.join("previews/pr-7/preview.json")).unwrap();
    let sha = fencepost_core::digest::sha256_hex(&pointer);
    f.edge().wait_synced("previews/pr-7/preview.json", &sha);
    d
}

#[test]
fn a_preview_is_served_alike_by_every_origin_to_a_link_holder_and_to_nobody_else() {
    let f = four();
    let d = deploy_previews(&f);
    assert!(d["reused_public"].as_u64().unwrap() > 0, "{d}");
    let valid = link(&f.site, "pr-7", "posts/secret/", &["--ttl", "1h"]);
    let cookie = format!("fp_preview={}", token_of(&valid));
    let public_404 = http(&f.origins[0].addr, "GET", "/no/such/page/", &[]);
    a_reader_without_a_valid_link_gets_the_public_404(&f, &valid, &public_404);
    the_link_is_exchanged_for_a_cookie(&f, &valid, &cookie);
    the_cookie_opens_the_preview_alike_everywhere(&f, &cookie, &public_404);
    nothing_public_names_the_secret(&f);
    list_and_remove(&f, &cookie);
}

/// Links a reader without a valid one might try: expired, signed with another key, stretched,
/// another preview's, made up.
fn invalid_links(s: &TestSite, valid: &str) -> Vec<String> {
    // Made a week ago with an hour to live: expired.
    let expired = link(
        s,
        "pr-7",
        "posts/secret/",
        &["--ttl", "1h", "--now", BEFORE],
    );
    let other = link(s, "pr-8", "", &["--ttl", "1h"]);
    let mut c = s.cmd(&["preview", "link", "pr-7", "posts/secret/", "--ttl", "1h"]);
    c.args(["--base", "http://origin/", "--json"]);
    c.env("FENCEPOST_PREVIEW_KEY", "00".repeat(32));
    let v: Value = serde_json::from_slice(&c.output().unwrap().stdout).unwrap();
    let forged = v["url"]
        .as_str()
        .unwrap()
        .strip_prefix("http://origin")
        .unwrap()
        .to_string();
    let t = token_of(valid);
    let p: Vec<&str> = t.split('.').collect();
    let later = p[1].parse::<i64>().unwrap() + 86_400;
    let stretched = format!(
        "/.preview/pr-7/posts/secret/?fp_preview={}.{later}.{}",
        p[0], p[2]
    );
    vec![
        "/.preview/pr-7/posts/secret/".to_string(),
        "/.preview/pr-7/".to_string(),
        "/.preview/pr-7".to_string(),
        expired,
        forged,
        stretched,
        other.replace("pr-8", "pr-7"),
        "/.preview/pr-7/posts/secret/?fp_preview=garbage".to_string(),
    ]
}

/// Without a valid link, every origin answers the site's own 404, and sets no cookie.
fn a_reader_without_a_valid_link_gets_the_public_404(
    f: &Four,
    valid: &str,
    public_404: &HttpResponse,
) {
    for target in &invalid_links(&f.site, valid) {
        f.check(&[case("GET", target, 404)], ALL);
        let r = http(&f.origins[0].addr, "GET", target, &[]);
        assert_eq!(r.body, public_404.body, "{target}: not the public 404");
        assert_eq!(r.header("etag"), public_404.header("etag"), "{target}");
        assert_eq!(r.header("set-cookie"), None, "{target}");
    }
}

/// A valid link: a 303 to the same URL without the token and the cookie; followed from another
/// site's page, a page that moves on by itself, with the cookie.
fn the_link_is_exchanged_for_a_cookie(f: &Four, valid: &str, cookie: &str) {
    f.check(&[case("GET", valid, 303), case("POST", valid, 405)], ALL);
    let cross = with(case("GET", valid, 200), "Sec-Fetch-Site", "cross-site");
    f.check(&[cross], ALL);
    for o in &f.origins {
        let r = http(&o.addr, "GET", valid, &[]);
        let to = "/.preview/pr-7/posts/secret/";
        assert_eq!(r.header("location"), Some(to), "{}", o.name);
        let c = r.header("set-cookie").unwrap();
        assert!(c.starts_with(&format!("{cookie};")), "{}: {c}", o.name);
        for attr in [
            "Path=/.preview/pr-7/",
            "HttpOnly",
            "Secure",
            "SameSite=Strict",
            "Max-Age=",
        ] {
            assert!(c.contains(attr), "{}: {c} lacks {attr}", o.name);
        }
        private_headers(&r, o.name);
        let r = http(&o.addr, "GET", valid, &[("Sec-Fetch-Site", "cross-site")]);
        let c = r.header("set-cookie").unwrap();
        assert!(c.starts_with(&format!("{cookie};")), "{}", o.name);
        let onward = format!("content=\"0;url={to}\"");
        let text = r.text();
        assert!(
            text.contains(&onward) && !text.contains("fp_preview"),
            "{}: {text}",
            o.name
        );
        private_headers(&r, o.name);
    }
}

/// The cookie: the preview's rows of the table on all four origins, its pages with their
/// banner and their links kept within it; outside its preview, nothing.
fn the_cookie_opens_the_preview_alike_everywhere(
    f: &Four,
    cookie: &str,
    public_404: &HttpResponse,
) {
    let with_cookie = |t: &str, status| with(case("GET", t, status), "Cookie", cookie);
    let secret = "/.preview/pr-7/posts/secret/";
    let etag = http(&f.origins[0].addr, "GET", secret, &[("Cookie", cookie)]);
    let etag = etag.header("etag").unwrap().to_string();
    let rows = vec![
        with_cookie(secret, 200),
        with_cookie("/.preview/pr-7/", 200),
        with_cookie("/.preview/pr-7/posts/secret", 301),
        with_cookie("/.preview/pr-7", 301),
        with_cookie("/.preview/pr-7/no/such/", 404),
        with_cookie("/.preview/pr-7/atom.xml", 200),
        with_cookie("/.preview/pr-7/sitemap.xml", 200),
        with_cookie("/.preview/pr-7/logo.svg", 200),
        with(with_cookie(secret, 304), "If-None-Match", &etag),
        with(case("HEAD", secret, 200), "Cookie", cookie),
        // The cookie outside its preview, and on the public site: nothing.
        with_cookie("/.preview/pr-8/posts/secret/", 404),
        with_cookie("/posts/secret/", 404),
    ];
    f.check(&rows, ALL);
    for o in &f.origins {
        let get = |t: &str| http(&o.addr, "GET", t, &[("Cookie", cookie)]);
        let r = get(secret);
        assert!(r.text().contains(SECRET_TEXT), "{}", o.name);
        assert!(
            r.text().contains("data-fencepost-preview=\"pr-7\""),
            "{}: no banner",
            o.name
        );
        private_headers(&r, o.name);
        let home = get("/.preview/pr-7/").text();
        assert!(
            home.contains(&format!("href=\"{secret}\"")),
            "{}: {home}",
            o.name
        );
        let r = get("/.preview/pr-7/posts/secret");
        assert_eq!(r.header("location"), Some(secret), "{}", o.name);
        private_headers(&r, o.name);
        assert_eq!(get("/.preview/pr-8/").body, public_404.body, "{}", o.name);
    }
}

/// Every preview answer is private and unindexed, and sends no referrer.
fn private_headers(r: &HttpResponse, origin: &str) {
    assert_eq!(
        r.header("cache-control"),
        Some("private, no-store"),
        "{origin}"
    );
    assert_eq!(
        r.header("x-robots-tag"),
        Some("noindex, nofollow, noarchive"),
        "{origin}"
    );
    assert_eq!(r.header("referrer-policy"), Some("no-referrer"), "{origin}");
}

/// Before the instant, with the preview deployed: no public object of either bucket, and no
/// public answer of any origin for any path the live revision has, names or holds the post.
fn nothing_public_names_the_secret(f: &Four) {
    let leaks = |what: &str, bytes: &[u8]| {
        let text = String::from_utf8_lossy(bytes);
        assert!(
            !text.contains(SECRET_TEXT)
                && !text.contains("Zeppelin launch")
                && !text.contains("posts/secret"),
            "{what} names or holds the embargoed post"
        );
    };
    let mut public = 0;
    for e in walkdir::WalkDir::new(&f.bucket).into_iter().flatten() {
        let rel = e
            .path()
            .strip_prefix(&f.bucket)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if e.file_type().is_file() && !rel.starts_with("previews/") {
            leaks(
                &format!("{rel} in the folder bucket"),
                &std::fs::read(e.path()).unwrap(),
            );
            public += 1;
        }
    }
    let store = f.moto.store("site");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        use futures_util::StreamExt;
        let mut list = store.list(Some(&object_store::path::Path::from("www")));
        while let Some(meta) = list.next().await {
            let key = meta.unwrap().location.to_string();
            if key.starts_with("www/previews/") {
                continue;
            }
            let bytes = store
                .get(&key.as_str().into())
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap();
            leaks(&format!("s3://site/{key}"), &bytes);
            public += 1;
        }
    });
    assert!(public > 20, "only {public} public objects read");
    let m: Value = serde_json::from_slice(
        &std::fs::read(f.site.current_dir().join(".fencepost/manifest.json")).unwrap(),
    )
    .unwrap();
    for e in m["files"].as_array().unwrap() {
        let target = format!("/{}", e["path"].as_str().unwrap());
        for o in &f.origins {
            let r = http(&o.addr, "GET", &target, &[]);
            leaks(&format!("{target} on {}", o.name), &r.body);
        }
    }
}

/// `preview list` names the preview on every target; `preview rm` ends it on each, at once.
fn list_and_remove(f: &Four, cookie: &str) {
    let s = &f.site;
    let folder = format!("file://{}", f.bucket.display());
    let env = s3_env(&f.moto);
    for to in [Some(folder.as_str()), Some("s3://site/www"), None] {
        let mut args = vec!["preview", "list", "--now", LAUNCH];
        args.extend(to.map(|t| ["--to", t]).into_iter().flatten());
        let v = s.json_env(&args, &env);
        let p = &v["previews"][0];
        assert_eq!(
            (p["name"].as_str(), p["as_of"].as_str()),
            (Some("pr-7"), Some("2026-12-02T09:00:00Z")),
            "{v}"
        );
        assert!(p["age_secs"].as_i64().unwrap() > 0, "{v}");
        let mut args = vec!["preview", "rm", "pr-7"];
        args.extend(to.map(|t| ["--to", t]).into_iter().flatten());
        assert!(s.json_env(&args, &env)["removed_objects"].as_u64().unwrap() > 2);
    }
    // The edge's copy of the folder drops the removed objects at its next pass.
    let wait = std::time::Instant::now();
    let edge = &f.origins[3].addr;
    let served = || {
        http(
            edge,
            "GET",
            "/.preview/pr-7/posts/secret/",
            &[("Cookie", cookie)],
        )
        .status
    };
    while served() != 404 {
        assert!(
            wait.elapsed() < std::time::Duration::from_secs(30),
            "the edge still serves a removed preview"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    for o in &f.origins {
        let r = http(
            &o.addr,
            "GET",
            "/.preview/pr-7/posts/secret/",
            &[("Cookie", cookie)],
        );
        assert_eq!(
            r.status, 404,
            "{}: a removed preview is still served",
            o.name
        );
    }
    let left = walkdir::WalkDir::new(f.bucket.join("previews/pr-7"))
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .count();
    assert_eq!(
        left, 0,
        "objects of a removed preview left in the folder bucket"
    );
}
