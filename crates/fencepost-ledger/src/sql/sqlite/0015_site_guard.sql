-- One ledger, one site, held against the sites it exists to stop (issue 77.2, 77.3): the
-- publication revision at which `site_id` was claimed (0: while the ledger was empty; NULL:
-- claimed by a release that did not record it), so a refusal never proposes adopting an id
-- claimed after the ledger's history began; and the `base_url` the ledger last built with, so
-- a checkout with another one is warned about by name.
ALTER TABLE site_state ADD COLUMN site_claimed_revision INTEGER;
ALTER TABLE site_state ADD COLUMN built_base_url TEXT;
