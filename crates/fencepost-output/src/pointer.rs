//! The pointer: `public/current`, a symlink to `revisions/<R>-<B>` replaced with rename(2),
//! and `public/current.json` describing it. The symlink is the truth; the JSON follows it
//! (and is repaired when a crash or a write error left it behind).
//!
//! Every move happens under an exclusive lock on `public/.pointer.lock`, and re-checks under
//! that lock that its target is complete: `gc` removes revisions under the same lock, so a
//! target chosen earlier can never turn into a dangling pointer. A build never moves the
//! pointer to a lower publication revision (only `rollback` does, on purpose).
//!
//! Each move also records when the revision it replaced stopped being live
//! (`public/retired.json`), so `gc` can keep it for a grace period: stock static servers and
//! in-flight readers may still be reading it just after a swap.

use super::id::RevisionId;
use super::revision::{self, REVISIONS};
use super::{io_err, write_atomic, OutputError};
use fencepost_core::clock::Instant;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::path::Path;

pub const CURRENT: &str = "current";
pub const CURRENT_JSON: &str = "current.json";
pub const RETIRED_JSON: &str = "retired.json";
pub const ROLLBACK_JSON: &str = "rollback.json";
const LOCK: &str = ".pointer.lock";
const TMP_PREFIX: &str = ".current.tmp-";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pointer {
    /// `R` and `B`: `revision` and `build` in JSON and on disk (a contract), in this order.
    #[serde(flatten)]
    pub id: RevisionId,
    pub dir: String,
}

impl Pointer {
    /// The pointer to revision `id`, in `revisions/<R>-<B>`.
    pub fn new(id: RevisionId) -> Pointer {
        Pointer {
            dir: id.to_string(),
            id,
        }
    }
}

/// `public/current.json`: the pointer, plus the instant at which what the site should show
/// next changes without a write (the next embargo end, from the ledger at the last build).
/// It lives beside the revision, not in it, so a build that finds its revision already made
/// can still bring it up to date without touching an immutable directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CurrentJson {
    /// `R` and `B`: `revision` and `build` in JSON and on disk (a contract), in this order.
    #[serde(flatten)]
    pub id: RevisionId,
    pub dir: String,
    #[serde(default)]
    pub next_change_at: Option<Instant>,
}

impl CurrentJson {
    fn of(to: &Pointer, next_change_at: Option<Instant>) -> CurrentJson {
        CurrentJson {
            id: to.id.clone(),
            dir: to.dir.clone(),
            next_change_at,
        }
    }
}

/// `public/current.json`, if readable.
pub fn read_json(public: &Path) -> Option<CurrentJson> {
    std::fs::read(public.join(CURRENT_JSON))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
}

/// What a swap did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Swap {
    Moved {
        from: Option<Pointer>,
    },
    /// Already pointing there.
    Unchanged,
    /// The pointer names a higher revision; left alone.
    KeptHigher(Pointer),
    /// A rollback from revision `.0` holds the pointer until a higher revision is built.
    Held(i64),
}

/// What a pointer move should do: the forward-only rule, once for both pointers (the local
/// `public/current` and a bucket's `current`). Pure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// The pointer already names the target.
    Unchanged,
    /// It names a higher publication revision: leave it.
    KeptHigher,
    /// A rollback holds it below this revision, which the target does not exceed.
    Held(i64),
    /// The target is another build of the live revision that was live there before and was
    /// replaced by the live build: it is older, a backward move (sideways is backwards).
    Replaced,
    /// Move it.
    Move,
}

/// `live`: (revision the pointer names, whether that is the target itself); `held_below`: a
/// rollback's hold; `to`: the target's revision; `replaced`: the target is a build of the live
/// revision that was live before and was replaced (a bucket's pointer remembers; the local
/// pointer passes false). Forward only — a higher revision, or the same revision with a build
/// never live there — and never past a hold.
pub fn decide(
    live: Option<(i64, bool)>,
    held_below: Option<i64>,
    to: i64,
    replaced: bool,
) -> Decision {
    match live {
        Some((_, true)) => Decision::Unchanged,
        Some((r, false)) if r > to => Decision::KeptHigher,
        Some((r, false)) if r == to && replaced => Decision::Replaced,
        _ => match held_below {
            Some(h) if to <= h => Decision::Held(h),
            _ => Decision::Move,
        },
    }
}

/// What a command did to a pointer, as its JSON says (`"pointer"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PointerOutcome {
    /// It now names the target.
    Moved,
    /// It already named the target.
    Unchanged,
    /// It names a higher revision (or, for a bucket, a rollback holds it): left alone.
    KeptHigher,
    /// A rollback of `public/current` holds it below a revision the target does not exceed.
    Held,
    /// Nothing points at the output (a preview).
    None,
}

impl PointerOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            PointerOutcome::Moved => "moved",
            PointerOutcome::Unchanged => "unchanged",
            PointerOutcome::KeptHigher => "kept_higher",
            PointerOutcome::Held => "held",
            PointerOutcome::None => "none",
        }
    }
}

impl std::fmt::Display for PointerOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<&Swap> for PointerOutcome {
    fn from(s: &Swap) -> PointerOutcome {
        match s {
            Swap::Moved { .. } => PointerOutcome::Moved,
            Swap::Unchanged => PointerOutcome::Unchanged,
            Swap::KeptHigher(_) => PointerOutcome::KeptHigher,
            Swap::Held(_) => PointerOutcome::Held,
        }
    }
}

/// `public/rollback.json`: the journal of the last rollback. While `held_below` is set, builds
/// of that revision or lower leave the pointer where the rollback put it. `audited` is the
/// receipt: the pointer moves first, the audit entry follows, and a process that died in
/// between leaves `audited: false` for the next build or rollback to finish.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RollbackJournal {
    pub id: String,
    pub from: Option<String>,
    pub to: String,
    pub held_below: Option<i64>,
    pub at: Instant,
    pub audited: bool,
}

/// The rollback journal, if any.
pub fn rollback_journal(public: &Path) -> Option<RollbackJournal> {
    std::fs::read(public.join(ROLLBACK_JSON))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
}

fn write_journal(public: &Path, j: &RollbackJournal) -> Result<(), OutputError> {
    write_atomic(
        &public.join(ROLLBACK_JSON),
        &serde_json::to_vec_pretty(j).expect("journals serialise"),
    )
}

/// The revision `public/current` names, if any.
pub fn read(public: &Path) -> Result<Option<Pointer>, OutputError> {
    let link = public.join(CURRENT);
    match std::fs::symlink_metadata(&link) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(OutputError::Io {
                path: link,
                source: e,
            })
        }
        Ok(m) if !m.file_type().is_symlink() => {
            return Err(OutputError::NotAPointer { path: link })
        }
        Ok(_) => {}
    }
    let target = std::fs::read_link(&link).map_err(io_err(&link))?;
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match name.parse::<super::id::RevisionId>() {
        Ok(id) => Ok(Some(Pointer::new(id))),
        Err(_) => Err(OutputError::Manifest {
            path: link,
            message: format!(
                "points at {}, which is not a revision directory",
                target.display()
            ),
        }),
    }
}

fn lock(public: &Path) -> Result<File, OutputError> {
    std::fs::create_dir_all(public).map_err(io_err(public))?;
    let path = public.join(LOCK);
    let f = File::options()
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io_err(&path))?;
    f.lock().map_err(io_err(&path))?;
    Ok(f)
}

/// Refuses a target that is not a complete revision right now (called under the lock).
fn check_target(public: &Path, to: &Pointer) -> Result<(), OutputError> {
    let dir = public.join(REVISIONS).join(&to.dir);
    if revision::is_complete(&dir) {
        Ok(())
    } else {
        Err(OutputError::NoSuchRevision {
            wanted: to.dir.clone(),
            dir: public.join(REVISIONS),
        })
    }
}

fn swap_locked(
    public: &Path,
    from: Option<&Pointer>,
    to: &Pointer,
    now: Instant,
    next_change_at: Option<Instant>,
) -> Result<(), OutputError> {
    check_target(public, to)?;
    let link = public.join(CURRENT);
    let tmp = public.join(format!("{TMP_PREFIX}{}", uuid::Uuid::new_v4().simple()));
    let target = Path::new(REVISIONS).join(&to.dir);
    fencepost_core::os::symlink_dir(&target, &tmp).map_err(io_err(&tmp))?;
    fencepost_core::fail_point!("build.before_pointer_rename");
    if let Err(e) = fencepost_core::os::replace_symlink(&tmp, &link) {
        let _ = std::fs::remove_file(&tmp);
        return Err(OutputError::Io {
            path: link,
            source: e,
        });
    }
    File::open(public)
        .and_then(|d| d.sync_all())
        .map_err(io_err(public))?;
    fencepost_core::fail_point!("build.after_pointer_swap");
    if let Some(from) = from {
        if let Err(e) = retire(public, &from.dir, now) {
            tracing::warn!(error = %e, "could not record the retired revision; gc may remove it without a grace period");
        }
    }
    write_json(public, &CurrentJson::of(to, next_change_at));
    Ok(())
}

/// Rewrites `current.json`. The symlink has already moved and is the truth, so a failure
/// here is a warning, not a failed swap: the next pointer operation repairs the JSON.
fn write_json(public: &Path, j: &CurrentJson) {
    let json = serde_json::to_vec_pretty(j).expect("pointers serialise");
    if let Err(e) = write_atomic(&public.join(CURRENT_JSON), &json) {
        tracing::warn!(error = %e, "public/current moved, but current.json could not be rewritten; it is repaired by the next build");
    }
}

/// A revision that stopped being live, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Retired {
    pub dir: String,
    /// Milliseconds since the epoch.
    pub at_ms: i64,
}

/// Revisions that were live once, with the instant they stopped being live (most recent
/// retirement per directory). An unreadable file counts as empty: it only extends grace.
pub fn retired(public: &Path) -> Vec<Retired> {
    std::fs::read(public.join(RETIRED_JSON))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

fn retire(public: &Path, dir: &str, now: Instant) -> Result<(), OutputError> {
    let mut list = retired(public);
    list.retain(|r| r.dir != dir && public.join(REVISIONS).join(&r.dir).exists());
    list.push(Retired {
        dir: dir.to_string(),
        at_ms: now.0,
    });
    write_atomic(
        &public.join(RETIRED_JSON),
        &serde_json::to_vec(&list).expect("retired list serialises"),
    )
}

/// Points `current` at `to` unless it already names a higher revision, or a rollback holds
/// it below a revision `to` does not exceed. `next_change_at` goes to `current.json` (also when
/// the pointer already named `to`: the ledger may have learned of a new embargo since).
pub fn advance(
    public: &Path,
    to: &Pointer,
    now: Instant,
    next_change_at: Option<Instant>,
) -> Result<Swap, OutputError> {
    let _guard = lock(public)?;
    let from = read(public)?;
    let journal = rollback_journal(public);
    let live = from.as_ref().map(|p| (p.id.revision, p == to));
    match decide(
        live,
        journal.as_ref().and_then(|j| j.held_below),
        to.id.revision,
        false,
    ) {
        Decision::Unchanged => {
            // A crash (or a write error) between the symlink swap and the JSON write leaves
            // the JSON behind; a new embargo changes next_change_at.
            let want = CurrentJson::of(to, next_change_at);
            if read_json(public).as_ref() != Some(&want) {
                write_json(public, &want);
            }
            return Ok(Swap::Unchanged);
        }
        // Whether or not `to` still exists (gc may already have collected it): it would not
        // have become live. (The local pointer keeps no history of builds: never Replaced.)
        Decision::KeptHigher | Decision::Replaced => {
            return Ok(Swap::KeptHigher(from.expect("a higher revision is live")))
        }
        Decision::Held(h) => return Ok(Swap::Held(h)),
        Decision::Move => {}
    }
    swap_locked(public, from.as_ref(), to, now, next_change_at)?;
    // Past the hold: the rollback is over. Its journal goes once its receipt is written.
    if let Some(mut j) = journal {
        if j.audited {
            let _ = std::fs::remove_file(public.join(ROLLBACK_JSON));
        } else if j.held_below.is_some() {
            j.held_below = None;
            write_journal(public, &j)?;
        }
    }
    Ok(Swap::Moved { from })
}

/// Points `current` at `to` whatever it named before (rollback), journaling the move first
/// (`rollback.json`, not yet audited): a rollback to a lower revision holds the pointer there
/// until a build of a higher revision than the one rolled back from. Returns the old pointer.
pub fn rollback(
    public: &Path,
    to: &Pointer,
    id: &str,
    now: Instant,
) -> Result<Option<Pointer>, OutputError> {
    let _guard = lock(public)?;
    let from = read(public)?;
    check_target(public, to)?;
    let earlier = rollback_journal(public).and_then(|j| j.held_below);
    let held_below = from
        .as_ref()
        .map(|f| f.id.revision)
        .into_iter()
        .chain(earlier)
        .filter(|r| *r > to.id.revision)
        .max();
    write_journal(
        public,
        &RollbackJournal {
            id: id.to_string(),
            from: from.as_ref().map(|p| p.dir.clone()),
            to: to.dir.clone(),
            held_below,
            at: now,
            audited: false,
        },
    )?;
    if from.as_ref() != Some(to) {
        let next = read_json(public).and_then(|j| j.next_change_at);
        swap_locked(public, from.as_ref(), to, now, next)?;
    }
    Ok(from)
}

/// Records that rollback `id`'s audit entry is written; a journal with no hold left is
/// removed.
pub fn rollback_audited(public: &Path, id: &str) -> Result<(), OutputError> {
    let _guard = lock(public)?;
    match rollback_journal(public) {
        Some(mut j) if j.id == id => {
            if j.held_below.is_none() {
                std::fs::remove_file(public.join(ROLLBACK_JSON))
                    .map_err(io_err(public.join(ROLLBACK_JSON)))
            } else {
                j.audited = true;
                write_journal(public, &j)
            }
        }
        _ => Ok(()),
    }
}

/// Runs `f` while holding the pointer lock (gc uses it so it never races a swap).
pub fn with_lock<T>(
    public: &Path,
    f: impl FnOnce() -> Result<T, OutputError>,
) -> Result<T, OutputError> {
    let _guard = lock(public)?;
    f()
}

/// Removes what a process killed mid-swap left in `public/`: temporary symlinks of swaps that
/// never got renamed. Only call it holding the pointer lock (no swap is running then).
pub fn remove_dead_swaps(public: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(public) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(TMP_PREFIX))
        .filter(|e| std::fs::remove_file(e.path()).is_ok())
        .count()
}

/// Like [`with_lock`], but gives up at once (returning `None`) when someone holds the lock.
pub fn try_with_lock<T>(public: &Path, f: impl FnOnce() -> T) -> Option<T> {
    let path = public.join(LOCK);
    let file = File::options()
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .ok()?;
    file.try_lock().ok()?;
    Some(f())
}

#[cfg(test)]
mod tests;
