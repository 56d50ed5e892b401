use super::*;
use fencepost_core::item::ItemId;
use fencepost_core::item::ItemName;
use fencepost_ledger::items::PageView;

/// The decision as the tests read it: `view.plan(now)`.
trait Plans {
    fn plan(&self, now: Instant) -> Plan;
    fn plan_with(&self, now: Instant, rerender: bool) -> Plan;
}

impl Plans for ItemView {
    fn plan(&self, now: Instant) -> Plan {
        super::plan(self, now)
    }

    fn plan_with(&self, now: Instant, rerender: bool) -> Plan {
        super::plan_with(self, now, rerender)
    }
}

fn view(state: State, hash: Option<&str>, page_hash: Option<&str>, publish_at: i64) -> ItemView {
    ItemView {
        id: ItemId(1),
        name: ItemName::new("c", "1"),
        state,
        source_path: "content/answers/1.md".into(),
        source_hash: hash.map(str::to_string),
        wants_withdrawn: false,
        publish_at: Instant(publish_at),
        image_source: None,
        image_stored: false,
        attempts: 0,
        parked_at: None,
        expire_at: None,
        page: page_hash.map(|h| PageView {
            content_version: 1,
            source_hash: h.into(),
            indexable: true,
            image_source: None,
            image_sha256: None,
            withdrawn: state == State::Withdrawn,
            notice: None,
        }),
    }
}

#[test]
fn an_expiry_withdraws_once_and_keeps_an_expired_item_from_publishing() {
    let now = Instant(100);
    let mut live = view(State::Published, Some("a"), Some("a"), 1);
    live.expire_at = Some(Instant(101));
    assert_eq!(live.plan(now), Plan::Current, "not yet");
    live.expire_at = Some(Instant(100));
    assert_eq!(
        live.plan(now),
        Plan::Act(Action::Withdraw),
        "at the instant"
    );
    let mut gone = view(State::Withdrawn, Some("a"), Some("a"), 1);
    gone.expire_at = Some(Instant(100));
    assert_eq!(gone.plan(now), Plan::Current, "withdrawn stays withdrawn");
    gone.expire_at = Some(Instant(200));
    assert_eq!(
        gone.plan(now),
        Plan::Act(Action::Publish),
        "expiry moved later"
    );
    let mut never = view(State::Pending, Some("a"), None, 50);
    never.expire_at = Some(Instant(90));
    assert_eq!(
        never.plan(now),
        Plan::Idle,
        "due and expired before any run"
    );
}

#[test]
fn plans_follow_the_item_life() {
    let now = Instant(100);
    assert_eq!(
        view(State::Pending, Some("a"), None, 100).plan(now),
        Plan::Act(Action::Publish)
    );
    assert_eq!(
        view(State::Pending, Some("a"), None, 101).plan(now),
        Plan::Embargoed(Instant(101))
    );
    assert_eq!(
        view(State::Processing, Some("a"), None, 1).plan(now),
        Plan::Act(Action::Publish)
    );
    assert_eq!(view(State::Pending, None, None, 1).plan(now), Plan::Idle);
    assert_eq!(
        view(State::Published, Some("a"), Some("a"), 1).plan(now),
        Plan::Current
    );
    assert_eq!(
        view(State::Published, Some("b"), Some("a"), 1).plan(now),
        Plan::Act(Action::Update)
    );
    assert_eq!(
        view(State::Published, None, Some("a"), 1).plan(now),
        Plan::Act(Action::Withdraw)
    );
    assert_eq!(
        view(State::Withdrawn, None, Some("a"), 1).plan(now),
        Plan::Current
    );
    assert_eq!(
        view(State::Withdrawn, Some("a"), Some("a"), 1).plan(now),
        Plan::Act(Action::Publish)
    );
    let mut w = view(State::Published, Some("a"), Some("a"), 1);
    w.wants_withdrawn = true;
    assert_eq!(w.plan(now), Plan::Act(Action::Withdraw));
    // Parked (an update kept failing): a withdrawal still goes through.
    w.parked_at = Some(Instant(50));
    assert_eq!(w.plan(now), Plan::Act(Action::Withdraw));
    let current = view(State::Published, Some("a"), Some("a"), 1);
    assert_eq!(current.plan_with(now, false), Plan::Current);
    assert_eq!(
        current.plan_with(now, true),
        Plan::Act(Action::Update),
        "re-rendered"
    );
    let gone = view(State::Withdrawn, None, Some("a"), 1);
    assert_eq!(
        gone.plan_with(now, true),
        Plan::Current,
        "rerender publishes nothing"
    );
    let mut p = view(State::Published, Some("b"), Some("a"), 1);
    p.parked_at = Some(Instant(50));
    assert_eq!(
        p.plan(now),
        Plan::Parked,
        "the failing update is not retried"
    );
    p.source_hash = None;
    assert_eq!(p.plan(now), Plan::Act(Action::Withdraw), "the file is gone");
}

#[test]
fn a_withdrawn_items_edited_file_re_renders_its_notice_once() {
    let now = Instant(100);
    // Withdrawn by `withdrawn = true` in file "h1": the withdrawal recorded that hash.
    let mut w = view(State::Withdrawn, Some("h1"), Some("h1"), 0);
    w.wants_withdrawn = true;
    assert_eq!(w.plan(now), Plan::Current);
    // The file is edited (a redacted title): the notice follows, once.
    w.source_hash = Some("h2".into());
    assert_eq!(w.plan(now), Plan::Act(Action::Renotice));
    // A page that keeps no notice is never re-rendered; a file gone changes nothing.
    w.page.as_mut().unwrap().notice = Some(false);
    assert_eq!(w.plan(now), Plan::Current);
    w.page.as_mut().unwrap().notice = Some(true);
    w.source_hash = None;
    assert_eq!(w.plan(now), Plan::Current);
}

#[test]
fn an_edit_due_later_is_an_update_at_its_instant() {
    // Published from "h1"; the file now says "h2" and is due at 200.
    let v = view(State::Published, Some("h2"), Some("h1"), 200);
    assert_eq!(v.plan(Instant(199)), Plan::Embargoed(Instant(200)));
    assert_eq!(v.plan(Instant(200)), Plan::Act(Action::Update));
    // An edit due already is an update at once, as before.
    assert_eq!(
        view(State::Published, Some("h2"), Some("h1"), 50).plan(Instant(100)),
        Plan::Act(Action::Update)
    );
}
