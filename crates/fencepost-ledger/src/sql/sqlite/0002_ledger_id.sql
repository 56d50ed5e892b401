-- Every ledger gets a random id, recorded in the manifest of every revision built from it,
-- so a build can tell its own output from the output of another (an emptied, lost or
-- replaced ledger) instead of restarting revision numbers on top of it.
ALTER TABLE site_state ADD COLUMN ledger_id TEXT;
UPDATE site_state SET ledger_id = lower(hex(randomblob(16))) WHERE id = 1 AND ledger_id IS NULL;
