-- The transparency log (issue 50): as SQLite's 0013_transparency.sql, which says what each
-- column holds.
CREATE TABLE tlog_entries (
    idx    BIGINT PRIMARY KEY CHECK (idx >= 0),
    entry  text   NOT NULL,
    hashes text   NOT NULL
);

CREATE TABLE tlog_items (
    item_id      BIGINT PRIMARY KEY REFERENCES items (id),
    json         text   NOT NULL,
    json_digest  text   NOT NULL,
    salt         text,
    commitment   text,
    commit_index BIGINT,
    shown        text   CHECK (shown IN ('public', 'withdraw', 'expire')),
    shown_digest text
);

ALTER TABLE site_state ADD COLUMN tlog_revision BIGINT NOT NULL DEFAULT 0;
