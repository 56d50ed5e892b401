//! Load on the origins while ten deploys move the pointer: no error, no mixed revision.
use super::*;

/// A reader: random pages of one origin, each response kept (origin, page, status, the
/// revision it named, the sha256 of its body), until `stop`.
fn reader(
    name: &'static str,
    addr: String,
    t: u64,
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<Vec<Seen>>>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut n = t;
        while !stop.load(Ordering::Relaxed) {
            n = n
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let k = (n >> 33) % 21;
            let target = if k == 0 {
                "/".to_string()
            } else {
                format!("/answers/{k}/")
            };
            let r = try_http(&addr, "GET", &target, &[]).unwrap();
            let sha = fencepost_core::digest::sha256_hex(&r.body);
            seen.lock().unwrap().push((
                name,
                target,
                r.status,
                r.header("x-revision").map(str::to_string),
                sha,
            ));
        }
    })
}

/// Every response 2xx, its bytes those of the revision it names; each origin saw every
/// round's revision.
fn every_answer_is_of_the_revision_it_names(
    seen: &[Seen],
    revisions: &BTreeMap<String, BTreeMap<String, String>>,
) {
    let mut by_origin: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for (origin, target, status, revision, sha) in seen.iter() {
        let revision = revision
            .as_deref()
            .unwrap_or_else(|| panic!("{origin} {target}: {status} without X-Revision"));
        assert!((200..300).contains(status), "{origin} {target}: {status}");
        assert_eq!(
            Some(sha),
            revisions[revision].get(&file_of(target)),
            "{origin} {target}: bytes not of {revision}, the revision it named"
        );
        by_origin
            .entry(origin)
            .or_default()
            .insert(revision.to_string());
    }
    eprintln!("{} requests; revisions seen: {by_origin:?}", seen.len());
    assert!(seen.len() > 200, "only {} requests", seen.len());
    for (origin, revs) in &by_origin {
        assert!(
            revs.len() >= 10,
            "{origin} saw only {revs:?}: every round's revision was waited for"
        );
    }
}

#[test]
fn under_load_while_ten_deploys_move_the_pointer_no_error_and_no_mixed_revision() {
    let s = TestSite::new();
    for i in 1..=20 {
        s.item(i, &format!("2026-11-{:02}", i));
    }
    s.write(
        "fencepost.toml",
        &format!(
            "{}\n[serve]\npointer_ttl_ms = 20\n",
            std::fs::read_to_string(s.path("fencepost.toml")).unwrap()
        ),
    );
    s.json(&["publish", "--build", "--now", NOW]);
    let bucket = s.path("bucket");
    let url = format!("file://{}", bucket.display());
    s.json(&["deploy", "--to", &url, "--now", NOW]);
    // What each revision holds, kept as it is built (the reader checks against it).
    let revisions: Arc<Mutex<BTreeMap<String, BTreeMap<String, String>>>> = Arc::default();
    let remember = |s: &TestSite| {
        let dir = s.current_dir();
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        revisions.lock().unwrap().insert(name, manifest_shas(&dir));
    };
    remember(&s);
    let edge = Edge::start(&bucket, "", &["--pointer-ttl-ms", "20"]);
    let from = s.serve(&["--from", &url]);
    let stop = Arc::new(AtomicBool::new(false));
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let mut readers = Vec::new();
    for (name, addr) in [("edge", &edge.addr), ("serve --from", &from.addr)] {
        for t in 0..2u64 {
            readers.push(reader(name, addr.clone(), t, stop.clone(), seen.clone()));
        }
    }
    for round in 1..=10 {
        // A new item each round: a new home page, a new revision.
        let id = 20 + round;
        s.item(id, &format!("2026-11-{:02}", 20 + (round % 9)));
        s.json(&["publish", "--build", "--now", NOW]);
        remember(&s);
        s.json(&["deploy", "--to", &url, "--now", NOW]);
        // The folder's pointer copied into R2 before the next deploy (dev.mjs's copy is not
        // what is under test: the Worker is).
        edge.wait_pointer(&bucket);
        // Both origins seen serving it before the next move: every round is read, however
        // fast this machine is.
        let live = s
            .current_dir()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_string();
        wait_for("both origins to serve the new revision", || {
            let seen = seen.lock().unwrap();
            ["edge", "serve --from"].iter().all(|origin| {
                seen.iter()
                    .any(|(o, _, _, r, _)| o == origin && r.as_deref() == Some(live.as_str()))
            })
        });
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        r.join().unwrap();
    }
    every_answer_is_of_the_revision_it_names(&seen.lock().unwrap(), &revisions.lock().unwrap());
}
