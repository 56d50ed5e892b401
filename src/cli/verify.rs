use super::Ctx;
use fencepost::ledger::{audit, LedgerError};
use std::process::ExitCode;

pub fn run(ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let site = ctx.site()?;
    let mut l = site.open_ledger()?;
    let tx = l.read()?;
    let v = audit::verify(&tx).map_err(|source| LedgerError::Sql {
        path: site.ledger_path(),
        source,
    })?;
    drop(tx);
    let intact = v.first_break.is_none();
    ctx.emit(
        &serde_json::json!({ "intact": intact, "entries": v.entries, "tip": v.tip, "first_break": v.first_break }),
        || match &v.first_break {
            None => format!("audit chain intact: {} entries, tip {}", v.entries, v.tip),
            Some(b) => String::new() + &format!("audit chain BROKEN at entry {}: {}", b.seq, b.reason),
        },
    )?;
    if let Some(b) = &v.first_break {
        eprintln!("error: audit chain broken at entry {}: {}", b.seq, b.reason);
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
