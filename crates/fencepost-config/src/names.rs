//! Names and URLs every part of the content model follows: the built-in front-matter keys,
//! the keys templates add, what a name and a URL pattern may be. Below collections and
//! taxonomies, which both check against it.

/// The built-in front-matter keys.
pub const FRONT_MATTER: &[&str] = &[
    "id",
    "day",
    "title",
    "image",
    "indexable",
    "publish_at",
    "withdrawn",
    "expire_at",
    "withdrawn_reason",
    "draft",
    "aliases",
    "weight",
];

/// Built-in keys a collection may still declare a field of its own by (added after sites
/// could have used the name): the declared field wins, and the built-in is off there.
pub const YIELDING: &[&str] = &["aliases", "weight"];

/// Keys the item template's `page` has besides them (and `extra`, the table of the rest).
pub const TEMPLATE_ONLY: &[&str] = &[
    "extra",
    "collection",
    "url",
    "published",
    "updated",
    "image_url",
    "body_html",
    "prev",
    "next",
    "embargoed_until",
    "embargoed_until_local",
    "summary_html",
    "taxonomies",
    "withdrawn_at",
];

/// Names that a list page and the site's own files use at the top of the output
/// (`.fencepost`: a revision's own files, `fencepost_output::own`).
const RESERVED_TOP: &[&str] = &["images", "sitemaps", "revisions", "assets", ".fencepost"];

/// Where a revision serves its transparency log and its items' JSON: fencepost's alone.
pub const RESERVED_LOG: &str = "/.well-known/fencepost/";

pub fn is_name(s: &str) -> bool {
    let mut b = s.bytes();
    b.next().is_some_and(|c| c.is_ascii_lowercase())
        && b.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_')
}

/// A taxonomy's name: as [`is_name`], and `-` as well, which Hugo and Zola both accept
/// (`theme-tags`); a template reaches it as `page.taxonomies["theme-tags"]`.
pub fn is_taxonomy_name(s: &str) -> bool {
    let mut b = s.bytes();
    b.next().is_some_and(|c| c.is_ascii_lowercase())
        && b.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_' || c == b'-')
        && !s.ends_with('-')
}

/// A URL pattern (`item`: with placeholders, `{id}` required) or a list URL.
pub fn check_url(url: &str, item: bool) -> Result<(), String> {
    if !url.starts_with('/') || !url.ends_with('/') {
        return Err("must start and end with \"/\"".into());
    }
    let mut rest = url;
    let mut has_id = false;
    while let Some(open) = rest.find('{') {
        let close = rest[open..]
            .find('}')
            .ok_or("opens a `{` it never closes")?;
        let ph = &rest[open + 1..open + close];
        if !item || !["id", "year", "month", "day"].contains(&ph) {
            return Err(format!(
                "has the placeholder {{{ph}}}: {}",
                if item {
                    "only {id}, {year}, {month} and {day} exist"
                } else {
                    "a list URL takes none"
                }
            ));
        }
        has_id |= ph == "id";
        rest = &rest[open + close + 1..];
    }
    if item && !has_id {
        return Err("must hold {id}, or every item would get the same URL".into());
    }
    let bare = url.replace(['{', '}'], "");
    if bare.contains("//")
        || bare.split('/').any(|p| p == "." || p == "..")
        || !bare
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"/-_.~".contains(&c))
    {
        return Err(
            "may hold only letters, digits, `-`, `_`, `.`, `~` and `/` (no `..`, no `//`)".into(),
        );
    }
    if bare.starts_with(RESERVED_LOG) {
        return Err(format!(
            "starts with {RESERVED_LOG}, where the site's transparency log is served"
        ));
    }
    if let Some(top) = bare.trim_start_matches('/').split('/').next() {
        if RESERVED_TOP.contains(&top) {
            return Err(format!(
                "starts with /{top}/, which the site's own files use"
            ));
        }
    }
    Ok(())
}
