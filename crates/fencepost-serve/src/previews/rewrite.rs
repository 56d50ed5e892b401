//! A preview page as it is served: its links into the site lead within the preview, and a
//! banner at the top of its `<body>` says what it is. The stored file is the public build's
//! bytes (so a preview deploy reuses every unchanged file); this runs per answer.
//!
//! The edge Worker does the same with HTMLRewriter (`edge/cloudflare/preview.js`), the same
//! engine (`lol_html`), on the same rules, so every origin answers the same bytes:
//!
//! - in the URL attributes below, a value that starts with the site's `base_url` or is
//!   root-relative under its base path (`/…`, not `//…`) gets `/.preview/NAME` after the base
//!   path; a `srcset` is split at commas and each candidate's URL (to its first space) is
//!   taken alike. Values are taken as written (entities are not decoded): a URL spelled with
//!   entities stays as it is and leads to the public site, which shows only what is public;
//! - the banner goes first in `<body>`.
//!
//! **Rejected**: rendering the preview with a base path of its own (every page would differ
//! from the public one, and a preview of a 10,000-page site would upload 10,000 pages), and
//! a `<base href>` (root-relative links ignore it).

use fencepost_bucket::preview::URL_PREFIX;
use fencepost_core::clock::Instant;

/// Attributes whose whole value is one URL.
const ONE_URL: &[&str] = &[
    "href",
    "src",
    "action",
    "formaction",
    "poster",
    "cite",
    "data",
    "background",
    "longdesc",
    "manifest",
    "icon",
    "codebase",
    "xlink:href",
];

/// Attributes holding a list of candidates (`url descriptor, …`).
const SRCSET: &[&str] = &["srcset", "imagesrcset"];

/// Which preview a page is served in.
pub(super) struct Into<'a> {
    pub base_path: &'a str,
    pub base_url: &'a str,
    pub name: &'a str,
    pub banner: &'a str,
}

impl Into<'_> {
    /// `v` led within the preview, if it leads into the site.
    pub(super) fn url(&self, v: &str) -> Option<String> {
        let within = format!("{}{}{}", self.base_path, URL_PREFIX, self.name);
        let base_url = self.base_url.trim_end_matches('/');
        if !base_url.is_empty() {
            if let Some(rest) = v.strip_prefix(base_url) {
                if rest.is_empty() || rest.starts_with('/') {
                    return Some(format!("{within}{}", or_slash(rest)));
                }
            }
        }
        if !v.starts_with('/') || v.starts_with("//") || v.starts_with("/\\") {
            return None;
        }
        let rest = v.strip_prefix(self.base_path)?;
        if !(rest.is_empty() || rest.starts_with('/')) || rest.starts_with(URL_PREFIX) {
            return None;
        }
        Some(format!("{within}{}", or_slash(rest)))
    }

    fn srcset(&self, v: &str) -> Option<String> {
        let mut changed = false;
        let parts: Vec<String> = (v.split(','))
            .map(|part| {
                let lead = part.len() - part.trim_start().len();
                let body = &part[lead..];
                let end = body.find(char::is_whitespace).unwrap_or(body.len());
                match self.url(&body[..end]) {
                    Some(u) => {
                        changed = true;
                        format!("{}{u}{}", &part[..lead], &body[end..])
                    }
                    None => part.to_string(),
                }
            })
            .collect();
        changed.then(|| parts.join(","))
    }
}

fn or_slash(rest: &str) -> &str {
    match rest.is_empty() {
        true => "/",
        false => rest,
    }
}

/// The banner a preview's pages show (the Worker writes the same bytes).
pub(super) fn banner(name: &str, as_of: Option<Instant>) -> String {
    let when = as_of.map_or("every scheduled change".to_string(), |t| t.rfc3339());
    format!(
        "<div data-fencepost-preview=\"{name}\" style=\"position:sticky;top:0;z-index:2147483647;background:#7a1f00;color:#fff;font:14px/1.6 system-ui,sans-serif;padding:4px 12px;text-align:center\">Preview {name} as of {when}: not public; only holders of its link see it</div>"
    )
}

/// The page that sends a reviewer who followed a link from another site on to `to` (already
/// percent-encoded): the move starts from the preview's own page, so the browser sends the
/// cookie with it. The Worker writes the same bytes.
pub(crate) fn onward(name: &str, to: &str) -> String {
    let to = to
        .replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    format!(
        "<!doctype html><meta charset=\"utf-8\"><meta name=\"referrer\" content=\"no-referrer\"><meta http-equiv=\"refresh\" content=\"0;url={to}\"><title>Preview {name}</title><p><a href=\"{to}\">Open preview {name}</a></p>\n"
    )
}

/// The page `html` as preview `into` serves it. A page the rewriter cannot read is served as
/// it is.
pub(super) fn page(html: &[u8], into: &Into<'_>) -> Vec<u8> {
    use lol_html::html_content::ContentType;
    let mut out = Vec::with_capacity(html.len() + into.banner.len() + 256);
    let links = lol_html::element!("*", |el| {
        let mut changed = Vec::new();
        for a in el.attributes() {
            let name = a.name();
            let raw = a.value();
            let new = match name.as_str() {
                n if SRCSET.contains(&n) => into.srcset(&raw),
                n if ONE_URL.contains(&n) => into.url(&raw),
                _ => None,
            };
            if let Some(v) = new {
                changed.push((name, v));
            }
        }
        for (name, value) in changed {
            el.set_attribute(&name, &value)?;
        }
        Ok(())
    });
    let banner = lol_html::element!("body", |el| {
        el.prepend(into.banner, ContentType::Html);
        Ok(())
    });
    let settings = lol_html::Settings {
        element_content_handlers: vec![links, banner],
        ..lol_html::Settings::new()
    };
    let mut rewriter = lol_html::HtmlRewriter::new(settings, |c: &[u8]| out.extend_from_slice(c));
    let done = rewriter.write(html).and_then(|_| rewriter.end());
    match done {
        Ok(()) => out,
        Err(e) => {
            tracing::warn!(error = %e, "a preview page could not be read as HTML: served as it is");
            html.to_vec()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn into<'a>(base_path: &'a str, base_url: &'a str) -> Into<'a> {
        Into {
            base_path,
            base_url,
            name: "pr-7",
            banner: "<p>B</p>",
        }
    }

    #[test]
    fn links_into_the_site_lead_within_the_preview() {
        let i = into("", "https://example.org/");
        assert_eq!(
            i.url("/posts/a/").as_deref(),
            Some("/.preview/pr-7/posts/a/")
        );
        assert_eq!(i.url("/").as_deref(), Some("/.preview/pr-7/"));
        assert_eq!(
            i.url("https://example.org/x").as_deref(),
            Some("/.preview/pr-7/x")
        );
        assert_eq!(
            i.url("https://example.org").as_deref(),
            Some("/.preview/pr-7/")
        );
        for out in [
            "//cdn.example/x",
            "https://other.org/",
            "rel/x",
            "#top",
            "/.preview/x/",
            "https://example.org.evil/",
        ] {
            assert_eq!(i.url(out), None, "{out}");
        }
        let p = into("/docs", "https://example.org/docs/");
        assert_eq!(p.url("/docs/a/").as_deref(), Some("/docs/.preview/pr-7/a/"));
        assert_eq!(p.url("/other/"), None);
        assert_eq!(p.url("/docsx"), None);
    }

    #[test]
    fn a_page_gets_its_links_and_the_banner_and_nothing_else_changes() {
        let i = into("", "https://example.org/");
        let html = b"<!doctype html><html><body class=x><a href='/a/'>a</a> <img srcset=\"/i.png 1x, https://cdn.org/j.png 2x\" src=/i.png><script>var u = \"/no/\";</script></body></html>";
        let out = String::from_utf8(page(html, &i)).unwrap();
        assert_eq!(
            out,
            "<!doctype html><html><body class=x><p>B</p><a href=\"/.preview/pr-7/a/\">a</a> <img srcset=\"/.preview/pr-7/i.png 1x, https://cdn.org/j.png 2x\" src=\"/.preview/pr-7/i.png\"><script>var u = \"/no/\";</script></body></html>"
        );
    }
}
