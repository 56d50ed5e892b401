//! Regressions, each through the real binary, each opening with one line, `Guards: …`,
//! saying what it guards (`house.rs` holds every test here to it), then the issue it came
//! from. Hold round 4 (issue 34): one file never freezes the site, and nothing a person
//! removes stays public.
use crate::common::*;
use serde_json::Value;

const BEFORE: &str = "2026-12-01T00:00:00Z";

/// Runs `args` with `--json`, whatever its exit status: (status code, JSON on stdout).
fn run_json(s: &TestSite, args: &[&str]) -> (i32, Value) {
    let out = s.cmd(args).arg("--json").output().unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: bad JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), v)
}

fn post(s: &TestSite, id: &str, extra: &str) {
    s.write(
        &format!("content/posts/{id}.md"),
        &format!("+++\ntitle = \"Post {id}\"\npublish_at = 2026-11-20T09:00:00Z\n{extra}+++\n\nBody of {id}.\n"),
    );
}

fn names(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {v}"))
        .iter()
        .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
        .collect()
}

/// Guards: an item cannot take a URL the site already serves.
///
/// Issue 34.1: an item whose URL is a list page, a taxonomy index, a plain page or another
/// collection's item is an invalid file at publish (file, line, key, URL); every other item
/// publishes and the build that follows succeeds.
#[test]
fn an_item_whose_url_the_site_keeps_is_held_at_publish() {
    let s = fixture("features");
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    s.write(
        "fencepost.toml",
        &cfg.replace("url = \"/posts/{id}/\"", "url = \"/{id}/\""),
    );
    for id in ["tags", "about", "posts", "fine"] {
        post(&s, id, "");
    }
    s.write(
        "content/posts/advisories.md",
        "+++\nid = \"advisories\"\ntitle = \"T\"\npublish_at = 2026-11-20T09:00:00Z\n+++\nx\n",
    );
    let (code, r) = run_json(&s, &["publish", "--now", BEFORE]);
    assert_eq!(code, 1, "{r}");
    let invalid = r["invalid"].as_array().unwrap();
    let by_file = |f: &str| {
        invalid
            .iter()
            .find(|i| i["file"] == f)
            .unwrap_or_else(|| panic!("{f} not invalid: {r}"))
            .clone()
    };
    assert_eq!(by_file("content/posts/tags.md")["url"], "/tags/");
    assert!(by_file("content/posts/tags.md")["error"]
        .as_str()
        .unwrap()
        .contains("the index of taxonomy tags"));
    assert!(by_file("content/posts/about.md")["error"]
        .as_str()
        .unwrap()
        .contains("plain page content/about.md"));
    assert!(by_file("content/posts/posts.md")["error"]
        .as_str()
        .unwrap()
        .contains("list page of collection posts"));
    let adv = by_file("content/posts/advisories.md");
    assert_eq!(
        (adv["key"].clone(), adv["line"].clone()),
        ("id".into(), 2.into()),
        "{adv}"
    );
    let published = names(&r, "published");
    assert!(published.contains(&"posts/fine".to_string()), "{r}");
    assert!(
        !published
            .iter()
            .any(|p| p == "posts/tags" || p == "posts/about"),
        "{r}"
    );
    // The human form names the file, the key and the URL too.
    let human = s.cmd(&["publish", "--now", BEFORE]).output().unwrap();
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.contains("content/posts/tags.md") && text.contains("/tags/"),
        "{text}"
    );
    // The build that follows places everything that was published.
    let b = s.json(&["build", "--now", BEFORE]);
    assert_eq!(b["left_out"], serde_json::json!([]), "{b}");
    assert!(s.current_file("fine/index.html").contains("Post fine"));
    assert!(!s.current_file("tags/index.html").contains("Post tags"));
}

/// Guards: two collections' URL patterns never hand one URL to two items.
///
/// Issue 34.1: two collections whose URL patterns meet (`/n/{id}/` against `/n/x{id}/`):
/// the item that comes second is held, the first stays.
#[test]
fn an_item_never_takes_another_collections_url() {
    let s = TestSite::new();
    s.write(
        "fencepost.toml",
        "title = \"T\"\nbase_url = \"http://localhost/\"\n[ledger]\npath = \".fencepost/ledger.sqlite\"\n\
         [collections.a]\nurl = \"/n/{id}/\"\nid = \"slug\"\ndue = \"publish_at\"\nlist_url = \"\"\ntemplate = \"page.html\"\n\
         [collections.b]\nurl = \"/n/x{id}/\"\nid = \"slug\"\ndue = \"publish_at\"\nlist_url = \"\"\ntemplate = \"page.html\"\n",
    );
    let item = |c: &str, id: &str| {
        s.write(
            &format!("content/{c}/{id}.md"),
            &format!("+++\ntitle = \"{c} {id}\"\npublish_at = 2026-11-20T09:00:00Z\n+++\nx\n"),
        );
    };
    item("a", "xy");
    let r = s.publish(BEFORE);
    assert_eq!(names(&r, "published"), ["a/xy"]);
    item("b", "y");
    let (code, r) = run_json(&s, &["publish", "--now", BEFORE]);
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["invalid"][0]["url"], "/n/xy/", "{r}");
    assert!(
        r["invalid"][0]["error"]
            .as_str()
            .unwrap()
            .contains("item a/xy"),
        "{r}"
    );
    let b = s.json(&["build", "--now", BEFORE]);
    assert_eq!(b["left_out"], serde_json::json!([]), "{b}");
    assert!(s.current_file("n/xy/index.html").contains("a xy"));
}

/// Guards: a broken plain page never stops the build.
///
/// Issue 34.1: a plain page with an unknown key is named at publish (file, line, key); the
/// items publish; the build leaves only that page out, exits non-zero, and moves the
/// pointer for everything else.
#[test]
fn a_plain_page_that_does_not_read_is_named_and_left_out() {
    let s = fixture("features");
    s.write(
        "content/contact.md",
        "+++\ntitle = \"Contact\"\ntitel = \"x\"\n+++\nHi\n",
    );
    let (code, r) = run_json(&s, &["publish", "--now", BEFORE]);
    assert_eq!(code, 1, "{r}");
    let bad = &r["invalid"][0];
    assert_eq!(
        (bad["file"].clone(), bad["line"].clone()),
        ("content/contact.md".into(), 3.into()),
        "{r}"
    );
    assert!(bad["error"].as_str().unwrap().contains("titel"), "{r}");
    assert!(
        names(&r, "published").contains(&"posts/hello".to_string()),
        "{r}"
    );
    let (code, b) = run_json(&s, &["build", "--now", BEFORE]);
    assert_eq!(code, 1, "{b}");
    assert_eq!(b["pointer"], "moved", "{b}");
    assert_eq!(b["left_out"][0]["what"], "content/contact.md", "{b}");
    assert!(s
        .current_file("posts/hello/index.html")
        .contains("Hello, fences"));
    assert!(s.current_file("about/index.html").contains("About"));
    assert!(!s.current_dir().join("contact").exists());
}

/// Guards: a term that cannot be a file name never reaches the build.
///
/// Issue 34.1: a term whose slug could not be a file name is refused at read time; the
/// item is held, the others publish.
#[test]
fn a_term_too_long_for_a_file_name_is_refused_when_read() {
    let s = fixture("features");
    let long = "word ".repeat(40);
    post(&s, "long-tag", &format!("tags = [\"{long}\"]\n"));
    let (code, r) = run_json(&s, &["publish", "--now", BEFORE]);
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["invalid"][0]["file"], "content/posts/long-tag.md", "{r}");
    assert_eq!(r["invalid"][0]["key"], "tags", "{r}");
    assert!(
        r["invalid"][0]["error"]
            .as_str()
            .unwrap()
            .contains("at most 100"),
        "{r}"
    );
    assert!(
        names(&r, "published").contains(&"posts/hello".to_string()),
        "{r}"
    );
    s.json(&["build", "--now", BEFORE]);
}

/// Guards: a collision publish missed never freezes the site.
///
/// Issue 34.1, second line of defence: a collision publish could not see (a plain page
/// added over a public item's URL) never fails the revision: the newcomer is left out,
/// named, the command exits non-zero, and the pointer moves for everything else.
#[test]
fn the_build_leaves_out_what_it_cannot_place_and_moves_the_pointer() {
    let s = fixture("features");
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    s.write(
        "fencepost.toml",
        &cfg.replace("url = \"/posts/{id}/\"", "url = \"/{id}/\""),
    );
    post(&s, "contact", "");
    s.publish(BEFORE);
    s.json(&["build", "--now", BEFORE]);
    s.write(
        "content/contact.md",
        "+++\ntitle = \"Contact page\"\n+++\nHi\n",
    );
    post(&s, "later", "");
    let (code, r) = run_json(&s, &["publish", "--build", "--now", BEFORE]);
    assert_eq!(code, 1, "{r}");
    assert!(
        names(&r, "published").contains(&"posts/later".to_string()),
        "{r}"
    );
    assert_eq!(r["build"]["pointer"], "moved", "{r}");
    let left = &r["build"]["left_out"][0];
    assert_eq!(
        (left["what"].clone(), left["path"].clone()),
        ("content/contact.md".into(), "contact/index.html".into()),
        "{r}"
    );
    assert!(s
        .current_file("contact/index.html")
        .contains("Post contact"));
    assert!(s.current_file("later/index.html").contains("Post later"));
}

/// Guards: a changed `id` never leaves the old page up.
///
/// Issue 34.2: changing the `id` inside a published item's file withdraws the old id, as
/// if its file had been removed, and publishes the new one.
#[test]
fn a_changed_id_withdraws_the_old_one() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.publish(NOW);
    s.build(&[]);
    let text = std::fs::read_to_string(s.path("content/answers/1.md")).unwrap();
    s.write(
        "content/answers/1.md",
        &text.replace("id = 1\n", "id = 5\n"),
    );
    let r = s.publish(NOW);
    assert_eq!(ids(&r, "withdrawn"), [1], "{r}");
    assert_eq!(ids(&r, "published"), [5], "{r}");
    s.build(&[]);
    assert!(!s.current_dir().join("answers/1/index.html").exists());
    assert!(s.current_dir().join("answers/5/index.html").exists());
    assert_eq!(ids(&s.publish(NOW), "withdrawn"), Vec::<i64>::new());
}

/// Guards: `fencepost new` never writes something that goes live at once.
///
/// Issue 34.5: `fencepost new` never writes an item that is due now, on any due rule, nor
/// within a day of writing it.
#[test]
fn new_never_writes_an_item_that_is_due_now() {
    for (rule, now, almost_a_day_later) in [
        (
            "start_of_day",
            "2026-12-01T00:00:00Z",
            "2026-12-01T23:59:00Z",
        ),
        (
            "start_of_day",
            "2026-12-01T23:59:00Z",
            "2026-12-02T23:58:00Z",
        ),
        ("end_of_day", "2026-12-01T23:59:00Z", "2026-12-02T23:58:00Z"),
        ("publish_at", "2026-12-01T12:00:00Z", "2026-12-02T11:59:00Z"),
    ] {
        let s = TestSite::new();
        s.write(
            "fencepost.toml",
            &format!("title = \"T\"\nbase_url = \"http://localhost/\"\n[ledger]\npath = \".fencepost/ledger.sqlite\"\n\
             [collections.notes]\nid = \"slug\"\ndue = \"{rule}\"\n"),
        );
        let w = s.json(&["new", "notes", "--title", "Placeholder", "--now", now]);
        // `new` writes a draft (issue 36): never public while it says so.
        let r = s.publish(now);
        assert_eq!(r["drafts"].as_array().map(Vec::len), Some(1), "{w} {r}");
        // With the key removed, it is still not due within the day.
        let file = s.path(w["path"].as_str().unwrap());
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(&file, text.replace("draft = true\n", "")).unwrap();
        for at in [now, almost_a_day_later] {
            let r = s.publish(at);
            assert_eq!(
                names(&r, "published"),
                Vec::<String>::new(),
                "{rule}, new at {now}, publish at {at}: {w} {r}"
            );
            assert_eq!(r["embargoed"], 1, "{r}");
        }
    }
}

/// Guards: the stat cache never misses an edit that restores the mtime.
///
/// Issue 34.8: an in-place edit that keeps the size and puts the old mtime back is read.
#[test]
fn an_edit_that_keeps_size_and_mtime_is_read() {
    let s = TestSite::new();
    s.item_with(1, "2026-11-01", "", "Body AAAA.");
    s.publish(NOW);
    let path = s.path("content/answers/1.md");
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    // Past the racy window (a wall-clock rule of the stat cache, not a guess at speed).
    std::thread::sleep(fencepost::content::RACY_WINDOW + std::time::Duration::from_millis(100));
    let f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    use std::io::Write;
    (&f).write_all(text.replace("AAAA", "BBBB").as_bytes())
        .unwrap();
    f.set_modified(mtime).unwrap();
    drop(f);
    assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), mtime);
    let r = s.publish(NOW);
    assert_eq!(ids(&r, "updated"), [1], "{r}");
}

/// Guards: no invalid character, off-site URL or out-of-range date gets in.
///
/// Issue 34.9: non-characters never reach a feed; a `url` field refuses what browsers take
/// off-site; dates stay in 0001–9998.
#[test]
fn bad_characters_and_off_site_paths_are_refused_when_read() {
    let s = fixture("features");
    post(&s, "nonchar", "");
    let body = std::fs::read_to_string(s.path("content/posts/nonchar.md")).unwrap();
    s.write(
        "content/posts/nonchar.md",
        &body.replace("Body of", "Body \u{FFFF} of"),
    );
    post(&s, "extra-nonchar", "[extra]\nnote = \"a\u{FFFE}b\"\n");
    let (code, r) = run_json(&s, &["publish", "--now", BEFORE]);
    assert_eq!(code, 1, "{r}");
    let inv = r["invalid"].as_array().unwrap();
    let find = |f: &str| {
        inv.iter()
            .find(|i| i["file"] == f)
            .unwrap_or_else(|| panic!("{f}: {r}"))
            .clone()
    };
    assert!(find("content/posts/nonchar.md")["error"]
        .as_str()
        .unwrap()
        .contains("U+FFFF"));
    assert_eq!(find("content/posts/nonchar.md")["key"], "(body)");
    assert_eq!(find("content/posts/extra-nonchar.md")["key"], "note", "{r}");
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    s.write(
        "fencepost.toml",
        &cfg.replace(
            "severity = { type = \"string\", one_of = [\"low\", \"high\"], required = true }",
            "severity = { type = \"string\", one_of = [\"low\", \"high\"], required = true }\nlink = { type = \"url\" }\nfixed = { type = \"date\" }",
        ),
    );
    let adv = |id: &str, extra: &str| {
        s.write(
            &format!("content/advisories/{id}.md"),
            &format!("+++\ntitle = \"A\"\npublish_at = 2026-11-20T09:00:00Z\nseverity = \"low\"\n{extra}+++\nx\n"),
        );
    };
    adv("backslash", "link = \"/\\\\evil.example/\"\n");
    adv("tab", "link = \"/\\t/evil.example/\"\n");
    adv("far", "fixed = 9999-01-01\n");
    adv("ok", "link = \"/posts/hello/\"\nfixed = 2026-01-01\n");
    let (_, r) = run_json(&s, &["publish", "--now", BEFORE]);
    let inv: Vec<String> = r["invalid"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["file"].as_str().unwrap().to_string())
        .collect();
    for f in ["backslash", "tab", "far"] {
        assert!(
            inv.contains(&format!("content/advisories/{f}.md")),
            "{f}: {r}"
        );
    }
    assert!(
        !inv.contains(&"content/advisories/ok.md".to_string()),
        "{r}"
    );
}

/// Guards: `fencepost new` never reuses a withdrawn item's id.
///
/// Issue 34.10: `fencepost new` never gives a new item an id the ledger has seen.
#[test]
fn new_never_reuses_an_id_the_ledger_has_seen() {
    let s = fixture("features");
    s.publish(BEFORE);
    std::fs::remove_file(s.path("content/posts/hello.md")).unwrap();
    let r = s.publish(BEFORE);
    assert!(
        names(&r, "withdrawn").contains(&"posts/hello".to_string()),
        "{r}"
    );
    let w = s.json(&["new", "posts", "--title", "Hello", "--now", BEFORE]);
    assert_eq!(w["id"], "hello-2", "{w}");
    let e = s.failing(&["new", "posts", "--id", "hello", "--now", BEFORE]);
    assert!(
        e.contains("posts/hello") && e.contains("another --id"),
        "{e}"
    );
    let t = TestSite::new();
    t.item(7, "2026-11-01");
    t.publish(NOW);
    std::fs::remove_file(t.path("content/answers/7.md")).unwrap();
    t.publish(NOW);
    let w = t.json(&["new", "answers", "--now", NOW]);
    assert_eq!(w["id"], "8", "{w}");
}

/// Guards: a collection folder never reads from outside content/.
///
/// Issue 34.11: a collection's own folder symlinked outside content/ is refused.
#[test]
fn a_collection_folder_linked_out_of_content_is_refused() {
    let s = TestSite::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("1.md"),
        "+++\nid = 1\nday = 2026-11-01\ntitle = \"x\"\nprice = 1\n+++\nx\n",
    )
    .unwrap();
    std::fs::remove_dir_all(s.path("content/answers")).ok();
    std::os::unix::fs::symlink(outside.path(), s.path("content/answers")).unwrap();
    let e = s.failing(&["publish", "--now", NOW]);
    assert!(
        e.contains("content/answers") && e.contains("outside content/"),
        "{e}"
    );
    assert_eq!(s.revision(), 0);
}

/// Guards: a failed build never hides what publish did.
///
/// Issue 34.12: `publish --build` whose build fails still prints, and returns in JSON, what
/// was published.
#[test]
fn publish_build_that_fails_still_reports_the_publish() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    let tpl = std::fs::read_dir(s.path("templates"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "html"))
        .unwrap();
    std::fs::write(&tpl, "{% if %}broken").unwrap();
    let (code, r) = run_json(&s, &["publish", "--build", "--now", NOW]);
    assert_eq!(code, 1, "{r}");
    assert_eq!(ids(&r, "published"), [1], "{r}");
    assert!(r["build_error"]["message"].as_str().is_some(), "{r}");
    let out = s
        .cmd(&["publish", "--build", "--now", NOW])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("publication revision 1") && text.contains("BUILD FAILED"),
        "{text}"
    );
}

/// Guards: a typo in the config never withdraws a collection.
///
/// Issue 34.4: a mistyped `[collections.posts]` never withdraws the whole collection, and a
/// `[collections.X.fields]` table for an undeclared collection is a config error.
#[test]
fn removing_a_collection_by_typo_is_not_a_mass_withdrawal() {
    let s = fixture("features");
    let r = s.publish(BEFORE);
    assert!(names(&r, "published").len() >= 2, "{r}");
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    s.write(
        "fencepost.toml",
        &cfg.replace("[collections.posts]", "[collections.post]"),
    );
    let (code, r) = run_json(&s, &["publish", "--now", BEFORE]);
    assert_eq!(code, 1, "{r}");
    assert_eq!(names(&r, "withdrawn"), Vec::<String>::new(), "{r}");
    let bad = &r["invalid"][0];
    assert_eq!(bad["key"], "collections.posts", "{r}");
    assert!(
        bad["error"]
            .as_str()
            .unwrap()
            .contains("--allow-withdraw-collection posts"),
        "{r}"
    );
    // On purpose: each item withdrawn once.
    let (code, r) = run_json(
        &s,
        &[
            "publish",
            "--now",
            BEFORE,
            "--allow-withdraw-collection",
            "posts",
        ],
    );
    assert_eq!(code, 0, "{r}");
    assert!(
        names(&r, "withdrawn").contains(&"posts/hello".to_string()),
        "{r}"
    );
    // A fields table under a mistyped parent.
    let t = fixture("features");
    let cfg = std::fs::read_to_string(t.path("fencepost.toml")).unwrap();
    t.write(
        "fencepost.toml",
        &cfg.replace(
            "[collections.advisories.fields]",
            "[collections.advisory.fields]",
        ),
    );
    let e = t.failing(&["publish", "--now", BEFORE]);
    assert!(
        e.contains("collections.advisory.fields") && e.contains("no [collections.advisory] table"),
        "{e}"
    );
}

/// Guards: an embargoed item's spelling of a term never holds back a due one.
///
/// Issue 34.7: when two spellings of a term meet, the due item's spelling wins and the
/// embargoed file is the one held (it used to be the first by path).
#[test]
fn an_embargoed_file_never_holds_back_a_due_one() {
    let s = fixture("features");
    s.write(
        "content/posts/a-embargoed.md",
        "+++\ntitle = \"Later\"\npublish_at = 2027-01-01T00:00:00Z\ntags = [\"Fences\"]\n+++\nx\n",
    );
    post(&s, "z-due", "tags = [\"fences\"]\n");
    let (code, r) = run_json(&s, &["publish", "--now", BEFORE]);
    assert_eq!(code, 1, "{r}");
    assert!(
        names(&r, "published").contains(&"posts/z-due".to_string()),
        "{r}"
    );
    assert_eq!(
        r["invalid"][0]["file"], "content/posts/a-embargoed.md",
        "{r}"
    );
    assert_eq!(r["held"][0]["due"], false, "{r}");
    assert_eq!(r["held"][0]["due_at"], "2027-01-01T00:00:00Z", "{r}");
}

/// Guards: a withdrawal notice shows its file's latest text, once per change.
///
/// Issue 34.6: a withdrawal notice follows its file. A redacted title or an added reason
/// re-renders the notice once (one revision, one audit entry); deleting the file keeps the
/// notice as it last was; switching `on_withdraw` to "notice" brings back no page removed
/// before the switch.
#[test]
fn a_withdrawal_notice_follows_its_file() {
    let s = fixture("features");
    s.publish(BEFORE);
    let adv = std::fs::read_to_string(s.path("content/advisories/adv-1.md")).unwrap();
    let withdrawn = adv.replace(
        "severity = \"high\"\n",
        "severity = \"high\"\nwithdrawn = true\n",
    );
    s.write("content/advisories/adv-1.md", &withdrawn);
    let r = s.publish(BEFORE);
    assert_eq!(names(&r, "withdrawn"), ["advisories/adv-1"], "{r}");
    let audit = |s: &TestSite, action: &str| {
        let log = s.json(&["log", "--limit", "1000"]);
        log["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["action"] == action)
            .count()
    };
    // Nothing more to do once withdrawn.
    let rev = s.revision();
    assert_eq!(names(&s.publish(BEFORE), "renoticed"), Vec::<String>::new());
    assert_eq!(s.revision(), rev);
    // Redacted, with a reason: the notice is re-rendered once.
    s.write(
        "content/advisories/adv-1.md",
        &withdrawn
            .replace("Buffer overrun in the parser", "Redacted advisory")
            .replace(
                "withdrawn = true\n",
                "withdrawn = true\nwithdrawn_reason = \"Published by mistake\"\n",
            )
            .replace("Upgrade to 2.0.1.", "Redacted."),
    );
    let r = s.publish(BEFORE);
    assert_eq!(names(&r, "renoticed"), ["advisories/adv-1"], "{r}");
    assert_eq!(s.revision(), rev + 1);
    assert_eq!(audit(&s, "notice"), 1);
    assert_eq!(names(&s.publish(BEFORE), "renoticed"), Vec::<String>::new());
    assert_eq!(s.revision(), rev + 1, "once");
    s.json(&["build", "--now", BEFORE]);
    let notice = s.current_file("advisories/adv-1/index.html");
    assert!(
        notice.contains("Redacted advisory") && notice.contains("Published by mistake"),
        "{notice}"
    );
    assert!(!notice.contains("Buffer overrun"), "{notice}");
    // The file deleted: the notice stays as it last was.
    std::fs::remove_file(s.path("content/advisories/adv-1.md")).unwrap();
    s.publish(BEFORE);
    assert_eq!(s.revision(), rev + 1);
    s.json(&["build", "--now", BEFORE]);
    assert!(s
        .current_file("advisories/adv-1/index.html")
        .contains("Redacted advisory"));
    // posts removes withdrawn pages; one is removed, then posts switches to notices.
    std::fs::remove_file(s.path("content/posts/second.md")).unwrap();
    assert_eq!(names(&s.publish(BEFORE), "withdrawn"), ["posts/second"]);
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    s.write(
        "fencepost.toml",
        &cfg.replace(
            "taxonomies = [\"tags\"]\n",
            "taxonomies = [\"tags\"]\non_withdraw = \"notice\"\n",
        ),
    );
    s.json(&["build", "--now", BEFORE]);
    assert!(
        !s.current_dir().join("posts/second").exists(),
        "a removed page came back"
    );
    // A post withdrawn after the switch keeps its notice.
    std::fs::remove_file(s.path("content/posts/hello.md")).unwrap();
    assert_eq!(names(&s.publish(BEFORE), "withdrawn"), ["posts/hello"]);
    s.json(&["build", "--now", BEFORE]);
    assert!(s
        .current_file("posts/hello/index.html")
        .contains("withdrawn"));
}

/// Guards: a lost or foreign ledger never overwrites a live bucket.
///
/// Issue 34.3: a lost ledger never takes a bucket down. `deploy` creates no ledger; a
/// revision built by another ledger is never deployed (with `--adopt` neither); `verify
/// --to` fails when the live root was built by another ledger than the pointer names.
#[test]
fn a_lost_ledger_never_takes_a_bucket_down() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.json(&["publish", "--build", "--now", NOW]);
    let bucket = tempfile::tempdir().unwrap();
    let to = format!("file://{}", bucket.path().display());
    s.json(&["deploy", "--to", &to, "--now", NOW]);
    assert_eq!(s.json(&["verify", "--to", &to])["ok"], true);
    let ledger = s.path(".fencepost/ledger.sqlite");
    std::fs::rename(&ledger, s.path("lost.sqlite")).unwrap();
    let e = s.failing(&["deploy", "--to", &to, "--now", NOW]);
    assert!(
        e.contains("does not exist") && e.contains("creates no ledger"),
        "{e}"
    );
    assert!(!ledger.exists(), "deploy created a ledger");
    // A new ledger publishes beside the old output (public/ moved aside and back).
    std::fs::rename(s.path("public"), s.path("public.old")).unwrap();
    s.publish(NOW);
    std::fs::remove_dir_all(s.path("public")).ok();
    std::fs::rename(s.path("public.old"), s.path("public")).unwrap();
    // Refused either way, nothing written: the bucket is another ledger's, and with
    // --adopt the revision is another ledger's build.
    let e = s.failing(&["deploy", "--to", &to, "--now", NOW]);
    assert!(e.contains("nothing was written"), "{e}");
    let e = s.failing(&["deploy", "--adopt", "--to", &to, "--now", NOW]);
    assert!(e.contains("was built by ledger"), "{e}");
    assert_eq!(
        s.json(&["verify", "--to", &to])["ok"],
        true,
        "deploy wrote to the bucket"
    );
    // A pointer naming another ledger than its root's: verify says so and fails.
    let pointer = bucket.path().join("current");
    let text = std::fs::read_to_string(&pointer).unwrap();
    let mut p: Value = serde_json::from_str(&text).unwrap();
    assert!(p["ledger_id"].is_string(), "{p}");
    p["ledger_id"] = "someone-else".into();
    std::fs::write(&pointer, p.to_string()).unwrap();
    let (code, v) = run_json(&s, &["verify", "--to", &to]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["ok"], false, "{v}");
    assert_ne!(v["root_ledger_id"], v["ledger_id"], "{v}");
    let human = s.cmd(&["verify", "--to", &to]).output().unwrap();
    assert!(String::from_utf8_lossy(&human.stdout).contains("every origin refuses it"));
}

/// Guards: a broken file never keeps an expired page up.
///
/// Issue 35.3: a decided expiry is carried out even when the item's file is broken (held)
/// by then: the expiry was decided when a valid file was read.
#[test]
fn a_decided_expiry_is_carried_out_while_the_file_is_broken() {
    let s = TestSite::new();
    s.item_with(
        1,
        "2026-11-01",
        "publish_at = 2026-11-30T00:00:00Z\nexpire_at = 2026-12-02T00:00:00Z\n",
        "Soon gone.",
    );
    assert_eq!(ids(&s.publish(NOW), "published"), [1]);
    let text = std::fs::read_to_string(s.path("content/answers/1.md")).unwrap();
    s.write(
        "content/answers/1.md",
        &text.replace("price = 4.99", "price = \"cheap\""),
    );
    let r = publish_failing(&s, "2026-12-01T12:00:00Z");
    assert_eq!(
        ids(&r, "withdrawn"),
        Vec::<i64>::new(),
        "not before its expiry: {r}"
    );
    let r = publish_failing(&s, "2026-12-02T00:00:00Z");
    assert_eq!(ids(&r, "expired"), [1], "{r}");
    assert_eq!(r["invalid"][0]["file"], "content/answers/1.md", "{r}");
}

/// Guards: credentials in an endpoint URL never reach output, logs or errors.
///
/// Issue 35.10: credentials in `AWS_ENDPOINT_URL` are never echoed, in a deploy's report,
/// its logs or its errors (a store's error names the URL it failed on).
#[test]
fn endpoint_credentials_are_never_echoed() {
    let moto = Moto::start();
    moto.bucket("creds");
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.json(&["publish", "--build", "--now", NOW]);
    let with_secret = moto
        .endpoint
        .replacen("http://", "http://KEYID:TOPSECRET@", 1);
    let env = Moto::env(&with_secret);
    for (bucket, ok) in [("creds", true), ("no-such-bucket", false)] {
        let mut c = s.cmd(&[
            "-v",
            "deploy",
            "--to",
            &format!("s3://{bucket}/www"),
            "--now",
            NOW,
            "--json",
        ]);
        for (k, v) in &env {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        assert_eq!(
            out.status.success(),
            ok,
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for text in [&out.stdout, &out.stderr] {
            let text = String::from_utf8_lossy(text);
            assert!(
                !text.contains("TOPSECRET") && !text.contains("KEYID"),
                "{text}"
            );
        }
    }
}

/// Guards: a scheduled update never shows early.
///
/// Issue 35.4: a scheduled update is an update at its instant, never before. Editing a
/// published item and moving its `publish_at` ahead keeps the old page, and every output,
/// as it was until then; at the instant the new text goes live, once.
#[test]
fn a_scheduled_update_goes_live_at_its_instant_never_before() {
    let s = fixture("features");
    s.publish(BEFORE);
    s.json(&["build", "--now", BEFORE]);
    let rev = s.revision();
    let hello = std::fs::read_to_string(s.path("content/posts/hello.md")).unwrap();
    s.write(
        "content/posts/hello.md",
        &hello
            .replace(
                "publish_at = 2026-11-01T09:00:00Z",
                "publish_at = 2026-12-01T12:00:00Z",
            )
            .replace("Why fences matter", "Details: fences matter more"),
    );
    for at in ["2026-12-01T00:00:00Z", "2026-12-01T11:59:59Z"] {
        let r = s.publish(at);
        assert_eq!(names(&r, "updated"), Vec::<String>::new(), "{at}: {r}");
        assert_eq!(r["next_embargo_at"], "2026-12-01T12:00:00Z", "{r}");
        let b = s.json(&["build", "--now", at]);
        assert_eq!(b["next_change_at"], "2026-12-01T12:00:00Z", "{b}");
        assert_eq!(s.revision(), rev, "{at}");
        let files = files_under(&s.current_dir());
        assert_nothing_reveals(at, &files, &["Details: fences"]);
    }
    let r = s.publish("2026-12-01T12:00:00Z");
    assert_eq!(names(&r, "updated"), ["posts/hello"], "{r}");
    assert_eq!(s.revision(), rev + 1);
    assert_eq!(
        names(&s.publish("2026-12-01T12:00:01Z"), "updated"),
        Vec::<String>::new()
    );
    s.json(&["build", "--now", "2026-12-01T12:00:00Z"]);
    assert!(s
        .current_file("posts/hello/index.html")
        .contains("Details: fences matter more"));
}

/// Guards: `verify --to` never holds whole blobs in memory.
///
/// Issue 35.10: `verify --to` streams blobs as it hashes them: memory stays bounded however
/// large the blobs (it used to hold 16 whole blobs at once). Peak RSS measured by GNU time.
#[test]
fn verify_streams_blobs_in_bounded_memory() {
    let time = std::path::Path::new("/usr/bin/time");
    assert!(time.exists(), "this test needs GNU time (/usr/bin/time, Debian's time): run scripts/test, which installs it");
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    // 24 incompressible 6 MiB files: 16 whole in memory would be 96 MiB.
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    for i in 0..24 {
        let bytes: Vec<u8> = (0..6 << 20)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed as u8
            })
            .collect();
        std::fs::create_dir_all(s.path("static/big")).unwrap();
        std::fs::write(s.path(&format!("static/big/{i}.bin")), bytes).unwrap();
    }
    s.json(&["publish", "--build", "--now", NOW]);
    let bucket = tempfile::tempdir().unwrap();
    let to = format!("file://{}", bucket.path().display());
    s.json(&["deploy", "--to", &to, "--now", NOW]);
    let out = std::process::Command::new(time)
        .args(["-f", "maxrss_kib=%M"])
        .arg(bin())
        .args(["--site"])
        .arg(s.root())
        .args(["verify", "--to", &to, "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["ok"].as_bool(), v["blobs"].as_i64().map(|b| b >= 24)),
        (Some(true), Some(true)),
        "{v}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    let kib: u64 = err
        .lines()
        .find_map(|l| l.strip_prefix("maxrss_kib="))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no maxrss in {err}"));
    assert!(kib < 64 * 1024, "verify peaked at {} MiB", kib / 1024);
}

/// Guards: a typo in the config never empties the live site.
///
/// Issue 47.3: a mistyped `[collections.posts]` is refused by `publish` (issue 34.4), and the
/// build of the same `publish --build` used to leave every post out and move the pointer: the
/// site lost its posts while the ledger said they were public. The build refuses, naming the
/// collection and the fix, and the live revision stays.
#[test]
fn a_collection_typo_never_moves_the_pointer_to_a_revision_without_its_pages() {
    let s = fixture("features");
    let (code, r) = run_json(&s, &["publish", "--build", "--now", BEFORE]);
    assert_eq!(code, 0, "{r}");
    let live = s.current_dir();
    assert!(s.current_file("posts/hello/index.html").contains("Hello"));
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    s.write(
        "fencepost.toml",
        &cfg.replace("[collections.posts]", "[collections.post]"),
    );
    let (code, r) = run_json(&s, &["publish", "--build", "--now", BEFORE]);
    assert_eq!(code, 1, "{r}");
    let text = r.to_string();
    assert!(
        text.contains("declares no collection \\\"posts\\\"")
            && text.contains("restore [collections.posts]")
            && text.contains("nothing was swapped"),
        "{r}"
    );
    assert_eq!(s.current_dir(), live, "the live revision stays");
    assert!(s.current_file("posts/hello/index.html").contains("Hello"));
    // A build alone says the same.
    let (code, _) = run_json(&s, &["build", "--now", BEFORE]);
    assert_eq!(code, 1);
    assert_eq!(s.current_dir(), live);
    // Fixed, it builds (the same revision: nothing public changed).
    s.write("fencepost.toml", &cfg);
    let (code, r) = run_json(&s, &["publish", "--build", "--now", BEFORE]);
    assert_eq!(code, 0, "{r}");
    assert!(s.current_file("posts/hello/index.html").contains("Hello"));
}

/// Guards: an alias never takes a URL the build generates, in any spelling.
///
/// Issue 47.4: an alias onto a taxonomy's term page, a list's numbered page, or another
/// item's page spelt with `index.html` or without its slash passed `publish` and was then
/// dropped by every build, which exited 1 for ever. Each is an invalid file, held and named
/// with its `aliases` line at publish; everything else publishes and the build succeeds.
#[test]
fn an_alias_onto_a_generated_url_is_held_at_publish_in_every_spelling() {
    let s = fixture("features");
    let (code, r) = run_json(&s, &["publish", "--build", "--now", BEFORE]);
    assert_eq!(code, 0, "{r}");
    let bad = [
        ("onto-term", "/tags/news/"),
        ("onto-term-file", "/tags/news/index.html"),
        ("onto-page-2", "/posts/page/2"),
        ("onto-hello", "/posts/hello/index.html"),
        ("onto-hello-cased", "/Posts/Hello"),
        ("onto-index", "/Tags/index.html"),
    ];
    for (id, alias) in bad {
        post(&s, id, &format!("aliases = [\"{alias}\"]\n"));
    }
    post(&s, "fine", "aliases = [\"/old/fine/\"]\n");
    let (code, r) = run_json(&s, &["publish", "--build", "--now", BEFORE]);
    assert_eq!(code, 1, "{r}");
    assert_eq!(
        names(&r, "published"),
        vec!["posts/fine".to_string()],
        "{r}"
    );
    let invalid = r["invalid"].as_array().unwrap();
    for (id, alias) in bad {
        let f = invalid
            .iter()
            .find(|i| i["file"] == format!("content/posts/{id}.md"))
            .unwrap_or_else(|| panic!("{id} ({alias}) not held: {r}"));
        assert_eq!(f["line"], 4, "its aliases line: {f}");
    }
    assert_eq!(r["build"]["left_out"], serde_json::json!([]), "{r}");
    assert_eq!(r["build"]["pointer"], "moved", "{r}");
    // The next build leaves nothing out either: no alias stands in the way for ever.
    let (code, b) = run_json(&s, &["build", "--now", BEFORE]);
    assert_eq!(code, 0, "{b}");
    assert!(s.current_file("old/fine/index.html").contains("posts/fine"));
}
