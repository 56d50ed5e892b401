//! Atom feed, sitemaps and robots.txt, generated directly (with XML escaping) rather than
//! through templates so they are always well-formed.

use super::view::ItemPage;
use fencepost_core::clock::Instant;

pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    escape_into(&mut out, s);
    out
}

/// [`escape`] appended to `out`: the stretches between special characters copied whole
/// (each is ASCII, so never inside a multi-byte character).
fn escape_into(out: &mut String, s: &str) {
    fencepost_core::text::escape_into(out, s, |b| match b {
        b'&' => Some("&amp;"),
        b'<' => Some("&lt;"),
        b'>' => Some("&gt;"),
        b'"' => Some("&quot;"),
        b'\'' => Some("&apos;"),
        _ => None,
    });
}

/// `escape(&absolute(base_url, url))` appended to `out` (escaping commutes with joining).
fn absolute_escaped_into(out: &mut String, base_url: &str, url: &str) {
    escape_into(out, base_url.trim_end_matches('/'));
    out.push('/');
    escape_into(out, url.trim_start_matches('/'));
}

pub fn absolute(base_url: &str, url: &str) -> String {
    format!(
        "{}/{}",
        base_url.trim_end_matches('/'),
        url.trim_start_matches('/')
    )
}

/// One feed entry: the page, its last change, its first publication and its body HTML.
pub struct FeedEntry<'a> {
    pub view: &'a ItemPage,
    pub updated: Instant,
    pub published: Instant,
    pub body: &'a str,
}

/// What a feed is of: its title, author, the page it is of (`home_url`, also its id) and its
/// own URL (both site-relative).
pub struct FeedHead<'a> {
    pub title: &'a str,
    pub author: &'a str,
    pub base_url: &'a str,
    pub home_url: &'a str,
    pub self_url: &'a str,
}

/// An Atom feed (RFC 4287): feed-level `title`, `id`, `updated`, `author`, alternate and self
/// links; per entry `title`, `id`, `updated`, `published`, an alternate link, the summary
/// (when the body has one) and the content. `entries` newest first.
pub fn atom(h: &FeedHead<'_>, entries: &[FeedEntry<'_>]) -> String {
    let updated = entries
        .iter()
        .map(|e| e.updated)
        .max()
        .unwrap_or(Instant(0));
    let home = escape(&absolute(h.base_url, h.home_url));
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">\n");
    out += &format!(
        "<title>{}</title>\n<id>{home}</id>\n<link rel=\"alternate\" type=\"text/html\" href=\"{home}\"/>\n<link rel=\"self\" type=\"application/atom+xml\" href=\"{}\"/>\n<updated>{}</updated>\n<author><name>{}</name></author>\n<generator>fencepost</generator>\n",
        escape(h.title),
        escape(&absolute(h.base_url, h.self_url)),
        updated.rfc3339(),
        escape(h.author),
    );
    for e in entries {
        let url = escape(&absolute(h.base_url, &e.view.url));
        out += &format!(
            "<entry>\n<title>{}</title>\n<id>{url}</id>\n<link rel=\"alternate\" type=\"text/html\" href=\"{url}\"/>\n<published>{}</published>\n<updated>{}</updated>\n",
            escape(&e.view.title),
            e.published.rfc3339(),
            e.updated.max(e.published).rfc3339(),
        );
        if let Some(summary) = &e.view.summary_html {
            out += &format!("<summary type=\"html\">{}</summary>\n", escape(summary));
        }
        out += &format!(
            "<content type=\"html\">{}</content>\n</entry>\n",
            escape(e.body)
        );
    }
    out += "</feed>\n";
    out
}

/// An RSS 2.0 feed of the same entries (`rss.xml` beside `atom.xml`, with `feeds = ["atom",
/// "rss"]`): `description` is the summary when there is one, else the whole body.
pub fn rss(h: &FeedHead<'_>, entries: &[FeedEntry<'_>]) -> String {
    let updated = entries
        .iter()
        .map(|e| e.updated)
        .max()
        .unwrap_or(Instant(0));
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<rss version=\"2.0\" xmlns:atom=\"http://www.w3.org/2005/Atom\">\n<channel>\n");
    out += &format!(
        "<title>{}</title>\n<link>{}</link>\n<description>{}</description>\n<atom:link href=\"{}\" rel=\"self\" type=\"application/rss+xml\"/>\n<lastBuildDate>{}</lastBuildDate>\n<generator>fencepost</generator>\n",
        escape(h.title),
        escape(&absolute(h.base_url, h.home_url)),
        escape(h.title),
        escape(&absolute(h.base_url, h.self_url)),
        rfc822(updated),
    );
    for e in entries {
        let url = escape(&absolute(h.base_url, &e.view.url));
        let text = e.view.summary_html.as_deref().unwrap_or(e.body);
        out += &format!(
            "<item>\n<title>{}</title>\n<link>{url}</link>\n<guid isPermaLink=\"true\">{url}</guid>\n<pubDate>{}</pubDate>\n<description>{}</description>\n</item>\n",
            escape(&e.view.title),
            rfc822(e.published),
            escape(text),
        );
    }
    out += "</channel>\n</rss>\n";
    out
}

/// RFC 822 (as RSS 2.0 writes dates), in UTC.
fn rfc822(t: Instant) -> String {
    t.to_datetime()
        .format("%a, %d %b %Y %H:%M:%S +0000")
        .to_string()
}

/// A sitemap of `urls` (each with its last modification date). Written into one buffer
/// sized for it, no `format!` per URL: a cold build at 100,000 items writes its sitemaps last,
/// on one thread (~35 ms before, BENCHMARKS.md).
pub fn urlset(base_url: &str, urls: &[(String, Option<String>)]) -> String {
    const HEAD: &str = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n";
    let mut out = String::with_capacity(HEAD.len() + urls.len() * (base_url.len() + 80) + 12);
    out.push_str(HEAD);
    for (url, lastmod) in urls {
        out.push_str("<url><loc>");
        absolute_escaped_into(&mut out, base_url, url);
        out.push_str("</loc>");
        if let Some(d) = lastmod {
            out.push_str("<lastmod>");
            escape_into(&mut out, d);
            out.push_str("</lastmod>");
        }
        out.push_str("</url>\n");
    }
    out.push_str("</urlset>\n");
    out
}

pub fn sitemap_index(base_url: &str, files: &[String]) -> String {
    const HEAD: &str = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n";
    let mut out = String::with_capacity(HEAD.len() + files.len() * (base_url.len() + 48) + 16);
    out.push_str(HEAD);
    for f in files {
        out.push_str("<sitemap><loc>");
        absolute_escaped_into(&mut out, base_url, f);
        out.push_str("</loc></sitemap>\n");
    }
    out.push_str("</sitemapindex>\n");
    out
}

pub fn robots(base_url: &str) -> String {
    format!(
        "User-agent: *\nAllow: /\n\nSitemap: {}\n",
        absolute(base_url, "/sitemap.xml")
    )
}

/// An alias's page, for hosts that serve files as they are (every fencepost origin answers
/// its URL with a 301 instead): a browser is sent on at once, a search engine is told the
/// canonical URL, and a person without either sees a link.
pub fn redirect_page(base_url: &str, target: &str) -> String {
    let to = escape(&absolute(base_url, target));
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{to}</title><link rel=\"canonical\" href=\"{to}\"><meta name=\"robots\" content=\"noindex\"><meta http-equiv=\"refresh\" content=\"0; url={to}\"></head><body><p>This page has moved to <a href=\"{to}\">{to}</a>.</p></body></html>\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The character-by-character escape and the `format!`-per-URL sitemaps the buffered
    /// ones replaced, kept as their specification.
    fn escape_char_by_char(s: &str) -> String {
        let mut out = String::new();
        for c in s.chars() {
            match c {
                '&' => out.push_str("&amp;"),
                '<' => out.push_str("&lt;"),
                '>' => out.push_str("&gt;"),
                '"' => out.push_str("&quot;"),
                '\'' => out.push_str("&apos;"),
                c => out.push(c),
            }
        }
        out
    }

    fn urlset_formatted(base_url: &str, urls: &[(String, Option<String>)]) -> String {
        let mut out = String::from(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
        );
        for (url, lastmod) in urls {
            out += &format!(
                "<url><loc>{}</loc>",
                escape_char_by_char(&absolute(base_url, url))
            );
            if let Some(d) = lastmod {
                out += &format!("<lastmod>{}</lastmod>", escape_char_by_char(d));
            }
            out += "</url>\n";
        }
        out += "</urlset>\n";
        out
    }

    fn sitemap_index_formatted(base_url: &str, files: &[String]) -> String {
        let mut out = String::from(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
        );
        for f in files {
            let loc = escape_char_by_char(&absolute(base_url, f));
            out += &format!("<sitemap><loc>{loc}</loc></sitemap>\n");
        }
        out += "</sitemapindex>\n";
        out
    }

    /// Guards: the buffered sitemaps and escape write exactly what the formatted ones did —
    /// special characters at the start, the end, side by side, beside multi-byte characters,
    /// in the base URL, the path and the date; slashes trimmed at the join.
    #[test]
    fn buffered_sitemaps_write_what_the_formatted_ones_did() {
        let tricky = [
            "",
            "&",
            "a&b",
            "<>\"'&",
            "é&ü<日本>",
            "/answers/1/",
            "//x/",
            "a'b\"c",
            "ñ",
        ];
        for t in tricky {
            assert_eq!(escape(t), escape_char_by_char(t), "{t:?}");
        }
        let urls: Vec<(String, Option<String>)> = tricky
            .iter()
            .enumerate()
            .map(|(i, t)| {
                (
                    format!("/{t}/p{i}/"),
                    (i % 2 == 0).then(|| format!("2026-12-0{i}&{t}")),
                )
            })
            .collect();
        for base in [
            "https://x.org",
            "https://x.org/",
            "https://x.org/a&b/",
            "http://h/é'//",
        ] {
            assert_eq!(urlset(base, &urls), urlset_formatted(base, &urls), "{base}");
            let files: Vec<String> = urls.iter().map(|(u, _)| u.clone()).collect();
            assert_eq!(
                sitemap_index(base, &files),
                sitemap_index_formatted(base, &files)
            );
        }
        assert_eq!(
            urlset("https://x.org", &[]),
            urlset_formatted("https://x.org", &[])
        );
    }

    #[test]
    fn escapes_and_joins() {
        assert_eq!(escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&apos;");
        assert_eq!(absolute("https://x.org/", "/a/"), "https://x.org/a/");
        assert!(robots("https://x.org").contains("Sitemap: https://x.org/sitemap.xml"));
    }
}
