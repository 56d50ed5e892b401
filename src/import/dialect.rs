//! What a Zola site says differently from a Hugo one, in its pages: front matter keys, and
//! shortcodes that are the site's own templates.

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
