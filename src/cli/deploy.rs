use super::Ctx;
use fencepost_deploy::targets::Outcome;
use fencepost_deploy::{self as deploy, Report};
use std::io::IsTerminal;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The target: s3://bucket/prefix (endpoint, region and credentials from AWS_*), gs://…,
    /// az://…, or file:///absolute/path. Default: deploy.to in fencepost.toml.
    #[arg(long, value_name = "URL")]
    to: Option<String>,
    /// The revision to deploy, `R` or `R-B` (default: the one public/current names).
    #[arg(long, value_name = "R|R-B")]
    revision: Option<String>,
    /// Re-arm the parked operation ID (see `fencepost status`) before deploying.
    #[arg(long, value_name = "ID", conflicts_with = "abandon")]
    retry: Option<String>,
    /// Close the parked operation ID as abandoned (audited), and deploy nothing.
    #[arg(long, value_name = "ID")]
    abandon: Option<String>,
    /// Take over a bucket another ledger owns: the pointer moves to this ledger's revision
    /// whatever revision the other ledger had there (audited as `adopt`).
    #[arg(long)]
    adopt: bool,
    /// Re-upload what the bucket's live revision lacks or holds corrupt (see `verify --to`)
    /// from the local revision, as a journaled operation.
    #[arg(long, conflicts_with_all = ["revision", "adopt", "abandon"])]
    repair: bool,
    /// Refuse to deploy a site whose base_url is a local address (localhost, 127.0.0.1, …):
    /// its feeds, sitemap and robots.txt would point there. Without it, a warning.
    #[arg(long)]
    strict: bool,
}

pub(super) fn human(r: &Report) -> String {
    let what = format!("{} to {}", r.id, r.target);
    let mut out = match r.outcome {
        Outcome::Deployed => format!(
            "deployed {what}: {} blob(s) uploaded ({} bytes), {} already there; pointer {}\n",
            r.blobs_uploaded, r.bytes_uploaded, r.blobs_present, r.pointer
        ),
        Outcome::AlreadyDeployed => format!("{what}: already deployed, nothing to do\n"),
        Outcome::Superseded => {
            format!("{what}: a higher revision is already live there; nothing to do\n")
        }
        Outcome::Held => format!(
            "{what}: a rollback holds the target below a higher revision; publish something new, or `fencepost rollback --to` it\n"
        ),
        Outcome::SkippedLocked => {
            format!("{what}: another deploy is doing the work right now; nothing to do\n")
        }
        Outcome::Failed => format!(
            "deploying {what} FAILED: {}\n  the next `fencepost deploy` resumes it; after deploy.max_attempts it is parked (fencepost status)\n",
            r.error.as_deref().unwrap_or("?")
        ),
        Outcome::NotLive | Outcome::Parked => format!(
            "{what}: NOT LIVE: {}\n",
            r.error.as_deref().unwrap_or("?")
        ),
        Outcome::Interrupted => format!(
            "{what}: interrupted on request; the next `fencepost deploy` resumes it\n"
        ),
        Outcome::Abandoned => format!("{what}: the parked operation is closed as abandoned (audited)\n"),
        Outcome::Repaired => format!(
            "repaired {what}: {} object(s) uploaded again ({} bytes)\n",
            r.blobs_uploaded, r.bytes_uploaded
        ),
    };
    if r.resumed {
        out += "  (resumed an operation an earlier run had started)\n";
    }
    if let Some(op) = &r.operation {
        out += &format!("  operation {op}\n");
    }
    out
}

pub(super) fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitCode> {
    let site = ctx.site()?;
    let bar = if std::io::stderr().is_terminal() && !ctx.json {
        indicatif::ProgressBar::new(0).with_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} uploading {pos}/{len} blobs {wide_bar} {eta}",
            )
            .expect("valid progress template"),
        )
    } else {
        indicatif::ProgressBar::hidden()
    };
    let progress = |done: u64, total: u64| {
        bar.set_length(total);
        bar.set_position(done);
    };
    let r = deploy::run(
        &site,
        &ctx.clock,
        &deploy::Options {
            to: args
                .to
                .or_else(|| site.config.deploy.to.clone())
                .map(|u| super::real_target(&u))
                .transpose()?,
            revision: args.revision,
            retry: args.retry,
            allow_future_entries: ctx.allow_future_now,
            strict: args.strict,
            abandon: args.abandon,
            adopt: args.adopt,
            repair: args.repair,
            cancel: None,
            owner: None,
        },
        &progress,
    )?;
    bar.finish_and_clear();
    ctx.emit(&r, || human(&r))?;
    Ok(if r.outcome.is_failure() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
