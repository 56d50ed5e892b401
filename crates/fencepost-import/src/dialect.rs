//! What a Zola site says differently from a Hugo one, in its pages' front matter (its body:
//! `zola_body.rs`).

/// A Zola page's front matter in Hugo's words: `[taxonomies]` lifted to the top level,
/// `path` as the page's old URL, `updated` kept under `[extra]` as `lastmod`, and `[extra]`
/// merged (not nested twice).
pub(super) fn normalize(table: &mut toml::Table) {
    if let Some(toml::Value::Table(tx)) = table.remove("taxonomies") {
        for (k, v) in tx {
            table.insert(k, v);
        }
    }
    if let Some(p) = table.remove("path") {
        table.insert("url".into(), p);
    }
    if let Some(u) = table.remove("updated") {
        table.insert("lastmod".into(), u);
    }
    if let Some(toml::Value::Table(extra)) = table.remove("extra") {
        for (k, v) in extra {
            table.entry(k).or_insert(v);
        }
    }
}
