//! The ledger contract's conformance suite: every test here runs against SQLite and against
//! PostgreSQL (a throw-away cluster the tests start), through the real binary where a
//! command is the contract and through the library where the contract is the ledger API.
//! Concurrency uses separate OS processes (or, for two transactions held open at chosen
//! moments, two connections).
use crate::common::*;
use fencepost::clock::Instant;
use fencepost::item::ItemName;
use fencepost::ledger::items::ItemId;
use fencepost::ledger::items::{Action, Claim, State};
use fencepost::ledger::lease::{self, Fence, LeaseKey, OwnerId};
use fencepost::ledger::pages::{self, Commit, DueCheck, Outcome, PageFields};
use fencepost::ledger::{items, public, Ledger, Location};
use std::collections::BTreeSet;
use std::time::Duration;

/// Generates `mod sqlite { #[test] fn name() }`, `mod postgres { … }`, `mod bucket { … }` and
/// `mod d1 { … }`
/// for each test body `fn name(b: Backend)`.
macro_rules! conformance {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[test] fn $name() { super::$name(super::Backend::Sqlite) })*
        }
        mod postgres {
            $(#[test] fn $name() { super::$name(super::Backend::Postgres) })*
        }
        mod bucket {
            $(#[test] fn $name() { super::$name(super::Backend::Bucket) })*
        }
        mod d1 {
            $(#[test] fn $name() { super::$name(super::Backend::D1) })*
        }
    };
}

conformance!(
    leases_have_one_holder_and_the_fence_grows_on_expiry,
    an_owner_gives_back_all_its_leases_at_once_and_its_guards_then_fail,
    racing_processes_over_one_due_item_publish_it_once,
    two_racing_commits_of_one_page_exactly_one_wins,
    a_takeover_between_preflight_and_commit_is_lease_lost_and_writes_nothing,
    the_one_way_rules_hold_in_sql_against_a_confused_writer,
    the_audit_chain_verifies_and_tampering_is_named,
    racing_result_reports_get_dense_unique_slots,
    racing_publishers_with_skewed_clocks_publish_every_item_once,
    a_newer_schema_is_refused_and_left_untouched,
    deploys_and_remote_rollbacks_are_journaled_and_audited,
    collections_and_slug_ids_hold_the_contract,
    racing_processes_publish_once_and_expire_once,
    a_target_keyed_by_its_bare_name_goes_to_its_endpoints_key_once,
    a_ledger_refuses_another_sites_commands_before_they_write,
    a_page_due_after_the_ledgers_own_clock_is_not_written,
    the_transparency_log_reads_back_the_tree_it_appended,
    the_pages_since_a_revision_bring_its_pages_to_the_snapshots,
);

mod since;
use since::the_pages_since_a_revision_bring_its_pages_to_the_snapshots;

/// Issue 50: the transparency log's tables on every engine. A commitment to a pending item's
/// JSON is recorded once per JSON (the same JSON keeps its salt); a commit batch records the
/// JSON of the page it wrote; 300 entries appended in two transactions read back as the tree
/// `tlog::tiles::Tree` makes of them — root and every tile, through the stored hashes alone —
/// and a second writer of an index is refused.
fn the_transparency_log_reads_back_the_tree_it_appended(b: Backend) {
    use fencepost::ledger::transparency::{self as tl, Hashes};
    let s = TestSite::on(b);
    let source_hash = embargoed_item(&s);
    let mut l = open(&s);
    let name = ItemName::new("answers", "1");
    let (salt, other) = ("00".repeat(32), "11".repeat(32));
    l.write(|tx| tl::record_pending(tx, &name, "{\"a\":1}", &salt, &"aa".repeat(32)))
        .unwrap();
    l.write(|tx| tl::record_pending(tx, &name, "{\"a\":1}", &other, &"bb".repeat(32)))
        .unwrap();
    let unlogged = l.read(tl::unlogged_commitments).unwrap();
    assert_eq!(unlogged, vec![(ItemId(1), salt, "aa".repeat(32))]);

    let now = at("2026-12-21T01:00:00Z");
    let held = take(&mut l, 1, now).unwrap();
    assert!(l
        .write(|tx| items::claim(tx, Claim::Publish, ItemId(1), &held, now))
        .unwrap());
    let c = Commit {
        id: ItemId(1),
        name: name.clone(),
        action: Action::Publish,
        lease: held,
        expected_state: State::Processing,
        expected_version: 0,
        source_hash: Some(source_hash),
        page: Some(PageFields {
            item_json: Some("{\"b\":2}".into()),
            ..page("body")
        }),
        notice: false,
        token: "token-json".into(),
    };
    let r = l
        .write(|tx| pages::commit(tx, &c, now, DueCheck::AsGiven))
        .unwrap();
    assert_eq!(r.outcome, Outcome::Published);
    assert_eq!(
        l.read(|tx| tl::json(tx, ItemId(1))).unwrap().as_deref(),
        Some("{\"b\":2}")
    );
    let changed = l.read(|tx| tl::changed_pages(tx, 0)).unwrap();
    assert_eq!(changed.len(), 1);
    assert_eq!(changed[0].json.as_deref(), Some("{\"b\":2}"));
    assert_eq!(
        changed[0].commitment.as_deref(),
        Some("aa".repeat(32).as_str())
    );

    let entries: Vec<String> = (0..300)
        .map(|i| format!("fencepost/test/v1\nindex {i}\n"))
        .collect();
    assert_eq!(l.write(|tx| tl::append(tx, &entries[..100])).unwrap(), 100);
    assert_eq!(l.write(|tx| tl::append(tx, &entries[100..])).unwrap(), 300);
    let tree = fencepost::tlog::tiles::Tree::of(&entries).unwrap();
    let (root, tiles) = l
        .read(|tx| {
            let h = Hashes::new(tx);
            let root = tlog_tiles::tree_hash(300, &h).map_err(|e| h.error(e))?;
            let tiles: Vec<Vec<u8>> = tlog_tiles::Tile::new_tiles(8, 0, 300)
                .iter()
                .map(|t| t.read_data(&h).unwrap())
                .collect();
            Ok((root, tiles))
        })
        .unwrap();
    assert_eq!(root, tree.root());
    let want: Vec<Vec<u8>> = tree.tiles_since(0).into_iter().map(|(_, b)| b).collect();
    assert_eq!(tiles, want);
    assert_eq!(
        l.read(|tx| tl::entries(tx, 298, 300)).unwrap(),
        entries[298..].to_vec()
    );
    let again = l.write(|tx| {
        tx.exec(
            "tlog.append",
            fencepost::args! { "idx" => 0i64, "entry" => "x", "hashes" => "" },
        )
    });
    assert!(again.is_err(), "{again:?}");
}

/// Issue 46.1: one ledger, one site, on every engine. Another site pointed at this site's
/// ledger (`FENCEPOST_LEDGER` set for a whole organisation, a copied workflow) is refused
/// before it writes anything, naming both sites; a checkout of this site (the same
/// repository, the same `ledger.site_id`) works.
fn a_ledger_refuses_another_sites_commands_before_they_write(b: Backend) {
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

/// Issue 35.5: rows a ledger keyed by a target's bare name before the endpoint was part of
/// the key go to the first endpoint's key that asks, once, and never over rows of its own.
fn a_target_keyed_by_its_bare_name_goes_to_its_endpoints_key_once(b: Backend) {
    use fencepost::ledger::deploys;
    let s = TestSite::on(b);
    let mut l = open(&s);
    let (bare, one, two) = (
        "s3://x/www",
        "s3://x/www via http://127.0.0.1:1",
        "s3://x/www via http://127.0.0.1:2",
    );
    l.write(|tx| deploys::mark_probed(tx, bare, bare, at(NOW)))
        .unwrap();
    assert!(l.write(|tx| deploys::rename_legacy(tx, bare, one)).unwrap() > 0);
    assert_eq!(
        l.write(|tx| deploys::rename_legacy(tx, bare, two)).unwrap(),
        0
    );
    l.write(|tx| deploys::mark_probed(tx, bare, bare, at(NOW)))
        .unwrap();
    assert_eq!(
        l.write(|tx| deploys::rename_legacy(tx, bare, one)).unwrap(),
        0,
        "the key has rows of its own"
    );
    let targets: Vec<String> = l
        .read(deploys::targets)
        .unwrap()
        .into_iter()
        .map(|t| t.target)
        .collect();
    assert_eq!(targets, [bare, one]);
}

/// An item with `expire_at`: racing processes publish it once at its instant and withdraw
/// it once at its expiry — one revision and one audit entry each — and `next_change_at`
/// names the publication, then the expiry, then nothing.
fn racing_processes_publish_once_and_expire_once(b: Backend) {
    let s = TestSite::on(b);
    // Day 2026-11-30 is due at 2026-12-01T00:10:00Z (end of day + 10 minutes' grace).
    s.item_with(
        1,
        "2026-11-30",
        "expire_at = 2026-12-03T00:00:00Z\n",
        "Soon gone.",
    );
    let r = s.publish("2026-12-01T00:00:00Z");
    assert_eq!(r["next_change_at"], "2026-12-01T00:10:00Z", "{r}");
    let race = |now: &str| -> Vec<serde_json::Value> {
        let children: Vec<_> = (0..5).map(|_| s.spawn_publish(now, &[], &[])).collect();
        children.into_iter().map(finish).collect()
    };
    let reports = race("2026-12-01T00:10:00Z");
    let published: Vec<i64> = reports.iter().flat_map(|r| ids(r, "published")).collect();
    assert_eq!(published, vec![1], "{reports:?}");
    assert_eq!(s.revision(), 1);
    let b = s.build(&[]);
    assert_eq!(b["next_change_at"], "2026-12-03T00:00:00Z", "{b}");
    // A second before the expiry nothing happens.
    let r = s.publish("2026-12-02T23:59:59Z");
    assert_eq!(r["withdrawn"], serde_json::json!([]), "{r}");
    let reports = race("2026-12-03T00:00:00Z");
    let withdrawn: Vec<i64> = reports.iter().flat_map(|r| ids(r, "withdrawn")).collect();
    assert_eq!(withdrawn, vec![1], "{reports:?}");
    let expired: Vec<i64> = reports.iter().flat_map(|r| ids(r, "expired")).collect();
    assert_eq!(expired, vec![1], "{reports:?}");
    assert_eq!(s.revision(), 2);
    assert_eq!(s.audit().len(), 2);
    // Nothing is left to happen: a later run changes nothing and names no next change.
    let r = s.publish("2026-12-04T00:00:00Z");
    assert_eq!(r["withdrawn"], serde_json::json!([]), "{r}");
    assert!(r["next_change_at"].is_null(), "{r}");
    assert_eq!(s.revision(), 2);
    s.cmd(&["verify"]).assert().success();
    // Moving the expiry later brings it back, once.
    s.item_with(
        1,
        "2026-11-30",
        "expire_at = 2026-12-09T00:00:00Z\n",
        "Soon gone.",
    );
    let reports = race("2026-12-05T00:00:00Z");
    let published: Vec<i64> = reports.iter().flat_map(|r| ids(r, "published")).collect();
    assert_eq!(published, vec![1], "{reports:?}");
    assert_eq!(s.revision(), 3);
}

/// A site with two collections: `notes` (integer ids) and `posts` (slug ids from file names,
/// a declared field and [extra]). Both have an item with id 1.
fn collections_site(b: Backend) -> TestSite {
    let s = TestSite::on(b);
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    s.write(
        "fencepost.toml",
        &format!(
            "{cfg}\n[collections.notes]\nid = \"integer\"\ntemplate = \"item.html\"\n\n[collections.posts]\nurl = \"/posts/{{year}}/{{id}}/\"\ntemplate = \"item.html\"\ndue = \"start_of_day\"\n[collections.posts.fields]\nsummary = {{ type = \"string\", required = true }}\n"
        ),
    );
    s.write(
        "templates/item.html",
        "{% extends \"base.html\" %}{% block content %}<h1>{{ page.title }}</h1>{% if page.summary %}<p>{{ page.summary }}</p>{% endif %}{{ page.body_html | safe }}{% endblock content %}",
    );
    s.write(
        "content/notes/1.md",
        "+++\nid = 1\nday = 2026-11-01\ntitle = \"Note one\"\n+++\nA note.\n",
    );
    s.write(
        "content/posts/1.md",
        "+++\nday = 2026-11-02\ntitle = \"Post one\"\nsummary = \"first\"\n+++\nA post.\n",
    );
    s.write(
        "content/posts/hello-world.md",
        "+++\nday = 2026-11-03\ntitle = \"Hello\"\nsummary = \"hi\"\n[extra]\nmood = \"glad\"\n+++\nHello.\n",
    );
    s
}

/// Collections and slug ids: racing processes publish each item once, named
/// `collection/id`; a change to a declared field alone is an update (the content hash covers
/// it); pages carry their collection, id and fields; the chain verifies.
fn collections_and_slug_ids_hold_the_contract(b: Backend) {
    let s = collections_site(b);
    let children: Vec<_> = (0..4).map(|_| s.spawn_publish(NOW, &[], &[])).collect();
    let reports: Vec<serde_json::Value> = children.into_iter().map(finish).collect();
    let mut published: Vec<String> = reports
        .iter()
        .flat_map(|r| {
            r["published"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    published.sort();
    assert_eq!(
        published,
        vec!["notes/1", "posts/1", "posts/hello-world"],
        "{reports:#?}"
    );
    assert_eq!(s.revision(), 3);
    assert_eq!(
        s.public_pages()
            .iter()
            .filter(|p| &*p.collection == "posts" && p.key == "hello-world")
            .map(|p| p.data.to_string())
            .collect::<Vec<_>>(),
        vec![r#"{"extra":{"mood":"glad"},"summary":"hi"}"#]
    );
    // Only a declared field changes: an update, a new revision.
    let p = s.path("content/posts/hello-world.md");
    let text = std::fs::read_to_string(&p).unwrap();
    std::fs::write(&p, text.replace("summary = \"hi\"", "summary = \"hello\"")).unwrap();
    let r = s.publish(NOW);
    assert_eq!(
        r["updated"],
        serde_json::json!(["posts/hello-world"]),
        "{r}"
    );
    assert_eq!(s.revision(), 4);
    // Retry names an item by collection/id.
    s.cmd(&["publish", "--now", NOW, "--retry", "notes/1"])
        .assert()
        .success();
    let out = s
        .cmd(&["publish", "--now", NOW, "--retry", "notes/9"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("no item notes/9"));
    s.cmd(&["verify"]).assert().success();
    // A file removed: its page withdrawn, by name.
    std::fs::remove_file(s.path("content/posts/1.md")).unwrap();
    let r = s.publish(NOW);
    assert_eq!(r["withdrawn"], serde_json::json!(["posts/1"]), "{r}");
    assert_eq!(
        s.public_pages()
            .iter()
            .filter(|p| &*p.collection == "notes" && p.key == "1" && !p.withdrawn)
            .count(),
        1
    );
}

/// `ledger copy` carries collections, ids and fields; new items on the copy take fresh row ids.
#[test]
fn ledger_copy_carries_collections() {
    let s = collections_site(Backend::Sqlite);
    s.publish(NOW);
    s.build(&[]);
    let before = tree(&s.current_dir());
    let url = pg().database();
    let r = s.json(&["ledger", "copy", "--to", &url]);
    assert_eq!(r["verified"], true, "{r}");
    s.set_ledger_url(&url);
    std::fs::rename(s.path("public"), s.path("public-from-sqlite")).unwrap();
    s.build(&[]);
    assert_same_tree(&before, &tree(&s.current_dir()), "build after the copy");
    s.write(
        "content/posts/two.md",
        "+++\nday = 2026-11-04\ntitle = \"Two\"\nsummary = \"2\"\n+++\n",
    );
    let r = s.publish(NOW);
    assert_eq!(r["published"], serde_json::json!(["posts/two"]), "{r}");
    s.cmd(&["verify"]).assert().success();
}

fn location(s: &TestSite) -> Location {
    match s.ledger_url() {
        Some(url) => Location::parse(&url, s.root()).unwrap(),
        None => Location::Sqlite(s.path(".fencepost/ledger.sqlite")),
    }
}

fn open(s: &TestSite) -> Ledger {
    Ledger::open_at(&location(s), Duration::from_secs(30)).unwrap()
}

fn at(t: &str) -> Instant {
    Instant::parse_rfc3339(t).unwrap()
}

fn leases_have_one_holder_and_the_fence_grows_on_expiry(b: Backend) {
    let s = TestSite::on(b);
    let mut l = open(&s);
    let k = LeaseKey::Deploy("conformance");
    let (a, o) = (OwnerId::random(), OwnerId::random());
    let t0 = at(NOW);
    let take = |l: &mut Ledger, who: &OwnerId, t: Instant| {
        l.write(|tx| lease::acquire(tx, &k, who, t, 60)).unwrap()
    };
    let la = take(&mut l, &a, t0).expect("a free key is taken");
    assert_eq!(la.fence, Fence(1));
    assert!(
        take(&mut l, &o, t0.plus_secs(59)).is_none(),
        "a live lease never changes hands"
    );
    let lo = take(&mut l, &o, t0.plus_secs(60)).expect("an expired lease changes hands");
    assert_eq!(lo.fence, Fence(2));
    l.write(|tx| {
        assert!(
            !lease::lock(tx, &la, t0.plus_secs(60))?,
            "the old holder's lock finds nothing"
        );
        assert!(lease::lock(tx, &lo, t0.plus_secs(60))?);
        assert!(
            !lease::release(tx, &la, t0.plus_secs(61))?,
            "the old holder cannot release it"
        );
        assert!(lease::release(tx, &lo, t0.plus_secs(61))?);
        Ok(())
    })
    .unwrap();
    assert_eq!(take(&mut l, &a, t0.plus_secs(61)).unwrap().fence, Fence(3));
}

/// `fencepost run` abandoning its work at the shutdown deadline: every live lease of its owner
/// is freed for the next run, no other owner's lease is touched, and the abandoned holder's
/// guarded writes find nothing.
fn an_owner_gives_back_all_its_leases_at_once_and_its_guards_then_fail(b: Backend) {
    let s = TestSite::on(b);
    let mut l = open(&s);
    let (a, o) = (OwnerId::random(), OwnerId::random());
    let t0 = at(NOW);
    let take = |l: &mut Ledger, k: LeaseKey<'_>, who: &OwnerId| {
        l.write(|tx| lease::acquire(tx, &k, who, t0, 600))
            .unwrap()
            .expect("a free key is taken")
    };
    let a1 = take(&mut l, LeaseKey::Deploy("one"), &a);
    let a2 = take(&mut l, LeaseKey::Image("https://example.test/x.png"), &a);
    let o1 = take(&mut l, LeaseKey::Deploy("two"), &o);
    let t1 = t0.plus_secs(1);
    let n = l.write(|tx| lease::release_owner(tx, &a, t1)).unwrap();
    assert_eq!(n, 2, "both of a's live leases");
    l.write(|tx| {
        assert!(!lease::lock(tx, &a1, t1)?, "a's guard finds nothing");
        assert!(!lease::lock(tx, &a2, t1)?);
        assert!(
            lease::extend(tx, &a1, t1, 600)?.is_none(),
            "nor can a extend it"
        );
        assert!(lease::lock(tx, &o1, t1)?, "o's lease is untouched");
        Ok(())
    })
    .unwrap();
    // The next holder takes a's keys at once, with a higher fence.
    let next = l
        .write(|tx| lease::acquire(tx, &LeaseKey::Deploy("one"), &o, t1, 600))
        .unwrap()
        .expect("free at once");
    assert!(next.fence > a1.fence);
    assert_eq!(l.write(|tx| lease::release_owner(tx, &a, t1)).unwrap(), 0);
}

/// Racing OS processes over one lease (one due item): exactly one holder publishes.
fn racing_processes_over_one_due_item_publish_it_once(b: Backend) {
    let s = TestSite::on(b);
    s.item(1, "2026-11-01");
    let children: Vec<_> = (0..6).map(|_| s.spawn_publish(NOW, &[], &[])).collect();
    let reports: Vec<_> = children.into_iter().map(finish).collect();
    let published: Vec<i64> = reports.iter().flat_map(|r| ids(r, "published")).collect();
    assert_eq!(published, vec![1], "{reports:?}");
    assert_eq!(s.revision(), 1);
    assert_eq!(s.audit().len(), 1);
    // Every change of hands bumped the fence (a process that planned before the winner
    // committed may take the released lease, find the item current and let it go): at most
    // once per process, and the lease is free now.
    let fence = s.fence("publication:1").unwrap();
    assert!((1..=6).contains(&fence), "fence {fence}");
    assert_eq!(s.status()["leases"], 0);
}

/// An item in the ledger, embargoed (the scan records it; nothing publishes it yet).
fn embargoed_item(s: &TestSite) -> String {
    s.item(1, "2026-12-20");
    s.publish(NOW);
    let mut l = open(s);
    l.read(|tx| Ok(items::view(tx, ItemId(1))?.unwrap().source_hash.unwrap()))
        .unwrap()
}

/// Takes item `id`'s publication lease for 60 s at `t` (a fresh owner); `None` if held.
fn take(l: &mut Ledger, id: i64, t: Instant) -> Option<lease::Lease> {
    lease::acquire_all(
        l,
        &[LeaseKey::Publication(ItemId(id))],
        &OwnerId::random(),
        t,
        60,
    )
    .unwrap()
    .remove(0)
}

fn page(body: &str) -> PageFields {
    PageFields {
        title: "t".into(),
        day: "2026-12-20".into(),
        data: r#"{"price":"1.00"}"#.into(),
        body_html: body.into(),
        summary_html: None,
        terms: String::new(),
        image_source: None,
        image_sha256: None,
        indexable: true,
        due_at: at("2026-12-21T00:10:00Z"),
        item_json: None,
    }
}

fn two_racing_commits_of_one_page_exactly_one_wins(b: Backend) {
    let s = TestSite::on(b);
    let source_hash = embargoed_item(&s);
    let now = at("2026-12-21T01:00:00Z");
    let held = {
        let mut l = open(&s);
        let held = take(&mut l, 1, now).unwrap();
        assert!(l
            .write(|tx| items::claim(tx, Claim::Publish, ItemId(1), &held, now))
            .unwrap());
        held
    };
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
    let loc = location(&s);
    let handles: Vec<_> = ["alpha", "beta"]
        .into_iter()
        .map(|body| {
            let (loc, held, source_hash, barrier) = (
                loc.clone(),
                held.clone(),
                source_hash.clone(),
                barrier.clone(),
            );
            std::thread::spawn(move || {
                let mut l = Ledger::open_at(&loc, Duration::from_secs(30)).unwrap();
                let c = Commit {
                    id: ItemId(1),
                    name: ItemName::new("answers", "1"),
                    action: Action::Publish,
                    lease: held,
                    expected_state: State::Processing,
                    expected_version: 0,
                    source_hash: Some(source_hash),
                    page: Some(page(body)),
                    notice: false,
                    token: format!("token-{body}"),
                };
                barrier.wait();
                l.write(|tx| pages::commit(tx, &c, now, DueCheck::AsGiven))
                    .unwrap()
                    .outcome
            })
        })
        .collect();
    let outcomes: Vec<Outcome> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(
        outcomes
            .iter()
            .filter(|o| **o == Outcome::Published)
            .count(),
        1,
        "{outcomes:?}"
    );
    assert_eq!(
        outcomes.iter().filter(|o| **o == Outcome::Conflict).count(),
        1,
        "{outcomes:?}"
    );
    assert_eq!(s.revision(), 1);
    assert_eq!(s.audit().len(), 1);
    assert_eq!(s.ledger_item("1").page.unwrap().content_version, 1);
}

fn a_takeover_between_preflight_and_commit_is_lease_lost_and_writes_nothing(b: Backend) {
    let s = TestSite::on(b);
    let source_hash = embargoed_item(&s);
    let t0 = at("2026-12-21T01:00:00Z");
    let mut l = open(&s);
    let a = take(&mut l, 1, t0).unwrap();
    assert!(l
        .write(|tx| items::claim(tx, Claim::Publish, ItemId(1), &a, t0))
        .unwrap());
    // A's lease runs out during its slow work; B takes over with the next fence.
    let later = t0.plus_secs(61);
    let b2 = take(&mut l, 1, later).unwrap();
    assert_eq!(b2.fence, Fence(a.fence.0 + 1));
    let c = Commit {
        id: ItemId(1),
        name: ItemName::new("answers", "1"),
        action: Action::Publish,
        lease: a,
        expected_state: State::Processing,
        expected_version: 0,
        source_hash: Some(source_hash),
        page: Some(page("stale")),
        notice: false,
        token: "stale-token".into(),
    };
    let r = l
        .write(|tx| pages::commit(tx, &c, later, DueCheck::AsGiven))
        .unwrap();
    assert_eq!(r.outcome, Outcome::LeaseLost);
    assert_eq!(s.pages(), 0);
    assert!(
        s.read(|tx| public::body(tx, ItemId(1))).is_none(),
        "no body either"
    );
    assert_eq!(s.audit().len(), 0);
    assert_eq!(s.revision(), 0);
    // Nor can the old holder record a failure or park the item.
    assert!(!l
        .write(|tx| items::record_failure(tx, ItemId(1), "x", &c.lease, 5, later))
        .unwrap());
    assert!(!l
        .write(|tx| items::claim(tx, Claim::Park, ItemId(1), &c.lease, later))
        .unwrap());
}

/// Issue 47.8: the page statement checks the due instant by the ledger's own clock where it
/// has one. A commit decided with an instant far ahead (a host clock stepped, a `--now` in
/// the future) of a page due in 2099: on PostgreSQL it is `NotDue` and writes nothing (no
/// page, body, audit entry or revision), and `not_yet_due` puts the item back to pending
/// with its attempt given back; the same commit with the calendar simulated
/// (`DueCheck::AsGiven`) publishes. SQLite's and the bucket's clock is the host's: the
/// instant the command decided by stands there.
fn a_page_due_after_the_ledgers_own_clock_is_not_written(b: Backend) {
    let s = TestSite::on(b);
    let source_hash = embargoed_item(&s);
    let t = at("2099-01-01T01:00:00Z");
    let mut l = open(&s);
    let lease = take(&mut l, 1, t).unwrap();
    assert!(l
        .write(|tx| items::claim(tx, Claim::Publish, ItemId(1), &lease, t))
        .unwrap());
    let attempts = |l: &mut Ledger| {
        l.read(|tx| Ok(items::view(tx, ItemId(1))?.unwrap()))
            .map(|v| (v.state, v.attempts))
            .unwrap()
    };
    let (_, claimed) = attempts(&mut l);
    let c = Commit {
        id: ItemId(1),
        name: ItemName::new("answers", "1"),
        action: Action::Publish,
        lease,
        expected_state: State::Processing,
        expected_version: 0,
        source_hash: Some(source_hash),
        page: Some(PageFields {
            due_at: at("2099-01-01T00:00:00Z"),
            ..page("early")
        }),
        notice: false,
        token: "early-token".into(),
    };
    let r = l
        .write(|tx| pages::commit(tx, &c, t, DueCheck::ByLedger))
        .unwrap();
    if b != Backend::Postgres {
        assert_eq!(r.outcome, Outcome::Published, "{b:?}");
        return;
    }
    assert_eq!(r.outcome, Outcome::NotDue);
    assert_eq!(s.pages(), 0);
    assert!(s.read(|tx| public::body(tx, ItemId(1))).is_none());
    assert_eq!(s.audit().len(), 0);
    assert_eq!(s.revision(), 0);
    assert!(l
        .write(|tx| items::not_yet_due(tx, ItemId(1), &c.lease, t))
        .unwrap());
    assert_eq!(attempts(&mut l), (State::Pending, claimed - 1));
    assert!(l
        .write(|tx| items::claim(tx, Claim::Publish, ItemId(1), &c.lease, t))
        .unwrap());
    let r = l
        .write(|tx| pages::commit(tx, &c, t, DueCheck::AsGiven))
        .unwrap();
    assert_eq!(r.outcome, Outcome::Published);
    assert_eq!(s.revision(), 1);
}

fn the_one_way_rules_hold_in_sql_against_a_confused_writer(b: Backend) {
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

fn the_audit_chain_verifies_and_tampering_is_named(b: Backend) {
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

fn racing_result_reports_get_dense_unique_slots(b: Backend) {
    let s = TestSite::on(b);
    s.json(&["status"]); // creates the ledger before the race
    let children: Vec<_> = (0..16)
        .map(|i| {
            fencepost()
                .arg("--site")
                .arg(s.root())
                .args([
                    "results",
                    "add",
                    "--json",
                    "--puzzle",
                    "9",
                    "--outcome",
                    "win",
                ])
                .args(["--guesses", "2", "--session"])
                .arg(format!("s{}", i % 13)) // three sessions report twice
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut slots = Vec::new();
    let mut dupes = 0;
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert_success(&out);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        if v["inserted"] == true {
            slots.push(v["slot"].as_i64().unwrap());
        } else {
            assert_eq!(v["reason"], "duplicate", "{v}");
            dupes += 1;
        }
    }
    slots.sort();
    assert_eq!(slots, (1..=13).collect::<Vec<_>>());
    assert_eq!(dupes, 3);
    // The duplicates took no slot: the next session's report gets the 14th.
    let next = s.json(&[
        "results",
        "add",
        "--puzzle",
        "9",
        "--outcome",
        "win",
        "--guesses",
        "2",
        "--session",
        "s-next",
    ]);
    assert_eq!(next["slot"], 14, "{next}");
}

/// Every id in `key` across the reports, asserting none appears twice.
fn union_no_dupes(reports: &[serde_json::Value], key: &str) -> BTreeSet<i64> {
    let mut all = BTreeSet::new();
    for r in reports {
        for id in ids(r, key) {
            assert!(
                all.insert(id),
                "item {id} was {key} by two processes: {reports:?}"
            );
        }
    }
    all
}

/// Four publishers at once whose clocks disagree by up to seven seconds (hosts with skewed
/// clocks; with PostgreSQL and no `--now` they would use the database's).
fn race_skewed(s: &TestSite, base: &str) -> Vec<serde_json::Value> {
    let t = at(base);
    let children: Vec<_> = [0i64, 2, 5, 7]
        .iter()
        .map(|skew| s.spawn_publish(&Instant(t.0 + skew * 1000).rfc3339(), &[], &[]))
        .collect();
    children.into_iter().map(finish).collect()
}

fn racing_publishers_with_skewed_clocks_publish_every_item_once(b: Backend) {
    let s = TestSite::on(b);
    // Small batches make the processes interleave on the lease table.
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    s.write(
        "fencepost.toml",
        &cfg.replace("[publish]\n", "[publish]\nbatch_size = 4\n"),
    );
    let days = ["2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04"];
    let per_day = 30;
    for (d, day) in days.iter().enumerate() {
        for k in 0..per_day {
            s.item((d * per_day + k + 1) as i64, day);
        }
    }
    // Round r runs just after day r's embargo ends, so 30 more items are due each round.
    let rounds = [
        "2026-11-02T00:10:00Z",
        "2026-11-03T00:10:00Z",
        "2026-11-04T00:10:00Z",
        "2026-11-05T00:10:00Z",
    ];
    let mut expected = BTreeSet::new();
    for (r, now) in rounds.iter().enumerate() {
        let reports = race_skewed(&s, now);
        let published = union_no_dupes(&reports, "published");
        let new: BTreeSet<i64> = ((r * per_day + 1) as i64..=((r + 1) * per_day) as i64).collect();
        assert_eq!(published, new, "round {r}");
        expected.extend(new);
        for rep in &reports {
            assert!(
                ids(rep, "lease_lost").is_empty() && ids(rep, "conflict").is_empty(),
                "{rep}"
            );
        }
        assert_eq!(s.revision(), expected.len() as i64);
    }
    assert_eq!(s.pages(), 120);
    assert_eq!(s.audit().len(), 120);
    assert_eq!(
        s.items()
            .iter()
            .filter_map(|i| i.page.as_ref())
            .map(|p| p.content_version)
            .max()
            .unwrap(),
        1
    );
    s.cmd(&["verify"]).assert().success();

    // Nothing to do: nothing changes.
    for rep in &race_skewed(&s, rounds[3]) {
        assert!(
            ids(rep, "published").is_empty() && ids(rep, "updated").is_empty(),
            "{rep}"
        );
    }
    assert_eq!(s.revision(), 120);

    // Edits, withdrawals and removals, then racing re-runs: one revision per public change.
    for id in 1..=10 {
        s.item_with(id, "2026-11-01", "", &format!("Edited body {id}."));
    }
    for id in 11..=15 {
        s.item_with(id, "2026-11-01", "withdrawn = true\n", "gone");
    }
    for id in 16..=20 {
        std::fs::remove_file(s.path(&format!("content/answers/{id}.md"))).unwrap();
    }
    let reports = race_skewed(&s, rounds[3]);
    assert_eq!(union_no_dupes(&reports, "updated"), (1..=10).collect());
    assert_eq!(union_no_dupes(&reports, "withdrawn"), (11..=20).collect());
    assert!(union_no_dupes(&reports, "published").is_empty());
    assert_eq!(s.revision(), 140);
    for rep in &race_skewed(&s, rounds[3]) {
        assert!(
            ids(rep, "updated").is_empty() && ids(rep, "withdrawn").is_empty(),
            "{rep}"
        );
    }
    assert_eq!(s.revision(), 140);
    assert_eq!(s.audit().len(), 140);
    s.cmd(&["verify"]).assert().success();
    // This host's stat cache (in the ledger on SQLite, in a file of its own beside a shared
    // one) lets a rerun skip every unchanged file, once the files are older than the racy
    // window (a file modified within it is always read again).
    std::thread::sleep(fencepost::content::RACY_WINDOW + Duration::from_millis(200));
    let r = s.publish(rounds[3]);
    assert_eq!(r["files_read"], 0, "{r}");
    // The build reads the same ledger: 110 public pages.
    let built = s.build(&[]);
    assert_eq!(built["revision"], 140, "{built}");
}

fn a_newer_schema_is_refused_and_left_untouched(b: Backend) {
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
    let sha = fencepost::digest::sha256_hex(&bytes);
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

/// Under READ COMMITTED an in-statement guard reads its statement's snapshot and locks
/// nothing. Schedule: a fence-1 writer runs its guarded statement while its lease is live,
/// stalls before committing; its lease expires and another host takes over (fence 2); then
/// the stalled writer commits. The naive form lets that write land after fence 2 was granted;
/// fencepost's form (the lease row locked first) makes the takeover wait for the writer, so
/// every fence-1 write commits before fence 2 exists, and a fence-1 writer that comes back
/// after the takeover changes nothing.
#[test]
fn postgres_naive_guard_lets_a_stale_fence_commit_and_the_locked_form_does_not() {
    let s = TestSite::on(Backend::Postgres);
    s.item(1, "2026-12-20").item(2, "2026-12-20");
    s.publish(NOW);
    let url = s.ledger_url().unwrap();
    let loc = location(&s);
    let t0 = at("2026-12-21T01:00:00Z");
    let (live, expired) = (t0.plus_secs(59), t0.plus_secs(61));
    let take_fresh = |id: i64, t: Instant| {
        take(
            &mut Ledger::open_at(&loc, Duration::from_secs(30)).unwrap(),
            id,
            t,
        )
    };

    // 1. The naive guard.
    let a = take_fresh(1, t0).unwrap();
    let mut writer = Pg::client(&url);
    let mut tx = writer.transaction().unwrap();
    let n = tx
        .execute(
            "UPDATE items SET last_error = 'written under fence 1' WHERE id = 1
               AND EXISTS (SELECT 1 FROM job_leases WHERE key = $1 AND owner_id = $2
                           AND fence = $3 AND expires_at > $4)",
            &[&a.key, &a.owner.0, &a.fence.0, &live.0],
        )
        .unwrap();
    assert_eq!(n, 1, "the guard passed while the lease was live");
    // The takeover is not held up by the open writer: nothing is locked.
    let started = std::time::Instant::now();
    let b = take_fresh(1, expired).expect("the takeover succeeds at once");
    assert_eq!(b.fence, Fence(2));
    assert!(started.elapsed() < Duration::from_secs(2));
    tx.commit().unwrap();
    assert_eq!(
        s.query_i64(
            "SELECT count(*) FROM items WHERE id = 1 AND last_error = 'written under fence 1'"
        ),
        1,
        "the naive guard let a fence-1 write commit after fence 2 was granted"
    );

    // 2. fencepost's form, the same schedule on item 2.
    let a = take_fresh(2, t0).unwrap();
    let (to_main, from_writer) = std::sync::mpsc::channel::<bool>();
    let (to_writer, from_main) = std::sync::mpsc::channel::<()>();
    let (wloc, wa) = (loc.clone(), a.clone());
    let writer = std::thread::spawn(move || {
        let mut l = Ledger::open_at(&wloc, Duration::from_secs(30)).unwrap();
        l.write(|tx| {
            let wrote =
                items::record_failure(tx, ItemId(2), "written under fence 1", &wa, 99, live)?;
            to_main.send(wrote).unwrap();
            // Stall inside the transaction until the takeover has been tried.
            from_main.recv().unwrap();
            Ok(wrote)
        })
        .unwrap()
    });
    assert!(
        from_writer.recv().unwrap(),
        "the guard passed while the lease was live"
    );
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let tloc = loc.clone();
    let taker = std::thread::spawn(move || {
        let mut l = Ledger::open_at(&tloc, Duration::from_secs(30)).unwrap();
        let got = take(&mut l, 2, expired);
        done_tx.send(()).unwrap();
        got
    });
    assert!(
        done_rx.recv_timeout(Duration::from_millis(800)).is_err(),
        "the takeover must wait for the writer that holds the lease row"
    );
    to_writer.send(()).unwrap();
    assert!(writer.join().unwrap());
    let b = taker
        .join()
        .unwrap()
        .expect("the takeover succeeds once the writer is done");
    assert_eq!(b.fence, Fence(2));
    // The fence-1 write committed before fence 2 existed; a fence-1 writer that comes back
    // now finds its lease lost and writes nothing.
    let mut l = open(&s);
    assert!(!l
        .write(|tx| items::record_failure(tx, ItemId(2), "late fence 1", &a, 99, live))
        .unwrap());
    assert_eq!(
        s.query_i64(
            "SELECT count(*) FROM items WHERE id = 2 AND last_error = 'written under fence 1'"
        ),
        1
    );
}

/// `ledger copy`: publish on SQLite, copy into an empty PostgreSQL database, carry on there.
/// The first build from PostgreSQL, into an empty output folder, is byte-identical to the
/// last one from SQLite; a second copy into the now non-empty database is refused.
#[test]
fn ledger_copy_moves_sqlite_to_a_bucket_to_postgres_and_the_build_stays_byte_identical() {
    let s = TestSite::new();
    s.write(
        "content/images/a.svg",
        "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n",
    );
    s.item_with(
        1,
        "2026-11-01",
        "image = \"images/a.svg\"\n",
        "with an image",
    );
    for id in 2..=5 {
        s.item(id, &format!("2026-11-0{id}"));
    }
    s.item(6, "2026-12-20"); // embargoed: pending at the copy
    s.publish(NOW);
    s.item_with(2, "2026-11-02", "withdrawn = true\n", "gone");
    s.publish(NOW);
    s.json(&[
        "results",
        "add",
        "--puzzle",
        "1",
        "--session",
        "a",
        "--outcome",
        "win",
        "--guesses",
        "3",
    ]);
    s.build(&[]);
    let before = tree(&s.current_dir());
    let sqlite_status = s.status();

    // SQLite → a ledger in a bucket → PostgreSQL, each hop verified, each build the same.
    let bucket = format!("file://{}", s.path(".bucket/ledger").display());
    let r = s.json(&["ledger", "copy", "--to", &bucket]);
    assert_eq!(r["verified"], true, "{r}");
    assert_eq!(r["tables"]["daily_results"], 1, "{r}");
    s.set_ledger_url(&bucket);
    let bucket_status = s.status();
    for key in [
        "revision",
        "items",
        "audit_entries",
        "audit_tip",
        "next_embargo_at",
    ] {
        assert_eq!(bucket_status[key], sqlite_status[key], "{key}");
    }
    s.cmd(&["verify"]).assert().success();
    std::fs::rename(s.path("public"), s.path("public-from-sqlite")).unwrap();
    s.build(&[]);
    assert_same_tree(
        &before,
        &tree(&s.current_dir()),
        "build from the bucket ledger",
    );
    std::fs::rename(s.path("public"), s.path("public-from-bucket")).unwrap();

    let url = pg().database();
    let r = s.json(&["ledger", "copy", "--from", &bucket, "--to", &url]);
    assert_eq!(r["verified"], true, "{r}");
    assert_eq!(r["revision"], 6, "{r}");
    assert_eq!(r["tables"]["pages"], 5, "{r}");
    assert_eq!(r["tables"]["items"], 6, "{r}");
    assert_eq!(r["tables"]["audit_log"], 6, "{r}");
    assert_eq!(r["tables"]["daily_results"], 1, "{r}");
    // A second copy into the same database is refused, and changes nothing.
    let err = s.failing(&["ledger", "copy", "--to", &url]);
    assert!(err.contains("is not empty"), "{err}");

    s.set_ledger_url(&url);
    let pg_status = s.status();
    for key in [
        "revision",
        "items",
        "audit_entries",
        "audit_tip",
        "next_embargo_at",
    ] {
        assert_eq!(pg_status[key], sqlite_status[key], "{key}");
    }
    s.cmd(&["verify"]).assert().success();
    // The same ledger id travelled: a fresh output folder gets the very same bytes.
    s.build(&[]);
    assert_same_tree(
        &before,
        &tree(&s.current_dir()),
        "build from PostgreSQL after the copy",
    );

    // And publishing carries on there.
    let r = s.publish("2026-12-21T00:10:00Z");
    assert_eq!(ids(&r, "published"), vec![6]);
    assert_eq!(r["revision"], 7);
    s.cmd(&["verify"]).assert().success();
    assert_eq!(
        s.query_i64("SELECT count(*) FROM items WHERE source_size IS NOT NULL"),
        0,
        "a shared ledger keeps no per-host stats"
    );
}

/// `FENCEPOST_LEDGER` picks the ledger over fencepost.toml, and a password in the URL never
/// reaches stdout, stderr or JSON — not even in an error.
#[test]
fn the_environment_selects_postgres_and_the_password_stays_secret() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    let url = pg().database();
    let secret_url = url.replace("fencepost@", "fencepost:hunter2secret@");
    let out = s
        .cmd(&["publish", "--json", "--now", NOW, "-vv"])
        .env("FENCEPOST_LEDGER", &secret_url)
        .output()
        .unwrap();
    assert_success(&out);
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!all.contains("hunter2secret"), "{all}");
    assert!(
        !s.path(".fencepost/ledger.sqlite").exists(),
        "the SQLite ledger was not used"
    );
    // The publication is in that database: its status says so.
    let out = s
        .cmd(&["status", "--json"])
        .env("FENCEPOST_LEDGER", &url)
        .output()
        .unwrap();
    let st: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(st["revision"], 1, "{st}");
    // An error names the database without the password.
    let bad = secret_url.replace(&format!(":{}/", pg().port), ":1/");
    let out = s
        .cmd(&["status", "--json"])
        .env("FENCEPOST_LEDGER", &bad)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("127.0.0.1:1"),
        "the error names the database: {err}"
    );
    assert!(!err.contains("hunter2secret"), "{err}");
    assert!(err.contains("***"), "{err}");
}

/// The deploy saga's journal and receipts live in the ledger too: deploy twice to a folder
/// target, roll the bucket back, deploy again; the status lists the target, the chain holds
/// one receipt per operation.
fn deploys_and_remote_rollbacks_are_journaled_and_audited(b: Backend) {
    let s = TestSite::on(b);
    s.item(1, "2026-11-01");
    s.publish(NOW);
    s.build(&[]);
    let bucket = tempfile::tempdir().unwrap();
    let url = format!("file://{}", bucket.path().display());
    let r = s.json(&["deploy", "--to", &url, "--now", NOW]);
    assert_eq!(r["outcome"], "deployed", "{r}");
    s.item(2, "2026-11-02");
    s.publish(NOW);
    s.build(&[]);
    let r = s.json(&["deploy", "--to", &url, "--now", NOW]);
    assert_eq!(r["outcome"], "deployed", "{r}");
    assert_eq!(r["revision"], 2, "{r}");
    let r = s.json(&["rollback", "1", "--to", &url, "--now", NOW]);
    assert!(r.to_string().contains('1'), "{r}");
    let st = s.status();
    let targets = st["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 1, "{st}");
    assert!(st["deploys"].as_array().unwrap().is_empty(), "{st}");
    assert_eq!(s.audited("deploy"), 2);
    assert_eq!(s.audited("rollback"), 1);
    let unfinished = s.status()["deploys"].as_array().unwrap().len();
    assert_eq!(unfinished, 0, "every operation done");
    s.cmd(&["verify"]).assert().success();
}

/// TLS to a server whose certificate comes from a private CA (as managed databases' often
/// do): the test server admits the role `tlsonly` over TLS only. Plain text is refused by the
/// server; TLS without trusting the CA is refused by fencepost (the certificate is verified);
/// `sslrootcert=` in the URL, or `PGSSLROOTCERT`, makes it work.
#[test]
fn tls_to_a_server_with_a_private_ca() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    let url = pg().database().replace("fencepost@", "tlsonly@");
    let run = |ledger: &str, env: &[(&str, &str)]| {
        let mut c = s.cmd(&["publish", "--json", "--now", NOW]);
        c.env("FENCEPOST_LEDGER", ledger);
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    let out = run(&url, &[]);
    assert!(
        !out.status.success(),
        "plain text must be refused for tlsonly"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no encryption"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&format!("{url}?sslmode=require"), &[]);
    assert!(!out.status.success(), "an unknown CA must be refused");
    let err = String::from_utf8_lossy(&out.stderr).to_lowercase();
    assert!(err.contains("certificate"), "{err}");
    let ca = pg().ca_cert().display().to_string();
    let out = run(&format!("{url}?sslmode=verify-full&sslrootcert={ca}"), &[]);
    assert_success(&out);
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ids(&r, "published"), vec![1]);
    let out = s
        .cmd(&["status", "--json"])
        .env("FENCEPOST_LEDGER", format!("{url}?sslmode=require"))
        .env("PGSSLROOTCERT", &ca)
        .output()
        .unwrap();
    assert_success(&out);
    let st: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(st["revision"], 1);
}
