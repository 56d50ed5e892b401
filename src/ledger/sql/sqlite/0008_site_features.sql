-- Site features: an item's own expiry (withdrawn exactly once at that instant), and each
-- page's summary (the body before `<!-- more -->`) and its taxonomy terms (canonical JSON,
-- `{"tags":["Rust"]}`; '' for none), so term pages are built from public pages alone.
ALTER TABLE items ADD COLUMN expire_at INTEGER;
ALTER TABLE pages ADD COLUMN summary_html TEXT;
ALTER TABLE pages ADD COLUMN terms TEXT NOT NULL DEFAULT '';
