package jsonfile_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
)

// Edge cases of this store's commit order, listings and reopen: each test
// fails on a plausible bug of this store that no other test catches.

func edgeRun(id, tag string) *durable.RunState {
	now := durable.NewTime(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	return &durable.RunState{RunID: id, WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "start",
		Vars: map[string]any{"tag": tag}, CreatedAt: now, UpdatedAt: now}
}

// Commit order (package doc): the records are appended first and the run
// file written second, "so the ledger is never behind the state". An
// append that fails therefore leaves the run file as it was: the commit
// fails whole. A store that wrote the run file first would leave the new
// state saved without the records that led to it.
func TestFailedAppendLeavesTheRunFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := open(t, dir, true)
	ctx := t.Context()
	r := edgeRun("r1", "old")
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
	// The ledger file cannot be appended to: a directory stands in its
	// place.
	if err := os.Mkdir(filepath.Join(dir, "ledger_r1.jsonl"), 0o755); err != nil {
		t.Fatal(err)
	}
	next := edgeRun("r1", "new state, longer than the old one")
	next.Version = r.Version
	rec := &durable.StepRecord{RunID: "r1", StepID: "s1", NodeID: "start", Status: durable.StepCompleted, Attempt: 1}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: next, Records: []*durable.StepRecord{rec}}); err == nil {
		t.Fatal("RunCommit succeeded although its records could not be appended")
	}
	got, err := s.RunGet(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Vars["tag"] != "old" || got.Version != r.Version {
		t.Errorf("after a commit whose append failed, the run is %q at version %d; want %q at %d (state saved without its records)",
			got.Vars["tag"], got.Version, "old", r.Version)
	}
	b, err := os.ReadFile(filepath.Join(dir, "run_r1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if onDisk, err := durable.UnmarshalRun(b); err != nil || onDisk.Vars["tag"] != "old" {
		t.Errorf("run file after a commit whose append failed: tag %v (%v); want %q", onDisk.Vars["tag"], err, "old")
	}
}

// A run file that another process rewrote (Python's gateway takes no
// lock on the directory) is read again: the cached state is "valid while
// the file keeps the same modification time and size" (cachedRun).
func TestRewrittenRunFileIsReadAgain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := open(t, dir, true)
	ctx := t.Context()
	if err := s.RunCommit(ctx, &store.CommitParams{Run: edgeRun("r1", "mine"), Create: true}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.RunGet(ctx, "r1"); err != nil || got.Vars["tag"] != "mine" {
		t.Fatalf("RunGet = %v, %v", got, err)
	}
	path := filepath.Join(dir, "run_r1.json")
	b, err := durable.MarshalRun(edgeRun("r1", "written by another process"), pyjson.Pretty)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	got, err := s.RunGet(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Vars["tag"] != "written by another process" {
		t.Errorf("RunGet after another process rewrote the run file: tag %q; want the file's", got.Vars["tag"])
	}
}

// A reopened store does not issue again the seqs of the newest commands a
// delete removed (seqFile: "so that a reopened store does not issue their
// seqs again"), even when no consumer cursor remembers them.
// (CommandLastSeq is not checked: like Python's stores it reports the
// highest seq still in the file.)
func TestDeletedNewestSeqsNotReissuedAfterReopen(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	s := open(t, dir, true)
	for _, c := range []struct{ id, run string }{{"a", "keep"}, {"b", "keep"}, {"c", "gone"}, {"d", "gone"}} {
		if _, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: c.id, RunID: c.run, Type: "pause"}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.CommandDeleteByRun(ctx, "gone"); err != nil || n != 2 {
		t.Fatalf("CommandDeleteByRun = %d, %v; want 2", n, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, dir, true)
	res, err := s2.CommandAppend(ctx, &durable.CommandRecord{CommandID: "e", RunID: "keep", Type: "resume"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Seq != 5 {
		t.Errorf("first append after reopening got seq %d; want 5, above the deleted commands' seqs", res.Seq)
	}
}
