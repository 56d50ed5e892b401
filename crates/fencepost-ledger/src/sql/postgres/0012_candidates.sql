-- What may be due (`items.candidates`), read from the items that can be, not joined from every
-- item and its page: the page's source hash kept on its item (`page_hash`, set by the trigger
-- below on every write of a page) and a partial index of exactly the candidates. See SQLite's
-- 0014_candidates.sql.
ALTER TABLE items ADD COLUMN page_hash TEXT;
UPDATE items i SET page_hash = p.source_hash FROM pages p WHERE p.item_id = i.id;
CREATE FUNCTION fp_page_hash() RETURNS TRIGGER
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        UPDATE items SET page_hash = NULL WHERE id = OLD.item_id;
        RETURN OLD;
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.item_id <> NEW.item_id THEN
        UPDATE items SET page_hash = NULL WHERE id = OLD.item_id;
    END IF;
    UPDATE items SET page_hash = NEW.source_hash
    WHERE id = NEW.item_id AND page_hash IS DISTINCT FROM NEW.source_hash;
    RETURN NEW;
END
$$;
CREATE TRIGGER pages_hash AFTER INSERT OR DELETE OR UPDATE OF source_hash, item_id ON pages
FOR EACH ROW EXECUTE FUNCTION fp_page_hash();
CREATE INDEX items_candidates ON items (id)
WHERE NOT (state = 'published' AND source_hash IS NOT NULL AND wants_withdrawn = 0
           AND page_hash IS NOT DISTINCT FROM source_hash AND expire_at IS NULL);
