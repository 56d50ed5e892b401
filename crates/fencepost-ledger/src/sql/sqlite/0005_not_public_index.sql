-- Items present but not public yet, by embargo end: every build asks for the earliest one
-- (`public.next_change`), which this makes one index probe instead of a scan of all items.
CREATE INDEX items_not_public ON items (publish_at)
WHERE state IN ('pending', 'processing', 'withdrawn') AND source_hash IS NOT NULL
  AND wants_withdrawn = 0 AND parked_at IS NULL;
