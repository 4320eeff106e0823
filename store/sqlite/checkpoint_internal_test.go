package sqlite

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

func walSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path + "-wal")
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func commitRuns(t *testing.T, s *Store, n int) {
	t.Helper()
	now := durable.NewTime(time.Now())
	for i := range n {
		r := &durable.RunState{RunID: fmt.Sprintf("run-%d", i), WorkflowID: "wf", Status: durable.RunRunning,
			Vars: map[string]any{"i": i}, CreatedAt: now, UpdatedAt: now}
		if err := s.RunCommit(t.Context(), &store.CommitParams{Run: r, Create: true}); err != nil {
			t.Fatal(err)
		}
	}
}

// A store left quiet folds its WAL into the database and truncates it;
// what was committed is all there, also after a reopen.
func TestIdleCheckpoint_FoldsTheWALWhenQuiet(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	s, err := New(t.Context(), Config{Path: path, IdleCheckpoint: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	commitRuns(t, s, 50)
	if walSize(t, path) == 0 {
		t.Fatal("the commits left no WAL to fold")
	}
	select {
	case <-s.ckpt.folded:
	case <-time.After(10 * time.Second):
		t.Fatal("no idle checkpoint within 10 s of the last commit")
	}
	if n := walSize(t, path); n != 0 {
		t.Fatalf("WAL is %d bytes after the idle checkpoint, want it truncated", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := New(t.Context(), Config{Path: path, IdleCheckpoint: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	rows, err := s2.RunIndex(t.Context(), &store.RunIndexParams{Limit: 100})
	if err != nil || len(rows) != 50 {
		t.Fatalf("after the checkpoint and a reopen: %d runs, %v; want 50", len(rows), err)
	}
}

// Checkpoints are SQLite's when the idle checkpointer is off, with
// synchronous FULL, and in a shared store.
func TestIdleCheckpoint_WhenItRuns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg  Config
		runs bool
	}{
		{Config{}, true},
		{Config{IdleCheckpoint: -1}, false},
		{Config{Synchronous: "FULL"}, false},
		{Config{Shared: true}, false},
	} {
		tc.cfg.Path = filepath.Join(t.TempDir(), "db.sqlite")
		s, err := New(t.Context(), tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.ckpt != nil; got != tc.runs {
			t.Errorf("%+v: idle checkpointer running = %v, want %v", tc.cfg, got, tc.runs)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// Close right after a burst, with the checkpoint pending, returns and
// leaves no goroutine behind (goleak checks the package).
func TestIdleCheckpoint_CloseWhilePending(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	s, err := New(t.Context(), Config{Path: path, IdleCheckpoint: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	commitRuns(t, s, 10)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.ckpt.done:
	default:
		t.Fatal("the checkpointer goroutine outlived Close")
	}
}
