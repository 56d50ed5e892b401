//! Zola's templates, kept: with `[build] templates = "zola"`, every templated page is
//! rendered with the variables and functions Zola gives its Tera templates, for the common
//! subset — `config`, `page`, `section`, `paginator`, `taxonomy`, `term`, `terms`,
//! `current_path`, `current_url`; `get_url`, `get_section`, `get_page`, `get_taxonomy_url`,
//! `get_taxonomy`, and Tera's own `now()` and filters. A Zola site's templates then run as
//! they are (`fencepost import zola` copies them and says which cannot run).
//!
//! **Embargo-safety.** Everything here is made from the plan's public pages of one snapshot
//! (a preview's from its own tree): a template reaching for any page, section or term can
//! only reach what the revision shows. Because any page can reach any other, every templated
//! file's reuse key covers the whole public set ([`site_digest`]): a change re-renders every
//! page, as Zola does. The bodies of every page are read once per build.
//!
//! **Chosen, and rejected.** URLs (`permalink`, `get_url`) are site paths (`/blog/a/`), not
//! Zola's absolute ones: the revision then works on every origin, `serve` included, its links
//! are checked, and a `base_url` with a path is put in front like every other link; a
//! template that needs an absolute URL writes `config.base_url ~ page.path`. Rejected:
//! translating the templates to fencepost's variables (a Zola theme would stop being one).
//! Zola's file functions and filters (`load_data`, `get_hash`, `base64_encode`, …) are every
//! site's (`templates/files.rs`). `get_image_metadata`, `trans` and `resize_image`
//! (`images.rs`) too. `page.toc` is read from the page's headings
//! (`toc.rs`); `subsections` are ordered by their collections' `weight`, then path.

mod context;
mod functions;
mod langs;
mod toc;

pub(super) use langs::paths_in;
pub(crate) use langs::Langs;

pub(super) use context::render;

use super::page::PageInput;
use super::plan::{Job, Planned};
use super::render::{OtherTemplates, Renderer};
use super::report::BuildError;
use super::view::{parse_data, ListText, PlainView};
use fencepost_config::collections::{local_midnight, Collection, SortBy};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// A page size at or above this means "not paginated": no `paginator`.
pub const UNPAGINATED: usize = fencepost_config::TemplateDialect::ZOLA_UNPAGINATED;

/// One section as Zola's templates see it, by its path (`documentation/content`, `` for the
/// root): its own collection where it has pages, its subsections by path.
#[derive(Debug, Default)]
pub(super) struct SectionData {
    pub(super) title: String,
    pub(super) content: String,
    pub(super) coll: Option<usize>,
    /// Its pages as its list reads them (newest or lightest first), indices into the plan.
    pub(super) pages: Vec<usize>,
    pub(super) subsections: Vec<String>,
    /// Its place among its siblings (its collection's `weight`).
    pub(super) weight: i64,
    /// Its `[extra]` (its text's).
    pub(super) extra: Value,
}

/// The whole public site as Zola's templates see it, made once per build.
pub(super) struct ZolaSite {
    /// `page` objects with their content, by plan index.
    pub(super) pages: Vec<Value>,
    /// The section (path) each collection is.
    pub(super) coll_sections: Vec<String>,
    pub(super) sections: BTreeMap<String, SectionData>,
    /// Root pages (plain pages) as `page` objects, by URL.
    pub(super) plain: BTreeMap<String, Value>,
    /// Each taxonomy's terms.
    pub(super) terms: Vec<Vec<ZolaTerm>>,
    pub(super) config: Value,
    pub(super) tera: tera::Tera,
    /// The site's languages, for Zola's file names of translated sections and pages.
    pub(super) langs: Langs,
    /// Each taxonomy (as `Collections::taxonomies`): its name and language, and its value.
    pub(super) taxonomies: Vec<(String, String, Value)>,
}

/// A term: its name, slug and URL, and its pages (plan indices) newest first.
pub(super) struct ZolaTerm {
    pub(super) name: String,
    pub(super) slug: String,
    pub(super) url: String,
    pub(super) pages: Vec<usize>,
}

/// A collection's section path: the fixed folders of its item URLs, where Zola's section
/// put its pages (`/blog/{id}/` is `blog`; `/{id}/`, a blog in the root section, is the root).
fn section_of(c: &Collection) -> String {
    let fixed = c.url.split('{').next().unwrap_or("/");
    fixed.trim_matches('/').to_string()
}

impl ZolaSite {
    /// Made from the renderer's public pages, the plain pages and list texts of the plan,
    /// and every page's body.
    pub(super) fn new(
        r: &Renderer<'_>,
        plain: &[&PlainView],
        texts: (
            &HashMap<Option<usize>, ListText>,
            &HashMap<String, ListText>,
        ),
        bodies: &HashMap<i64, Arc<str>>,
    ) -> ZolaSite {
        let colls = &r.collections.list;
        let langs = Langs::of(r.collections);
        let coll_sections: Vec<String> = colls.iter().map(section_of).collect();
        let mut sections = sections_of(r, &langs, &coll_sections, plain, texts);
        let pages: Vec<Value> = (0..r.pages.len())
            .map(|i| {
                page_value(
                    r,
                    &langs,
                    i,
                    bodies.get(&r.pages[i].view.row).map_or("", |b| b),
                )
            })
            .collect();
        for (i, p) in r.pages.iter().enumerate() {
            sections
                .get_mut(&coll_sections[p.coll])
                .expect("every collection is a section")
                .pages
                .push(i);
        }
        for s in sections.values_mut() {
            let weighted = s.coll.is_some_and(|c| colls[c].sort_by == SortBy::Weight);
            if !weighted {
                s.pages.reverse();
            }
        }
        let mut pages = pages;
        book_order(&langs, &sections, &mut pages);
        let by_pub: Vec<u32> = (0..r.pages.len() as u32).collect();
        let terms = super::terms::collect(r.pages, r.collections, &by_pub)
            .into_iter()
            .zip(&r.collections.taxonomies)
            .map(|(terms, tax)| {
                let term = |t: super::terms::Term| {
                    let mut entries: Vec<usize> = t.entries.iter().map(|&e| e as usize).collect();
                    entries.sort_by_key(|&e| std::cmp::Reverse(r.pages[e].due));
                    ZolaTerm {
                        url: tax.term_url(&t.slug),
                        name: t.name,
                        slug: t.slug,
                        pages: entries,
                    }
                };
                terms.into_iter().map(term).collect()
            })
            .collect();
        let plain = plain
            .iter()
            .map(|v| (v.url.clone(), plain_value(&langs, v)))
            .collect();
        let taxonomies = (r.collections.taxonomies.iter())
            .map(|t| (t.key.clone(), t.lang.clone(), taxonomy_value(t)))
            .collect();
        ZolaSite {
            pages,
            coll_sections,
            sections,
            plain,
            terms,
            config: config_value(r),
            tera: r.templates.tera.clone(),
            langs,
            taxonomies,
        }
    }

    /// The site with Zola's functions registered on its own copy of the templates.
    pub(super) fn with_functions(mut self) -> Arc<ZolaSite> {
        let tera = std::mem::take(&mut self.tera);
        functions::register(tera, self)
    }
}

impl<'a> Renderer<'a> {
    /// In Zola mode, this renderer with the public site Zola's templates see, made from the
    /// plan (its plain pages and list texts) and every page's body.
    pub(super) fn with_zola(
        &self,
        planned: &[Planned],
        bodies: &std::collections::HashMap<i64, Arc<str>>,
    ) -> Renderer<'a> {
        let mut plain = Vec::new();
        let mut texts = std::collections::HashMap::new();
        let mut lang_texts = std::collections::HashMap::new();
        for p in planned {
            match &p.job {
                Job::Plain(v) => plain.push(&**v),
                Job::ListIndex(ci, v) => {
                    if let Some(t) = &v.text {
                        texts.insert(Some(*ci), t.clone());
                    }
                }
                Job::Home(h) => match &h.root_text {
                    Some(t) if h.lang == self.collections.languages.default_code() => {
                        texts.insert(None, t.clone());
                    }
                    Some(t) => {
                        lang_texts.insert(h.lang.clone(), t.clone());
                    }
                    None => {}
                },
                _ => {}
            }
        }
        let site = ZolaSite::new(self, &plain, (&texts, &lang_texts), bodies);
        Renderer {
            zola: Some(site.with_functions() as Arc<dyn OtherTemplates>),
            ..self.clone()
        }
    }
}

impl OtherTemplates for ZolaSite {
    fn render(&self, r: &Renderer<'_>, p: &Planned) -> Option<Result<String, BuildError>> {
        render(r, self, p)
    }
}

/// Every section: each collection's, every folder above one (Zola's sections of
/// subsections), and the root; each with its title, its text and its subsections.
fn sections_of(
    r: &Renderer<'_>,
    langs: &Langs,
    coll_sections: &[String],
    plain: &[&PlainView],
    (texts, lang_texts): (
        &HashMap<Option<usize>, ListText>,
        &HashMap<String, ListText>,
    ),
) -> BTreeMap<String, SectionData> {
    let mut out: BTreeMap<String, SectionData> = BTreeMap::new();
    out.insert(String::new(), SectionData::default());
    for (ci, path) in coll_sections.iter().enumerate() {
        let mut at = path.as_str();
        loop {
            out.entry(at.to_string()).or_default();
            match at.rsplit_once('/') {
                Some((up, _)) => at = up,
                None if !at.is_empty() => at = "",
                None => break,
            }
        }
        let s = out.get_mut(path).expect("inserted above");
        s.coll = Some(ci);
        s.weight = r.collections.list[ci].weight;
        s.title = r.collections.list[ci].title.clone();
        if let Some(t) = texts.get(&Some(ci)) {
            s.content = t.html.clone();
            s.extra = t.extra.clone();
        }
    }
    let paths: Vec<String> = out.keys().cloned().collect();
    for path in &paths {
        let parent = match path.rsplit_once('/') {
            Some((up, _)) => up.to_string(),
            None if !path.is_empty() => String::new(),
            None => continue,
        };
        // A language's root section (`ca`) is no subsection of the default language's.
        if let Some(p) = out.get_mut(&parent).filter(|_| !langs.is_root(path)) {
            p.subsections.push(langs.section_name(path));
        }
        let s = out.get_mut(path).expect("listed");
        if s.coll.is_none() {
            // A section of subsections only: its page (a plain page at its URL) names it.
            let own = plain.iter().find(|v| v.url.trim_matches('/') == path);
            let last = path.rsplit('/').next().unwrap_or(path);
            s.title = own.map_or_else(|| capitalised(last), |v| v.title.clone());
            s.content = own.map(|v| v.body_html.clone()).unwrap_or_default();
            s.extra = own.map_or(Value::Null, |v| v.extra.clone());
        }
    }
    // Subsections as Zola orders them: by weight (the collection's), then by path.
    let weights: HashMap<String, i64> = out
        .iter()
        .map(|(p, s)| (langs.section_name(p), s.weight))
        .collect();
    for s in out.values_mut() {
        s.subsections
            .sort_by_key(|sub| (weights.get(sub).copied().unwrap_or(0), sub.clone()));
    }
    let root = out.get_mut("").expect("the root");
    if root.coll.is_none() {
        root.title = r.site.title.clone();
    }
    // The root section's own text (`content/_index.md`): its title, text and `[extra]`.
    if let Some(t) = texts.get(&None) {
        root.title = t.title.clone().unwrap_or_else(|| root.title.clone());
        root.content = t.html.clone();
        root.extra = t.extra.clone();
    }
    language_roots(r, langs, lang_texts, &mut out);
    out
}

/// Each language's root section (`content/_index.<code>.md`), titled by the language.
fn language_roots(
    r: &Renderer<'_>,
    langs: &Langs,
    lang_texts: &HashMap<String, ListText>,
    out: &mut BTreeMap<String, SectionData>,
) {
    for (code, _) in &langs.others {
        let s = out.entry(langs.key("", code)).or_default();
        let lang = r.collections.languages.get(code);
        s.title = lang
            .and_then(|l| l.title.clone())
            .unwrap_or_else(|| r.site.title.clone());
        if let Some(t) = lang_texts.get(code) {
            s.title = t.title.clone().unwrap_or_else(|| s.title.clone());
            s.content = t.html.clone();
            s.extra = t.extra.clone();
        }
    }
}

/// Each page's neighbours in book order — the root section's pages, then each subsection's
/// (by weight) depth first, each section's pages as its list reads them — as `book_prev` and
/// `book_next` (`title`, `permalink`; null at the ends): a documentation site's "next
/// chapter" across sections, where Zola's `lower`/`higher` stop at a section's end.
fn book_order(langs: &Langs, sections: &BTreeMap<String, SectionData>, pages: &mut [Value]) {
    type Sections = BTreeMap<String, SectionData>;
    fn walk(langs: &Langs, sections: &Sections, path: &str, out: &mut Vec<usize>) {
        let Some(s) = sections.get(path) else { return };
        out.extend(&s.pages);
        for sub in &s.subsections {
            walk(langs, sections, &langs.key_of_name(sub), out);
        }
    }
    let mut order = Vec::new();
    walk(langs, sections, "", &mut order);
    let link = |p: &Value| json!({ "title": p["title"], "permalink": p["permalink"] });
    let links: Vec<Value> = order.iter().map(|&i| link(&pages[i])).collect();
    for (n, &i) in order.iter().enumerate() {
        let prev = n.checked_sub(1).map_or(Value::Null, |m| links[m].clone());
        let next = links.get(n + 1).cloned().unwrap_or(Value::Null);
        if let Value::Object(m) = &mut pages[i] {
            m.insert("book_prev".into(), prev);
            m.insert("book_next".into(), next);
        }
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
}

/// `config`: the site's title, base URL, `[extra]`, taxonomies and feeds, as Zola names them.
fn config_value(r: &Renderer<'_>) -> Value {
    let feeds: Vec<&str> = match r.rss {
        true => vec!["atom.xml", "rss.xml"],
        false => vec!["atom.xml"],
    };
    let default = r.collections.languages.default_code();
    let taxonomies: Vec<Value> = (r.collections.taxonomies.iter())
        .filter(|t| t.lang == default)
        .map(taxonomy_value)
        .collect();
    json!({
        "title": r.site.title,
        "base_url": r.base_url.trim_end_matches('/'),
        "description": r.site.extra.get("description").cloned().unwrap_or(Value::Null),
        "extra": r.site.extra,
        "default_language": r.collections.languages.default_code(),
        "languages": langs::languages_value(r),
        "mode": "build",
        // Zola's [markdown] as its templates read it: fencepost renders links as written.
        "markdown": {
            "highlight_code": true, "render_emoji": false,
            "external_links_target_blank": false, "external_links_no_follow": false,
            "external_links_no_referrer": false, "smart_punctuation": false,
        },
        "build_search_index": r.site.build_search_index,
        "generate_feeds": true,
        "feed_filenames": feeds,
        "taxonomies": taxonomies,
        "author": r.author,
    })
}

/// A taxonomy's configuration as Zola's templates see it (`config.taxonomies`, `taxonomy`).
pub(super) fn taxonomy_value(t: &fencepost_config::taxonomies::Taxonomy) -> Value {
    json!({
        "name": t.key, "slug": t.key, "feed": t.feed, "lang": t.lang, "render": true,
        "paginate_by": null, "paginate_path": "page",
    })
}

/// A page as Zola's templates see it (`lower` is the previous page in its section's order,
/// older or lighter; `higher` the next).
fn page_value(r: &Renderer<'_>, langs: &Langs, i: usize, content: &str) -> Value {
    let p = &r.pages[i];
    let coll = &r.collections.list[p.coll];
    let data = parse_data(&p.view.data);
    let extra = data.get("extra").cloned().unwrap_or_else(|| json!({}));
    let undated = extra.get("undated").and_then(Value::as_bool) == Some(true);
    let date = match (undated, local_midnight(coll.timezone, p.date) == p.due) {
        (true, _) => Value::Null,
        (false, true) => Value::String(p.date.to_string()),
        (false, false) => Value::String(p.view.date.clone()),
    };
    let near = |j: Option<usize>| {
        j.filter(|&j| j < r.pages.len() && r.pages[j].coll == p.coll)
            .map_or(Value::Null, |j| {
                let v = &r.pages[j].view;
                json!({ "title": v.title, "permalink": v.url, "path": v.url, "slug": v.id.text() })
            })
    };
    let taxonomies = match p.view.terms.is_empty() {
        true => json!({}),
        false => serde_json::from_str(&p.view.terms).unwrap_or_else(|_| json!({})),
    };
    let words = word_count(content);
    let mut m = Map::new();
    m.insert("title".into(), json!(p.view.title));
    m.insert("content".into(), json!(content));
    m.insert("summary".into(), json!(p.view.summary_html.as_deref()));
    m.insert(
        "description".into(),
        extra.get("description").cloned().unwrap_or(Value::Null),
    );
    m.insert("permalink".into(), json!(p.view.url));
    m.insert("path".into(), json!(p.view.url));
    m.insert("slug".into(), json!(p.view.id.text()));
    m.insert("date".into(), date);
    m.insert(
        "updated".into(),
        extra.get("lastmod").cloned().unwrap_or(Value::Null),
    );
    m.insert("taxonomies".into(), taxonomies);
    m.insert("extra".into(), extra);
    m.insert("draft".into(), json!(p.view.draft));
    m.insert("lower".into(), near(i.checked_sub(1)));
    m.insert("higher".into(), near(Some(i + 1)));
    m.insert("word_count".into(), json!(words));
    m.insert("reading_time".into(), json!(words.div_ceil(200)));
    m.insert("toc".into(), toc::of(content, &p.view.url));
    for (k, v) in paths_in(langs, &p.view.url, false) {
        m.insert(k.into(), v);
    }
    // A bundle's folder under content/ (`blog/a/`) and its files' paths, as Zola gives them.
    let resources = fencepost_site::content::bundle::recorded(&p.view.data);
    let folder = resources.first().and_then(|r| {
        r.path
            .strip_prefix("content/")?
            .strip_suffix(r.name.as_str())
            .map(str::to_string)
    });
    let assets: Vec<String> = resources
        .iter()
        .filter_map(|r| r.path.strip_prefix("content/").map(str::to_string))
        .collect();
    m.insert("colocated_path".into(), json!(folder));
    m.insert("assets".into(), json!(assets));
    m.insert(
        "translations".into(),
        langs::translations_value(&p.view.translations),
    );
    m.insert("lang".into(), json!(&*p.view.lang));
    for (k, v) in data.into_iter().filter(|(k, _)| k != "extra") {
        m.entry(k).or_insert(v);
    }
    Value::Object(m)
}

/// What Zola derives from a page's or section's path (`/blog/a/`): `components`
/// (`["blog", "a"]`), `relative_path` (`blog/a/index.md`, or `blog/_index.md` for a section:
/// the path Zola would have read it from), and `ancestors` (the sections above it, root
/// first: `["_index.md", "blog/_index.md"]`).
pub(super) fn paths_of(url: &str, section: bool) -> [(&'static str, Value); 3] {
    let parts: Vec<&str> = url.split('/').filter(|s| !s.is_empty()).collect();
    let own = parts.join("/");
    let relative = match (section, own.is_empty()) {
        (true, true) => "_index.md".to_string(),
        (true, false) => format!("{own}/_index.md"),
        (false, _) => format!("{own}/index.md"),
    };
    let above = parts.len().saturating_sub(1);
    let below_root = (section && !own.is_empty()) || !section;
    let mut ancestors: Vec<String> = Vec::new();
    if below_root {
        ancestors.push("_index.md".into());
        ancestors.extend((1..=above).map(|n| format!("{}/_index.md", parts[..n].join("/"))));
    }
    [
        ("components", json!(parts)),
        ("relative_path", json!(relative)),
        ("ancestors", json!(ancestors)),
    ]
}

/// The words of a page's text (its HTML with the tags left out), as Zola counts them for
/// `word_count` and `reading_time`.
fn word_count(html: &str) -> usize {
    let mut text = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                text.push(' ');
            }
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.split_whitespace().count()
}

/// A plain page (a page at the root) as Zola's templates see a page.
fn plain_value(langs: &Langs, v: &PlainView) -> Value {
    let mut page = json!({
        "title": v.title, "content": v.body_html, "summary": null, "description": null,
        "permalink": v.url, "path": v.url, "slug": v.slug, "date": v.date, "updated": v.lastmod,
        "taxonomies": {}, "extra": v.extra, "draft": false, "lower": null, "higher": null,
        "toc": toc::of(&v.body_html, &v.url), "assets": [], "translations": [], "lang": v.lang,
        "colocated_path": null,
    });
    let words = word_count(&v.body_html);
    if let Value::Object(m) = &mut page {
        for (k, x) in paths_in(langs, &v.url, false) {
            m.insert(k.into(), x);
        }
        m.insert("word_count".into(), json!(words));
        m.insert("reading_time".into(), json!(words.div_ceil(200)));
    }
    page
}

/// What every templated file's key covers in Zola mode: the whole public set (any page can
/// reach any other through `get_section`, `section.pages` and the rest).
pub fn site_digest(pages: &[PageInput]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for p in pages {
        let v = &p.view;
        for f in [&v.url, &v.title, &v.date, &v.lastmod, &v.content_hash] {
            h.update(f.len().to_le_bytes());
            h.update(f.as_bytes());
        }
        h.update(v.data.as_bytes());
        h.update([0]);
        h.update(v.terms.as_bytes());
        h.update([0]);
    }
    hex::encode(h.finalize())
}

/// The `@/` path or section path `path` names, as (section path, page name): `blog/a.md` is
/// (`blog`, `a`), `blog/a/index.md` too, `blog/_index.md` (`blog`, none).
pub(super) fn split_path(path: &str) -> (String, Option<String>) {
    let p = path.trim_start_matches("@/").trim_matches('/');
    if let Some(dir) = p.strip_suffix("_index.md") {
        return (dir.trim_end_matches('/').to_string(), None);
    }
    let p = p
        .strip_suffix("/index.md")
        .or_else(|| p.strip_suffix(".md"));
    match p.map(|p| p.rsplit_once('/').unwrap_or(("", p))) {
        Some((dir, name)) => (dir.to_string(), Some(slug::slugify(name))),
        None => (path.trim_matches('/').to_string(), None),
    }
}
