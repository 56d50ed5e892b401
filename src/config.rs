//! The site's configuration file, `fencepost.toml`. Every key has a default, so an empty file
//! is a valid config; an unknown key is an error naming the key, because a misspelt setting
//! that is silently ignored is worse than a refusal.

pub mod collections;
mod markdown;
pub mod names;
pub mod taxonomies;

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use markdown::MarkdownConfig;

pub const CONFIG_FILE: &str = "fencepost.toml";

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}\n  (is --site pointing at a fencepost site? `fencepost init DIR` makes one)")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{path}: {key} = {value}: {why}")]
    Invalid {
        path: PathBuf,
        key: &'static str,
        value: String,
        why: &'static str,
    },
    #[error("{path}: {key}: {why}")]
    Collection {
        path: PathBuf,
        key: String,
        why: String,
    },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Site title, used by templates.
    pub title: String,
    /// Absolute URL the site is served from, used for feeds and sitemaps.
    pub base_url: String,
    pub publish: PublishConfig,
    pub ledger: LedgerConfig,
    pub images: ImagesConfig,
    pub results: ResultsConfig,
    pub build: BuildConfig,
    pub serve: ServeConfig,
    pub deploy: DeployConfig,
    pub run: RunConfig,
    /// The content model (see [`collections`]); none: the default collection.
    pub collections: BTreeMap<String, collections::CollectionConfig>,
    /// Feed-level author of every feed; default: the site title.
    pub author: Option<String>,
    /// Feed formats: `atom` (always) and `rss` (an `rss.xml` beside each `atom.xml`).
    pub feeds: Vec<String>,
    pub markdown: MarkdownConfig,
    /// Taxonomies (see [`taxonomies`]): `[taxonomies.<name>]`.
    pub taxonomies: BTreeMap<String, taxonomies::TaxonomyConfig>,
}

impl Config {
    /// The feed-level author: `author`, or the site title.
    pub fn feed_author(&self) -> &str {
        self.author.as_deref().unwrap_or(&self.title)
    }

    /// Whether RSS 2.0 feeds are written beside the Atom ones.
    pub fn rss(&self) -> bool {
        self.feeds.iter().any(|f| f == "rss")
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DeployConfig {
    /// The default target of `deploy`, `rollback --to` and `gc --to`
    /// (`s3://bucket/prefix`, `gs://…`, `az://…`, `file:///abs/path`).
    pub to: Option<String>,
    /// Lease length of one deploy operation (kept alive through long uploads).
    pub lease_secs: u64,
    /// Attempts before an operation is parked `failed`.
    pub max_attempts: u32,
    /// How long a deploy waits for another one that holds the target while deploying an
    /// older revision (then it deploys; if the wait runs out it exits non-zero, `not_live`).
    /// Also how long `gc --to` and `rollback --to` wait for the target's lease, and
    /// `publish --build` for items another publisher holds. Default: `lease_secs`.
    pub wait_secs: Option<u64>,
}

impl DeployConfig {
    /// `wait_secs`, defaulting to the deploy lease.
    pub fn wait_secs(&self) -> u64 {
        self.wait_secs.unwrap_or(self.lease_secs)
    }
}

impl Default for DeployConfig {
    fn default() -> Self {
        DeployConfig {
            to: None,
            lease_secs: 300,
            max_attempts: 5,
            wait_secs: None,
        }
    }
}

/// `fencepost run`: the long-running publisher.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// The backstop: a cycle runs at least this often (seconds; fractions allowed) even when
    /// no instant, file change or other host asks for one.
    pub poll_secs: f64,
    /// File changes are collected until none has come for this many milliseconds.
    pub debounce_ms: u64,
    /// After a failed cycle the next waits 1 s, then twice as long each time, up to this.
    pub max_backoff_secs: u64,
    /// After a cycle that built, keep this many of the newest local revisions (as `gc
    /// --keep`); 0: never remove any.
    pub keep_revisions: usize,
    /// ... and any revision live less than this many seconds ago (as `gc --grace-secs`).
    pub gc_grace_secs: u64,
    /// Old revisions are removed when the next scheduled change is at least this many
    /// seconds away (or when `keep_revisions` more have piled up).
    pub gc_idle_secs: u64,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            poll_secs: 60.0,
            debounce_ms: 200,
            max_backoff_secs: 60,
            keep_revisions: 10,
            gc_grace_secs: 300,
            gc_idle_secs: 30,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServeConfig {
    /// A client must send a complete request head within this many seconds of the server
    /// starting to wait for it (also bounds an idle keep-alive connection).
    pub header_timeout_secs: u64,
    /// Connections served at once; more wait in the listen queue.
    pub max_connections: usize,
    /// On SIGINT/SIGTERM, open responses get this many seconds to finish; then the server
    /// exits anyway.
    pub shutdown_deadline_secs: u64,
    /// `serve --from`: the bucket's pointer is read at most once per this many
    /// milliseconds (and never cached past its next_change_at).
    pub pointer_ttl_ms: u64,
    /// `serve --from`: for 30 s after the pointer's next_change_at passes (its deploy is due
    /// any moment), the pointer is read at most once per this many milliseconds instead.
    pub pointer_hot_ms: u64,
    /// `serve --from`: bytes of blobs kept in memory.
    pub blob_cache_bytes: u64,
    /// `serve --from`: every call to the bucket gives up after this many milliseconds (the
    /// request answers 503).
    pub bucket_timeout_ms: u64,
    /// A response whose writes make no progress for this many seconds (a client that stopped
    /// reading) is cut off, and its connection slot given back.
    pub write_timeout_secs: u64,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            header_timeout_secs: 10,
            max_connections: 1024,
            shutdown_deadline_secs: 10,
            pointer_ttl_ms: 1000,
            pointer_hot_ms: 100,
            blob_cache_bytes: 256 * 1024 * 1024,
            bucket_timeout_ms: 5000,
            write_timeout_secs: 30,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BuildConfig {
    /// Entries per numbered answers list page (`/answers/page/N/`, numbered from the oldest).
    pub page_size: usize,
    /// Entries in the Atom feed (the latest ones).
    pub feed_entries: usize,
    /// Entries on the home page.
    pub home_entries: usize,
}

impl Default for BuildConfig {
    fn default() -> Self {
        BuildConfig {
            page_size: 100,
            feed_entries: 20,
            home_entries: 10,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PublishConfig {
    /// Minutes after the end of an item's `day` (00:00 UTC the next day) before it is due.
    pub grace_minutes: u32,
    /// Default lease length for `fencepost publish` (overridden by `--lease-secs`).
    pub lease_secs: u64,
    /// Items claimed, rendered and committed together (one lease transaction and one commit
    /// transaction per batch; each item still has its own guarded, token-chained batch).
    pub batch_size: usize,
    /// Largest content file (item, plain page, template) read, in bytes.
    pub max_item_bytes: u64,
    /// Attempts at an item (or a remote image) before it is parked until re-armed.
    pub max_attempts: u32,
    /// IANA time zone whose midnights bound `day`s (each collection may name its own).
    pub timezone: String,
}

/// Longest lease accepted (a year): far beyond any real job, far below where instants
/// in milliseconds would overflow.
pub const MAX_LEASE_SECS: u64 = 366 * 24 * 3600;
/// The longest grace period after an item's day: a (leap) year.
pub const MAX_GRACE_MINUTES: u32 = 366 * 24 * 60;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LedgerConfig {
    /// The SQLite ledger, relative to the site root.
    pub path: PathBuf,
    /// A shared ledger on PostgreSQL (`postgres://USER@HOST:PORT/DB`); overrides `path`. The
    /// password belongs in `PGPASSWORD`, not here. `FENCEPOST_LEDGER` overrides both.
    pub url: Option<String>,
    /// How long a statement waits for another process's write lock, in milliseconds.
    pub busy_timeout_ms: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ImagesConfig {
    /// Content-addressed image store, relative to the site root.
    pub store: PathBuf,
    /// Largest image accepted, in bytes.
    pub max_bytes: u64,
    /// Timeout for fetching one http(s) image, in seconds.
    pub fetch_timeout_secs: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ResultsConfig {
    /// At most this many `daily_results` rows per puzzle.
    pub max_per_puzzle: i64,
}

/// sha256 of the settings that can change the output: the config as parsed, without its
/// `[ledger]` table (where the ledger lives and how long to wait for it never changes a
/// page, so moving a ledger to PostgreSQL does not re-render a site), and without comments
/// or layout.
pub fn output_hash(text: &str) -> String {
    let mut table: toml::Table = toml::from_str(text).unwrap_or_default();
    table.remove("ledger");
    crate::digest::sha256_hex(toml::to_string(&table).unwrap_or_default().as_bytes())
}

impl Default for Config {
    fn default() -> Self {
        Config {
            title: "fencepost site".into(),
            base_url: "http://localhost:8080/".into(),
            publish: PublishConfig::default(),
            ledger: LedgerConfig::default(),
            images: ImagesConfig::default(),
            results: ResultsConfig::default(),
            build: BuildConfig::default(),
            serve: ServeConfig::default(),
            deploy: DeployConfig::default(),
            run: RunConfig::default(),
            collections: BTreeMap::new(),
            author: None,
            feeds: vec!["atom".into()],
            markdown: MarkdownConfig::default(),
            taxonomies: BTreeMap::new(),
        }
    }
}

impl Default for PublishConfig {
    fn default() -> Self {
        PublishConfig {
            grace_minutes: 10,
            lease_secs: 180,
            batch_size: 64,
            max_item_bytes: 1024 * 1024,
            max_attempts: 5,
            timezone: "UTC".into(),
        }
    }
}

impl Default for LedgerConfig {
    fn default() -> Self {
        LedgerConfig {
            path: PathBuf::from(".fencepost/ledger.sqlite"),
            url: None,
            busy_timeout_ms: 30_000,
        }
    }
}

impl Default for ImagesConfig {
    fn default() -> Self {
        ImagesConfig {
            store: PathBuf::from(".fencepost/images"),
            max_bytes: 20 * 1024 * 1024,
            fetch_timeout_secs: 30,
        }
    }
}

impl Default for ResultsConfig {
    fn default() -> Self {
        ResultsConfig {
            max_per_puzzle: 50_000,
        }
    }
}

impl Config {
    /// Loads the config, returning it with the sha256 of the very text it was parsed from
    /// (the build fingerprint uses that hash, so it describes the config the build used).
    pub fn load(site_root: &Path) -> Result<(Config, String), ConfigError> {
        let path = site_root.join(CONFIG_FILE);
        let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Read {
            path: path.clone(),
            source,
        })?;
        let config = Self::parse(&text, &path)?;
        Ok((config, output_hash(&text)))
    }

    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        // (output_hash relies on this parse having succeeded.)
        let config: Config = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        config.validate(path)?;
        Ok(config)
    }

    fn validate(&self, path: &Path) -> Result<(), ConfigError> {
        let invalid = |key, value: String, why| ConfigError::Invalid {
            path: path.to_path_buf(),
            key,
            value,
            why,
        };
        if self.publish.lease_secs == 0 || self.publish.lease_secs > MAX_LEASE_SECS {
            return Err(invalid(
                "publish.lease_secs",
                self.publish.lease_secs.to_string(),
                "a lease lasts from 1 second to a year (31622400)",
            ));
        }
        // Past a year the due instant of a late-9999 day is no longer a date RFC 3339 can
        // write, and no schedule needs more.
        if self.publish.grace_minutes > MAX_GRACE_MINUTES {
            return Err(invalid(
                "publish.grace_minutes",
                self.publish.grace_minutes.to_string(),
                "at most 527040 (a year)",
            ));
        }
        if self.images.max_bytes == 0 {
            return Err(invalid(
                "images.max_bytes",
                "0".to_string(),
                "an image of at most 0 bytes is no image: give a size of 1 or more",
            ));
        }
        if self.publish.max_attempts == 0 || self.publish.max_attempts > 1000 {
            return Err(invalid(
                "publish.max_attempts",
                self.publish.max_attempts.to_string(),
                "must be between 1 and 1000",
            ));
        }
        if self.publish.max_item_bytes == 0 {
            return Err(invalid(
                "publish.max_item_bytes",
                "0".into(),
                "must be at least 1",
            ));
        }
        if self.images.fetch_timeout_secs == 0 || self.images.fetch_timeout_secs > 3600 {
            return Err(invalid(
                "images.fetch_timeout_secs",
                self.images.fetch_timeout_secs.to_string(),
                "must be between 1 and 3600 (0 would mean no timeout at all)",
            ));
        }
        if self.publish.batch_size == 0 || self.publish.batch_size > 10_000 {
            return Err(invalid(
                "publish.batch_size",
                self.publish.batch_size.to_string(),
                "must be between 1 and 10000",
            ));
        }
        if self.results.max_per_puzzle < 1 {
            return Err(invalid(
                "results.max_per_puzzle",
                self.results.max_per_puzzle.to_string(),
                "must be at least 1",
            ));
        }
        for (key, n) in [
            ("serve.header_timeout_secs", self.serve.header_timeout_secs),
            (
                "serve.shutdown_deadline_secs",
                self.serve.shutdown_deadline_secs,
            ),
            ("serve.write_timeout_secs", self.serve.write_timeout_secs),
        ] {
            if n == 0 || n > 3600 {
                return Err(invalid(key, n.to_string(), "must be between 1 and 3600"));
            }
        }
        if !(self.run.poll_secs >= 0.001 && self.run.poll_secs <= 86_400.0) {
            return Err(invalid(
                "run.poll_secs",
                self.run.poll_secs.to_string(),
                "must be between 0.001 and 86400 (a day)",
            ));
        }
        for (key, n) in [
            ("run.debounce_ms", self.run.debounce_ms),
            ("run.max_backoff_secs", self.run.max_backoff_secs),
        ] {
            if n > 86_400_000 {
                return Err(invalid(key, n.to_string(), "must be at most 86400000"));
            }
        }
        if self.deploy.lease_secs == 0 || self.deploy.lease_secs > MAX_LEASE_SECS {
            return Err(invalid(
                "deploy.lease_secs",
                self.deploy.lease_secs.to_string(),
                "a lease lasts from 1 second to a year (31622400)",
            ));
        }
        if self.deploy.wait_secs.is_some_and(|w| w > MAX_LEASE_SECS) {
            return Err(invalid(
                "deploy.wait_secs",
                self.deploy.wait_secs().to_string(),
                "from 0 seconds to a year (31622400)",
            ));
        }
        if self.deploy.max_attempts == 0 || self.deploy.max_attempts > 1000 {
            return Err(invalid(
                "deploy.max_attempts",
                self.deploy.max_attempts.to_string(),
                "must be between 1 and 1000",
            ));
        }
        if self.serve.bucket_timeout_ms == 0 || self.serve.bucket_timeout_ms > 600_000 {
            return Err(invalid(
                "serve.bucket_timeout_ms",
                self.serve.bucket_timeout_ms.to_string(),
                "must be between 1 and 600000",
            ));
        }
        if self.serve.pointer_ttl_ms > 3_600_000 {
            return Err(invalid(
                "serve.pointer_ttl_ms",
                self.serve.pointer_ttl_ms.to_string(),
                "must be at most 3600000 (an hour)",
            ));
        }
        if self.serve.pointer_hot_ms < 10 || self.serve.pointer_hot_ms > 3_600_000 {
            return Err(invalid(
                "serve.pointer_hot_ms",
                self.serve.pointer_hot_ms.to_string(),
                "must be between 10 and 3600000 (at most one pointer read per 10 ms)",
            ));
        }
        if self.serve.max_connections == 0 || self.serve.max_connections > 1_000_000 {
            return Err(invalid(
                "serve.max_connections",
                self.serve.max_connections.to_string(),
                "must be between 1 and 1000000",
            ));
        }
        for (key, n) in [
            ("build.page_size", self.build.page_size),
            ("build.feed_entries", self.build.feed_entries),
            ("build.home_entries", self.build.home_entries),
        ] {
            if n == 0 || n > 100_000 {
                return Err(invalid(key, n.to_string(), "must be between 1 and 100000"));
            }
        }
        if let Some(bad) = self
            .feeds
            .iter()
            .find(|f| !["atom", "rss"].contains(&f.as_str()))
        {
            return Err(invalid(
                "feeds",
                format!("{bad:?}"),
                "feeds are \"atom\" and \"rss\" (Atom is always written; \"rss\" adds rss.xml beside each atom.xml)",
            ));
        }
        if let Some(url) = &self.ledger.url {
            if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
                return Err(invalid(
                    "ledger.url",
                    crate::ledger::redact(url),
                    "must be a postgres:// URL (for a SQLite ledger, set ledger.path)",
                ));
            }
        }
        for (key, p) in [
            ("ledger.path", &self.ledger.path),
            ("images.store", &self.images.store),
        ] {
            if p.as_os_str().is_empty() {
                return Err(invalid(key, "\"\"".into(), "must not be empty"));
            }
        }
        collections::Collections::resolve(self, path)?;
        Ok(())
    }
}

#[cfg(test)]
mod output_hash_tests {
    use super::output_hash;

    #[test]
    fn only_settings_that_shape_the_output_count() {
        let base = "title = \"a\"\n[ledger]\npath = \"x.sqlite\"\n";
        let moved = "# moved\ntitle = \"a\"\n\n[ledger]\nurl = \"postgres://h/db\"\n";
        assert_eq!(output_hash(base), output_hash(moved));
        assert_ne!(output_hash(base), output_hash("title = \"b\"\n"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_gives_defaults() {
        let c = Config::parse("", Path::new("x.toml")).unwrap();
        assert_eq!(c.publish.grace_minutes, 10);
        assert_eq!(c.publish.lease_secs, 180);
        assert_eq!(c.results.max_per_puzzle, 50_000);
    }

    #[test]
    fn unknown_key_is_named() {
        let e = Config::parse("[publish]\ngrace_minute = 5\n", Path::new("x.toml")).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("grace_minute"), "{msg}");
        assert!(msg.contains("x.toml"), "{msg}");
    }

    #[test]
    fn unbounded_numbers_are_refused() {
        for (text, key) in [
            (
                "[publish]\nlease_secs = 99999999999\n",
                "publish.lease_secs",
            ),
            (
                "[images]\nfetch_timeout_secs = 0\n",
                "images.fetch_timeout_secs",
            ),
            ("[publish]\nmax_item_bytes = 0\n", "publish.max_item_bytes"),
        ] {
            let e = Config::parse(text, Path::new("x.toml"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(key), "{text}: {e}");
        }
    }

    #[test]
    fn zero_lease_is_refused() {
        let e = Config::parse("[publish]\nlease_secs = 0\n", Path::new("x.toml")).unwrap_err();
        assert!(e.to_string().contains("publish.lease_secs"));
    }
}
