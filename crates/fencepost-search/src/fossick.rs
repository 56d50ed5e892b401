//! A page's [`Record`]: what Pagefind's indexer takes from a built HTML page, read the way
//! its documentation says (pagefind.app/docs/indexing, /docs/metadata, /docs/filtering):
//!
//! - the page's `<body>`, or only its `data-pagefind-body` elements when it has any (and a
//!   site where any page has one indexes only such pages: [`Record::custom_body`]);
//! - never `head`, `script`, `style`, `noscript`, `template`, `iframe`, `svg`, `form`,
//!   `label`, `nav` or `footer`, nor anything inside `data-pagefind-ignore`;
//! - headings weighted (h1 7 … h6 2), `data-pagefind-weight` on any element;
//! - `data-pagefind-meta` and `data-pagefind-filter` (`key`, `key:value`, `key[attr]`,
//!   comma-separated); `title` defaults to the first `h1`, then `<title>`; `image` and
//!   `image_alt` to the first `<img>` of the body;
//! - a heading with an `id` becomes an anchor (Pagefind's sub-results);
//! - the language from `<html lang>` (`unknown` without one).
//!
//! Read with lol_html's streaming tokenizer, one pass, no tree.

use crate::words;
use crate::{Anchor, Record, Word};
use lol_html::html_content::{Element, TextChunk};
use lol_html::{doc_text, element, end_tag, HtmlRewriter, Settings};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// Elements Pagefind never indexes the text of.
const REMOVED: &[&str] = &[
    "head", "style", "script", "noscript", "label", "form", "svg", "footer", "nav", "iframe",
    "template",
];
/// Elements whose text runs on into their neighbours' (every other element is a boundary).
const INLINE: &[&str] = &[
    "a", "abbr", "acronym", "b", "bdo", "big", "button", "cite", "code", "dfn", "em", "i", "img",
    "input", "kbd", "map", "object", "output", "q", "samp", "select", "small", "span", "strong",
    "sub", "sup", "textarea", "time", "tt", "var", "mark", "s", "u", "del", "ins",
];

/// A piece of the page's indexed text, in document order.
enum Token {
    Text(String),
    Break,
    /// A weight for what follows, until the matching [`Token::EndWeight`]: explicit
    /// (`data-pagefind-weight`) or a heading's (which an explicit one overrides).
    Weight {
        weight: u8,
        auto: bool,
    },
    EndWeight,
    Anchor {
        element: String,
        id: String,
        slot: usize,
    },
}

/// What the text between an element's start and end is wanted for.
enum Capture {
    Anchor(usize),
    Meta(String),
    Filter(String),
    FirstH1,
    Title,
}

#[derive(Default)]
struct Walk {
    lang: Option<String>,
    custom_body: bool,
    /// Inside `<body>`; inside a `data-pagefind-body` element.
    body: u32,
    custom: u32,
    /// Inside an element whose text is never indexed.
    removed: u32,
    /// The `<body>`'s tokens, and the `data-pagefind-body` elements' tokens.
    all: Vec<Token>,
    chosen: Vec<Token>,
    captures: Vec<(Capture, String)>,
    anchor_text: Vec<String>,
    meta: BTreeMap<String, String>,
    filters: BTreeMap<String, Vec<String>>,
    first_h1: Option<String>,
    title: Option<String>,
    image: Option<(String, String)>,
    description: Option<String>,
}

impl Walk {
    fn push(&mut self, token: impl Fn() -> Token) {
        if self.removed > 0 {
            return;
        }
        if self.body > 0 {
            self.all.push(token());
        }
        if self.custom > 0 {
            self.chosen.push(token());
        }
    }
}

/// Splits `key:value`, `key[attr]` and `key` settings, comma-separated, as Pagefind reads
/// `data-pagefind-meta` and `data-pagefind-filter`: a fixed value, an attribute's value, or
/// (`None`) the element's text.
fn settings(attr: &str, el: &Element) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    for part in attr.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if let Some((key, value)) = part.split_once(':') {
            out.push((key.trim().to_string(), Some(value.trim().to_string())));
        } else if let Some((key, rest)) = part.split_once('[') {
            let name = rest.trim_end_matches(']');
            let value = el
                .get_attribute(name)
                .map(|v| htmlize::unescape_attribute(&v).into_owned());
            out.push((key.trim().to_string(), Some(value.unwrap_or_default())));
        } else {
            out.push((part.to_string(), None));
        }
    }
    out
}

fn set(walk: &mut Walk, capture: Capture, value: String) {
    let value = collapse(&value);
    match capture {
        Capture::Anchor(slot) => walk.anchor_text[slot] = value,
        Capture::Meta(key) => {
            walk.meta.entry(key).or_insert(value);
        }
        Capture::Filter(key) if !value.is_empty() => {
            walk.filters.entry(key).or_default().push(value)
        }
        Capture::Filter(_) => {}
        Capture::FirstH1 => {
            walk.first_h1.get_or_insert(value);
        }
        Capture::Title => {
            walk.title.get_or_insert(value);
        }
    }
}

/// Runs of whitespace as one space, none at either end.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What an element's start opened, for its end to close.
struct Opened {
    removed: bool,
    body: bool,
    custom: bool,
    block: bool,
    weighted: bool,
    captures: usize,
}

/// The language of `<html>`, and the first image of the body (Pagefind's `image` meta).
fn notice(w: &mut Walk, tag: &str, el: &Element) {
    if tag == "html" {
        let lang = el.get_attribute("lang").map(|l| l.trim().to_lowercase());
        w.lang = lang.filter(|l| !l.is_empty());
    }
    if tag == "meta" && w.description.is_none() {
        let name = el.get_attribute("name").map(|n| n.to_ascii_lowercase());
        if name.as_deref() == Some("description") {
            let content = el.get_attribute("content").unwrap_or_default();
            w.description = Some(htmlize::unescape_attribute(&content).into_owned());
        }
    }
    if tag == "img" && w.body > 0 && w.removed == 0 && w.image.is_none() {
        if let Some(src) = el.get_attribute("src") {
            let alt = el.get_attribute("alt").unwrap_or_default();
            let unescape = |v: &str| htmlize::unescape_attribute(v).into_owned();
            w.image = Some((unescape(&src), unescape(&alt)));
        }
    }
}

/// A heading's weight (h1 7 … h6 2).
fn heading(tag: &str) -> Option<f32> {
    match tag {
        "h1" => Some(7.0),
        "h2" => Some(6.0),
        "h3" => Some(5.0),
        "h4" => Some(4.0),
        "h5" => Some(3.0),
        "h6" => Some(2.0),
        _ => None,
    }
}

/// Counters, boundary and weight of an element with content.
fn open(w: &mut Walk, tag: &str, el: &Element) -> Opened {
    let removed = REMOVED.contains(&tag) || el.has_attribute("data-pagefind-ignore");
    let (body, custom) = (tag == "body", el.has_attribute("data-pagefind-body"));
    w.custom_body |= custom;
    let block = !INLINE.contains(&tag);
    w.body += u32::from(body);
    w.custom += u32::from(custom);
    if block {
        w.push(|| Token::Break);
    }
    let explicit =
        (el.get_attribute("data-pagefind-weight")).and_then(|v| v.trim().parse::<f32>().ok());
    let weighted = explicit
        .map(|x| (x, false))
        .or(heading(tag).map(|x| (x, true)));
    if let Some((weight, auto)) = weighted {
        let weight = match weight <= 0.0 {
            true => 0,
            false => ((weight.clamp(0.0, 10.0) * 24.0) as u8).max(1),
        };
        w.push(|| Token::Weight { weight, auto });
    }
    Opened {
        removed,
        body,
        custom,
        block,
        weighted: weighted.is_some(),
        captures: 0,
    }
}

/// The texts this element's end completes: its anchor, the first h1, the `<title>`, its meta
/// and filters. Returns how many captures were opened.
fn capture(w: &mut Walk, tag: &str, el: &Element) -> usize {
    let mut captures = 0;
    let in_body = w.removed == 0 && w.body > 0;
    if heading(tag).is_some() && in_body {
        if let Some(id) = el.get_attribute("id").filter(|id| !id.is_empty()) {
            let slot = w.anchor_text.len();
            w.anchor_text.push(String::new());
            let element = tag.to_string();
            w.push(|| Token::Anchor {
                element: element.clone(),
                id: id.clone(),
                slot,
            });
            w.captures.push((Capture::Anchor(slot), String::new()));
            captures += 1;
        }
    }
    let wanted = [
        (
            tag == "h1" && w.first_h1.is_none() && in_body,
            Capture::FirstH1,
        ),
        (tag == "title" && w.title.is_none(), Capture::Title),
    ];
    for (yes, what) in wanted {
        if yes {
            w.captures.push((what, String::new()));
            captures += 1;
        }
    }
    let kinds: [(&str, fn(String) -> Capture); 2] = [
        ("data-pagefind-meta", Capture::Meta),
        ("data-pagefind-filter", Capture::Filter),
    ];
    for (attr, make) in kinds {
        let Some(value) = el.get_attribute(attr) else {
            continue;
        };
        for (key, fixed) in settings(&value, el) {
            match fixed {
                Some(v) => set(w, make(key), v),
                None => {
                    w.captures.push((make(key), String::new()));
                    captures += 1;
                }
            }
        }
    }
    captures
}

/// What an element's end closes.
fn close(w: &mut Walk, o: &Opened) {
    w.removed -= u32::from(o.removed);
    for _ in 0..o.captures {
        if let Some((capture, text)) = w.captures.pop() {
            set(w, capture, text);
        }
    }
    if o.weighted {
        w.push(|| Token::EndWeight);
    }
    if o.block {
        w.push(|| Token::Break);
    }
    w.body -= u32::from(o.body);
    w.custom -= u32::from(o.custom);
}

/// The element's start: counters, weights, anchors and captures, and what undoes them at its
/// end (an element that cannot have content has no end).
fn start(walk: &Rc<RefCell<Walk>>, el: &mut Element) -> lol_html::HandlerResult {
    let tag = el.tag_name();
    let mut w = walk.borrow_mut();
    notice(&mut w, &tag, el);
    if !el.can_have_content() {
        return Ok(());
    }
    let mut opened = open(&mut w, &tag, el);
    opened.captures = capture(&mut w, &tag, el);
    w.removed += u32::from(opened.removed);
    drop(w);
    let walk = walk.clone();
    el.on_end_tag(end_tag!(move |_| {
        close(&mut walk.borrow_mut(), &opened);
        Ok(())
    }))
}

fn text(walk: &Rc<RefCell<Walk>>, chunk: &mut TextChunk) -> lol_html::HandlerResult {
    let raw = chunk.as_str();
    if raw.is_empty() {
        return Ok(());
    }
    let decoded = htmlize::unescape(raw).into_owned();
    let mut w = walk.borrow_mut();
    if w.removed == 0 {
        for (_, text) in w.captures.iter_mut() {
            text.push_str(&decoded);
        }
    } else if let Some((Capture::Title, text)) = w.captures.last_mut() {
        text.push_str(&decoded);
    }
    w.push(|| Token::Text(decoded.clone()));
    Ok(())
}

/// The record of the page `html`, or `None` when it has nothing to index (no body, no
/// words) or cannot be read.
pub fn fossick(html: &[u8]) -> Option<Record> {
    let walk = Rc::new(RefCell::new(Walk::default()));
    let (w1, w2) = (walk.clone(), walk.clone());
    let settings = Settings {
        element_content_handlers: vec![element!("*", move |el| start(&w1, el))],
        document_content_handlers: vec![doc_text!(move |t| text(&w2, t))],
        ..Settings::new()
    };
    let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
    rewriter.write(html).ok()?;
    rewriter.end().ok()?;
    let walk = Rc::try_unwrap(walk).ok()?.into_inner();
    digest(walk)
}

/// The walked page's words, positions and fragment.
fn digest(mut walk: Walk) -> Option<Record> {
    let tokens = match walk.custom_body {
        true => std::mem::take(&mut walk.chosen),
        false => std::mem::take(&mut walk.all),
    };
    let language = walk.lang.clone().unwrap_or_else(|| "unknown".into());
    let stemmer = words::stemmer(&language);
    let mut index = Indexer::default();
    for token in tokens {
        index.token(token, &walk.anchor_text, stemmer.as_ref());
    }
    if index.position == 0 {
        return None;
    }
    let mut meta = std::mem::take(&mut walk.meta);
    if let Some(title) = walk.first_h1.take().or(walk.title.take()) {
        meta.entry("title".into()).or_insert(title);
    }
    if let Some((src, alt)) = walk.image.take() {
        meta.entry("image".into()).or_insert(src);
        meta.entry("image_alt".into()).or_insert(alt);
    }
    index.meta_words(&meta, stemmer.as_ref());
    let mut words: Vec<Word> = index.words.into_values().collect();
    words.sort_by(|a, b| a.key.cmp(&b.key));
    Some(Record {
        language,
        custom_body: walk.custom_body,
        content: index.content.trim_end().to_string(),
        word_count: index.position,
        filters: walk.filters,
        meta,
        anchors: index.anchors,
        words,
        description: walk.description,
    })
}

/// Words at positions, under the weight of the innermost weighted element.
#[derive(Default)]
struct Indexer {
    content: String,
    position: u32,
    weights: Vec<u8>,
    words: BTreeMap<String, Word>,
    anchors: Vec<Anchor>,
    /// A word cut by an inline element's boundary, waiting for its end.
    pending: String,
}

impl Indexer {
    fn weight(&self) -> u8 {
        self.weights.last().copied().unwrap_or(24)
    }

    fn token(
        &mut self,
        token: Token,
        anchor_text: &[String],
        stemmer: Option<&pagefind_stem::Stemmer>,
    ) {
        match token {
            Token::Text(text) => {
                let mut pieces = text.split(char::is_whitespace).peekable();
                while let Some(piece) = pieces.next() {
                    self.pending.push_str(piece);
                    if pieces.peek().is_some() {
                        self.flush(stemmer);
                    }
                }
                return;
            }
            Token::Break => self.flush(stemmer),
            Token::Weight { weight, auto } => {
                self.flush(stemmer);
                let inherited = auto && self.weights.len() > 0;
                let weight = if inherited { self.weight() } else { weight };
                self.weights.push(weight);
            }
            Token::EndWeight => {
                self.flush(stemmer);
                self.weights.pop();
            }
            Token::Anchor { element, id, slot } => {
                self.flush(stemmer);
                self.anchors.push(Anchor {
                    element,
                    id,
                    text: anchor_text.get(slot).cloned().unwrap_or_default(),
                    location: self.position,
                });
            }
        }
    }

    /// The word gathered so far, indexed at the next position.
    fn flush(&mut self, stemmer: Option<&pagefind_stem::Stemmer>) {
        if self.pending.is_empty() {
            return;
        }
        let raw = std::mem::take(&mut self.pending);
        self.content.push_str(&raw);
        self.content.push(' ');
        let forms = words::indexable(&raw, stemmer);
        let parts = forms.iter().filter(|f| f.part).count() as u8;
        let weight = self.weight();
        for form in forms {
            let w = match form.part {
                true if weight > 0 => (weight / parts.max(1)).max(1),
                true => 0,
                false => weight,
            };
            let word = self
                .words
                .entry(form.stemmed.clone())
                .or_insert_with(|| Word::new(&form.stemmed));
            word.at(form.original, w, self.position);
        }
        self.position += 1;
    }

    /// The meta fields' words (Pagefind 1.6 ranks a title match higher), by field.
    fn meta_words(
        &mut self,
        meta: &BTreeMap<String, String>,
        stemmer: Option<&pagefind_stem::Stemmer>,
    ) {
        for (field, (key, value)) in meta.iter().enumerate() {
            if key.starts_with("image") {
                continue;
            }
            for (position, raw) in value.split_whitespace().enumerate() {
                for form in words::indexable(raw, stemmer) {
                    let word = self
                        .words
                        .entry(form.stemmed.clone())
                        .or_insert_with(|| Word::new(&form.stemmed));
                    word.meta.push((field as u16, position as u32));
                }
            }
        }
    }
}
