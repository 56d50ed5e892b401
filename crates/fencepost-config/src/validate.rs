//! The checks `fencepost.toml` passes before anything uses it: every number within its
//! range (a table, in the order the keys are documented), then the settings with rules of
//! their own. Each error names the key, the value and the way out.

use super::{collections, Config, ConfigError, MAX_GRACE_MINUTES, MAX_LEASE_SECS};
use std::path::Path;

/// A numeric setting, the inclusive range it must lie in, and what to say when it does not.
type Range = (&'static str, i128, (i128, i128), &'static str);

const LEASE: &str = "a lease lasts from 1 second to a year (31622400)";

impl Config {
    /// A `base_url` that is not an absolute http(s) URL is warned about, not refused: a site
    /// the previous release built with such a value keeps building (served at the root).
    fn warn_odd_base_url(&self) {
        match url::Url::parse(&self.base_url) {
            Ok(u)
                if ["http", "https"].contains(&u.scheme())
                    && u.query().is_none()
                    && u.fragment().is_none() => {}
            _ => tracing::warn!(
                base_url = %self.base_url,
                "base_url is not an absolute http(s) URL (\"https://example.org/\", \"https://user.github.io/project/\"): feeds, sitemaps and redirect pages name URLs under it; the site is taken as served at its host's root"
            ),
        }
    }

    pub(super) fn validate(&self, path: &Path) -> Result<(), ConfigError> {
        let invalid = |key, value: String, why| ConfigError::Invalid {
            path: path.to_path_buf(),
            key,
            value,
            why,
        };
        for (key, value, (min, max), why) in self.ranges() {
            if value < min || value > max {
                return Err(invalid(key, value.to_string(), why));
            }
        }
        if !(self.run.poll_secs >= 0.001 && self.run.poll_secs <= 86_400.0) {
            let why = "must be between 0.001 and 86400 (a day)";
            return Err(invalid(
                "run.poll_secs",
                self.run.poll_secs.to_string(),
                why,
            ));
        }
        if let Some(bad) = self
            .feeds
            .iter()
            .find(|f| !["atom", "rss"].contains(&f.as_str()))
        {
            let why = "feeds are \"atom\" and \"rss\" (Atom is always written; \"rss\" adds rss.xml beside each atom.xml)";
            return Err(invalid("feeds", format!("{bad:?}"), why));
        }
        (self.images.check(path)).and_then(|()| self.search.check(path))?;
        for pattern in &self.security.getenv {
            if let Err(e) = regex::Regex::new(pattern) {
                let why = "must be regular expressions over variable names (as Hugo's security.funcs.getenv): the first that does not parse is named";
                let _ = e;
                return Err(invalid("security.getenv", format!("{pattern:?}"), why));
            }
        }
        self.warn_odd_base_url();
        if let Some(id) = &self.ledger.site_id {
            let ok = (1..=64).contains(&id.len())
                && id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
            if !ok {
                let why = "a site's id is 1 to 64 letters, digits, '.', '_' or '-' (`fencepost init` writes a random one)";
                return Err(invalid("ledger.site_id", format!("{id:?}"), why));
            }
        }
        if let Some(url) = &self.ledger.url {
            let bucket = [
                "s3://",
                "s3a://",
                "gs://",
                "az://",
                "azure://",
                "abfs://",
                "abfss://",
                "file:///",
                "memory://",
                "d1+https://",
                "d1+http://",
            ];
            if !(url.starts_with("postgres://")
                || url.starts_with("postgresql://")
                || bucket.iter().any(|b| url.starts_with(b)))
            {
                let why = "must be a postgres:// URL, or an object store's (s3://bucket/prefix, gs://, az://, file:///folder) for a ledger kept in a bucket, or d1+https://HOST for one in Cloudflare D1 behind fencepost's proxy Worker (for a SQLite ledger, set ledger.path)";
                return Err(invalid("ledger.url", fencepost_ledger::redact(url), why));
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
        self.check_commitments(path)
    }

    /// A collection that commits before it reveals needs the log the commitments go into.
    fn check_commitments(&self, path: &Path) -> Result<(), ConfigError> {
        let committing = self
            .collections
            .iter()
            .find(|(_, c)| c.commit_before_reveal == Some(true));
        if let (Some((name, _)), false) = (committing, self.transparency.log) {
            return Err(ConfigError::Collection {
                path: path.to_path_buf(),
                key: format!("collections.{name}.commit_before_reveal"),
                why: "commitments are entries of the site's transparency log: set `log = true` under [transparency] (and give the build its key: see docs/transparency.md), or drop commit_before_reveal".into(),
            });
        }
        Ok(())
    }

    /// Every numeric setting with its range, in the order they are checked. A table, so
    /// rustfmt keeps a row per line.
    #[rustfmt::skip]
    fn ranges(&self) -> Vec<Range> {
        let n = |v: u64| i128::from(v);
        let z = |v: usize| v as i128;
        let (p, i, s, r, d, b) = (&self.publish, &self.images, &self.serve, &self.run, &self.deploy, &self.build);
        let year = n(MAX_LEASE_SECS);
        let hour = "must be between 1 and 3600";
        let day_ms = "must be at most 86400000";
        let build = "must be between 1 and 100000";
        vec![
            ("publish.lease_secs", n(p.lease_secs), (1, year), LEASE),
            // Past a year the due instant of a late-9999 day is no longer a date RFC 3339
            // can write, and no schedule needs more.
            ("publish.grace_minutes", p.grace_minutes.into(), (0, MAX_GRACE_MINUTES.into()), "at most 527040 (a year)"),
            ("images.max_bytes", n(i.max_bytes), (1, i128::MAX), "an image of at most 0 bytes is no image: give a size of 1 or more"),
            ("publish.max_attempts", p.max_attempts.into(), (1, 1000), "must be between 1 and 1000"),
            ("publish.max_item_bytes", n(p.max_item_bytes), (1, i128::MAX), "must be at least 1"),
            ("images.fetch_timeout_secs", n(i.fetch_timeout_secs), (1, 3600), "must be between 1 and 3600 (0 would mean no timeout at all)"),
            ("images.quality", i.quality.into(), (1, 100), "must be between 1 and 100"),
            ("images.avif_speed", i.avif_speed.into(), (1, 10), "must be between 1 (smallest) and 10 (fastest)"),
            ("images.max_pixels", n(i.max_pixels), (1, i128::MAX), "must be at least 1"),
            ("images.widths", i.widths.iter().map(|w| i128::from(*w)).min().unwrap_or(1), (1, 20_000), "each width must be between 1 and 20000 pixels"),
            ("publish.batch_size", z(p.batch_size), (1, 10_000), "must be between 1 and 10000"),
            ("publish.mass_withdrawal_items", z(p.mass_withdrawal_items), (0, i128::MAX), "must be 0 or more"),
            // A share, in thousandths: 0 (none) to 1000 (every item).
            ("publish.mass_withdrawal_share", (p.mass_withdrawal_share * 1000.0).round() as i128, (0, 1000), "must be between 0 and 1 (a share of the public items)"),
            ("results.max_per_puzzle", self.results.max_per_puzzle.into(), (1, i128::MAX), "must be at least 1"),
            ("serve.header_timeout_secs", n(s.header_timeout_secs), (1, 3600), hour),
            ("serve.shutdown_deadline_secs", n(s.shutdown_deadline_secs), (1, 3600), hour),
            ("serve.write_timeout_secs", n(s.write_timeout_secs), (1, 3600), hour),
            ("serve.stall_secs", n(s.stall_secs), (1, 3600), hour),
            ("run.debounce_ms", n(r.debounce_ms), (0, 86_400_000), day_ms),
            ("run.max_backoff_secs", n(r.max_backoff_secs), (0, 86_400_000), day_ms),
            ("deploy.lease_secs", n(d.lease_secs), (1, year), LEASE),
            ("deploy.wait_secs", n(d.wait_secs.unwrap_or(0)), (0, year), "from 0 seconds to a year (31622400)"),
            ("deploy.max_attempts", d.max_attempts.into(), (1, 1000), "must be between 1 and 1000"),
            ("serve.bucket_timeout_ms", n(s.bucket_timeout_ms), (1, 600_000), "must be between 1 and 600000"),
            ("serve.pointer_ttl_ms", n(s.pointer_ttl_ms), (0, 3_600_000), "must be at most 3600000 (an hour)"),
            ("serve.pointer_hot_ms", n(s.pointer_hot_ms), (10, 3_600_000), "must be between 10 and 3600000 (at most one pointer read per 10 ms)"),
            ("serve.max_connections", z(s.max_connections), (1, 1_000_000), "must be between 1 and 1000000"),
            ("serve.max_connections_per_ip", z(s.max_connections_per_ip), (1, 1_000_000), "must be between 1 and 1000000"),
            ("serve.min_send_bytes_per_sec", n(s.min_send_bytes_per_sec), (0, 1 << 30), "must be between 0 (no minimum) and 1073741824"),
            ("build.page_size", z(b.page_size), (1, 100_000), build),
            ("build.feed_entries", z(b.feed_entries), (1, 100_000), build),
            ("build.home_entries", z(b.home_entries), (1, 100_000), build),
            ("build.max_template_depth", z(b.max_template_depth), (1, 500), "must be between 1 and 500 (each frame takes stack: the render threads keep 16 MiB)"),
            ("build.max_range", z(b.max_range), (1, 100_000_000), "must be between 1 and 100000000"),
            ("build.max_page_bytes", n(b.max_page_bytes), (1024, 1 << 34), "must be between 1024 and 17179869184 (16 GiB)"),
            ("build.sass_timeout_secs", n(b.sass_timeout_secs), (1, 3600), hour),
            ("ledger.clock_tolerance_ms", n(self.ledger.clock_tolerance_ms), (1_000, 86_400_000), "must be between 1000 (a store stamps whole seconds) and 86400000 (a day)"),
        ]
    }
}
