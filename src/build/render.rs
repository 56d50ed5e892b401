//! Rendering and storing: the renderer (tera templates, feed, sitemaps) and the one render
//! pipeline, [`render_all`], over a [`Sink`] — a revision directory for `build`, memory for
//! watch mode's preview.

use super::*;

/// Renders one planned file.
pub(super) struct Renderer<'a> {
    pub(super) templates: &'a templates::Templates,
    /// The plan's item pages (`Job::Item` names one by index).
    pub(super) pages: &'a [PageInput],
    /// Withdrawn items kept as notices (`Job::Notice` names one by index).
    pub(super) notices: &'a [PageInput],
    pub(super) author: String,
    pub(super) collections: &'a Collections,
    pub(super) site: SiteView,
    pub(super) base_url: String,
}

/// `page` of an item template: the view, its body, and its fields and `extra` flattened in.
#[derive(Serialize)]
pub(super) struct ItemContext<'a> {
    #[serde(flatten)]
    pub(super) view: &'a ItemPage,
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
        Renderer {
            templates,
            pages,
            notices,
            author: site.config.feed_author().to_string(),
            collections: &site.collections,
            site: SiteView {
                title: site.config.title.clone(),
                base_url: site.config.base_url.clone(),
                preview,
            },
            base_url: site.config.base_url.clone(),
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
        let carried = &self.collections.list[coll].taxonomies;
        if carried.is_empty() {
            return out;
        }
        let parsed = view::parse_data(terms);
        for t in &self.collections.taxonomies {
            if !carried.contains(&t.name) {
                continue;
            }
            let list = parsed
                .get(&t.name)
                .and_then(|v| v.as_array())
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str())
                .map(|name| TermRef {
                    name: name.to_string(),
                    url: t.term_url(&crate::config::taxonomies::term_slug(name)),
                })
                .collect();
            out.insert(t.name.clone(), list);
        }
        out
    }

    /// `page` of an item (or notice) page of collection `coll`.
    fn item_context<'v>(&self, coll: usize, v: &'v ItemPage, body: &'v str) -> ItemContext<'v> {
        ItemContext {
            view: v,
            body_html: body,
            taxonomies: self.taxonomies(coll, &v.terms),
            data: view::parse_data(&v.data),
        }
    }

    fn ctx(&self) -> tera::Context {
        let mut c = tera::Context::new();
        c.insert("site", &self.site);
        c
    }

    fn render(
        &self,
        p: &Planned,
        body: &dyn Fn(i64) -> Option<Arc<str>>,
    ) -> Result<Vec<u8>, BuildError> {
        let t = self.templates;
        let mut c = self.ctx();
        match &p.job {
            Job::Item(i) => {
                let v = plan::item_view(self.pages, *i);
                let b = body(v.row).ok_or_else(|| missing_body(&v, &p.path))?;
                let coll = self.pages[*i].coll;
                c.insert("page", &self.item_context(coll, &v, &b));
                t.render(&self.collections.list[coll].template, &c, &p.path)
            }
            Job::Notice(i) => {
                let n = &self.notices[*i];
                let b = body(n.view.row).ok_or_else(|| missing_body(&n.view, &p.path))?;
                c.insert("page", &self.item_context(n.coll, &n.view, &b));
                t.render(
                    &self.collections.list[n.coll].withdrawn_template,
                    &c,
                    &p.path,
                )
            }
            Job::Term(v) => {
                let tax = &self.collections.taxonomies[v.taxonomy];
                c.insert(
                    "term",
                    &TermPage {
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
                    },
                );
                t.render(&tax.template, &c, &p.path)
            }
            Job::Terms(ti, links) => {
                let tax = &self.collections.taxonomies[*ti];
                c.insert(
                    "terms",
                    &TermsPage {
                        taxonomy: &tax.name,
                        title: &tax.title,
                        terms: links,
                    },
                );
                t.render(&tax.index_template, &c, &p.path)
            }
            Job::Home(home) => {
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
                t.render("index.html", &c, &p.path)
            }
            Job::ListIndex(ci, v) => {
                let coll = &self.collections.list[*ci];
                c.insert(
                    "list",
                    &ListPage {
                        collection: &coll.name,
                        title: coll.title.clone(),
                        number: None,
                        entries: self.entries(&v.latest),
                        archive: Some(&v.archive),
                        prev_url: None,
                        next_url: None,
                    },
                );
                t.render(&coll.list_template, &c, &p.path)
            }
            Job::List(ci, v) => {
                let coll = &self.collections.list[*ci];
                c.insert(
                    "list",
                    &ListPage {
                        collection: &coll.name,
                        title: coll.page_title(v.number),
                        number: Some(v.number),
                        entries: self.entries(&v.entries),
                        archive: None,
                        prev_url: v.prev_url.as_deref(),
                        next_url: v.next_url.as_deref(),
                    },
                );
                t.render(&coll.list_template, &c, &p.path)
            }
            Job::Plain(v) => {
                c.insert(
                    "page",
                    &PlainPage {
                        view: v,
                        body_html: &v.body_html,
                    },
                );
                t.render("page.html", &c, &p.path)
            }
            Job::NotFound => t.render("404.html", &c, &p.path),
            Job::Feed(f) => {
                let bodies: Vec<Arc<str>> = f
                    .entries
                    .iter()
                    .map(|(v, _, _)| body(v.row).ok_or_else(|| missing_body(v, &p.path)))
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
                let (title, home) = match (&f.term, f.coll.map(|ci| &self.collections.list[ci])) {
                    (Some((ti, name, url)), _) => (
                        format!(
                            "{name} · {} · {}",
                            self.collections.taxonomies[*ti].title, self.site.title
                        ),
                        url.as_str(),
                    ),
                    (None, Some(c)) => (
                        format!("{} · {}", c.title, self.site.title),
                        c.list_url.as_deref().unwrap_or("/"),
                    ),
                    (None, None) => (self.site.title.clone(), "/"),
                };
                let head = xml::FeedHead {
                    title: &title,
                    author: &self.author,
                    base_url: &self.base_url,
                    home_url: home,
                    self_url: &f.url,
                };
                Ok(if f.rss {
                    xml::rss(&head, &list)
                } else {
                    xml::atom(&head, &list)
                }
                .into_bytes())
            }
            Job::Sitemap(urls) => Ok(xml::urlset(&self.base_url, urls).into_bytes()),
            Job::SitemapIndex(files) => Ok(xml::sitemap_index(&self.base_url, files).into_bytes()),
            Job::Robots => Ok(xml::robots(&self.base_url).into_bytes()),
            Job::Copy { .. } => unreachable!("copies are linked, not rendered"),
        }
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

/// Puts a copied input at `dst` and returns its size: a blob is linked, bytes read when the
/// build started are written as they are (see [`CopySource`]).
pub(super) fn copy_input(source: &CopySource, dst: &Path) -> Result<u64, BuildError> {
    match source {
        CopySource::Blob(src) => {
            link_or_copy(src, dst)?;
            Ok(dst.metadata().map_err(io(dst))?.len())
        }
        CopySource::Bytes(bytes) => {
            std::fs::write(dst, &bytes[..]).map_err(io(dst))?;
            Ok(bytes.len() as u64)
        }
    }
}

/// Checks that a planned path stays inside the output root.
pub(super) fn safe_rel(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && !path.contains('\\')
        && !path.contains('\0')
        && Path::new(path)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

pub(super) fn place(root: &Path, rel: &str) -> Result<PathBuf, BuildError> {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    Ok(path)
}

pub(super) fn link_or_copy(src: &Path, dst: &Path) -> Result<(), BuildError> {
    match std::fs::hard_link(src, dst) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(BuildError::Io {
            path: src.to_path_buf(),
            source: e,
        }),
        Err(_) => std::fs::copy(src, dst).map(|_| ()).map_err(io(dst)),
    }
}

/// Page bodies by item id.
pub(super) type Bodies = HashMap<i64, Arc<str>>;

/// What the pipeline hands a sink for one planned file.
pub(super) enum Made<'a> {
    /// Rendered bytes.
    Rendered(Vec<u8>),
    /// A file copied as is, with its sha256.
    Copy(&'a CopySource, &'a str),
}

/// Where a render goes: a revision directory (`build`) or memory (watch mode's preview).
/// The pipeline ([`render_all`]) is the same for both.
pub(super) trait Sink: Sync {
    type File: Send;
    /// The previous output's file for `p` if its key is the same, made part of this output
    /// (hard-linked, or shared); `None` when there is none or it cannot be had (its source
    /// gone): then `p` is rendered after all.
    fn reuse(&self, p: &Planned) -> Option<Self::File>;
    fn store(&self, p: &Planned, made: Made<'_>) -> Result<Self::File, BuildError>;
}

/// The render pipeline, a chunk at a time: reuse what the sink can, fetch the bodies of
/// everything else (fallbacks included: a page is never rendered from missing data), then
/// render and store in parallel. Returns each file with whether it was reused.
pub(super) fn render_all<S: Sink>(
    planned: &[Planned],
    sink: &S,
    renderer: &Renderer<'_>,
    bodies: &mut dyn FnMut(&[i64]) -> Result<Bodies, BuildError>,
    progress: Progress<'_>,
) -> Result<Vec<(S::File, bool)>, BuildError> {
    const CHUNK: usize = 2048;
    let total = planned.len() as u64;
    let mut done = 0u64;
    progress(done, total);
    let mut out = Vec::with_capacity(planned.len());
    for chunk in planned.chunks(CHUNK) {
        let reused: Vec<Option<S::File>> = chunk.par_iter().map(|p| sink.reuse(p)).collect();
        let mut ids: Vec<i64> = chunk
            .iter()
            .zip(&reused)
            .filter(|(_, r)| r.is_none())
            .flat_map(|(p, _)| body_ids(&p.job, renderer.pages, renderer.notices))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let fetched = bodies(&ids)?;
        let body = |id: i64| fetched.get(&id).cloned();
        // Links and renders both in parallel: links into one big folder contend on its lock,
        // but measured at 100k pages two threads still beat one (1.6 s against 2.6 s).
        let results: Vec<Result<(S::File, bool), BuildError>> = chunk
            .par_iter()
            .zip(reused.into_par_iter())
            .map(|(p, r)| match r {
                Some(f) => Ok((f, true)),
                None => {
                    let made = match &p.job {
                        Job::Copy { source, sha256 } => Made::Copy(source, sha256),
                        _ => Made::Rendered(renderer.render(p, &body)?),
                    };
                    sink.store(p, made).map(|f| (f, false))
                }
            })
            .collect();
        for r in results {
            out.push(r?);
        }
        done += chunk.len() as u64;
        progress(done, total);
    }
    Ok(out)
}

/// A revision directory being written: reuse hard-links from the previous revision.
pub(super) struct DirSink<'a> {
    pub(super) staging: &'a Path,
    pub(super) prev: Option<&'a (PathBuf, Manifest)>,
    /// The previous revision's files already linked into `staging` (early links).
    pub(super) prelinked: Option<&'a prelink::Prelinked>,
}

/// What the directory sink made of one file.
pub(super) enum Stored {
    /// A file rendered or copied into this revision.
    New(Entry),
    /// The previous revision's file `index` (of its manifest) kept, with the cache fields
    /// this revision gives it; its entry is moved out of the previous manifest afterwards
    /// ([`Stored::into_entry`]) rather than copied 100,000 times.
    Kept {
        index: usize,
        cache: manifest::CacheClass,
    },
}

impl Stored {
    /// The manifest entry; `prev` is the manifest `Kept` indexes into.
    pub(super) fn into_entry(self, prev: Option<&mut Manifest>) -> Entry {
        match self {
            Stored::New(e) => e,
            Stored::Kept { index, cache } => {
                let old = &mut prev
                    .expect("a kept file comes from the previous manifest")
                    .files[index];
                Entry {
                    path: old.path.clone(),
                    sha256: std::mem::take(&mut old.sha256),
                    bytes: old.bytes,
                    content_type: std::mem::take(&mut old.content_type),
                    cache,
                    max_age: cache.max_age(),
                    key: std::mem::take(&mut old.key),
                    links: std::mem::take(&mut old.links),
                }
            }
        }
    }
}

impl Sink for DirSink<'_> {
    type File = Stored;

    fn reuse(&self, p: &Planned) -> Option<Stored> {
        let (dir, m) = self.prev?;
        let index = m
            .files
            .binary_search_by(|e| e.path.as_str().cmp(&p.path))
            .ok()
            .filter(|&i| m.files[i].key == p.key)?;
        if !self.prelinked.is_some_and(|l| l.contains(&p.path)) {
            let dst = place(self.staging, &p.path).ok()?;
            // A missing source (a file pruned, or the whole revision garbage-collected since
            // this build read its manifest) means the file is rendered after all.
            link_or_copy(&dir.join(&p.path), &dst).ok()?;
        }
        Some(Stored::Kept {
            index,
            cache: p.cache,
        })
    }

    fn store(&self, p: &Planned, made: Made<'_>) -> Result<Stored, BuildError> {
        if let Some(l) = self.prelinked {
            // Never write through an early link: that would change the previous revision.
            l.unlink(self.staging, &p.path)?;
        }
        let dst = place(self.staging, &p.path)?;
        let (sha256, bytes, links) = match made {
            Made::Copy(source, sha256) => {
                (sha256.to_string(), copy_input(source, &dst)?, Vec::new())
            }
            Made::Rendered(out) => {
                std::fs::write(&dst, &out).map_err(io(&dst))?;
                let links = if p.path.ends_with(".html") {
                    links::internal_links(&String::from_utf8_lossy(&out))
                } else {
                    Vec::new()
                };
                (content::sha256_hex(&out), out.len() as u64, links)
            }
        };
        Ok(Stored::New(Entry {
            path: p.path.clone(),
            sha256,
            bytes,
            content_type: manifest::content_type(&p.path).to_string(),
            cache: p.cache,
            max_age: p.cache.max_age(),
            key: p.key.clone(),
            links,
        }))
    }
}

/// Watch mode's preview in memory: reuse shares the previous preview's bytes.
pub(super) struct MemorySink<'a> {
    pub(super) prev: Option<&'a MemorySite>,
}

impl Sink for MemorySink<'_> {
    type File = (String, MemoryFile);

    fn reuse(&self, p: &Planned) -> Option<(String, MemoryFile)> {
        let f = self.prev?.files.get(&p.path).filter(|f| f.key == p.key)?;
        Some((p.path.clone(), f.clone()))
    }

    fn store(&self, p: &Planned, made: Made<'_>) -> Result<(String, MemoryFile), BuildError> {
        let bytes = match made {
            Made::Rendered(b) => b,
            Made::Copy(CopySource::Bytes(b), _) => b.to_vec(),
            Made::Copy(CopySource::Blob(src), _) => std::fs::read(src).map_err(io(src))?,
        };
        Ok((
            p.path.clone(),
            MemoryFile {
                key: p.key.clone(),
                sha256: content::sha256_hex(&bytes),
                bytes: Arc::new(bytes),
                content_type: manifest::content_type(&p.path),
            },
        ))
    }
}
