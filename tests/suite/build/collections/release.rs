//! A site and ledger made by the release before collections keep their output byte for byte,
//! on SQLite and PostgreSQL.
use super::*;

/// The expected output of `tests/fixtures/previous_release`, as `sha256sum` lines.
fn expected(name: &str) -> String {
    std::fs::read_to_string(fixture_dir("previous_release").join(name)).unwrap()
}

fn output_hashes(s: &TestSite) -> String {
    let dir = s.current_dir();
    let mut files: Vec<String> = walkdir::WalkDir::new(&dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().strip_prefix(&dir).unwrap().display().to_string())
        .filter(|p| !p.starts_with(".fencepost/"))
        .collect();
    files.sort_by(|a, b| format!("./{a}").cmp(&format!("./{b}")));
    files
        .iter()
        .map(|p| {
            let bytes = std::fs::read(dir.join(p)).unwrap();
            use sha2::Digest;
            format!("{}  ./{p}\n", hex::encode(sha2::Sha256::digest(&bytes)))
        })
        .collect()
}

/// Every file as the release before made it, but `atom.xml`: issue 21 made the feed valid
/// Atom (RFC 4287: a feed author, `published`, typed links), so its bytes changed on purpose,
/// to the hash given (the same entries; `tests/site_features.rs` validates it). And the
/// sitemaps: issue 36 made an entry's `lastmod` the item's own date (when it was due, or its
/// last change after that), not the day a publisher committed it; `as_written.rs` holds that.
/// (The 2029 feed changed with it too: the items published late there are dated by their
/// due instants now, not by that publish.)
fn same_but_the_feed(now: &str, before: &str, feed_now: &str) {
    let strip = |t: &str| -> String {
        t.lines()
            .filter(|l| !l.ends_with("  ./atom.xml") && !l.contains("  ./sitemaps/"))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    assert_eq!(strip(now), strip(before));
    assert!(now.contains(&format!("{feed_now}  ./atom.xml\n")), "{now}");
}

/// A site and ledger made by the release before collections (the demo at 2027-06-01, built
/// into `expected-*.txt` by that release, published on to 2029 by it for the second file):
/// this release keeps every page byte for byte and every revision, and the chain verifies.
/// A copy of the site and ledger the release before made, on `b`'s engine.
fn previous_release(b: Backend) -> TestSite {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture_dir("previous_release/site"), dir.path());
    let s = TestSite { dir };
    if b == Backend::Postgres {
        std::fs::remove_file(s.path(".fencepost/ledger.sqlite")).unwrap();
        let url = pg().database();
        let dump =
            std::fs::read_to_string(fixture_dir("previous_release/postgres-ledger.sql")).unwrap();
        Pg::client(&url).batch_execute(&dump).unwrap();
        s.set_ledger_url(&url);
    }
    s
}

/// How many items a publish reads as possibly due (`items.candidates`), and how many the
/// ledger holds that are not published (the candidates they must be).
fn candidates_and_unpublished(s: &TestSite) -> (usize, i64) {
    let candidates = s.read(fencepost_ledger::items::candidate_views);
    let items = &s.json(&["status"])["items"];
    let unpublished = ["failed", "pending", "processing", "withdrawn"]
        .iter()
        .map(|k| items[k].as_i64().unwrap())
        .sum();
    (candidates.len(), unpublished)
}

fn the_previous_release_keeps_its_output(b: Backend) {
    let s = previous_release(b);
    let r = s.publish("2027-06-01T00:00:00Z");
    assert!(r["published"].as_array().unwrap().is_empty(), "{r}");
    assert_eq!(r["revision"], 35);
    // Opening the ledger migrated it to the page hash kept on each item (issue 52,
    // `0014_candidates.sql`), filled in from the pages: no published item is read back as a
    // candidate.
    let (candidates, unpublished) = candidates_and_unpublished(&s);
    assert_eq!(candidates as i64, unpublished);
    let built = build_at(&s, "2027-06-01T00:00:00Z", &[]);
    assert_eq!(built["revision"], 35);
    same_but_the_feed(
        &output_hashes(&s),
        &expected("expected-2027-06-01.txt"),
        "a3747b42f41a15315b80624d6450df93d8a8fc8f3792b353c128c167e639b967",
    );
    s.cmd(&["verify"]).assert().success();
    // Items published from here on get heading ids by default (issue 21); with them off,
    // this release renders new items exactly as the release before did.
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    s.write(
        "fencepost.toml",
        &format!("{cfg}\n[markdown]\nheading_ids = false\n"),
    );
    let r = s.publish("2029-01-01T00:00:00Z");
    assert_eq!(r["published"], serde_json::json!([36, 37, 38, 39, 40]));
    let built = build_at(&s, "2029-01-01T00:00:00Z", &[]);
    assert_eq!(built["revision"], 40);
    same_but_the_feed(
        &output_hashes(&s),
        &expected("expected-2029-01-01.txt"),
        "866fbfe90dd1acd3c363e9f4b3c6909a5cbf1220d062f9468dd31d717c47865e",
    );
    s.cmd(&["verify"]).assert().success();
}

#[test]
fn the_previous_release_keeps_its_output_on_sqlite() {
    the_previous_release_keeps_its_output(Backend::Sqlite);
}

#[test]
fn the_previous_release_keeps_its_output_on_postgres() {
    the_previous_release_keeps_its_output(Backend::Postgres);
}

/// The migration fills in each item's page hash from its page: an edit of a page the release
/// before published is then an update, at once (an item whose hash stayed empty would be read
/// as a candidate every run and never as current).
fn an_edit_after_the_migration_is_published(b: Backend) {
    let s = previous_release(b);
    s.publish("2027-06-01T00:00:00Z");
    let file = s.path("content/answers/3.md");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("{text}\nEdited after the upgrade.\n")).unwrap();
    let r = s.publish("2027-06-01T00:01:00Z");
    assert_eq!(r["updated"], serde_json::json!([3]), "{r}");
    build_at(&s, "2027-06-01T00:01:00Z", &[]);
    let page = std::fs::read_to_string(s.current_dir().join("answers/3/index.html")).unwrap();
    assert!(page.contains("Edited after the upgrade."), "{page}");
    let (candidates, unpublished) = candidates_and_unpublished(&s);
    assert_eq!(candidates as i64, unpublished);
}

#[test]
fn an_edit_after_the_migration_is_published_on_sqlite() {
    an_edit_after_the_migration_is_published(Backend::Sqlite);
}

#[test]
fn an_edit_after_the_migration_is_published_on_postgres() {
    an_edit_after_the_migration_is_published(Backend::Postgres);
}
