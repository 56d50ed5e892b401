//! A Zola site read into a [`Plan`]: `config.toml` (title, base URL, `[[taxonomies]]`),
//! `content/` (sections as collections — Zola's `/section/slug/` URLs, `path` overrides kept
//! as aliases — root pages as plain pages, page bundles with their files), `static/`. The
//! walk and the writing are Hugo's (`hugo.rs`); what differs is read here.

use super::hugo::{self, Config};
use super::{read_text, ImportError, Plan};
use crate::content::{front_matter_table, Format};
use std::collections::BTreeMap;
use std::path::Path;

/// Reads the Zola site at `src`.
pub fn plan(src: &Path, now: crate::clock::Instant) -> Result<Plan, ImportError> {
    let path = src.join("config.toml");
    if !path.is_file() {
        return Err(ImportError::NoConfig {
            path: src.to_path_buf(),
            what: "Zola",
            expected: "config.toml with base_url",
        });
    }
    let text = read_text(&path)?;
    let table = front_matter_table(&text, Format::Toml).map_err(|e| ImportError::Source {
        path: path.clone(),
        line: Some(e.line.saturating_sub(1).max(1)),
        why: e.message,
    })?;
    let taxonomies = table
        .get("taxonomies")
        .and_then(|t| t.as_array())
        .map(|list| {
            list.iter()
                .filter_map(|t| t.get("name").and_then(|n| n.as_str()).map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let mut plan = Plan::default();
    for (key, why) in [
        ("languages", "fencepost sites have one language: only the default language's content was imported"),
        ("theme", "themes are Zola (Tera) templates written for Zola's variables: the starter templates were written instead"),
    ] {
        if table.contains_key(key) {
            plan.report.skip("config.toml", None, key, why);
        }
    }
    let config = Config {
        table,
        taxonomies,
        permalinks: BTreeMap::new(),
        zola: true,
    };
    hugo::plan_with(src, config, plan, now)
}

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

/// Zola's shortcodes (`{{ name(args) }}`, `{% name(args) %}…{% end %}`) cannot be rendered
/// (they are the site's own Tera templates): each is removed — a body one keeps its body —
/// and reported with its line.
pub(super) fn strip_shortcodes(body: &str) -> (String, Vec<super::shortcodes::Unconverted>) {
    let mut out = String::with_capacity(body.len());
    let mut report = Vec::new();
    let mut rest = body;
    while let Some(at) = rest.find(['{']) {
        let after = &rest[at..];
        let (close, is_block) = if after.starts_with("{{") {
            ("}}", false)
        } else if after.starts_with("{%") {
            ("%}", true)
        } else {
            out.push_str(&rest[..at + 1]);
            rest = &rest[at + 1..];
            continue;
        };
        let Some(end) = after.find(close) else {
            out.push_str(&rest[..at + 1]);
            rest = &rest[at + 1..];
            continue;
        };
        let inside = after[2..end].trim();
        let name = inside.split('(').next().unwrap_or("").trim();
        if name.is_empty() || !inside.ends_with(')') || name.contains(' ') {
            // Not a shortcode call (`{% end %}` is handled with its block): kept as text.
            if inside == "end" {
                out.push_str(&rest[..at]);
                rest = &after[end + 2..];
                continue;
            }
            out.push_str(&rest[..at + 1]);
            rest = &rest[at + 1..];
            continue;
        }
        out.push_str(&rest[..at]);
        let line = body[..body.len() - rest.len() + at].matches('\n').count() + 1;
        report.push(super::shortcodes::Unconverted {
            line,
            name: name.to_string(),
            why: format!(
                "`{name}` is one of the site's own Zola shortcodes{}: write its HTML or Markdown in the body",
                if is_block { " (its body was kept)" } else { "" }
            ),
        });
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    (out, report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zola_shortcodes_are_stripped_and_reported() {
        let (out, r) = strip_shortcodes("a {{ youtube(id=\"x\") }} b\n{% note(kind=\"tip\") %}Kept{% end %}\n`{{ not a call }}`");
        assert_eq!(out, "a  b\nKept\n`{{ not a call }}`");
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].line, r[0].name.as_str()), (1, "youtube"));
        assert_eq!((r[1].line, r[1].name.as_str()), (2, "note"));
    }
}
