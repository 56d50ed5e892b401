use super::Ctx;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// Check the bucket at URL instead: its live root, every shard and every blob present and
    /// hashing to its name (`deploy --repair` re-uploads what is not).
    #[arg(long, value_name = "URL")]
    to: Option<String>,
}

/// Recomputes the audit chain, checks its end against the ledger's anchor, and checks that
/// the live revision's manifest names an entry the chain still holds.
pub(super) fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitCode> {
    if let Some(url) = &args.to {
        return bucket(ctx, &super::real_target(url)?);
    }
    let site = ctx.site()?;
    let v = fencepost_deploy::history::verify::verify(&site)?;
    // Through a JSON value, as before the work moved into the library: the same bytes.
    ctx.emit(&serde_json::to_value(&v)?, || {
        let mut out = match &v.first_break {
            None => format!("audit chain intact: {} entries, tip {}", v.entries, v.tip),
            Some(b) => format!("audit chain BROKEN at entry {}: {}", b.seq, b.reason),
        };
        if let Some(log) = &v.log {
            out += &format!(
                "\nlog: {} entries replayed from the first, {} snapshot(s) checked against their records",
                log.entries, log.snapshots_checked
            );
            for p in log.problems.iter().skip(1) {
                out += &format!("\n  also: {p}");
            }
            for n in &log.notes {
                out += &format!("\n  note: {n}");
            }
        }
        for t in &v.times_backwards {
            out += &format!(
                "\nwarning: audit entry {} is dated {}, before the entry it follows ({}): a writer's clock was behind another's, or a --now went back",
                t.seq, t.at, t.previous_at
            );
        }
        out
    })?;
    if let Some(b) = &v.first_break {
        eprintln!("error: audit chain broken at entry {}: {}", b.seq, b.reason);
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// `verify --to URL`: the bucket's live root checked object by object.
fn bucket(ctx: &Ctx, url: &str) -> anyhow::Result<ExitCode> {
    let remote = fencepost_bucket::remote::Remote::open(url)?;
    let c =
        fencepost_deploy::targets::runtime()?.block_on(fencepost_deploy::verify::check(&remote))?;
    ctx.emit(&c, || {
        let head = format!(
            "{}: live {} (manifest {}): {} shard(s), {} blob(s)",
            c.target, c.id, c.manifest, c.shards, c.blobs
        );
        if c.ok {
            return format!("{head}: every object present and whole");
        }
        let mut out = format!("{head}: DAMAGED\n");
        if c.root_damaged {
            out += "  the manifest root is missing or does not hash to its name\n";
        }
        if let (Some(owner), Some(built)) = (&c.ledger_id, &c.root_ledger_id) {
            if owner != built {
                out += &format!(
                    "  the pointer names ledger {owner}, but the live root was built by ledger {built}: every origin refuses it (503). Deploy a revision built by ledger {owner}, or roll back\n"
                );
            }
        }
        for (label, list) in [
            ("missing shard", &c.missing_shards),
            ("corrupt shard", &c.corrupt_shards),
            ("missing blob", &c.missing_blobs),
            ("corrupt blob", &c.corrupt_blobs),
        ] {
            for sha in list.iter().take(20) {
                out += &format!("  {label}: {sha}\n");
            }
            if list.len() > 20 {
                out += &format!("  … and {} more\n", list.len() - 20);
            }
        }
        out + "  `fencepost deploy --repair --to URL` re-uploads them from the local revision"
    })?;
    Ok(if c.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
