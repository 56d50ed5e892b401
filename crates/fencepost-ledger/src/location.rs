//! Where a ledger lives, as the user names it: a SQLite path, a PostgreSQL URL, or an object
//! store URL for a ledger kept in a bucket.

use super::LedgerError;
use std::path::{Path, PathBuf};

/// Where a ledger lives: chosen by `FENCEPOST_LEDGER`, then `ledger.url`, then `ledger.path`.
#[derive(Clone, PartialEq, Eq)]
pub enum Location {
    Sqlite(PathBuf),
    /// A `postgres://` or `postgresql://` URL (TLS when it says `sslmode=require`).
    Postgres(String),
    /// A ledger kept as a log: in object storage (`s3://bucket/prefix`, `gs://…`, `az://…`,
    /// `file:///absolute/folder`) or in a Cloudflare D1 database behind fencepost's proxy
    /// Worker (`d1+https://HOST[/path]`), with its local cache (a replica this host may lose).
    Bucket {
        url: String,
        cache: PathBuf,
    },
}

/// The schemes of the stores a bucket ledger may live in (`memory://` only in tests).
const BUCKET_SCHEMES: &[&str] = &[
    "s3", "s3a", "gs", "az", "azure", "abfs", "abfss", "file", "memory",
];

/// Where a bucket ledger's local replica lives, under the site's root.
pub(super) const CACHE_DIR: &str = ".fencepost/ledger-cache";

impl Location {
    /// A `postgres://…` URL selects PostgreSQL, an object store's URL (`s3://…`,
    /// `file:///…`) a ledger in a bucket; anything else that looks like a URL (a scheme typo:
    /// `Postgres://`, `postgres:/`, `postgress://`) is an error, never a SQLite file named
    /// after it; anything else is a SQLite path, relative to `root`.
    pub fn parse(text: &str, root: &Path) -> Result<Location, LedgerError> {
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            return Ok(Location::Postgres(text.to_string()));
        }
        if text.starts_with("d1+https://") || text.starts_with("d1+http://") {
            return Ok(Location::Bucket {
                url: text.to_string(),
                cache: root.join(CACHE_DIR),
            });
        }
        if let Some(scheme) = url_scheme(text).filter(|s| BUCKET_SCHEMES.contains(s)) {
            if scheme == "file" && !text.starts_with("file:///") {
                return Err(LedgerError::Location(format!(
                    "{text}: a ledger in a folder is named by file:/// and an absolute path. Nothing was created"
                )));
            }
            return Ok(Location::Bucket {
                url: text.to_string(),
                cache: root.join(CACHE_DIR),
            });
        }
        if let Some(scheme) = url_scheme(text) {
            // Only the scheme is shown: a mistyped URL may hold a password anywhere after it.
            return Err(LedgerError::Location(format!(
                "{scheme}:… looks like a URL but not a PostgreSQL one (scheme {scheme:?}): a shared ledger is named by a postgres:// or postgresql:// URL, in lower case, one in a bucket by s3://, gs://, az:// or file:///, one in Cloudflare D1 by d1+https://, and a SQLite ledger by a path (write ./{scheme}… for a file whose name has a colon). Nothing was created"
            )));
        }
        Ok(Location::Sqlite(root.join(text)))
    }

    /// Whether other hosts' commits reach this one as they happen (PostgreSQL's NOTIFY);
    /// elsewhere a `run` polls.
    pub fn notifies_changes(&self) -> bool {
        matches!(self, Location::Postgres(_))
    }

    /// Whether reading the ledger's clock costs a write to its store (a bucket's probe
    /// object, a D1 batch): commands that only show then read none.
    pub fn clock_costs_a_write(&self) -> bool {
        matches!(self, Location::Bucket { .. })
    }

    /// How errors and logs name it: a path, or the URL without its password.
    pub fn display(&self) -> String {
        match self {
            Location::Sqlite(p) => p.display().to_string(),
            Location::Postgres(u) => redact(u),
            Location::Bucket { url, .. } => fencepost_core::store::names::shown(url),
        }
    }
}

impl std::fmt::Debug for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.display())
    }
}

/// The scheme of `text` when it looks like a URL: letters, digits, `+`, `.` or `-` after a
/// first letter, then `:` and a `/`.
fn url_scheme(text: &str) -> Option<&str> {
    let (scheme, rest) = text.split_once(':')?;
    let mut chars = scheme.chars();
    let looks = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
        && rest.starts_with('/');
    looks.then_some(scheme)
}

/// A connection URL with any password replaced, fit for logs, errors and JSON.
pub fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            if u.password().is_some() {
                let _ = u.set_password(Some("***"));
            }
            let pairs: Vec<(String, String)> = u
                .query_pairs()
                .map(|(k, v)| {
                    let secret = k.eq_ignore_ascii_case("password");
                    (
                        k.into_owned(),
                        if secret { "***".into() } else { v.into_owned() },
                    )
                })
                .collect();
            if !pairs.is_empty() {
                u.query_pairs_mut().clear().extend_pairs(pairs);
            }
            u.to_string()
        }
        Err(_) => "<unparseable postgres URL>".into(),
    }
}
