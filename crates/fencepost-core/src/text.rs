//! Bytes as text, where they are almost always valid UTF-8 already.

use std::borrow::Cow;

/// `bytes` as text, invalid sequences replaced by U+FFFD — what `String::from_utf8_lossy`
/// gives, but checked first with `str::from_utf8`, which validates ASCII a word at a time
/// where the lossy walk looks at every byte (a rendered page or a page body is almost never
/// anything but valid: in a cold build of 10,000 pages the walk was ~6% of the samples).
pub fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// [`lossy`] of bytes already owned: valid text keeps its buffer, with no copy.
pub fn lossy_owned(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// `s` appended to `out` with each byte `entity` names replaced by its entity, the runs
/// between them copied whole. `entity` must name ASCII bytes only: then every cut falls
/// between characters. The one loop behind XML's escaping and HTML's autoescaping.
pub fn escape_into(out: &mut String, s: &str, entity: impl Fn(u8) -> Option<&'static str>) {
    let mut plain = 0;
    for (i, b) in s.bytes().enumerate() {
        if let Some(e) = entity(b) {
            out.push_str(&s[plain..i]);
            out.push_str(e);
            plain = i + 1;
        }
    }
    out.push_str(&s[plain..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_text_as_the_lossy_walk() {
        let cases: [&[u8]; 6] = [
            b"",
            b"plain ascii <a href=\"/x/\">",
            "caf\u{e9} \u{1f600}".as_bytes(),
            b"bad \xff byte",
            b"cut \xe2\x82",
            b"\xc0\xafovers",
        ];
        for c in cases {
            assert_eq!(lossy(c), String::from_utf8_lossy(c), "{c:?}");
            assert_eq!(lossy_owned(c.to_vec()), String::from_utf8_lossy(c), "{c:?}");
        }
        assert!(matches!(lossy(b"valid"), Cow::Borrowed(_)));
    }
}
