package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// failingExec fails the statement's next run while fail is set, without
// running it (a COMMIT the database did not take, leaving the
// transaction open).
type failingExec struct {
	driver.StmtExecContext
	fail *atomic.Bool
}

func (f failingExec) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if f.fail.Swap(false) {
		return nil, errors.New("injected commit failure")
	}
	return f.StmtExecContext.ExecContext(ctx, args)
}

// TestFailedCommitIsRolledBack: a COMMIT that fails leaves the
// transaction open; finishTx rolls it back, so the failed write is not in
// the database and the next write begins its own transaction. Without
// the rollback, every later BEGIN fails ("cannot start a transaction
// within a transaction") or a later COMMIT carries the failed write in.
func TestFailedCommitIsRolledBack(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"owned", Config{NoRedoLog: true}},
		{"shared", Config{NoRedoLog: true, Shared: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			tc.cfg.Path = filepath.Join(t.TempDir(), "runtime.sqlite3")
			s := openStore(t, tc.cfg)
			var fail atomic.Bool
			s.w.commit.ex = failingExec{StmtExecContext: s.w.commit.ex, fail: &fail}
			now := durable.NewTime(time.Now())
			run := func(id string) *durable.RunState {
				return &durable.RunState{RunID: id, WorkflowID: "wf", Status: durable.RunRunning, CreatedAt: now, UpdatedAt: now}
			}
			fail.Store(true)
			err := s.RunCommit(ctx, &store.CommitParams{Run: run("lost"), Create: true})
			if err == nil || !strings.Contains(err.Error(), "injected commit failure") {
				t.Fatalf("RunCommit with a failing COMMIT = %v; want the commit's error", err)
			}
			if err := s.RunCommit(ctx, &store.CommitParams{Run: run("next"), Create: true}); err != nil {
				t.Fatalf("the write after a failed COMMIT: %v; want it committed in a transaction of its own", err)
			}
			if _, err := s.RunGet(ctx, "next"); err != nil {
				t.Errorf("RunGet(next) = %v", err)
			}
			if _, err := s.RunGet(ctx, "lost"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("RunGet of the run whose COMMIT failed = %v; want store.ErrNotFound (rolled back)", err)
			}
		})
	}
}

// TestFailedTriggerSyncIsRolledBack: in a shared store, a write
// transaction that finds the schema moved brings the newer Python
// runtime's trigger up to date first (sharedTx); when that fails, the
// transaction is rolled back, so the write fails alone and the next one
// begins its own transaction (and syncs the trigger then). The failure
// here: a TEMP trigger of the same name on the writer connection, which
// DROP TRIGGER IF EXISTS removes instead of the main one, so the CREATE
// finds the main one still there. Without the rollback every later BEGIN
// fails ("cannot start a transaction within a transaction").
func TestFailedTriggerSyncIsRolledBack(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := openStore(t, Config{Path: path, Shared: true, NoRedoLog: true})
	db := openRawDB(t, path)
	defer db.Close()
	if _, err := db.Exec("ALTER TABLE runs ADD COLUMN paused INTEGER"); err != nil {
		t.Fatal(err)
	}
	commitRuns(t, s, 1) // installs the trigger for paused
	if _, err := db.Exec("ALTER TABLE runs ADD COLUMN role TEXT"); err != nil {
		t.Fatal(err)
	}
	if err := s.takeTurn(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := s.wconn.ExecContext(ctx, "CREATE TEMP TRIGGER "+newerPythonTrigger+" AFTER INSERT ON main.runs BEGIN SELECT 1; END")
	<-s.wsem
	if err != nil {
		t.Fatal(err)
	}
	now := durable.NewTime(time.Now())
	run := func(id string) *durable.RunState {
		return &durable.RunState{RunID: id, WorkflowID: "wf", Status: durable.RunRunning, CreatedAt: now, UpdatedAt: now}
	}
	err = s.RunCommit(ctx, &store.CommitParams{Run: run("lost"), Create: true})
	if err == nil || !strings.Contains(err.Error(), "newer Python runtime's trigger") {
		t.Fatalf("RunCommit with a failing trigger sync = %v; want the sync's error", err)
	}
	// The rollback took the DROP of the TEMP trigger with it: it goes now.
	if err := s.takeTurn(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = s.wconn.ExecContext(ctx, "DROP TRIGGER temp."+newerPythonTrigger)
	<-s.wsem
	if err != nil {
		t.Fatalf("dropping the TEMP trigger: %v (the failed transaction, which dropped it, was not rolled back)", err)
	}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: run("next"), Create: true}); err != nil {
		t.Fatalf("the write after a failed trigger sync: %v; want it committed in a transaction of its own", err)
	}
	if _, err := s.RunGet(ctx, "lost"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RunGet of the run whose write failed = %v; want store.ErrNotFound", err)
	}
}
