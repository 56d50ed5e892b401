//! Turning a request path into a file path inside a revision, refusing anything that could
//! leave it. Pure, so every rule has a unit test.
//!
//! `.` and `..` segments (and their encodings `%2e`, `.%2e`, …) are resolved the way the URL
//! standard resolves them — what every browser sends, and what the edge Worker's runtime does
//! before the Worker sees a path — so every origin answers a path the same: `/a/../b` is `/b`,
//! and `..` at the root stays at the root. No segment is left that could climb out; what could
//! mean something else after decoding (an encoded slash or backslash, NUL, bad UTF-8, `//`) is
//! refused.

/// Why a request path is refused (answered 400).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    NotUtf8,
    Nul,
    EncodedSlash,
    EmptySegment,
    NotAbsolute,
}

impl Refusal {
    pub fn message(&self) -> &'static str {
        match self {
            Refusal::NotUtf8 => "the path is not UTF-8",
            Refusal::Nul => "the path contains a NUL byte",
            Refusal::EncodedSlash => "the path contains an encoded slash",
            Refusal::EmptySegment => "the path contains an empty segment (//)",
            Refusal::NotAbsolute => "the path must start with /",
        }
    }
}

/// A checked request path: segments without `.`/`..`, and whether it ended with `/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestPath {
    /// `/`-joined, no leading slash; empty for the root.
    pub rel: String,
    pub trailing_slash: bool,
}

impl RequestPath {
    /// The file to look up first: `a/b/` → `a/b/index.html`, `/` → `index.html`.
    pub fn file(&self) -> String {
        if self.rel.is_empty() {
            "index.html".to_string()
        } else if self.trailing_slash {
            format!("{}/index.html", self.rel)
        } else {
            self.rel.clone()
        }
    }
}

/// Checks the raw (percent-encoded) path of a request.
pub fn parse(raw: &str) -> Result<RequestPath, Refusal> {
    if !raw.starts_with('/') {
        return Err(Refusal::NotAbsolute);
    }
    let lower = raw.to_ascii_lowercase();
    if lower.contains("%2f") || lower.contains("%5c") {
        return Err(Refusal::EncodedSlash);
    }
    let resolved = resolve_dots(&raw.replace('\\', "/"));
    let decoded = percent_encoding::percent_decode_str(&resolved)
        .decode_utf8()
        .map_err(|_| Refusal::NotUtf8)?;
    if decoded.contains('\0') {
        return Err(Refusal::Nul);
    }
    let body = &decoded[1..];
    let trailing_slash = body.is_empty() || body.ends_with('/');
    let trimmed = body.strip_suffix('/').unwrap_or(body);
    let mut segments = Vec::new();
    if !trimmed.is_empty() {
        for seg in trimmed.split('/') {
            match seg {
                "" => return Err(Refusal::EmptySegment),
                s => segments.push(s),
            }
        }
    }
    Ok(RequestPath {
        rel: segments.join("/"),
        trailing_slash,
    })
}

/// The URL standard's path rule on a raw (still encoded) absolute path: a raw backslash is a
/// slash (the caller replaces it), `.`/`%2e` segments drop out, `..`/`.%2e`/`%2e.`/`%2e%2e`
/// remove the segment before them (none at the root), and either one last leaves a trailing
/// slash.
fn resolve_dots(raw: &str) -> String {
    let segments: Vec<&str> = raw[1..].split('/').collect();
    let mut out: Vec<&str> = Vec::with_capacity(segments.len());
    for (i, seg) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match seg.to_ascii_lowercase().as_str() {
            ".." | ".%2e" | "%2e." | "%2e%2e" => {
                out.pop();
                if last {
                    out.push("");
                }
            }
            "." | "%2e" => {
                if last {
                    out.push("");
                }
            }
            _ => out.push(seg),
        }
    }
    format!("/{}", out.join("/"))
}

/// Where a request path lies against the site's base path.
pub enum Under<'a> {
    /// Inside the site: the path as the site sees it (`/project/a/` is `/a/`).
    Site(&'a str),
    /// `/` or the base path without its slash: redirected to the site's root.
    Root,
    /// Anywhere else on the host.
    Elsewhere,
}

pub fn under_base<'a>(base: &str, raw: &'a str) -> Under<'a> {
    if base.is_empty() {
        return Under::Site(raw);
    }
    match raw.strip_prefix(base) {
        Some(rest) if rest.starts_with('/') => Under::Site(rest),
        Some("") => Under::Root,
        _ if raw == "/" => Under::Root,
        _ => Under::Elsewhere,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_under_a_base_path_answers_only_under_it() {
        let site = |b: &str, raw: &str| match under_base(b, raw) {
            Under::Site(p) => Some(p.to_string()),
            _ => None,
        };
        assert_eq!(site("", "/a/"), Some("/a/".into()));
        assert_eq!(site("/project", "/project/a/"), Some("/a/".into()));
        assert_eq!(site("/project", "/project/"), Some("/".into()));
        assert!(matches!(under_base("/project", "/project"), Under::Root));
        assert!(matches!(under_base("/project", "/"), Under::Root));
        assert!(matches!(
            under_base("/project", "/projects/a/"),
            Under::Elsewhere
        ));
        assert!(matches!(under_base("/project", "/a/"), Under::Elsewhere));
    }

    #[test]
    fn ordinary_paths() {
        assert_eq!(parse("/").unwrap().file(), "index.html");
        assert_eq!(parse("/answers/3/").unwrap().file(), "answers/3/index.html");
        assert_eq!(parse("/style.css").unwrap().file(), "style.css");
        assert_eq!(parse("/a%20b/").unwrap().file(), "a b/index.html");
        assert_eq!(parse("/caf%C3%A9").unwrap().rel, "café");
    }

    #[test]
    fn dot_segments_resolve_as_the_url_standard_says_and_never_climb_out() {
        let rel = |p: &str| {
            let r = parse(p).unwrap();
            (r.rel, r.trailing_slash)
        };
        assert_eq!(rel("/../etc/passwd"), ("etc/passwd".into(), false));
        assert_eq!(rel("/a/../../x"), ("x".into(), false));
        assert_eq!(rel("/%2e%2e/etc/passwd"), ("etc/passwd".into(), false));
        assert_eq!(rel("/%2E%2E/%2E%2E/etc"), ("etc".into(), false));
        assert_eq!(rel("/.%2e/a/%2e./b"), ("b".into(), false));
        assert_eq!(rel("/./index.html"), ("index.html".into(), false));
        assert_eq!(rel("/a/b/.."), ("a".into(), true));
        assert_eq!(rel("/a/."), ("a".into(), true));
        assert_eq!(rel("/.."), ("".into(), true));
        assert_eq!(rel("/a\\..\\b"), ("b".into(), false));
        assert_eq!(
            rel("/answers\\..\\..\\secret.txt"),
            ("secret.txt".into(), false)
        );
        // `...` and `.a` are names, not dot segments.
        assert_eq!(rel("/.../.a"), (".../.a".into(), false));
    }

    #[test]
    fn what_could_mean_something_else_after_decoding_is_refused() {
        assert_eq!(parse("/..%2fetc%2fpasswd"), Err(Refusal::EncodedSlash));
        assert_eq!(parse("/a%5c..%5cb"), Err(Refusal::EncodedSlash));
        assert_eq!(parse("/index.html%00.css"), Err(Refusal::Nul));
        assert_eq!(parse("//etc/passwd"), Err(Refusal::EmptySegment));
        assert_eq!(parse("etc/passwd"), Err(Refusal::NotAbsolute));
        assert_eq!(parse("/%ff"), Err(Refusal::NotUtf8));
    }
}
