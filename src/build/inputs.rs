//! The site's own inputs (static files, templates, plain pages, config), read and hashed once,
//! and the plan of every file of the site made from them and a source.

use super::plan::{self, CopyInput, Job, Planned};
use super::sink::safe_rel;
use super::source::{plain_pages, static_copies, Source};
use super::{fingerprint, templates, BuildError};
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

    /// The templates, and every file of the site planned from `source`.
    pub(super) fn plan(
        &self,
        site: &Site,
        source: &Source,
    ) -> Result<(templates::Templates, Vec<Planned>), BuildError> {
        let templates = templates::Templates::load(
            &site.root,
            &self.files.templates,
            &self.assets.urls,
            &site.collections,
        )?;
        Ok((templates, prepare(site, self, source)?))
    }
}

/// Plans every file of the site from `source`, refusing collisions and unsafe paths.
fn prepare(site: &Site, inputs: &SiteInputs, source: &Source) -> Result<Vec<Planned>, BuildError> {
    let SiteInputs {
        statics,
        files,
        assets,
        fingerprints,
    } = inputs;
    let plain = plain_pages(files, &site.collections, &site.config.markdown)?;
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
        collections: &site.collections,
        notices: &source.notices,
        rss: site.config.rss(),
    });
    for w in planned.windows(2) {
        if w[0].path == w[1].path {
            let what = |p: &Planned| match &p.job {
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
                _ => "a generated file".into(),
            };
            return Err(BuildError::Collision {
                path: w[0].path.clone(),
                why: format!(
                    "{} and {} both have this path: change a URL pattern in [collections], an id, or the file",
                    what(&w[0]),
                    what(&w[1])
                ),
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
