//! Bad input holds back only its own item: malformed front matter, missing or wrong fields,
//! duplicate ids, out-of-range values and tags, each named by file, line and key.
use crate::common::*;
use predicates::str::contains;

fn nothing_written(s: &TestSite) {
    assert_eq!(s.items().len(), 0);
    assert_eq!(s.pages(), 0);
    assert_eq!(s.revision(), 0);
}

/// Issue 20: a broken file holds back only its own item; the run publishes the others, names
/// the file, and exits non-zero.
#[test]
fn malformed_front_matter_holds_back_only_its_own_item() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.write(
        "content/answers/2.md",
        "+++\nid = 2\nday = 2026-11-02\ntitle = \"unclosed\nprice = 1\n+++\nbody\n",
    );
    s.cmd(&["publish", "--now", NOW])
        .assert()
        .failure()
        .stdout(contains("content/answers/2.md:4:"))
        .stderr(contains("content/answers/2.md:4:"));
    assert!(s.items().iter().all(|i| &*i.name.id != "2"));
    assert_eq!(s.revision(), 1, "item 1 went ahead");
    let s = TestSite::new();
    s.write("content/answers/2.md", "+++\nid = 2\nday = 2026-11-02\n");
    s.cmd(&["publish", "--now", NOW])
        .assert()
        .failure()
        .stderr(contains("never closed"));
    s.write("content/answers/2.md", "no front matter\n");
    s.cmd(&["publish", "--now", NOW])
        .assert()
        .failure()
        .stderr(contains("content/answers/2.md: no front matter"));
    nothing_written(&s);
}

#[test]
fn a_missing_or_wrong_field_is_named() {
    let s = TestSite::new();
    s.write(
        "content/answers/5.md",
        "+++\nid = 5\nday = 2026-11-02\nprice = 1\n+++\nbody\n",
    );
    s.cmd(&["publish", "--now", NOW])
        .assert()
        .failure()
        .stderr(contains(
            "content/answers/5.md: `title`: is required but missing",
        ));
    s.write(
        "content/answers/5.md",
        "+++\nid = 5\nday = \"yesterday\"\ntitle = \"t\"\nprice = 1\n+++\nbody\n",
    );
    s.cmd(&["publish", "--now", NOW])
        .assert()
        .failure()
        .stderr(contains("`day`"));
    s.write("content/answers/5.md", "+++\nid = 5\nday = 2026-11-02\ntitle = \"t\"\nprice = 1\nimage = \"../../etc/passwd\"\n+++\n");
    s.cmd(&["publish", "--now", NOW])
        .assert()
        .failure()
        .stderr(contains("leaves content/"));
    nothing_written(&s);
}

#[test]
fn duplicate_ids_name_both_files_and_a_published_page_is_not_withdrawn() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    assert_eq!(s.publish(NOW)["revision"], 1);
    s.write(
        "content/answers/copy-of-1.md",
        &std::fs::read_to_string(s.path("content/answers/1.md")).unwrap(),
    );
    s.cmd(&["publish", "--now", NOW])
        .assert()
        .failure()
        .stdout(contains("duplicate item id 1"))
        .stderr(contains("content/answers/1.md"))
        .stderr(contains("content/answers/copy-of-1.md"));
    // A broken file must not look like a removed one.
    std::fs::remove_file(s.path("content/answers/copy-of-1.md")).unwrap();
    s.write("content/answers/1.md", "+++\nbroken");
    s.cmd(&["publish", "--now", NOW]).assert().failure();
    assert_eq!(s.status()["items"]["published"], 1);
    assert_eq!(s.revision(), 1);
}

/// Issue 19: values the engines cannot hold (a day past 9998 on SQLite, year 0 or a NUL on
/// PostgreSQL) are named when the file is read — file, line, key — the same on both engines,
/// never an SQL error naming no file; and a control character never reaches a feed.
#[test]
fn out_of_range_days_and_control_characters_are_named_the_same_on_both_engines() {
    let cases = [
        (
            "+++\nid = 2\nday = 9999-12-31\ntitle = \"t\"\nprice = 1\n+++\nbody\n",
            "content/answers/2.md:3",
            "day",
        ),
        (
            "+++\nid = 2\nday = 0000-01-01\ntitle = \"t\"\nprice = 1\n+++\nbody\n",
            "content/answers/2.md:3",
            "day",
        ),
        (
            "+++\nid = 2\nday = 2026-11-02\ntitle = \"a\\u0000b\"\nprice = 1\n+++\nbody\n",
            "content/answers/2.md:4",
            "title",
        ),
        (
            "+++\nid = 2\nday = 2026-11-02\ntitle = \"t\"\nprice = 1\n+++\nline one\nbad \u{0} here\n",
            "content/answers/2.md:8",
            "(body)",
        ),
        (
            "+++\nid = 2\nday = 2026-11-02\ntitle = \"t\"\nprice = 1\npublish_at = 0000-12-31T23:59:59Z\n+++\nbody\n",
            "content/answers/2.md:6",
            "publish_at",
        ),
    ];
    for backend in [Backend::Sqlite, Backend::Postgres] {
        for (file, at, key) in cases {
            let s = TestSite::on(backend);
            s.item(1, "2026-11-01");
            s.write("content/answers/2.md", file);
            let out = s.cmd(&["publish", "--now", NOW]).output().unwrap();
            assert_eq!(out.status.code(), Some(HELD), "{backend:?} {key}");
            let err = String::from_utf8_lossy(&out.stdout);
            assert!(err.contains(at) && err.contains(key), "{backend:?}: {err}");
            assert!(!err.to_lowercase().contains("sql"), "{backend:?}: {err}");
            // Item 2 is held; item 1 is not its hostage (issue 20).
            assert!(s.items().iter().all(|i| &*i.name.id != "2"));
            assert_eq!(s.pages(), 1);
            assert_eq!(s.revision(), 1);
        }
    }
}

#[test]
fn tags_are_checked_where_they_are_written() {
    let s = fixture("features");
    // Two spellings of one slug in two files: the later file is held, naming both.
    s.write(
        "content/posts/third.md",
        "+++\ntitle = \"Third\"\npublish_at = 2026-11-05T09:00:00Z\ntags = [\"rust\"]\n+++\nx\n",
    );
    let r = publish_held(&s, BEFORE);
    let invalid = r["invalid"].to_string();
    assert!(
        invalid.contains("content/posts/third.md") && invalid.contains("content/posts/hello.md"),
        "{r}"
    );
    assert!(
        r["published"].as_array().unwrap().len() >= 3,
        "the rest publish: {r}"
    );
    // A tag that is not a list, expire_at before the item is due, an unknown taxonomy key.
    for (front, key) in [
        ("tags = \"rust\"", "tags"),
        ("expire_at = 2026-11-01T00:00:00Z", "expire_at"),
        ("categories = [\"x\"]", "categories"),
    ] {
        s.write(
            "content/posts/third.md",
            &format!(
                "+++\ntitle = \"Third\"\npublish_at = 2026-11-05T09:00:00Z\n{front}\n+++\nx\n"
            ),
        );
        let r = publish_held(&s, BEFORE);
        let inv = &r["invalid"][0];
        assert_eq!(inv["file"], "content/posts/third.md", "{r}");
        assert!(inv["error"].as_str().unwrap().contains(key), "{front}: {r}");
    }
    // In a later run, against the spelling already published: the new file is held.
    let t = fixture("features");
    t.publish(BEFORE);
    t.write(
        "content/posts/fourth.md",
        "+++\ntitle = \"Fourth\"\npublish_at = 2026-11-05T09:00:00Z\ntags = [\"RUST\"]\n+++\nx\n",
    );
    let r = publish_held(&t, BEFORE);
    let inv = r["invalid"].to_string();
    assert!(
        inv.contains("content/posts/fourth.md") && inv.contains("content/posts/hello.md"),
        "{r}"
    );
    assert_eq!(r["published"], serde_json::json!([]), "{r}");
    // A collection naming a taxonomy that does not exist is refused at config load.
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    s.write(
        "fencepost.toml",
        &cfg.replace("taxonomies = [\"tags\"]", "taxonomies = [\"topics\"]"),
    );
    assert!(s
        .failing(&["build", "--now", BEFORE])
        .contains("collections.posts.taxonomies"));
}

/// Issue 47.2: a YAML alias bomb (542 bytes, nine levels of nine aliases: 387 million values)
/// is an invalid file named with its line, held alone, and everything else publishes — under a
/// 2 GiB address-space cap, as a small CI runner has. It used to take every publish down
/// (out of memory: 7 levels already took 1.1 GB). The same front matter is refused by import.
#[test]
fn a_yaml_alias_bomb_is_one_invalid_file_not_a_dead_publish() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    let mut bomb = String::from("---\nid: 2\nday: 2026-11-02\ntitle: Bomb\nprice: 1\n");
    bomb += "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
    for (i, c) in ('b'..='i').enumerate() {
        let p = (b'a' + i as u8) as char;
        bomb += &format!("{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n");
    }
    bomb += "---\nBody.\n";
    s.write("content/answers/2.md", &bomb);
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 2097152; exec \"$0\" \"$@\"")
        .arg(bin())
        .args(["--site"])
        .arg(s.root())
        .args(["publish", "--json", "--now", NOW])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "publish died: {:?} {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(ids(&v, "published"), vec![1], "{v}");
    let bad = &v["invalid"][0];
    assert_eq!(bad["file"], "content/answers/2.md", "{v}");
    let error = bad["error"].as_str().unwrap();
    assert!(
        error.contains("expands to more than 100000 values") && error.contains("answers/2.md:"),
        "{error}"
    );
}
