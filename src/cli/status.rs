use super::Ctx;
use fencepost_ledger::{self as ledger};
use std::process::ExitCode;

pub(super) fn run(ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let site = ctx.site()?;
    let now = ctx.clock.now();
    let s = match site.ledger_exists() {
        true => {
            let mut l = site.open_ledger()?;
            l.read(|tx| ledger::status::read(tx, now, site.collections.naming))?
        }
        // No ledger yet (nothing was ever published): status writes nothing, and says so.
        false => ledger::status::Status::none(),
    };
    // Held items come from a read of the tree (writing nothing): a broken file is held
    // whether or not a publish ran since it broke.
    // A tree that cannot be read is said, not fatal: status is what an operator runs when
    // something is wrong.
    let ((held, drafts), tree_error) = match fencepost_publish::held(&site, &ctx.clock) {
        Ok(h) => (h, None),
        Err(e) => ((Vec::new(), Vec::new()), Some(e.to_string())),
    };
    let held_pages = fencepost_build::held_in(&site.public_dir().join("current"));
    let out = Out {
        status: &s,
        held: &held,
        held_pages: &held_pages,
        drafts: &drafts,
        tree_error,
    };
    ctx.emit(&out, || human(&out))?;
    Ok(ExitCode::SUCCESS)
}

#[derive(serde::Serialize)]
struct Out<'a> {
    #[serde(flatten)]
    status: &'a ledger::status::Status,
    /// Items held because a file of theirs is broken.
    held: &'a [fencepost_publish::Held],
    /// Pages of the live revision whose template failed for them alone (the build held them).
    held_pages: &'a [fencepost_build::HeldPage],
    /// Items kept out of everything public by `draft = true`.
    drafts: &'a [fencepost_publish::Draft],
    /// Why the content tree could not be read (then `held` is empty: unknown).
    #[serde(skip_serializing_if = "Option::is_none")]
    tree_error: Option<String>,
}

/// The status in human form.
fn human(o: &Out<'_>) -> String {
    let (s, held) = (o.status, o.held);
    let show = |v: &serde_json::Value| fencepost_core::item::Shown(v.clone()).to_string();
    let mut out = match s.ledger_id.is_empty() {
        true => {
            "no ledger yet: nothing has been published (`fencepost publish` makes it)\n".to_string()
        }
        false => String::new(),
    };
    out += &format!("publication revision {}\n", s.revision);
    for (state, n) in &s.items {
        out += &format!("  {state}: {n}\n");
    }
    out += &format!("  live leases: {}\n", s.leases);
    out += &format!(
        "  audit log: {} entries, tip {}\n",
        s.audit_entries,
        s.audit_tip.as_deref().unwrap_or("-")
    );
    if let Some(t) = s.next_embargo_at {
        out += &format!("  next embargo ends at {t}\n");
    }
    for p in &s.parked {
        if p.disagreement.is_some() {
            out += &format!(
                "  item {} PARKED (since {}): {}\n",
                show(&p.id),
                p.since,
                p.error.replace("ID", &show(&p.id))
            );
            continue;
        }
        out += &format!(
            "  item {} PARKED after {} attempts (since {}): {}\n    re-arm it: fencepost publish --retry {}\n",
            show(&p.id),
            p.attempts,
            p.since,
            p.error,
            show(&p.id)
        );
    }
    for i in &s.parked_images {
        out += &format!(
            "  image {} PARKED after {} failed fetches: {}\n",
            i.source, i.attempts, i.error
        );
    }
    out += &deploys(s);
    out += &held_lines(held, o.held_pages);
    for f in s
        .failing
        .iter()
        .filter(|f| !s.parked.iter().any(|p| p.id == f.id))
    {
        out += &format!("  item {}: last error: {}\n", show(&f.id), f.error);
    }
    for d in o.drafts {
        out += &format!(
            "  item {} DRAFT ({}): never published while it says draft = true\n",
            d.id, d.file
        );
    }
    if let Some(e) = &o.tree_error {
        out += &format!("  content cannot be read, so held items are unknown: {e}\n");
    }
    out
}

/// The items held by a broken file, and the live revision's pages held by their template.
fn held_lines(held: &[fencepost_publish::Held], pages: &[fencepost_build::HeldPage]) -> String {
    let mut out = String::new();
    for h in held {
        let when = match (h.due, h.due_at) {
            (true, Some(t)) => format!("DUE since {t}"),
            (true, None) => "due: cannot be told".to_string(),
            (false, Some(t)) => format!("due at {t}"),
            (false, None) => String::new(),
        };
        out += &format!(
            "  item {} HELD ({when}): {}\n    fix {}, then publish\n",
            h.id, h.error, h.file
        );
    }
    for h in pages {
        let template = h.template.as_deref().unwrap_or("its template");
        out += &format!(
            "  page {} ({}) HELD in the live revision: {}\n    fix {template}, then build\n",
            h.path, h.what, h.why
        );
    }
    out
}

/// What each target has, and the deploy operations not done.
fn deploys(s: &ledger::status::Status) -> String {
    let mut out = String::new();
    for t in &s.targets {
        if let Some(r) = t.revision {
            out += &format!(
                "  deployed to {}: revision {}-{} at {}\n",
                t.target,
                r,
                t.build.as_deref().unwrap_or("?"),
                t.at.map(|a| a.rfc3339()).unwrap_or_default()
            );
        }
    }
    for d in &s.deploys {
        out += &format!(
            "  {} operation {} on {}: {} at step {} after {} attempt(s){}\n",
            d.kind,
            d.id,
            d.target,
            if d.status == "failed" {
                "PARKED"
            } else {
                "pending"
            },
            d.step.as_str(),
            d.attempts,
            d.last_error
                .as_deref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        );
        if d.status == "failed" {
            out += &format!(
                "    re-arm it: fencepost deploy --retry {id}; or close it: fencepost deploy --abandon {id}\n",
                id = d.id
            );
        }
    }
    out
}
