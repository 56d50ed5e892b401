//! `fencepost.toml` for an imported site.

use super::front::url_path;
use super::source::{new_pattern, patterns, Config, Page};
use std::collections::BTreeSet;

/// `fencepost.toml` for the site: its title and base URL, a collection per section, the
/// taxonomies.
pub(super) fn text(config: &Config, sections: &BTreeSet<String>, pages: &[Page]) -> String {
    let t = &config.table;
    let get = |k: &str| t.get(k).and_then(|v| v.as_str());
    let title = get("title").unwrap_or("My site");
    let base = get("baseURL")
        .or(get("baseurl"))
        .or(get("base_url"))
        .unwrap_or("http://localhost:8080/");
    let mut out = format!(
        "# Imported by `fencepost import`. Every key is optional (see the docs).\ntitle = {}\nbase_url = {}\n",
        toml::Value::from(title),
        toml::Value::from(url_path(base).trim_start_matches('/').to_string()),
    );
    if let Some(tz) = get("timeZone").or(get("timezone")) {
        out.push_str(&format!(
            "\n[publish]\ntimezone = {}\n",
            toml::Value::from(tz)
        ));
    }
    out.push_str("\n[ledger]\npath = \".fencepost/ledger.sqlite\"\n");
    for s in sections {
        let (old, _) = patterns(config, Some(s));
        let url = new_pattern(&old, s)
            .replace(":slug", "{id}")
            .replace(":year", "{year}")
            .replace(":month", "{month}")
            .replace(":day", "{day}");
        let used: Vec<&String> = config
            .taxonomies
            .iter()
            .filter(|tx| {
                pages
                    .iter()
                    .any(|p| p.section.as_deref() == Some(s) && p.table.contains_key(*tx))
            })
            .collect();
        out.push_str(&format!(
            "\n[collections.{s}]\nurl = {}\ntemplate = \"post.html\"\nlist_url = {}\ntitle = {}\nid = \"slug\"\ndue = \"publish_at\"\nfeed = true\ntaxonomies = {}\n",
            toml::Value::from(url),
            toml::Value::from(format!("/{s}/")),
            toml::Value::from(capitalised(s)),
            toml::Value::from(used.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
        ));
    }
    for tx in &config.taxonomies {
        out.push_str(&format!(
            "\n[taxonomies.{tx}]\nurl = \"/{tx}/{{term}}/\"\ntemplate = \"term.html\"\nindex_url = \"/{tx}/\"\nindex_template = \"terms.html\"\nfeed = true\n"
        ));
    }
    out
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}
