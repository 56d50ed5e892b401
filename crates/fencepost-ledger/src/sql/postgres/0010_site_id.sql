-- One ledger, one site (issue 46.1): the site a ledger belongs to, as fencepost.toml's
-- ledger.site_id names it. NULL in a ledger no site with an id has opened yet; a site's
-- first publish records it, once, and every other site's command is refused from then on.
ALTER TABLE site_state ADD COLUMN site_id text;
