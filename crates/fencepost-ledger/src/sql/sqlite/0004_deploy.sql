-- Deploys to object storage as a saga: a frozen plan, a step cursor, attempts, parking.

-- Targets this ledger has written to: when their conditional writes were probed, and what
-- is deployed there (decided vs carried out: only the `recorded` step writes these).
CREATE TABLE deploy_targets (
    target            TEXT    PRIMARY KEY,
    probed_at         INTEGER,
    deployed_revision INTEGER,
    deployed_build    TEXT,
    deployed_manifest TEXT,
    deployed_at       INTEGER
) STRICT;

-- One row per operation. `plan` is frozen when the row is made and never recomputed: a
-- resumed operation verifies what earlier steps left and redoes what is missing.
CREATE TABLE deploy_ops (
    id         TEXT    PRIMARY KEY,
    target     TEXT    NOT NULL,
    kind       TEXT    NOT NULL CHECK (kind IN ('deploy', 'rollback')),
    status     TEXT    NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'failed')),
    step       TEXT    NOT NULL DEFAULT 'planned'
               CHECK (step IN ('planned', 'blobs', 'manifest', 'pointer', 'recorded', 'done')),
    plan       TEXT    NOT NULL,
    attempts   INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    outcome    TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;

-- At most one live operation of a kind per target: two deployers that both decide to plan
-- race here, and the loser's insert fails instead of starting a second saga.
CREATE UNIQUE INDEX deploy_ops_one_pending ON deploy_ops (target, kind) WHERE status = 'pending';
