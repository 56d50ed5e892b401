//! Atom feed, sitemaps and robots.txt, generated directly (with XML escaping) rather than
//! through templates so they are always well-formed.

use super::view::ItemPage;
use crate::clock::Instant;

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

/// `entries`: (view, updated instant, body HTML), newest first; `home_url`: the page the feed
/// is of (its id), `self_url`: the feed's own (both site-relative).
pub fn atom(
    title: &str,
    base_url: &str,
    home_url: &str,
    self_url: &str,
    entries: &[(&ItemPage, Instant, &str)],
) -> String {
    let updated = entries.iter().map(|e| e.1).max().unwrap_or(Instant(0));
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">\n");
    out += &format!(
        "<title>{}</title>\n<id>{}</id>\n<link href=\"{}\"/>\n<link rel=\"self\" href=\"{}\"/>\n<updated>{}</updated>\n",
        escape(title),
        escape(&absolute(base_url, home_url)),
        escape(&absolute(base_url, home_url)),
        escape(&absolute(base_url, self_url)),
        updated.rfc3339()
    );
    for (v, at, body) in entries {
        let url = escape(&absolute(base_url, &v.url));
        out += &format!(
            "<entry>\n<title>{}</title>\n<id>{url}</id>\n<link href=\"{url}\"/>\n<updated>{}</updated>\n<content type=\"html\">{}</content>\n</entry>\n",
            escape(&v.title),
            at.rfc3339(),
            escape(body)
        );
    }
    out += "</feed>\n";
    out
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
