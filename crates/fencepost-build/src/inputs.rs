//! The site's own inputs (static files, templates, plain pages, config), read and hashed once,
//! and the plan of every file of the site made from them and a source.

use super::plan::safe_rel;
use super::plan::{self, CopyInput, Job, Planned};
use super::report::{BuildError, LeftOut};
use super::source::{list_texts, plain_pages, static_copies, Source};
use super::{fingerprint, templates};
use fencepost_site::Site;

/// The site's own inputs — static files, templates, plain pages, config — read and hashed
/// once: for the build fingerprint and for what is rendered and copied. The first stage of
/// every build, whatever its source and sink.
pub(super) struct SiteInputs {
    statics: Vec<CopyInput>,
    /// Stylesheets of `sass/` that could not be compiled (`build/sass.rs`).
    sass_left_out: Vec<LeftOut>,
    files: fingerprint::SiteFiles,
    assets: fingerprint::Assets,
    pub(super) fingerprints: fingerprint::Fingerprints,
}

impl SiteInputs {
    /// `static/robots.txt` is copied as it is; else `templates/robots.txt` is rendered; else
    /// one is generated.
    fn robots_from(&self) -> plan::RobotsFrom {
        if self.statics.iter().any(|c| c.path == "robots.txt") {
            plan::RobotsFrom::Static
        } else if self.files.templates.iter().any(|(n, _)| n == "robots.txt") {
            plan::RobotsFrom::Template
        } else {
            plan::RobotsFrom::Generated
        }
    }

    pub(super) fn read(site: &Site) -> Result<SiteInputs, BuildError> {
        let mut statics = static_copies(site)?;
        let (compiled, sass_left_out) = super::sass::compile(site, &statics);
        statics.extend(compiled);
        let files = fingerprint::SiteFiles::read(site)?;
        let assets = fingerprint::referenced_assets(&files.templates, &statics);
        let fingerprints = fingerprint::compute(site, &files, &statics, &assets);
        Ok(SiteInputs {
            statics,
            sass_left_out,
            files,
            assets,
            fingerprints,
        })
    }

    /// The templates, and every file of the site planned from `source`. Pages that cannot
    /// be placed are taken out of `source` and named in the third value (see [`LeftOut`]).
    pub(super) fn plan(
        &self,
        site: &Site,
        source: &mut Source,
    ) -> Result<(templates::Templates, Vec<Planned>, Vec<LeftOut>), BuildError> {
        let public = templates::files::public_content(&source.pages);
        let templates = templates::Templates::load(
            &site.root,
            &self.files.templates,
            &self.assets.urls,
            &site.collections,
            (&site.config, public.clone()),
            site.image_store().join("processed"),
        )?;
        let (planned, left_out) = prepare(site, self, source)?;
        templates.images.set_sources(&planned, public);
        Ok((templates, planned, left_out))
    }
}

/// The item page (or notice) of a planned file, as (is a notice, index, first published).
fn item_of(p: &Planned, source: &Source) -> Option<(bool, usize, fencepost_core::clock::Instant)> {
    match p.job {
        Job::Item(i) => Some((false, i, source.pages[i].first_published_at)),
        Job::Notice(i) => Some((true, i, source.notices[i].first_published_at)),
        _ => None,
    }
}

/// The files of static/ the revision has: all but those where fencepost keeps its own
/// (`publish` refused them by name), each of which is named as left out.
fn statics_kept(
    site: &Site,
    inputs: &SiteInputs,
    left_out: &mut Vec<LeftOut>,
) -> Vec<super::plan::CopyInput> {
    let reserved = fencepost_site::content::claims::reserved_static(&site.root);
    let is_reserved = |c: &&super::plan::CopyInput| {
        (reserved.iter()).any(|(r, _)| *r == format!("static/{}", c.path))
    };
    let kept = inputs
        .statics
        .iter()
        .filter(|c| !is_reserved(c))
        .cloned()
        .collect();
    for (file, why) in reserved {
        left_out.push(LeftOut {
            path: file.strip_prefix("static/").map(str::to_string),
            what: file,
            why,
        });
    }
    kept
}

/// The site's texts, rendered with its shortcodes: its plain pages, its root text (Zola
/// mode), each list's text.
struct Texts {
    plain: Vec<super::view::PlainView>,
    /// Each language's root text (Zola mode), by language code.
    roots: std::collections::BTreeMap<String, super::view::ListText>,
    lists: Vec<Option<super::view::ListText>>,
}

/// The site's texts, and the ones left out.
fn site_texts(site: &Site, inputs: &SiteInputs) -> (Texts, Vec<LeftOut>) {
    let shortcodes = fencepost_site::shortcodes::Shortcodes::load(&site.root, &site.config);
    let sc = shortcodes.as_ref();
    let markdown = &site.config.markdown;
    let zola = site.config.build.templates == fencepost_config::TemplateDialect::Zola;
    let (plain, roots, mut left_out) =
        plain_pages(&inputs.files, &site.collections, markdown, (sc, zola));
    let texts = list_texts(
        &inputs.files,
        &site.collections,
        markdown,
        sc,
        &mut left_out,
    );
    let lists = texts;
    (
        Texts {
            plain,
            roots,
            lists,
        },
        left_out,
    )
}

/// Plans every file of the site from `source`. One item's source never fails the revision:
/// an item page that shares its path with another file of the site (or whose path cannot
/// be written) is taken out of `source` — of two items, the one published later — and the
/// site is planned again without it, so no list, feed or sitemap names it. Collisions
/// between the site's own files (a static file over a generated one) are the site's
/// configuration, and refused as before.
fn prepare(
    site: &Site,
    inputs: &SiteInputs,
    source: &mut Source,
) -> Result<(Vec<Planned>, Vec<LeftOut>), BuildError> {
    let (
        Texts {
            mut plain,
            roots,
            lists: texts,
        },
        mut left_out,
    ) = site_texts(site, inputs);
    left_out.extend(inputs.sass_left_out.iter().cloned());
    let mut copies = statics_kept(site, inputs, &mut left_out);
    copies.extend(inputs.assets.copies.iter().cloned());
    copies.extend(source.images.iter().cloned());
    let mut resources = super::bundles::read(site, &source.pages, &mut left_out);
    loop {
        super::languages::link(&mut source.pages, &site.collections);
        // Zola's templates can reach every public page, plain page and list text: each
        // templated file's key covers them (and the static files: `whole` has them all).
        let render_fingerprint = match site.config.build.templates {
            fencepost_config::TemplateDialect::Fencepost => inputs.fingerprints.render.clone(),
            fencepost_config::TemplateDialect::Zola => format!(
                "{}:{}",
                inputs.fingerprints.whole,
                super::zola::site_digest(&source.pages)
            ),
        };
        let planned = plan::plan(&plan::Inputs {
            pages: &source.pages,
            plain: &plain,
            list_texts: &texts,
            root_texts: &roots,
            copies: &copies,
            resources: &resources,
            render_fingerprint: &render_fingerprint,
            generated_fingerprint: &inputs.fingerprints.generated,
            config: &site.config.build,
            collections: &site.collections,
            notices: &source.notices,
            rss: site.config.rss(),
            robots: inputs.robots_from(),
            transparency: site.config.transparency.log,
        });
        let p = Placement::judge(&planned, source)?;
        if p.pages.is_empty() && p.plain.is_empty() {
            let mut planned = planned;
            planned.retain(|f| !p.files.contains(&f.path) && !p.is_dropped_alias(f));
            left_out.extend(p.left_out);
            return Ok((planned, left_out));
        }
        refuse_public_left_out(&p, source)?;
        // Take the pages out and plan again: what this pass said of single files, the next
        // says again.
        let files = p.files;
        left_out.extend(p.left_out.into_iter().filter(|l| {
            !l.path
                .as_ref()
                .is_some_and(|f| files.contains(f) || p.aliases.contains(f))
        }));
        plain.retain(|v| !p.plain.contains(&v.slug));
        remove_at(
            &mut source.pages,
            p.pages.iter().filter(|d| !d.0).map(|d| d.1),
        );
        // A page left out takes its bundle's files with it.
        let kept: std::collections::HashSet<String> = source
            .pages
            .iter()
            .map(|p| format!("{}/{}", p.view.collection, p.view.id.text()))
            .collect();
        resources.retain(|r| kept.contains(&r.of));
        remove_at(
            &mut source.notices,
            p.pages.iter().filter(|d| d.0).map(|d| d.1),
        );
    }
}

/// A public item the revision would lack: the pointer does not move (a withdrawn page's
/// notice may give way).
fn refuse_public_left_out(p: &Placement, source: &Source) -> Result<(), BuildError> {
    let items: Vec<String> = p
        .pages
        .iter()
        .filter(|d| !d.0)
        .map(|d| {
            let v = &source.pages[d.1].view;
            format!("{}/{}", v.collection, v.id.text())
        })
        .collect();
    let Some(first) = items.first() else {
        return Ok(());
    };
    let why = p
        .left_out
        .iter()
        .find(|l| l.what == *first)
        .map(|l| format!("{} (at {})", l.why, l.path.as_deref().unwrap_or_default()))
        .unwrap_or_default();
    Err(BuildError::PublicLeftOut {
        count: items.len(),
        first: first.clone(),
        more: match items.len() {
            1 => String::new(),
            n => format!(" and {} more", n - 1),
        },
        why: format!(
            "{why}: fix the URL pattern in [collections], the id, or the file, and build again"
        ),
    })
}

/// What one planning pass leaves out, and why.
#[derive(Default)]
struct Placement {
    left_out: Vec<LeftOut>,
    /// Items (`false`) and notices (`true`) to take out of the source, by index.
    pages: Vec<(bool, usize)>,
    /// Plain pages to take out, by slug.
    plain: Vec<String>,
    /// Single planned files to drop (a term's page whose name cannot be written).
    files: std::collections::HashSet<String>,
    /// Paths of aliases and bundle files to drop: each gives way to any other file, and two
    /// at one path to each other (publish names a clashing alias; this holds regardless).
    aliases: std::collections::HashSet<String>,
}

impl Placement {
    /// Decides, for every clash of `planned`, what is left out (see [`prepare`]).
    fn judge(planned: &[Planned], source: &Source) -> Result<Placement, BuildError> {
        let mut p = Placement::default();
        for (path, a, b) in clashes(planned) {
            let why = match b {
                Some(b) => format!(
                    "{} and {} both have this path: change a URL pattern in [collections], an id, or the file",
                    a.what(&source.pages, &source.notices),
                    b.what(&source.pages, &source.notices)
                ),
                None => "the path would leave the output folder or has a name too long for a file system".into(),
            };
            p.judge_one(path, a, b, why, source)?;
        }
        Ok(p)
    }

    fn is_dropped_alias(&self, f: &Planned) -> bool {
        droppable(f) && self.aliases.contains(&f.path)
    }

    fn judge_one(
        &mut self,
        path: &str,
        a: &Planned,
        b: Option<&Planned>,
        why: String,
        source: &Source,
    ) -> Result<(), BuildError> {
        let alias = [Some(a), b].into_iter().flatten().find(|p| droppable(p));
        if let Some(alias) = alias {
            if self.aliases.insert(alias.path.clone()) {
                self.leave_out(alias.what(&source.pages, &source.notices), &alias.path, why);
            }
            return Ok(());
        }
        // A plain page over an item: the page is left out; the item keeps its URL.
        let plain = [Some(a), b]
            .into_iter()
            .flatten()
            .find_map(|p| match &p.job {
                Job::Plain(v) if b.is_some() => Some(v.slug.clone()),
                _ => None,
            });
        if let Some(slug) = plain {
            if !self.plain.contains(&slug) {
                self.leave_out(format!("content/{slug}.md"), path, why);
                self.plain.push(slug);
            }
            return Ok(());
        }
        let items = [Some(a), b].map(|p| p.and_then(|p| item_of(p, source)));
        // The item to leave out: the one published later (or the only item).
        let out = match items {
            [Some(x), Some(y)] => Some(if (y.2, y.1) > (x.2, x.1) { y } else { x }),
            [Some(x), None] | [None, Some(x)] => Some(x),
            [None, None] => None,
        };
        match out {
            Some((notice, i, _)) if !self.pages.contains(&(notice, i)) => {
                let v = match notice {
                    true => &source.notices[i].view,
                    false => &source.pages[i].view,
                };
                self.leave_out(format!("{}/{}", v.collection, v.id.text()), path, why);
                self.pages.push((notice, i));
            }
            Some(_) => {}
            // A term's page whose path cannot be written (a slug from before terms were
            // bounded): that page alone is left out.
            None if b.is_none() && is_term_file(a) => {
                self.leave_out(a.what(&source.pages, &source.notices), path, why);
                self.files.insert(path.to_string());
            }
            None => {
                return Err(BuildError::Collision {
                    path: path.to_string(),
                    why,
                })
            }
        }
        Ok(())
    }

    fn leave_out(&mut self, what: String, path: &str, why: String) {
        tracing::error!(what = %what, path = %path, why = %why, "left out of this revision");
        self.left_out.push(LeftOut {
            what,
            path: Some(path.to_string()),
            why,
        });
    }
}

/// The planned files that cannot all be written: pairs sharing a path (or a file where the
/// other needs a folder), and single files whose path is unsafe (`None` beside them).
fn clashes(planned: &[Planned]) -> Vec<(&str, &Planned, Option<&Planned>)> {
    use rayon::prelude::*;
    let mut out = Vec::new();
    for w in planned.windows(2) {
        if w[0].path == w[1].path {
            out.push((w[0].path.as_str(), &w[0], Some(&w[1])));
        }
    }
    // Every planned path is looked for two or three times: foldhash, not SipHash (the paths
    // are the build's own), and each path checked on every core — at 100,000 pages this was
    // ~20 ms on the build's main thread while the other core idled.
    let mut by_path: std::collections::HashMap<&str, &Planned, foldhash::fast::RandomState> =
        std::collections::HashMap::with_capacity_and_hasher(planned.len(), Default::default());
    by_path.extend(planned.iter().map(|p| (p.path.as_str(), p)));
    out.par_extend(planned.par_iter().flat_map_iter(|p| {
        let mut found = Vec::new();
        if !safe_rel(&p.path) || p.path.split('/').any(|c| c.len() > MAX_NAME) {
            found.push((p.path.as_str(), p, None));
            return found;
        }
        // A file at a folder this one needs (`atom.xml` against `atom.xml/index.html`).
        let mut at = p.path.as_str();
        while let Some((parent, _)) = at.rsplit_once('/') {
            if let Some(other) = by_path.get(parent) {
                found.push((p.path.as_str(), p, Some(*other)));
            }
            at = parent;
        }
        found
    }));
    out
}

/// A file that gives way to any other at its path: an alias, or a file of a page bundle.
fn droppable(p: &Planned) -> bool {
    matches!(p.job, Job::Alias { .. } | Job::Resource { .. })
}

/// A term's page or feed.
fn is_term_file(p: &Planned) -> bool {
    matches!(&p.job, Job::Term(_)) || matches!(&p.job, Job::Feed(f) if f.term.is_some())
}

/// The longest file or folder name the output may have: most file systems allow 255 bytes.
const MAX_NAME: usize = 255;

fn remove_at<T>(v: &mut Vec<T>, which: impl Iterator<Item = usize>) {
    let which: std::collections::HashSet<usize> = which.collect();
    let mut i = 0;
    v.retain(|_| {
        i += 1;
        !which.contains(&(i - 1))
    });
}
