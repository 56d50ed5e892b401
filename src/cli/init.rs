use super::Ctx;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Folder for the new site (created if missing).
    dir: PathBuf,
    /// The kind of site: answers (a daily game's answers, the default), advisories
    /// (security advisories public at their own instant) or posts (a blog or newsletter).
    #[arg(long, value_name = "KIND", default_value = "answers")]
    starter: fencepost::init::Starter,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitCode> {
    let written = fencepost::init::scaffold_starter(&args.dir, ctx.clock.now(), args.starter)?;
    let files: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
    ctx.emit(
        &serde_json::json!({ "site": args.dir, "written": files }),
        || {
            format!(
                "created a fencepost site in {}\n  {}\nnext: fencepost --site {} publish",
                args.dir.display(),
                files.join("\n  "),
                args.dir.display()
            )
        },
    )?;
    Ok(ExitCode::SUCCESS)
}
