//! The site's configuration file, `fencepost.toml`. Every key has a default, so an empty file
//! is a valid config; an unknown key is an error naming the key, because a misspelt setting
//! that is silently ignored is worse than a refusal.

pub mod collections;
pub mod images;
pub mod languages;
mod markdown;
pub mod names;
pub mod preview;
pub mod search;
pub mod taxonomies;
pub mod transparency;
mod validate;

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use images::ImagesConfig;
pub use markdown::MarkdownConfig;
pub use search::SearchConfig;

pub const CONFIG_FILE: &str = "fencepost.toml";

/// The largest fencepost.toml read.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

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
    pub search: SearchConfig,
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
    /// Anything the site's templates want (`site.extra`; Zola's `config.extra`).
    pub extra: toml::Table,
    /// The public transparency log (see [`transparency`]).
    pub transparency: transparency::TransparencyConfig,
    /// What templates may reach of the machine that builds (see [`SecurityConfig`]).
    pub security: SecurityConfig,
    /// The strings templates translate with `trans(key=…)` (Zola's `[translations]`).
    pub translations: BTreeMap<String, String>,
    /// Previews (`fencepost preview`, docs/previews.md).
    pub preview: preview::PreviewConfig,
    /// The language of the site's own files and collections (docs/languages.md).
    pub default_language: String,
    /// The other languages it publishes in (`[languages.<code>]`; see [`languages`]).
    pub languages: BTreeMap<String, languages::LanguageConfig>,
}

/// `[security]`: what a template may reach of the machine that builds, as Hugo's
/// `security.funcs.getenv`. The adversary is a template's author — a theme `import` copied,
/// a contributor — on a CI runner whose environment holds the log's signing key, the D1
/// token, cloud credentials and database passwords.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SecurityConfig {
    /// Regular expressions over environment variable names that `get_env` may read (none by
    /// default). A credential's name (`FENCEPOST_*`, `AWS_*`, `*TOKEN*`, `*SECRET*`,
    /// `*PASSWORD*`, …: [`never_readable`]) is never readable, whatever they say.
    pub getenv: Vec<String>,
}

/// Whether an environment variable may never reach a template, whatever `security.getenv`
/// allows: fencepost's own (`FENCEPOST_*`: the log's signing key, the D1 token, the ledger's
/// URL), the clouds' and CI's credentials, PostgreSQL's, and anything named like a secret.
pub fn never_readable(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    const PREFIXES: &[&str] = &[
        "FENCEPOST_",
        "AWS_",
        "AZURE_",
        "GOOGLE_",
        "GCP_",
        "GCLOUD_",
        "CLOUDFLARE_",
        "CF_",
        "ACTIONS_",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "PG",
        "DATABASE_URL",
        "SSH_",
        "NPM_TOKEN",
        "CARGO_REGISTRY_TOKEN",
        "DOCKER_",
        "VAULT_",
    ];
    const PARTS: &[&str] = &[
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "PRIVATE",
        "API_KEY",
        "ACCESS_KEY",
        "SKEY",
        "_KEY",
        "AUTH",
    ];
    PREFIXES.iter().any(|p| n.starts_with(p)) || PARTS.iter().any(|p| n.contains(p))
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

    /// The path the site lives under, from `base_url`: `/project` for
    /// `https://user.github.io/project/` (a GitHub Pages project site), empty at a host's
    /// root. Every root-relative URL the build writes into HTML gets it in front, and
    /// `serve` answers under it.
    pub fn base_path(&self) -> String {
        base_path_of(&self.base_url)
    }
}

/// The path of `base_url` without its trailing slash (empty for the root, or a URL that does
/// not parse: the config check refuses those).
pub fn base_path_of(base_url: &str) -> String {
    url::Url::parse(base_url)
        .map(|u| u.path().trim_end_matches('/').to_string())
        .unwrap_or_default()
}

/// Whether `url` names this machine (`localhost`, `127.x`, `::1`, `0.0.0.0`): a base URL no
/// reader of a deployed site can reach, though right for a local preview.
pub fn is_local_url(url: &str) -> bool {
    let host = url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string));
    host.is_some_and(|h| {
        let h = h.trim_matches(['[', ']']);
        h == "localhost"
            || h.ends_with(".localhost")
            || h.starts_with("127.")
            || h == "::1"
            || h == "0.0.0.0"
    })
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
    /// Connections one peer address may hold at once; one more is closed (see
    /// `serve/limits.rs`).
    pub max_connections_per_ip: usize,
    /// While a client holds a response back, it must take at least this many bytes a
    /// second (over 10 s windows), or the connection is cut.
    pub min_send_bytes_per_sec: u64,
    /// At capacity, a connection whose client has held every write back (taken no byte)
    /// for this many seconds gives way to a new connection, whatever its address.
    pub stall_secs: u64,
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
            max_connections_per_ip: 256,
            min_send_bytes_per_sec: 1024,
            stall_secs: 2,
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
    /// What the site's templates are written for: fencepost's variables (the default) or
    /// Zola's (`"zola"`: see `build/zola.rs`).
    pub templates: TemplateDialect,
    /// The most frames a template render may nest (macro calls, includes, for loops): past it
    /// the page is held, naming the limit — a macro calling itself used to abort the process.
    pub max_template_depth: usize,
    /// The longest `range()` a template may make.
    pub max_range: usize,
    /// The most bytes one templated file may come to.
    pub max_page_bytes: u64,
    /// Compile `sass/` into CSS as Zola does (`build/sass.rs`); the longest one compile may take.
    pub compile_sass: bool,
    pub sass_timeout_secs: u64,
}

/// The variables and functions templates are rendered with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TemplateDialect {
    #[default]
    Fencepost,
    Zola,
}

impl TemplateDialect {
    /// In Zola mode, a collection page size at or above this means "not paginated" (what the
    /// import writes for a Zola section without `paginate_by`): no `paginator`.
    pub const ZOLA_UNPAGINATED: usize = 100_000;
}

impl Default for BuildConfig {
    fn default() -> Self {
        BuildConfig {
            page_size: 100,
            feed_entries: 20,
            home_entries: 10,
            templates: TemplateDialect::Fencepost,
            max_template_depth: 64,
            max_range: 100_000,
            max_page_bytes: 64 << 20,
            compile_sass: false,
            sass_timeout_secs: 30,
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
    /// `"HH:MM"`: items with a `day` are due at this wall-clock time (in the time zone) on
    /// their day (`start_of_day`) or the day after (`end_of_day`), instead of midnight +
    /// `grace_minutes` (each collection may name its own).
    pub due_time: Option<String>,
    /// A run that would withdraw more than this many public items because their files are
    /// gone — and more than `mass_withdrawal_share` of them — withdraws none (a wrong checkout,
    /// a site copied from another's fencepost.toml), unless `--allow-mass-withdrawal`.
    pub mass_withdrawal_items: usize,
    /// The share of the public items (0–1) such a run may withdraw (see above).
    pub mass_withdrawal_share: f64,
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
    /// This site's identity in its ledger: the ledger records it when it is created (or on
    /// the first publish that names it), and refuses every other site's commands.
    pub site_id: Option<String>,
    /// On a ledger in a bucket, how far this host's clock may be off the store's before it
    /// refuses to decide anything, in milliseconds.
    pub clock_tolerance_ms: u64,
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
    fencepost_core::digest::sha256_hex(toml::to_string(&table).unwrap_or_default().as_bytes())
}

impl Default for Config {
    fn default() -> Self {
        Config {
            title: "fencepost site".into(),
            base_url: "http://localhost:8080/".into(),
            publish: PublishConfig::default(),
            ledger: LedgerConfig::default(),
            images: ImagesConfig::default(),
            search: SearchConfig::default(),
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
            extra: toml::Table::new(),
            transparency: transparency::TransparencyConfig::default(),
            security: SecurityConfig::default(),
            translations: BTreeMap::new(),
            default_language: "en".into(),
            languages: BTreeMap::new(),
            preview: preview::PreviewConfig::default(),
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
            due_time: None,
            mass_withdrawal_items: 3,
            mass_withdrawal_share: 0.1,
        }
    }
}

impl Default for LedgerConfig {
    fn default() -> Self {
        LedgerConfig {
            path: PathBuf::from(".fencepost/ledger.sqlite"),
            url: None,
            busy_timeout_ms: 30_000,
            site_id: None,
            clock_tolerance_ms: 5_000,
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
        // Bounded before it is read: TOML nests at most 80 deep (toml's own limit), and a
        // configuration has no business being larger than this.
        if let Ok(m) = std::fs::metadata(&path) {
            if m.len() > MAX_CONFIG_BYTES {
                return Err(ConfigError::Parse {
                    path,
                    message: format!(
                        "{} bytes: a fencepost.toml may be at most {MAX_CONFIG_BYTES} bytes (1 MiB)",
                        m.len()
                    ),
                });
            }
        }
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
        refuse_implicit_collections(text, path)?;
        config.validate(path)?;
        Ok(config)
    }
}

/// A `[collections.X.fields]` (or any `[collections.X.…]`) table whose collection X has no
/// table of its own: TOML makes `collections.X` up silently, and a mistyped parent
/// (`[collections.post.fields]` under `[collections.posts]`) would create a ghost collection
/// and leave the real one without its fields. Refused, naming the table.
fn refuse_implicit_collections(text: &str, path: &Path) -> Result<(), ConfigError> {
    let Ok(doc) = text.parse::<toml_edit::DocumentMut>() else {
        return Ok(()); // toml already accepted it; nothing more to say here.
    };
    let Some(colls) = doc.get("collections").and_then(|c| c.as_table()) else {
        return Ok(());
    };
    for (name, item) in colls.iter() {
        if let Some(t) = item.as_table() {
            if t.is_implicit() && !t.is_dotted() {
                let inner = t
                    .iter()
                    .next()
                    .map(|(k, _)| k.to_string())
                    .unwrap_or_default();
                return Err(ConfigError::Collection {
                    path: path.to_path_buf(),
                    key: format!("collections.{name}.{inner}"),
                    why: format!(
                        "there is no [collections.{name}] table: declare the collection (or fix the name to one that is declared: {})",
                        colls
                            .iter()
                            .filter(|(_, i)| i.as_table().is_some_and(|t| !t.is_implicit()))
                            .map(|(k, _)| k.to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
