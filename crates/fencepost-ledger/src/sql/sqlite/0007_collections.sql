-- Collections: an item is named by its collection and its id there (an integer written in
-- decimal, or a slug). The integer `id` stays the row's own key (leases, pages and receipts
-- refer to it); the name is unique. Every existing item is an answer of the one collection a
-- site without [collections] has, named by its old id.
ALTER TABLE items ADD COLUMN collection TEXT NOT NULL DEFAULT 'answers';
ALTER TABLE items ADD COLUMN item_key TEXT;
UPDATE items SET item_key = CAST(id AS TEXT);
CREATE UNIQUE INDEX items_by_name ON items (collection, item_key);

-- Pages carry their item's name, its declared fields and [extra] as canonical JSON (`data`,
-- covered by the content hash), and the instant the item was due (what URLs with {year},
-- {month}, {day} use when it has no `day`). The one old field, `price`, moves into `data`.
-- An item without a `day` stores '' in the day columns.
ALTER TABLE pages ADD COLUMN collection TEXT NOT NULL DEFAULT 'answers';
ALTER TABLE pages ADD COLUMN item_key TEXT;
ALTER TABLE pages ADD COLUMN data TEXT NOT NULL DEFAULT '{}';
ALTER TABLE pages ADD COLUMN due_at INTEGER;
UPDATE pages SET item_key = CAST(item_id AS TEXT), data = json_object('price', price);
ALTER TABLE pages DROP COLUMN price;
