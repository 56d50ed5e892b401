//! Watch mode's preview: the content tree as it is now, rendered into memory, re-rendering
//! only the files whose key changed.

use super::inputs::SiteInputs;
use super::render::Renderer;
use super::report::{BuildError, Phases};
use super::sink::{render_all, Bodies, MemorySink};
use super::source::{tree_source, TreeCache};
use fencepost_core::clock::Clock;
use fencepost_output::memory::MemorySite;
use fencepost_site::Site;
use serde::Serialize;
use std::collections::HashMap;

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
    let mut phases = Phases::start();
    let inputs = SiteInputs::read(site)?;
    phases.mark("preview fingerprint");
    let revision = if site.ledger_exists() {
        site.open_ledger()?.revision()?
    } else {
        0
    };
    phases.mark("preview ledger");
    let mut source = tree_source(site, revision, clock.now(), cache)?;
    phases.mark("preview tree");
    let (templates, planned, _left_out) = inputs.plan(site, &mut source)?;
    phases.mark("preview plan");
    let renderer = Renderer::new(site, &templates, &source.pages, &source.notices, true);
    let sink = MemorySink { prev };
    let mut from_memory = |ids: &[i64]| -> Result<Bodies, BuildError> {
        Ok(ids
            .iter()
            .filter_map(|id| source.bodies.get(id).map(|b| (*id, b.clone())))
            .collect())
    };
    let outputs = render_all(&planned, &sink, &renderer, &mut from_memory, &|_, _| {})?;
    let mut files = HashMap::with_capacity(outputs.files.len());
    let held: HashMap<String, String> = (outputs.held.iter())
        .map(|(h, _)| {
            (
                h.path.clone(),
                format!("{} ({}): {}", h.path, h.what, h.why),
            )
        })
        .collect();
    let (mut rendered, mut reused) = (0, 0);
    for ((path, f), was_reused) in outputs.files {
        if was_reused {
            reused += 1;
        } else {
            rendered += 1;
        }
        files.insert(path, f);
    }
    super::images::revision::into_memory(&templates.images, prev, &mut files);
    let report = MemoryReport {
        files: files.len(),
        rendered,
        reused,
        ms: started.elapsed().as_millis() as u64,
    };
    Ok((
        MemorySite {
            id: fencepost_output::id::RevisionId::new(revision, inputs.fingerprints.whole),
            files,
            held,
        },
        report,
    ))
}
