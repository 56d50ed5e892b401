use super::Ctx;
use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// Address to listen on: PORT (on 127.0.0.1), HOST:PORT or localhost:PORT (port 0 picks
    /// a free one; the JSON says which).
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR", value_parser = super::parse_bind)]
    bind: SocketAddr,
    /// Editors' live preview: watch content/, templates/, static/ and the config, rebuild
    /// in memory on every save (embargoed items included, with a PREVIEW banner) and reload
    /// open pages. Writes nothing to the ledger or public/.
    #[arg(long, conflicts_with = "from")]
    watch: bool,
    /// Serve the bucket at URL (what `fencepost deploy` writes: s3://…, gs://…, az://…,
    /// file:///…) instead of public/current.
    #[arg(long, value_name = "URL")]
    from: Option<String>,
}

pub(super) fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitCode> {
    // Serving a bucket needs no site: outside a site folder, the defaults serve it.
    let outside = !ctx.site_dir.join(fencepost_config::CONFIG_FILE).exists();
    let site = match (outside, &args.from) {
        (true, Some(_)) => fencepost_site::Site::unconfigured(&ctx.site_dir)?,
        _ => ctx.site()?,
    };
    let root = site.root.display().to_string();
    let mode = if args.watch {
        "watch"
    } else if args.from.is_some() {
        "bucket"
    } else {
        "origin"
    };
    let from = args.from.as_deref().map(super::real_target).transpose()?;
    let args = Args {
        from: from.clone(),
        ..args
    };
    let base = site.config.base_path();
    let ready = |addr: std::net::SocketAddr| {
        let at = format!("http://{addr}{base}/");
        let _ = ctx.emit(
            &serde_json::json!({ "listening": addr.to_string(), "mode": mode, "site": root, "url": at }),
            || {
                if mode == "watch" {
                    format!("previewing {root} at {at} (live reload on save; Ctrl-C stops)")
                } else if let Some(url) = &from {
                    format!("serving {url} at {at} (Ctrl-C stops)")
                } else {
                    format!("serving {root}/public/current at {at} (Ctrl-C stops)")
                }
            },
        );
        let _ = std::io::stdout().flush();
    };
    match args.watch {
        true => fencepost::preview::run(site, ctx.clock, args.bind, ready)?,
        false => {
            let opts = fencepost_serve::Options {
                bind: args.bind,
                from: args.from,
            };
            fencepost_serve::run(site, ctx.clock, opts, ready)?
        }
    }
    Ok(ExitCode::SUCCESS)
}
