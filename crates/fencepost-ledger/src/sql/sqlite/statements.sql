-- fencepost ledger statements, SQLite dialect.
-- The statements that read the same in both dialects are in sql/common/statements.sql.
-- Each block is one statement, named by the line above it; with the common file, this
-- file and sql/postgres/statements.sql define the same names with the
-- same parameters. Parameters are written :name.
-- The lease guard, repeated inside every statement that depends on a lease, is
--   EXISTS (SELECT 1 FROM job_leases WHERE key = :lease_key AND owner_id = :owner
--           AND fence = :fence AND expires_at > :now)

------------------------------------------------------------------------------ leases

-- name: lease.acquire
-- A missing key is created with fence 1; an expired lease changes hands with fence + 1; a
-- live one matches nothing.
INSERT INTO job_leases (key, owner_id, fence, expires_at, updated_at)
VALUES (:key, :owner, 1, :expires_at, :now)
ON CONFLICT (key) DO UPDATE SET
    owner_id = excluded.owner_id,
    fence = job_leases.fence + 1,
    expires_at = excluded.expires_at,
    updated_at = excluded.updated_at
WHERE job_leases.expires_at <= :now
RETURNING fence;

-- name: lease.lock
-- Writers are serial on SQLite (BEGIN IMMEDIATE), so reading the row is enough.
SELECT fence FROM job_leases
WHERE key = :lease_key AND owner_id = :owner AND fence = :fence AND expires_at > :now;

------------------------------------------------------------------------------ items

-- name: items.stat_cache
SELECT collection, item_key, source_path, source_hash, source_size, source_mtime_ns, source_ino
FROM items WHERE source_hash IS NOT NULL;

-- name: items.upsert_seen
-- A changed file (a new source hash) re-arms a parked item: the editor fixed something.
-- A new item's row id is the next free one. :host is who writes (source_host); an item
-- parked because this host's checkout disagreed is released when it now agrees (see the
-- PostgreSQL statement and publish/hosts.rs; a SQLite ledger has one host).
INSERT INTO items (collection, item_key, source_path, source_hash, source_size, source_mtime_ns,
                   source_ino, wants_withdrawn, day, publish_at, explicit_publish_at,
                   image_source, expire_at, updated_at, source_host)
VALUES (:collection, :key, :path, :hash, :size, :mtime_ns, :ino, :wants_withdrawn, :day,
        :publish_at, :explicit_publish_at, :image_source, :expire_at, :now, :host)
ON CONFLICT (collection, item_key) DO UPDATE SET
    parked_at = CASE WHEN items.source_hash IS excluded.source_hash
                      AND items.disagree_host IS NOT excluded.source_host THEN items.parked_at END,
    attempts = CASE WHEN items.source_hash IS excluded.source_hash
                     AND items.disagree_host IS NOT excluded.source_host THEN items.attempts ELSE 0 END,
    disagree_hash = CASE WHEN items.source_hash IS excluded.source_hash
                          AND items.disagree_host IS NOT excluded.source_host THEN items.disagree_hash END,
    disagree_host = CASE WHEN items.source_hash IS excluded.source_hash
                          AND items.disagree_host IS NOT excluded.source_host THEN items.disagree_host END,
    source_host = CASE WHEN items.source_hash IS excluded.source_hash
                        AND items.source_path IS excluded.source_path THEN items.source_host
                   ELSE excluded.source_host END,
    explicit_publish_at = excluded.explicit_publish_at,
    source_path = excluded.source_path, source_hash = excluded.source_hash,
    source_size = excluded.source_size, source_mtime_ns = excluded.source_mtime_ns,
    source_ino = excluded.source_ino, wants_withdrawn = excluded.wants_withdrawn,
    day = excluded.day, publish_at = excluded.publish_at, image_source = excluded.image_source,
    expire_at = excluded.expire_at, updated_at = excluded.updated_at
WHERE items.source_hash IS NOT excluded.source_hash OR items.source_path IS NOT excluded.source_path
   OR items.source_size IS NOT excluded.source_size OR items.source_mtime_ns IS NOT excluded.source_mtime_ns
   OR items.source_ino IS NOT excluded.source_ino OR items.disagree_host IS excluded.source_host;

-- name: items.mark_gone
UPDATE items SET source_hash = NULL, source_size = NULL, source_mtime_ns = NULL,
                 source_ino = NULL, updated_at = :now, source_host = :host,
                 parked_at = CASE WHEN disagree_host IS NULL THEN parked_at END,
                 disagree_host = NULL, disagree_hash = NULL
WHERE collection = :collection AND item_key = :key AND source_hash IS NOT NULL;

-- name: items.host_row
SELECT source_host, source_hash, disagree_host, disagree_hash, parked_at IS NOT NULL
FROM items WHERE collection = :collection AND item_key = :key;

-- name: items.park_disagreement
UPDATE items SET parked_at = coalesce(parked_at, :now), updated_at = :now,
                 disagree_host = :host, disagree_hash = :hash
WHERE collection = :collection AND item_key = :key
  AND source_host IS :row_host AND source_hash IS :row_hash;

-- name: items.touch_expired
-- An item not public whose expiry has passed will never be public: touching it (updated_at
-- at or after its expiry) takes it out of public.next_change, which has no clock.
UPDATE items SET updated_at = :now
WHERE state <> 'published' AND expire_at IS NOT NULL AND expire_at <= :now
  AND updated_at < expire_at;

-- name: items.not_public_due
-- What an item not yet public is due by: publish::due recomputes it under the collections as
-- configured now, so a changed grace period or time zone applies in either direction.
SELECT id, collection, day, explicit_publish_at, publish_at FROM items WHERE state <> 'published';

-- name: items.set_due
UPDATE items SET publish_at = :publish_at WHERE id = :id AND state <> 'published';

-- name: items.candidates
-- Every item except those published and current, from the partial index that holds exactly
-- them (0014_candidates.sql: its condition is this one, word for word), so a publish reads
-- what may be due, not every item (a unit test in sqlite.rs holds the plan to the index; not
-- forced with INDEXED BY, so a ledger whose index went missing is slower, never stopped). The
-- caller sorts them into due order.
-- include: items.columns
FROM items i
LEFT JOIN pages p ON p.item_id = i.id
LEFT JOIN images img ON img.source = i.image_source
WHERE NOT (i.state = 'published' AND i.source_hash IS NOT NULL AND i.wants_withdrawn = 0
           AND i.page_hash IS i.source_hash AND i.expire_at IS NULL);

-- name: items.record_failure
-- After :max_attempts attempts the item is parked.
UPDATE items SET state = CASE WHEN state = 'processing' THEN 'pending' ELSE state END,
                 last_error = :error, updated_at = :now,
                 parked_at = CASE WHEN attempts >= :max_attempts THEN :now ELSE parked_at END
WHERE id = :item
  AND EXISTS (SELECT 1 FROM job_leases WHERE key = :lease_key AND owner_id = :owner
              AND fence = :fence AND expires_at > :now);

------------------------------------------------------------------------------ the commit batch

-- fragment: pages.due_by_ledger_clock
-- SQLite's clock is the host's, so the instant the command decided by (:now) is the
-- ledger's clock already (see the PostgreSQL fragment).
(:check_due = 0 OR :due_at <= :now)

-- name: pages.write_page
INSERT INTO pages (item_id, content_version, content_hash, source_hash, title, day, data,
                   image_source, image_sha256, indexable, withdrawn, revision, first_published_at,
                   updated_at, commit_token, collection, item_key, due_at, summary_html, terms)
SELECT :item, 1, :content_hash, :source_hash, :title, :day, :data,
       :image_source, :image_sha256, :indexable, 0, 0, :now, :now, :token,
       i.collection, i.item_key, :due_at, :summary_html, :terms
FROM items i WHERE i.id = :item
  AND EXISTS (SELECT 1 FROM job_leases WHERE key = :lease_key AND owner_id = :owner
              AND fence = :fence AND expires_at > :now)
  AND i.state = :expected_state AND i.source_hash = :source_hash
  AND
-- include: pages.due_by_ledger_clock
  AND (:image_sha256 IS NULL OR EXISTS (SELECT 1 FROM images WHERE source = :image_source
                                         AND sha256 = :image_sha256 AND state = 'stored'))
  AND coalesce((SELECT content_version FROM pages WHERE item_id = :item), 0) = :expected_version
ON CONFLICT (item_id) DO UPDATE SET
    content_version = pages.content_version + 1,
    content_hash = excluded.content_hash,
    source_hash = excluded.source_hash,
    title = excluded.title, day = excluded.day, data = excluded.data, due_at = excluded.due_at,
    summary_html = excluded.summary_html, terms = excluded.terms,
    image_source = CASE WHEN excluded.image_sha256 IS NULL THEN pages.image_source ELSE excluded.image_source END,
    image_sha256 = coalesce(excluded.image_sha256, pages.image_sha256),
    indexable = max(pages.indexable, excluded.indexable),
    withdrawn = 0,
    updated_at = excluded.updated_at,
    commit_token = excluded.commit_token
WHERE pages.withdrawn = 1 OR pages.content_hash <> excluded.content_hash;

-- name: pages.withdraw_page
-- It remembers whether the page keeps a notice, and the source hash of the file that asked
-- for the withdrawal (none when the file is gone), so only a later edit re-renders the notice.
UPDATE pages SET withdrawn = 1, content_version = content_version + 1, updated_at = :now,
                 commit_token = :token, notice = :notice,
                 source_hash = coalesce(:source_hash, source_hash)
WHERE item_id = :item AND withdrawn = 0 AND content_version = :expected_version
  AND EXISTS (SELECT 1 FROM job_leases WHERE key = :lease_key AND owner_id = :owner
              AND fence = :fence AND expires_at > :now)
  AND EXISTS (SELECT 1 FROM items WHERE id = :item AND state = :expected_state
              AND source_hash IS :source_hash);

-- name: pages.renotice_page
-- A withdrawn item's notice follows its file (redacted title or body, a reason added): its
-- public fields rewritten, still withdrawn, when they differ. `updated_at` stays: it is the
-- instant of the withdrawal the notice shows.
UPDATE pages SET content_version = content_version + 1, content_hash = :content_hash,
                 source_hash = :source_hash, title = :title, day = :day, data = :data,
                 summary_html = :summary_html, terms = :terms, commit_token = :token
WHERE item_id = :item AND withdrawn = 1 AND content_version = :expected_version
  AND content_hash <> :content_hash
  AND EXISTS (SELECT 1 FROM job_leases WHERE key = :lease_key AND owner_id = :owner
              AND fence = :fence AND expires_at > :now)
  AND EXISTS (SELECT 1 FROM items WHERE id = :item AND state = :expected_state
              AND source_hash IS :source_hash);

-- name: pages.record_same_notice
-- The file of a withdrawn item changed but its notice comes out the same: remember the new
-- source hash (no revision).
UPDATE pages SET source_hash = :source_hash
WHERE item_id = :item AND commit_token <> :token AND withdrawn = 1 AND content_hash = :content_hash
  AND EXISTS (SELECT 1 FROM job_leases WHERE key = :lease_key AND owner_id = :owner
              AND fence = :fence AND expires_at > :now)
  AND EXISTS (SELECT 1 FROM items WHERE id = :item AND state = :expected_state
              AND source_hash IS :source_hash);

-- name: pages.write_body
INSERT INTO page_bodies (item_id, body_html) SELECT :item, :body_html
WHERE EXISTS (SELECT 1 FROM pages WHERE item_id = :item AND commit_token = :token)
ON CONFLICT (item_id) DO UPDATE SET body_html = excluded.body_html;

-- fragment: audit.next_entry
-- The next entry of the audit chain: its sequence number and hash follow the tip's, its
-- revision is the site's. Each statement that appends one adds the condition it appends on.
INSERT INTO audit_log (seq, at, action, subject, revision, detail, previous_hash, current_hash)
SELECT tip.seq + 1, :now, :action, :subject, rev.r, :detail, tip.hash,
       fp_audit_hash(tip.hash, tip.seq + 1, :now, :action, :subject, rev.r, :detail)
FROM (SELECT coalesce((SELECT seq FROM audit_log ORDER BY seq DESC LIMIT 1), 0) AS seq,
             coalesce((SELECT current_hash FROM audit_log ORDER BY seq DESC LIMIT 1),
                      '0000000000000000000000000000000000000000000000000000000000000000') AS hash) AS tip,
     (SELECT publication_revision AS r FROM site_state WHERE id = 1) AS rev

-- name: pages.audit
-- include: audit.next_entry
WHERE EXISTS (SELECT 1 FROM pages WHERE item_id = :item AND commit_token = :token);

------------------------------------------------------------------------------ audit

-- name: audit.lock
-- Writers are serial on SQLite: nothing to lock.
SELECT 1;

-- name: audit.append_once
-- A receipt a re-driven step may try to write twice: appended unless one with the same
-- action and subject exists.
-- include: audit.next_entry
WHERE NOT EXISTS (SELECT 1 FROM audit_log WHERE action = :action AND subject = :subject);

------------------------------------------------------------------------------ images

-- name: images.record_stored
INSERT INTO images (source, sha256, bytes, content_type, state, attempts, last_error, updated_at)
SELECT :source, :sha256, :bytes, :content_type, 'stored', 1, NULL, :now
WHERE EXISTS (SELECT 1 FROM job_leases WHERE key = :lease_key AND owner_id = :owner
              AND fence = :fence AND expires_at > :now)
ON CONFLICT (source) DO UPDATE SET
    sha256 = excluded.sha256, bytes = excluded.bytes, content_type = excluded.content_type,
    state = 'stored', attempts = images.attempts + 1, last_error = NULL, updated_at = excluded.updated_at;

-- name: images.record_failed
-- A failure never replaces a stored image. After :max_attempts failures the image is parked
-- (:max_attempts NULL: never).
INSERT INTO images (source, state, attempts, last_error, updated_at, parked_at)
SELECT :source, 'failed', 1, :error, :now, CASE WHEN 1 >= :max_attempts THEN :now END
WHERE EXISTS (SELECT 1 FROM job_leases WHERE key = :lease_key AND owner_id = :owner
              AND fence = :fence AND expires_at > :now)
ON CONFLICT (source) DO UPDATE SET
    state = CASE WHEN images.state = 'stored' THEN 'stored' ELSE 'failed' END,
    attempts = images.attempts + 1, last_error = excluded.last_error, updated_at = excluded.updated_at,
    parked_at = CASE WHEN images.attempts + 1 >= :max_attempts THEN excluded.updated_at
                     ELSE images.parked_at END;

------------------------------------------------------------------------------ results

-- name: results.insert
-- The bare max(slot) sits alone in its own scalar subquery: one index lookup.
INSERT INTO daily_results (puzzle_id, slot, session_id, outcome, guesses_used, created_at)
SELECT :puzzle, next.slot, :session, :outcome, :guesses, :now
FROM (SELECT coalesce((SELECT max(slot) FROM daily_results WHERE puzzle_id = :puzzle), 0) + 1 AS slot) AS next
WHERE next.slot <= :cap
ON CONFLICT (puzzle_id, session_id) DO NOTHING
RETURNING slot;

------------------------------------------------------------------------------ the build's reads

-- name: public.pages
-- In table order: the caller sorts by (day, id), cheaper than the index order's lookups.
-- Withdrawn pages come too, flagged (collections with on_withdraw = "notice" keep a notice
-- page at their URL); nothing but that notice is ever built from them.
SELECT p.item_id, p.title, p.day, p.data, p.indexable, p.image_sha256,
       (SELECT img.content_type FROM images img WHERE img.sha256 = p.image_sha256 LIMIT 1),
       p.content_hash, p.revision, p.first_published_at, p.updated_at, p.collection,
       p.item_key, p.due_at, p.withdrawn, p.summary_html, p.terms, p.notice,
       (SELECT t.json_digest FROM tlog_items t WHERE t.item_id = p.item_id)
FROM pages p NOT INDEXED;

-- name: public.pages_since
-- The pages a public change touched after revision :since (every change stamps its pages
-- with the revision it made, and no page row is ever deleted): what a build that kept the
-- pages of revision :since reads to have this snapshot's.
SELECT p.item_id, p.title, p.day, p.data, p.indexable, p.image_sha256,
       (SELECT img.content_type FROM images img WHERE img.sha256 = p.image_sha256 LIMIT 1),
       p.content_hash, p.revision, p.first_published_at, p.updated_at, p.collection,
       p.item_key, p.due_at, p.withdrawn, p.summary_html, p.terms, p.notice,
       (SELECT t.json_digest FROM tlog_items t WHERE t.item_id = p.item_id)
FROM pages p WHERE p.revision > :since;

------------------------------------------------------------------------------ deploys

-- name: deploys.insert
INSERT INTO deploy_ops (id, target, kind, status, step, plan, attempts, created_at, updated_at)
SELECT :id, :target, :kind, 'pending', 'planned', :plan, 1, :now, :now
WHERE EXISTS (SELECT 1 FROM job_leases WHERE key = :lease_key AND owner_id = :owner
              AND fence = :fence AND expires_at > :now)
ON CONFLICT DO NOTHING;

-- name: deploys.advance
UPDATE deploy_ops SET step = :to, updated_at = :now, last_error = NULL,
       status = CASE WHEN :to = 'done' THEN 'done' ELSE status END,
       outcome = coalesce(:outcome, outcome)
WHERE id = :id AND step = :from AND status = 'pending'
  AND EXISTS (SELECT 1 FROM job_leases WHERE key = :lease_key AND owner_id = :owner
              AND fence = :fence AND expires_at > :now);

-- name: deploys.record_failure
UPDATE deploy_ops SET last_error = :error, updated_at = :now,
       status = CASE WHEN attempts >= :max THEN 'failed' ELSE status END
WHERE id = :id AND status = 'pending'
  AND EXISTS (SELECT 1 FROM job_leases WHERE key = :lease_key AND owner_id = :owner
              AND fence = :fence AND expires_at > :now);

-- name: deploys.retry
-- Refused (no row) when another operation on the target is pending.
UPDATE OR IGNORE deploy_ops SET status = 'pending', attempts = 0, updated_at = :now
WHERE id = :id AND status = 'failed';

-- name: deploys.record_deployed
INSERT INTO deploy_targets (target, deployed_revision, deployed_build, deployed_manifest, deployed_at)
SELECT :target, :revision, :build, :manifest, :now
WHERE EXISTS (SELECT 1 FROM job_leases WHERE key = :lease_key AND owner_id = :owner
              AND fence = :fence AND expires_at > :now)
ON CONFLICT (target) DO UPDATE SET deployed_revision = excluded.deployed_revision,
    deployed_build = excluded.deployed_build, deployed_manifest = excluded.deployed_manifest,
    deployed_at = excluded.deployed_at;
