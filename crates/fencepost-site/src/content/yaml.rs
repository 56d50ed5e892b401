//! YAML front matter (`---` … `---`, as Hugo and Jekyll write it), read into the same TOML
//! table a `+++` front matter gives, so every key meets the same checks and messages.
//!
//! Why `yaml-rust2`: it is the maintained successor of `yaml-rust` (pure Rust, no `unsafe`
//! bindings, passes the YAML test suite), and its event parser tells a quoted scalar from a
//! plain one and where each is. That matters here: YAML has no date type of its own and TOML
//! has one, so a plain `date: 2026-01-02T10:00:00Z` becomes a TOML datetime (as Hugo reads
//! it) while a quoted `"2026-01-02"` stays a string. (`serde_yaml` is archived; its forks
//! lose the scalar's style.)
//!
//! Scalars follow YAML 1.2's core schema: `true`/`false`, integers, floats, `null` (a key
//! whose value is null is left out: TOML has no null). Anchors and aliases are resolved.
//!
//! **Bounded.** Aliases are expanded by copying what their anchor holds, so a few hundred bytes
//! of nested anchors ("a billion laughs") would otherwise grow into gigabytes and stop every
//! publish. A front matter may expand to at most [`MAX_VALUES`] values and [`MAX_BYTES`] bytes
//! of text, and nest at most [`MAX_DEPTH`] lists and mappings deep; past either it is an
//! invalid file (file, line and the bound), held alone while everything else publishes. The
//! bound is counted before anything is copied.

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// The most values (scalars, lists and mappings, counting every alias's copy) one front
/// matter may expand to.
pub const MAX_VALUES: usize = 100_000;
/// The most bytes of text (keys and scalars, counting every alias's copy) it may expand to.
pub const MAX_BYTES: usize = 16 << 20;
/// How deep lists and mappings may nest.
pub const MAX_DEPTH: usize = 64;

/// Why a YAML front matter cannot be read, and on which of its lines (1 = its first line,
/// the one after the opening `---`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    pub line: usize,
    pub message: String,
}

/// Reads a YAML document whatever its root (a data file: a list, a mapping, a scalar), under
/// the same bounds; `None` for an empty document.
pub fn to_value(text: &str) -> Result<Option<toml::Value>, YamlError> {
    let mut tree = Tree::default();
    Parser::new_from_str(text)
        .load(&mut tree, false)
        .map_err(|e| YamlError {
            line: e.marker().line().max(1),
            message: e.info().to_string(),
        })?;
    match tree.error {
        Some(e) => Err(e),
        None => Ok(tree.root),
    }
}

/// Reads a YAML front matter (the text between the fences) as a TOML table.
pub fn to_table(text: &str) -> Result<toml::Table, YamlError> {
    match to_value(text)? {
        None => Ok(toml::Table::new()),
        Some(toml::Value::Table(t)) => Ok(t),
        Some(_) => Err(YamlError {
            line: 1,
            message: "front matter must be a mapping of keys to values (`key: value` lines)".into(),
        }),
    }
}

/// A node being built: a mapping waiting for its next key or value, or a sequence. `from`
/// is what the document had expanded to when it opened (its anchor's weight is the rest).
enum Open {
    Map {
        table: toml::Table,
        /// The key read, waiting for its value (and that key's line).
        key: Option<(String, usize)>,
        anchor: usize,
        from: Weight,
    },
    Seq {
        items: Vec<toml::Value>,
        anchor: usize,
        from: Weight,
    },
}

/// How much a document (or an anchored node) expands to: values and bytes of text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Weight {
    values: usize,
    bytes: usize,
}

impl Weight {
    fn plus(self, other: Weight) -> Weight {
        Weight {
            values: self.values.saturating_add(other.values),
            bytes: self.bytes.saturating_add(other.bytes),
        }
    }

    fn minus(self, other: Weight) -> Weight {
        Weight {
            values: self.values - other.values,
            bytes: self.bytes - other.bytes,
        }
    }
}

/// An event receiver that builds the document, keeping the first error met.
#[derive(Default)]
struct Tree {
    open: Vec<Open>,
    root: Option<toml::Value>,
    anchors: std::collections::HashMap<usize, (toml::Value, Weight)>,
    error: Option<YamlError>,
    /// What the document has expanded to so far.
    weight: Weight,
}

impl MarkedEventReceiver for Tree {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        if self.error.is_some() {
            return;
        }
        let line = mark.line().max(1);
        let done = match ev {
            Event::Scalar(value, style, anchor, _) => {
                let w = Weight {
                    values: 1,
                    bytes: value.len(),
                };
                if !self.grow(w, line) {
                    return;
                }
                // A mapping's key is always a string, whatever it looks like.
                let as_key = matches!(self.open.last(), Some(Open::Map { key: None, .. }));
                let v = if as_key {
                    Some(toml::Value::String(value))
                } else {
                    scalar(value, style)
                };
                if let (Some(v), true) = (&v, anchor > 0) {
                    self.anchors.insert(anchor, (v.clone(), w));
                }
                Some(v)
            }
            Event::Alias(id) => {
                let Some(w) = self.anchors.get(&id).map(|(_, w)| *w) else {
                    return self.fail(line, "an alias (`*name`) to no anchor".into());
                };
                // Counted before it is copied.
                if !self.grow(w, line) {
                    return;
                }
                self.anchors.get(&id).map(|(v, _)| Some(v.clone()))
            }
            Event::SequenceStart(anchor, ..) | Event::MappingStart(anchor, ..)
                if self.open.len() >= MAX_DEPTH =>
            {
                let _ = anchor;
                return self.fail(
                    line,
                    format!("lists and mappings nest more than {MAX_DEPTH} deep"),
                );
            }
            Event::SequenceStart(anchor, ..) => return self.open_node(anchor, false, line),
            Event::MappingStart(anchor, ..) => return self.open_node(anchor, true, line),
            Event::SequenceEnd | Event::MappingEnd => {
                let (v, anchor, from) = match self.open.pop() {
                    Some(Open::Seq {
                        items,
                        anchor,
                        from,
                    }) => (toml::Value::Array(items), anchor, from),
                    Some(Open::Map {
                        table,
                        anchor,
                        from,
                        ..
                    }) => (toml::Value::Table(table), anchor, from),
                    None => return,
                };
                if anchor > 0 {
                    let w = self.weight.minus(from);
                    self.anchors.insert(anchor, (v.clone(), w));
                }
                Some(Some(v))
            }
            _ => None,
        };
        if let Some(v) = done {
            self.place(v, line);
        }
    }
}

impl Tree {
    fn fail(&mut self, line: usize, message: String) {
        self.error.get_or_insert(YamlError { line, message });
    }

    /// Opens a mapping (`map`) or a sequence, counted as one value.
    fn open_node(&mut self, anchor: usize, map: bool, line: usize) {
        let from = self.weight;
        if !self.grow(
            Weight {
                values: 1,
                bytes: 0,
            },
            line,
        ) {
            return;
        }
        self.open.push(match map {
            true => Open::Map {
                table: toml::Table::new(),
                key: None,
                anchor,
                from,
            },
            false => Open::Seq {
                items: Vec::new(),
                anchor,
                from,
            },
        });
    }

    /// Counts `w` more of the document, before it is built: false (and the error) past a
    /// bound.
    fn grow(&mut self, w: Weight, line: usize) -> bool {
        let next = self.weight.plus(w);
        if next.values > MAX_VALUES || next.bytes > MAX_BYTES {
            self.fail(line, format!(
                "the front matter expands to more than {MAX_VALUES} values or {} MiB of text (anchors and aliases copy what they name; nested ones multiply): write the values out, or name fewer",
                MAX_BYTES >> 20
            ));
            return false;
        }
        self.weight = next;
        true
    }

    /// Puts a finished node (`None`: a null) where the open node above it expects one.
    fn place(&mut self, v: Option<toml::Value>, line: usize) {
        let error = match self.open.last_mut() {
            None => {
                self.root = v;
                return;
            }
            Some(Open::Seq { items, .. }) => match v {
                Some(v) => {
                    items.push(v);
                    return;
                }
                None => "a list holds a null (`~`, `null` or nothing): remove it or quote it",
            },
            Some(Open::Map { table, key, .. }) => match (key.take(), v) {
                (None, Some(toml::Value::String(k))) => {
                    if table.contains_key(&k) {
                        return self.fail(line, format!("the key `{k}` is set twice"));
                    }
                    *key = Some((k, line));
                    return;
                }
                (None, _) => "a key must be a plain word or a string, not a list or a mapping",
                (Some((k, _)), Some(v)) => {
                    table.insert(k, v);
                    return;
                }
                // `key:` with no value: the key is not set.
                (Some(_), None) => return,
            },
        };
        self.fail(line, error.into());
    }
}

/// A scalar's value: quoted and block scalars are strings; a plain one is what it looks like
/// (YAML 1.2's core schema, plus the dates and times TOML has). `None`: a null.
fn scalar(value: String, style: TScalarStyle) -> Option<toml::Value> {
    if style != TScalarStyle::Plain {
        return Some(toml::Value::String(value));
    }
    let v = value.as_str();
    Some(match v {
        "" | "~" | "null" | "Null" | "NULL" => return None,
        "true" | "True" | "TRUE" => toml::Value::Boolean(true),
        "false" | "False" | "FALSE" => toml::Value::Boolean(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" => toml::Value::Float(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => toml::Value::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => toml::Value::Float(f64::NAN),
        _ => {
            if let Some(n) = integer(v) {
                toml::Value::Integer(n)
            } else if let Some(f) = float(v) {
                toml::Value::Float(f)
            } else if let Some(d) = datetime(v) {
                toml::Value::Datetime(d)
            } else {
                toml::Value::String(value)
            }
        }
    })
}

fn integer(v: &str) -> Option<i64> {
    if let Some(hex) = v.strip_prefix("0x") {
        return i64::from_str_radix(hex, 16).ok();
    }
    if let Some(oct) = v.strip_prefix("0o") {
        return i64::from_str_radix(oct, 8).ok();
    }
    let digits = v.strip_prefix(['-', '+']).unwrap_or(v);
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| v.parse().ok())
        .flatten()
}

/// `[-+]? ( . [0-9]+ | [0-9]+ ( . [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?`, as YAML 1.2 has it.
fn float(v: &str) -> Option<f64> {
    let s = v.strip_prefix(['-', '+']).unwrap_or(v);
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = digits(int) && digits(frac) && !(int.is_empty() && frac.is_empty());
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    (mantissa_ok && exponent_ok && (mantissa.contains('.') || exponent.is_some()))
        .then(|| v.parse().ok())
        .flatten()
}

/// A date or date-time as TOML writes it (`2026-01-02`, `2026-01-02T10:00:00Z`, with a space
/// for the `T` or an offset); YAML's own `2026-01-02 10:00:00 +01:00` (a space before the
/// offset) too.
fn datetime(v: &str) -> Option<toml::value::Datetime> {
    if !v.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        return None;
    }
    v.parse().ok().or_else(|| {
        let (head, offset) = v.rsplit_once(' ')?;
        if !offset.starts_with(['+', '-', 'Z']) {
            return None;
        }
        format!("{head}{offset}").parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nine levels of nine aliases each: 9^9 (387 million) values from 542 bytes.
    pub(crate) fn billion_laughs() -> String {
        let mut text = String::from(
            "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        for (i, c) in ('b'..='i').enumerate() {
            let p = (b'a' + i as u8) as char;
            text += &format!("{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n");
        }
        text
    }

    #[test]
    fn alias_expansion_is_bounded_and_counted_before_it_is_copied() {
        let bomb = billion_laughs();
        assert!(bomb.len() < 600, "{}", bomb.len());
        let started = std::time::Instant::now();
        let e = to_table(&bomb).unwrap_err();
        assert!(e.message.contains("expands to more than"), "{e:?}");
        assert!(e.line >= 5, "the line where the bound was passed: {e:?}");
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        // Long strings multiplied: bounded by bytes too.
        let long = format!(
            "a: &a \"{}\"\nb: [{}]\n",
            "x".repeat(1 << 20),
            vec!["*a"; 40].join(",")
        );
        assert!(to_table(&long).unwrap_err().message.contains("MiB"));
        // Deep nesting.
        let deep = format!(
            "a: {}{}\n",
            "[".repeat(MAX_DEPTH + 1),
            "]".repeat(MAX_DEPTH + 1)
        );
        assert!(to_table(&deep)
            .unwrap_err()
            .message
            .contains("nest more than"));
        // Honest anchors still work.
        let t = to_table("base: &b {k: v}\nx: *b\ny: [*b, *b]\n").unwrap();
        assert_eq!(t["x"]["k"].as_str(), Some("v"));
        assert_eq!(t["y"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn plain_scalars_take_their_type_and_quoted_ones_stay_strings() {
        let t = to_table(
            "title: Hello: world\nn: 42\nx: 1.5\nyes_: true\nday: 2026-01-02\nat: 2026-01-02T10:00:00Z\nq: \"2026-01-02\"\nempty:\ntags: [a, b]\nextra:\n  k: v\n  list:\n    - 1\n    - two\n",
        );
        let t = t.unwrap_err();
        assert_eq!(t.line, 1, "{t:?}");
        let t = to_table(
            "title: \"Hello: world\"\nn: 42\nx: 1.5\nyes_: true\nday: 2026-01-02\nat: 2026-01-02T10:00:00Z\nq: \"2026-01-02\"\nempty:\ntags: [a, b]\nextra:\n  k: v\n  list:\n    - 1\n    - two\n",
        )
        .unwrap();
        assert_eq!(t["title"].as_str(), Some("Hello: world"));
        assert_eq!(t["n"].as_integer(), Some(42));
        assert_eq!(t["x"].as_float(), Some(1.5));
        assert_eq!(t["yes_"].as_bool(), Some(true));
        assert_eq!(t["day"].as_datetime().unwrap().to_string(), "2026-01-02");
        assert_eq!(
            t["at"].as_datetime().unwrap().to_string(),
            "2026-01-02T10:00:00Z"
        );
        assert_eq!(t["q"].as_str(), Some("2026-01-02"));
        assert!(!t.contains_key("empty"));
        assert_eq!(t["tags"].as_array().unwrap().len(), 2);
        assert_eq!(t["extra"]["list"][1].as_str(), Some("two"));
        assert_eq!(t["extra"]["list"][0].as_integer(), Some(1));
    }

    #[test]
    fn a_yaml_offset_with_a_space_and_anchors_are_read() {
        let t = to_table("at: 2026-01-02 10:00:00 +01:00\nbase: &b [x, y]\ncopy: *b\n").unwrap();
        assert_eq!(
            t["at"].as_datetime().unwrap().to_string(),
            "2026-01-02T10:00:00+01:00"
        );
        assert_eq!(t["copy"], t["base"]);
    }

    #[test]
    fn errors_name_the_line() {
        let e = to_table("title: ok\ntags: [a, b\nn: 1\n").unwrap_err();
        assert!(e.line >= 2, "{e:?}");
        let e = to_table("title: ok\ntitle: again\n").unwrap_err();
        assert_eq!(e.line, 2, "{e:?}");
        assert!(e.message.contains("set twice"), "{e:?}");
        let e = to_table("- a\n- b\n").unwrap_err();
        assert!(e.message.contains("mapping"), "{e:?}");
        assert_eq!(to_table("").unwrap(), toml::Table::new());
    }

    #[test]
    fn numbers_follow_the_core_schema() {
        for (v, want) in [("1e3", Some(1000.0)), (".5", Some(0.5)), ("1.", Some(1.0))] {
            assert_eq!(float(v), want, "{v}");
        }
        for v in ["1", "e3", ".", "1.2.3", "1e", "v1.2"] {
            assert_eq!(float(v), None, "{v}");
        }
        assert_eq!(integer("-12"), Some(-12));
        assert_eq!(integer("0x1f"), Some(31));
        assert_eq!(integer("1_000"), None);
    }
}
