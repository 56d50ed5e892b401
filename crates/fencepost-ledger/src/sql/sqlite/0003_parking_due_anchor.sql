-- Decided vs carried out, and the embargo rule, made explicit.

-- An item whose publication (or update, or withdrawal) failed publish.max_attempts times is
-- parked: no run retries it until `fencepost publish --retry ID` or a changed file re-arms it.
ALTER TABLE items ADD COLUMN parked_at INTEGER;

-- The file's own `publish_at`, if it has one. Without it an item is due at the end of its
-- `day` plus publish.grace_minutes *as configured now*: every run recomputes `publish_at` of
-- items not yet public, so a changed grace window applies to them in either direction.
ALTER TABLE items ADD COLUMN explicit_publish_at INTEGER;

-- Which rows carry an explicit publish_at cannot be told from the old schema: make the next
-- scan re-read every file (a stat that never matches), which fills the column.
UPDATE items SET source_mtime_ns = -1 WHERE source_hash IS NOT NULL;

-- Items whose file is gone: the sweep that forgets never-published ones reads only these.
CREATE INDEX items_gone ON items (id) WHERE source_hash IS NULL;

-- Images: parked like items after publish.max_attempts failed fetches.
ALTER TABLE images ADD COLUMN parked_at INTEGER;

-- The audit chain's anchor: the last entry's seq and hash, kept beside the publication
-- revision and moved by a trigger in the very statement that appends, so deleting the newest
-- entries (a truncated tail) no longer leaves a chain that verifies.
ALTER TABLE site_state ADD COLUMN audit_tip_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE site_state ADD COLUMN audit_tip_hash TEXT;
UPDATE site_state
   SET audit_tip_seq = coalesce((SELECT seq FROM audit_log ORDER BY seq DESC LIMIT 1), 0),
       audit_tip_hash = (SELECT current_hash FROM audit_log ORDER BY seq DESC LIMIT 1)
 WHERE id = 1;
CREATE TRIGGER audit_anchor AFTER INSERT ON audit_log
BEGIN
    UPDATE site_state SET audit_tip_seq = NEW.seq, audit_tip_hash = NEW.current_hash WHERE id = 1;
END;
