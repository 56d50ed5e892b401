use super::Ctx;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A publication revision `R` (newest complete build of it) or a directory name `R-B`.
    revision: String,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitCode> {
    let site = ctx.site()?;
    let r = fencepost::build::admin::rollback(&site, &ctx.clock, &args.revision)?;
    ctx.emit(&r, || {
        format!(
            "public/current: {} -> {} (recorded in the audit log)",
            r.from.as_ref().map(|p| p.dir.as_str()).unwrap_or("(none)"),
            r.to.dir
        )
    })?;
    Ok(ExitCode::SUCCESS)
}
