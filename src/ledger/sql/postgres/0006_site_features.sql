-- Site features: see sqlite/0008_site_features.sql.
ALTER TABLE items ADD COLUMN expire_at BIGINT;
ALTER TABLE pages ADD COLUMN summary_html TEXT;
ALTER TABLE pages ADD COLUMN terms TEXT NOT NULL DEFAULT '';
