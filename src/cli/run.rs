use super::Ctx;
use fencepost::run::{self, CycleReport, Event};
use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// Deploy every new build to deploy.to (as `fencepost deploy`).
    #[arg(long)]
    deploy: bool,
    /// Serve public/current at ADDR in the same process (as `fencepost serve`; port 0 picks a
    /// free one, the first JSON line says which).
    #[arg(long, value_name = "ADDR", value_parser = super::parse_bind)]
    serve: Option<SocketAddr>,
    /// Serve Prometheus metrics at http://ADDR/metrics.
    #[arg(long, value_name = "ADDR", value_parser = super::parse_bind)]
    metrics: Option<SocketAddr>,
    /// Stop after N cycles (a one-shot run is --cycles 1).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    cycles: Option<u64>,
}

fn human(r: &CycleReport) -> String {
    let mut out = format!("cycle {} (revision {})", r.cycle, r.revision);
    if let Some(p) = &r.publish {
        for (label, n) in [
            ("published", p.published.len()),
            ("updated", p.updated.len()),
            ("withdrawn", p.withdrawn.len()),
        ] {
            if n > 0 {
                out += &format!(", {label} {n}");
            }
        }
    }
    if let Some(b) = &r.build {
        if !b.already_built {
            out += &format!(", built {}", b.id);
        }
    }
    if let Some(d) = &r.deploy {
        out += &format!(
            ", deploy {}",
            serde_json::to_value(d.outcome).unwrap_or_default()
        );
    }
    for l in r.lags.iter().chain(&r.caught_up) {
        if let Some(ms) = l.live_lag_ms {
            out += &format!("\n  {} live {ms} ms after its instant", l.item);
        }
    }
    for h in &r.held_pages {
        out += &format!("\n  HELD: {} ({}): {}", h.path, h.what, h.why);
    }
    if let Some(e) = &r.error {
        out += &format!("\n  FAILED: {e}");
        if let Some(t) = r.retry_at {
            out += &format!(" (retrying at {t})");
        }
    }
    if let Some(t) = r.next_change_at {
        out += &format!("\n  next change at {t}");
    }
    out
}

pub(super) fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitCode> {
    if args.deploy {
        // Fail before anything starts when there is nowhere to deploy.
        let site = ctx.site()?;
        let to = site
            .config
            .deploy
            .to
            .clone()
            .ok_or(fencepost_deploy::targets::DeployError::NoTarget)?;
        super::real_target(&to)?;
    }
    let opts = run::Options {
        deploy: args.deploy,
        serve: args.serve,
        metrics: args.metrics,
        max_cycles: args.cycles,
    };
    let root = ctx.site_dir.display().to_string();
    // The site's path under its host, for the line saying where it is served (a site that
    // does not load fails in the first cycle, with its own error).
    let base = ctx.site().map(|s| s.config.base_path()).unwrap_or_default();
    run::run(&ctx.site_dir, ctx.clock, &opts, &mut |event| {
        let _ = match event {
            Event::Listening { serve, metrics } => ctx.emit(
                &serde_json::json!({
                    "listening": serve.map(|a| a.to_string()),
                    "metrics": metrics.map(|a| a.to_string()),
                    "site": root,
                }),
                || {
                    let mut s = format!("running {root}");
                    if let Some(a) = serve {
                        s += &format!(", serving public/current at http://{a}{base}/");
                    }
                    if let Some(a) = metrics {
                        s += &format!(", metrics at http://{a}/metrics");
                    }
                    s + " (Ctrl-C stops)"
                },
            ),
            Event::Cycle(r) => ctx.emit(r, || human(r)),
        };
        let _ = std::io::stdout().flush();
    })?;
    Ok(ExitCode::SUCCESS)
}
