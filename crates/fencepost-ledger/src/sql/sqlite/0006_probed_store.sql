-- The conditional-write probe is remembered for the store it probed (the URL and the endpoint
-- that select it), not for the URL string alone: the same s3:// URL pointed at another
-- endpoint through AWS_ENDPOINT_URL is another store. Probes recorded before this have no
-- store, so each target is probed once more.
ALTER TABLE deploy_targets ADD COLUMN probed_store TEXT;
