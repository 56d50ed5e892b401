use super::Ctx;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// How many of the newest complete revisions to keep (the current one is always kept).
    #[arg(long, value_name = "N")]
    keep: usize,
    /// Keep a revision that was live less than this many seconds ago, whatever --keep says:
    /// a static server or a reader may still be reading it.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    grace_secs: u64,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitCode> {
    let site = ctx.site()?;
    let r = fencepost::build::admin::gc(&site, &ctx.clock, args.keep, args.grace_secs)?;
    ctx.emit(&r, || {
        format!(
            "kept {} revision(s){}, removed {}: {}{}",
            r.kept.len(),
            if r.in_grace.is_empty() {
                String::new()
            } else {
                format!(
                    " and {} live within the grace period ({})",
                    r.in_grace.len(),
                    r.in_grace.join(", ")
                )
            },
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
