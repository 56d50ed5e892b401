-- fencepost ledger on PostgreSQL, schema version 1: the schema SQLite reaches at its
-- version 4, in PostgreSQL's terms. Instants are BIGINT milliseconds since the Unix epoch
-- (UTC); flags are BIGINT 0/1, as in SQLite, so both engines answer with the same values.

CREATE TABLE job_leases (
    key        TEXT   PRIMARY KEY,
    owner_id   TEXT   NOT NULL,
    fence      BIGINT NOT NULL CHECK (fence >= 1),
    expires_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- The source_size/mtime/ino columns stay NULL here: the stat cache describes one host's
-- checkout, so with a shared ledger each host keeps its own (see publish::stat_cache).
CREATE TABLE items (
    id                  BIGINT PRIMARY KEY,
    source_path         TEXT   NOT NULL,
    source_hash         TEXT,
    source_size         BIGINT,
    source_mtime_ns     BIGINT,
    source_ino          BIGINT,
    wants_withdrawn     BIGINT NOT NULL DEFAULT 0 CHECK (wants_withdrawn IN (0, 1)),
    day                 TEXT   NOT NULL,
    publish_at          BIGINT NOT NULL,
    image_source        TEXT,
    state               TEXT   NOT NULL DEFAULT 'pending'
                        CHECK (state IN ('pending', 'processing', 'published', 'withdrawn')),
    attempts            BIGINT NOT NULL DEFAULT 0,
    last_error          TEXT,
    updated_at          BIGINT NOT NULL,
    parked_at           BIGINT,
    explicit_publish_at BIGINT
);
CREATE INDEX items_by_due ON items (publish_at, id);
CREATE INDEX items_gone ON items (id) WHERE source_hash IS NULL;

CREATE TABLE images (
    source       TEXT   PRIMARY KEY,
    sha256       TEXT,
    bytes        BIGINT,
    content_type TEXT,
    state        TEXT   NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'stored', 'failed')),
    attempts     BIGINT NOT NULL DEFAULT 0,
    last_error   TEXT,
    updated_at   BIGINT NOT NULL,
    parked_at    BIGINT
);
CREATE INDEX images_by_sha256 ON images (sha256);

CREATE TABLE pages (
    item_id            BIGINT PRIMARY KEY REFERENCES items (id),
    content_version    BIGINT NOT NULL CHECK (content_version >= 1),
    content_hash       TEXT   NOT NULL,
    source_hash        TEXT   NOT NULL,
    title              TEXT   NOT NULL,
    day                TEXT   NOT NULL,
    price              TEXT   NOT NULL,
    image_source       TEXT,
    image_sha256       TEXT,
    indexable          BIGINT NOT NULL CHECK (indexable IN (0, 1)),
    withdrawn          BIGINT NOT NULL DEFAULT 0 CHECK (withdrawn IN (0, 1)),
    revision           BIGINT NOT NULL,
    first_published_at BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL,
    commit_token       TEXT   NOT NULL
);
CREATE INDEX pages_by_revision ON pages (revision);
CREATE INDEX pages_public_by_day ON pages (day, item_id) WHERE withdrawn = 0;

CREATE TABLE page_bodies (
    item_id   BIGINT PRIMARY KEY REFERENCES pages (item_id),
    body_html TEXT   NOT NULL
);

CREATE TABLE site_state (
    id                   BIGINT PRIMARY KEY CHECK (id = 1),
    publication_revision BIGINT NOT NULL,
    ledger_id            TEXT,
    audit_tip_seq        BIGINT NOT NULL DEFAULT 0,
    audit_tip_hash       TEXT
);
INSERT INTO site_state (id, publication_revision, ledger_id)
VALUES (1, 0, replace(gen_random_uuid()::text, '-', ''));

CREATE TABLE audit_log (
    seq           BIGINT PRIMARY KEY,
    at            BIGINT NOT NULL,
    action        TEXT   NOT NULL,
    subject       TEXT   NOT NULL,
    revision      BIGINT NOT NULL,
    detail        TEXT   NOT NULL,
    previous_hash TEXT   NOT NULL,
    current_hash  TEXT   NOT NULL UNIQUE
);

-- The audit hash, byte for byte the one fencepost computes in Rust (audit::entry_hash):
-- each field as <byte length>:<bytes>; , sha256, lower-case hex. One plain expression, so
-- the planner inlines it (nested SQL functions cost ~70 us a call; this ~2 us).
CREATE FUNCTION fp_audit_hash(previous_hash TEXT, seq BIGINT, at BIGINT, action TEXT,
                              subject TEXT, revision BIGINT, detail TEXT) RETURNS TEXT
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT encode(sha256(convert_to(
        octet_length(convert_to(previous_hash, 'UTF8'))::text || ':' || previous_hash || ';' ||
        length(seq::text)::text || ':' || seq::text || ';' ||
        length(at::text)::text || ':' || at::text || ';' ||
        octet_length(convert_to(action, 'UTF8'))::text || ':' || action || ';' ||
        octet_length(convert_to(subject, 'UTF8'))::text || ':' || subject || ';' ||
        length(revision::text)::text || ':' || revision::text || ';' ||
        octet_length(convert_to(detail, 'UTF8'))::text || ':' || detail || ';',
        'UTF8')), 'hex')
$$;

-- The chain's anchor moves in the statement that appends.
CREATE FUNCTION fp_audit_anchor() RETURNS TRIGGER
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE site_state SET audit_tip_seq = NEW.seq, audit_tip_hash = NEW.current_hash WHERE id = 1;
    RETURN NEW;
END
$$;
CREATE TRIGGER audit_anchor AFTER INSERT ON audit_log
FOR EACH ROW EXECUTE FUNCTION fp_audit_anchor();

CREATE TABLE daily_results (
    puzzle_id    BIGINT NOT NULL,
    slot         BIGINT NOT NULL,
    session_id   TEXT   NOT NULL,
    outcome      TEXT   NOT NULL CHECK (outcome IN ('win', 'loss')),
    guesses_used BIGINT NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (puzzle_id, slot),
    UNIQUE (puzzle_id, session_id)
);

CREATE TABLE deploy_targets (
    target            TEXT PRIMARY KEY,
    probed_at         BIGINT,
    deployed_revision BIGINT,
    deployed_build    TEXT,
    deployed_manifest TEXT,
    deployed_at       BIGINT
);

CREATE TABLE deploy_ops (
    id         TEXT   PRIMARY KEY,
    target     TEXT   NOT NULL,
    kind       TEXT   NOT NULL CHECK (kind IN ('deploy', 'rollback')),
    status     TEXT   NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'failed')),
    step       TEXT   NOT NULL DEFAULT 'planned'
               CHECK (step IN ('planned', 'blobs', 'manifest', 'pointer', 'recorded', 'done')),
    plan       TEXT   NOT NULL,
    attempts   BIGINT NOT NULL DEFAULT 0,
    last_error TEXT,
    outcome    TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX deploy_ops_one_pending ON deploy_ops (target, kind) WHERE status = 'pending';
