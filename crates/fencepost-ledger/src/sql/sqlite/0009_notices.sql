-- A withdrawal notice follows its file: whether a withdrawn page keeps a notice is decided
-- when it is withdrawn (1: its collection kept notices then; 0: it did not), so switching a
-- collection's on_withdraw from "remove" to "notice" never brings back pages removed before
-- the switch. NULL, on pages withdrawn before this column existed: the config decides, as
-- it always did.
ALTER TABLE pages ADD COLUMN notice INTEGER CHECK (notice IN (0, 1));
