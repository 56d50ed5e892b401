//! Collections of translations (see [`crate::languages`]): one per collection and language
//! besides the default, made from the collection itself.

use super::{Collection, Collections};

/// Gives every collection its language, and adds its translations' collections (sorted in
/// among the others by name). `Err((key, why))`.
pub(super) fn add_translations(c: &mut Collections) -> Result<(), (String, String)> {
    let default = c.languages.default_code().to_string();
    for coll in &mut c.list {
        coll.lang = default.clone();
    }
    let mut more = Vec::new();
    for coll in &c.list {
        for l in c.languages.others() {
            more.push(translation(coll, l));
        }
    }
    for t in more.iter().filter(|t| !t.beside) {
        let nested = |x: &str, y: &str| x == y || y.starts_with(&format!("{x}/"));
        if let Some(o) = (c.list.iter()).find(|o| nested(&o.dir, &t.dir) || nested(&t.dir, &o.dir))
        {
            return Err((
                format!("languages.{}.dir", t.lang),
                format!(
                    "the {} translations of collection {} would be read from content/{}, which collection {} reads: give the language another folder",
                    t.lang, o.name, t.dir, o.name
                ),
            ));
        }
    }
    c.list.extend(more);
    c.list.sort_by(|a, b| a.name.cmp(&b.name));
    for t in &mut c.taxonomies {
        t.lang = default.clone();
    }
    let mut taxonomies = Vec::new();
    for t in &c.taxonomies {
        for l in c.languages.others() {
            let mut x = t.clone();
            x.name = format!("{}.{}", t.name, l.code);
            x.lang = l.code.clone();
            x.url = format!("{}{}", l.url_prefix, t.url);
            x.index_url = (t.index_url.as_ref()).map(|u| format!("{}{u}", l.url_prefix));
            x.feed = t.feed && l.feed;
            taxonomies.push(x);
        }
    }
    c.taxonomies.extend(taxonomies);
    c.taxonomies.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(())
}

/// Collection `c`'s translations into `l`: its items' files, URLs, list text and feed.
fn translation(c: &Collection, l: &super::Language) -> Collection {
    let mut t = c.clone();
    t.name = format!("{}.{}", c.name, l.code);
    t.lang = l.code.clone();
    t.original = Some(c.name.clone());
    t.beside = l.dir.is_none();
    if let Some(d) = &l.dir {
        t.dir = format!("{d}/{}", c.dir);
    }
    t.url = format!("{}{}", l.url_prefix, c.url);
    t.list_url = (c.list_url.as_ref()).map(|u| format!("{}{u}", l.url_prefix));
    t.feed = c.feed && l.feed;
    if t.beside {
        t.list_text =
            (c.list_text.as_ref()).map(|n| format!("{}.{}.md", n.trim_end_matches(".md"), l.code));
    }
    t
}

impl Collections {
    /// The index of the taxonomy whose terms items of language `lang` write under `key`.
    pub fn taxonomy_index(&self, key: &str, lang: &str) -> Option<usize> {
        (self.taxonomies.iter()).position(|t| t.key == key && t.lang == lang)
    }

    /// The collections of a language, in name order.
    pub fn of_lang<'a>(&'a self, code: &'a str) -> impl Iterator<Item = (usize, &'a Collection)> {
        (self.list.iter().enumerate()).filter(move |(_, c)| c.lang == code)
    }
}
