use super::Ctx;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// How many of the newest complete revisions to keep (the current one is always kept).
    #[arg(long, value_name = "N")]
    keep: usize,
    /// Keep a revision that was live less than this many seconds ago, whatever --keep says
    /// (default 300: a static server, or an origin within its pointer TTL, may still be
    /// reading it). With --to, also never remove an object uploaded less than this long ago.
    #[arg(long, value_name = "SECS")]
    grace_secs: Option<u64>,
    /// Collect the bucket at URL instead of public/.
    #[arg(long, value_name = "URL")]
    to: Option<String>,
    /// Delete every revision beyond --keep (and the spare an earlier gc set aside), instead
    /// of keeping the newest one removed whole as the spare the next build starts from.
    #[arg(long)]
    no_spare: bool,
}

pub(super) fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitCode> {
    let site = ctx.site()?;
    if let Some(url) = &args.to {
        let url = &super::real_target(url)?;
        let r = fencepost_deploy::history::bucket::gc(
            &site,
            &ctx.clock,
            url,
            args.keep,
            args.grace_secs.unwrap_or(300),
        )?;
        ctx.emit(&r, || remote_human(&r))?;
        return Ok(ExitCode::SUCCESS);
    }
    let r = fencepost_deploy::history::local::gc(
        &site,
        &ctx.clock,
        args.keep,
        args.grace_secs.unwrap_or(300),
        !args.no_spare,
    )?;
    let removed_previews = local_previews(&site, ctx)?;
    let mut out = serde_json::to_value(&r)?;
    out["removed_previews"] = serde_json::json!(removed_previews);
    ctx.emit(&out, || {
        format!(
            "kept {} revision(s){}, removed {}: {}{}{}{}",
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
            match &r.spare {
                Some(s) => format!(" ({s} set aside as the next build's spare)"),
                None => String::new(),
            },
            if r.abandoned_removed > 0 {
                format!(
                    "; removed {} abandoned temporary folder(s)",
                    r.abandoned_removed
                )
            } else {
                String::new()
            },
            match removed_previews.is_empty() {
                true => String::new(),
                false => format!(
                    "; removed preview(s) older than preview.keep_days: {}",
                    removed_previews.join(", ")
                ),
            }
        )
    })?;
    Ok(ExitCode::SUCCESS)
}

/// This site's own previews (`.fencepost/previews/`) older than `preview.keep_days`, removed.
fn local_previews(site: &fencepost_site::Site, ctx: &Ctx) -> anyhow::Result<Vec<String>> {
    if !site
        .state_dir()
        .join(fencepost_bucket::preview::AREA)
        .exists()
    {
        return Ok(Vec::new());
    }
    let url = super::preview::local_target(site)?;
    let remote = fencepost_bucket::remote::Remote::open(&url)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let keep_days = site.config.preview.keep_days;
    Ok(rt.block_on(fencepost_deploy::preview::prune(
        &remote,
        ctx.clock.now(),
        keep_days,
    ))?)
}

/// `gc --to`'s human form.
fn remote_human(r: &fencepost_deploy::history::bucket::RemoteGc) -> String {
    format!(
        "{}: kept {} ({}){}; removed {} manifest(s), {} shard(s), {} blob(s); {} unreferenced object(s) younger than the grace period left{}",
        r.target,
        r.kept.len(),
        r.kept.join(", "),
        if r.retired_kept.is_empty() {
            String::new()
        } else {
            format!(" and {} live within the grace period ({})", r.retired_kept.len(), r.retired_kept.join(", "))
        },
        r.removed_manifests,
        r.removed_shards,
        r.removed_blobs,
        r.young_kept,
        match r.removed_previews.is_empty() {
            true => String::new(),
            false => format!("; removed preview(s) older than preview.keep_days: {}", r.removed_previews.join(", ")),
        }
    )
}
