//! Drafts (issue 36.2): `draft = true` in any collection's front matter keeps an item out of
//! everything public — never published, never counted, in no list, feed, sitemap or bucket —
//! while `serve --watch` previews it. Removing the key publishes it at its due instant as
//! usual. `publish` and `status` list drafts under `drafts`.
//!
//! A draft the ledger never made public leaves no row there (a pending one is forgotten,
//! like a removed file's). A public item that becomes a draft is taken down (withdrawn, as
//! `withdrawn = true` would), and comes back when the key goes. A draft's row, if it has one,
//! records a stat that matches no file, so every scan reads the draft again and the reports
//! name it every time.

use fencepost_core::item::{FileStat, ItemName, Shown};
use fencepost_ledger::items::{self, Seen, State};
use fencepost_ledger::{LedgerError, Tx};
use fencepost_site::content::ReadFile;
use fencepost_site::Site;

/// An item kept out of everything public by `draft = true`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Draft {
    pub id: Shown,
    pub file: String,
}

/// A stat no file has: a draft's row never counts as unchanged.
const NEVER_MATCHES: FileStat = FileStat {
    size: -1,
    changed_ns: -1,
    ino: -1,
};

/// The drafts of a scan, as the reports name them.
pub(super) fn listed(site: &Site, read: &[ReadFile]) -> Vec<Draft> {
    read.iter()
        .filter(|f| f.item.draft)
        .map(|f| Draft {
            id: Shown(f.item.name.shown(site.collections.naming)),
            file: f.path.clone(),
        })
        .collect()
}

/// What the ledger is told of the drafts `read` holds, in the sync's transaction: a draft
/// that was ever public is seen as wanting withdrawal; any other is gone (a row of it, still
/// pending, is forgotten).
pub(super) fn settle<'a>(
    tx: &Tx<'_>,
    read: &'a [ReadFile],
) -> Result<(Vec<Seen<'a>>, Vec<&'a ItemName>), LedgerError> {
    let (mut seen, mut gone) = (Vec::new(), Vec::new());
    for f in read.iter().filter(|f| f.item.draft) {
        let was_public = items::due_of(tx, &f.item.name)?
            .is_some_and(|(_, state)| matches!(state, State::Published | State::Withdrawn));
        if !was_public {
            gone.push(&f.item.name);
            continue;
        }
        seen.push(Seen {
            stat: NEVER_MATCHES,
            wants_withdrawn: true,
            ..super::seen::seen_of(f)
        });
    }
    Ok((seen, gone))
}
