//! An item's JSON for the transparency log: the bytes a commitment covers and a reveal
//! serves at `/.well-known/fencepost/items/<collection>/<id>.json`.
//!
//! One spelling of one item: keys in a fixed order, the front matter's fields as the
//! canonical JSON the ledger keeps (keys sorted), the instant the item is due in RFC 3339, the
//! Markdown body as written. The same file always gives the same bytes, on every host, so a
//! commitment made from it before the instant matches the JSON its publication records.

use super::Item;
use serde::Serialize;
use serde_json::Value;

#[derive(Serialize)]
struct Json<'a> {
    collection: &'a str,
    id: &'a str,
    title: &'a str,
    /// When the item is due: the instant it goes public.
    date: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    day: Option<String>,
    fields: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    terms: Option<Value>,
    body: &'a str,
}

impl Item {
    /// The item's JSON (see the module doc).
    pub fn transparency_json(&self) -> String {
        let parse = |s: &str| serde_json::from_str::<Value>(s).unwrap_or(Value::Null);
        let json = Json {
            collection: &self.name.collection,
            id: &self.name.id,
            title: &self.title,
            date: self.due.rfc3339(),
            day: self.day.map(|d| d.to_string()),
            fields: parse(&self.data),
            terms: (!self.terms.is_empty()).then(|| parse(&self.terms)),
            body: &self.body,
        };
        serde_json::to_string(&json).expect("an item's JSON serialises")
    }
}
