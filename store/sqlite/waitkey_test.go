package sqlite_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// The schema's triggers for Python's writes (migrations 012–013) fill
// runs.wait_key from run_json for a waiting row inserted with a NULL
// wait_key, parsing run_json twice (json_valid in two triggers). Our rows
// of waits without a key (WAIT_UNTIL) were inserted with NULL, so every
// such insert paid both parses; they now carry an empty string, which no
// look-up by wait key matches. A wait with a key keeps it.
func TestKeylessWaitStoresEmptyWaitKey(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := open(t, path)
	ctx := t.Context()
	now := time.Now().UTC()
	until := durable.Time{Time: now.Add(time.Hour)}
	waiting := func(id string, w *durable.WaitState) *durable.RunState {
		return &durable.RunState{RunID: id, WorkflowID: "wf", Status: durable.RunWaiting, CurrentNode: "wait",
			Vars: map[string]any{}, Waiting: w, CreatedAt: durable.Time{Time: now}, UpdatedAt: durable.Time{Time: now}}
	}
	// Created waiting (one insert), and created running then updated into
	// the wait.
	if err := s.RunCommit(ctx, &store.CommitParams{Run: waiting("created-waiting",
		&durable.WaitState{Reason: durable.WaitUntil, Until: until, ResumeToNode: "next"}), Create: true}); err != nil {
		t.Fatal(err)
	}
	run := waiting("updated-waiting", nil)
	run.Status = durable.RunRunning
	if err := s.RunCommit(ctx, &store.CommitParams{Run: run, Create: true}); err != nil {
		t.Fatal(err)
	}
	run.Status, run.Waiting = durable.RunWaiting, &durable.WaitState{Reason: durable.WaitUntil, Until: until, ResumeToNode: "next"}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: run}); err != nil {
		t.Fatal(err)
	}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: waiting("keyed",
		&durable.WaitState{Reason: durable.WaitEvent, WaitKey: "evt:session:s:go", ResumeToNode: "next"}), Create: true}); err != nil {
		t.Fatal(err)
	}
	due, err := s.RunListDue(ctx, &store.RunListDueParams{Now: now.Add(2 * time.Hour), Limit: 10})
	if err != nil || len(due) != 2 {
		t.Fatalf("RunListDue = %v, %v; want the two WAIT_UNTIL runs", due, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	db := rawDB(t, path)
	defer db.Close()
	want := map[string]string{"created-waiting": "''", "updated-waiting": "''", "keyed": "'evt:session:s:go'"}
	for id, w := range want {
		var got string
		if err := db.QueryRow(`SELECT COALESCE(quote(wait_key), 'NULL') FROM runs WHERE run_id = ?`, id).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != w {
			t.Errorf("run %s: wait_key = %s, want %s", id, got, w)
		}
	}
}
