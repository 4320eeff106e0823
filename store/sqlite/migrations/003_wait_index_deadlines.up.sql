-- Data migration, done in Go (migrate.go, rebuildWaitIndex): wait_index
-- gets a row for every waiting run with a deadline (Python indexes only
-- WAIT_UNTIL runs, not WAIT_EVENT timeouts), and every next_due_iso is
-- rewritten in the normalised UTC form durable.FormatTime writes, so that
-- text order equals time order.
SELECT 1;
