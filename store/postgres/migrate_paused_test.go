package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/postgres"
)

// pausedRun commits a run waiting until `until` whose
// vars._runtime.control.paused is paused.
func pausedRun(t *testing.T, st store.Store, id string, paused any, until durable.Time) {
	t.Helper()
	r := testRun(id)
	r.Status = durable.RunWaiting
	r.Waiting = &durable.WaitState{Reason: durable.WaitUntil, Until: until, ResumeToNode: "next"}
	r.Vars["_runtime"] = map[string]any{"control": map[string]any{"paused": paused}}
	if err := st.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
}

// execOn runs stmts on schema through a connection of its own.
func execOn(t *testing.T, schema string, stmts ...string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), testURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), "SET search_path TO "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range stmts {
		if _, err := conn.Exec(t.Context(), stmt); err != nil {
			t.Fatal(err)
		}
	}
}

// dueIDs returns the ids RunListDue gives at now.
func dueIDs(t *testing.T, st store.Store, now time.Time) []string {
	t.Helper()
	due, err := st.RunListDue(t.Context(), &store.RunListDueParams{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range due {
		ids = append(ids, d.RunID)
	}
	return ids
}

// TestMigration002KeepsDueAtOfStringPaused: migration 002 takes due_at
// from paused runs. It tested the paused value with #>> = 'true', which
// the JSON string "true" passes too, while only the boolean true is a
// pause (store.Deadline, durable.RunState.HostPaused, as RunCommit sets
// due_at): such a run was left out of RunListDue, its WAIT_UNTIL never
// fired, until something else committed it.
func TestMigration002KeepsDueAtOfStringPaused(t *testing.T) {
	testURL(t)
	t.Parallel()
	schema := testSchema(t)
	st := openSchema(t, schema)
	until := durable.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	pausedRun(t, st, "string-paused", "true", until)
	pausedRun(t, st, "paused", true, until)
	now := until.Add(time.Hour)
	if got := dueIDs(t, st, now); len(got) != 1 || got[0] != "string-paused" {
		t.Fatalf("premise: due before migration: %q; want [string-paused]", got)
	}
	m002, err := postgres.MigrationSQL(2)
	if err != nil {
		t.Fatal(err)
	}
	// 002 alone, on the rows as an older version left them (due_at on
	// paused runs too): 004 would mend what 002 gets wrong.
	execOn(t, schema, "UPDATE runs SET due_at = wait_until", m002)
	if got := dueIDs(t, st, now); len(got) != 1 || got[0] != "string-paused" {
		t.Errorf("due after migration 002: %q; want [string-paused] (a string \"true\" is no pause)", got)
	}
}

// TestMigration004RestoresDueAtOfStringPaused: databases that an earlier
// migration 002 (one that took the string "true" for a pause) ran on hold
// runs paused by the string "true" without due_at; 004 gives back theirs
// (store.Deadline decides), and only theirs.
func TestMigration004RestoresDueAtOfStringPaused(t *testing.T) {
	testURL(t)
	t.Parallel()
	schema := testSchema(t)
	st := openSchema(t, schema)
	until := durable.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	pausedRun(t, st, "string-paused", "true", until)
	pausedRun(t, st, "paused", true, until)
	pausedRun(t, st, "one-paused", 1, until)
	r := testRun("running")
	if err := st.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
	// As the unfixed 002 left them, and at version 3.
	execOn(t, schema, "UPDATE runs SET due_at = NULL", "DELETE FROM schema_migrations WHERE version >= 4")
	now := until.Add(time.Hour)
	if got := dueIDs(t, st, now); len(got) != 0 {
		t.Fatalf("premise: due before migration 004: %q; want none", got)
	}
	reopened := openSchema(t, schema)
	if got := dueIDs(t, reopened, now); len(got) != 2 || got[0] != "one-paused" || got[1] != "string-paused" {
		t.Errorf("due after migration 004: %q; want [one-paused string-paused] (only the boolean true is a pause)", got)
	}
}
