mod site;

use super::Ctx;
use site::Site;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, clap::Subcommand)]
pub(super) enum Command {
    /// Print a new Ed25519 key pair for the transparency log ORIGIN (its name in checkpoints,
    /// a schema-less URL such as example.org/log): the signing key (a secret) and the verifier
    /// key readers check the log's checkpoints with.
    Keygen {
        /// The log's origin, which names its key.
        #[arg(value_name = "ORIGIN")]
        origin: String,
    },
    /// Check a site's published log end to end: the checkpoint's signature, every tile and
    /// entry, each reveal against its commitment and the item JSON served, and (--since)
    /// that the log extends a checkpoint saved before. URL: the site (https://…, http://…,
    /// file:///folder, or a folder such as public/current); the log is under
    /// /.well-known/fencepost/.
    Verify {
        #[arg(value_name = "URL")]
        url: String,
        /// The log's verifier key (`<origin>+<id>+<base64>`, as `tlog keygen` printed it).
        #[arg(long, value_name = "VKEY")]
        vkey: String,
        /// A checkpoint saved from an earlier check: the log must extend it.
        #[arg(long, value_name = "CHECKPOINT_FILE")]
        since: Option<PathBuf>,
        /// A witness's Ed25519 cosigner key (c2sp.org/tlog-cosignature; repeatable): the
        /// checkpoint must carry its valid cosignature, whose time is reported.
        #[arg(long, value_name = "WITNESS_VKEY")]
        witness: Vec<String>,
        /// The whole check's deadline over HTTP, in seconds (each request also waits at most
        /// 30 s): a server that answers slowly, on purpose or not, fails the check.
        #[arg(long, value_name = "SECONDS", default_value_t = 600)]
        deadline: u64,
    },
    /// A monitor, for cron: check the site's log as verify does (every revealed item's JSON
    /// against its commitment or its latest change entry), prove it extends the checkpoint
    /// the last run saved in DIR, and save the new one. Exits 1, naming what does not hold
    /// (a rewritten log, an item changed without a change entry), and then saves nothing.
    Watch {
        #[arg(value_name = "URL")]
        url: String,
        /// The log's verifier key.
        #[arg(long, value_name = "VKEY")]
        vkey: String,
        /// The monitor's own folder (created): the last checkpoint that held.
        #[arg(long, value_name = "DIR")]
        state: PathBuf,
        /// The whole check's deadline over HTTP, in seconds (each request also waits at most
        /// 30 s): a server that answers slowly, on purpose or not, fails the check.
        #[arg(long, value_name = "SECONDS", default_value_t = 600)]
        deadline: u64,
    },
    /// Print a c2sp.org/tlog-proof that ITEM's text was committed to in the log of the site
    /// at URL (the inclusion proof of its commit entry in the checkpoint served, the reveal as
    /// extra): keep it beside the item's JSON as `<id>.tlog-proof`.
    Prove {
        #[arg(value_name = "URL")]
        url: String,
        /// The item, `<collection>/<id>`.
        #[arg(value_name = "ITEM")]
        item: String,
        /// Check the checkpoint's signature with this verifier key before proving
        /// (recommended; every entry read is checked against the tree either way).
        #[arg(long, value_name = "VKEY")]
        vkey: Option<String>,
        /// The whole check's deadline over HTTP, in seconds (each request also waits at most
        /// 30 s): a server that answers slowly, on purpose or not, fails the check.
        #[arg(long, value_name = "SECONDS", default_value_t = 600)]
        deadline: u64,
    },
}

pub(super) fn run(ctx: &Ctx, cmd: Command) -> anyhow::Result<ExitCode> {
    match cmd {
        Command::Keygen { origin } => keygen(ctx, &origin),
        Command::Verify {
            url,
            vkey,
            since,
            witness,
            deadline,
        } => {
            let source = Site::parse(&url, Duration::from_secs(deadline))?;
            verify(ctx, &source, &url, &vkey, since, &witness)
        }
        Command::Prove {
            url,
            item,
            vkey,
            deadline,
        } => {
            let source = Site::parse(&url, Duration::from_secs(deadline))?;
            prove(ctx, &source, &item, vkey.as_deref())
        }
        Command::Watch {
            url,
            vkey,
            state,
            deadline,
        } => {
            let source = Site::parse(&url, Duration::from_secs(deadline))?;
            watch(ctx, &source, &vkey, &state)
        }
    }
}

fn keygen(ctx: &Ctx, origin: &str) -> anyhow::Result<ExitCode> {
    let keys = fencepost_tlog::note::generate(origin)?;
    let out = serde_json::json!({ "skey": keys.skey, "vkey": keys.vkey });
    ctx.emit(&out, || {
        format!(
            "signing key (a secret: keep it out of the repository and out of logs):\n{}\nverifier key (public: readers check the log's checkpoints with it):\n{}",
            keys.skey, keys.vkey
        )
    })?;
    Ok(ExitCode::SUCCESS)
}

fn verify(
    ctx: &Ctx,
    source: &Site,
    url: &str,
    vkey: &str,
    since: Option<PathBuf>,
    witnesses: &[String],
) -> anyhow::Result<ExitCode> {
    let witnesses = witnesses
        .iter()
        .map(|w| fencepost_tlog::witness::Witness::parse(w))
        .collect::<Result<Vec<_>, _>>()?;
    let saved = since
        .map(|p| std::fs::read(&p).map_err(|e| anyhow::anyhow!("--since {}: {e}", p.display())))
        .transpose()?;
    let report =
        fencepost_tlog::check::check_witnessed(source, vkey, saved.as_deref(), &witnesses)?;
    ctx.emit(&report, || {
        let kinds: Vec<String> = report
            .entries
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        let mut text = format!(
            "the log at {url} holds: {} entries ({}), signed by {}, root {}",
            report.size,
            kinds.join(", "),
            report.origin,
            report.root
        );
        if !report.revealed.is_empty() {
            text += &format!(
                "\n{} revealed items serve the JSON their commitment (or latest change) fixes: {}",
                report.revealed.len(),
                report.revealed.join(", ")
            );
        }
        text += &reveals_text(&report);
        if let Some(n) = report.consistent_with {
            text += &format!("\nit extends the log of {n} entries saved before");
        }
        for (name, time) in &report.witnessed {
            let at = fencepost_core::clock::Instant(*time as i64 * 1000).rfc3339();
            text += &format!("\ncosigned by {name} at {at}: the log held this much by then");
        }
        text
    })?;
    Ok(late_exit(&report))
}

/// What the log proves of each reveal, and from when: without a saved checkpoint, only the
/// order of entries (how many revisions before its reveal it was committed); with one, which
/// commitments it held — never "before the instant", which the log does not record.
fn reveals_text(report: &fencepost_tlog::check::Report) -> String {
    let mut text = String::new();
    for r in &report.reveals {
        text += &format!("\n  {}", r.describe());
    }
    if report.consistent_with.is_none() && !report.reveals.is_empty() {
        text += "\n(the log alone proves the order of its entries, not when they were made: save this checkpoint and check again with --since, or run `fencepost tlog watch`, to know what was committed before you looked)";
    }
    text
}

/// Exit 1 when a reveal's commitment is not in the checkpoint saved before, each named on
/// stderr (`--json` too: it is the command's failure).
fn late_exit(report: &fencepost_tlog::check::Report) -> ExitCode {
    for item in &report.late {
        eprintln!("error: {item}: revealed, but its commitment is not in the checkpoint you saved: its text was fixed after you last looked, not before its instant");
    }
    match report.late.is_empty() {
        true => ExitCode::SUCCESS,
        false => ExitCode::FAILURE,
    }
}

fn prove(ctx: &Ctx, source: &Site, item: &str, vkey: Option<&str>) -> anyhow::Result<ExitCode> {
    let proof = fencepost_tlog::check::prove(source, item, vkey)?;
    let text = String::from_utf8_lossy(&proof.to_text()).into_owned();
    let out = serde_json::json!({ "item": item, "index": proof.index, "proof": text });
    ctx.emit(&out, || text.trim_end().to_string())?;
    Ok(ExitCode::SUCCESS)
}

fn watch(
    ctx: &Ctx,
    source: &Site,
    vkey: &str,
    state: &std::path::Path,
) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(state)
        .map_err(|e| anyhow::anyhow!("--state {}: {e}", state.display()))?;
    let saved_path = state.join("checkpoint");
    let saved = match std::fs::read(&saved_path) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => anyhow::bail!("{}: {e}", saved_path.display()),
    };
    // Anything that does not hold — a log that does not extend the saved checkpoint, an
    // item's JSON changed without a change entry — fails here, naming it, and nothing is
    // saved: the next run compares with the last checkpoint that held. A reveal whose
    // commitment the saved checkpoint lacks is named (exit 1) once: the log itself holds, so
    // its checkpoint is saved and the next run checks from there.
    let report = fencepost_tlog::check::check(source, vkey, saved.as_deref())?;
    write_state(&saved_path, report.checkpoint.as_bytes())?;
    let out = serde_json::json!({
        "size": report.size,
        "previous_size": report.consistent_with,
        "entries": report.entries,
        "revealed": report.revealed,
        "reveals": report.reveals,
        "late": report.late,
        "checkpoint": report.checkpoint,
    });
    ctx.emit(&out, || {
        let mut text = match report.consistent_with {
            Some(n) => format!(
                "the log grew from {n} to {} entries, consistently; checkpoint saved in {}",
                report.size,
                state.display()
            ),
            None => format!(
                "first look: {} entries; checkpoint saved in {}",
                report.size,
                state.display()
            ),
        };
        let new = |r: &&fencepost_tlog::check::Reveal| {
            report.consistent_with.is_some_and(|n| r.entry >= n)
        };
        for r in report.reveals.iter().filter(new) {
            text += &format!("\n  {}", r.describe());
        }
        text
    })?;
    Ok(late_exit(&report))
}

/// Replaces a state file whole (written beside it, then renamed).
fn write_state(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).map_err(|e| anyhow::anyhow!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok(())
}
