//! One page of the source written into the new site: an item of its section's collection
//! (front matter converted key by key, shortcodes converted, its bundle's files beside it),
//! or a plain page.

use super::front::{self, alias, instant, item_text};
use super::plan::{files_under, Dialect, ImportError, Plan};
use super::shortcodes;
use super::source::{Config, Page};
use std::collections::BTreeMap;
use std::path::Path;

/// Keys the item's own fields take; everything else goes under `[extra]`.
const CONSUMED: &[&str] = &[
    "title",
    "date",
    "publishDate",
    "publishdate",
    "expiryDate",
    "expirydate",
    "draft",
    "slug",
    "url",
    "aliases",
];

/// Writes one page: an item of its section's collection (with its bundle's files), or a
/// plain page.
pub(super) fn write(
    src: &Path,
    config: &Config,
    p: &Page,
    urls: &BTreeMap<String, String>,
    plan: &mut Plan,
    now: fencepost_core::clock::Instant,
) -> Result<(), ImportError> {
    let body = convert_body(config, (&p.rel, p.body_line), &p.body, urls, plan);
    let Some(section) = &p.section else {
        plain_page(config, p, &body, plan);
        // A bundle at the root (`about/index.md`): its files are static files at the URL
        // they had (`/about/photo.jpg`); a plain page has no embargo to keep them behind.
        if let Some(dir) = p.bundle.as_ref().filter(|_| p.lang.is_none()) {
            bundle_files(src, dir, &format!("static/{}", p.id), plan)?;
        }
        return Ok(());
    };
    let out = item_front(config, p, section, plan, now);
    let collection = super::source::collection_name(section);
    // A translation is written beside its original, named for its language (docs/languages.md).
    let suffix = p.lang.as_ref().map_or(String::new(), |c| format!(".{c}"));
    let dst = match &p.bundle {
        Some(_) => format!("content/{collection}/{}/index{suffix}.md", p.id),
        None => format!("content/{collection}/{}{suffix}.md", p.id),
    };
    plan.put(&dst, item_text(&out, &body));
    plan.report.items += 1;
    super::languages::count(plan, p.lang.as_deref(), &config.languages.default);
    // A translated bundle shares its original's files (the original copies them).
    if let Some(dir) = p.bundle.as_ref().filter(|_| p.lang.is_none()) {
        bundle_files(src, dir, &format!("content/{collection}/{}", p.id), plan)?;
    }
    Ok(())
}

/// A body (of `file`, starting on its line `line`) as fencepost renders it: shortcodes and
/// Zola's internal links converted; what could not be is reported with its line.
pub(super) fn convert_body(
    config: &Config,
    (file, line): (&str, usize),
    body: &str,
    urls: &BTreeMap<String, String>,
    plan: &mut Plan,
) -> String {
    let url_of = |target: &str| {
        let t = target.trim_start_matches('/');
        urls.get(t)
            .or_else(|| urls.get(&format!("{t}.md")))
            .cloned()
    };
    let (out, unconverted) = match config.dialect {
        Dialect::Hugo => shortcodes::convert(body, &url_of),
        Dialect::Zola => super::zola_body::convert(body, &url_of, &config.shortcodes),
    };
    for u in &unconverted {
        let at = line + u.line - 1;
        // A Zola internal link is named as such (`link @/x.md`); the rest are shortcodes.
        let what = match u.name.starts_with("link @/") {
            true => u.name.clone(),
            false => format!("shortcode {}", u.name),
        };
        plan.report.skip(file, Some(at), &what, &u.why);
    }
    plan.report.shortcodes_converted += count_shortcodes(body).saturating_sub(unconverted.len());
    out
}

/// A bundle's files (`dir`, source-relative), its sub-folders' too (`img/a.png`), copied
/// into the site's `to`; a sub-folder that is a page of its own is that page's.
fn bundle_files(src: &Path, dir: &str, to: &str, plan: &mut Plan) -> Result<(), ImportError> {
    let pages: Vec<String> = files_under(src, dir, plan)
        .into_iter()
        .filter_map(|(rel, _)| {
            let (folder, name) = rel.rsplit_once('/')?;
            ["index.md", "_index.md"]
                .contains(&name)
                .then(|| format!("{folder}/"))
        })
        .collect();
    for (rel, path) in files_under(src, dir, plan) {
        if rel == "index.md" || pages.iter().any(|p| rel.starts_with(p.as_str())) {
            continue; // The page itself, or another page's.
        }
        // `index.fr.md`: a translation, reported as one already.
        let translation = rel
            .rsplit('/')
            .next()
            .is_some_and(|n| n.matches('.').count() > 1);
        if rel.ends_with(".md") && translation {
            continue;
        }
        if rel.ends_with(".md") {
            plan.report.skip(&format!("{dir}/{rel}"), None, "bundle file", "a bundle's .md files other than index.md are not published beside the page: make it a page of its own, or paste it into index.md");
            continue;
        }
        let bytes = std::fs::read(&path).map_err(|source| ImportError::Read { path, source })?;
        plan.put(&format!("{to}/{rel}"), bytes);
        plan.report.bundle_files += 1;
    }
    Ok(())
}

/// An item's front matter: fencepost's own keys, the taxonomies, the rest under `[extra]`.
fn item_front(
    config: &Config,
    p: &Page,
    section: &str,
    plan: &mut Plan,
    now: fencepost_core::clock::Instant,
) -> toml::Table {
    let mut out = toml::Table::new();
    let mut extra = toml::Table::new();
    out.insert("id".into(), toml::Value::String(p.id.clone()));
    let title = super::front::title_of(&p.table, &p.body, &p.id);
    out.insert("title".into(), toml::Value::String(title));
    // A page without a date (a documentation page) is due at once, and shows no date: the
    // starter templates leave the date out where `extra.undated` is set. Nothing is lost, so
    // nothing is reported.
    let at = p.at.unwrap_or_else(|| {
        extra.insert("undated".into(), toml::Value::Boolean(true));
        now.rfc3339()
            .parse()
            .expect("an instant is a TOML date-time")
    });
    out.insert("publish_at".into(), toml::Value::Datetime(at));
    if let Some(e) = ["expiryDate", "expirydate"]
        .iter()
        .find_map(|k| p.table.get(*k).and_then(instant))
    {
        out.insert("expire_at".into(), toml::Value::Datetime(e));
    }
    if p.table.get("draft").and_then(|v| v.as_bool()) == Some(true) {
        out.insert("draft".into(), toml::Value::Boolean(true));
        plan.report.drafts += 1;
    }
    let aliases = aliases_of(p, section, plan);
    plan.report.aliases += aliases.len();
    if !aliases.is_empty() {
        out.insert("aliases".into(), toml::Value::from(aliases));
    }
    if let Some(w) = weight(config, p) {
        out.insert("weight".into(), toml::Value::Integer(w));
    }
    for (k, v) in &p.table {
        if CONSUMED.contains(&k.as_str()) || (k == "weight" && v.is_integer()) {
            continue;
        }
        if config.taxonomies.contains(k) {
            if let Some(terms) = terms(v) {
                out.insert(k.clone(), toml::Value::from(terms));
                continue;
            }
        }
        if let Some(why) = lost_rendering(config, section, k, v) {
            plan.report.skip(&p.rel, None, k, why);
        }
        front::keep(&mut extra, k, v.clone());
    }
    if !extra.is_empty() {
        out.insert("extra".into(), toml::Value::Table(extra));
    }
    out
}

/// Its place where its collection sorts by weight (Hugo's weight 0 is no weight).
fn weight(config: &Config, p: &Page) -> Option<i64> {
    match p.table.get("weight").and_then(|w| w.as_integer()) {
        Some(0) if config.dialect == Dialect::Hugo => None,
        w => w,
    }
}

/// Why a key that changes how the source rendered the page is not acted on (it is kept under
/// `[extra]`, where a template may read it); None where nothing is lost (a Zola page's
/// `template`, where the site's templates are kept and its section renders through it).
fn lost_rendering(
    config: &Config,
    section: &str,
    k: &str,
    v: &toml::Value,
) -> Option<&'static str> {
    let kept_template = config.keep_templates
        && k == "template"
        && config.page_templates.get(section).map(String::as_str) == v.as_str();
    match k {
        "template" if kept_template => None,
        "layout" | "template" | "type" => Some("templates are not ported: the page renders through its collection's template (the value is kept under [extra])"),
        "outputs" => Some("fencepost writes each page as HTML only: other output formats are not made (kept under [extra])"),
        "redirect_to" => Some("the page is published at its URL and redirects nowhere: add the redirect at your host (kept under [extra])"),
        _ => None,
    }
}

/// Folds each taxonomy's terms as Hugo does: spellings that make one URL slug (`HTML`,
/// `html`) are one term, written everywhere as the first page (by path) spelt it, once per
/// page. fencepost refuses two spellings of one slug (a file would be held), so the import
/// never hands it any. Returns how many terms were respelt.
pub(super) fn fold_terms(taxonomies: &[String], pages: &mut [Page]) -> usize {
    let mut first: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut respelt = 0;
    for p in pages.iter_mut() {
        for tx in taxonomies {
            let Some(list) = p.table.get(tx).and_then(terms) else {
                continue;
            };
            let mut folded: Vec<String> = Vec::new();
            for t in list {
                let spelling = first
                    .entry((tx.clone(), slug::slugify(&t)))
                    .or_insert_with(|| t.clone())
                    .clone();
                respelt += usize::from(spelling != t);
                if !folded.contains(&spelling) {
                    folded.push(spelling);
                }
            }
            p.table.insert(tx.clone(), toml::Value::from(folded));
        }
    }
    respelt
}

/// A taxonomy's terms: a list of strings (or one string).
fn terms(v: &toml::Value) -> Option<Vec<String>> {
    match v {
        toml::Value::String(s) => Some(vec![s.clone()]),
        toml::Value::Array(a) => a.iter().map(|t| t.as_str().map(str::to_string)).collect(),
        _ => None,
    }
}

/// The page's aliases: its own (relative ones against its section), and its old URL where
/// the new one differs.
fn aliases_of(p: &Page, section: &str, plan: &mut Plan) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut home = false;
    let mut taken = Vec::new();
    // In the spelling publish compares (`/x/index.html` is the page `/x/`): an alias that is
    // the page's own URL in another spelling is dropped, and one onto the home page reported.
    let mut add = |a: String| {
        let a = fencepost_site::content::claims::page_spelling(&a);
        if a == "/" {
            home = true;
        } else if a != fencepost_site::content::claims::page_spelling(&p.new_url)
            && !out.contains(&a)
        {
            match plan.urls_taken.insert(a.clone()) {
                true => out.push(a),
                false => taken.push(a),
            }
        }
    };
    if p.old_url != p.new_url {
        plan.report.moved.push(super::plan::Moved {
            file: p.rel.clone(),
            from: p.old_url.clone(),
            to: p.new_url.clone(),
        });
        match fencepost_site::content::alias_url(&p.old_url) {
            Ok(a) => add(a),
            Err(why) => plan.report.skip(&p.rel, None, "old URL", &why),
        }
    }
    let listed: Vec<String> = match p.table.get("aliases") {
        Some(toml::Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        Some(toml::Value::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    };
    let mut bad = Vec::new();
    // A translation's relative alias is under its language's prefix, as Hugo resolves it.
    let prefix = super::languages::Languages::prefix(p.lang.as_deref());
    for a in listed {
        let base = match section {
            "" => format!("{prefix}/"),
            s => format!("{prefix}/{s}/"),
        };
        match alias(&a, &base) {
            Ok(a) => add(a),
            Err(why) => bad.push(why),
        }
    }
    for why in bad {
        plan.report.skip(&p.rel, None, "alias", &why);
    }
    if home {
        plan.report.skip(&p.rel, None, "alias", "an alias onto the home page (/ or /index.html) would take the site's own home page: left out");
    }
    for a in taken {
        plan.report.skip(&p.rel, None, "alias", &format!("{a} is another page's URL, or an earlier page's alias: left out (one URL, one page)"));
    }
    out
}

/// A page at the root of `content/`: a plain page, with its title, date, last change and
/// aliases (its old URL among them where it moved); any other key is reported. A draft is
/// left out (a plain page is public once built) and reported.
fn plain_page(config: &Config, p: &Page, body: &str, plan: &mut Plan) {
    if p.table.get("draft").and_then(|v| v.as_bool()) == Some(true) {
        let why = "a draft page at the root: not imported (a plain page is public as soon as it is built); add it when it is ready";
        plan.report.skip(&p.rel, None, "draft", why);
        plan.report.drafts += 1;
        return;
    }
    let mut fm = toml::Table::new();
    let title = super::front::title_of(&p.table, &p.body, &p.id);
    fm.insert("title".into(), toml::Value::String(title));
    if let Some(at) = p.at {
        fm.insert("date".into(), toml::Value::Datetime(at));
    }
    let changed = ["lastmod", "updated"]
        .iter()
        .find_map(|k| p.table.get(*k).and_then(instant));
    if let Some(d) = changed {
        fm.insert("lastmod".into(), toml::Value::Datetime(d));
    }
    let aliases = aliases_of(p, "", plan);
    plan.report.aliases += aliases.len();
    if !aliases.is_empty() {
        fm.insert("aliases".into(), toml::Value::from(aliases));
    }
    // A Zola page's own template, where the site's templates are kept.
    let template = p.table.get("template").filter(|_| config.keep_templates);
    if let Some(t) = template {
        fm.insert("template".into(), t.clone());
    }
    let read_too = |k: &str| k == "template" && template.is_some();
    // Read above: the page's date (`date`, `publishDate`), URL (kept, or an alias) and the rest.
    let read = [
        "title",
        "date",
        "publishDate",
        "publishdate",
        "lastmod",
        "updated",
        "aliases",
        "url",
        "path",
        "slug",
        "draft",
    ];
    // The rest is the page's `[extra]` (its template reads `page.extra`), as an item's is.
    let mut extra = toml::Table::new();
    for (k, v) in (p.table.iter()).filter(|(k, _)| !read.contains(&k.as_str()) && !read_too(k)) {
        if !matches!(v, toml::Value::Table(_)) || k != "extra" {
            extra.insert(k.clone(), v.clone());
        }
    }
    if !extra.is_empty() {
        fm.insert("extra".into(), toml::Value::Table(extra));
    }
    let suffix = p.lang.as_ref().map_or(String::new(), |c| format!(".{c}"));
    let name = p.id.clone();
    plan.put(&format!("content/{name}{suffix}.md"), item_text(&fm, body));
    plan.report.plain_pages += 1;
}

fn count_shortcodes(body: &str) -> usize {
    body.matches("{{<").count() + body.matches("{{%").count()
        - body.matches("{{< /").count()
        - body.matches("{{% /").count()
        - body.matches("{{</").count()
        - body.matches("{{%/").count()
}

/// Where Hugo kept a term's case in its URL (`disablePathToLower`: `/categories/Example/`),
/// the new site's term URL is its slug, in lower case (`/categories/example/`): each such
/// term is reported with both URLs — never a silent move.
pub(super) fn report_term_case(config: &Config, pages: &[Page], plan: &mut Plan) {
    if config.path_to_lower {
        return;
    }
    let mut seen = std::collections::BTreeSet::new();
    for p in pages {
        for tx in &config.taxonomies {
            for t in p.table.get(tx).and_then(terms).unwrap_or_default() {
                let slug = slug::slugify(&t);
                let old = t.replace(' ', "-");
                if old != slug && old.to_lowercase() == slug && seen.insert((tx.clone(), t.clone()))
                {
                    let why = format!("/{tx}/{old}/ (Hugo kept its case: disablePathToLower) is /{tx}/{slug}/ here, a term's URL being its slug: redirect the old URL at your host");
                    plan.report.skip(&p.rel, None, &format!("term {t}"), &why);
                }
            }
        }
    }
}
