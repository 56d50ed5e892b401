-- Collections: see sqlite/0007_collections.sql. New rows take their id from a sequence
-- (racing hosts never compute the same one); `ledger copy` moves it past the ids it copies.
ALTER TABLE items ADD COLUMN collection TEXT NOT NULL DEFAULT 'answers';
ALTER TABLE items ADD COLUMN item_key TEXT;
UPDATE items SET item_key = id::text;
CREATE UNIQUE INDEX items_by_name ON items (collection, item_key);
CREATE SEQUENCE items_id_seq OWNED BY items.id;
SELECT setval('items_id_seq', coalesce((SELECT max(id) FROM items), 0) + 1, false);
ALTER TABLE items ALTER COLUMN id SET DEFAULT nextval('items_id_seq');

ALTER TABLE pages ADD COLUMN collection TEXT NOT NULL DEFAULT 'answers';
ALTER TABLE pages ADD COLUMN item_key TEXT;
ALTER TABLE pages ADD COLUMN data TEXT NOT NULL DEFAULT '{}';
ALTER TABLE pages ADD COLUMN due_at BIGINT;
UPDATE pages SET item_key = item_id::text, data = '{"price":' || to_json(price)::text || '}';
ALTER TABLE pages DROP COLUMN price;
