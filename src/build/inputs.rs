//! The site's own inputs (static files, templates, plain pages, config), read and hashed once,
//! and the plan of every file of the site made from them and a source.

use super::plan::{self, CopyInput, Job, Planned};
use super::sink::safe_rel;
use super::source::{plain_pages, static_copies, Source};
use super::{fingerprint, templates, BuildError, LeftOut};
use crate::site::Site;

/// The site's own inputs — static files, templates, plain pages, config — read and hashed
/// once: for the build fingerprint and for what is rendered and copied. The first stage of
/// every build, whatever its source and sink.
pub(super) struct SiteInputs {
    statics: Vec<CopyInput>,
    files: fingerprint::SiteFiles,
    assets: fingerprint::Assets,
    pub(super) fingerprints: fingerprint::Fingerprints,
}

impl SiteInputs {
    pub(super) fn read(site: &Site) -> Result<SiteInputs, BuildError> {
        let statics = static_copies(site)?;
        let files = fingerprint::SiteFiles::read(site)?;
        let assets = fingerprint::referenced_assets(&files.templates, &statics);
        let fingerprints = fingerprint::compute(site, &files, &statics, &assets);
        Ok(SiteInputs {
            statics,
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
        let templates = templates::Templates::load(
            &site.root,
            &self.files.templates,
            &self.assets.urls,
            &site.collections,
        )?;
        let (planned, left_out) = prepare(site, self, source)?;
        Ok((templates, planned, left_out))
    }
}

/// What a planned file is, in words, for the error or the left-out entry that names it.
fn what(p: &Planned, source: &Source) -> String {
    match &p.job {
        Job::Item(i) => {
            let v = &source.pages[*i].view;
            format!("item {}/{}", v.collection, v.id.text())
        }
        Job::List(..) | Job::ListIndex(..) => "a list page".into(),
        Job::Term(v) => format!("a page of the term {:?}", v.name),
        Job::Terms(..) => "a taxonomy's index of terms".into(),
        Job::Notice(i) => {
            let v = &source.notices[*i].view;
            format!("the withdrawal notice of {}/{}", v.collection, v.id.text())
        }
        Job::Plain(v) => format!("plain page content/{}.md", v.slug),
        Job::Copy { .. } => "a file of static/ (or the hashed copy of one)".into(),
        Job::Home(_) => "the home page".into(),
        _ => "a generated file".into(),
    }
}

/// The item page (or notice) of a planned file, as (is a notice, index, first published).
fn item_of(p: &Planned, source: &Source) -> Option<(bool, usize, crate::clock::Instant)> {
    match p.job {
        Job::Item(i) => Some((false, i, source.pages[i].first_published_at)),
        Job::Notice(i) => Some((true, i, source.notices[i].first_published_at)),
        _ => None,
    }
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
    let SiteInputs {
        statics,
        files,
        assets,
        fingerprints,
    } = inputs;
    let (mut plain, mut left_out) = plain_pages(files, &site.collections, &site.config.markdown);
    let mut drop_plain: Vec<String> = Vec::new();
    let mut copies = statics.to_vec();
    copies.extend(assets.copies.iter().cloned());
    copies.extend(source.images.iter().cloned());
    loop {
        let planned = plan::plan(&plan::Inputs {
            pages: &source.pages,
            plain: &plain,
            copies: &copies,
            render_fingerprint: &fingerprints.render,
            generated_fingerprint: &fingerprints.generated,
            config: &site.config.build,
            collections: &site.collections,
            notices: &source.notices,
            rss: site.config.rss(),
        });
        let mut drop: Vec<(bool, usize)> = Vec::new();
        let mut skip = std::collections::HashSet::new();
        let mut fail = None;
        for (path, a, b) in clashes(&planned) {
            let why = match b {
                Some(b) => format!(
                    "{} and {} both have this path: change a URL pattern in [collections], an id, or the file",
                    what(a, source),
                    what(b, source)
                ),
                None => "the path would leave the output folder or has a name too long for a file system".into(),
            };
            // A plain page over an item: the page is left out; the item keeps its URL.
            if let Some(plain) = [Some(a), b]
                .into_iter()
                .flatten()
                .find_map(|p| match &p.job {
                    Job::Plain(v) if b.is_some() => Some(v.slug.clone()),
                    _ => None,
                })
            {
                if !drop_plain.contains(&plain) {
                    let what = format!("content/{plain}.md");
                    tracing::error!(file = %what, path = %path, why = %why, "left out of this revision");
                    left_out.push(LeftOut {
                        what,
                        path: Some(path.to_string()),
                        why,
                    });
                    drop_plain.push(plain);
                }
                continue;
            }
            let items = [Some(a), b].map(|p| p.and_then(|p| item_of(p, source)));
            // The item to leave out: the one published later (or the only item).
            let out = match items {
                [Some(x), Some(y)] => Some(if (y.2, y.1) > (x.2, x.1) { y } else { x }),
                [Some(x), None] | [None, Some(x)] => Some(x),
                [None, None] => None,
            };
            match out {
                Some((notice, i, _)) if !drop.contains(&(notice, i)) => {
                    let v = if notice {
                        &source.notices[i].view
                    } else {
                        &source.pages[i].view
                    };
                    let what = format!("{}/{}", v.collection, v.id.text());
                    tracing::error!(item = %what, path = %path, why = %why, "left out of this revision");
                    left_out.push(LeftOut {
                        what,
                        path: Some(path.to_string()),
                        why,
                    });
                    drop.push((notice, i));
                }
                Some(_) => {}
                // A term's page whose path cannot be written (a slug from before terms were
                // bounded): that page alone is left out.
                None if b.is_none() && is_term_file(a) => {
                    left_out.push(LeftOut {
                        what: what(a, source),
                        path: Some(path.to_string()),
                        why,
                    });
                    skip.insert(path.to_string());
                }
                None => {
                    fail = fail.or(Some(BuildError::Collision {
                        path: path.to_string(),
                        why,
                    }))
                }
            }
        }
        if let Some(e) = fail {
            return Err(e);
        }
        if !drop_plain.is_empty() && plain.iter().any(|p| drop_plain.contains(&p.slug)) {
            plain.retain(|p| !drop_plain.contains(&p.slug));
            continue;
        }
        if drop.is_empty() {
            let mut planned = planned;
            planned.retain(|p| !skip.contains(&p.path));
            return Ok((planned, left_out));
        }
        left_out.retain(|l| !l.path.as_ref().is_some_and(|p| skip.contains(p)));
        remove_at(&mut source.pages, drop.iter().filter(|d| !d.0).map(|d| d.1));
        remove_at(
            &mut source.notices,
            drop.iter().filter(|d| d.0).map(|d| d.1),
        );
    }
}

/// The planned files that cannot all be written: pairs sharing a path (or a file where the
/// other needs a folder), and single files whose path is unsafe (`None` beside them).
fn clashes(planned: &[Planned]) -> Vec<(&str, &Planned, Option<&Planned>)> {
    let mut out = Vec::new();
    let by_path: std::collections::HashMap<&str, &Planned> =
        planned.iter().map(|p| (p.path.as_str(), p)).collect();
    for w in planned.windows(2) {
        if w[0].path == w[1].path {
            out.push((w[0].path.as_str(), &w[0], Some(&w[1])));
        }
    }
    for p in planned {
        if !safe_rel(&p.path) || p.path.split('/').any(|c| c.len() > MAX_NAME) {
            out.push((p.path.as_str(), p, None));
            continue;
        }
        // A file at a folder this one needs (`atom.xml` against `atom.xml/index.html`).
        let mut at = p.path.as_str();
        while let Some((parent, _)) = at.rsplit_once('/') {
            if let Some(other) = by_path.get(parent) {
                out.push((p.path.as_str(), p, Some(*other)));
            }
            at = parent;
        }
    }
    out
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
