package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// Writes on a closed store return errClosed ("sqlite: store is closed"),
// whatever path they take, and so does a read of a store owning its file
// (takeTurn): not an error of the connection Close closed under them.
func TestWritesOnAClosedStoreReturnErrClosed(t *testing.T) {
	t.Parallel()
	modes := map[string]Config{"owned": {}, "owned without redo log": {NoRedoLog: true},
		"no cache": {CacheBytes: -1}, "shared": {Shared: true}}
	for name, cfg := range modes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			cfg.Path = filepath.Join(t.TempDir(), "runtime.sqlite3")
			s := openStore(t, cfg)
			r := redoRun("r1")
			if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			check := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, errClosed) {
					t.Errorf("%s on a closed store: err = %v, want errClosed", what, err)
				}
			}
			check("RunCommit", s.RunCommit(ctx, &store.CommitParams{Run: r}))
			check("RunCommit (create)", s.RunCommit(ctx, &store.CommitParams{Run: redoRun("r2"), Create: true}))
			_, err := s.CommandAppend(ctx, &durable.CommandRecord{RunID: "r1", Type: "pause"})
			check("CommandAppend", err)
			_, err = s.LedgerDelete(ctx, "r1")
			check("LedgerDelete", err)
			check("CursorSave", s.CursorSave(ctx, "c", 1))
			check("RunClaim", s.RunClaim(ctx, &store.RunClaimParams{RunID: "r1", Owner: "a", TTL: time.Second}))
			if !cfg.Shared {
				_, err = s.RunList(ctx, &store.RunListParams{})
				check("RunList", err)
				_, _, err = s.CommandListAfter(ctx, 0, 0)
				check("CommandListAfter", err)
			}
		})
	}
}

// cancelledOnceTurnTaken is a context that ends right after its first
// Done call, which is the wait for the writer turn (takeTurn) in a store
// without a redo log: its caller gives up once its write has the turn.
type cancelledOnceTurnTaken struct {
	context.Context
	calls atomic.Int32
}

var closedDone = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (c *cancelledOnceTurnTaken) Done() <-chan struct{} {
	if c.calls.Add(1) == 1 {
		return nil
	}
	return closedDone
}

func (c *cancelledOnceTurnTaken) Err() error {
	if c.calls.Load() > 1 {
		return context.Canceled
	}
	return nil
}

// A context ends the wait for the writer, but once a write transaction
// has begun it runs to its end (package doc, "Cancellation"; Store.write):
// a caller cancelling while its write holds the writer turn gets the write
// committed, whole, not an interrupted transaction.
func TestWriteCancelledAfterTakingTheTurnStillCommits(t *testing.T) {
	t.Parallel()
	modes := map[string]Config{"owned without redo log": {NoRedoLog: true}, "no cache": {CacheBytes: -1},
		"shared": {Shared: true}}
	for name, cfg := range modes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg.Path = filepath.Join(t.TempDir(), "runtime.sqlite3")
			s := openStore(t, cfg)
			rec := func(step string) *durable.StepRecord {
				return &durable.StepRecord{RunID: "r1", StepID: step, Status: durable.StepCompleted}
			}
			r := redoRun("r1")
			ctx := &cancelledOnceTurnTaken{Context: t.Context()}
			if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true,
				Records: []*durable.StepRecord{rec("s1"), rec("s2")}}); err != nil {
				t.Fatalf("RunCommit cancelled once it had the writer turn: %v", err)
			}
			ctx = &cancelledOnceTurnTaken{Context: t.Context()}
			if err := s.LedgerAppend(ctx, "r1", []*durable.StepRecord{rec("s3")}); err != nil {
				t.Fatalf("LedgerAppend cancelled once it had the writer turn: %v", err)
			}
			ctx = &cancelledOnceTurnTaken{Context: t.Context()}
			if _, err := s.CommandAppend(ctx, &durable.CommandRecord{RunID: "r1", Type: "pause"}); err != nil {
				t.Fatalf("CommandAppend cancelled once it had the writer turn: %v", err)
			}
			got, err := s.RunGet(t.Context(), "r1")
			if err != nil || got.Version != 1 {
				t.Fatalf("RunGet = %+v, %v; want the run at version 1", got, err)
			}
			if n, err := s.LedgerCount(t.Context(), "r1"); err != nil || n != 3 {
				t.Errorf("LedgerCount = %d, %v; want 3", n, err)
			}
			if n, err := s.CommandLastSeq(t.Context()); err != nil || n != 1 {
				t.Errorf("CommandLastSeq = %d, %v; want 1", n, err)
			}
		})
	}
}
