//! Zola's shortcode grammar, and only it: `{{ name(key=literal, …) }}` (inline) and
//! `{% name(key=literal, …) %}…{% end %}` (a block), a literal being a string (`"…"`, `'…'`,
//! `` `…` ``), a number, a boolean or an array of them; the escapes `{{/* … */}}` and
//! `{%/* … */%}`, shown as `{{ … }}` and `{% … %}`. Anything else in braces (`{{ page.title }}`,
//! `{{ get_url(path=x) }}` whose argument is no literal) is text, as Zola leaves it. Both the
//! build's renderer ([`super`]) and `import zola` read bodies with these rules.

use serde_json::{Map, Number, Value};

/// A shortcode call at the start of a text.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub name: String,
    pub args: Map<String, Value>,
    /// Its length in bytes (the opening tag of a block).
    pub len: usize,
    /// `{% … %}`: a block, closed by `{% end %}`.
    pub block: bool,
}

/// The call at the start of `s`, if `s` starts with one by Zola's grammar.
pub fn call(s: &str) -> Option<Call> {
    let (close, block) = if s.starts_with("{{") {
        ("}}", false)
    } else if s.starts_with("{%") {
        ("%}", true)
    } else {
        return None;
    };
    let end = s.find(close)?;
    let inside = s[2..end].trim();
    let (name, args) = inside.split_once('(')?;
    let name = name.trim();
    let args = args.trim_end().strip_suffix(')')?;
    let ident = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    if !ident {
        return None;
    }
    Some(Call {
        name: name.to_string(),
        args: arguments(args)?,
        len: end + 2,
        block,
    })
}

/// `{{/* … */}}` or `{%/* … */%}` at the start of `s`: the text it shows, and its length.
pub fn escape(s: &str) -> Option<(String, usize)> {
    let (open, close, shown) = if s.starts_with("{{/*") {
        ("{{/*", "*/}}", ("{{", "}}"))
    } else if s.starts_with("{%/*") {
        ("{%/*", "*/%}", ("{%", "%}"))
    } else {
        return None;
    };
    let end = s.find(close)?;
    let inner = &s[open.len()..end];
    Some((format!("{}{inner}{}", shown.0, shown.1), end + close.len()))
}

/// `{% end %}` at the start of `s`: its length.
pub fn block_end(s: &str) -> Option<usize> {
    let rest = s.strip_prefix("{%")?;
    let end = rest.find("%}")?;
    (rest[..end].trim() == "end").then_some(end + 4)
}

/// `key=literal, …` (or nothing) as a map; `None` when one is not a literal. As in Zola's
/// grammar (`kwargs*`), the comma between two arguments may be left out.
fn arguments(args: &str) -> Option<Map<String, Value>> {
    let mut out = Map::new();
    let mut rest = args;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == ',');
        if rest.is_empty() {
            return Some(out);
        }
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let key = &rest[..end];
        let after = rest[end..].trim_start().strip_prefix('=')?.trim_start();
        if key.is_empty() {
            return None;
        }
        let (value, used) = literal(after)?;
        out.insert(key.to_string(), value);
        rest = &after[used..];
    }
}

/// The literal at the start of `s`, and its length: a quoted string (no quote of its kind
/// inside), an array of literals, a boolean or a number.
fn literal(s: &str) -> Option<(Value, usize)> {
    let first = s.chars().next()?;
    if matches!(first, '"' | '\'' | '`') {
        let end = s[1..].find(first)? + 1;
        return Some((Value::String(s[1..end].to_string()), end + 1));
    }
    if first == '[' {
        let mut items = Vec::new();
        let mut at = 1;
        loop {
            at += s[at..].len()
                - s[at..]
                    .trim_start_matches(|c: char| c.is_whitespace() || c == ',')
                    .len();
            if s[at..].starts_with(']') {
                return Some((Value::Array(items), at + 1));
            }
            let (v, used) = literal(&s[at..])?;
            items.push(v);
            at += used;
        }
    }
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '_')))
        .unwrap_or(s.len());
    let word = &s[..end];
    let v = match word {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        w => match w.parse::<i64>() {
            Ok(i) => Value::Number(i.into()),
            Err(_) => Value::Number(Number::from_f64(w.parse::<f64>().ok()?)?),
        },
    };
    Some((v, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_by_zolas_grammar_and_nothing_else() {
        let c = call("{{ youtube(id=\"abc\", autoplay=true, n=3, list=[1, 'a']) }} x").unwrap();
        assert_eq!(c.name, "youtube");
        assert_eq!(
            Value::Object(c.args),
            serde_json::json!({"id": "abc", "autoplay": true, "n": 3, "list": [1, "a"]})
        );
        assert_eq!(
            c.len,
            "{{ youtube(id=\"abc\", autoplay=true, n=3, list=[1, 'a']) }}".len()
        );
        assert!(call("{% note(kind=\"tip\") %}").unwrap().block);
        assert!(call("{{ note() }}").is_some());
        for not in [
            "{{ page.title }}",
            "{{ get_url(path=asset) }}",
            "{{ 1x() }}",
            "{ x() }",
        ] {
            assert!(call(not).is_none(), "{not}");
        }
        assert_eq!(
            escape("{{/* x(a=1) */}}!"),
            Some(("{{ x(a=1) }}".into(), 16))
        );
        assert_eq!(block_end("{% end %}x"), Some(9));
    }
}
