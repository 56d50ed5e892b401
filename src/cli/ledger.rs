use super::Ctx;
use fencepost_ledger::{Ledger, Location};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, clap::Subcommand)]
pub(super) enum Command {
    /// Copy a ledger, every table of it, into an empty one on any engine — this site's SQLite
    /// ledger into a PostgreSQL database or a bucket, and back (verified on both sides; a
    /// non-empty target is refused). Then set ledger.url or FENCEPOST_LEDGER to the new
    /// ledger and carry on there.
    Copy {
        /// The target: postgres://USER@HOST:PORT/DATABASE (password in PGPASSWORD), an object
        /// store (s3://bucket/prefix, gs://, az://, file:///folder), or a SQLite path.
        #[arg(long, value_name = "URL")]
        to: String,
        /// The source ledger, a path or URL as for --to (default: the site's ledger.path).
        #[arg(long, value_name = "PATH|URL")]
        from: Option<String>,
    },
}

pub(super) fn run(ctx: &Ctx, cmd: Command) -> anyhow::Result<ExitCode> {
    let Command::Copy { to, from } = cmd;
    let site = ctx.site()?;
    let from = match from {
        Some(f) => Location::parse(&f, &site.root)?,
        None => Location::Sqlite(site.root.join(&site.config.ledger.path)),
    };
    // A source that is not there is refused before anything opens it (which would begin a
    // new, empty ledger at a mistyped path or bucket URL).
    anyhow::ensure!(
        fencepost_ledger::exists(&from)?,
        "ledger copy: there is no ledger at {} to copy (run `fencepost publish` first, or give --from)",
        from.display()
    );
    let to = Location::parse(&to, &site.root)?;
    anyhow::ensure!(
        to != from,
        "ledger copy: --to names the source ledger itself"
    );
    let timeout = Duration::from_millis(site.config.ledger.busy_timeout_ms);
    let mut source = Ledger::open_at(&from, timeout)?;
    let mut target = Ledger::open_at(&to, timeout)?;
    let r = fencepost_ledger::copy::copy(&mut source, &mut target)?;
    ctx.emit(&r, || {
        let rows: usize = r.tables.values().sum();
        format!(
            "copied {rows} rows from {} to {}: revision {}, {} audit entries, tip {} (verified)\nnext: set ledger.url in fencepost.toml (or FENCEPOST_LEDGER) to the new ledger",
            r.from, r.to, r.revision, r.audit_entries, r.audit_tip
        )
    })?;
    Ok(ExitCode::SUCCESS)
}
