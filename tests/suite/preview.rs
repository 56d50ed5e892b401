//! The editor's preview (`src/preview.rs`): `build --preview` and `serve --watch` render
//! embargoed items and drafts with a banner, never pointed to, rebuilt on save, in a real browser
//! too.
use crate::common::*;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The preview shows a draft, with its banner; the public site never does.
#[test]
fn serve_watch_previews_a_draft_with_its_banner() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.item_with(2, "2026-11-02", "draft = true\n", "Draft body.");
    let r = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(r["drafts"][0]["id"], 2, "{r}");
    let srv = s.serve(&["--watch"]);
    let page = srv.get("/answers/2/");
    assert_eq!(page.status, 200);
    assert!(
        page.text().contains("Draft: not published") && page.text().contains("Draft body."),
        "{}",
        page.text()
    );
    drop(srv);
    let public = s.serve(&[]);
    assert_eq!(public.get("/answers/2/").status, 404);
}

#[test]
fn live_preview_in_a_real_browser() {
    let e2e = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e");
    assert!(
        std::path::Path::new("/usr/bin/chromium").exists(),
        "this test needs Debian's chromium: apt-get install chromium"
    );
    assert!(
        e2e.join("node_modules/playwright-core").exists(),
        "this test needs playwright-core: (cd tests/e2e && npm install)"
    );
    let s = TestSite::new();
    s.item(1, "2026-11-01").item(2, "2026-11-02");
    s.publish(NOW);
    let srv = s.serve(&["--watch"]);
    let shots = std::env::var("FENCEPOST_SCREENSHOTS").unwrap_or_default();
    let out = std::process::Command::new("node")
        .arg(e2e.join("watch.mjs"))
        .arg(format!("http://{}", srv.addr))
        .arg(s.root())
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/templates/answer.html"
        ))
        .arg(&shots)
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "browser test failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(srv.stop().code(), Some(0));
}

#[test]
fn preview_renders_embargoed_items_with_a_banner_and_is_never_pointed_to() {
    let s = site_with(2);
    s.item(3, "2026-12-20");
    s.publish(NOW);
    s.build(&[]);
    // What an older release left: its preview inside public/, where any copy of public/
    // (rsync, an upload of the folder) would carry embargoed pages. The next build removes it.
    std::fs::create_dir_all(s.path("public/preview/answers/3")).unwrap();
    std::fs::write(s.path("public/preview/answers/3/index.html"), "embargoed").unwrap();
    let before = s.current_dir();
    let public_before = tree(&s.path("public/revisions"));
    let p = s.build(&["--preview"]);
    assert_eq!(p["preview"], true);
    assert_eq!(p["pointer"], "none");
    assert_eq!(s.current_dir(), before);
    let page = std::fs::read_to_string(s.path(".fencepost/preview/answers/3/index.html")).unwrap();
    assert!(page.contains("PREVIEW"), "{page}");
    // In UTC, and on the clocks of the collection's zone (UTC here: the site's default).
    assert!(
        page.contains("Embargoed until 2026-12-21T00:10:00Z (2026-12-21 00:10 UTC)"),
        "{page}"
    );
    assert_eq!(manifest(&s.path(".fencepost/preview"))["preview"], true);
    assert_eq!(
        p["path"],
        s.path(".fencepost/preview").display().to_string()
    );
    // Nothing of the preview in public/: the old folder gone, no revision added.
    assert!(!s.path("public/preview").exists());
    assert_eq!(tree(&s.path("public/revisions")), public_before);
    assert!(!s.current_dir().join("answers/3").exists());
    assert!(!s.current_file("index.html").contains("PREVIEW"));
    // A second preview reuses unchanged files.
    let again = s.build(&["--preview"]);
    assert!(again["reused"].as_i64().unwrap() > 0, "{again}");
}

// 4. Medium: preview and watch followed image symlinks out of content/.

const PNG: &[u8] = b"\x89PNG\r\n\x1a\nSECRET-OUTSIDE-CONTENT";

#[test]
fn preview_and_watch_never_serve_an_image_from_outside_content() {
    let s = TestSite::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.png"), PNG).unwrap();
    std::fs::create_dir_all(s.path("content/images")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.png"),
        s.path("content/images/a.png"),
    )
    .unwrap();
    std::os::unix::fs::symlink("/etc/passwd", s.path("content/images/b.png")).unwrap();
    s.write("content/images/big.png", &"x".repeat(64));
    s.write(
        "fencepost.toml",
        "title = \"t\"\n[images]\nmax_bytes = 32\n",
    );
    s.item_with(1, "2026-11-01", "image = \"images/a.png\"\n", "one");
    s.item_with(2, "2026-11-02", "image = \"images/b.png\"\n", "two");
    s.item_with(3, "2026-11-03", "image = \"images/big.png\"\n", "three");
    let p = s.build(&["--preview"]);
    let dir = PathBuf::from(p["path"].as_str().unwrap());
    for (path, bytes) in tree(&dir) {
        assert!(
            !bytes.windows(6).any(|w| w == b"SECRET") && !path.starts_with("images/"),
            "preview wrote {path} from outside content/"
        );
    }
    let srv = s.serve(&["--watch"]);
    for id in 1..=3 {
        let page = srv.get(&format!("/answers/{id}/"));
        assert_eq!(page.status, 200);
        assert!(!page.text().contains("/images/"), "{}", page.text());
    }
    // The blob an unchecked loader would have made.
    use sha2::Digest;
    let sha = hex::encode(sha2::Sha256::digest(PNG));
    assert_eq!(srv.get(&format!("/images/{sha}.png")).status, 404);
}

// 6. Medium: watch mode went deaf after a folder was deleted and recreated.

#[test]
fn watch_follows_folders_created_or_recreated_after_start() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    std::fs::remove_dir_all(s.path("static")).unwrap();
    let srv = s.serve(&["--watch"]);
    assert_eq!(srv.get("/late.css").status, 404);
    // (The shipped templates link static/style.css, so the preview shows an error until it
    // is back.)
    s.write("static/style.css", "body{}\n");
    s.write("static/late.css", "p{}\n");
    wait_for("static/ created after start to be served", || {
        srv.get("/late.css").status == 200
    });
    // A branch switch: templates/ removed and created again (a new inode), its answer page
    // marked, so the preview showing the mark says the new folder was read and watched.
    let answer = std::fs::read_to_string(s.path("templates/answer.html")).unwrap();
    let mut opts = std::process::Command::new("cp");
    assert!(opts
        .arg("-r")
        .arg(s.path("templates"))
        .arg(s.path("templates.new"))
        .status()
        .unwrap()
        .success());
    s.write(
        "templates.new/answer.html",
        &answer.replace("{{ page.title }}", "{{ page.title }} RECREATED"),
    );
    std::fs::rename(s.path("templates"), s.path("templates.old")).unwrap();
    std::fs::rename(s.path("templates.new"), s.path("templates")).unwrap();
    std::fs::remove_dir_all(s.path("templates.old")).unwrap();
    wait_for("the recreated templates/ to be read", || {
        srv.get("/answers/1/").text().contains("RECREATED")
    });
    s.write(
        "templates/answer.html",
        &answer.replace("{{ page.title }}", "{{ page.title }} REARMED"),
    );
    wait_for("an edit in the recreated templates/ to show", || {
        srv.get("/answers/1/").text().contains("REARMED")
    });
    // And content/ too.
    std::fs::rename(s.path("content"), s.path("content.old")).unwrap();
    s.item_with(1, "2026-11-01", "", "Body after the switch.");
    wait_for("content/ recreated to be read", || {
        srv.get("/answers/1/")
            .text()
            .contains("Body after the switch.")
    });
    s.item_with(1, "2026-11-01", "", "Edited once more.");
    wait_for("an edit in the recreated content/ to show", || {
        srv.get("/answers/1/").text().contains("Edited once more.")
    });
}

/// The preview's reload events, read from `/__fencepost/events`.
struct Events(std::io::BufReader<std::net::TcpStream>);

impl Events {
    fn listen(addr: &str) -> Events {
        use std::io::Write;
        let mut events = std::net::TcpStream::connect(addr).unwrap();
        events
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        write!(
            events,
            "GET /__fencepost/events HTTP/1.1\r\nHost: x\r\n\r\n"
        )
        .unwrap();
        Events(std::io::BufReader::new(events))
    }

    /// Waits for event `name`.
    fn wait(&mut self, name: &str) {
        use std::io::BufRead;
        let mut line = String::new();
        loop {
            line.clear();
            (self.0)
                .read_line(&mut line)
                .unwrap_or_else(|e| panic!("waiting for {name}: {e}"));
            if line.trim() == format!("event: {name}") {
                return;
            }
        }
    }

    /// Waits for event `name` and returns its data.
    fn wait_data(&mut self, name: &str) -> String {
        use std::io::BufRead;
        self.wait(name);
        let mut line = String::new();
        (self.0).read_line(&mut line).unwrap();
        line.trim()
            .strip_prefix("data: ")
            .unwrap_or_else(|| panic!("{name} carries data: {line:?}"))
            .to_string()
    }
}

/// The generation a preview page was served at, from its reload script.
fn generation_of(page: &str) -> String {
    let at = page
        .find("var g=\"")
        .expect("the page carries its generation")
        + 7;
    page[at..at + page[at..].find('"').unwrap()].to_string()
}

/// Guards: a page that began listening only after a rebuild was announced (it was still
/// loading, or its stream was reconnecting) kept showing the old build until the next save —
/// the browser test failed so when the template was broken right after a reload.
#[test]
fn a_page_that_listens_after_a_rebuild_is_told_to_reload() {
    let s = built_site();
    let srv = s.serve(&["--watch"]);
    let page = srv.get("/answers/1/").text();
    let served_at = generation_of(&page);
    let mut early = Events::listen(&srv.addr);
    assert_eq!(
        early.wait_data("ready"),
        served_at,
        "a page served now is current"
    );

    let about = srv.get("/about/");
    let about_tag = about.header("etag").unwrap().to_string();
    s.item_with(1, "2026-11-01", "", "Edited before the page listened.");
    early.wait("reload");
    // A page the rebuild left alone, revalidated: its script names the new generation, so it
    // is sent again (a 304 would keep the old one, and the page would reload without end).
    let again = try_http(
        &srv.addr,
        "GET",
        "/about/",
        &[("If-None-Match", about_tag.as_str())],
    )
    .unwrap();
    assert_eq!(again.status, 200, "{:?}", again.headers);
    assert_ne!(again.header("etag"), Some(about_tag.as_str()));
    assert_ne!(generation_of(&again.text()), generation_of(&about.text()));
    // The page above, opening its stream only now: told at once that it is out of date.
    let mut late = Events::listen(&srv.addr);
    let now = late.wait_data("ready");
    assert_ne!(
        now, served_at,
        "the late listener must learn it missed a rebuild"
    );
    // The page reloaded is current, so it does not reload again.
    let reloaded = srv.get("/answers/1/").text();
    assert!(
        reloaded.contains("Edited before the page listened."),
        "{reloaded}"
    );
    assert_eq!(generation_of(&reloaded), now);
    // The error page carries its generation too.
    s.write(
        "templates/answer.html",
        "{% block content %}{{ page.title \n",
    );
    late.wait("reload");
    let broken = srv.get("/answers/1/");
    assert_eq!(broken.status, 500);
    assert_ne!(generation_of(&broken.text()), now);
}

/// A broken template, then a bad front matter: each an error page naming the file (and line)
/// that reloads itself, until the next good save.
fn errors_show_until_fixed(s: &TestSite, srv: &Server, events: &mut Events) {
    let mut wait_event = |name: &str| events.wait(name);
    s.write("templates/answer.html", "{% extends \"base.html\" %}\n{% block content %}\n{{ page.title \n{% endblock content %}\n");
    wait_event("reload");
    let broken = srv.get("/answers/1/");
    assert_eq!(broken.status, 500);
    assert!(
        broken.text().contains("templates/answer.html") && broken.text().contains("--&gt; 4:1"),
        "file and line: {}",
        broken.text()
    );
    assert!(
        broken.text().contains("fencepost live reload"),
        "the error page reloads itself too"
    );
    assert!(broken.text().contains("white-space: pre-wrap"), "it wraps");
    // Only the pages of that template are held: the home page renders.
    let home = srv.get("/");
    assert_eq!(home.status, 200);
    assert!(home.text().contains("/answers/1/"), "{}", home.text());

    s.write(
        "templates/answer.html",
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/templates/answer.html"
        ))
        .unwrap(),
    );
    wait_event("reload");
    let fixed = srv.get("/answers/1/");
    assert_eq!(fixed.status, 200);
    assert!(fixed.text().contains("A freshly edited body."));

    // A bad front matter is an error page too, and the next good save recovers.
    s.write("content/answers/2.md", "+++\nid = 2\nday = \n+++\n");
    wait_event("reload");
    let bad = srv.get("/answers/1/");
    assert_eq!(bad.status, 500);
    assert!(
        bad.text().contains("content/answers/2.md"),
        "{}",
        bad.text()
    );
    s.item(2, "2026-11-02");
    wait_event("reload");
    assert_eq!(srv.get("/answers/2/").status, 200);
}

#[test]
fn watch_mode_rebuilds_on_save_and_shows_errors_until_fixed() {
    let s = built_site();
    s.item(3, "2026-12-25"); // embargoed: visible in the preview only
    let srv = s.serve(&["--watch"]);
    let page = srv.get("/answers/3/");
    assert_eq!(page.status, 200);
    assert!(page.text().contains("PREVIEW") && page.text().contains("Embargoed until"));
    assert!(
        page.text().contains("fencepost live reload"),
        "preview HTML carries the reload script"
    );
    assert_eq!(page.header("x-revision"), Some("preview"));
    assert_eq!(page.header("cache-control"), Some("no-store"));
    for dir in ["public/preview", ".fencepost/preview"] {
        assert!(!s.path(dir).exists(), "watch mode writes nothing to disk");
    }
    let revision_before = s.revision();

    // Listen for reloads.
    let mut events = Events::listen(&srv.addr);
    events.wait("ready");

    let t0 = Instant::now();
    s.item_with(1, "2026-11-01", "", "A freshly edited body.");
    events.wait("reload");
    assert!(srv
        .get("/answers/1/")
        .text()
        .contains("A freshly edited body."));
    assert!(t0.elapsed() < Duration::from_secs(5));

    errors_show_until_fixed(&s, &srv, &mut events);

    assert_eq!(
        s.revision(),
        revision_before,
        "watch mode never writes to the ledger"
    );
    // Graceful shutdown even with a live-reload stream open.
    let t = Instant::now();
    assert_eq!(srv.stop().code(), Some(0));
    assert!(t.elapsed() < Duration::from_secs(5));
}

/// A preview link in Chromium (issue 80): the reviewer who opens it — pasted, or clicked on
/// another site's page — sees the embargoed post with its banner, the token out of the
/// address bar and out of script's reach, links kept within the preview; a browser without
/// it sees the 404 (tests/e2e/previews.mjs).
#[test]
fn a_preview_link_in_a_real_browser() {
    let e2e = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e");
    assert!(
        std::path::Path::new("/usr/bin/chromium").exists(),
        "this test needs Debian's chromium: apt-get install chromium"
    );
    let s = fixture("features");
    s.publish("2026-12-01T00:00:00Z");
    s.json(&["build"]);
    s.json(&[
        "preview",
        "deploy",
        "pr-7",
        "--as-of",
        "2026-12-02T09:00:00Z",
        "--now",
        "2026-12-01T00:00:00Z",
    ]);
    let srv = s.serve(&[]);
    let base = format!("http://{}/", srv.addr);
    let v = s.json(&[
        "preview",
        "link",
        "pr-7",
        "posts/secret/",
        "--ttl",
        "10m",
        "--base",
        &base,
    ]);
    let link = v["url"]
        .as_str()
        .unwrap()
        .strip_prefix(base.trim_end_matches('/'))
        .unwrap()
        .to_string();
    let port = srv.addr.rsplit(':').next().unwrap();
    let other_site = format!("http://localhost:{port}/no/such/page/");
    let shots = std::env::var("FENCEPOST_SCREENSHOTS").unwrap_or_default();
    let out = std::process::Command::new("node")
        .arg(e2e.join("previews.mjs"))
        .args([base.trim_end_matches('/'), &link, &other_site, &shots])
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "browser test failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
