//! `fencepost log [--limit N]`: the audit trail, newest first, so no one needs SQL to read it.

use super::Ctx;
use fencepost_core::clock::Instant;
use fencepost_ledger::audit;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// How many entries to show, newest first.
    #[arg(long, default_value_t = 20, value_name = "N",
          value_parser = clap::value_parser!(i64).range(1..))]
    limit: i64,
}

#[derive(serde::Serialize)]
struct Shown {
    seq: i64,
    at: Instant,
    action: String,
    /// The item (or deploy target, operation) the entry is about.
    item: String,
    revision: i64,
    detail: String,
    /// The entry's instant was given by hand (`--now`), not read from a clock.
    now_given: bool,
    hash: String,
    previous_hash: String,
}

pub(super) fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitCode> {
    let site = ctx.site()?;
    let mut l = site.open_ledger()?;
    let entries: Vec<Shown> = l
        .read(|tx| audit::newest(tx, args.limit))?
        .into_iter()
        .map(|e| Shown {
            now_given: e.detail.contains("\"now_given\":true"),
            seq: e.seq,
            at: Instant(e.at),
            action: e.action,
            // A publication's detail names the item as people do (`answers/3`); the subject is
            // the ledger's own key.
            item: serde_json::from_str::<serde_json::Value>(&e.detail)
                .ok()
                .and_then(|d| d["item"].as_str().map(str::to_string))
                .unwrap_or(e.subject),
            revision: e.revision,
            detail: e.detail,
            hash: e.current_hash,
            previous_hash: e.previous_hash,
        })
        .collect();
    ctx.emit(&serde_json::json!({ "entries": entries }), || {
        if entries.is_empty() {
            return "the audit log is empty (nothing published yet)".into();
        }
        let mut out = String::new();
        for e in &entries {
            out += &format!(
                "#{:<6} {}  {:<9} {:<28} revision {:<6} {}{}\n",
                e.seq,
                e.at,
                e.action,
                e.item,
                e.revision,
                &e.hash[..e.hash.len().min(16)],
                if e.now_given {
                    "  (--now given by hand)"
                } else {
                    ""
                }
            );
        }
        out
    })?;
    Ok(ExitCode::SUCCESS)
}
