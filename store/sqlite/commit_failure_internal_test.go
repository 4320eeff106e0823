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
