//! The transparency log's tables, on every engine.
use super::*;

/// Issue 50: the transparency log's tables on every engine. A commitment to a pending item's
/// JSON is recorded once per JSON (the same JSON keeps its salt); a commit batch records the
/// JSON of the page it wrote; 300 entries appended in two transactions read back as the tree
/// `tlog::tiles::Tree` makes of them — root and every tile, through the stored hashes alone —
/// and a second writer of an index is refused.
/// 300 entries appended in two transactions read back as the tree `tlog::tiles::Tree` makes
/// of them — root and every tile, through the stored hashes alone; a second writer of an
/// index is refused.
fn appended_entries_read_back_as_their_tree(l: &mut Ledger) {
    use fencepost_ledger::transparency::{self as tl, Hashes};
    let entries: Vec<String> = (0..300)
        .map(|i| format!("fencepost/test/v1\nindex {i}\n"))
        .collect();
    assert_eq!(l.write(|tx| tl::append(tx, &entries[..100])).unwrap(), 100);
    assert_eq!(l.write(|tx| tl::append(tx, &entries[100..])).unwrap(), 300);
    let tree = fencepost_tlog::tiles::Tree::of(&entries).unwrap();
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
            fencepost_ledger::args! { "idx" => 0i64, "entry" => "x", "hashes" => "" },
        )
    });
    assert!(again.is_err(), "{again:?}");
}

pub(super) fn the_transparency_log_reads_back_the_tree_it_appended(b: Backend) {
    use fencepost_ledger::transparency as tl;
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

    appended_entries_read_back_as_their_tree(&mut l);
}
