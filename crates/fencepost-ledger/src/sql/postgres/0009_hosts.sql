-- Hosts that disagree (issue 35.7): which host last wrote an item's source fields, and,
-- while the item is parked because another host's checkout has it otherwise, that host and
-- the source hash it has (NULL: its checkout lacks the file). See publish/hosts.rs.
ALTER TABLE items ADD COLUMN source_host text,
                  ADD COLUMN disagree_host text,
                  ADD COLUMN disagree_hash text;
