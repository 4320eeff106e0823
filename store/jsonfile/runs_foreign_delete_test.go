package jsonfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// A process that runs no runner (Python `serve --no-runner`, a clean-up
// script, a user) may remove run_<id>.json while the store is open.
// Python's JsonFileRunStore lists by scanning the run_*.json files
// (list_run_index, list_due_wait_until), so a removed file drops out of
// its listings at once, and its save writes a run whose file is absent.

// dueRun is a run waiting until a minute ago: due now.
func dueRun(id string) *durable.RunState {
	now := time.Now().UTC()
	return &durable.RunState{
		RunID: id, WorkflowID: "wf", Status: durable.RunWaiting, CurrentNode: "n",
		CreatedAt: durable.NewTime(now), UpdatedAt: durable.NewTime(now),
		Waiting: &durable.WaitState{Reason: durable.WaitUntil, Until: durable.NewTime(now.Add(-time.Minute)), AllowFreeText: true},
	}
}

func runningRun(id string) *durable.RunState {
	now := time.Now().UTC()
	return &durable.RunState{RunID: id, WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "n",
		CreatedAt: durable.NewTime(now), UpdatedAt: durable.NewTime(now)}
}

func indexedIDs(t *testing.T, s store.Store) []string {
	t.Helper()
	rows, err := s.RunIndex(t.Context(), &store.RunIndexParams{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, row := range rows {
		ids = append(ids, row.RunID)
	}
	return ids
}

func dueIDs(t *testing.T, s store.Store, limit int) []string {
	t.Helper()
	due, err := s.RunListDue(t.Context(), &store.RunListDueParams{Now: time.Now(), Limit: limit})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range due {
		ids = append(ids, d.RunID)
	}
	return ids
}

// TestForeignDeletedRunLeavesTheListingsOnceRead: once RunGet has found
// the file gone (store.ErrNotFound), RunIndex and RunListDue agree with
// it, rather than listing the run, and handing the scheduler a due run
// it cannot load at every poll, until a reopen.
func TestForeignDeletedRunLeavesTheListingsOnceRead(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := open(t, dir, true)
	if err := s.RunCommit(ctx, &store.CommitParams{Run: dueRun("gone"), Create: true}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "run_gone.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunGet(ctx, "gone"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("RunGet after the file was removed: %v, want ErrNotFound", err)
	}
	if ids := indexedIDs(t, s); slices.Contains(ids, "gone") {
		t.Errorf("RunIndex = %v: lists a run RunGet reports not found", ids)
	}
	if ids := dueIDs(t, s, 0); slices.Contains(ids, "gone") {
		t.Errorf("RunListDue = %v: lists a run RunGet reports not found", ids)
	}
}

// TestForeignDeletedRunLeavesTheListingsUnread: the listings drop a run
// whose file was removed without a read of it first, and a deleted run
// does not take the place of one still due in a listing cut at its
// limit (a short listing tells the scheduler no other run is due).
func TestForeignDeletedRunLeavesTheListingsUnread(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := open(t, dir, true)
	for _, id := range []string{"a", "b", "c"} {
		if err := s.RunCommit(ctx, &store.CommitParams{Run: dueRun(id), Create: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Join(dir, "run_a.json")); err != nil {
		t.Fatal(err)
	}
	if ids := dueIDs(t, s, 2); !slices.Equal(ids, []string{"b", "c"}) {
		t.Errorf("RunListDue(limit 2) after a's file was removed = %v, want [b c]", ids)
	}
	if err := os.Remove(filepath.Join(dir, "run_b.json")); err != nil {
		t.Fatal(err)
	}
	if ids := indexedIDs(t, s); !slices.Equal(ids, []string{"c"}) {
		t.Errorf("RunIndex after b's file was removed = %v, want [c]", ids)
	}
}

// TestCreateAfterForeignDelete: a create of a run whose file was removed
// writes it (Python's save, spec §4.1 create_if_absent), whether or not
// the store read the run since, instead of failing with
// store.ErrAlreadyExists until a reopen. The ledger is kept, as after
// RunDelete: the new run's records follow those already there.
func TestCreateAfterForeignDelete(t *testing.T) {
	for _, readFirst := range []bool{true, false} {
		ctx := t.Context()
		dir := t.TempDir()
		s := open(t, dir, true)
		first := &durable.StepRecord{RunID: "again", StepID: "s1", NodeID: "n", Status: durable.StepStarted}
		if err := s.RunCommit(ctx, &store.CommitParams{Run: runningRun("again"), Create: true, Records: []*durable.StepRecord{first}}); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(dir, "run_again.json")); err != nil {
			t.Fatal(err)
		}
		if readFirst {
			if _, err := s.RunGet(ctx, "again"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("RunGet after the file was removed: %v, want ErrNotFound", err)
			}
		}
		second := &durable.StepRecord{RunID: "again", StepID: "s2", NodeID: "n", Status: durable.StepStarted}
		if err := s.RunCommit(ctx, &store.CommitParams{Run: runningRun("again"), Create: true, Records: []*durable.StepRecord{second}}); err != nil {
			t.Fatalf("read first %v: create of a run whose file is gone: %v, want it created", readFirst, err)
		}
		got, err := s.RunGet(ctx, "again")
		if err != nil || got.Version != 1 {
			t.Fatalf("read first %v: RunGet after the create = %v, %v; want version 1", readFirst, got, err)
		}
		if second.Seq != 2 {
			t.Errorf("read first %v: the new run's first record has seq %d, want 2 (after the kept ledger's)", readFirst, second.Seq)
		}
		if n, err := s.LedgerCount(ctx, "again"); err != nil || n != 2 {
			t.Errorf("read first %v: LedgerCount = %d, %v; want 2", readFirst, n, err)
		}
	}
}

// TestRunDeleteAfterForeignDeleteReportsAbsent: RunDelete of a run whose
// file another process already removed reports that the run did not
// exist (false), as Python's delete of the absent file does and as RunGet
// reports it (store.ErrNotFound), whether or not the store read the run
// since; and the run leaves the listings. Reporting true because the
// store's index still held the run would make the answer depend on
// whether a read happened first.
func TestRunDeleteAfterForeignDeleteReportsAbsent(t *testing.T) {
	for _, readFirst := range []bool{true, false} {
		ctx := t.Context()
		dir := t.TempDir()
		s := open(t, dir, true)
		if err := s.RunCommit(ctx, &store.CommitParams{Run: runningRun("gone"), Create: true}); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(dir, "run_gone.json")); err != nil {
			t.Fatal(err)
		}
		if readFirst {
			if _, err := s.RunGet(ctx, "gone"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("RunGet after the file was removed: %v, want ErrNotFound", err)
			}
		}
		existed, err := s.RunDelete(ctx, "gone")
		if err != nil || existed {
			t.Errorf("read first %v: RunDelete of a run whose file is gone = %v, %v; want false, nil", readFirst, existed, err)
		}
		if ids := indexedIDs(t, s); slices.Contains(ids, "gone") {
			t.Errorf("read first %v: RunIndex after RunDelete = %v; want the run gone", readFirst, ids)
		}
	}
}
