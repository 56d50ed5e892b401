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
        /// The source ledger, a path or URL as for --to (default: the site's ledger, as every
        /// command finds it: FENCEPOST_LEDGER, ledger.url, then ledger.path).
        #[arg(long, value_name = "PATH|URL")]
        from: Option<String>,
    },
    /// Give the site's ledger to this checkout's site (its ledger.site_id), explicitly: a
    /// ledger with history that names no site yet, which a checkout lacking some of its items'
    /// files may not take by itself, or — with --replace — one another site claimed by
    /// mistake. Run it from the ledger's own site's checkout; it is recorded in the ledger.
    Claim {
        /// The site id the ledger records now, which this claim replaces (it must be named
        /// exactly: a claim never takes a ledger from a site by accident).
        #[arg(long, value_name = "SITE_ID")]
        replace: Option<String>,
    },
}

pub(super) fn run(ctx: &Ctx, cmd: Command) -> anyhow::Result<ExitCode> {
    match cmd {
        Command::Copy { to, from } => copy(ctx, &to, from),
        Command::Claim { replace } => claim(ctx, replace.as_deref()),
    }
}

fn claim(ctx: &Ctx, replace: Option<&str>) -> anyhow::Result<ExitCode> {
    use fencepost_ledger::status;
    let site = ctx.site()?;
    let config = site.root.join("fencepost.toml");
    let Some(mine) = site.config.ledger.site_id.clone() else {
        anyhow::bail!(
            "ledger claim: {} names no ledger.site_id: add site_id = {:?} under [ledger] (and commit it), then claim",
            config.display(),
            fencepost_site::new_site_id()
        );
    };
    let location = site.ledger_location()?;
    anyhow::ensure!(
        fencepost_ledger::exists(&location)?,
        "ledger claim: there is no ledger at {} (publish makes one, and claims it)",
        location.display()
    );
    let timeout = Duration::from_millis(site.config.ledger.busy_timeout_ms);
    let mut ledger = Ledger::open_at(&location, timeout)?;
    let before = ledger.read(status::site_claim)?;
    let was = before.site.clone();
    match (&was, replace) {
        (Some(t), _) if *t == mine => {}
        (Some(t), Some(r)) if t == r => {}
        (Some(t), _) => anyhow::bail!(
            "ledger claim: the ledger {} belongs to site {t:?}: to take it from that site, name it: `fencepost ledger claim --replace {t}` (only from the ledger's own site's checkout). Nothing was written",
            ledger.name()
        ),
        (None, Some(r)) => anyhow::bail!(
            "ledger claim: the ledger {} names no site, not {r:?}: claim it without --replace. Nothing was written",
            ledger.name()
        ),
        (None, None) => {}
    }
    if was.as_deref() != Some(mine.as_str()) {
        let took = ledger.write(|tx| status::replace_site(tx, &mine, was.as_deref()))?;
        anyhow::ensure!(
            took,
            "ledger claim: the ledger {} changed hands meanwhile; nothing was written: look again",
            ledger.name()
        );
    }
    let out = serde_json::json!({
        "ledger": ledger.name(),
        "site": mine,
        "was": was,
        "revision": before.revision,
    });
    ctx.emit(&out, || match &was {
        Some(w) if *w == mine => format!("the ledger {} is this site's already ({mine})", ledger.name()),
        Some(w) => format!(
            "the ledger {} now belongs to this site ({mine}), taken from {w} at publication revision {}",
            ledger.name(),
            before.revision
        ),
        None => format!(
            "the ledger {} now belongs to this site ({mine}), claimed at publication revision {}",
            ledger.name(),
            before.revision
        ),
    })?;
    Ok(ExitCode::SUCCESS)
}

fn copy(ctx: &Ctx, to: &str, from: Option<String>) -> anyhow::Result<ExitCode> {
    let site = ctx.site()?;
    // The site's ledger as every command finds it (FENCEPOST_LEDGER, ledger.url, ledger.path).
    let from = match from {
        Some(f) => Location::parse(&f, &site.root)?,
        None => site.ledger_location()?,
    };
    // A source that is not there is refused before anything opens it (which would begin a
    // new, empty ledger at a mistyped path or bucket URL).
    anyhow::ensure!(
        fencepost_ledger::exists(&from)?,
        "ledger copy: there is no ledger at {} to copy (run `fencepost publish` first, or give --from)",
        from.display()
    );
    let to = Location::parse(to, &site.root)?;
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
