//! A Zola page's body as Zola reads it, turned into Markdown fencepost renders the same:
//!
//! - **Shortcodes by Zola's grammar only**: `{{ name(key=literal, …) }}` and
//!   `{% name(key=literal, …) %}…{% end %}`, where a literal is a string, a number, a boolean
//!   or an array. They are the site's own Tera templates, so each is removed (a block one
//!   keeps its body) and reported with its line. Anything else in braces — `{{ get_url(path=
//!   asset) }}`, `{{ page.permalink }}` — is text, as Zola leaves it. Zola reads shortcodes
//!   before Markdown, in code blocks too, and so does this (its documentation writes its code
//!   samples with the escape for that reason).
//! - **The escape** `{{/* … */}}` (and `{%/* … */%}`) is written as Zola renders it, `{{ … }}`,
//!   wherever it is.
//! - **Internal links** `[text](@/section/page.md#anchor)` become the page's URL in the new
//!   site (a section's `_index.md`: the section's URL); one that names no imported page is
//!   kept as written and reported. Links are Markdown's: nothing inside a fenced code block or
//!   a code span is one.

use super::shortcodes::Unconverted;
use fencepost_site::shortcodes::grammar;
use std::collections::BTreeSet;
use std::ops::Range;

/// The body converted, and what could not be (with its line in the body).
pub(super) fn convert(
    body: &str,
    url_of: &dyn Fn(&str) -> Option<String>,
    kept: &BTreeSet<String>,
) -> (String, Vec<Unconverted>) {
    let code = code_ranges(body);
    let mut out = String::with_capacity(body.len());
    let mut report = Vec::new();
    // Whether each open block shortcode is kept (its `{% end %}` is written) or not.
    let mut blocks: Vec<bool> = Vec::new();
    let line_at = |i: usize| body[..i].matches('\n').count() + 1;
    let mut i = 0;
    // The code ranges are sorted and disjoint: `next` is the first that does not end before i.
    let mut next = 0;
    while i < body.len() {
        let rest = &body[i..];
        while next < code.len() && code[next].end <= i {
            next += 1;
        }
        let in_code = code.get(next).is_some_and(|r| r.contains(&i));
        if let Some((text, used)) = grammar::escape(rest) {
            // With shortcodes kept, the new site reads escapes as Zola does: as written.
            match kept.is_empty() {
                true => out.push_str(&text),
                false => out.push_str(&rest[..used]),
            }
            i += used;
        } else if let Some(c) = grammar::call(rest) {
            let keep = kept.contains(&c.name);
            if c.block {
                blocks.push(keep);
            }
            match keep {
                true => out.push_str(&rest[..c.len]),
                false => report.push(not_kept(line_at(i), &c)),
            }
            i += c.len;
        } else if let Some(used) = grammar::block_end(rest) {
            if blocks.pop() == Some(true) {
                out.push_str(&rest[..used]);
            }
            i += used;
        } else if let Some(target) = rest.strip_prefix("](@/").filter(|_| !in_code) {
            let end = target.find([')', ' ', '\n']).unwrap_or(target.len());
            let (path, anchor) = match target[..end].split_once('#') {
                Some((p, a)) => (p, format!("#{a}")),
                None => (&target[..end], String::new()),
            };
            match resolve(path, url_of) {
                Some(url) => out.push_str(&format!("]({url}{anchor}")),
                None => {
                    out.push_str(&rest[..4 + end]);
                    report.push(Unconverted {
                        line: line_at(i),
                        name: format!("link @/{path}"),
                        why: "it names no page this import wrote: link the page's URL by hand"
                            .into(),
                    });
                }
            }
            i += 4 + end;
        } else {
            let c = rest.chars().next().expect("i is on a char boundary");
            out.push(c);
            i += c.len_utf8();
        }
    }
    (out, report)
}

/// `@/path` as the new site's URL: a page's, or a section's for its `_index.md`.
fn resolve(path: &str, url_of: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    if let Some(url) = url_of(path) {
        return Some(url);
    }
    // A translated section (`blog/_index.es.md`) is at its language's prefix.
    let (dir, lang) = match path.strip_suffix("_index.md") {
        Some(dir) => (dir, None),
        None => {
            let stem = path.strip_suffix(".md")?;
            let (dir, code) = stem.rsplit_once("_index.")?;
            let ok =
                !code.is_empty() && code.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-');
            (dir, Some(code).filter(|_| ok)?.into())
        }
    };
    let dir = dir.trim_end_matches('/');
    let prefix: String = lang.map_or(String::new(), |c: &str| format!("/{c}"));
    match dir.is_empty() {
        true => Some(format!("{prefix}/")),
        false => Some(format!("{prefix}/{dir}/")),
    }
}

/// A call of a shortcode the new site does not have, for the report.
fn not_kept(line: usize, c: &grammar::Call) -> Unconverted {
    let name = &c.name;
    let body = if c.block { " (its body was kept)" } else { "" };
    Unconverted {
        line,
        name: name.clone(),
        why: format!("`{name}` is one of the site's own Zola shortcodes, and its template was not kept (no such template, or it cannot render here: see templates/shortcodes/ in this report){body}: write its HTML or Markdown in the body"),
    }
}

/// Byte ranges of fenced code blocks (``` or ~~~, to the matching fence or the end) and
/// inline code spans (a run of backticks to the next run of the same length).
fn code_ranges(body: &str) -> Vec<Range<usize>> {
    let mut ranges = Vec::new();
    let mut fence: Option<(usize, &str)> = None;
    let mut offset = 0;
    let mut text_start = 0;
    for line in body.split_inclusive('\n') {
        let t = line.trim_start();
        let indent = line.len() - t.len();
        let marker = ["```", "~~~"]
            .into_iter()
            .find(|m| indent <= 3 && t.starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => {
                spans(body, text_start, offset, &mut ranges);
                fence = Some((offset, m));
            }
            (Some((start, m)), Some(n))
                if m == n && t.trim_end().trim_start_matches(n).is_empty() =>
            {
                ranges.push(start..offset + line.len());
                fence = None;
                text_start = offset + line.len();
            }
            _ => {}
        }
        offset += line.len();
    }
    match fence {
        Some((start, _)) => ranges.push(start..body.len()),
        None => spans(body, text_start, body.len(), &mut ranges),
    }
    ranges.sort_by_key(|r| r.start);
    ranges
}

/// Inline code spans in `body[from..to]`, paragraph by paragraph (a span never crosses a
/// blank line).
fn spans(body: &str, from: usize, to: usize, ranges: &mut Vec<Range<usize>>) {
    let mut start = from;
    while let Some(gap) = body[start..to].find("\n\n") {
        spans_in(body, start, start + gap, ranges);
        start += gap + 2;
    }
    spans_in(body, start, to, ranges);
}

/// Inline code spans in one paragraph, `body[from..to]`.
fn spans_in(body: &str, from: usize, to: usize, ranges: &mut Vec<Range<usize>>) {
    let text = &body[from..to];
    let bytes = text.as_bytes();
    let run = |i: usize| bytes[i..].iter().take_while(|b| **b == b'`').count();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let n = run(i);
        let mut j = i + n;
        let mut closed = None;
        while j < bytes.len() {
            if bytes[j] == b'`' {
                let m = run(j);
                if m == n {
                    closed = Some(j + m);
                    break;
                }
                j += m;
            } else {
                j += 1;
            }
        }
        match closed {
            Some(end) => {
                ranges.push(from + i..from + end);
                i = end;
            }
            None => i += n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(p: &str) -> Option<String> {
        match p {
            "blog/first.md" => Some("/blog/first/".into()),
            "docs/getting-started/index.md" => Some("/docs/getting-started/".into()),
            _ => None,
        }
    }

    #[test]
    fn shortcodes_by_zolas_grammar_only_in_code_too() {
        let body = "a {{ youtube(id=\"x\", autoplay=true) }} b\n\
                    {% note(kind=\"tip\") %}Kept{% end %}\n\
                    `{{ not_a(call) }}` and {{ get_url(path=asset) }} stay\n\
                    ```\n{{ youtube(id=\"in code\") }}\n```\n\
                    {{/* youtube(id=\"shown\") */}}\n";
        let (out, r) = convert(body, &urls, &BTreeSet::new());
        assert_eq!(
            out,
            "a  b\nKept\n`{{ not_a(call) }}` and {{ get_url(path=asset) }} stay\n\
             ```\n\n```\n{{ youtube(id=\"shown\") }}\n"
        );
        let seen: Vec<(usize, &str)> = r.iter().map(|u| (u.line, u.name.as_str())).collect();
        assert_eq!(seen, [(1, "youtube"), (2, "note"), (5, "youtube")]);
    }

    #[test]
    fn internal_links_become_urls_and_unknown_ones_are_reported() {
        let body = "An `unmatched backtick.\n\n\
                    See [one](@/blog/first.md), [two](@/docs/getting-started/index.md#install),\n\
                    [the blog](@/blog/_index.md), [gone](@/blog/gone.md) and `[x](@/blog/first.md)`.";
        let (out, r) = convert(body, &urls, &BTreeSet::new());
        assert_eq!(
            out,
            "An `unmatched backtick.\n\nSee [one](/blog/first/), [two](/docs/getting-started/#install),\n\
             [the blog](/blog/), [gone](@/blog/gone.md) and `[x](@/blog/first.md)`."
        );
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].line, r[0].name.as_str()), (4, "link @/blog/gone.md"));
    }
}
