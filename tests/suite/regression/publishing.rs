//! Regressions of publishing, building and deploying: a failed build after a publish, collection
//! typos, embargoes, notices, a lost ledger, expiries, credentials, scheduled updates, verify.
use super::*;

/// Guards: a failed build never hides what publish did.
///
/// Issue 34.12: `publish --build` whose build fails still prints, and returns in JSON, what
/// was published.
#[test]
fn publish_build_that_fails_still_reports_the_publish() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    // A required template gone fails the whole build (one that does not parse only holds
    // the pages that use it: `build::template_errors_hold_only_their_pages…`).
    std::fs::remove_file(s.path("templates/404.html")).unwrap();
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
    assert_eq!(code, HELD, "{r}");
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
    assert_eq!(code, HELD, "{r}");
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
    let r = publish_held(&s, "2026-12-01T12:00:00Z");
    assert_eq!(
        ids(&r, "withdrawn"),
        Vec::<i64>::new(),
        "not before its expiry: {r}"
    );
    let r = publish_held(&s, "2026-12-02T00:00:00Z");
    assert_eq!(ids(&r, "expired"), [1], "{r}");
    assert_eq!(r["invalid"][0]["file"], "content/answers/1.md", "{r}");
}

/// Guards: a published item with an expiry still to come is counted unchanged, once.
///
/// Issue 52 (found measuring publish's count): `unchanged` left such an item out of the
/// published count and subtracted it again as a candidate, so it came out short by them.
#[test]
fn an_item_with_an_expiry_to_come_counts_as_unchanged() {
    let s = TestSite::new();
    s.item(1, "2026-11-01").item(2, "2026-11-02");
    s.item_with(
        3,
        "2026-11-03",
        "expire_at = 2027-01-31T00:00:00Z\n",
        "Gone in January.",
    );
    let mut published = ids(&s.publish(NOW), "published");
    published.sort();
    assert_eq!(published, [1, 2, 3]);
    let r = s.publish("2026-12-01T00:05:00Z");
    assert_eq!(r["unchanged"], 3, "{r}");
    // An edit to another item: that one is updated, the other two stay unchanged.
    s.item_with(1, "2026-11-01", "", "Edited.");
    let r = s.publish("2026-12-01T00:10:00Z");
    assert_eq!(ids(&r, "updated"), [1], "{r}");
    assert_eq!(r["unchanged"], 2, "{r}");
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
