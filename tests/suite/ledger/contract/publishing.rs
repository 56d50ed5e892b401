//! Publishing races on every engine: once and expire once, collections and slug ids,
//! result slots, publishers whose clocks disagree.
use super::*;

/// An item with `expire_at`: racing processes publish it once at its instant and withdraw
/// it once at its expiry — one revision and one audit entry each — and `next_change_at`
/// names the publication, then the expiry, then nothing.
pub(super) fn racing_processes_publish_once_and_expire_once(b: Backend) {
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
pub(super) fn collections_site(b: Backend) -> TestSite {
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
pub(super) fn collections_and_slug_ids_hold_the_contract(b: Backend) {
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

pub(super) fn racing_result_reports_get_dense_unique_slots(b: Backend) {
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

/// Four rounds of racing publishers, each just after a day's embargo: each round publishes
/// its day's `per_day` items exactly once.
fn four_rounds_publish_each_item_once(s: &TestSite, rounds: &[&str], per_day: usize) {
    let mut expected = BTreeSet::new();
    for (r, now) in rounds.iter().enumerate() {
        let reports = race_skewed(s, now);
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
}

/// Edits, withdrawals and removals, then racing re-runs: one revision per public change;
/// then a rerun reads no file and the build reads the same ledger.
fn edits_withdrawals_and_removals_race_once_each(s: &TestSite, now: &str) {
    for id in 1..=10 {
        s.item_with(id, "2026-11-01", "", &format!("Edited body {id}."));
    }
    for id in 11..=15 {
        s.item_with(id, "2026-11-01", "withdrawn = true\n", "gone");
    }
    for id in 16..=20 {
        std::fs::remove_file(s.path(&format!("content/answers/{id}.md"))).unwrap();
    }
    let reports = race_skewed(s, now);
    assert_eq!(union_no_dupes(&reports, "updated"), (1..=10).collect());
    assert_eq!(union_no_dupes(&reports, "withdrawn"), (11..=20).collect());
    assert!(union_no_dupes(&reports, "published").is_empty());
    assert_eq!(s.revision(), 140);
    for rep in &race_skewed(s, now) {
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
    std::thread::sleep(fencepost_site::content::RACY_WINDOW + Duration::from_millis(200));
    let r = s.publish(now);
    assert_eq!(r["files_read"], 0, "{r}");
    // The build reads the same ledger: 110 public pages.
    let built = s.build(&[]);
    assert_eq!(built["revision"], 140, "{built}");
}

pub(super) fn racing_publishers_with_skewed_clocks_publish_every_item_once(b: Backend) {
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
    four_rounds_publish_each_item_once(&s, &rounds, per_day);

    // Nothing to do: nothing changes.
    for rep in &race_skewed(&s, rounds[3]) {
        assert!(
            ids(rep, "published").is_empty() && ids(rep, "updated").is_empty(),
            "{rep}"
        );
    }
    assert_eq!(s.revision(), 120);

    edits_withdrawals_and_removals_race_once_each(&s, rounds[3]);
}
