-- The due queries compare canonical deadlines (durable.FormatTime's form)
-- as text with Now in the same form. That form writes no fraction for a
-- whole second, but 015's index, and stmts.go's canonicalDue, also took a
-- deadline Python wrote with an all-zero fraction
-- ("...T12:00:00.000000+00:00", strftime's %f) as canonical: it sorts
-- after Now's "...T12:00:00+00:00", so the run was not due at its
-- deadline (RunNextDue, which parses, said it was). Such a deadline is now
-- a foreign form, read apart and compared as a parsed time. canonicalDue
-- repeats this index's condition (the planner uses the index only while
-- both texts match).
DROP INDEX IF EXISTS wait_index_foreign_form;
CREATE INDEX wait_index_foreign_form ON wait_index(run_id) WHERE NOT (next_due_iso GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]+00:00' OR (next_due_iso GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9][0-9][0-9][0-9]+00:00' AND next_due_iso NOT GLOB '*.000000+00:00'));
