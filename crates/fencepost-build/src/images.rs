//! Images in a build: Zola's `resize_image` for every site's templates, the width, height and
//! `srcset` of Markdown images (`body.rs`), and the processed images put in the revision
//! (`revision.rs`). The pixels are `fencepost-images`'; this is where a build asks for them.
//!
//! **What a source can be: a file of this revision.** `resize_image(path=…)` and a Markdown
//! image find their source among the files the plan copies into the revision being built —
//! `static/`, the image store, and the bundle files of its pages — by the bytes the plan
//! holds (never the file as it is on disk now). An embargoed page's bundle is in no public
//! plan, so nothing of it can be resized into a public revision, by a template or a theme's
//! author who names its path: the call answers as for a missing file. A shared image is
//! public through the public page that has it.
//!
//! **Computed once, per page.** A call plans its output (size and name from the source's
//! header, no pixel touched) and answers at once; the outputs a page asked for are made when
//! its render is done, grouped by source so each source is decoded once, at the smallest
//! scale that covers them all. Pages render in parallel, so images are made on every core, one
//! source per thread. An output already in the cache (`<image store>/processed/`) is not made
//! again. A source that cannot be made (not an image, over the pixel budget, truncated) holds
//! the pages that use it, named with the file and why, and no other.

mod body;
pub(super) mod revision;

pub(super) use body::in_body;

use super::plan::{CopySource, Job, Planned};
use fencepost_config::ImagesConfig;
use fencepost_images::{Format, ImageError, Images, Meta, Operation, Output, Source};
use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

/// The files a source can be: each copied file of the revision by its path in it, and the
/// public bundle files by their path under `content/` (to the sha256 of their bytes).
#[derive(Default)]
struct Sources {
    by_path: HashMap<String, (CopySource, String)>,
    by_sha: HashMap<String, CopySource>,
    content: super::templates::files::PublicContent,
}

/// One source a page asked for, with the outputs wanted of it.
struct Pending {
    source: Source,
    meta: Meta,
    outputs: Vec<Output>,
}

/// What the page being rendered asked for: the outputs, by source sha256, and the sources it
/// read, by the path it named them with (each read once a page).
#[derive(Default)]
struct PageWork {
    pending: BTreeMap<String, Pending>,
    read: HashMap<String, (Source, Meta)>,
}

thread_local! {
    /// The page being rendered on this thread: a stack, as a thread waiting inside one page's
    /// render may render another's.
    static PAGE: RefCell<Vec<PageWork>> = const { RefCell::new(Vec::new()) };
}

/// One build's images: the cache, the sources, what was made.
pub(crate) struct Session {
    images: Images,
    pub(super) config: ImagesConfig,
    sources: OnceLock<Sources>,
    /// Every output a page of this build asked for, by name (its file in the cache is
    /// [`Images::cached`]).
    made: Mutex<BTreeSet<String>>,
    /// Sources' headers by sha256, as Markdown images read them.
    metas: Mutex<HashMap<String, Meta>>,
    /// One lock per source being made, so two pages wanting one source make it once.
    making: Mutex<HashMap<String, Arc<Mutex<()>>>>,
}

/// A page whose images could not be made: the source's name and why.
pub(crate) struct Failed {
    pub(crate) source: String,
    pub(crate) why: String,
}

impl Session {
    pub(crate) fn new(cache: PathBuf, config: &ImagesConfig) -> Arc<Session> {
        Arc::new(Session {
            images: Images::new(&cache, config.max_pixels),
            config: config.clone(),
            sources: OnceLock::new(),
            made: Mutex::new(BTreeSet::new()),
            metas: Mutex::new(HashMap::new()),
            making: Mutex::new(HashMap::new()),
        })
    }

    /// The sources this build may read: the plan's copied files and public bundle files.
    pub(super) fn set_sources(
        &self,
        planned: &[Planned],
        content: super::templates::files::PublicContent,
    ) {
        let mut s = Sources {
            content,
            ..Sources::default()
        };
        for p in planned {
            if let Job::Copy { source, sha256 } | Job::Resource { source, sha256, .. } = &p.job {
                s.by_path
                    .insert(p.path.clone(), (source.clone(), sha256.clone()));
                s.by_sha.insert(sha256.clone(), source.clone());
            }
        }
        let _ = self.sources.set(s);
    }

    /// The source at `path` as a template names it — from the site's root (`static/a.jpg`,
    /// `content/blog/x/b.png`), else a path of the revision (`a.jpg`, `blog/x/b.png`), else a
    /// bundle file by its path under `content/` — with its header, or `None`.
    fn find(&self, path: &str) -> Result<Option<(Source, Meta)>, ImageError> {
        let seen = PAGE.with(|p| (p.borrow().last()).and_then(|w| w.read.get(path).cloned()));
        if let Some(found) = seen {
            return Ok(Some(found));
        }
        let found = self.read(path)?;
        if let Some(f) = &found {
            PAGE.with(|p| {
                if let Some(w) = p.borrow_mut().last_mut() {
                    w.read.insert(path.to_string(), f.clone());
                }
            });
        }
        Ok(found)
    }

    /// [`Session::find`], read.
    fn read(&self, path: &str) -> Result<Option<(Source, Meta)>, ImageError> {
        let Some(s) = self.sources.get() else {
            return Ok(None);
        };
        let rel = path.trim_start_matches('/');
        let by_content = |c: &str| {
            let sha = s.content.get(c)?;
            Some((s.by_sha.get(sha)?.clone(), sha.clone()))
        };
        let found = match (rel.strip_prefix("static/"), rel.strip_prefix("content/")) {
            (Some(r), _) => s.by_path.get(r).cloned(),
            (_, Some(c)) => by_content(c),
            _ => s.by_path.get(rel).cloned().or_else(|| by_content(rel)),
        };
        let Some((copy, sha256)) = found else {
            return Ok(None);
        };
        let bytes = copy.bytes(&sha256).map_err(|source| ImageError::Io {
            path: path.into(),
            source,
        })?;
        let source = Source {
            name: path.to_string(),
            bytes,
            sha256,
        };
        let meta = self.images.meta(&source)?;
        Ok(Some((source, meta)))
    }

    /// The header of the file at `rel` in the revision, if it has one there: read once a
    /// build (an image many pages show — a logo, a shared photo — is not read for each).
    fn find_in_revision(&self, rel: &str) -> Result<Option<Meta>, ImageError> {
        let Some((_, sha)) = self.sources.get().and_then(|s| s.by_path.get(rel)) else {
            return Ok(None);
        };
        if let Some(m) = self.metas.lock().expect("not poisoned").get(sha) {
            return Ok(Some(*m));
        }
        let meta = self.find(rel)?.map(|(_, m)| m);
        if let Some(m) = meta {
            self.metas
                .lock()
                .expect("not poisoned")
                .insert(sha.clone(), m);
        }
        Ok(meta)
    }

    /// Output `op` in `format` of the source at `path`, planned (made when the page is
    /// done): its name and size.
    pub(super) fn want(
        &self,
        path: &str,
        op: Operation,
        format: impl Fn(&Meta) -> Result<Format, ImageError>,
    ) -> Result<Option<(Output, Meta)>, ImageError> {
        let Some((source, meta)) = self.find(path)? else {
            return Ok(None);
        };
        let out = self.images.plan(&source, &meta, op, format(&meta)?);
        self.made
            .lock()
            .expect("not poisoned")
            .insert(out.name.clone());
        let pending = Pending {
            source,
            meta,
            outputs: vec![out.clone()],
        };
        let queued = PAGE.with(|p| match p.borrow_mut().last_mut() {
            Some(PageWork { pending: page, .. }) => {
                match page.get_mut(&pending.source.sha256) {
                    Some(q) if !q.outputs.contains(&out) => q.outputs.push(out.clone()),
                    Some(_) => {}
                    None => {
                        page.insert(pending.source.sha256.clone(), pending);
                    }
                }
                None
            }
            None => Some(pending),
        });
        if let Some(now) = queued {
            self.make(&now)?;
        }
        Ok(Some((out, meta)))
    }

    /// Runs `render` as one page's: the outputs it asked for are made when it is done.
    pub(crate) fn page<T, E>(
        &self,
        render: impl FnOnce() -> Result<T, E>,
    ) -> Result<Result<T, E>, Failed> {
        PAGE.with(|p| p.borrow_mut().push(PageWork::default()));
        let made = render();
        let wanted = (PAGE.with(|p| p.borrow_mut().pop()))
            .unwrap_or_default()
            .pending;
        if made.is_ok() {
            for pending in wanted.values() {
                self.make(pending).map_err(|e| Failed {
                    source: pending.source.name.clone(),
                    why: e.to_string(),
                })?;
            }
        }
        Ok(made)
    }

    fn make(&self, p: &Pending) -> Result<(), ImageError> {
        let lock = (self.making.lock().expect("not poisoned"))
            .entry(p.source.sha256.clone())
            .or_default()
            .clone();
        let _held = lock.lock().expect("not poisoned");
        self.images.make(&p.source, &p.meta, &p.outputs).map(|_| ())
    }

    /// Every output a page of this build asked for, by name.
    pub(super) fn made(&self) -> BTreeSet<String> {
        self.made.lock().expect("not poisoned").clone()
    }

    /// Outputs encoded, and found in the cache, by this build.
    pub(crate) fn counts(&self) -> fencepost_images::Made {
        self.images.counts()
    }

    /// `resize_image(path, width, height, op="fill", format="auto", quality, speed)`, Zola's:
    /// `url`, `static_path`, `width`, `height`, `orig_width`, `orig_height`.
    pub(super) fn resize_image(&self, a: &HashMap<String, Value>) -> tera::Result<Value> {
        let err = |m: String| tera::Error::msg(format!("resize_image: {m}"));
        let path = (a.get("path").and_then(Value::as_str))
            .ok_or_else(|| err("needs path=\"…\"".into()))?;
        let number = |k: &str| -> tera::Result<Option<u32>> {
            match a.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => (v.as_u64().and_then(|n| u32::try_from(n).ok()))
                    .map(Some)
                    .ok_or_else(|| err(format!("{k} must be a whole number, not {v}"))),
            }
        };
        let byte = |k: &str| -> tera::Result<Option<u8>> {
            number(k)?
                .map(|n| u8::try_from(n).map_err(|_| err(format!("{k} {n} is out of range"))))
                .transpose()
        };
        let op = a.get("op").and_then(Value::as_str).unwrap_or("fill");
        let op = Operation::from_args(op, number("width")?, number("height")?)
            .map_err(|e| err(e.to_string()))?;
        let format = a.get("format").and_then(Value::as_str).unwrap_or("auto");
        let (quality, speed) = (byte("quality")?, byte("speed")?);
        let made = self.want(path, op, |m| {
            Format::from_args(format, m.kind.lossy(), quality, speed)
        });
        match made.map_err(|e| err(e.to_string()))? {
            Some((out, meta)) => Ok(json!({
                "url": format!("/{}/{}", fencepost_images::OUTPUT_DIR, out.name),
                "static_path": format!("static/{}/{}", fencepost_images::OUTPUT_DIR, out.name),
                "width": out.width,
                "height": out.height,
                "orig_width": meta.width,
                "orig_height": meta.height,
            })),
            None => Err(err(format!(
                "cannot find file {path:?} (in static/, the image store, or a public page's bundle)"
            ))),
        }
    }
}
