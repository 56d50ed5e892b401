//! Leases and the guard inside every statement: one holder, fences, an owner giving all
//! back, racing commits, takeovers, a due instant checked by the ledger's clock.
use super::*;

pub(super) fn leases_have_one_holder_and_the_fence_grows_on_expiry(b: Backend) {
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
pub(super) fn an_owner_gives_back_all_its_leases_at_once_and_its_guards_then_fail(b: Backend) {
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
pub(super) fn racing_processes_over_one_due_item_publish_it_once(b: Backend) {
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

pub(super) fn two_racing_commits_of_one_page_exactly_one_wins(b: Backend) {
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

pub(super) fn a_takeover_between_preflight_and_commit_is_lease_lost_and_writes_nothing(b: Backend) {
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
/// (`DueCheck::AsGiven`) publishes. On D1 the guard is in the commit batch, by the Worker's
/// clock (issue 77.4): the whole write is refused (`NotDueByStore`) and writes nothing.
/// SQLite's and the bucket's clock is the host's: the instant the command decided by stands
/// there.
pub(super) fn a_page_due_after_the_ledgers_own_clock_is_not_written(b: Backend) {
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
    let r = l.write(|tx| pages::commit(tx, &c, t, DueCheck::ByLedger));
    if b == Backend::D1 {
        let e = r.err().expect("refused by the Worker's clock");
        assert!(
            matches!(e, fencepost_ledger::LedgerError::NotDueByStore { .. }),
            "{e}"
        );
        assert_eq!((s.pages(), s.audit().len(), s.revision()), (0, 0, 0));
        return;
    }
    let r = r.unwrap();
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

/// Under READ COMMITTED an in-statement guard reads its statement's snapshot and locks
/// nothing. Schedule: a fence-1 writer runs its guarded statement while its lease is live,
/// stalls before committing; its lease expires and another host takes over (fence 2); then
/// the stalled writer commits. The naive form lets that write land after fence 2 was granted;
/// fencepost's form (the lease row locked first) makes the takeover wait for the writer, so
/// every fence-1 write commits before fence 2 exists, and a fence-1 writer that comes back
/// after the takeover changes nothing.
/// Takes item `id`'s publication lease at `t` on a fresh connection to `loc`.
fn take_fresh(loc: &Location, id: i64, t: Instant) -> Option<lease::Lease> {
    take(
        &mut Ledger::open_at(loc, Duration::from_secs(30)).unwrap(),
        id,
        t,
    )
}

/// The naive guard, on item 1: a fence-1 write commits after fence 2 was granted.
fn the_naive_guard_lets_a_stale_fence_commit(
    s: &TestSite,
    loc: &Location,
    (t0, live, expired): (Instant, Instant, Instant),
) {
    let url = s.ledger_url().unwrap();
    let a = take_fresh(loc, 1, t0).unwrap();
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
    let b = take_fresh(loc, 1, expired).expect("the takeover succeeds at once");
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
}

/// fencepost's form, the same schedule on item 2: the takeover waits for the writer.
fn the_locked_guard_makes_the_takeover_wait(
    s: &TestSite,
    loc: &Location,
    (t0, live, expired): (Instant, Instant, Instant),
) {
    let a = take_fresh(loc, 2, t0).unwrap();
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
    let mut l = open(s);
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

#[test]
fn postgres_naive_guard_lets_a_stale_fence_commit_and_the_locked_form_does_not() {
    let s = TestSite::on(Backend::Postgres);
    s.item(1, "2026-12-20").item(2, "2026-12-20");
    s.publish(NOW);
    let loc = location(&s);
    let t0 = at("2026-12-21T01:00:00Z");
    let (live, expired) = (t0.plus_secs(59), t0.plus_secs(61));
    let times = (t0, live, expired);
    the_naive_guard_lets_a_stale_fence_commit(&s, &loc, times);
    the_locked_guard_makes_the_takeover_wait(&s, &loc, times);
}
