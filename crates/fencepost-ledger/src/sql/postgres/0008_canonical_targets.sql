-- The same as sqlite/0010_canonical_targets.sql.
-- One bucket, one name: deploy, rollback and gc key a target by its canonical spelling
-- (`s3://x/www`, not `s3://x/www/` or `s3a://x/www`; see bucket::remote::canonical).
-- Targets stored under another spelling take the canonical one. Where two spellings of one
-- target each have a row, one is kept (the canonical one's when there is one; the target is
-- probed again if needed), and pending operations that would become two on one target are
-- parked for a person to decide (fencepost status names them).
CREATE TEMP TABLE target_names (old TEXT PRIMARY KEY, new TEXT NOT NULL);
INSERT INTO target_names (old, new)
SELECT target, target FROM deploy_targets UNION SELECT target, target FROM deploy_ops;
UPDATE target_names SET new = 's3://' || substr(new, 7) WHERE new LIKE 's3a://%';
UPDATE target_names SET new = rtrim(new, '/') WHERE new LIKE '%/' AND rtrim(new, '/') NOT LIKE '%:';
DELETE FROM target_names WHERE old = new;

DELETE FROM deploy_targets WHERE target IN (
    SELECT a.old FROM target_names a
    WHERE a.new IN (SELECT d.target FROM deploy_targets d)
       OR EXISTS (SELECT 1 FROM target_names b JOIN deploy_targets d ON d.target = b.old
                  WHERE b.new = a.new AND b.old < a.old));
UPDATE deploy_targets SET target = (SELECT n.new FROM target_names n WHERE n.old = deploy_targets.target)
WHERE target IN (SELECT old FROM target_names);

UPDATE deploy_ops SET status = 'failed',
    last_error = 'another pending operation had this target under another spelling: retry one, abandon the other'
WHERE status = 'pending' AND target IN (
    SELECT n.old FROM target_names n
    WHERE EXISTS (SELECT 1 FROM deploy_ops o
                  WHERE o.status = 'pending' AND o.kind = deploy_ops.kind AND o.id <> deploy_ops.id
                    AND coalesce((SELECT m.new FROM target_names m WHERE m.old = o.target), o.target) = n.new));
UPDATE deploy_ops SET target = (SELECT n.new FROM target_names n WHERE n.old = deploy_ops.target)
WHERE target IN (SELECT old FROM target_names);

DROP TABLE target_names;
