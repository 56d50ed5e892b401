//! Issue 52: what a long-lived build reads instead of every page (`crates/fencepost-build/src/warm.rs`). On
//! every engine, the pages a snapshot of revision R has are the pages of an earlier revision
//! S with `public.pages_since(S)` laid over them by item — through a new item, an edit and a
//! withdrawal.
use crate::common::*;
use fencepost_ledger::public::{self, PublicPage};
use std::collections::BTreeMap;

fn by_item(rows: Vec<PublicPage>) -> BTreeMap<i64, PublicPage> {
    rows.into_iter().map(|p| (p.id.0, p)).collect()
}

pub(super) fn the_pages_since_a_revision_bring_its_pages_to_the_snapshots(b: Backend) {
    let s = TestSite::on(b);
    s.item(1, "2026-11-01")
        .item(2, "2026-11-02")
        .item(3, "2026-11-03");
    s.publish(NOW);
    let mut l = super::open(&s);
    let (at, before) = l
        .read(|tx| Ok((fencepost_ledger::status::revision(tx)?, public::pages(tx)?)))
        .unwrap();
    assert_eq!((at, before.len()), (3, 3));
    assert!(l.read(|tx| public::pages_since(tx, at)).unwrap().is_empty());

    s.item_with(2, "2026-11-02", "", "Edited.");
    s.item(4, "2026-11-04");
    std::fs::remove_file(s.path("content/answers/3.md")).unwrap();
    s.publish("2026-12-01T00:01:00Z");
    let (now_at, since, all) = l
        .read(|tx| {
            let r = fencepost_ledger::status::revision(tx)?;
            Ok((r, public::pages_since(tx, at)?, public::pages(tx)?))
        })
        .unwrap();
    assert_eq!(now_at, at + 3, "an edit, a new item and a withdrawal");
    let mut changed: Vec<i64> = since.iter().map(|p| p.id.0).collect();
    changed.sort();
    assert_eq!(changed, vec![2, 3, 4]);
    assert!(since.iter().all(|p| p.revision > at), "{since:?}");
    let mut merged = by_item(before);
    merged.extend(by_item(since));
    assert_eq!(merged, by_item(all));
    assert!(merged[&3].withdrawn);
}
