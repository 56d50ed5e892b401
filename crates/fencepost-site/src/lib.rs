//! A site on disk: its root, its config and the paths derived from them.
//!
//! The crate also holds the rooms that stand on a site: its [`content`], [`markdown`], [`images`],
//! [`results`] and the starters [`init`] writes.

pub mod content;
pub mod guard;
pub mod image_size;
pub mod images;
pub mod init;
pub mod markdown;
pub mod results;
pub mod shortcodes;

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
    /// ledger, build each other's pages and withdraw what the other has. A clone of the same
    /// repository carries the same id and is the same site. A site whose fencepost.toml names
    /// no id (made before ids) works as before, with nothing to check, until it adds one.
    ///
    /// The adversary is a new site pointed at an older site's ledger (a template repository,
    /// a reused prefix): with `claim`, only a ledger that has recorded no item takes a first
    /// id by itself; one with history takes it only from a checkout holding the file of every
    /// item it has not withdrawn (else the claim is refused, and `fencepost ledger claim` is
    /// the owner's explicit way). A refusal proposes adopting the ledger's id only when that id
    /// was claimed before anything was published (see [`claim_refusal`]).
    fn check_site(&self, ledger: &mut Ledger, claim: bool) -> Result<(), LedgerError> {
        use fencepost_ledger::status;
        let mine = self.config.ledger.site_id.as_deref();
        let mut c = ledger.read(status::site_claim)?;
        if let (Some(m), None) = (mine, &c.site) {
            // Not even a read: building or deploying another site's pages is the harm too.
            self.may_claim(ledger, &c)?;
            if claim {
                ledger.write(|tx| status::claim_site(tx, m))?;
                c = ledger.read(status::site_claim)?;
            }
        }
        let config = self.root.join(CONFIG_FILE);
        match (mine, &c.site) {
            (Some(m), Some(t)) if m != t => Err(LedgerError::OtherSite(format!(
                "the ledger {} belongs to site {t:?}{}, and this site is {m:?} (ledger.site_id in {}): two sites sharing one ledger would publish their items into each other's, build each other's pages and withdraw what the other has. Give this site a ledger of its own (ledger.url or FENCEPOST_LEDGER naming another prefix or database). If this ledger is this site's and {t:?} took it by mistake, take it back from this checkout: `fencepost ledger claim --replace {t}`. Nothing was written",
                ledger.name(),
                claimed_when(&c),
                config.display()
            ))),
            (None, Some(t)) => Err(claim_refusal(ledger.name(), &config, t, &c)),
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

    /// Whether this checkout may give the ledger (which names no site) its first id: yes when
    /// the ledger has recorded no item; else only when this checkout holds the file of every
    /// item the ledger has not withdrawn — a site that is not that one would withdraw them.
    fn may_claim(
        &self,
        ledger: &mut Ledger,
        c: &fencepost_ledger::status::SiteClaim,
    ) -> Result<(), LedgerError> {
        if c.items == 0 {
            return Ok(());
        }
        let sources = ledger.read(fencepost_ledger::status::live_sources)?;
        let missing: Vec<&String> = (sources.iter())
            .filter(|p| !self.root.join(p).is_file())
            .collect();
        let Some(first) = missing.first() else {
            return Ok(());
        };
        Err(LedgerError::OtherSite(format!(
            "the ledger {} names no site, and it has history (publication revision {}, {} items): this checkout lacks the files of {} of its {} items not withdrawn (first: {first}), so it is not that site's checkout, and taking the ledger would withdraw that site's pages. Give this site a ledger of its own (ledger.url or FENCEPOST_LEDGER naming another prefix or database). If this is that site's checkout and the files went on purpose, claim the ledger explicitly from it: `fencepost ledger claim`. Nothing was written",
            ledger.name(),
            c.revision,
            c.items,
            missing.len(),
            sources.len(),
        )))
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

/// ", claimed at publication revision R" — when the ledger recorded it.
fn claimed_when(c: &fencepost_ledger::status::SiteClaim) -> String {
    match c.claimed_at {
        Some(0) => ", claimed before anything was published".into(),
        Some(r) => format!(", claimed at publication revision {r}"),
        None => String::new(),
    }
}

/// The refusal of a checkout that names no id, by a ledger that names `theirs`. Adopting an id
/// makes this checkout that site: proposed only when the id was claimed before anything was
/// published (by the site that began the ledger). An id claimed after the ledger's history
/// began may be an intruder's (a new site pointed at this ledger by mistake), and adopting it
/// would make this checkout a copy of the intruder; one whose claim is not dated (an earlier
/// release's) is proposed only against the repository's own history.
fn claim_refusal(
    ledger: &str,
    config: &Path,
    theirs: &str,
    c: &fencepost_ledger::status::SiteClaim,
) -> LedgerError {
    let config = config.display();
    let way = match c.claimed_at {
        Some(0) => format!(
            "If this is that site (a checkout from before the id was added), add site_id = {theirs:?} under [ledger] in {config} and commit it; if it is not, give this site a ledger of its own (ledger.url or FENCEPOST_LEDGER)"
        ),
        Some(r) => format!(
            "It was claimed by another site at publication revision {r}, after this ledger's history began: do not adopt that id. If this checkout is the ledger's own site, give it an id of its own (site_id = {:?} under [ledger] in {config}, committed) and take the ledger back: `fencepost ledger claim --replace {theirs}`; if not, give this site a ledger of its own (ledger.url or FENCEPOST_LEDGER)",
            new_site_id()
        ),
        None => format!(
            "The ledger does not record when that id was claimed: adopt it only if your repository's history has it (`git log -S {theirs} -- fencepost.toml`). Otherwise, if this checkout is the ledger's own site, give it an id of its own (site_id = {:?} under [ledger] in {config}) and take the ledger back with `fencepost ledger claim --replace {theirs}`; if not, give this site a ledger of its own",
            new_site_id()
        ),
    };
    LedgerError::OtherSite(format!(
        "the ledger {ledger} belongs to site {theirs:?}, and {config} names no ledger.site_id. {way}. Nothing was written"
    ))
}
