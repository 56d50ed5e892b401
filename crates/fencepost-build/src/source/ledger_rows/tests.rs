use super::*;
use fencepost_config::Config;
use fencepost_core::item::ItemId;

fn collections() -> Collections {
    let text = r#"
[collections.answers]
dir = "answers"
[collections.notes]
dir = "notes"
id = "slug"
sort_by = "weight"
on_withdraw = "notice"
"#;
    let c = Config::parse(text, Path::new("fencepost.toml")).unwrap();
    Collections::resolve(&c, Path::new("fencepost.toml")).unwrap()
}

fn row(id: i64, collection: &str, key: &str, due: i64, data: &str) -> PublicPage {
    PublicPage {
        id: ItemId(id),
        collection: collection.into(),
        key: key.into(),
        title: format!("title {id}"),
        day: String::new(),
        data: data.into(),
        indexable: true,
        image_sha256: None,
        image_content_type: None,
        content_hash: String::new(),
        revision: id,
        first_published_at: Instant(due),
        updated_at: Instant(due),
        due_at: Some(Instant(due)),
        withdrawn: false,
        summary_html: None,
        terms: "".into(),
        notice: None,
        json_digest: None,
    }
}

/// Rows of both kinds of collection, ids as numbers and slugs, weighted and not, ties of
/// date and weight, withdrawn ones with and without a notice, in no order.
fn rows() -> Vec<PublicPage> {
    let mut rows = vec![
        row(1, "answers", "10", 500, "{}"),
        row(2, "answers", "9", 500, "{}"),
        row(3, "notes", "b", 300, r#"{"weight":2}"#),
        row(4, "answers", "2", 100, "{}"),
        row(5, "notes", "a", 300, r#"{"weight":2}"#),
        row(6, "notes", "c", 100, "{}"),
        row(7, "notes", "d", 200, r#"{"weight":-1}"#),
        row(8, "answers", "abc", 100, "{}"),
        row(9, "notes", "e", 400, r#"{"weight":2}"#),
        row(10, "answers", "11", 50, "{}"),
        row(11, "notes", "gone", 50, "{}"),
        row(12, "answers", "gone", 50, "{}"),
        row(13, "notes", "quiet", 50, "{}"),
    ];
    for r in &mut rows[10..] {
        r.withdrawn = true;
    }
    rows[12].notice = Some(false);
    rows
}

/// Guards: pages ordered from their rows before they are viewed in the order viewing them first gave.
#[test]
fn rows_are_put_in_the_reading_order_of_their_pages() {
    let colls = collections();
    let store = Path::new("/nonexistent");
    // The order as it was found: every page viewed (in row order), then sorted by its view.
    let viewed: Vec<PageInput> = (rows().into_iter())
        .filter(|r| !r.withdrawn)
        .map(|r| {
            let ci = colls
                .list
                .iter()
                .position(|c| *c.name == *r.collection)
                .unwrap();
            let weight = PageInput::weight_of(&colls.list[ci], &r.data);
            let lang: Arc<str> = colls.list[ci].lang.as_str().into();
            view_page(&colls.list[ci], (ci, &lang), store, r, weight).0
        })
        .collect();
    let want: Vec<i64> = PageInput::in_order(viewed)
        .iter()
        .map(|p| p.view.row)
        .collect();
    let (ordered, weights) = in_reading_order(&colls, rows()).unwrap();
    let got: Vec<i64> = ordered.iter().map(|r| r.id.0).collect();
    assert_eq!(&got[..weights.len()], &want[..]);
    // The withdrawn rows after the pages, in row order; each page's collection and weight.
    assert_eq!(&got[weights.len()..], &[11, 12, 13]);
    let of = |id: i64| weights[got.iter().position(|&g| g == id).unwrap()];
    assert_eq!(
        (of(3), of(6), of(1)),
        ((1, Some(2)), (1, Some(i64::MAX)), (0, None))
    );
}

/// Guards: a row of an undeclared collection refused by name, whatever order the rows are in.
#[test]
fn a_row_of_an_undeclared_collection_is_refused_by_name() {
    let colls = collections();
    let mut rows = rows();
    rows.push(row(20, "answerz", "7", 100, "{}"));
    rows.push(row(21, "answerz", "8", 100, "{}"));
    let mut gone = row(22, "old", "x", 100, "{}");
    gone.withdrawn = true;
    rows.push(gone);
    let Err(e) = in_reading_order(&colls, rows) else {
        panic!("refused")
    };
    let text = e.to_string();
    assert!(
        text.contains("answerz/7") && text.contains("1 more"),
        "{text}"
    );
    assert!(text.contains("[collections.answerz]"), "{text}");
}
