-- The conditional-write probe is remembered for the store it probed (the URL and the endpoint
-- that select it), not for the URL string alone. See sqlite/0006_probed_store.sql.
ALTER TABLE deploy_targets ADD COLUMN probed_store TEXT;
