use super::Ctx;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The collection (a `[collections.<name>]` table; `answers` on a site without any).
    collection: String,
    /// The item's title (a slug id is made from it).
    #[arg(long)]
    title: Option<String>,
    /// The item's id (default: the next free integer, or a slug of the title). An id the
    /// ledger has ever had (a withdrawn item's too) is refused.
    #[arg(long)]
    id: Option<String>,
}

pub(super) fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitCode> {
    let site = ctx.site()?;
    // The ids the ledger keeps of this collection: a new item never takes one, not even a
    // withdrawn item's (its URL's history belongs to that item). No ledger yet: none.
    let known: std::collections::HashSet<String> = if site.ledger_exists() {
        let mut ledger = site.open_ledger()?;
        ledger
            .read(|tx| fencepost::ledger::items::keys_of(tx, &args.collection))?
            .into_iter()
            .collect()
    } else {
        Default::default()
    };
    let w = fencepost::content::new::create(
        &site.root,
        &site.collections,
        &args.collection,
        args.title.as_deref(),
        args.id.as_deref(),
        &known,
        ctx.clock.now(),
    )?;
    ctx.emit(&w, || w.path.clone())?;
    Ok(ExitCode::SUCCESS)
}
