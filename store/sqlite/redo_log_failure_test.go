package sqlite

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// Once a write to the redo log failed, Close reports it and keeps the log
// for the next open ("on any failure the log stays"), even when closing
// the file itself succeeds.
func TestCloseReportsRedoLogFailureAndKeepsTheLog(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	g := newRedoRig(t, "NORMAL")
	r := redoRun(strings.Repeat("e", 32))
	g.commit(r, 0, true)
	if err := g.s.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	// Swap the log's file for a read-only handle: the next append fails,
	// while closing the handle succeeds.
	ro, err := os.Open(g.path + redoSuffix)
	if err != nil {
		t.Fatal(err)
	}
	g.s.redo.mu.Lock()
	_ = g.s.redo.file.f.Close()
	g.s.redo.file.f = ro
	g.s.redo.mu.Unlock()
	next := *r
	next.Vars = map[string]any{"i": 1}
	if err := g.s.RunCommit(ctx, &store.CommitParams{Run: &next}); err == nil {
		t.Fatal("a commit whose redo record could not be written succeeded")
	}
	if err := g.s.Close(); err == nil {
		t.Fatal("Close reported no error for a failed redo log")
	}
	if _, err := os.Stat(g.path + redoSuffix); err != nil {
		t.Fatalf("the redo log of a store whose log failed was not kept: %v", err)
	}
	checkImage(t, g.path, Config{}, r, 0, 0)
}

// TestRedo_FailedLogRefusesAppendsFromTheCache guards appendFromCache's
// refusal once the redo log failed: the store takes no more writes, even
// if the log's file would accept this one (a transient failure).
func TestRedo_FailedLogRefusesAppendsFromTheCache(t *testing.T) {
	ctx := t.Context()
	g := newRedoRig(t, "NORMAL")
	r := redoRun(strings.Repeat("l", 32))
	g.commit(r, 0, true)
	g.s.redo.mu.Lock()
	g.s.redo.failed = errors.New("injected failure")
	g.s.redo.mu.Unlock()
	err := g.s.LedgerAppend(ctx, r.RunID, []*durable.StepRecord{{RunID: r.RunID, StepID: "late"}})
	if err == nil || !strings.Contains(err.Error(), "redo log failed") {
		t.Fatalf("append after the redo log failed: %v, want it refused", err)
	}
	if n, err := g.s.LedgerCount(ctx, r.RunID); err != nil || n != 1 {
		t.Fatalf("ledger after the refused append: %d records, %v; want 1", n, err)
	}
}
