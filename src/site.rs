//! A site on disk: its root, its config and the paths derived from them.

use crate::config::{Config, ConfigError};
use crate::ledger::{Ledger, LedgerError, Location};

/// Chooses the ledger over `ledger.url` and `ledger.path`: a `postgres://` URL, or a SQLite
/// path relative to the site root.
pub const LEDGER_ENV: &str = "FENCEPOST_LEDGER";
use std::path::{Path, PathBuf};

/// Folder of the answer items, relative to the site root.
pub const ANSWERS_DIR: &str = "content/answers";

#[derive(Debug, Clone)]
pub struct Site {
    pub root: PathBuf,
    pub config: Config,
    /// sha256 of the `fencepost.toml` text `config` was parsed from.
    pub config_hash: String,
}

impl Site {
    pub fn open(root: &Path) -> Result<Site, ConfigError> {
        let (config, config_hash) = Config::load(root)?;
        Ok(Site {
            root: root.to_path_buf(),
            config,
            config_hash,
        })
    }

    /// Opens (creating and migrating if needed) the site's ledger with its busy timeout.
    pub fn open_ledger(&self) -> Result<Ledger, LedgerError> {
        Ledger::open_at(
            &self.ledger_location(),
            std::time::Duration::from_millis(self.config.ledger.busy_timeout_ms),
        )
    }

    /// Where the ledger is: `FENCEPOST_LEDGER`, then `ledger.url`, then `ledger.path`.
    pub fn ledger_location(&self) -> Location {
        match std::env::var(LEDGER_ENV) {
            Ok(v) if !v.trim().is_empty() => Location::parse(v.trim(), &self.root),
            _ => match &self.config.ledger.url {
                Some(url) => Location::Postgres(url.clone()),
                None => Location::Sqlite(self.root.join(&self.config.ledger.path)),
            },
        }
    }

    /// Whether a ledger exists yet (a SQLite file on disk; a database is assumed to).
    pub fn ledger_exists(&self) -> bool {
        match self.ledger_location() {
            Location::Sqlite(p) => p.exists(),
            Location::Postgres(_) => true,
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

    pub fn answers_dir(&self) -> PathBuf {
        self.root.join(ANSWERS_DIR)
    }

    pub fn image_store(&self) -> PathBuf {
        self.root.join(&self.config.images.store)
    }
}
