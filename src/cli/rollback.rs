use super::Ctx;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// A publication revision `R` (newest complete build of it) or a directory name `R-B`.
    revision: String,
    /// Roll back the bucket at URL instead of public/current (a revision the bucket holds).
    #[arg(long, value_name = "URL")]
    to: Option<String>,
}

pub(super) fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitCode> {
    let site = ctx.site()?;
    if let Some(url) = &args.to {
        let url = &super::real_target(url)?;
        let r =
            fencepost_deploy::history::bucket::rollback(&site, &ctx.clock, url, &args.revision)?;
        ctx.emit(&r, || {
            if r.operation.is_none() {
                return format!("{}: {} is live already; nothing moved", r.target, r.to);
            }
            format!(
                "{}: {} -> {} (held until a higher revision is deployed; recorded in the audit log)",
                r.target,
                r.from.as_deref().unwrap_or("(none)"),
                r.to
            )
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let r = fencepost_deploy::history::local::rollback(&site, &ctx.clock, &args.revision)?;
    ctx.emit(&r, || {
        format!(
            "public/current: {} -> {} (recorded in the audit log)",
            r.from.as_ref().map(|p| p.dir.as_str()).unwrap_or("(none)"),
            r.to.dir
        )
    })?;
    Ok(ExitCode::SUCCESS)
}
