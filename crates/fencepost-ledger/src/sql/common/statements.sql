-- fencepost ledger statements that read the same in both dialects (SQLite and PostgreSQL).
-- The loader (src/ledger/db.rs) reads this file and then the dialect's own, sql/sqlite/ or
-- sql/postgres/statements.sql, which hold only what differs; a name is defined once in all.
-- Parameters are written :name. The lease guard, repeated inside every statement that
-- depends on a lease, is
--   EXISTS (SELECT 1 FROM job_leases WHERE key = :lease_key AND owner_id = :owner
--           AND fence = :fence AND expires_at > :now)

------------------------------------------------------------------------------ leases

-- name: lease.release
UPDATE job_leases SET expires_at = 0, updated_at = :now
WHERE key = :key AND owner_id = :owner AND fence = :fence;

-- name: lease.release_owner
UPDATE job_leases SET expires_at = 0, updated_at = :now
WHERE owner_id = :owner AND expires_at > :now;

-- name: lease.extend
UPDATE job_leases SET expires_at = :expires_at, updated_at = :now
WHERE key = :key AND owner_id = :owner AND fence = :fence AND expires_at > :now;

-- name: lease.holds
SELECT EXISTS (SELECT 1 FROM job_leases WHERE key = :lease_key AND owner_id = :owner
               AND fence = :fence AND expires_at > :now);

-- name: lease.count_live
SELECT count(*) FROM job_leases WHERE expires_at > :now;

-- name: lease.fence
-- The fence of `key`'s lease, held or not (how many times it was taken over).
SELECT fence FROM job_leases WHERE key = :key;

-- name: lease.live
-- Whether anyone holds `key` now (a run waiting for another's work to commit).
SELECT count(*) FROM job_leases WHERE key = :key AND expires_at > :now;

------------------------------------------------------------------------------ items

-- name: items.forget_unpublished
-- A never-published item whose file is gone leaves no trace, once no run holds it.
DELETE FROM items
WHERE source_hash IS NULL AND state IN ('pending', 'processing')
  AND NOT EXISTS (SELECT 1 FROM pages WHERE item_id = items.id)
  AND NOT EXISTS (SELECT 1 FROM job_leases WHERE key = 'publication:' || items.id AND expires_at > :now);

-- name: items.id_of
SELECT id FROM items WHERE collection = :collection AND item_key = :key;

-- name: items.placed
-- Where every item the ledger keeps stands: what its URL is made from, whether it is public
-- (or withdrawn) and whether it has a file. Read when a file changed on a site with more
-- than one collection, so a new item never takes another collection's URL.
SELECT collection, item_key, day, publish_at, state, source_hash IS NOT NULL FROM items;

-- name: items.aliased
-- The public items that have aliases, with their data (the alias check of publish).
SELECT i.collection, i.item_key, p.data FROM pages p JOIN items i ON i.id = p.item_id
WHERE i.state = 'published' AND p.data LIKE '%"aliases"%';

-- name: items.published_by_collection
-- How many public items each collection has (the guard against withdrawing one whole).
SELECT collection, COUNT(*) FROM items WHERE state = 'published' GROUP BY collection;

-- name: items.due_of
-- A held item's due instant and state, as the ledger last accepted them.
SELECT publish_at, state FROM items WHERE collection = :collection AND item_key = :key;

-- name: items.keys_of
-- Every id the ledger has kept of a collection: public, withdrawn or waiting (`fencepost new`
-- never gives a new item one of them).
SELECT item_key FROM items WHERE collection = :collection;

-- name: items.count
-- Every item the ledger keeps: those items.candidates leaves out are the rest. An index
-- answers it (every item's row is not read).
SELECT count(*) FROM items;

-- name: items.terms_by_file
-- Published terms by file, for checking a new file's spellings against them.
SELECT i.source_path, p.terms FROM pages p JOIN items i ON i.id = p.item_id
WHERE p.terms <> '' AND p.withdrawn = 0 AND i.source_hash IS NOT NULL;

-- fragment: items.columns
-- What an item's view reads (`items.rs`, `view_from_row`, maps the row in this order).
SELECT i.id, i.state, i.source_path, i.source_hash, i.wants_withdrawn, i.publish_at,
       i.image_source, img.state = 'stored' AND img.sha256 IS NOT NULL,
       p.content_version, p.source_hash, p.indexable, p.image_source, p.image_sha256, p.withdrawn,
       i.attempts, i.parked_at, i.collection, i.item_key, i.expire_at, p.notice

-- name: items.every
-- Every item (publish --rerender plans them all).
-- include: items.columns
FROM items i
LEFT JOIN pages p ON p.item_id = i.id
LEFT JOIN images img ON img.source = i.image_source;

-- name: items.view
-- include: items.every
WHERE i.id = :id;

-- name: items.mark_processing
UPDATE items SET state = 'processing', attempts = attempts + 1, updated_at = :now
WHERE id = :item AND state IN ('pending', 'processing', 'withdrawn')
  AND EXISTS (SELECT 1 FROM job_leases WHERE key = :lease_key AND owner_id = :owner
              AND fence = :fence AND expires_at > :now);

-- name: items.not_yet_due
-- See items::not_yet_due.
UPDATE items SET state = CASE WHEN state = 'processing' THEN 'pending' ELSE state END,
                 attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END
WHERE id = :item
  AND EXISTS (SELECT 1 FROM job_leases WHERE key = :lease_key AND owner_id = :owner
              AND fence = :fence AND expires_at > :now);

-- name: items.claim
-- Counts an attempt at an update or a withdrawal (a publication counts in mark_processing).
UPDATE items SET attempts = attempts + 1, updated_at = :now
WHERE id = :item
  AND EXISTS (SELECT 1 FROM job_leases WHERE key = :lease_key AND owner_id = :owner
              AND fence = :fence AND expires_at > :now);

-- name: items.park
-- Parks an item that reached its attempts without ever recording a failure.
UPDATE items SET parked_at = :now, updated_at = :now,
                 state = CASE WHEN state = 'processing' THEN 'pending' ELSE state END,
                 last_error = coalesce(last_error, 'no attempt finished (the runs stopped or crashed)')
WHERE id = :item AND parked_at IS NULL
  AND EXISTS (SELECT 1 FROM job_leases WHERE key = :lease_key AND owner_id = :owner
              AND fence = :fence AND expires_at > :now);

-- name: items.retry_item
UPDATE items SET parked_at = NULL, attempts = 0, updated_at = :now,
                 disagree_host = NULL, disagree_hash = NULL
WHERE id = :item;

-- name: items.retry_image
UPDATE images SET parked_at = NULL, attempts = 0, updated_at = :now
WHERE parked_at IS NOT NULL AND source = (SELECT image_source FROM items WHERE id = :item);

-- name: items.parked
SELECT id, attempts, parked_at, coalesce(last_error, ''), collection, item_key,
       disagree_host, disagree_hash, source_host, source_hash, source_path FROM items
WHERE parked_at IS NOT NULL ORDER BY collection, id;

------------------------------------------------------------------------------ the commit batch

-- name: pages.record_same_content
-- The file changed but renders to the same public page: remember the new source hash.
UPDATE pages SET source_hash = :source_hash
WHERE item_id = :item AND commit_token <> :token AND withdrawn = 0 AND content_hash = :content_hash
  AND EXISTS (SELECT 1 FROM items WHERE id = :item AND state = :expected_state AND source_hash = :source_hash)
  AND EXISTS (SELECT 1 FROM job_leases WHERE key = :lease_key AND owner_id = :owner
              AND fence = :fence AND expires_at > :now);

-- name: pages.set_item_state
UPDATE items SET state = :new_state, last_error = NULL, attempts = 0, parked_at = NULL,
                 updated_at = :now
WHERE id = :item AND EXISTS (SELECT 1 FROM pages WHERE item_id = :item AND commit_token = :token);

-- name: pages.bump_revision
UPDATE site_state SET publication_revision = publication_revision + 1
WHERE id = 1 AND EXISTS (SELECT 1 FROM pages WHERE item_id = :item AND commit_token = :token);

-- name: pages.stamp_revision
UPDATE pages SET revision = (SELECT publication_revision FROM site_state WHERE id = 1)
WHERE item_id = :item AND commit_token = :token;

-- name: pages.read_back
SELECT p.commit_token, p.content_version, p.content_hash, p.source_hash, p.withdrawn,
       (SELECT publication_revision FROM site_state WHERE id = 1),
       EXISTS (SELECT 1 FROM job_leases WHERE key = :lease_key AND owner_id = :owner
               AND fence = :fence AND expires_at > :now),
-- include: pages.due_by_ledger_clock
FROM (SELECT 1) AS one LEFT JOIN pages p ON p.item_id = :item;

------------------------------------------------------------------------------ audit

-- name: audit.page_stamps
-- Every page's revision of last change, with the publication revision, for `verify`.
SELECT p.item_id, p.revision, (SELECT publication_revision FROM site_state WHERE id = 1)
FROM pages p;

-- name: audit.change_receipts
-- The revision each public change's receipt recorded, by item.
SELECT subject, revision FROM audit_log WHERE action IN ('publish', 'update', 'withdraw');

-- name: audit.entries
SELECT seq, at, action, subject, revision, detail, previous_hash, current_hash
FROM audit_log ORDER BY seq;

-- name: audit.newest
-- The newest entries first, for `fencepost log`.
SELECT seq, at, action, subject, revision, detail, previous_hash, current_hash
FROM audit_log ORDER BY seq DESC LIMIT :limit;

-- name: audit.anchor
SELECT audit_tip_seq, audit_tip_hash FROM site_state WHERE id = 1;

-- name: audit.hash_at
SELECT current_hash FROM audit_log WHERE seq = :seq;

------------------------------------------------------------------------------ images

-- name: images.lookup
SELECT sha256, bytes, content_type FROM images
WHERE source = :source AND state = 'stored' AND sha256 IS NOT NULL;

-- name: images.state
-- An image's state (`stored`, `failed`, …) and failed fetches so far.
SELECT state, attempts FROM images WHERE source = :source;

-- name: images.parked
SELECT attempts, coalesce(last_error, '') FROM images
WHERE source = :source AND parked_at IS NOT NULL AND state <> 'stored';

------------------------------------------------------------------------------ results

-- name: results.session_slot
SELECT slot FROM daily_results WHERE puzzle_id = :puzzle AND session_id = :session;

------------------------------------------------------------------------------ status

-- name: status.revision
SELECT publication_revision FROM site_state WHERE id = 1;

-- name: status.ledger_id
SELECT ledger_id FROM site_state WHERE id = 1;

-- name: status.site_id
SELECT site_id FROM site_state WHERE id = 1;

-- name: status.claim_site
-- Records the site a ledger belongs to, once, and the revision it was claimed at: a ledger
-- that already names one keeps it.
UPDATE site_state SET site_id = :site, site_claimed_revision = publication_revision
WHERE id = 1 AND site_id IS NULL;

-- name: status.replace_site
-- `fencepost ledger claim`: the ledger given to this site, from :was (NULL: from none).
UPDATE site_state SET site_id = :site, site_claimed_revision = publication_revision
WHERE id = 1 AND site_id IS NOT DISTINCT FROM :was;

-- name: status.site_claim
SELECT site_id, site_claimed_revision, publication_revision,
       (SELECT count(*) FROM items) FROM site_state WHERE id = 1;

-- name: status.live_sources
-- The source files of the items not withdrawn (public, or waiting for their instant): what a
-- checkout of the ledger's site holds.
SELECT source_path FROM items WHERE state IN ('pending', 'processing', 'published') ORDER BY id;

-- name: status.built_base_url
SELECT built_base_url FROM site_state WHERE id = 1;

-- name: status.set_built_base_url
UPDATE site_state SET built_base_url = :url WHERE id = 1 AND built_base_url IS DISTINCT FROM :url;

-- name: status.counts
-- A parked item counts as failed, whatever state it was parked in.
SELECT CASE WHEN parked_at IS NOT NULL THEN 'failed' ELSE state END, count(*)
FROM items GROUP BY 1;

-- name: status.parked_images
SELECT source, attempts, coalesce(last_error, '') FROM images
WHERE parked_at IS NOT NULL AND state <> 'stored' ORDER BY source;

-- name: status.audit_tip
SELECT seq, current_hash FROM audit_log ORDER BY seq DESC LIMIT 1;

-- name: status.next_embargo
SELECT min(publish_at) FROM items
WHERE publish_at > :now AND state IN ('pending', 'processing', 'withdrawn')
  AND source_hash IS NOT NULL AND wants_withdrawn = 0 AND parked_at IS NULL;

-- name: status.failing
SELECT id, last_error, collection, item_key FROM items WHERE last_error IS NOT NULL
ORDER BY collection, id;

------------------------------------------------------------------------------ the build's reads

-- name: public.body
SELECT body_html FROM page_bodies WHERE item_id = :id;

-- name: public.next_change
-- Embargo ends still ahead of the ledger: present items that are not public yet (parked
-- ones excepted: they change nothing until re-armed), the expiry of public ones, and edits
-- of public ones due later.
SELECT min(at) FROM (
    SELECT min(publish_at) AS at FROM items
    WHERE state IN ('pending', 'processing', 'withdrawn') AND source_hash IS NOT NULL
      AND wants_withdrawn = 0 AND parked_at IS NULL
      AND NOT (expire_at IS NOT NULL AND expire_at <= updated_at)
    UNION ALL
    SELECT min(expire_at) AS at FROM items
    WHERE state = 'published' AND expire_at IS NOT NULL
    UNION ALL
    -- An edit of a public item that is due later: an update at that instant. Only instants
    -- after :now (an edit due already is an update now, not a next change), so the due index
    -- is read from :now on, not every public item (95 ms at 100,000 items when it was).
    SELECT min(i.publish_at) AS at FROM items i JOIN pages p ON p.item_id = i.id
    WHERE i.publish_at > :now AND i.state = 'published' AND i.source_hash IS NOT NULL
      AND i.source_hash <> p.source_hash AND i.wants_withdrawn = 0 AND i.parked_at IS NULL
      AND i.publish_at > coalesce(p.due_at, 0)
) AS next;

------------------------------------------------------------------------------ deploys

-- name: deploys.pending_of
SELECT id, target, status, step, plan, attempts, last_error, outcome, kind FROM deploy_ops
WHERE target = :target AND kind = :kind AND status = 'pending';

-- name: deploys.get
SELECT id, target, status, step, plan, attempts, last_error, outcome, kind FROM deploy_ops
WHERE id = :id;

-- name: deploys.unfinished
SELECT id, target, status, step, plan, attempts, last_error, outcome, kind FROM deploy_ops
WHERE status <> 'done' ORDER BY created_at;

-- name: deploys.count_attempt
UPDATE deploy_ops SET attempts = attempts + 1, updated_at = :now
WHERE id = :id AND status = 'pending'
  AND EXISTS (SELECT 1 FROM job_leases WHERE key = :lease_key AND owner_id = :owner
              AND fence = :fence AND expires_at > :now);

-- name: deploys.park
UPDATE deploy_ops SET status = 'failed', updated_at = :now,
       last_error = coalesce(last_error, 'no attempt finished (the runs stopped or crashed)')
WHERE id = :id AND status = 'pending'
  AND EXISTS (SELECT 1 FROM job_leases WHERE key = :lease_key AND owner_id = :owner
              AND fence = :fence AND expires_at > :now);

-- name: deploys.target
SELECT target, deployed_revision, deployed_build, deployed_manifest, deployed_at,
       probed_at IS NOT NULL, probed_store
FROM deploy_targets WHERE target = :target;

-- name: deploys.rename_legacy_target
-- A target reached at an endpoint of its own was keyed by its bare name before the endpoint
-- was part of the key: its rows go to the endpoint's key, once, unless that key has rows.
UPDATE deploy_targets SET target = :key
WHERE target = :legacy AND NOT EXISTS (SELECT 1 FROM deploy_targets WHERE target = :key);

-- name: deploys.rename_legacy_ops
UPDATE deploy_ops SET target = :key
WHERE target = :legacy AND NOT EXISTS (SELECT 1 FROM deploy_ops WHERE target = :key);

-- name: deploys.targets
SELECT target, deployed_revision, deployed_build, deployed_manifest, deployed_at,
       probed_at IS NOT NULL, probed_store
FROM deploy_targets ORDER BY target;

-- name: deploys.mark_probed
INSERT INTO deploy_targets (target, probed_at, probed_store) VALUES (:target, :now, :store)
ON CONFLICT (target) DO UPDATE SET probed_at = excluded.probed_at,
    probed_store = excluded.probed_store;

-- name: deploys.parked
-- Parked operations of a kind on a target, oldest first: they block their revision until a
-- person re-arms (`--retry`) or abandons (`--abandon`) them.
SELECT id, target, status, step, plan, attempts, last_error, outcome, kind FROM deploy_ops
WHERE target = :target AND kind = :kind AND status = 'failed' ORDER BY created_at;

-- name: deploys.abandon
-- Closes a parked operation as abandoned (`deploy --abandon ID`); the audit entry is written
-- in the same transaction.
UPDATE deploy_ops SET status = 'done', step = 'done', outcome = 'abandoned', updated_at = :now
WHERE id = :id AND status = 'failed';

------------------------------------------------------------------------------ transparency log

-- name: tlog.size
SELECT coalesce(max(idx) + 1, 0) FROM tlog_entries;

-- name: tlog.append
-- An entry at the log's end (the primary key refuses a second writer of the same index).
INSERT INTO tlog_entries (idx, entry, hashes) VALUES (:idx, :entry, :hashes);

-- name: tlog.hashes_of
SELECT hashes FROM tlog_entries WHERE idx = :idx;

-- name: tlog.entries
SELECT idx, entry FROM tlog_entries WHERE idx >= :from AND idx < :to ORDER BY idx;

-- name: tlog.revision
SELECT tlog_revision FROM site_state WHERE id = 1;

-- name: tlog.caught_up
UPDATE site_state SET tlog_revision = :revision WHERE id = 1;

-- name: tlog.record_pending
-- The JSON of an item not public yet, as its file reads now, with a fresh commitment to it
-- (logged by the next build). Written when the JSON is new or differs; never once the log
-- has revealed the item.
INSERT INTO tlog_items (item_id, json, json_digest, salt, commitment)
SELECT i.id, :json, :json_digest, :salt, :commitment FROM items i
WHERE i.collection = :collection AND i.item_key = :key AND i.state = 'pending'
ON CONFLICT (item_id) DO UPDATE SET json = excluded.json, json_digest = excluded.json_digest,
    salt = excluded.salt, commitment = excluded.commitment, commit_index = NULL
WHERE tlog_items.shown IS NULL AND tlog_items.json_digest <> excluded.json_digest;

-- name: tlog.pending_state
-- An item not public yet, and what the log holds of it: its JSON's digest, the commitment
-- and the entry that logged it (absent: none yet), whether the log revealed it.
SELECT i.id, t.json_digest, t.salt, t.commitment, t.commit_index, t.shown
FROM items i LEFT JOIN tlog_items t ON t.item_id = i.id
WHERE i.collection = :collection AND i.item_key = :key AND i.state = 'pending';

-- name: tlog.record_public
-- The JSON of a page written by this commit batch (the token says it was).
INSERT INTO tlog_items (item_id, json, json_digest)
SELECT :item, :json, :json_digest
WHERE EXISTS (SELECT 1 FROM pages WHERE item_id = :item AND commit_token = :token)
ON CONFLICT (item_id) DO UPDATE SET json = excluded.json, json_digest = excluded.json_digest;

-- name: tlog.json
SELECT json FROM tlog_items WHERE item_id = :item;

-- name: tlog.unlogged_commitments
-- Commitments to items not revealed yet that no log entry holds, in a fixed order.
SELECT item_id, salt, commitment FROM tlog_items
WHERE commit_index IS NULL AND commitment IS NOT NULL AND shown IS NULL ORDER BY item_id;

-- name: tlog.changed_pages
-- Pages changed after the revision the log caught up with, with what the log knows of them.
SELECT p.item_id, p.collection, p.item_key, p.withdrawn, t.json, t.json_digest, t.salt,
       t.commitment, t.commit_index, t.shown, t.shown_digest,
       (SELECT i.expire_at FROM items i WHERE i.id = p.item_id)
FROM pages p LEFT JOIN tlog_items t ON t.item_id = p.item_id
WHERE p.revision > :since ORDER BY p.item_id;

-- name: tlog.shown_items
-- Every item the log has revealed, with what it says of it now.
SELECT t.item_id, i.collection, i.item_key, t.shown, t.shown_digest
FROM tlog_items t JOIN items i ON i.id = t.item_id
WHERE t.shown IS NOT NULL ORDER BY t.item_id;

-- name: tlog.committed
UPDATE tlog_items SET salt = :salt, commitment = :commitment, commit_index = :idx
WHERE item_id = :item;

-- name: tlog.shown
UPDATE tlog_items SET shown = :shown, shown_digest = :digest WHERE item_id = :item;

-- name: audit.tip_at_revision
-- The audit chain's tip when publication revision :revision was the newest.
SELECT current_hash FROM audit_log WHERE revision <= :revision ORDER BY seq DESC LIMIT 1;
