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
    ctx.emit(
        &serde_json::json!({ "site": args.dir, "written": files }),
        || {
            format!(
                "created a fencepost site in {}\n  {}\nnext: fencepost --site {} publish --build{}",
                args.dir.display(),
                files.join("\n  "),
                args.dir.display(),
                match &args.ci {
                    Some(url) => format!(
                        " && fencepost --site {} deploy (with AWS_* credentials for {url})",
                        args.dir.display()
                    ),
                    None => String::new(),
                }
            )
        },
    )?;
    Ok(ExitCode::SUCCESS)
}
