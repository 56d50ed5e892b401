-- What may be due (`items.candidates`, read by every publish): every item except those
-- published and current, "current" meaning the item's source hash is its page's. That compared
-- two tables, so every publish joined every item with its page (~40 ms at 100,000 items,
-- whatever was due). The page's source hash is now kept on its item too (`page_hash`, set by
-- the triggers below on every write of a page, so no statement can forget it), the condition
-- is one row's, and a partial index holds exactly the items it is true of: a publish reads
-- the candidates, not the ledger. The index's condition is the statement's, word for word
-- (SQLite uses a partial index only for a query that implies its condition). `IS`, not `=`:
-- a published item with no page hash is a candidate (its plan is decided as any other's),
-- never left out for a NULL — the join this replaces left out such an item (it had no page).
ALTER TABLE items ADD COLUMN page_hash TEXT;
UPDATE items SET page_hash = (SELECT source_hash FROM pages WHERE pages.item_id = items.id);
CREATE TRIGGER pages_hash_insert AFTER INSERT ON pages BEGIN
    UPDATE items SET page_hash = NEW.source_hash WHERE id = NEW.item_id;
END;
CREATE TRIGGER pages_hash_update AFTER UPDATE OF source_hash, item_id ON pages BEGIN
    UPDATE items SET page_hash = NULL WHERE id = OLD.item_id AND OLD.item_id <> NEW.item_id;
    UPDATE items SET page_hash = NEW.source_hash
    WHERE id = NEW.item_id AND page_hash IS NOT NEW.source_hash;
END;
CREATE TRIGGER pages_hash_delete AFTER DELETE ON pages BEGIN
    UPDATE items SET page_hash = NULL WHERE id = OLD.item_id;
END;
CREATE INDEX items_candidates ON items (id)
WHERE NOT (state = 'published' AND source_hash IS NOT NULL AND wants_withdrawn = 0
           AND page_hash IS source_hash AND expire_at IS NULL);
