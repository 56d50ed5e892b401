use super::Ctx;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// How many of the newest complete revisions to keep (the current one is always kept).
    #[arg(long, value_name = "N")]
    keep: usize,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitCode> {
    let site = ctx.site()?;
    let r = fencepost::build::admin::gc(&site, args.keep)?;
    ctx.emit(&r, || {
        format!(
            "kept {} revision(s), removed {}: {}{}",
            r.kept.len(),
            r.removed.len(),
            r.removed.join(", "),
            if r.abandoned_removed > 0 {
                format!(
                    "; removed {} abandoned temporary folder(s)",
                    r.abandoned_removed
                )
            } else {
                String::new()
            }
        )
    })?;
    Ok(ExitCode::SUCCESS)
}
