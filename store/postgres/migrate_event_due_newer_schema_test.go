package postgres_test

import (
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/postgres"
)

// TestMigration004RestoresDueAtOfEventWait: an event wait with a
// deadline is released when due (durable.WaitState.ReleasedWhenDue,
// store.Deadline) just as an until wait is, so migration 004 gives back
// the due_at an earlier 002 took from such a run paused by the string
// "true", not only that of until waits.
func TestMigration004RestoresDueAtOfEventWait(t *testing.T) {
	testURL(t)
	schema := testSchema(t)
	st := openSchema(t, schema)
	until := durable.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	r := testRun("event-wait")
	r.Status = durable.RunWaiting
	r.Waiting = &durable.WaitState{Reason: durable.WaitEvent, WaitKey: "evt", Until: until, ResumeToNode: "next"}
	r.Vars["_runtime"] = map[string]any{"control": map[string]any{"paused": "true"}}
	if err := st.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
	now := until.Add(time.Hour)
	if got := dueIDs(t, st, now); len(got) != 1 {
		t.Fatalf("premise: due after commit: %q; want [event-wait]", got)
	}
	execOn(t, schema, "UPDATE runs SET due_at = NULL", "DELETE FROM schema_migrations WHERE version >= 4")
	if got := dueIDs(t, st, now); len(got) != 0 {
		t.Fatalf("premise: due before migration 004: %q; want none", got)
	}
	reopened := openSchema(t, schema)
	if got := dueIDs(t, reopened, now); len(got) != 1 || got[0] != "event-wait" {
		t.Errorf("due after migration 004: %q; want [event-wait]", got)
	}
}

// TestNewRefusesNewerSchema pins migrate's refusal of a schema a
// newer binary migrated: this binary does not know its tables and must
// not write to them.
func TestNewRefusesNewerSchema(t *testing.T) {
	testURL(t)
	schema := testSchema(t)
	openSchema(t, schema)
	execOn(t, schema, "INSERT INTO schema_migrations (version, name) VALUES (9999, '9999_future')")
	s, err := postgres.New(t.Context(), postgres.Config{URL: testURL(t), Schema: schema, Logger: testLogger(t), MaxConns: 2})
	if err == nil {
		_ = s.Close()
		t.Fatal("New on a schema at a newer version succeeded; want an error")
	}
	if !strings.Contains(err.Error(), "newer") {
		t.Errorf("New on a newer schema: %v; want it to say the schema is newer", err)
	}
}
