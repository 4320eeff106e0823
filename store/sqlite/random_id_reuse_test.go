package sqlite_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// TestRandomIDReuseOfQueuedRunRefused: store.CommitParams.RandomID lets
// the redo log queue a create without looking for the run. When the
// cache has evicted a run whose create is still queued (a tiny cache),
// a RandomID create of the same id must still be refused with
// ErrAlreadyExists, not queued: applying it would fail, and with it the
// redo log and every later write.
func TestRandomIDReuseOfQueuedRunRefused(t *testing.T) {
	t.Parallel()
	s := openWith(t, sqlite.Config{Path: filepath.Join(t.TempDir(), "r.sqlite3"), CacheBytes: 1})
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	run := func(id string) *durable.RunState {
		return &durable.RunState{RunID: id, WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "a",
			Vars: map[string]any{}, CreatedAt: durable.NewTime(t0), UpdatedAt: durable.NewTime(t0)}
	}
	if err := s.RunCommit(t.Context(), &store.CommitParams{Run: run("x"), Create: true, RandomID: true}); err != nil {
		t.Fatal(err)
	}
	err := s.RunCommit(t.Context(), &store.CommitParams{Run: run("x"), Create: true, RandomID: true})
	if !errors.Is(err, store.ErrAlreadyExists) {
		t.Errorf("second RandomID create of x = %v, want ErrAlreadyExists", err)
	}
	if err := s.RunCommit(t.Context(), &store.CommitParams{Run: run("y"), Create: true, RandomID: true}); err != nil {
		t.Fatalf("a later create: %v (the store must keep taking writes)", err)
	}
	if err := s.Settle(t.Context()); err != nil {
		t.Fatalf("Settle: %v", err)
	}
}
