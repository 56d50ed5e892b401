use super::Ctx;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// Where the site comes from: hugo or zola.
    from: fencepost_import::Dialect,
    /// The Hugo or Zola site (its folder, with hugo.toml/config.toml).
    src: PathBuf,
    /// Folder for the new fencepost site: absent or empty (an import is never mixed into an
    /// existing site).
    dst: PathBuf,
}

pub(super) fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitCode> {
    let r = fencepost_import::import(args.from, &args.src, &args.dst, ctx.clock.now())?;
    ctx.emit(&r, || {
        let mut out = format!(
            "imported {} items ({} drafts), {} plain pages, {} bundle files and {} static files into {}\n  collections: {}\n  taxonomies: {}\n  aliases: {}, shortcodes converted: {}, terms folded into another spelling: {}",
            r.items,
            r.drafts,
            r.plain_pages,
            r.bundle_files,
            r.static_files,
            r.site.display(),
            r.collections.join(", "),
            r.taxonomies.join(", "),
            r.aliases,
            r.shortcodes_converted,
            r.terms_folded,
        );
        if !r.moved.is_empty() {
            let n = r.moved.len();
            out.push_str(&format!("\nat a new URL ({n}, each redirected from its old one):"));
            for m in &r.moved {
                out.push_str(&format!("\n  {}: {} -> {}", m.file, m.from, m.to));
            }
        }
        if !r.not_converted.is_empty() {
            out.push_str(&format!("\nnot converted ({}):", r.not_converted.len()));
            for u in &r.not_converted {
                let line = u.line.map(|l| format!(":{l}")).unwrap_or_default();
                out.push_str(&format!("\n  {}{line}: {}: {}", u.file, u.what, u.why));
            }
        }
        out.push_str(&format!(
            "\nnext: fencepost --site {} publish --build",
            r.site.display()
        ));
        out
    })?;
    Ok(ExitCode::SUCCESS)
}
