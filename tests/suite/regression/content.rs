//! Regressions of content as read: changed ids, `new`'s ids and instants, edits that keep
//! size and mtime, bad characters and off-site paths, a collection folder linked out.
use super::*;

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
    std::thread::sleep(
        fencepost_site::content::RACY_WINDOW + std::time::Duration::from_millis(100),
    );
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
    assert_eq!(code, HELD, "{r}");
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
