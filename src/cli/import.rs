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
            "imported {} items ({} drafts), {} plain pages, {} bundle files, {} section assets and {} static files into {}\n  collections: {}\n  taxonomies: {}\n  aliases: {}, shortcodes converted: {}, terms folded into another spelling: {}",
            r.items,
            r.drafts,
            r.plain_pages,
            r.bundle_files,
            r.section_assets,
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
            for m in r.moved.iter().take(EXAMPLES) {
                out.push_str(&format!("\n  {}: {} -> {}", m.file, m.from, m.to));
            }
            more(&mut out, n);
        }
        if !r.not_converted.is_empty() {
            out.push_str(&format!("\nnot converted ({}):", r.not_converted.len()));
            out.push_str(&by_reason(&r.not_converted));
        }
        out.push_str(&format!(
            "\nnext: fencepost --site {} publish --build",
            r.site.display()
        ));
        out
    })?;
    Ok(ExitCode::SUCCESS)
}

/// How many lines of a group the human report shows: `--json` lists every one.
const EXAMPLES: usize = 3;

fn more(out: &mut String, n: usize) {
    if n > EXAMPLES {
        let rest = n - EXAMPLES;
        out.push_str(&format!("\n  … and {rest} more (--json lists every one)"));
    }
}

/// The lines not converted, grouped by their reason (one real theme's report was 394 lines,
/// most of them one reason): the reason with its count, then a few examples.
fn by_reason(lines: &[fencepost_import::Unconverted]) -> String {
    let mut groups: Vec<(String, Vec<&fencepost_import::Unconverted>)> = Vec::new();
    for u in lines {
        let why = reason(&u.why);
        match groups.iter_mut().find(|(w, _)| *w == why) {
            Some((_, g)) => g.push(u),
            None => groups.push((why, vec![u])),
        }
    }
    let mut out = String::new();
    for (why, g) in groups {
        out.push_str(&format!("\n  {} × {why}", g.len()));
        for u in g.iter().take(EXAMPLES) {
            let line = u.line.map(|l| format!(":{l}")).unwrap_or_default();
            out.push_str(&format!("\n    {}{line}: {}", u.file, u.what));
        }
        if g.len() > EXAMPLES {
            let rest = g.len() - EXAMPLES;
            out.push_str(&format!("\n    … and {rest} more (--json lists every one)"));
        }
    }
    out
}

/// A line's reason without what it names: each `` `name` `` (a shortcode's, a function's)
/// as `` `…` ``, so one reason is one group whatever it names (the examples name them).
fn reason(why: &str) -> String {
    let mut out = String::with_capacity(why.len());
    let mut parts = why.split('`');
    if let Some(first) = parts.next() {
        out.push_str(first);
    }
    for (i, part) in parts.enumerate() {
        match i % 2 {
            0 => out.push_str("`…"),
            _ => {
                out.push('`');
                out.push_str(part);
            }
        }
    }
    out
}
