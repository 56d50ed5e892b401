-- fencepost ledger, schema version 1.
-- Instants are INTEGER milliseconds since the Unix epoch (UTC).

-- Leases with fencing tokens. A live lease (expires_at > now) never changes hands; an expired
-- one does, and its fence goes up by one. A released lease has expires_at = 0; the row stays,
-- so the fence for a key only ever grows.
CREATE TABLE job_leases (
    key        TEXT    PRIMARY KEY,
    owner_id   TEXT    NOT NULL,
    fence      INTEGER NOT NULL CHECK (fence >= 1),
    expires_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;

-- One row per item the content tree has shown us. The source_* columns describe the file as
-- last scanned (also the stat cache); source_hash is NULL once the file is gone.
CREATE TABLE items (
    id              INTEGER PRIMARY KEY,
    source_path     TEXT    NOT NULL,
    source_hash     TEXT,
    source_size     INTEGER,
    source_mtime_ns INTEGER,
    source_ino      INTEGER,
    wants_withdrawn INTEGER NOT NULL DEFAULT 0 CHECK (wants_withdrawn IN (0, 1)),
    day             TEXT    NOT NULL,
    publish_at      INTEGER NOT NULL,
    image_source    TEXT,
    state           TEXT    NOT NULL DEFAULT 'pending'
                    CHECK (state IN ('pending', 'processing', 'published', 'withdrawn')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT,
    updated_at      INTEGER NOT NULL
) STRICT;
CREATE INDEX items_by_due ON items (publish_at, id);

-- Images, fetched once per source and stored content-addressed by sha256.
CREATE TABLE images (
    source       TEXT    PRIMARY KEY,
    sha256       TEXT,
    bytes        INTEGER,
    content_type TEXT,
    state        TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'stored', 'failed')),
    attempts     INTEGER NOT NULL DEFAULT 0,
    last_error   TEXT,
    updated_at   INTEGER NOT NULL
) STRICT;
CREATE INDEX images_by_sha256 ON images (sha256);

-- The public pages, render-ready. content_version goes up by one per public change;
-- commit_token is the token of the batch that last wrote the row.
CREATE TABLE pages (
    item_id            INTEGER PRIMARY KEY REFERENCES items (id),
    content_version    INTEGER NOT NULL CHECK (content_version >= 1),
    content_hash       TEXT    NOT NULL,
    source_hash        TEXT    NOT NULL,
    title              TEXT    NOT NULL,
    day                TEXT    NOT NULL,
    price              TEXT    NOT NULL,
    image_source       TEXT,
    image_sha256       TEXT,
    indexable          INTEGER NOT NULL CHECK (indexable IN (0, 1)),
    withdrawn          INTEGER NOT NULL DEFAULT 0 CHECK (withdrawn IN (0, 1)),
    revision           INTEGER NOT NULL,
    first_published_at INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL,
    commit_token       TEXT    NOT NULL
) STRICT;
CREATE INDEX pages_by_revision ON pages (revision);
-- The build reads public pages in (day, id) order.
CREATE INDEX pages_public_by_day ON pages (day, item_id) WHERE withdrawn = 0;

-- Page bodies apart from the pages, so reading the page index never drags bodies along.
CREATE TABLE page_bodies (
    item_id   INTEGER PRIMARY KEY REFERENCES pages (item_id),
    body_html TEXT    NOT NULL
) STRICT;

-- The one global publication revision: +1 per public change, in the batch that made it.
CREATE TABLE site_state (
    id                   INTEGER PRIMARY KEY CHECK (id = 1),
    publication_revision INTEGER NOT NULL
) STRICT;
INSERT INTO site_state (id, publication_revision) VALUES (1, 0);

-- Hash-chained audit log: current_hash = sha256 over previous_hash and the entry's fields.
CREATE TABLE audit_log (
    seq           INTEGER PRIMARY KEY,
    at            INTEGER NOT NULL,
    action        TEXT    NOT NULL,
    subject       TEXT    NOT NULL,
    revision      INTEGER NOT NULL,
    detail        TEXT    NOT NULL,
    previous_hash TEXT    NOT NULL,
    current_hash  TEXT    NOT NULL UNIQUE
) STRICT;

-- Players' results: one row per (puzzle, session), a dense slot per puzzle.
CREATE TABLE daily_results (
    puzzle_id    INTEGER NOT NULL,
    slot         INTEGER NOT NULL,
    session_id   TEXT    NOT NULL,
    outcome      TEXT    NOT NULL CHECK (outcome IN ('win', 'loss')),
    guesses_used INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (puzzle_id, slot),
    UNIQUE (puzzle_id, session_id)
) STRICT, WITHOUT ROWID;
