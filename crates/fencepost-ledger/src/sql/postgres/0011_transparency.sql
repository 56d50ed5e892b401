-- The transparency log (issue 50): as SQLite's 0013_transparency.sql, which says what each
-- column holds.
CREATE TABLE tlog_entries (
    idx    BIGINT PRIMARY KEY CHECK (idx >= 0),
    entry  text   NOT NULL,
    hashes text   NOT NULL
);

CREATE TABLE tlog_items (
    item_id      BIGINT PRIMARY KEY REFERENCES items (id),
    json_digest  text   NOT NULL,
    salt         text,
    commitment   text,
    commit_index BIGINT,
    shown        text   CHECK (shown IN ('public', 'withdraw', 'expire')),
    shown_digest text,
    json         text   NOT NULL
);
CREATE INDEX tlog_items_unlogged ON tlog_items (item_id)
    WHERE commit_index IS NULL AND commitment IS NOT NULL AND shown IS NULL;

ALTER TABLE site_state ADD COLUMN tlog_revision BIGINT NOT NULL DEFAULT 0;
