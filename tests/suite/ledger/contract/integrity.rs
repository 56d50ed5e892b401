//! What a ledger refuses: another site's commands, writes against the one-way rules, a
//! tampered audit chain, a newer schema.
use super::*;

/// Issue 46.1: one ledger, one site, on every engine. Another site pointed at this site's
/// ledger (`FENCEPOST_LEDGER` set for a whole organisation, a copied workflow) is refused
/// before it writes anything, naming both sites; a checkout of this site (the same
/// repository, the same `ledger.site_id`) works.
pub(super) fn a_ledger_refuses_another_sites_commands_before_they_write(b: Backend) {
    let a = TestSite::on(b);
    a.item(1, "2026-11-01");
    a.publish(NOW);
    let ledger = match b {
        Backend::Sqlite => a.path(".fencepost/ledger.sqlite").display().to_string(),
        _ => a.ledger_url().unwrap(),
    };
    let env = vec![("FENCEPOST_LEDGER".to_string(), ledger)];
    let other = TestSite::new();
    other.item(2, "2026-11-02");
    let audit = |s: &TestSite| run(s, &["log", "--limit", "1000"], &env).1["entries"].clone();
    let before = audit(&a);
    let (code, v) = run(&other, &["publish", "--build", "--now", NOW], &env);
    assert_eq!(code, Some(1), "{v}");
    let m = v["error"]["message"].as_str().unwrap();
    assert!(
        m.contains(&a.site_id().unwrap()) && m.contains(&other.site_id().unwrap()),
        "{m}"
    );
    assert!(!other.path("public/current").exists());
    assert_eq!(audit(&a), before, "nothing was written");
    let (code, v) = run(&a, &["status"], &env);
    assert_eq!((code, v["revision"].clone()), (Some(0), 1.into()), "{v}");
    // The same site from another checkout.
    let (code, v) = run(&a.checkout(), &["publish", "--now", NOW], &env);
    assert_eq!(code, Some(0), "{v}");
}

pub(super) fn the_one_way_rules_hold_in_sql_against_a_confused_writer(b: Backend) {
    // Straight at the ledger: a writer that skips the Rust-side rule still cannot undo them.
    let s = TestSite::on(b);
    s.write(
        "content/images/a.svg",
        "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n",
    );
    s.item_with(1, "2026-11-01", "image = \"images/a.svg\"\n", "first");
    s.publish(NOW);
    let now = at(NOW);
    let mut l = open(&s);
    let held = take(&mut l, 1, now).unwrap();
    let source_hash = l
        .read(|tx| Ok(items::view(tx, ItemId(1))?.unwrap().source_hash))
        .unwrap();
    s.execute("UPDATE pages SET source_hash = 'old' WHERE item_id = 1");
    let c = Commit {
        id: ItemId(1),
        name: ItemName::new("answers", "1"),
        action: Action::Update,
        lease: held,
        expected_state: State::Published,
        expected_version: 1,
        source_hash,
        page: Some(PageFields {
            indexable: false,
            ..page("<p>confused</p>")
        }),
        notice: false,
        token: "tok".into(),
    };
    assert_eq!(
        l.write(|tx| pages::commit(tx, &c, now, DueCheck::AsGiven))
            .unwrap()
            .outcome,
        Outcome::Updated
    );
    let page = s.ledger_item("1").page.unwrap();
    assert!(page.indexable, "an indexable page never returns to noindex");
    assert!(
        page.image_sha256.is_some(),
        "a page that has its image keeps it"
    );
    s.cmd(&["verify"]).assert().success();
}

pub(super) fn the_audit_chain_verifies_and_tampering_is_named(b: Backend) {
    let s = TestSite::on(b);
    s.item(1, "2026-11-01")
        .item(2, "2026-11-02")
        .item(3, "2026-11-03");
    s.publish(NOW);
    let v = s.json(&["verify"]);
    assert_eq!(v["intact"], true);
    assert_eq!(v["entries"], 3);
    s.execute("UPDATE audit_log SET subject = 'item:99' WHERE seq = 2");
    let out = s.cmd(&["verify", "--json"]).output().unwrap();
    assert!(!out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["first_break"]["seq"], 2, "{v}");
    s.execute("UPDATE audit_log SET subject = 'item:2' WHERE seq = 2");
    s.cmd(&["verify"]).assert().success();
    // A truncated tail links up, but does not reach the anchor.
    s.execute("DELETE FROM audit_log WHERE seq = 3");
    let out = s.cmd(&["verify", "--json"]).output().unwrap();
    assert!(!out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["first_break"]["reason"]
            .as_str()
            .unwrap()
            .contains("truncated"),
        "{v}"
    );
}

pub(super) fn a_newer_schema_is_refused_and_left_untouched(b: Backend) {
    let s = TestSite::on(b);
    s.item(1, "2026-11-01");
    s.publish(NOW);
    match b {
        Backend::Sqlite => s.execute("PRAGMA user_version = 99"),
        Backend::Postgres => s.execute("UPDATE fencepost_schema SET version = 99"),
        // A newer binary migrates a bucket ledger with an entry: the whole database.
        Backend::Bucket => newer_binarys_migration_entry(&s),
        Backend::D1 => newer_binarys_migration_entry_in_d1(&s),
    }
    let err = s.failing(&["publish", "--now", NOW]);
    assert!(err.contains("newer than this fencepost"), "{err}");
    // A fresh runner is refused as well.
    std::fs::remove_dir_all(s.path(".fencepost/ledger-cache")).ok();
    let err = s.failing(&["status"]);
    assert!(err.contains("newer than this fencepost"), "{err}");
    // Untouched: still version 99, still one page.
    let version = match b {
        Backend::Sqlite => s.query_i64("PRAGMA user_version"),
        Backend::Postgres => s.query_i64("SELECT version FROM fencepost_schema"),
        Backend::D1 => {
            // The newest entry is still the newer binary's, and nothing followed it.
            let head = with_d1(s.root(), |d| d.rows("SELECT seq FROM fp_head", vec![]));
            let seq = head[0]["seq"].as_i64().unwrap();
            let writer = with_d1(s.root(), |d| {
                d.rows(
                    "SELECT writer FROM fp_log WHERE seq = ?1 AND part = 0",
                    vec![seq.into()],
                )
            });
            return assert_eq!(writer[0]["writer"], "a-newer-fencepost");
        }
        Backend::Bucket => {
            let log = s.path(".bucket/ledger/log");
            let last = std::fs::read_dir(&log)
                .unwrap()
                .map(|e| e.unwrap().path())
                .max()
                .unwrap();
            let c = rusqlite::Connection::open(last).unwrap();
            assert_eq!(
                c.query_row("SELECT count(*) FROM pages", [], |r| r.get::<_, i64>(0))
                    .unwrap(),
                1
            );
            return assert_eq!(
                c.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))
                    .unwrap(),
                99
            );
        }
    };
    assert_eq!(version, 99);
    // (SQL: fencepost refuses to open a ledger from the future, by design.)
    assert_eq!(s.query_i64("SELECT count(*) FROM pages"), 1);
}

/// Writes, as the next entry of a bucket ledger's log, what a newer fencepost's migration
/// would: the whole database, at schema 99.
fn newer_binarys_migration_entry(s: &TestSite) {
    // The newest entry's number is its file name (entries are 20-digit, zero-padded).
    let seq: i64 = std::fs::read_dir(s.path(".bucket/ledger/log"))
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str()?.parse().ok())
        .max()
        .unwrap();
    let image = s.path(&format!(".bucket/ledger/log/{:020}", seq + 1));
    std::fs::rename(schema_99_image(s, seq + 1), image).unwrap();
}

/// The replica as a newer fencepost's migration would leave it: schema 99, standing at
/// entry `seq`. Returns the image file.
fn schema_99_image(s: &TestSite, seq: i64) -> std::path::PathBuf {
    let c = rusqlite::Connection::open(s.replica_file()).unwrap();
    let staged = s.path(".staged-99.sqlite");
    c.execute(&format!("VACUUM INTO '{}'", staged.display()), [])
        .unwrap();
    let n = rusqlite::Connection::open(&staged).unwrap();
    n.execute_batch(&format!(
        "PRAGMA journal_mode = DELETE; PRAGMA user_version = 99; UPDATE fp_replica SET seq = {seq};"
    ))
    .unwrap();
    staged
}

/// [`newer_binarys_migration_entry`] in a D1 log: the image as the next entry's parts, the
/// head moved, in one batch — as a newer fencepost would commit it.
fn newer_binarys_migration_entry_in_d1(s: &TestSite) {
    use base64::Engine as _;
    let seq = with_d1(s.root(), |d| d.rows("SELECT seq FROM fp_head", vec![]))[0]["seq"]
        .as_i64()
        .unwrap();
    let bytes = std::fs::read(schema_99_image(s, seq + 1)).unwrap();
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    let sha = fencepost_core::digest::sha256_hex(&bytes);
    with_d1(s.root(), |d| {
        d.batch(&[
            (
                "UPDATE fp_head SET seq = ?1 WHERE id = 1",
                vec![(seq + 1).into()],
            ),
            (
                "INSERT INTO fp_log (seq, part, parts, bytes, sha256, writer, data) VALUES (?1, 0, 1, ?2, ?3, 'a-newer-fencepost', ?4)",
                vec![(seq + 1).into(), bytes.len().into(), sha.into(), data.into()],
            ),
        ])
        .unwrap();
    });
}
