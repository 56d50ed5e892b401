use super::Ctx;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Lease length in seconds (default: publish.lease_secs in the config, 180).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    lease_secs: Option<u64>,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitCode> {
    let site = ctx.site()?;
    let opts = fencepost::publish::Options {
        lease_secs: args.lease_secs.unwrap_or(site.config.publish.lease_secs),
    };
    let r = fencepost::publish::run(&site, &ctx.clock, &opts)?;
    ctx.emit(&r, || {
        let ids = |v: &[fencepost::content::ItemId]| {
            v.iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut out = format!("publication revision {}\n", r.revision);
        for (label, list) in [
            ("published", &r.published),
            ("updated", &r.updated),
            ("withdrawn", &r.withdrawn),
            ("skipped (held by another run)", &r.skipped_locked),
            ("lease lost (nothing written)", &r.lease_lost),
            ("conflict (nothing written)", &r.conflict),
        ] {
            if !list.is_empty() {
                out += &format!("  {label}: {} [{}]\n", list.len(), ids(list));
            }
        }
        out += &format!("  unchanged: {}\n", r.unchanged);
        if r.embargoed > 0 {
            out += &format!(
                "  embargoed: {} (next at {})\n",
                r.embargoed,
                r.next_embargo_at.map(|t| t.rfc3339()).unwrap_or_default()
            );
        }
        for f in &r.failed {
            out += &format!("  failed: item {}: {} (retried next run)\n", f.id, f.error);
        }
        out
    })?;
    Ok(ExitCode::SUCCESS)
}
