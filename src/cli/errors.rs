//! How a failure is shown: its message with each cause once, and with `--json` one object
//! `{"error": {"message", "kind", …}}` naming the file, line, key, URL, item or ledger where
//! the error has one.

use fencepost::{bucket, build, config, content, deploy, ledger, output, publish};
use serde_json::{json, Map, Value};

/// The message, then each cause the message does not already say (many errors carry their
/// cause's text in their own message; printing the chain as well would say it twice).
pub fn message(e: &anyhow::Error) -> String {
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
pub fn kind(e: &anyhow::Error) -> &'static str {
    if e.downcast_ref::<config::ConfigError>().is_some() {
        "config"
    } else if e.downcast_ref::<publish::PublishError>().is_some() {
        "publish"
    } else if e.downcast_ref::<build::BuildError>().is_some() {
        "build"
    } else if e.downcast_ref::<ledger::LedgerError>().is_some() {
        "ledger"
    } else if e.downcast_ref::<deploy::DeployError>().is_some() {
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
pub fn to_json(e: &anyhow::Error) -> Value {
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
    let mut put = |k: &str, v: Value| {
        to.entry(k.to_string()).or_insert(v);
    };
    let file = |p: &std::path::Path| json!(p.display().to_string());
    if let Some(e) = cause.downcast_ref::<config::ConfigError>() {
        use config::ConfigError::*;
        match e {
            Read { path, .. } | Parse { path, .. } => put("file", file(path)),
            Invalid { path, key, .. } => {
                put("file", file(path));
                put("key", json!(key));
            }
            Collection { path, key, .. } => {
                put("file", file(path));
                put("key", json!(key));
            }
        }
    } else if let Some(e) = cause.downcast_ref::<content::ContentError>() {
        use content::ContentError::*;
        match e {
            Read { path, .. }
            | NoFrontMatter { path }
            | Unterminated { path }
            | Unreadable { path, .. }
            | TooLarge { path, .. }
            | NoCollection { path, .. } => put("file", file(path)),
            FrontMatter { path, line, .. } => {
                put("file", file(path));
                put("line", json!(line));
            }
            Invalid {
                path, line, key, ..
            } => {
                put("file", file(path));
                if let Some(l) = line {
                    put("line", json!(l));
                }
                put("key", json!(key));
            }
            DuplicateId { name, .. } => put("item", json!(name.to_string())),
        }
    } else if let Some(e) = cause.downcast_ref::<deploy::DeployError>() {
        use deploy::DeployError::*;
        match e {
            Backwards { target, .. }
            | Replaced { target, .. }
            | ForeignBucket { target, .. }
            | Incomplete { target, .. }
            | Busy { target, .. } => put("url", json!(target)),
            Io { path, .. } => put("file", file(path)),
            Bucket(b) => locate(b, to),
            _ => {}
        }
    } else if let Some(e) = cause.downcast_ref::<bucket::BucketError>() {
        match e.target() {
            Some(t) => put("url", json!(t)),
            None => {
                if let bucket::BucketError::Io { path, .. } = e {
                    put("file", file(path))
                }
            }
        }
        put("retryable", json!(e.retryable()));
    } else if let Some(e) = cause.downcast_ref::<build::BuildError>() {
        use build::BuildError::*;
        match e {
            Io { path, .. }
            | Template { path, .. }
            | PlainPage { path, .. }
            | Input { path, .. } => put("file", file(path)),
            MissingTemplate { name, .. } => put("file", json!(name)),
            Render { template, .. } => put("file", json!(template)),
            MissingBody { item, .. } => put("item", json!(item)),
            _ => {}
        }
    } else if let Some(e) = cause.downcast_ref::<output::OutputError>() {
        use output::OutputError::*;
        match e {
            Io { path, .. } | Manifest { path, .. } | NotAPointer { path } => {
                put("file", file(path))
            }
            _ => {}
        }
    } else if let Some(e) = cause.downcast_ref::<ledger::LedgerError>() {
        use ledger::LedgerError::*;
        match e {
            Open { ledger, .. }
            | Corrupt { ledger, .. }
            | Busy { ledger, .. }
            | TooNew { ledger, .. }
            | Sql { ledger, .. } => put("ledger", json!(ledger)),
            CreateDir { path, .. } => put("file", file(path)),
            _ => {}
        }
    } else if let Some(publish::PublishError::NoSuchItem(item)) =
        cause.downcast_ref::<publish::PublishError>()
    {
        put("item", json!(item));
    }
}
