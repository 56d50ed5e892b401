use super::Ctx;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// Folder for the new site (created if missing).
    dir: PathBuf,
    /// The kind of site: answers (a daily game's answers, the default), advisories
    /// (security advisories public at their own instant) or posts (a blog or newsletter).
    #[arg(long, value_name = "KIND", default_value = "answers")]
    starter: fencepost::init::Starter,
    /// Set the site up for stateless CI: its ledger in the bucket at URL/ledger (no database
    /// server), its output deployed to URL/www, and a GitHub Actions workflow that publishes,
    /// builds and deploys (URL: s3://bucket/prefix, gs://…, az://…, file:///folder).
    #[arg(long, value_name = "URL")]
    ci: Option<String>,
}

pub(super) fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitCode> {
    let written = fencepost::init::scaffold_with(
        &args.dir,
        ctx.clock.now(),
        args.starter,
        args.ci.as_deref(),
    )?;
    let files: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
    let private = args.ci.as_deref().map(|url| {
        let (ledger, site) = fencepost::init::ci::locations(url);
        format!(
            "the ledger at {ledger} must never be public: its log and snapshots name every embargoed item, its instant and its image sources. Serve only {site} (a CDN or the Worker in front of that prefix; never a public bucket policy or website endpoint over the whole bucket), or move the ledger to a private bucket of its own (ledger.url)"
        )
    });
    let mut out = serde_json::json!({ "site": args.dir, "written": files });
    if let Some(p) = &private {
        out["ledger_private"] = serde_json::json!(p);
    }
    ctx.emit(
        &out,
        || {
            format!(
                "created a fencepost site in {}\n  {}\nnext: fencepost --site {} publish --build{}",
                args.dir.display(),
                files.join("\n  "),
                args.dir.display(),
                match &args.ci {
                    Some(url) => format!(
                        " && fencepost --site {} deploy (with AWS_* credentials for {url})\nimportant: {}",
                        args.dir.display(),
                        private.as_deref().unwrap_or_default()
                    ),
                    None => String::new(),
                }
            )
        },
    )?;
    Ok(ExitCode::SUCCESS)
}
