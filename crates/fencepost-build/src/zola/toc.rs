//! A page's table of contents as Zola's templates see `page.toc`: its headings with ids
//! (`[markdown] heading_ids`, which `import` turns on), nested by level — each `{level, id,
//! title, permalink, children}`, the top level being the first heading's level, as Zola
//! makes it. Read from the page's HTML (the ledger's), so it is what the page shows.

use serde_json::{json, Value};

/// The headings of `html` (a page at `url`) as Zola's `toc`.
pub(super) fn of(html: &str, url: &str) -> Value {
    let heading = regex_heading();
    let mut flat: Vec<(u8, String, String)> = Vec::new();
    for c in heading.captures_iter(html) {
        let level = c[1].as_bytes()[0] - b'0';
        let id = c[2].to_string();
        let title = text_of(&c[3]);
        flat.push((level, id, title));
    }
    Value::Array(nest(&flat, url))
}

fn regex_heading() -> &'static regex::Regex {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(r#"(?s)<h([1-6])\s[^>]*?\bid="([^"]+)"[^>]*>(.*?)</h[1-6]>"#)
            .expect("a valid pattern")
    })
}

/// The text of a heading's HTML: tags left out, character references as written (the
/// template autoescapes `title`, so they are decoded first).
fn text_of(inner: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for ch in inner.chars() {
        match ch {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    htmlize::unescape(out.trim()).into_owned()
}

/// Headings nested under the nearest earlier one of a lower level.
fn nest(flat: &[(u8, String, String)], url: &str) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut i = 0;
    while i < flat.len() {
        let (level, id, title) = &flat[i];
        let end = flat[i + 1..]
            .iter()
            .position(|(l, _, _)| l <= level)
            .map_or(flat.len(), |p| i + 1 + p);
        out.push(json!({
            "level": level, "id": id, "title": title,
            "permalink": format!("{url}#{id}"),
            "children": nest(&flat[i + 1..end], url),
        }));
        i = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_nest_by_level() {
        let html = "<h2 id=\"a\">A &amp; B</h2><p>x</p><h3 id=\"a1\"><code>a1</code></h3><h2 id=\"b\">B</h2><h4>no id</h4>";
        let toc = of(html, "/docs/x/");
        assert_eq!(toc[0]["title"], "A & B");
        assert_eq!(toc[0]["children"][0]["id"], "a1");
        assert_eq!(toc[0]["children"][0]["title"], "a1");
        assert_eq!(toc[1]["permalink"], "/docs/x/#b");
        assert_eq!(toc.as_array().unwrap().len(), 2);
    }
}
