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
    // withdrawn item's (its URL's history belongs to that item). No ledger yet: none. A
    // ledger that cannot be reached (offline, no credentials, a database down) does not stop
    // an author writing: the ids the tree has are enough to propose one, and `publish` checks
    // against the ledger itself.
    let known: std::collections::HashSet<String> = if site.ledger_exists() {
        let read = site.open_ledger().and_then(|mut ledger| {
            ledger.read(|tx| fencepost_ledger::items::keys_of(tx, &args.collection))
        });
        match read {
            Ok(ids) => ids.into_iter().collect(),
            Err(e) => {
                tracing::warn!(error = %e, "the ledger cannot be read: the id is chosen from the files here alone (publish checks it against the ledger)");
                Default::default()
            }
        }
    } else {
        Default::default()
    };
    let w = fencepost_site::content::new::create(
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
