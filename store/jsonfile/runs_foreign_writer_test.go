package jsonfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
)

// A Python process that runs no runner (a host cancelling a run, a
// script) may save run_<id>.json while this store is open: Python's
// stores take no lock and save last-write-wins (spec §4.3). These tests
// play that process with pythonSave.

// openWithRunningRun opens a store in a new directory, creates run r1
// running there and returns the store and r1 as read back.
func openWithRunningRun(t *testing.T) (*Store, *durable.RunState) {
	t.Helper()
	s := openInternal(t, t.TempDir())
	if err := s.RunCommit(t.Context(), &store.CommitParams{Run: identityRun("r1", "mine", durable.RunRunning), Create: true}); err != nil {
		t.Fatal(err)
	}
	mine, err := s.RunGet(t.Context(), "r1")
	if err != nil {
		t.Fatal(err)
	}
	return s, mine
}

// pythonCancels saves r1 cancelled over s's file, as Python would.
func pythonCancels(t *testing.T, s *Store) {
	t.Helper()
	py := identityRun("r1", "cancelled by python", durable.RunCancelled)
	py.UpdatedAt = durable.NewTime(time.Date(2026, 5, 1, 12, 0, 1, 0, time.UTC))
	pythonSave(t, s.runPath("r1"), py)
}

// TestForeignSaveMakesStaleCommitConflict: a commit of a state read
// before another process saved the run is refused with store.ErrConflict
// (the host's save wins, as the SQLite store's migration 017 makes it),
// not written over that save; the state read again commits.
func TestForeignSaveMakesStaleCommitConflict(t *testing.T) {
	ctx := t.Context()
	s, mine := openWithRunningRun(t)
	pythonCancels(t, s)

	mine.CurrentNode = "next"
	err := s.RunCommit(ctx, &store.CommitParams{Run: mine, Records: []*durable.StepRecord{identityRec("r1", 1, durable.StepCompleted, "k1")}})
	if !errors.Is(err, store.ErrConflict) {
		got, _ := s.RunGet(ctx, "r1")
		t.Fatalf("commit of a state read before a foreign save: err %v, want store.ErrConflict; run now %s (tag %v)",
			err, got.Status, got.Vars["tag"])
	}
	if n, err := s.LedgerCount(ctx, "r1"); err != nil || n != 0 {
		t.Errorf("ledger after the refused commit: %d records, %v; want none appended", n, err)
	}
	again, err := s.RunGet(ctx, "r1")
	if err != nil || again.Status != durable.RunCancelled || again.Version <= mine.Version {
		t.Fatalf("RunGet after the conflict = %v (version %d), %v; want the cancelled state at a later version than %d",
			again.Status, again.Version, err, mine.Version)
	}
	again.Vars["seen"] = true
	if err := s.RunCommit(ctx, &store.CommitParams{Run: again}); err != nil {
		t.Errorf("commit of the state read again: %v", err)
	}
}

// TestSameBytesForeignRewriteIsNoConflict: a new file at the run's path
// holding the bytes the store last wrote (a copy put back, a save of the
// same state) changes nothing, so a commit of the state read before is
// not refused.
func TestSameBytesForeignRewriteIsNoConflict(t *testing.T) {
	ctx := t.Context()
	s, mine := openWithRunningRun(t)
	data, err := os.ReadFile(s.runPath("r1"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := s.runPath("r1") + ".copy"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, s.runPath("r1")); err != nil {
		t.Fatal(err)
	}
	mine.CurrentNode = "next"
	if err := s.RunCommit(ctx, &store.CommitParams{Run: mine}); err != nil {
		t.Errorf("commit after a rewrite of the same bytes: %v", err)
	}
}

// TestIndexFollowsForeignSaveReadByRunGet: once RunGet has read a run
// file another process rewrote, the listings agree with it: RunIndex and
// RunList(status) show the new status, and RunListDue no longer hands
// out the wait the new state ended (spec §4.1: due runs are waiting
// ones; Python's queries scan the files).
func TestIndexFollowsForeignSaveReadByRunGet(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := openInternal(t, dir)
	w := identityRun("r1", "waiting", durable.RunWaiting)
	w.Waiting = &durable.WaitState{Reason: durable.WaitUntil, Until: durable.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: w, Create: true}); err != nil {
		t.Fatal(err)
	}
	pythonCancels(t, s)

	got, err := s.RunGet(ctx, "r1")
	if err != nil || got.Status != durable.RunCancelled {
		t.Fatalf("RunGet after the foreign save: %v, %v", got, err)
	}
	rows, err := s.RunIndex(ctx, &store.RunIndexParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Status != durable.RunCancelled {
		t.Errorf("RunIndex after RunGet read the cancelled state: %+v, want r1 cancelled", rows)
	}
	due, err := s.RunListDue(ctx, &store.RunListDueParams{Now: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 0 {
		t.Errorf("RunListDue after RunGet read the cancelled state: %+v, want none", due)
	}
	cancelled, err := s.RunList(ctx, &store.RunListParams{Status: durable.RunCancelled})
	if err != nil {
		t.Fatal(err)
	}
	if len(cancelled) != 1 {
		t.Errorf("RunList(status=cancelled) after RunGet read the cancelled state: %d runs, want 1", len(cancelled))
	}
}

// taggedRun is a running run id whose vars hold {"tag": tag}.
func taggedRun(id, tag string) *durable.RunState {
	now := durable.NewTime(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	return &durable.RunState{RunID: id, WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "start",
		Vars: map[string]any{"tag": tag}, CreatedAt: now, UpdatedAt: now}
}

// writeRawFile writes data to path as another process would, bypassing the store.
func writeRawFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A run file that appears after the store opened (written by another
// process) is adopted at version 1, as a run found at open is (package
// doc), and commits at that version.
func TestRunFileWrittenAfterOpenIsAtVersionOne(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openInternal(t, dir)
	ctx := t.Context()
	b, err := durable.MarshalRun(taggedRun("ext", "from elsewhere"), pyjson.Pretty)
	if err != nil {
		t.Fatal(err)
	}
	writeRawFile(t, filepath.Join(dir, "run_ext.json"), string(b))
	got, err := s.RunGet(ctx, "ext")
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 1 {
		t.Errorf("adopted run at version %d, want 1", got.Version)
	}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: got}); err != nil || got.Version != 2 {
		t.Errorf("commit of the adopted run: %v, version %d; want nil, 2", err, got.Version)
	}
}

// readRunFile: "its run_id must match id". A run file whose run_id names
// another run (a copy under the wrong name) is unreadable: RunGet reports
// an error naming the file rather than another run's state, and listings
// do not show the other run twice.
func TestRunFileOfAnotherRunIsUnreadable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b, err := durable.MarshalRun(taggedRun("x", "x's state"), pyjson.Pretty)
	if err != nil {
		t.Fatal(err)
	}
	writeRawFile(t, filepath.Join(dir, "run_x.json"), string(b))
	wrong := filepath.Join(dir, "run_y.json")
	writeRawFile(t, wrong, string(b))
	s := openInternal(t, dir)
	ctx := t.Context()
	got, err := s.RunGet(ctx, "y")
	if err == nil || errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), wrong) {
		t.Errorf("RunGet(y) of a file holding run x = %v, %v; want an error naming %s", got, err, wrong)
	}
	list, err := s.RunList(ctx, &store.RunListParams{})
	if err != nil || len(list) != 1 || list[0].RunID != "x" {
		var ids []string
		for _, r := range list {
			ids = append(ids, r.RunID)
		}
		t.Errorf("RunList = %v, %v; want only x", ids, err)
	}
}

// The cached state is "valid while the file keeps the same modification
// time and size" (cachedRun): a rewrite by another process within the
// file system's timestamp granularity (same mtime) but of another size
// is read again.
func TestRunFileRewrittenWithSameMtimeIsReadAgain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openInternal(t, dir)
	ctx := t.Context()
	if err := s.RunCommit(ctx, &store.CommitParams{Run: taggedRun("r1", "mine"), Create: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunGet(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "run_r1.json")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := durable.MarshalRun(taggedRun("r1", "rewritten by another process"), pyjson.Pretty)
	if err != nil {
		t.Fatal(err)
	}
	writeRawFile(t, path, string(b))
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	got, err := s.RunGet(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Vars["tag"] != "rewritten by another process" {
		t.Errorf("RunGet after a same-mtime rewrite of another size: tag %q; want the file's", got.Vars["tag"])
	}
}
