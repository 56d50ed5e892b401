//! `page` of an item (or notice) template, made as the template engine's value directly.
//!
//! Chosen: each field put into the object by hand, the declared fields and `extra` moved in
//! last (so a declared field named like a built-in one wins, as it always has), and the
//! object handed to the context without a copy. Rejected: deriving `Serialize` with
//! `#[serde(flatten)]` and `Context::insert` — the view was cloned to set its neighbours,
//! then serialised through serde's flattening map into one value, then that whole value
//! (the body included) copied again by `insert`; at a cold build of 10,000 items that was
//! ~8% of the build's CPU (see BENCHMARKS.md). The derived form is kept as the reference a
//! test holds this one to, field for field.

use super::super::view::{IdView, ItemPage, LinkView};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// A neighbour as `page.prev` and `page.next` show it: its URL, title and day.
#[derive(Clone, Copy)]
pub(in super::super) struct Neighbour<'a> {
    url: &'a str,
    title: &'a str,
    day: Option<&'a str>,
}

impl<'a> Neighbour<'a> {
    pub(in super::super) fn of_page(v: &'a ItemPage) -> Neighbour<'a> {
        Neighbour {
            url: &v.url,
            title: &v.title,
            day: v.day.as_deref(),
        }
    }

    pub(in super::super) fn of_link(l: &'a LinkView) -> Neighbour<'a> {
        Neighbour {
            url: &l.url,
            title: &l.title,
            day: l.day.as_deref(),
        }
    }

    fn value(self) -> Value {
        object([
            ("url", text(self.url)),
            ("title", text(self.title)),
            ("day", opt(self.day)),
        ])
    }
}

/// A term as an item page links it.
#[derive(serde::Serialize)]
pub(in super::super) struct TermRef {
    pub(in super::super) name: String,
    pub(in super::super) url: String,
}

/// `page` of an item template: the view's fields with its neighbours, its body,
/// `taxonomies.<name>` (each term's `name` and `url`), and its declared fields and `extra`.
pub(in super::super) struct ItemContext<'a> {
    pub(in super::super) view: &'a ItemPage,
    pub(in super::super) prev: Option<Neighbour<'a>>,
    pub(in super::super) next: Option<Neighbour<'a>>,
    pub(in super::super) body_html: &'a str,
    pub(in super::super) taxonomies: BTreeMap<String, Vec<TermRef>>,
    pub(in super::super) data: Map<String, Value>,
}

impl ItemContext<'_> {
    /// The object templates see as `page`.
    pub(in super::super) fn into_value(self) -> Value {
        let v = self.view;
        let id = match &v.id {
            IdView::Number(n) => Value::from(*n),
            IdView::Slug(s) => text(s),
        };
        let taxonomies = (self.taxonomies.into_iter())
            .map(|(name, terms)| {
                let terms = (terms.into_iter())
                    .map(|t| {
                        object([
                            ("name", Value::String(t.name)),
                            ("url", Value::String(t.url)),
                        ])
                    })
                    .collect();
                (name, Value::Array(terms))
            })
            .collect();
        let mut m = Map::new();
        for (k, value) in [
            ("id", id),
            ("collection", text(&v.collection)),
            ("url", text(&v.url)),
            ("title", text(&v.title)),
            ("day", opt(v.day.as_deref())),
            ("image_url", opt(v.image_url.as_deref())),
            ("indexable", Value::Bool(v.indexable)),
            ("published", text(&v.published)),
            ("updated", text(&v.updated)),
            ("date", text(&v.date)),
            ("lastmod", text(&v.lastmod)),
            ("prev", self.prev.map_or(Value::Null, Neighbour::value)),
            ("next", self.next.map_or(Value::Null, Neighbour::value)),
            ("embargoed_until", opt(v.embargoed_until.as_deref())),
            (
                "embargoed_until_local",
                opt(v.embargoed_until_local.as_deref()),
            ),
            ("draft", Value::Bool(v.draft)),
            ("summary_html", opt(v.summary_html.as_deref())),
            ("withdrawn_at", opt(v.withdrawn_at.as_deref())),
            ("body_html", text(self.body_html)),
            ("taxonomies", Value::Object(taxonomies)),
        ] {
            m.insert(k.to_string(), value);
        }
        m.extend(self.data);
        Value::Object(m)
    }
}

fn text(s: &str) -> Value {
    Value::String(s.to_string())
}

fn opt(s: Option<&str>) -> Value {
    s.map_or(Value::Null, text)
}

fn object<const N: usize>(fields: [(&str, Value); N]) -> Value {
    Value::Object(
        fields
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// What `page` was when it was derived: the view (its neighbours set) and the data
    /// flattened in around the body and terms.
    #[derive(serde::Serialize)]
    struct Derived<'a> {
        #[serde(flatten)]
        view: &'a ItemPage,
        body_html: &'a str,
        taxonomies: BTreeMap<String, Vec<TermRef>>,
        #[serde(flatten)]
        data: Map<String, Value>,
    }

    fn page(id: IdView, full: bool) -> ItemPage {
        let some = |s: &str| full.then(|| s.to_string());
        ItemPage {
            id,
            collection: Arc::from("posts"),
            url: "/posts/a/".into(),
            title: "A <b>title</b>".into(),
            day: some("2026-12-01"),
            image_url: some("/img/a.png"),
            indexable: full,
            published: "2026-12-01".into(),
            updated: "2026-12-02".into(),
            date: "2026-12-01T10:00:00Z".into(),
            lastmod: "2026-12-02T10:00:00Z".into(),
            prev: None,
            next: None,
            embargoed_until: some("2026-12-09T00:00:00Z"),
            embargoed_until_local: some("2026-12-09 01:00 CET"),
            draft: !full,
            summary_html: full.then(|| Arc::from("<p>sum</p>")),
            withdrawn_at: some("2026-12-03T00:00:00Z"),
            terms: Arc::from(""),
            data: Arc::from(""),
            content_hash: "h".into(),
            row: 7,
        }
    }

    fn link(url: &str, day: Option<&str>) -> LinkView {
        LinkView {
            url: url.into(),
            title: format!("title of {url}"),
            day: day.map(str::to_string),
        }
    }

    /// Guards: `page` made by hand is the derived one, field for field — a field added to the view and not here fails.
    #[test]
    fn the_page_made_by_hand_is_the_page_serde_made() {
        let terms = || {
            BTreeMap::from([(
                "tags".to_string(),
                vec![TermRef {
                    name: "Rust".into(),
                    url: "/tags/rust/".into(),
                }],
            )])
        };
        let data = || {
            let mut d = Map::new();
            d.insert("price".into(), Value::from(3.5));
            // A declared field named like a built-in one wins.
            d.insert("date".into(), Value::from("declared"));
            d.insert("extra".into(), serde_json::json!({"k": [1, null]}));
            d
        };
        for (id, full) in [
            (IdView::Number(42), true),
            (IdView::Slug(Arc::from("s")), false),
        ] {
            let mut v = page(id, full);
            let (prev, next) = (link("/p/", Some("2026-11-30")), link("/n/", None));
            let made = ItemContext {
                view: &v,
                prev: full.then(|| Neighbour::of_link(&prev)),
                next: full.then(|| Neighbour::of_link(&next)),
                body_html: "<p>body</p>",
                taxonomies: if full { terms() } else { BTreeMap::new() },
                data: if full { data() } else { Map::new() },
            }
            .into_value();
            v.prev = full.then(|| prev.clone());
            v.next = full.then(|| next.clone());
            let derived = serde_json::to_value(Derived {
                view: &v,
                body_html: "<p>body</p>",
                taxonomies: if full { terms() } else { BTreeMap::new() },
                data: if full { data() } else { Map::new() },
            })
            .unwrap();
            assert_eq!(made, derived);
        }
        // A neighbour read off a page is the neighbour its link view names.
        let p = page(IdView::Number(1), true);
        let link = LinkView {
            url: p.url.clone(),
            title: p.title.clone(),
            day: p.day.clone(),
        };
        assert_eq!(
            Neighbour::of_page(&p).value(),
            Neighbour::of_link(&link).value()
        );
    }
}
