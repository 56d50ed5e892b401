//! Atom feed, sitemaps and robots.txt, generated directly (with XML escaping) rather than
//! through templates so they are always well-formed.

use super::view::ItemPage;
use fencepost_core::clock::Instant;

pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
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

pub fn urlset(base_url: &str, urls: &[(String, Option<String>)]) -> String {
    let mut out = String::from(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for (url, lastmod) in urls {
        out += &format!("<url><loc>{}</loc>", escape(&absolute(base_url, url)));
        if let Some(d) = lastmod {
            out += &format!("<lastmod>{}</lastmod>", escape(d));
        }
        out += "</url>\n";
    }
    out += "</urlset>\n";
    out
}

pub fn sitemap_index(base_url: &str, files: &[String]) -> String {
    let mut out = String::from(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for f in files {
        out += &format!(
            "<sitemap><loc>{}</loc></sitemap>\n",
            escape(&absolute(base_url, f))
        );
    }
    out += "</sitemapindex>\n";
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

    #[test]
    fn escapes_and_joins() {
        assert_eq!(escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&apos;");
        assert_eq!(absolute("https://x.org/", "/a/"), "https://x.org/a/");
        assert!(robots("https://x.org").contains("Sitemap: https://x.org/sitemap.xml"));
    }
}
