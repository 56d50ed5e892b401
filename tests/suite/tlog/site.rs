//! A site's own log, as builds write it and deploys publish it, read back by software
//! fencepost did not write.

use super::checkers;
use crate::common::*;
use base64::Engine;
use fencepost_tlog::entry::{commitment, ChangeKind, Entry};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The features site keeping a log signed with `keys`: its posts committed to before their
/// instant, its advisories revealed as they go public.
pub fn logged_site(keys: &fencepost_tlog::note::KeyPair) -> TestSite {
    let s = fixture("features");
    let toml = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    let toml = toml
        .replacen(
            "taxonomies = [\"tags\"]\n",
            "taxonomies = [\"tags\"]\ncommit_before_reveal = true\n",
            1,
        )
        .replacen(
            "on_withdraw = \"notice\"\n",
            "on_withdraw = \"notice\"\ncommit_before_reveal = true\n",
            1,
        );
    s.write(
        "fencepost.toml",
        &format!("{toml}\n[transparency]\nlog = true\nskey_file = \".tlog-skey\"\n\n[serve]\npointer_ttl_ms = 0\n"),
    );
    s.write(".tlog-skey", &format!("{}\n", keys.skey));
    s
}

/// The log's entries as tlog-scales read them from `url` (every one proven in the tree, each
/// older checkpoint proven a prefix).
fn read_by_tlog_scales(url: &str, vkey: &str, olds: &[PathBuf]) -> Vec<Entry> {
    let out = checkers::run_tlog_scales(url, vkey, olds);
    assert_success(&out);
    let read: Value = serde_json::from_slice(&out.stdout).unwrap();
    read["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(e.as_str().unwrap())
                .unwrap();
            Entry::parse(&bytes).unwrap()
        })
        .collect()
}

fn save_checkpoint(s: &TestSite, name: &str) -> (PathBuf, u64) {
    let bytes =
        std::fs::read(s.current_dir().join(".well-known/fencepost/log/checkpoint")).unwrap();
    let size = String::from_utf8_lossy(&bytes)
        .lines()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let saved = s.path(name);
    std::fs::write(&saved, bytes).unwrap();
    (saved, size)
}

/// `tlog verify URL --vkey V --since SAVED`, expected to hold.
fn verify_since(s: &TestSite, url: &str, vkey: &str, since: &Path) -> Value {
    s.json(&[
        "tlog",
        "verify",
        url,
        "--vkey",
        vkey,
        "--since",
        since.to_str().unwrap(),
    ])
}

/// docs/transparency.md's digest of a revision's files, from the folder as a reader who
/// mirrored the site holds it: every file but the log's own and the build's bookkeeping, in
/// path order, as `path NUL hex-sha256 LF`.
fn files_digest(dir: &Path) -> String {
    use sha2::{Digest, Sha256};
    let mut files: Vec<(String, String)> = tree(dir)
        .into_iter()
        .filter(|(rel, _)| {
            !rel.starts_with(".well-known/fencepost/log/") && !rel.starts_with(".fencepost/")
        })
        .map(|(rel, bytes)| (rel, fencepost_core::digest::sha256_hex(&bytes)))
        .collect();
    files.sort();
    let mut h = Sha256::new();
    for (path, sha) in files {
        h.update(format!("{path}\0{sha}\n"));
    }
    hex::encode(h.finalize())
}

/// The first file under `dir` whose bytes hold `needle`, for the leak check.
fn holds_anywhere(dir: &Path, needle: &str) -> Option<String> {
    files_under(dir)
        .into_iter()
        .find(|(_, b)| String::from_utf8_lossy(b).contains(needle))
        .map(|(name, _)| name)
}

/// The feature site's log through three deploys to a bucket: before `posts/secret`'s instant
/// (its commitment, blind: nothing in `public/` or the bucket names it), at its instant (its
/// reveal, naming the commitment logged a deploy earlier), and after an edit, a withdrawal and
/// its expiry (three change entries). tlog-scales reads the log over HTTP from `serve --from`
/// and proves both earlier checkpoints consistent with the last; sha256(salt ‖ the JSON served)
/// is the commitment published before the instant; Go's sumdb/tlog reads the same tiles;
/// `tlog verify --since` holds; and a tile tampered in the bucket fails it.
#[test]
fn a_sites_log_through_three_deploys_is_checked_by_tlog_scales_and_go_from_serve_from() {
    let keys = fencepost_tlog::note::generate("example.org/features").unwrap();
    let s = logged_site(&keys);
    let bucket = s.path("bucket");
    let folder = format!("file://{}", bucket.display());
    let deploy = |now: &str| {
        s.json(&["publish", "--build", "--now", now]);
        s.json(&["deploy", "--to", &folder, "--now", now]);
    };
    deploy(BEFORE);
    let (c1, size1) = save_checkpoint(&s, "c1");
    nothing_names_the_item_before_its_instant(&s, &bucket);

    deploy("2026-12-02T09:00:00Z");
    let (c2, size2) = save_checkpoint(&s, "c2");
    let origin = s.serve(&["--from", &folder]);
    let base = format!("http://{}/.well-known/fencepost", origin.addr);
    the_reveal_opens_the_commitment_logged_before(&origin, &base, &keys.vkey, &c1, size1);

    edit_and_withdraw(&s);
    deploy("2026-12-06T00:00:00Z");
    let olds = [c1.clone(), c2.clone()];
    let entries = changes_are_logged(&origin, &base, &keys.vkey, &olds, size2);
    verify_holds_and_the_last_entry_names_the_files(
        &s,
        &origin,
        &keys.vkey,
        (&c1, size1),
        &entries,
    );
    let log = s.current_dir().join(".well-known/fencepost/log");
    let go = checkers::run_go(&log, &keys.vkey, &[c1, c2]);
    assert_success(&go);
    assert!(String::from_utf8_lossy(&go.stdout).starts_with(&format!("ok {}", entries.len())));
    drop(origin);
    a_flipped_tile_is_never_served(&s, &bucket, &folder, &keys.vkey);
}

/// Before its instant nothing in `public/` or the bucket names the item (its commitment is
/// blind).
fn nothing_names_the_item_before_its_instant(s: &TestSite, bucket: &Path) {
    for needle in ["Zeppelin", "airship", "posts/secret", "secret.json"] {
        for dir in [s.path("public"), bucket.to_path_buf()] {
            let found = holds_anywhere(&dir, needle);
            assert!(
                found.is_none(),
                "{needle:?} is in {found:?} before its instant"
            );
        }
    }
}

/// The reveal names the commitment logged a deploy earlier (in the log of checkpoint `c1`),
/// and sha256(salt ‖ the JSON served) is that commitment.
fn the_reveal_opens_the_commitment_logged_before(
    origin: &Server,
    base: &str,
    vkey: &str,
    c1: &Path,
    size1: u64,
) {
    let entries = read_by_tlog_scales(&format!("{base}/log"), vkey, &[c1.to_path_buf()]);
    let (index, salt) = entries
        .iter()
        .find_map(|e| match e {
            Entry::Reveal { item, commit, salt } if item == "posts/secret" => {
                Some((*commit, *salt))
            }
            _ => None,
        })
        .expect("the reveal of posts/secret");
    assert!(
        index < size1,
        "committed before its instant, in the log of c1"
    );
    let json = origin.get("/.well-known/fencepost/items/posts/secret.json");
    assert_eq!(json.status, 200);
    let Entry::Commit { commit } = &entries[index as usize] else {
        panic!(
            "entry {index} is not a commitment: {:?}",
            entries[index as usize]
        );
    };
    assert_eq!(&commitment(&salt, &json.body), commit);
    let item: Value = serde_json::from_slice(&json.body).unwrap();
    assert_eq!(item["title"], "Zeppelin launch");
    assert_eq!(item["date"], "2026-12-02T09:00:00Z");
}

/// An edit of one item and the withdrawal of another, in the content.
fn edit_and_withdraw(s: &TestSite) {
    let hello = std::fs::read_to_string(s.path("content/posts/hello.md")).unwrap();
    s.write(
        "content/posts/hello.md",
        &format!("{hello}\nA line added later.\n"),
    );
    let adv = std::fs::read_to_string(s.path("content/advisories/adv-1.md")).unwrap();
    s.write(
        "content/advisories/adv-1.md",
        &adv.replacen("severity", "withdrawn = true\nseverity", 1),
    );
}

/// The edit, the withdrawal and the expiry each logged as a change; the JSON served follows.
/// Returns every entry of the log.
fn changes_are_logged(
    origin: &Server,
    base: &str,
    vkey: &str,
    olds: &[PathBuf],
    size2: u64,
) -> Vec<Entry> {
    let entries = read_by_tlog_scales(&format!("{base}/log"), vkey, olds);
    let changes: Vec<(String, ChangeKind)> = entries[size2 as usize..]
        .iter()
        .filter_map(|e| match e {
            Entry::Change { item, change, .. } => Some((item.clone(), *change)),
            _ => None,
        })
        .collect();
    for want in [
        ("posts/hello", ChangeKind::Update),
        ("advisories/adv-1", ChangeKind::Withdraw),
        ("posts/secret", ChangeKind::Expire),
    ] {
        assert!(
            changes.contains(&(want.0.to_string(), want.1)),
            "{want:?} in {changes:?}"
        );
    }
    let hello_json = origin.get("/.well-known/fencepost/items/posts/hello.json");
    assert!(String::from_utf8_lossy(&hello_json.body).contains("A line added later."));
    assert_eq!(
        origin
            .get("/.well-known/fencepost/items/posts/secret.json")
            .status,
        404
    );

    entries
}

/// `tlog verify --since c1` holds, and the last revision entry names the files the revision
/// serves, recomputed from them.
fn verify_holds_and_the_last_entry_names_the_files(
    s: &TestSite,
    origin: &Server,
    vkey: &str,
    (c1, size1): (&Path, u64),
    entries: &[Entry],
) {
    let verify = s.json(&[
        "tlog",
        "verify",
        &format!("http://{}/", origin.addr),
        "--vkey",
        vkey,
        "--since",
        c1.to_str().unwrap(),
    ]);
    assert_eq!(verify["consistent_with"], size1);
    assert!(verify["revealed"]
        .as_array()
        .unwrap()
        .contains(&Value::from("posts/hello")));

    // The last revision entry names the files the revision serves: recomputed from them.
    let Some(Entry::Revision { manifest, .. }) = entries.last() else {
        panic!("the log ends with a revision entry");
    };
    assert_eq!(manifest, &files_digest(&s.current_dir()));
}

/// One bit of a tile flipped in the bucket: the origin never serves it, the check fails.
fn a_flipped_tile_is_never_served(s: &TestSite, bucket: &Path, folder: &str, vkey: &str) {
    let manifest: Value = serde_json::from_slice(
        &std::fs::read(s.current_dir().join(".fencepost/manifest.json")).unwrap(),
    )
    .unwrap();
    let tile = manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| {
            e["path"]
                .as_str()
                .unwrap()
                .starts_with(".well-known/fencepost/log/tile/0/")
        })
        .unwrap();
    let blob = bucket.join(fencepost_bucket::remote::Remote::blob_key(
        tile["sha256"].as_str().unwrap(),
    ));
    let mut bytes = std::fs::read(&blob).unwrap();
    bytes[0] ^= 1;
    std::fs::write(&blob, bytes).unwrap();
    let origin = s.serve(&["--from", folder]);
    let failed = s.failing(&[
        "tlog",
        "verify",
        &format!("http://{}/", origin.addr),
        "--vkey",
        vkey,
    ]);
    assert!(failed.contains("tile"), "{failed}");
}

/// A page changed by editing the ledger directly (no publish: no change entry) is what `tlog
/// watch` exists for: the next build serves the new JSON, and the monitor names the item.
#[test]
fn tlog_watch_reports_an_item_changed_in_the_ledger_behind_the_logs_back() {
    let keys = fencepost_tlog::note::generate("example.org/features").unwrap();
    let s = logged_site(&keys);
    s.json(&["publish", "--build", "--now", "2026-12-02T09:00:00Z"]);
    let origin = s.serve(&[]);
    let url = format!("http://{}/", origin.addr);
    let state = s.path("watch");
    let state_arg = state.to_str().unwrap();
    s.json(&[
        "tlog", "watch", &url, "--vkey", &keys.vkey, "--state", state_arg,
    ]);

    let forged =
        r#"{"collection":"posts","id":"hello","title":"Hello, fences","body":"Rewritten."}"#;
    let digest = fencepost_core::digest::sha256_hex(forged.as_bytes());
    let ledger = s.ledger();
    ledger
        .execute(
            "UPDATE tlog_items SET json = ?1, json_digest = ?2 WHERE item_id = (SELECT id FROM items WHERE item_key = 'hello')",
            rusqlite::params![forged, digest],
        )
        .unwrap();
    ledger
        .execute(
            "UPDATE site_state SET publication_revision = publication_revision + 1",
            [],
        )
        .unwrap();
    drop(ledger);
    s.json(&["build", "--now", "2026-12-02T10:00:00Z"]);
    assert_eq!(
        origin
            .get("/.well-known/fencepost/items/posts/hello.json")
            .body,
        forged.as_bytes()
    );
    let out = s
        .cmd(&[
            "tlog", "watch", &url, "--vkey", &keys.vkey, "--state", state_arg,
        ])
        .arg("--json")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("posts/hello"), "{text}");
}

/// A revision whose log does not extend the bucket's (the log started over in the ledger, so
/// its tree differs) is refused before anything is uploaded, as another ledger's bucket is;
/// the live revision stays.
#[test]
fn a_deploy_whose_log_does_not_extend_the_buckets_is_refused() {
    let keys = fencepost_tlog::note::generate("example.org/features").unwrap();
    let s = logged_site(&keys);
    let folder = format!("file://{}", s.path("bucket").display());
    s.json(&["publish", "--build", "--now", BEFORE]);
    s.json(&["deploy", "--to", &folder, "--now", BEFORE]);
    let live = std::fs::read(s.path("bucket/current")).unwrap();
    let ledger = s.ledger();
    ledger
        .execute_batch(
            "DELETE FROM tlog_entries; UPDATE tlog_items SET commit_index = NULL, shown = NULL;
             UPDATE site_state SET tlog_revision = 0, publication_revision = publication_revision + 1;",
        )
        .unwrap();
    drop(ledger);
    s.json(&["build", "--now", BEFORE]);
    let err = s.failing(&["deploy", "--to", &folder, "--now", BEFORE]);
    assert!(err.contains("does not extend"), "{err}");
    assert_eq!(std::fs::read(s.path("bucket/current")).unwrap(), live);
}

/// The log never goes back when a site's inputs go back: a build with other templates appends
/// its revision entry; the build after the templates are restored finds the first folder of
/// that revision older than the log, builds it again and replaces it (it is not live), and
/// every checkpoint served extends the one before.
///
/// Guards: a folder of the same revision and inputs, built before the log grew, pointed to
/// again with its shorter log.
#[test]
fn templates_changed_and_changed_back_never_take_the_log_back() {
    let keys = fencepost_tlog::note::generate("example.org/features").unwrap();
    let s = logged_site(&keys);
    s.json(&["publish", "--build", "--now", BEFORE]);
    let (first, size1) = save_checkpoint(&s, "c1");
    let base = std::fs::read_to_string(s.path("templates/base.html")).unwrap();
    s.write(
        "templates/base.html",
        &base.replacen("<body", "<!-- B2 --><body", 1),
    );
    s.json(&["build", "--now", BEFORE]);
    let (second, size2) = save_checkpoint(&s, "c2");
    assert_eq!(size2, size1 + 1, "one revision entry");
    s.write("templates/base.html", &base);
    let r = s.json(&["build", "--now", BEFORE]);
    assert_eq!(r["already_built"], false, "{r}");
    let (_, size3) = save_checkpoint(&s, "c3");
    assert_eq!(size3, size2 + 1);
    let origin = s.serve(&[]);
    let url = format!("http://{}/", origin.addr);
    for since in [first, second] {
        verify_since(&s, &url, &keys.vkey, &since);
    }
}

/// A rollback appends: the folder rolled back to is re-issued with the log brought to it (the
/// item it did not have yet withdrawn, the edited one updated back to its old JSON, then its
/// revision entry), so the checkpoint served after the rollback extends every one before, and
/// the JSON served is what the log vouches for; the next publication appends the way forward.
#[test]
fn a_rollback_appends_to_the_log_and_never_takes_it_back() {
    let keys = fencepost_tlog::note::generate("example.org/features").unwrap();
    let s = logged_site(&keys);
    let first = s.json(&["publish", "--build", "--now", BEFORE]);
    let first = format!(
        "{}-{}",
        first["build"]["revision"],
        first["build"]["build"].as_str().unwrap()
    );
    let hello = std::fs::read_to_string(s.path("content/posts/hello.md")).unwrap();
    s.write("content/posts/hello.md", &format!("{hello}\nEdited.\n"));
    s.json(&["publish", "--build", "--now", "2026-12-02T09:00:00Z"]);
    let (before, size) = save_checkpoint(&s, "before-rollback");
    let r = s.json(&["rollback", &first]);
    assert_eq!(r["to"]["dir"], first.as_str(), "{r}");
    let (after, size_after) = save_checkpoint(&s, "after-rollback");
    let origin = s.serve(&[]);
    let url = format!("http://{}/", origin.addr);
    let log = s.current_dir().join(".well-known/fencepost/log");
    let entries = read_by_tlog_scales(log.to_str().unwrap(), &keys.vkey, &[before.clone()]);
    assert_eq!(entries.len() as u64, size_after);
    let appended: Vec<String> = entries[size as usize..]
        .iter()
        .map(|e| e.to_text().lines().take(3).collect::<Vec<_>>().join(" "))
        .collect();
    let has = |what: &str| appended.iter().any(|e| e.contains(what));
    assert!(has("item posts/secret change withdraw"), "{appended:?}");
    assert!(has("item posts/hello change update"), "{appended:?}");
    assert!(appended
        .last()
        .unwrap()
        .starts_with("fencepost/revision/v1"));
    verify_since(&s, &url, &keys.vkey, &before);
    let hello_json = origin.get("/.well-known/fencepost/items/posts/hello.json");
    assert!(!String::from_utf8_lossy(&hello_json.body).contains("Edited."));

    s.write(
        "content/posts/second.md",
        &std::fs::read_to_string(s.path("content/posts/second.md"))
            .unwrap()
            .replace("No summary", "A summary"),
    );
    s.json(&["publish", "--build", "--now", "2026-12-03T00:00:00Z"]);
    verify_since(&s, &url, &keys.vkey, &after);
}

/// `rollback --to` a bucket appends too: the revision rolled back to is re-issued there under
/// a new root with the log brought to it, so `serve --from` answers a checkpoint that extends
/// the one served before, the post it did not have withdrawn in the log; the next deploy
/// extends that one in turn.
#[test]
fn a_bucket_rollback_appends_to_the_log_it_serves() {
    let keys = fencepost_tlog::note::generate("example.org/features").unwrap();
    let s = logged_site(&keys);
    let folder = format!("file://{}", s.path("bucket").display());
    let first = s.json(&["publish", "--build", "--now", BEFORE]);
    s.json(&["deploy", "--to", &folder, "--now", BEFORE]);
    s.json(&["publish", "--build", "--now", "2026-12-02T09:00:00Z"]);
    s.json(&["deploy", "--to", &folder, "--now", "2026-12-02T09:00:00Z"]);
    let (before, size) = save_checkpoint(&s, "before-rollback");
    let revision = first["build"]["revision"].to_string();
    let r = s.json(&["rollback", &revision, "--to", &folder]);
    assert_eq!(r["outcome"], "deployed", "{r}");
    let origin = s.serve(&["--from", &folder]);
    let url = format!("http://{}/", origin.addr);
    let base = format!("{url}.well-known/fencepost/log");
    let entries = read_by_tlog_scales(&base, &keys.vkey, &[before.clone()]);
    let appended: Vec<String> = entries[size as usize..]
        .iter()
        .map(Entry::to_text)
        .collect();
    assert!(
        appended
            .iter()
            .any(|e| e.contains("item posts/secret\nchange withdraw")),
        "{appended:?}"
    );
    assert!(appended
        .last()
        .unwrap()
        .starts_with("fencepost/revision/v1"));
    assert_eq!(
        origin
            .get("/.well-known/fencepost/items/posts/secret.json")
            .status,
        404
    );
    verify_since(&s, &url, &keys.vkey, &before);
    let now: Value =
        serde_json::from_slice(&std::fs::read(s.path("bucket/current")).unwrap()).unwrap();
    assert_eq!(now["revision"], first["build"]["revision"], "{now}");
}
