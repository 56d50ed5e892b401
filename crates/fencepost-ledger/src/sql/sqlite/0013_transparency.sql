-- The transparency log (issue 50, docs/transparency.md). Its entries in order, each with the
-- stored hashes appending it added to the RFC 6962 tree (Go sumdb's storage order), as hex
-- concatenated: a build reads O(log n) rows to append, never the whole log.
CREATE TABLE tlog_entries (
    idx    INTEGER PRIMARY KEY CHECK (idx >= 0),
    entry  TEXT    NOT NULL,
    hashes TEXT    NOT NULL
) STRICT;

-- What the log knows of each item: the item's JSON as last recorded (an item not public yet:
-- read from its file by publish; a public one: written in its commit batch), the commitment
-- to it (hex salt, hex sha256(salt || JSON)) and the commitment's index once logged, and what
-- the log has said of the item since its reveal (shown, and the digest of the JSON it vouches
-- for). The salt never leaves the ledger before the item's reveal. The JSON comes last: a
-- read of the short columns never walks its overflow pages.
CREATE TABLE tlog_items (
    item_id      INTEGER PRIMARY KEY REFERENCES items (id),
    json_digest  TEXT    NOT NULL,
    salt         TEXT,
    commitment   TEXT,
    commit_index INTEGER,
    shown        TEXT    CHECK (shown IN ('public', 'withdraw', 'expire')),
    shown_digest TEXT,
    json         TEXT    NOT NULL
) STRICT;
-- A build reads the commitments no entry holds yet: few, among every item's row.
CREATE INDEX tlog_items_unlogged ON tlog_items (item_id)
    WHERE commit_index IS NULL AND commitment IS NOT NULL AND shown IS NULL;

-- The publication revision the log last caught up with: a build appends what pages changed
-- after it.
ALTER TABLE site_state ADD COLUMN tlog_revision INTEGER NOT NULL DEFAULT 0;
