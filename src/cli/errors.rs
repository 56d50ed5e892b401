//! How a failure is shown: its message with each cause once, and with `--json` one object
//! `{"error": {"message", "kind", …}}` naming the file, line, key, URL, item or ledger where
//! the error has one.

use fencepost_bucket as bucket;
use fencepost_build as build;
use fencepost_config as config;
use fencepost_deploy::targets;
use fencepost_ledger as ledger;
use fencepost_output as output;
use fencepost_publish as publish;
use fencepost_site::content;
use serde_json::{json, Map, Value};

/// The message, then each cause the message does not already say (many errors carry their
/// cause's text in their own message; printing the chain as well would say it twice).
pub(crate) fn message(e: &anyhow::Error) -> String {
    let mut out = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !out.contains(&c) {
            out.push_str(": ");
            out.push_str(&c);
        }
    }
    out
}

/// Which part of fencepost an error comes from.
pub(crate) fn kind(e: &anyhow::Error) -> &'static str {
    if e.downcast_ref::<config::ConfigError>().is_some() {
        "config"
    } else if e.downcast_ref::<publish::PublishError>().is_some() {
        "publish"
    } else if e.downcast_ref::<build::BuildError>().is_some()
        || e.downcast_ref::<fencepost_deploy::history::HistoryError>()
            .is_some()
    {
        "build"
    } else if e.downcast_ref::<ledger::LedgerError>().is_some() {
        "ledger"
    } else if e.downcast_ref::<targets::DeployError>().is_some() {
        "deploy"
    } else if e.downcast_ref::<bucket::BucketError>().is_some() {
        "bucket"
    } else if e.downcast_ref::<content::ContentError>().is_some() {
        "content"
    } else if e.downcast_ref::<output::OutputError>().is_some() {
        "output"
    } else {
        "error"
    }
}

/// The error as one JSON object.
pub(crate) fn to_json(e: &anyhow::Error) -> Value {
    let mut error = Map::new();
    error.insert("message".into(), json!(message(e)));
    error.insert("kind".into(), json!(kind(e)));
    for cause in e.chain() {
        locate(cause, &mut error);
    }
    json!({ "error": error })
}

/// Adds where the error is (first found wins: the outermost error knows best).
fn locate(cause: &(dyn std::error::Error + 'static), to: &mut Map<String, Value>) {
    let mut at = Where(to);
    if let Some(e) = cause.downcast_ref::<config::ConfigError>() {
        at.config(e)
    } else if let Some(e) = cause.downcast_ref::<content::ContentError>() {
        at.content(e)
    } else if let Some(e) = cause.downcast_ref::<targets::DeployError>() {
        at.deploy(e)
    } else if let Some(e) = cause.downcast_ref::<bucket::BucketError>() {
        at.bucket(e)
    } else if let Some(e) = cause.downcast_ref::<build::BuildError>() {
        at.build(e)
    } else if let Some(e) = cause.downcast_ref::<output::OutputError>() {
        at.output(e)
    } else if let Some(e) = cause.downcast_ref::<ledger::LedgerError>() {
        at.ledger(e)
    } else if let Some(publish::PublishError::NoSuchItem(item)) =
        cause.downcast_ref::<publish::PublishError>()
    {
        at.put("item", json!(item));
    }
}

/// The JSON error's location keys, each set once.
struct Where<'a>(&'a mut Map<String, Value>);

impl Where<'_> {
    fn put(&mut self, k: &str, v: Value) {
        self.0.entry(k.to_string()).or_insert(v);
    }

    fn file(&mut self, p: &std::path::Path) {
        self.put("file", json!(p.display().to_string()));
    }

    fn config(&mut self, e: &config::ConfigError) {
        use config::ConfigError::*;
        match e {
            Read { path, .. } | Parse { path, .. } => self.file(path),
            Invalid { path, key, .. } => {
                self.file(path);
                self.put("key", json!(key));
            }
            Collection { path, key, .. } => {
                self.file(path);
                self.put("key", json!(key));
            }
        }
    }

    fn content(&mut self, e: &content::ContentError) {
        use content::ContentError::*;
        match e {
            Read { path, .. }
            | NoFrontMatter { path }
            | Unterminated { path, .. }
            | Unreadable { path, .. }
            | TooLarge { path, .. }
            | NoCollection { path, .. } => self.file(path),
            FrontMatter { path, line, .. } => {
                self.file(path);
                self.put("line", json!(line));
            }
            Invalid {
                path, line, key, ..
            } => {
                self.file(path);
                if let Some(l) = line {
                    self.put("line", json!(l));
                }
                self.put("key", json!(key));
            }
            DuplicateId { name, .. } | IdCase { name, .. } => {
                self.put("item", json!(name.to_string()))
            }
            UrlTaken {
                path, line, url, ..
            } => {
                self.file(path);
                if let Some(l) = line {
                    self.put("line", json!(l));
                }
                self.put("key", json!("id"));
                self.put("url", json!(url));
            }
            AliasTaken {
                path, line, url, ..
            } => {
                self.file(path);
                if let Some(l) = line {
                    self.put("line", json!(l));
                }
                self.put("key", json!("aliases"));
                self.put("url", json!(url));
            }
        }
    }

    fn deploy(&mut self, e: &targets::DeployError) {
        use targets::DeployError::*;
        match e {
            Backwards { target, .. }
            | Replaced { target, .. }
            | ForeignBucket { target, .. }
            | ForeignLog { target, .. }
            | Incomplete { target, .. }
            | Busy { target, .. } => self.put("url", json!(target)),
            Io { path, .. } => self.file(path),
            Bucket(b) => self.bucket(b),
            _ => {}
        }
    }

    fn bucket(&mut self, e: &bucket::BucketError) {
        match (e.target(), e) {
            (Some(t), _) => self.put("url", json!(t)),
            (None, bucket::BucketError::Io { path, .. }) => self.file(path),
            (None, _) => {}
        }
        self.put("retryable", json!(e.retryable()));
    }

    fn build(&mut self, e: &build::BuildError) {
        use build::BuildError::*;
        match e {
            Io { path, .. }
            | Template { path, .. }
            | PlainPage { path, .. }
            | Input { path, .. } => self.file(path),
            MissingTemplate { name, .. } => self.put("file", json!(name)),
            Render { template, .. } => self.put("file", json!(template)),
            MissingBody { item, .. } => self.put("item", json!(item)),
            _ => {}
        }
    }

    fn output(&mut self, e: &output::OutputError) {
        use output::OutputError::*;
        if let Io { path, .. } | Manifest { path, .. } | NotAPointer { path } = e {
            self.file(path)
        }
    }

    fn ledger(&mut self, e: &ledger::LedgerError) {
        use ledger::LedgerError::*;
        match e {
            Open { ledger, .. }
            | Corrupt { ledger, .. }
            | Busy { ledger, .. }
            | TooNew { ledger, .. }
            | Sql { ledger, .. } => self.put("ledger", json!(ledger)),
            CreateDir { path, .. } => self.file(path),
            _ => {}
        }
    }
}
