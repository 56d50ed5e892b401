//! fencepost: a static-site generator whose publishing is exactly-once and whose output is
//! revision-stamped. This package is the top of the house: the loop ([`run`]), the editor's
//! preview ([`preview`]), the one file watcher they share ([`watch`]), and the binary's command
//! line (`src/cli/`). The floors below it are crates (CONTRIBUTING.md, "The map"):
//!
//! 1. `fencepost-site` reads the site's content files and tells what changed since the ledger
//!    last looked, using a stat cache kept in the ledger.
//! 2. `fencepost-publish` finds items whose embargo has passed and records each public change
//!    in the ledger (`fencepost-ledger`) exactly once: a fenced lease per item, slow work
//!    outside any transaction, then one guarded, token-chained batch that writes the page,
//!    moves the item's state, bumps the publication revision and appends to the hash-chained
//!    audit log.
//! 3. `fencepost-build` reads the ledger at one snapshot and renders publication revision R
//!    with build fingerprint B into `public/revisions/<R>-<B>/`, reusing unchanged files, then
//!    `fencepost-output` swaps the `public/current` pointer so readers only see complete
//!    revisions.
//! 4. `fencepost-deploy` ships a finished revision to object storage as a resumable saga and
//!    moves the bucket's pointer by compare-and-set.
//! 5. `fencepost-serve` serves whatever `public/current` (or a bucket's pointer) names, with
//!    revision-keyed cache headers, or an in-memory live preview for editors.
//! 6. [`run`] loops over publish, build and deploy, waking at the instant of the next
//!    scheduled change, and serves in the same process.
//!
//! The ledger's crate depends on none of the later stages; build's never on object storage;
//! serve's only on finished revisions (or its own in-memory preview): Cargo holds each crate to
//! the crates it names.

pub mod preview;
pub mod run;
pub mod watch;
