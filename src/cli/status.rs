use super::Ctx;
use fencepost::ledger::{self};
use std::process::ExitCode;

pub fn run(ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let site = ctx.site()?;
    let mut l = site.open_ledger()?;
    let now = ctx.clock.now();
    let s = l.read(|tx| ledger::status::read(tx, now, site.collections.naming))?;
    let show = |v: &serde_json::Value| fencepost::item::Shown(v.clone()).to_string();
    ctx.emit(&s, || {
        let mut out = format!("publication revision {}\n", s.revision);
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
                if d.status == "failed" { "PARKED" } else { "pending" },
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
        for f in s.failing.iter().filter(|f| !s.parked.iter().any(|p| p.id == f.id)) {
            out += &format!("  item {}: last error: {}\n", show(&f.id), f.error);
        }
        out
    })?;
    Ok(ExitCode::SUCCESS)
}
