//! A site on disk: its root, its config and the paths derived from them.
//!
//! The crate also holds the rooms that stand on a site: its [`content`], [`markdown`], [`images`],
//! [`results`] and the starters [`init`] writes.

pub mod content;
pub mod images;
pub mod init;
pub mod markdown;
pub mod results;

use fencepost_config::collections::Collections;
use fencepost_config::{Config, ConfigError, CONFIG_FILE};
use fencepost_ledger::{Ledger, LedgerError, Location};

/// Chooses the ledger over `ledger.url` and `ledger.path`: a `postgres://` URL, or a SQLite
/// path relative to the site root.
pub const LEDGER_ENV: &str = "FENCEPOST_LEDGER";
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct Site {
    pub root: PathBuf,
    pub config: Config,
    /// The content model, resolved from `config` (see [`Collections`]).
    pub collections: Collections,
    /// sha256 of the `fencepost.toml` text `config` was parsed from.
    pub config_hash: String,
}

impl Site {
    pub fn open(root: &Path) -> Result<Site, ConfigError> {
        let (config, config_hash) = Config::load(root)?;
        let collections = Collections::resolve(&config, &root.join(CONFIG_FILE))?;
        Ok(Site {
            root: root.to_path_buf(),
            collections,
            config,
            config_hash,
        })
    }

    /// No site at `root`, only the defaults (`serve --from URL` run outside a site folder:
    /// serving a bucket needs no site of its own).
    pub fn unconfigured(root: &Path) -> Result<Site, ConfigError> {
        let config = Config::default();
        let collections = Collections::resolve(&config, &root.join(CONFIG_FILE))?;
        Ok(Site {
            root: root.to_path_buf(),
            collections,
            config,
            config_hash: String::new(),
        })
    }

    /// Opens (creating and migrating if needed) the site's ledger with its busy timeout.
    /// `public/`: the revisions a build writes and the pointer an origin follows (build
    /// writes it; deploy reads from it; serve serves it).
    pub fn public_dir(&self) -> std::path::PathBuf {
        self.root.join("public")
    }

    /// Opens the site's ledger, refused (before anything is written) when it belongs to
    /// another site (see [`Site::check_site`]).
    pub fn open_ledger(&self) -> Result<Ledger, LedgerError> {
        self.open_checked(false)
    }

    /// Opens the ledger and checks (with `claim`, records) the site it belongs to.
    fn open_checked(&self, claim: bool) -> Result<Ledger, LedgerError> {
        let mut ledger = Ledger::open_at(
            &self.ledger_location()?,
            std::time::Duration::from_millis(self.config.ledger.busy_timeout_ms),
        )?;
        self.check_site(&mut ledger, claim)?;
        Ok(ledger)
    }

    /// One ledger, one site: a ledger records the site it belongs to (`ledger.site_id`, which
    /// `init` writes into fencepost.toml), and every other site's command is refused before
    /// it writes anything — two sites pointed at one ledger (a copied workflow, an
    /// organisation-wide `FENCEPOST_LEDGER`) would otherwise publish into each other's
    /// ledger, build each other's pages and withdraw what the other has. With `claim`, a
    /// ledger that names no site yet records this one's (once: a racing claim by another site
    /// loses, and is refused). A clone of the same repository carries the same id and is
    /// the same site. A site whose fencepost.toml names no id (made before ids) works as
    /// before, with nothing to check, until it adds one.
    fn check_site(&self, ledger: &mut Ledger, claim: bool) -> Result<(), LedgerError> {
        use fencepost_ledger::status;
        let mine = self.config.ledger.site_id.as_deref();
        let mut theirs = ledger.read(status::site_id)?;
        if let (Some(m), None, true) = (mine, &theirs, claim) {
            theirs = ledger.write(|tx| status::claim_site(tx, m))?;
        }
        let config = self.root.join(CONFIG_FILE);
        match (mine, theirs) {
            (Some(m), Some(t)) if m != t => Err(LedgerError::OtherSite(format!(
                "the ledger {} belongs to site {t:?}, and this site is {m:?} (ledger.site_id in {}): two sites sharing one ledger would publish their items into each other's, build each other's pages and withdraw what the other has. Give this site a ledger of its own (ledger.url or FENCEPOST_LEDGER naming another prefix or database). Nothing was written",
                ledger.name(),
                config.display()
            ))),
            (None, Some(t)) => Err(LedgerError::OtherSite(format!(
                "the ledger {} belongs to site {t:?}, and {} names no ledger.site_id. If this is that site (a checkout from before the id was added), add site_id = {t:?} under [ledger] in fencepost.toml and commit it; if it is not, give this site a ledger of its own (ledger.url or FENCEPOST_LEDGER). Nothing was written",
                ledger.name(),
                config.display()
            ))),
            (None, None) if claim && ledger.shared() => {
                tracing::warn!(
                    "{} names no ledger.site_id, so the shared ledger {} cannot tell this site from another pointed at it by mistake: add site_id = {:?} under [ledger] (any id of 1 to 64 letters, digits, '.', '_' or '-', the same in every checkout) and commit it",
                    config.display(),
                    ledger.name(),
                    new_site_id()
                );
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Opens the ledger for a run that may create it (publish): refused when it is a SQLite
    /// file that is missing while `public/` already holds output — that output was built from
    /// a ledger, and a new empty one would republish everything under new revisions.
    pub fn open_or_create_ledger(&self) -> Result<Ledger, LedgerError> {
        if let Location::Sqlite(path) = self.ledger_location()? {
            let output = self.root.join("public").join("current");
            if !path.exists() && std::fs::symlink_metadata(&output).is_ok() {
                return Err(LedgerError::Location(format!(
                    "{} does not exist, but {} holds output built from a ledger: restore the ledger (or point ledger.path / FENCEPOST_LEDGER at it). To start over on purpose, move public/ aside first. Nothing was created",
                    path.display(),
                    output.display()
                )));
            }
        }
        self.open_checked(true)
    }

    /// Opens the ledger for a command that only reads what a ledger already decided
    /// (deploy): a SQLite file that is missing is refused, never created. A new empty
    /// ledger would own nothing it ships, and its id in a bucket's pointer names a ledger
    /// no revision there was built by.
    pub fn open_existing_ledger(&self) -> Result<Ledger, LedgerError> {
        let location = self.ledger_location()?;
        if !fencepost_ledger::exists(&location)? {
            return Err(LedgerError::Location(format!(
                "{} does not exist: deploy ships what a ledger published and built, and creates no ledger. Restore the ledger (or point ledger.path / ledger.url / FENCEPOST_LEDGER at it); nothing was created or written",
                location.display()
            )));
        }
        self.open_ledger()
    }

    /// The clock this site's instants are decided by, measured now (see
    /// [`fencepost_ledger::clock::decision`]): this host's on SQLite, the database's on
    /// PostgreSQL, the store's on a bucket (refused past `ledger.clock_tolerance_ms`).
    pub fn decision_clock(&self) -> Result<fencepost_core::clock::Clock, LedgerError> {
        fencepost_ledger::clock::decision(
            &self.ledger_location()?,
            std::time::Duration::from_millis(self.config.ledger.busy_timeout_ms),
            self.config.ledger.clock_tolerance_ms,
        )
    }

    /// Where the ledger is: `FENCEPOST_LEDGER`, then `ledger.url`, then `ledger.path`.
    pub fn ledger_location(&self) -> Result<Location, LedgerError> {
        Ok(match std::env::var(LEDGER_ENV) {
            Ok(v) if !v.trim().is_empty() => Location::parse(v.trim(), &self.root)?,
            _ => match &self.config.ledger.url {
                Some(url) => Location::parse(url.trim(), &self.root)?,
                None => Location::Sqlite(self.root.join(&self.config.ledger.path)),
            },
        })
    }

    /// Whether a ledger exists yet (a SQLite file on disk; a database is assumed to, and a
    /// location that does not parse is left for opening to report).
    pub fn ledger_exists(&self) -> bool {
        match self.ledger_location() {
            Ok(Location::Sqlite(p)) => p.exists(),
            Ok(Location::Postgres(_) | Location::Bucket { .. }) | Err(_) => true,
        }
    }

    /// This host's own state beside the site (the SQLite ledger's folder by default): where
    /// per-host caches live.
    pub fn state_dir(&self) -> PathBuf {
        let p = self.root.join(&self.config.ledger.path);
        p.parent()
            .map_or_else(|| self.root.clone(), |d| d.to_path_buf())
    }

    pub fn content_dir(&self) -> PathBuf {
        self.root.join("content")
    }

    pub fn image_store(&self) -> PathBuf {
        self.root.join(&self.config.images.store)
    }
}

/// A new site id: 16 random bytes in hex (what `init` writes as `ledger.site_id`).
pub fn new_site_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}
