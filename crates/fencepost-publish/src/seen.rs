//! What the ledger is told of one file read: the one mapping from a read file to a ledger
//! row, for the sync and for drafts (which tell it otherwise, see `drafts.rs`).

use fencepost_ledger::items::Seen;
use fencepost_site::content::ReadFile;

pub(super) fn seen_of(f: &ReadFile) -> Seen<'_> {
    Seen {
        name: &f.item.name,
        path: &f.path,
        stat: f.stat,
        source_hash: &f.source_hash,
        wants_withdrawn: f.item.withdrawn,
        day: f.item.day.map(|d| d.to_string()),
        due: f.item.due,
        explicit_publish_at: f.item.publish_at,
        image_source: f.item.image.as_ref().map(|i| i.key()),
        expire_at: f.item.expire_at,
    }
}
