-- A withdrawal notice follows its file: see sqlite/0009_notices.sql.
ALTER TABLE pages ADD COLUMN notice BIGINT CHECK (notice IN (0, 1));
