//! `fencepost build`: renders publication revision R of the ledger, with build fingerprint B,
//! into `public/revisions/<R>-<B>/`, then moves the pointer.
//!
//! 1. One read transaction: R, every public page (without bodies), the next embargo end.
//! 2. Plan every output file with a key over everything that goes into it.
//! 3. Render into a temporary directory: a file whose key equals the previous revision's is
//!    hard-linked from it (copied where links are impossible); the rest are rendered in
//!    parallel, bodies streamed from the ledger a chunk at a time.
//! 4. Check internal links, write the manifest, flush, rename into place.
//! 5. Move `public/current` forward (never to a lower revision).
//!
//! `--preview` renders the content tree as it is now — embargoed items included, with a
//! PREVIEW banner — into `public/preview/`, which nothing points to and deploys refuse.

pub mod admin;
pub mod fingerprint;
pub mod links;
pub mod plan;
pub mod templates;
pub mod view;
pub mod xml;

use crate::clock::{Clock, Instant};
use crate::content::{self, ContentError, ImageSource, ItemId};
use crate::ledger::{self, LedgerError};
use crate::output::manifest::{self, Entry, Manifest};
use crate::output::pointer::{self, Pointer, Swap};
use crate::output::revision::{self, Staging};
use crate::output::OutputError;
use crate::site::Site;
use plan::{CopyInput, CopySource, Job, PageInput, Planned};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use view::{AnswerView, LinkView, PlainView, SiteView};

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("template {path}: {message}")]
    Template { path: PathBuf, message: String },
    #[error("missing template {dir}/{name}: every site needs {required}", dir = dir.display(), required = templates::REQUIRED.join(", "))]
    MissingTemplate { name: String, dir: PathBuf },
    #[error("rendering {output} with {template}: {message}")]
    Render {
        template: String,
        output: String,
        message: String,
    },
    #[error("{path}: {why}")]
    PlainPage { path: PathBuf, why: String },
    #[error("two sources write {path}: {why}")]
    Collision { path: String, why: String },
    #[error("{count} broken internal link(s), first: {first} (--strict makes these fatal; nothing was swapped)")]
    BrokenLinks { count: usize, first: String },
    #[error("rendering {output}: the ledger snapshot has no body for item {item}; nothing was swapped (run `fencepost verify`, then build again)")]
    MissingBody { item: i64, output: String },
    #[error("{path}: {why}")]
    Input { path: PathBuf, why: String },
    #[error(transparent)]
    Content(#[from] ContentError),
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    #[error(transparent)]
    Output(#[from] OutputError),
}

fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> BuildError {
    let path = path.into();
    move |source| BuildError::Io { path, source }
}

#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Render the content tree as it is now, embargoed items included, into public/preview.
    pub preview: bool,
    /// Broken internal links are fatal.
    pub strict: bool,
    /// Render everything; reuse nothing from the previous revision.
    pub full: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct BrokenLink {
    pub page: String,
    pub link: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub revision: i64,
    pub build: String,
    pub path: String,
    pub rendered: usize,
    pub reused: usize,
    pub next_change_at: Option<Instant>,
    /// `moved`, `unchanged`, `kept_higher` (the pointer names a higher revision) or
    /// `none` (preview).
    pub pointer: &'static str,
    /// The revision directory already existed complete; nothing was rendered.
    pub already_built: bool,
    pub preview: bool,
    pub files: usize,
    pub broken_links: Vec<BrokenLink>,
    /// Temporary directories of dead builds removed before this one.
    pub abandoned_removed: usize,
}

/// Where a build gets its pages from.
struct Source {
    revision: i64,
    pages: Vec<PageInput>,
    images: Vec<CopyInput>,
    next_change_at: Option<Instant>,
    /// Bodies already in memory (preview); the ledger build fetches them in chunks.
    bodies: HashMap<i64, Arc<str>>,
}

pub fn public_dir(site: &Site) -> PathBuf {
    site.root.join("public")
}

fn date_of(t: Instant) -> String {
    t.to_datetime().date_naive().to_string()
}

fn image_copy(store: &Path, sha: &str, content_type: Option<&str>) -> Option<CopyInput> {
    let src = match content_type {
        Some(ct) => crate::images::blob_path(store, sha, ct),
        None => std::fs::read_dir(store.join(&sha[..2.min(sha.len())]))
            .ok()?
            .flatten()
            .map(|e| e.path())
            .find(|p| p.file_stem().is_some_and(|s| s == sha))?,
    };
    let name = src.file_name()?.to_string_lossy().into_owned();
    Some(CopyInput {
        path: format!("images/{name}"),
        source: CopySource::Blob(src),
        sha256: sha.to_string(),
        immutable_url: true,
    })
}

fn ledger_source(snap: &ledger::Snapshot<'_>, site: &Site) -> Result<Source, BuildError> {
    let revision = snap.revision()?;
    let rows = snap.pages()?;
    let next_change_at = snap.next_change()?;
    let store = site.image_store();
    let mut images = HashMap::new();
    let pages = rows
        .into_iter()
        .map(|r| {
            let copy = r.image_sha256.as_deref().and_then(|sha| {
                let c = image_copy(&store, sha, r.image_content_type.as_deref());
                if c.is_none() {
                    tracing::warn!(
                        item = r.id.0,
                        sha,
                        "image missing from the store; page rendered without it"
                    );
                }
                c
            });
            let image_url = copy.as_ref().map(|c| format!("/{}", c.path));
            if let Some(c) = copy {
                images.insert(c.path.clone(), c);
            }
            PageInput {
                view: AnswerView {
                    id: r.id.0,
                    url: plan::answer_url(r.id.0),
                    title: r.title,
                    day: r.day,
                    price: r.price,
                    image_url,
                    indexable: r.indexable,
                    published: date_of(r.first_published_at),
                    updated: date_of(r.updated_at),
                    prev: None,
                    next: None,
                    embargoed_until: None,
                    content_hash: r.content_hash,
                },
                first_published_at: r.first_published_at,
                updated_at: r.updated_at,
            }
        })
        .collect();
    Ok(Source {
        revision,
        pages,
        images: images.into_values().collect(),
        next_change_at,
        bodies: HashMap::new(),
    })
}

/// One parsed item file, kept between preview builds.
struct TreeItem {
    item: content::Item,
    body_html: Arc<str>,
    /// The page as the plan needs it, built once when the file is read (`embargoed_until` is
    /// filled in per rebuild, since it depends on the clock).
    page: PageInput,
    /// Local image: (copy, URL); remote image: (None, URL).
    image: Option<(Option<CopyInput>, String)>,
}

/// Parsed item files of the content tree, kept between preview builds (watch mode) so a
/// save re-reads one file, not the whole tree. Keyed by path, checked against the file's stat.
#[derive(Default)]
pub struct TreeCache {
    files: HashMap<String, (content::FileStat, Arc<TreeItem>)>,
    /// A file watcher reports every change ([`TreeCache::invalidate`]), so cached files need
    /// no stat: a rebuild only lists names.
    pub trust_invalidations: bool,
}

impl TreeCache {
    /// Forgets one file (the watcher saw it change).
    pub fn invalidate(&mut self, rel: &str) {
        self.files.remove(rel);
    }

    /// Forgets everything (an image or other non-item file changed).
    pub fn clear(&mut self) {
        self.files.clear();
    }
}

fn read_tree_item(site: &Site, rel: &str) -> Result<TreeItem, BuildError> {
    let (item, _) = content::read_item(&site.root, rel, site.config.publish.max_item_bytes)?;
    let image = match &item.image {
        None => None,
        Some(ImageSource::Remote(url)) => Some((None, url.clone())),
        Some(src @ ImageSource::Local(img_rel)) => match crate::images::load_local(site, img_rel) {
            Ok((bytes, content_type)) => {
                let sha = content::sha256_hex(&bytes);
                let c = CopyInput {
                    path: format!("images/{sha}.{}", crate::images::extension(content_type)),
                    sha256: sha,
                    source: CopySource::Bytes(Arc::new(bytes)),
                    immutable_url: true,
                };
                let url = format!("/{}", c.path);
                Some((Some(c), url))
            }
            Err(why) => {
                tracing::warn!(item = item.id.0, image = src.key(), error = %why, "preview: image left out");
                None
            }
        },
    };
    let body_html: Arc<str> = crate::markdown::markdown_to_html(&item.body).into();
    let due = item.due_at(site.config.publish.grace_minutes);
    let page = PageInput {
        view: AnswerView {
            id: item.id.0,
            url: plan::answer_url(item.id.0),
            title: item.title.clone(),
            day: item.day.to_string(),
            price: item.price.clone(),
            image_url: image.as_ref().map(|(_, url)| url.clone()),
            indexable: item.indexable,
            published: date_of(due),
            updated: date_of(due),
            prev: None,
            next: None,
            embargoed_until: None,
            content_hash: content::sha256_hex(body_html.as_bytes()),
        },
        first_published_at: due,
        updated_at: due,
    };
    Ok(TreeItem {
        item,
        body_html,
        page,
        image,
    })
}

/// The content tree as it is now: every item not withdrawn, embargoed ones included.
fn tree_source(
    site: &Site,
    revision: i64,
    now: Instant,
    cache: &mut TreeCache,
) -> Result<Source, BuildError> {
    let files: Vec<(String, content::FileStat)> =
        if cache.trust_invalidations && !cache.files.is_empty() {
            let unknown = content::FileStat {
                size: -1,
                mtime_ns: -1,
                ino: -1,
            };
            content::list_item_paths(&site.root)?
                .iter()
                .map(|p| {
                    let rel = content::relative(&site.root, p);
                    let stat = cache.files.get(&rel).map_or(unknown, |(s, _)| *s);
                    (rel, stat)
                })
                .collect()
        } else {
            content::list_item_files(&site.root)?
        };
    let fresh: Vec<(String, content::FileStat, TreeItem)> = files
        .par_iter()
        .filter(|(rel, stat)| cache.files.get(rel).is_none_or(|(s, _)| s != stat))
        .map(|(rel, stat)| read_tree_item(site, rel).map(|t| (rel.clone(), *stat, t)))
        .collect::<Result<_, _>>()?;
    for (rel, stat, t) in fresh {
        cache.files.insert(rel, (stat, Arc::new(t)));
    }
    let present: std::collections::HashSet<&String> = files.iter().map(|(r, _)| r).collect();
    cache.files.retain(|rel, _| present.contains(rel));
    let mut seen = HashMap::new();
    for (rel, _) in &files {
        let id = cache.files[rel].1.item.id;
        if let Some(first) = seen.insert(id, rel) {
            return Err(ContentError::DuplicateId {
                id,
                first: first.clone(),
                second: rel.clone(),
            }
            .into());
        }
    }
    let mut images = HashMap::new();
    let mut pages = Vec::new();
    let mut bodies = HashMap::new();
    let mut next_change_at: Option<Instant> = None;
    for (rel, _) in &files {
        let t = &cache.files[rel].1;
        let item = &t.item;
        if item.withdrawn {
            continue;
        }
        let due = t.page.first_published_at;
        let mut page = t.page.clone();
        if due > now {
            next_change_at = Some(next_change_at.map_or(due, |n| n.min(due)));
            page.view.embargoed_until = Some(due.rfc3339());
        }
        if let Some((Some(c), _)) = &t.image {
            images.insert(c.path.clone(), c.clone());
        }
        bodies.insert(item.id.0, t.body_html.clone());
        pages.push(page);
    }
    pages.sort_by(|a, b| (&a.view.day, a.view.id).cmp(&(&b.view.day, b.view.id)));
    Ok(Source {
        revision,
        pages,
        images: images.into_values().collect(),
        next_change_at,
        bodies,
    })
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PlainFrontMatter {
    title: Option<String>,
    indexable: Option<bool>,
}

fn plain_pages(files: &fingerprint::SiteFiles) -> Result<Vec<PlainView>, BuildError> {
    let mut out = Vec::new();
    for (rel, text) in &files.plain {
        let slug = Path::new(&rel)
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let bad = |why: String| BuildError::PlainPage {
            path: PathBuf::from(&rel),
            why,
        };
        if slug.is_empty()
            || !slug
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
            || ["answers", "images", "sitemaps", "index", "revisions"].contains(&slug.as_str())
        {
            return Err(bad(format!(
                "`{slug}` cannot be a page name: use letters, digits, - and _, and not answers, images, sitemaps, index"
            )));
        }
        let content::Split {
            front_matter: fm,
            body,
        } = content::split_front_matter(text)
            .map_err(|_| bad("front matter opened with +++ is never closed".into()))?;
        let fm: PlainFrontMatter = match fm {
            Some(f) => {
                toml::from_str(f).map_err(|e| bad(format!("front matter: {}", e.message())))?
            }
            None => PlainFrontMatter {
                title: None,
                indexable: None,
            },
        };
        out.push(PlainView {
            url: format!("/{slug}/"),
            title: fm.title.unwrap_or_else(|| slug.clone()),
            indexable: fm.indexable.unwrap_or(true),
            body_html: crate::markdown::markdown_to_html(body),
            slug,
        });
    }
    Ok(out)
}

fn static_copies(site: &Site) -> Result<Vec<CopyInput>, BuildError> {
    fingerprint::list_files(&site.root, "static", fingerprint::Hidden::Keep)?
        .into_par_iter()
        .map(|rel| {
            let src = site.root.join(&rel);
            let bytes = std::fs::read(&src).map_err(io(&src))?;
            Ok(CopyInput {
                path: rel.trim_start_matches("static/").to_string(),
                sha256: content::sha256_hex(&bytes),
                source: CopySource::Bytes(Arc::new(bytes)),
                immutable_url: false,
            })
        })
        .collect()
}

pub(crate) fn content_key(s: &str) -> String {
    content::sha256_hex(s.as_bytes())
}

/// Renders one planned file.
struct Renderer<'a> {
    templates: &'a templates::Templates,
    site: SiteView,
    base_url: String,
}

#[derive(Serialize)]
struct AnswerPage<'a> {
    #[serde(flatten)]
    view: &'a AnswerView,
    body_html: &'a str,
}

#[derive(Serialize)]
struct ListPage<'a> {
    title: String,
    number: Option<usize>,
    entries: &'a [LinkView],
    archive: Option<&'a [view::ArchiveLink]>,
    prev_url: Option<&'a str>,
    next_url: Option<&'a str>,
}

#[derive(Serialize)]
struct PlainPage<'a> {
    #[serde(flatten)]
    view: &'a PlainView,
    body_html: &'a str,
}

impl Renderer<'_> {
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
            Job::Answer(v) => {
                let b = body(v.id).ok_or_else(|| missing_body(v.id, &p.path))?;
                c.insert(
                    "page",
                    &AnswerPage {
                        view: v,
                        body_html: &b,
                    },
                );
                t.render("answer.html", &c, &p.path)
            }
            Job::Home(latest) => {
                c.insert("latest", latest);
                t.render("index.html", &c, &p.path)
            }
            Job::AnswersIndex(v) => {
                c.insert(
                    "list",
                    &ListPage {
                        title: "All answers".into(),
                        number: None,
                        entries: &v.latest,
                        archive: Some(&v.archive),
                        prev_url: None,
                        next_url: None,
                    },
                );
                t.render("list.html", &c, &p.path)
            }
            Job::List(v) => {
                c.insert(
                    "list",
                    &ListPage {
                        title: format!("Answers, page {}", v.number),
                        number: Some(v.number),
                        entries: &v.entries,
                        archive: None,
                        prev_url: v.prev_url.as_deref(),
                        next_url: v.next_url.as_deref(),
                    },
                );
                t.render("list.html", &c, &p.path)
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
            Job::Feed(entries) => {
                let bodies: Vec<Arc<str>> = entries
                    .iter()
                    .map(|(v, _)| body(v.id).ok_or_else(|| missing_body(v.id, &p.path)))
                    .collect::<Result<_, _>>()?;
                let list: Vec<(&AnswerView, Instant, &str)> = entries
                    .iter()
                    .zip(&bodies)
                    .map(|((v, t), b)| (v, *t, &**b))
                    .collect();
                Ok(xml::atom(&self.site.title, &self.base_url, &list).into_bytes())
            }
            Job::Sitemap(urls) => Ok(xml::urlset(&self.base_url, urls).into_bytes()),
            Job::SitemapIndex(files) => Ok(xml::sitemap_index(&self.base_url, files).into_bytes()),
            Job::Robots => Ok(xml::robots(&self.base_url).into_bytes()),
            Job::Copy { .. } => unreachable!("copies are linked, not rendered"),
        }
    }
}

fn missing_body(id: i64, output: &str) -> BuildError {
    BuildError::MissingBody {
        item: id,
        output: output.to_string(),
    }
}

/// The items whose bodies rendering `job` needs.
fn body_ids(job: &Job) -> Vec<i64> {
    match job {
        Job::Answer(v) => vec![v.id],
        Job::Feed(list) => list.iter().map(|(v, _)| v.id).collect(),
        _ => Vec::new(),
    }
}

/// Puts a copied input at `dst` and returns its size: a blob is linked, bytes read when the
/// build started are written as they are (see [`CopySource`]).
fn copy_input(source: &CopySource, dst: &Path) -> Result<u64, BuildError> {
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
fn safe_rel(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && !path.contains('\\')
        && !path.contains('\0')
        && Path::new(path)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

fn place(root: &Path, rel: &str) -> Result<PathBuf, BuildError> {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    Ok(path)
}

fn link_or_copy(src: &Path, dst: &Path) -> Result<(), BuildError> {
    match std::fs::hard_link(src, dst) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(BuildError::Io {
            path: src.to_path_buf(),
            source: e,
        }),
        Err(_) => std::fs::copy(src, dst).map(|_| ()).map_err(io(dst)),
    }
}

/// Plans every file of the site from `source`, refusing collisions and unsafe paths.
fn prepare(
    site: &Site,
    files: &fingerprint::SiteFiles,
    source: &Source,
    statics: &[CopyInput],
    assets: &fingerprint::Assets,
    fingerprints: &fingerprint::Fingerprints,
) -> Result<Vec<Planned>, BuildError> {
    let plain = plain_pages(files)?;
    let mut copies = statics.to_vec();
    copies.extend(assets.copies.iter().cloned());
    copies.extend(source.images.iter().cloned());
    let planned = plan::plan(&plan::Inputs {
        pages: &source.pages,
        plain: &plain,
        copies: &copies,
        render_fingerprint: &fingerprints.render,
        generated_fingerprint: &fingerprints.generated,
        config: &site.config.build,
    });
    for w in planned.windows(2) {
        if w[0].path == w[1].path {
            return Err(BuildError::Collision {
                path: w[0].path.clone(),
                why: "a file in static/ has the same path as a generated page (or as the hashed copy of another static file)".into(),
            });
        }
    }
    if let Some(bad) = planned.iter().find(|p| !safe_rel(&p.path)) {
        return Err(BuildError::Collision {
            path: bad.path.clone(),
            why: "the path would leave the output folder".into(),
        });
    }
    Ok(planned)
}

/// One file of an in-memory preview.
#[derive(Debug, Clone)]
pub struct MemoryFile {
    pub key: String,
    pub bytes: Arc<Vec<u8>>,
    pub sha256: String,
    pub content_type: &'static str,
}

/// A whole preview site in memory (watch mode): path → file.
#[derive(Debug, Clone, Default)]
pub struct MemorySite {
    pub revision: i64,
    pub build: String,
    pub files: HashMap<String, MemoryFile>,
}

/// What an in-memory preview build did.
#[derive(Debug, Clone, Serialize)]
pub struct MemoryReport {
    pub files: usize,
    pub rendered: usize,
    pub reused: usize,
    pub ms: u64,
}

/// Renders the content tree as it is now (like `--preview`) into memory, re-rendering only
/// files whose key differs from `prev`. Writes nothing to disk or the ledger.
pub fn preview_in_memory(
    site: &Site,
    clock: &Clock,
    cache: &mut TreeCache,
    prev: Option<&MemorySite>,
) -> Result<(MemorySite, MemoryReport), BuildError> {
    let started = std::time::Instant::now();
    let mut phases = Phases(std::time::Instant::now());
    // Static files are read and hashed once: for the fingerprint and for the copies.
    let statics = static_copies(site)?;
    let site_files = fingerprint::SiteFiles::read(site)?;
    let assets = fingerprint::referenced_assets(&site_files.templates, &statics);
    let fingerprints = fingerprint::compute(site, &site_files, &statics, &assets);
    phases.mark("preview fingerprint");
    let revision = if site.ledger_path().exists() {
        site.open_ledger()?.revision()?
    } else {
        0
    };
    phases.mark("preview ledger");
    let source = tree_source(site, revision, clock.now(), cache)?;
    phases.mark("preview tree");
    let templates = templates::Templates::load(&site.root, &site_files.templates, &assets.urls)?;
    let planned = prepare(site, &site_files, &source, &statics, &assets, &fingerprints)?;
    phases.mark("preview plan");
    let renderer = Renderer {
        templates: &templates,
        site: SiteView {
            title: site.config.title.clone(),
            base_url: site.config.base_url.clone(),
            preview: true,
        },
        base_url: site.config.base_url.clone(),
    };
    let sink = MemorySink { prev };
    let mut from_memory = |ids: &[i64]| -> Result<Bodies, BuildError> {
        Ok(ids
            .iter()
            .filter_map(|id| source.bodies.get(id).map(|b| (*id, b.clone())))
            .collect())
    };
    let outputs = render_all(&planned, &sink, &renderer, &mut from_memory, &|_, _| {})?;
    let mut files = HashMap::with_capacity(outputs.len());
    let (mut rendered, mut reused) = (0, 0);
    for ((path, f), was_reused) in outputs {
        if was_reused {
            reused += 1;
        } else {
            rendered += 1;
        }
        files.insert(path, f);
    }
    let report = MemoryReport {
        files: files.len(),
        rendered,
        reused,
        ms: started.elapsed().as_millis() as u64,
    };
    Ok((
        MemorySite {
            revision,
            build: fingerprints.build,
            files,
        },
        report,
    ))
}

/// Page bodies by item id.
type Bodies = HashMap<i64, Arc<str>>;

/// What the pipeline hands a sink for one planned file.
enum Made<'a> {
    /// Rendered bytes.
    Rendered(Vec<u8>),
    /// A file copied as is, with its sha256.
    Copy(&'a CopySource, &'a str),
}

/// Where a render goes: a revision directory (`build`) or memory (watch mode's preview).
/// The pipeline ([`render_all`]) is the same for both.
trait Sink: Sync {
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
fn render_all<S: Sink>(
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
            .flat_map(|(p, _)| body_ids(&p.job))
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
struct DirSink<'a> {
    staging: &'a Path,
    prev: Option<&'a (PathBuf, Manifest)>,
    cache_until: Option<Instant>,
}

impl DirSink<'_> {
    fn capped(&self, p: &Planned) -> Option<Instant> {
        p.cache
            .capped_by_embargo()
            .then_some(self.cache_until)
            .flatten()
    }
}

impl Sink for DirSink<'_> {
    type File = Entry;

    fn reuse(&self, p: &Planned) -> Option<Entry> {
        let (dir, m) = self.prev?;
        let e = m.find(&p.path).filter(|e| e.key == p.key)?;
        let dst = place(self.staging, &p.path).ok()?;
        // A missing source (a file pruned, or the whole revision garbage-collected since
        // this build read its manifest) means the file is rendered after all.
        link_or_copy(&dir.join(&p.path), &dst).ok()?;
        let mut e = e.clone();
        e.cache_until = self.capped(p);
        e.max_age = p.cache.max_age();
        e.cache = p.cache;
        Some(e)
    }

    fn store(&self, p: &Planned, made: Made<'_>) -> Result<Entry, BuildError> {
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
        Ok(Entry {
            path: p.path.clone(),
            sha256,
            bytes,
            content_type: manifest::content_type(&p.path).to_string(),
            cache: p.cache,
            max_age: p.cache.max_age(),
            cache_until: self.capped(p),
            key: p.key.clone(),
            links,
        })
    }
}

/// Watch mode's preview in memory: reuse shares the previous preview's bytes.
struct MemorySink<'a> {
    prev: Option<&'a MemorySite>,
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

/// Logs how long each phase took (at `-v`).
struct Phases(std::time::Instant);

impl Phases {
    fn mark(&mut self, phase: &str) {
        tracing::info!(
            phase,
            ms = self.0.elapsed().as_millis() as u64,
            "build phase done"
        );
        self.0 = std::time::Instant::now();
    }
}

/// Reports progress to the caller (the CLI draws a bar): (files done, files in all).
pub type Progress<'a> = &'a (dyn Fn(u64, u64) + Sync);

pub fn run(site: &Site, clock: &Clock, opts: &Options) -> Result<Report, BuildError> {
    run_with_progress(site, clock, opts, &|_, _| {})
}

/// [`run`], telling `progress` how far the render has come.
pub fn run_with_progress(
    site: &Site,
    clock: &Clock,
    opts: &Options,
    progress: Progress<'_>,
) -> Result<Report, BuildError> {
    let mut phases = Phases(std::time::Instant::now());
    let public = public_dir(site);
    std::fs::create_dir_all(&public).map_err(io(&public))?;
    let mut abandoned_removed = revision::remove_abandoned(&public)?;
    // Leftovers of killed swaps and gc runs, unless someone is using the pointer right now.
    if let Some(n) = pointer::try_with_lock(&public, || {
        pointer::remove_dead_swaps(&public) + revision::remove_trash(&public).unwrap_or(0)
    }) {
        abandoned_removed += n;
    }
    // Static files are read and hashed once: for the fingerprint and for the copies.
    let statics = static_copies(site)?;
    let site_files = fingerprint::SiteFiles::read(site)?;
    let assets = fingerprint::referenced_assets(&site_files.templates, &statics);
    let fingerprints = fingerprint::compute(site, &site_files, &statics, &assets);
    let build = fingerprints.build.clone();
    let mut ledger = site.open_ledger()?;
    if !opts.preview {
        // A rollback that died between moving the pointer and writing its audit entry.
        admin::finish_rollback_receipt(&mut ledger, &public)?;
        // Revisions only grow, so the live revision can never be ahead of the ledger that
        // built it: if it is, this ledger is not that one (lost, emptied, restored from an old
        // backup) — even for output older than the ledger id in manifests.
        if let Some(live) = pointer::read(&public)? {
            let now_at = ledger.revision()?;
            if live.revision > now_at {
                return Err(OutputError::AheadOfLedger {
                    public: public.clone(),
                    live: live.dir,
                    ledger: now_at,
                }
                .into());
            }
        }
    }
    let snap = ledger.snapshot()?;
    let source = if opts.preview {
        tree_source(
            site,
            snap.revision()?,
            clock.now(),
            &mut TreeCache::default(),
        )?
    } else {
        ledger_source(&snap, site)?
    };
    phases.mark("snapshot");
    crate::fail_point!("build.after_snapshot");
    let name = if opts.preview {
        "preview".to_string()
    } else {
        revision::dir_name(source.revision, &build)
    };
    let final_dir = if opts.preview {
        public.join("preview")
    } else {
        public.join(revision::REVISIONS).join(&name)
    };
    let report = |rendered, reused, files, pointer, already_built, broken_links| Report {
        revision: source.revision,
        build: build.clone(),
        path: final_dir.display().to_string(),
        rendered,
        reused,
        next_change_at: source.next_change_at,
        pointer,
        already_built,
        preview: opts.preview,
        files,
        broken_links,
        abandoned_removed,
    };

    let ledger_id = snap.ledger_id()?;
    let audit_tip = snap.anchor()?;
    if !opts.preview && !opts.full && revision::is_complete(&final_dir) {
        drop(snap);
        let existing = Manifest::read(&final_dir)?;
        same_ledger(&public, &name, existing.ledger_id.as_deref(), &ledger_id)?;
        let files = existing.files.len();
        let swap = pointer::advance(
            &public,
            &Pointer::new(source.revision, &build),
            clock.now(),
            source.next_change_at,
        )?;
        return Ok(report(0, 0, files, swap_name(&swap), true, Vec::new()));
    }

    let templates = templates::Templates::load(&site.root, &site_files.templates, &assets.urls)?;
    let planned = prepare(site, &site_files, &source, &statics, &assets, &fingerprints)?;
    phases.mark("plan");

    // The revision to reuse from: the one the pointer names (or, for preview, the last preview).
    let prev: Option<(PathBuf, Manifest)> = if opts.full {
        None
    } else {
        let dir = if opts.preview {
            Some(public.join("preview"))
        } else {
            pointer::read(&public)
                .ok()
                .flatten()
                .map(|p| public.join(revision::REVISIONS).join(p.dir))
                .or_else(|| {
                    revision::list_complete(&public).ok().and_then(|l| {
                        l.first()
                            .map(|(_, n)| public.join(revision::REVISIONS).join(n))
                    })
                })
        };
        dir.and_then(|d| Manifest::read(&d).ok().map(|m| (d, m)))
    };
    if !opts.preview {
        // The live revision must come from this ledger: revision numbers of a new or emptied
        // ledger start again at 1 and would collide with the old output.
        if let Some(live) = pointer::read(&public)? {
            let live_dir = public.join(revision::REVISIONS).join(&live.dir);
            let theirs = match &prev {
                Some((d, m)) if *d == live_dir => m.ledger_id.clone(),
                _ => Manifest::read_ledger_id(&live_dir).ok().flatten(),
            };
            same_ledger(&public, &live.dir, theirs.as_deref(), &ledger_id)?;
        }
    }

    phases.mark("previous manifest");
    crate::fail_point!("build.after_previous");
    let staging = Staging::create(&public, &name)?;
    let renderer = Renderer {
        templates: &templates,
        site: SiteView {
            title: site.config.title.clone(),
            base_url: site.config.base_url.clone(),
            preview: opts.preview,
        },
        base_url: site.config.base_url.clone(),
    };
    let sink = DirSink {
        staging: &staging.path,
        prev: prev.as_ref(),
        cache_until: source.next_change_at,
    };
    // Bodies: in memory for a preview (read from the content tree), else fetched from the
    // snapshot a chunk at a time, on this thread (the connection is not Sync).
    let mut fetch = |ids: &[i64]| -> Result<Bodies, BuildError> {
        let mut out = HashMap::with_capacity(ids.len());
        for &id in ids {
            let body = match source.bodies.get(&id) {
                Some(b) => Some(b.clone()),
                None => snap.body(ItemId(id))?.map(Arc::from),
            };
            if let Some(b) = body {
                out.insert(id, b);
            }
        }
        Ok(out)
    };
    let outputs = render_all(&planned, &sink, &renderer, &mut fetch, progress)?;
    let mut entries: Vec<Entry> = Vec::with_capacity(outputs.len());
    let mut rendered_paths: std::collections::HashSet<String> = std::collections::HashSet::new();
    let (mut rendered, mut reused) = (0usize, 0usize);
    for (e, was_reused) in outputs {
        if was_reused {
            reused += 1;
        } else {
            rendered += 1;
            rendered_paths.insert(e.path.clone());
        }
        entries.push(e);
    }
    drop(snap);
    phases.mark("render and link");
    crate::fail_point!("build.after_render");

    entries.sort_by(|a, b| a.path.cmp(&b.path));
    let broken = check_links(&entries, &rendered_paths, prev.as_ref().map(|(_, m)| m));
    for b in broken.iter().take(20) {
        tracing::warn!(page = %b.page, link = %b.link, "broken internal link");
    }
    if opts.strict && !broken.is_empty() {
        return Err(BuildError::BrokenLinks {
            count: broken.len(),
            first: format!("{} -> {}", broken[0].page, broken[0].link),
        });
    }
    phases.mark("link check");
    let files = entries.len();
    let manifest = Manifest {
        revision: source.revision,
        ledger_id: (!opts.preview).then(|| ledger_id.clone()),
        audit_tip: (!opts.preview).then(|| manifest::AuditAnchor {
            seq: audit_tip.seq,
            hash: audit_tip.hash.clone(),
        }),
        build: build.clone(),
        preview: opts.preview,
        next_change_at: source.next_change_at,
        broken_links: broken
            .iter()
            .map(|b| (b.page.clone(), b.link.clone()))
            .collect(),
        files: entries,
    };
    if opts.preview {
        staging.replace(&manifest, &final_dir)?;
        return Ok(report(rendered, reused, files, "none", false, broken));
    }
    let moved = staging.finish(&manifest, &name)?;
    phases.mark("manifest and rename");
    if !moved {
        tracing::info!(dir = %final_dir.display(), "another build finished this revision first");
    }
    let swap = pointer::advance(
        &public,
        &Pointer::new(source.revision, &build),
        clock.now(),
        source.next_change_at,
    )?;
    Ok(report(
        rendered,
        reused,
        files,
        swap_name(&swap),
        false,
        broken,
    ))
}

/// Internal links that resolve to no file of the revision. A reused page is re-checked only
/// when some path of the previous revision is gone, or it had broken links there: otherwise
/// its links resolve exactly as they did.
fn check_links(
    entries: &[Entry],
    rendered: &std::collections::HashSet<String>,
    prev: Option<&Manifest>,
) -> Vec<BrokenLink> {
    let paths: std::collections::HashSet<&str> = entries.iter().map(|e| e.path.as_str()).collect();
    let exists = |p: &str| paths.contains(p);
    let something_removed =
        prev.is_none_or(|m| m.files.iter().any(|f| !paths.contains(f.path.as_str())));
    let broken_before: std::collections::HashSet<&str> = prev
        .map(|m| {
            m.broken_links
                .iter()
                .map(|(page, _)| page.as_str())
                .collect()
        })
        .unwrap_or_default();
    let mut out = Vec::new();
    for e in entries {
        if !(something_removed
            || rendered.contains(&e.path)
            || broken_before.contains(e.path.as_str()))
        {
            continue;
        }
        for l in e.links.iter().filter(|l| !links::resolves(l, exists)) {
            out.push(BrokenLink {
                page: e.path.clone(),
                link: l.clone(),
            });
        }
    }
    out
}

/// Refuses output built from another ledger (a manifest without an id predates the check).
fn same_ledger(
    public: &Path,
    dir: &str,
    theirs: Option<&str>,
    ours: &str,
) -> Result<(), OutputError> {
    match theirs {
        Some(t) if t != ours => Err(OutputError::ForeignOutput {
            public: public.to_path_buf(),
            dir: dir.to_string(),
            theirs: t.to_string(),
            ours: ours.to_string(),
        }),
        _ => Ok(()),
    }
}

fn swap_name(s: &Swap) -> &'static str {
    match s {
        Swap::Moved { .. } => "moved",
        Swap::Unchanged => "unchanged",
        Swap::KeptHigher(_) => "kept_higher",
        Swap::Held(_) => "held",
    }
}
