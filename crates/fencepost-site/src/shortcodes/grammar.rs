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

/// `key=literal, …` (or nothing) as a map; `None` when one is not a literal.
fn arguments(args: &str) -> Option<Map<String, Value>> {
    let mut out = Map::new();
    let args = args.trim();
    if args.is_empty() {
        return Some(out);
    }
    for a in split(args) {
        let (k, v) = a.split_once('=')?;
        let k = k.trim();
        let key = !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !key {
            return None;
        }
        out.insert(k.to_string(), literal(v.trim())?);
    }
    Some(out)
}

/// One literal as Zola reads it.
fn literal(v: &str) -> Option<Value> {
    let quoted = |q: char| v.len() >= 2 && v.starts_with(q) && v.ends_with(q);
    if quoted('"') || quoted('\'') || quoted('`') {
        return Some(Value::String(v[1..v.len() - 1].to_string()));
    }
    if let Some(inner) = v.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
        let inner = inner.trim();
        if inner.is_empty() {
            return Some(Value::Array(Vec::new()));
        }
        let items: Option<Vec<Value>> = split(inner)
            .into_iter()
            .map(|x| literal(x.trim()))
            .collect();
        return items.map(Value::Array);
    }
    match v {
        "true" => return Some(Value::Bool(true)),
        "false" => return Some(Value::Bool(false)),
        _ => {}
    }
    if let Ok(i) = v.parse::<i64>() {
        return Some(Value::Number(i.into()));
    }
    v.parse::<f64>()
        .ok()
        .and_then(Number::from_f64)
        .map(Value::Number)
}

/// Arguments split on the commas outside quotes and brackets.
fn split(s: &str) -> Vec<&str> {
    let (mut out, mut start, mut quote, mut depth) = (Vec::new(), 0, None, 0i32);
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'' | '`') => quote = Some(c),
            (None, '[') => depth += 1,
            (None, ']') => depth -= 1,
            (None, ',') if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
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
