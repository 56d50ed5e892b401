-- Site features: see sqlite/0008_site_features.sql.
ALTER TABLE items ADD COLUMN expire_at BIGINT;
ALTER TABLE pages ADD COLUMN summary_html TEXT;
ALTER TABLE pages ADD COLUMN terms TEXT NOT NULL DEFAULT '';
-- Every publish run looks for expiries (items.touch_expired, public.next_change): only the
-- few items that have one are indexed.
CREATE INDEX items_expiring ON items (expire_at) WHERE expire_at IS NOT NULL;
