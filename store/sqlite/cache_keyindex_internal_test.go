package sqlite

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// A state handed over with one commit (Handoff) is not read back once a
// later commit of the run has replaced the cached state with another
// object's: putState lets the handed state go, so the read decodes the
// newer text, at the newer version.
func TestHotCache_LaterCommitLetsTheHandedStateGo(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openStore(t, Config{Path: filepath.Join(t.TempDir(), "db.sqlite3")})
	a := &durable.RunState{RunID: strings.Repeat("h", 32), WorkflowID: "wf", Status: durable.RunRunning,
		Vars: map[string]any{"k": "old"}}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: a, Create: true, RandomID: true, Handoff: true}); err != nil {
		t.Fatal(err)
	}
	b := &durable.RunState{RunID: a.RunID, WorkflowID: "wf", Status: durable.RunRunning, Version: a.Version,
		Vars: map[string]any{"k": "new"}}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: b}); err != nil {
		t.Fatal(err)
	}
	got, err := s.RunGet(ctx, a.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if got == a || got.Vars["k"] != "new" || got.Version != 2 {
		t.Fatalf("RunGet after a second commit = %p (handed %p), vars %v, version %d; want a decode of the second commit at version 2",
			got, a, got.Vars, got.Version)
	}
}

// A waiting run with a deadline that the cache learnt of from a read (not
// a commit) is known to have a wait_index row: the commit that resumes it
// deletes that row, so the run is no longer listed due. Guards the
// indexed flag RunGet caches with the state.
func TestReadWaitingRunLeavesTheDueListWhenResumed(t *testing.T) {
	t.Parallel()
	for _, noRedo := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoRedoLog=%v", noRedo), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			path := filepath.Join(t.TempDir(), "db.sqlite3")
			base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			r := redoRun(strings.Repeat("v", 32))
			r.Waiting = &durable.WaitState{Reason: durable.WaitUntil, Until: durable.Time{Time: base.Add(time.Second)}}
			s := openStore(t, Config{Path: path, NoRedoLog: noRedo})
			commitSteps(t, s, r, durable.RunWaiting, true, "a")
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = openStore(t, Config{Path: path, NoRedoLog: noRedo}) // an empty cache
			got, err := s.RunGet(ctx, r.RunID)                      // caches the state from the row
			if err != nil {
				t.Fatal(err)
			}
			wantLeavesDueListWhenResumed(t, s, got, base.Add(time.Minute))
		})
	}
}

// completedRec is a completed record of runID under key.
func completedRec(runID, step, key string) *durable.StepRecord {
	return &durable.StepRecord{RunID: runID, StepID: step, Status: durable.StepCompleted, IdempotencyKey: key}
}

// After LedgerDelete, the key index no longer answers from the rows it
// read of the deleted ledger: a key the new ledger completed at a seq the
// index had read before the delete is found. (The run waits, so that its
// records are out of the hot cache and the look-up goes through the key
// index.)
func TestLedgerDeleteForgetsTheKeyIndex(t *testing.T) {
	t.Parallel()
	for _, noRedo := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoRedoLog=%v", noRedo), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			s := openStore(t, Config{Path: filepath.Join(t.TempDir(), "db.sqlite3"), NoRedoLog: noRedo})
			r := redoRun(strings.Repeat("k", 32))
			r.Waiting = &durable.WaitState{Reason: durable.WaitUser, WaitKey: "user:k"}
			r.Status = durable.RunWaiting
			commit := func(create bool, recs ...*durable.StepRecord) {
				t.Helper()
				if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: create, RandomID: create, Records: recs}); err != nil {
					t.Fatal(err)
				}
			}
			commit(true, completedRec(r.RunID, "a", "k1"), completedRec(r.RunID, "b", "x"), completedRec(r.RunID, "c", "y"))
			if got, err := s.LedgerFindCompleted(ctx, r.RunID, "k1"); err != nil || got == nil || got.Seq != 1 {
				t.Fatalf("LedgerFindCompleted(k1) = %+v, %v; want seq 1", got, err)
			}
			if _, err := s.LedgerDelete(ctx, r.RunID); err != nil {
				t.Fatal(err)
			}
			commit(false, completedRec(r.RunID, "d", "z"), completedRec(r.RunID, "e", "k2"),
				completedRec(r.RunID, "f", "w"), completedRec(r.RunID, "g", "v"))
			got, err := s.LedgerFindCompleted(ctx, r.RunID, "k2")
			if err != nil || got == nil || got.Seq != 2 || got.StepID != "e" {
				t.Fatalf("LedgerFindCompleted(k2) after the ledger was deleted and written again = %+v, %v; want step e at seq 2", got, err)
			}
			if got, err := s.LedgerFindCompleted(ctx, r.RunID, "k1"); err != nil || got != nil {
				t.Fatalf("LedgerFindCompleted(k1) of the deleted ledger = %+v, %v; want nil", got, err)
			}
		})
	}
}

// The key index answers with a key's first completed record, also at a
// later look-up after a second completed record of that key was read:
// the index keeps the lowest seq, not the last one it read. (The run
// waits, so that its records are out of the hot cache.)
func TestKeyIndexKeepsTheFirstCompletedRecordOfAKey(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openStore(t, Config{Path: filepath.Join(t.TempDir(), "db.sqlite3")})
	r := redoRun(strings.Repeat("f", 32))
	r.Waiting = &durable.WaitState{Reason: durable.WaitUser, WaitKey: "user:f"}
	r.Status = durable.RunWaiting
	commit := func(create bool, recs ...*durable.StepRecord) {
		t.Helper()
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: create, RandomID: create, Records: recs}); err != nil {
			t.Fatal(err)
		}
	}
	find := func() {
		t.Helper()
		got, err := s.LedgerFindCompleted(ctx, r.RunID, "k")
		if err != nil || got == nil || got.Seq != 1 || got.StepID != "first" {
			t.Fatalf("LedgerFindCompleted(k) = %+v, %v; want step first at seq 1", got, err)
		}
	}
	commit(true, completedRec(r.RunID, "first", "k"))
	find()
	commit(false, completedRec(r.RunID, "again", "k"))
	find() // reads seq 2
	find() // from the index alone
}
