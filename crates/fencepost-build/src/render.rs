//! The renderer: tera templates, feeds, sitemaps, robots.txt — what one planned file's bytes
//! are. The pipeline that calls it, and where the bytes go, are in `sink.rs`.

use super::page::PageInput;
use super::plan::{self, Job, Planned};
use super::report::BuildError;
use super::view::{self, ItemPage, LinkView, PlainView, SiteView};
use super::{templates, xml};
use fencepost_config::collections::Collections;
use fencepost_site::Site;
use serde::Serialize;
use std::sync::Arc;

mod lang;
pub(crate) use lang::lang_of;

/// Renders one planned file.
#[derive(Clone)]
pub(super) struct Renderer<'a> {
    pub(super) templates: &'a templates::Templates,
    /// The plan's item pages (`Job::Item` names one by index).
    pub(super) pages: &'a [PageInput],
    /// Withdrawn items kept as notices (`Job::Notice` names one by index).
    pub(super) notices: &'a [PageInput],
    pub(super) author: String,
    pub(super) collections: &'a Collections,
    pub(super) site: SiteView,
    /// A template context holding `site` alone, made once: each page's starts as its copy
    /// (a copy of the value costs less than serializing the view again for every page).
    pub(super) site_context: tera::Context,
    /// The same for each other language (its `site.title`, `description`, `home_url`), made
    /// once: by language code.
    pub(super) lang_contexts: Arc<Vec<(String, tera::Context)>>,
    pub(super) base_url: String,
    /// `Config::base_path`: put in front of every root-relative URL of an HTML page.
    pub(super) base_path: String,
    /// `rss.xml` beside each `atom.xml`.
    pub(super) rss: bool,
    /// The templates are Zola's (`[build] templates = "zola"`).
    pub(super) zola_mode: bool,
    /// In Zola mode, the public site its templates see (made by `Renderer::with_zola`, in
    /// `zola.rs`), asked first for each planned file.
    pub(super) zola: Option<Arc<dyn OtherTemplates>>,
}

/// Templates other than fencepost's own that render some planned files (Zola's, `zola.rs`).
/// The seam points this way so the renderer does not stand on them: they stand on it, reading
/// the renderer's site and pages.
pub(super) trait OtherTemplates: Send + Sync {
    /// The page at `p` made by these templates, or `None` to leave it to fencepost's.
    fn render(&self, r: &Renderer<'_>, p: &Planned) -> Option<Result<String, BuildError>>;
}

/// `page` of an item template: the view, its body, and its fields and `extra` flattened in.
#[derive(Serialize)]
pub(super) struct ItemContext<'a> {
    #[serde(flatten)]
    pub(super) view: &'a ItemPage,
    /// The page's neighbours, put in after the view's own `prev` and `next` (which the plan
    /// leaves empty) and so in their place: the view is borrowed, not copied to hold them.
    pub(super) prev: Option<LinkView>,
    pub(super) next: Option<LinkView>,
    pub(super) body_html: &'a str,
    /// `taxonomies.<name>`: each term's `name` and `url`.
    pub(super) taxonomies: std::collections::BTreeMap<String, Vec<TermRef>>,
    #[serde(flatten)]
    pub(super) data: serde_json::Map<String, serde_json::Value>,
}

/// A term as an item page links it.
#[derive(Serialize)]
pub(super) struct TermRef {
    pub(super) name: String,
    pub(super) url: String,
}

/// `term` of a term template.
#[derive(Serialize)]
pub(super) struct TermPage<'a> {
    pub(super) taxonomy: &'a str,
    pub(super) taxonomy_title: &'a str,
    pub(super) name: &'a str,
    pub(super) url: &'a str,
    pub(super) page_url: &'a str,
    pub(super) feed_url: Option<String>,
    pub(super) entries: Vec<view::EntryView<'a>>,
    pub(super) number: usize,
    pub(super) prev_url: Option<&'a str>,
    pub(super) next_url: Option<&'a str>,
}

/// `terms` of a taxonomy's index template.
#[derive(Serialize)]
pub(super) struct TermsPage<'a> {
    pub(super) taxonomy: &'a str,
    pub(super) title: &'a str,
    pub(super) terms: &'a [view::TermLink],
}

#[derive(Serialize)]
pub(super) struct ListPage<'a> {
    pub(super) collection: &'a str,
    pub(super) title: String,
    pub(super) number: Option<usize>,
    pub(super) entries: Vec<view::EntryView<'a>>,
    pub(super) archive: Option<&'a [view::ArchiveLink]>,
    pub(super) prev_url: Option<&'a str>,
    pub(super) next_url: Option<&'a str>,
    /// The collection's `list_text`, on its list URL (null elsewhere and without one).
    pub(super) text_html: Option<&'a str>,
}

#[derive(Serialize)]
pub(super) struct PlainPage<'a> {
    #[serde(flatten)]
    pub(super) view: &'a PlainView,
    pub(super) body_html: &'a str,
}

impl<'a> Renderer<'a> {
    pub(super) fn new(
        site: &'a Site,
        templates: &'a templates::Templates,
        pages: &'a [PageInput],
        notices: &'a [PageInput],
        preview: bool,
    ) -> Renderer<'a> {
        let view = SiteView {
            title: site.config.title.clone(),
            base_url: site.config.base_url.clone(),
            preview,
            search: site.config.search.enabled,
            build_search_index: site.config.search.build_search_index,
            extra: serde_json::to_value(&site.config.extra).unwrap_or_default(),
            languages: super::languages::links(&site.collections),
            description: None,
            home_url: "/".into(),
        };
        let mut site_context = tera::Context::new();
        site_context.insert("site", &view);
        let lang_contexts = Arc::new(super::languages::site_contexts(&site.collections, &view));
        Renderer {
            templates,
            pages,
            notices,
            author: site.config.feed_author().to_string(),
            collections: &site.collections,
            site: view,
            site_context,
            lang_contexts,
            base_url: site.config.base_url.clone(),
            base_path: site.config.base_path(),
            rss: site.config.rss(),
            zola_mode: site.config.build.templates == fencepost_config::TemplateDialect::Zola,
            zola: None,
        }
    }
}

impl Renderer<'_> {
    /// The entries `ids` (indices into the plan's pages) as templates see them.
    fn entries(&self, ids: &[u32]) -> Vec<view::EntryView<'_>> {
        ids.iter()
            .map(|&i| view::EntryView(&self.pages[i as usize].view))
            .collect()
    }

    /// `page.taxonomies` of an item of collection `coll`: its terms with their URLs.
    fn taxonomies(
        &self,
        coll: usize,
        terms: &str,
    ) -> std::collections::BTreeMap<String, Vec<TermRef>> {
        let mut out = std::collections::BTreeMap::new();
        let c = &self.collections.list[coll];
        if c.taxonomies.is_empty() {
            return out;
        }
        let parsed = view::parse_data(terms);
        for t in &self.collections.taxonomies {
            if !c.taxonomies.contains(&t.key) || t.lang != c.lang {
                continue;
            }
            let list = parsed
                .get(&t.key)
                .and_then(|v| v.as_array())
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str())
                .map(|name| TermRef {
                    name: name.to_string(),
                    url: t.term_url(&fencepost_config::taxonomies::term_slug(name)),
                })
                .collect();
            out.insert(t.key.clone(), list);
        }
        out
    }

    /// `page` of an item (or notice) page of collection `coll`.
    fn item_context<'v>(
        &self,
        coll: usize,
        v: &'v ItemPage,
        (prev, next): (Option<LinkView>, Option<LinkView>),
        body: &'v str,
    ) -> ItemContext<'v> {
        ItemContext {
            view: v,
            prev,
            next,
            body_html: body,
            taxonomies: self.taxonomies(coll, &v.terms),
            data: view::parse_data(&v.data),
        }
    }

    /// The bytes of planned file `p`; the images it asked for made once it is rendered (an
    /// image that cannot be made holds it, as its template failing would).
    pub(super) fn render(
        &self,
        p: &Planned,
        body: &dyn Fn(i64) -> Option<Arc<str>>,
    ) -> Result<String, BuildError> {
        match self.templates.images.page(|| self.render_page(p, body)) {
            Ok(made) => made,
            Err(failed) => Err(image_failed(failed, &p.path)),
        }
    }

    /// A page's body with its images sized (see `images/body.rs`).
    fn sized<'b>(
        &self,
        body: &'b str,
        url: &str,
        out: &str,
    ) -> Result<std::borrow::Cow<'b, str>, BuildError> {
        super::images::in_body(&self.templates.images, body, url).map_err(|f| image_failed(f, out))
    }

    fn render_page(
        &self,
        p: &Planned,
        body: &dyn Fn(i64) -> Option<Arc<str>>,
    ) -> Result<String, BuildError> {
        if let Some(z) = &self.zola {
            if let Some(made) = z.render(self, p) {
                return made.map(|html| self.rebased_page(html, &p.path));
            }
        }
        let mut c = lang::context(self, p);
        let out = p.path.as_str();
        let template: &str = match &p.job {
            Job::Item(i) => {
                let (v, coll) = (&self.pages[*i].view, self.pages[*i].coll);
                let b = body(v.row).ok_or_else(|| missing_body(v, out))?;
                let b = self.sized(&b, &v.url, out)?;
                let around = plan::neighbours(self.pages, *i);
                c.insert("page", &self.item_context(coll, v, around, &b));
                &self.collections.list[coll].template
            }
            Job::Notice(i) => {
                let n = &self.notices[*i];
                let b = body(n.view.row).ok_or_else(|| missing_body(&n.view, out))?;
                let b = self.sized(&b, &n.view.url, out)?;
                let around = (n.view.prev.clone(), n.view.next.clone());
                c.insert("page", &self.item_context(n.coll, &n.view, around, &b));
                &self.collections.list[n.coll].withdrawn_template
            }
            Job::Term(v) => self.term(v, &mut c),
            Job::Terms(ti, links) => self.terms(*ti, links, &mut c),
            Job::Home(home) => self.home(home, &mut c),
            Job::ListIndex(ci, v) => self.list_index(*ci, v, &mut c),
            Job::List(ci, v) => self.list(*ci, v, &mut c),
            Job::Plain(v) => {
                let body_html = &self.sized(&v.body_html, &v.url, out)?;
                c.insert("page", &PlainPage { view: v, body_html });
                &v.template
            }
            Job::NotFound => "404.html",
            Job::Feed(f) => return self.feed(f, body, out),
            Job::Sitemap(urls) => return Ok(xml::urlset(&self.base_url, urls)),
            Job::SitemapIndex(files) => return Ok(xml::sitemap_index(&self.base_url, files)),
            Job::Robots(false) => return Ok(xml::robots(&self.base_url)),
            Job::Robots(true) => "robots.txt",
            Job::Alias { target } => return Ok(xml::redirect_page(&self.base_url, target)),
            Job::ItemJson { item, json, .. } => {
                return json.as_ref().map(|j| j.to_string()).ok_or_else(|| {
                    BuildError::MissingBody {
                        item: item.clone(),
                        output: out.to_string(),
                    }
                })
            }
            Job::Copy { .. } | Job::Resource { .. } => {
                unreachable!("copies are linked, not rendered")
            }
        };
        let html = self.templates.render(template, &c, out)?;
        Ok(self.rebased_page(html, out))
    }

    /// An HTML page with the site's base path in front of its root-relative URLs.
    fn rebased_page(&self, html: String, out: &str) -> String {
        if self.base_path.is_empty() || !out.ends_with(".html") {
            return html;
        }
        super::links::rebase(&html, &self.base_path)
    }

    /// A page body with the site's base path in front of its root-relative URLs (a feed
    /// reader resolves them against the host, not the site).
    fn rebased(&self, body: Arc<str>) -> Arc<str> {
        if self.base_path.is_empty() {
            return body;
        }
        super::links::rebase(&body, &self.base_path).into()
    }

    /// A page of one term's entries; returns its template.
    fn term(&self, v: &view::TermView, c: &mut tera::Context) -> &str {
        let tax = &self.collections.taxonomies[v.taxonomy];
        let page = TermPage {
            taxonomy: &tax.name,
            taxonomy_title: &tax.title,
            name: &v.name,
            url: &v.url,
            page_url: &v.page_url,
            feed_url: tax.feed.then(|| format!("{}atom.xml", v.url)),
            entries: self.entries(&v.entries),
            number: v.number,
            prev_url: v.prev_url.as_deref(),
            next_url: v.next_url.as_deref(),
        };
        c.insert("term", &page);
        &tax.template
    }

    /// A taxonomy's index of terms.
    fn terms(&self, ti: usize, links: &[view::TermLink], c: &mut tera::Context) -> &str {
        let tax = &self.collections.taxonomies[ti];
        let page = TermsPage {
            taxonomy: &tax.name,
            title: &tax.title,
            terms: links,
        };
        c.insert("terms", &page);
        &tax.index_template
    }

    /// The home page: the latest entries, and each collection's.
    fn home(&self, home: &view::HomeView, c: &mut tera::Context) -> &'static str {
        c.insert("latest", &self.entries(&home.latest));
        let collections: std::collections::BTreeMap<&str, serde_json::Value> = home
            .collections
            .iter()
            .map(|(name, v)| {
                let view = serde_json::json!({
                    "title": v.title,
                    "url": v.url,
                    "latest": self.entries(&v.latest),
                });
                (name.as_str(), view)
            })
            .collect();
        c.insert("collections", &collections);
        "index.html"
    }

    /// A collection's list index: its latest entries and the archive of its pages.
    fn list_index(&self, ci: usize, v: &view::ListIndexView, c: &mut tera::Context) -> &str {
        let coll = &self.collections.list[ci];
        let text = v.text.as_ref();
        let page = ListPage {
            collection: &coll.name,
            title: text
                .and_then(|t| t.title.clone())
                .unwrap_or_else(|| coll.title.clone()),
            number: None,
            entries: self.entries(&v.latest),
            archive: Some(&v.archive),
            prev_url: v.prev_url.as_deref(),
            next_url: None,
            text_html: text.map(|t| t.html.as_str()),
        };
        c.insert("list", &page);
        &coll.list_template
    }

    /// One numbered page of a collection's list.
    fn list(&self, ci: usize, v: &view::ListView, c: &mut tera::Context) -> &str {
        let coll = &self.collections.list[ci];
        let page = ListPage {
            collection: &coll.name,
            title: coll.page_title(v.number),
            number: Some(v.number),
            entries: self.entries(&v.entries),
            archive: None,
            prev_url: v.prev_url.as_deref(),
            next_url: v.next_url.as_deref(),
            text_html: None,
        };
        c.insert("list", &page);
        &coll.list_template
    }

    /// An Atom or RSS feed: of the site, a collection or a term.
    fn feed(
        &self,
        f: &plan::FeedJob,
        body: &dyn Fn(i64) -> Option<Arc<str>>,
        out: &str,
    ) -> Result<String, BuildError> {
        let bodies: Vec<Arc<str>> = f
            .entries
            .iter()
            .map(|(v, _, _)| body(v.row).ok_or_else(|| missing_body(v, out)))
            .map(|b| b.map(|b| self.rebased(b)))
            .collect::<Result<_, _>>()?;
        let list: Vec<xml::FeedEntry<'_>> = f
            .entries
            .iter()
            .zip(&bodies)
            .map(|((v, updated, published), b)| xml::FeedEntry {
                view: v,
                updated: *updated,
                published: *published,
                body: b,
            })
            .collect();
        let site = &lang::title(self, &f.lang);
        let lang_home = super::languages::home_url(self.collections, &f.lang);
        let (title, home) = match (&f.term, f.coll.map(|ci| &self.collections.list[ci])) {
            (Some((ti, name, url)), _) => {
                let tax = &self.collections.taxonomies[*ti].title;
                (format!("{name} · {tax} · {site}"), url.as_str())
            }
            (None, Some(c)) => {
                let home = c.list_url.as_deref().unwrap_or("/");
                (format!("{} · {site}", c.title), home)
            }
            (None, None) => (site.clone(), lang_home.as_str()),
        };
        let head = xml::FeedHead {
            title: &title,
            author: &self.author,
            base_url: &self.base_url,
            home_url: home,
            self_url: &f.url,
        };
        let xml = match f.rss {
            true => xml::rss(&head, &list),
            false => xml::atom(&head, &list),
        };
        Ok(xml)
    }
}

/// A page held for an image of it that cannot be made: the image named as what failed.
fn image_failed(f: super::images::Failed, output: &str) -> BuildError {
    BuildError::Render {
        template: f.source,
        output: output.to_string(),
        message: f.why,
    }
}

pub(super) fn missing_body(v: &ItemPage, output: &str) -> BuildError {
    BuildError::MissingBody {
        item: format!("{}/{}", v.collection, v.id.text()),
        output: output.to_string(),
    }
}

/// The rows whose bodies rendering `job` needs.
pub(super) fn body_ids(job: &Job, pages: &[PageInput], notices: &[PageInput]) -> Vec<i64> {
    match job {
        Job::Item(i) => vec![pages[*i].view.row],
        Job::Notice(i) => vec![notices[*i].view.row],
        Job::Feed(f) => f.entries.iter().map(|(v, _, _)| v.row).collect(),
        _ => Vec::new(),
    }
}
