//! Turning a request path into a file path inside a revision, refusing anything that could
//! leave it. Pure, so every rule has a unit test.

/// Why a request path is refused (answered 400).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    NotUtf8,
    Nul,
    Backslash,
    EncodedSlash,
    DotSegment,
    EmptySegment,
    NotAbsolute,
}

impl Refusal {
    pub fn message(&self) -> &'static str {
        match self {
            Refusal::NotUtf8 => "the path is not UTF-8",
            Refusal::Nul => "the path contains a NUL byte",
            Refusal::Backslash => "the path contains a backslash",
            Refusal::EncodedSlash => "the path contains an encoded slash",
            Refusal::DotSegment => "the path contains a . or .. segment",
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
    let decoded = percent_encoding::percent_decode_str(raw)
        .decode_utf8()
        .map_err(|_| Refusal::NotUtf8)?;
    if decoded.contains('\0') {
        return Err(Refusal::Nul);
    }
    if decoded.contains('\\') {
        return Err(Refusal::Backslash);
    }
    let body = &decoded[1..];
    let trailing_slash = body.is_empty() || body.ends_with('/');
    let trimmed = body.strip_suffix('/').unwrap_or(body);
    let mut segments = Vec::new();
    if !trimmed.is_empty() {
        for seg in trimmed.split('/') {
            match seg {
                "" => return Err(Refusal::EmptySegment),
                "." | ".." => return Err(Refusal::DotSegment),
                s => segments.push(s),
            }
        }
    }
    Ok(RequestPath {
        rel: segments.join("/"),
        trailing_slash,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_paths() {
        assert_eq!(parse("/").unwrap().file(), "index.html");
        assert_eq!(parse("/answers/3/").unwrap().file(), "answers/3/index.html");
        assert_eq!(parse("/style.css").unwrap().file(), "style.css");
        assert_eq!(parse("/a%20b/").unwrap().file(), "a b/index.html");
        assert_eq!(parse("/caf%C3%A9").unwrap().rel, "café");
    }

    #[test]
    fn traversal_attempts_are_refused() {
        assert_eq!(parse("/../etc/passwd"), Err(Refusal::DotSegment));
        assert_eq!(parse("/a/../../x"), Err(Refusal::DotSegment));
        assert_eq!(parse("/%2e%2e/etc/passwd"), Err(Refusal::DotSegment));
        assert_eq!(parse("/%2E%2E/%2E%2E/etc"), Err(Refusal::DotSegment));
        assert_eq!(parse("/./index.html"), Err(Refusal::DotSegment));
        assert_eq!(parse("/..%2fetc%2fpasswd"), Err(Refusal::EncodedSlash));
        assert_eq!(parse("/a%5c..%5cb"), Err(Refusal::EncodedSlash));
        assert_eq!(parse("/a\\..\\b"), Err(Refusal::Backslash));
        assert_eq!(parse("/index.html%00.css"), Err(Refusal::Nul));
        assert_eq!(parse("//etc/passwd"), Err(Refusal::EmptySegment));
        assert_eq!(parse("etc/passwd"), Err(Refusal::NotAbsolute));
        assert_eq!(parse("/%ff"), Err(Refusal::NotUtf8));
    }
}
