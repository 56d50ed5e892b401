//! A site on disk: its root, its config and the paths derived from them.

use crate::config::{Config, ConfigError};
use crate::ledger::{Ledger, LedgerError};
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
        Ledger::open(
            &self.ledger_path(),
            std::time::Duration::from_millis(self.config.ledger.busy_timeout_ms),
        )
    }

    pub fn ledger_path(&self) -> PathBuf {
        self.root.join(&self.config.ledger.path)
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
