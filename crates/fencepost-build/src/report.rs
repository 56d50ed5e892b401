//! What a build says: its error type, its options, its report (and the pages it left out,
//! the links it found broken), the progress callback, the phase log. A leaf: every step of
//! the build imports it, and it imports none of them.

use fencepost_core::clock::Instant;
use fencepost_ledger::LedgerError;
use fencepost_output::id::RevisionId;
use fencepost_output::pointer;
use fencepost_output::OutputError;
use fencepost_site::content::ContentError;
use serde::Serialize;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("template {path}: {message}")]
    Template { path: PathBuf, message: String },
    /// The search index could not be written (`[search] enabled`).
    #[error(
        "search index: {why}; turn it off with `[search] enabled = false` to build without one"
    )]
    Search { why: String },
    #[error("missing template {dir}/{name}: this site needs {required}", dir = dir.display())]
    MissingTemplate {
        name: String,
        dir: PathBuf,
        required: String,
    },
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
    MissingBody { item: String, output: String },
    #[error("{path}: {why}")]
    Input { path: PathBuf, why: String },
    /// Public pages of the ledger this revision would lack: the pointer does not move.
    #[error("the ledger holds {count} public page(s) this revision would not have ({first}{more}): {why}. The build refuses to move the pointer, so the live revision stays as it is (nothing was swapped)")]
    PublicLeftOut {
        count: usize,
        first: String,
        more: String,
        why: String,
    },
    /// The site's transparency log cannot be written (its key missing or unreadable).
    #[error("transparency log: {why}")]
    Transparency { why: String },
    /// A publish moved the ledger past the revision this build read while it ran: the build
    /// starts again from a new snapshot (the driver does so by itself).
    #[error("the ledger moved past revision {revision} while this build wrote its transparency log; nothing was swapped: build again")]
    LogMoved { revision: i64 },
    #[error(transparent)]
    Content(#[from] ContentError),
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    #[error(transparent)]
    Output(#[from] OutputError),
}

pub(super) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> BuildError {
    let path = path.into();
    move |source| BuildError::Io { path, source }
}

#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Render the content tree as it is now, embargoed items included, into
    /// `.fencepost/preview/` (outside `public/`).
    pub preview: bool,
    /// Broken internal links are fatal.
    pub strict: bool,
    /// Render everything; reuse nothing from the previous revision.
    pub full: bool,
    /// With `preview`: the site as it will be at an instant (`preview deploy`), rendered as
    /// the public will see it (no banner) into `.fencepost/preview-deploy/`.
    pub as_of: Option<AsOf>,
}

/// What a deployed preview shows (`fencepost preview deploy`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AsOf {
    /// The instant; `None`: every scheduled item and update.
    pub at: Option<fencepost_core::clock::Instant>,
    /// Drafts shown too.
    pub drafts: bool,
}

/// A page the build left out rather than fail the whole revision for one source: an item
/// whose URL another file of the site has, a path that cannot be written, a plain page that
/// does not read. Everything else is built and put in place; the command exits non-zero.
#[derive(Debug, Clone, Serialize)]
pub struct LeftOut {
    /// The item (`collection/id`) or the file (`content/about.md`) left out.
    pub what: String,
    /// The output path it would have had, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    pub why: String,
}

/// A page whose template failed for it alone — a value it could not print, a filter given
/// the wrong type, a template that does not parse (and the pages of every template that
/// extends or imports it): held, never the revision. Its previous version stays live where
/// the previous revision had one at its path and every internal link of it still resolves
/// (so no page this revision took down is named again); otherwise it is left out. Every
/// other page is built and put in place; the command exits with the held status.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct HeldPage {
    /// The output path (`posts/2026/12/hello/index.html`).
    pub path: String,
    /// What it is: `item posts/hello`, `the home page`, ….
    pub what: String,
    /// The template it is rendered with (`templates/post.html`), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// Tera's error, whole (template, line, what failed).
    pub why: String,
    /// Its previous version is live in this revision (false: the page is absent).
    pub previous_kept: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct BrokenLink {
    pub page: String,
    pub link: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// `R` and `B`: `revision` and `build` in JSON and on disk (a contract), in this order.
    #[serde(flatten)]
    pub id: RevisionId,
    pub path: String,
    pub rendered: usize,
    pub reused: usize,
    pub next_change_at: Option<Instant>,
    /// `moved`, `unchanged`, `kept_higher` (the pointer names a higher revision) or
    /// `none` (preview).
    pub pointer: pointer::PointerOutcome,
    /// The revision directory already existed complete; nothing was rendered.
    pub already_built: bool,
    pub preview: bool,
    pub files: usize,
    pub broken_links: Vec<BrokenLink>,
    /// Pages left out of this revision, each named with why (see [`LeftOut`]).
    pub left_out: Vec<LeftOut>,
    /// Pages whose template failed for them alone, each named with why and whether its
    /// previous version stays live (see [`HeldPage`]).
    pub held_pages: Vec<HeldPage>,
    /// Temporary directories of dead builds removed before this one.
    pub abandoned_removed: usize,
    /// Files of the previous revision hard-linked while the snapshot was read and the plan
    /// made (see `prelink.rs`), before the plan removed the ones it did not keep.
    pub early_links: usize,
    /// Those links were made before this build began, between a long-lived process's
    /// builds (`run`, see `Warm::link_ahead`), not while it ran.
    pub linked_ahead: bool,
    /// The staging folder was the spare `gc` set aside (a revision it took out whole), made
    /// into the previous revision's tree by changing only the files that differ (see
    /// `prelink/spare.rs`) instead of linked into an empty folder.
    pub from_spare: bool,
    /// Public page rows read from the ledger: every page, or only those changed since the
    /// revision a long-lived process (`run`) kept from its last build (see `warm.rs`).
    pub pages_read: usize,
    /// Processed images encoded by this build (`resize_image`, Markdown `srcset`s), and
    /// those found already made in the cache (`<image store>/processed/`).
    pub images_encoded: u64,
    pub images_cached: u64,
}

pub(super) fn content_key(s: &str) -> String {
    fencepost_core::digest::sha256_hex(s.as_bytes())
}

/// Logs how long each phase took (at `-v`).
pub(super) struct Phases(std::time::Instant);

impl Phases {
    pub(super) fn start() -> Phases {
        Phases(std::time::Instant::now())
    }

    pub(super) fn mark(&mut self, phase: &str) {
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
