-- Site features: an item's own expiry (withdrawn exactly once at that instant), and each
-- page's summary (the body before `<!-- more -->`) and its taxonomy terms (canonical JSON,
-- `{"tags":["Rust"]}`; '' for none), so term pages are built from public pages alone.
ALTER TABLE items ADD COLUMN expire_at INTEGER;
ALTER TABLE pages ADD COLUMN summary_html TEXT;
ALTER TABLE pages ADD COLUMN terms TEXT NOT NULL DEFAULT '';
-- Every publish run looks for expiries (items.touch_expired, public.next_change): only the
-- few items that have one are indexed.
CREATE INDEX items_expiring ON items (expire_at) WHERE expire_at IS NOT NULL;
