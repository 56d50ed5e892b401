use super::Ctx;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The collection (a `[collections.<name>]` table; `answers` on a site without any).
    collection: String,
    /// The item's title (a slug id is made from it).
    #[arg(long)]
    title: Option<String>,
    /// The item's id (default: the next free integer, or a slug of the title).
    #[arg(long)]
    id: Option<String>,
}

pub fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitCode> {
    let site = ctx.site()?;
    let w = fencepost::content::new::create(
        &site.root,
        &site.collections,
        &args.collection,
        args.title.as_deref(),
        args.id.as_deref(),
        ctx.clock.now(),
    )?;
    ctx.emit(&w, || w.path.clone())?;
    Ok(ExitCode::SUCCESS)
}
