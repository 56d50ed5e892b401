-- `fencepost run` on several hosts: every transaction that moves the publication revision
-- tells the others (LISTEN fencepost_changes), so their builds and deploys follow within a
-- second instead of at their next poll. The payload is empty, so a batch that publishes many
-- items sends one notification (PostgreSQL folds identical notifications of a transaction),
-- delivered at its commit and never for a rolled-back one.
CREATE FUNCTION fp_notify_change() RETURNS TRIGGER
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('fencepost_changes', '');
    RETURN NEW;
END
$$;
CREATE TRIGGER notify_change AFTER UPDATE OF publication_revision ON site_state
FOR EACH ROW WHEN (OLD.publication_revision IS DISTINCT FROM NEW.publication_revision)
EXECUTE FUNCTION fp_notify_change();
