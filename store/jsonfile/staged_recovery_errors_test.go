package jsonfile

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// These tests guard the promise of staged terminal commits (staged.go;
// package doc, "Commit order"; docs/architecture.md, "staged terminal
// commits"): a run is ended with its records or not at all, also when an
// undo or the recovery at open meets an I/O error.

// TestStagedPromoteAndCutFailKeepsStagedName: a terminal commit whose
// Promote failed is undone by unstage, which cuts the records off the
// ledger before it drops the staged name (its doc comment: the reverse
// order "would leave records without the state they end, and nothing to
// finish them with"). When the cut fails too (here EMFILE opening the
// ledger, as on a busy server; the Promote failure is the symlinked run
// file of TestStagedPromoteFails), the staged name must stay, so that the
// next open finishes the commit (its records landed whole, the run file
// is unchanged). The failure guarded against: unstage dropping the name
// whatever the cut did, so that a reopen finds the run running with a
// completed terminal record in its ledger.
func TestStagedPromoteAndCutFailKeepsStagedName(t *testing.T) {
	dir := t.TempDir()
	st, run := stagedFaultSetup(t, dir)
	runPath := filepath.Join(dir, "run_r1.json")
	aside := symlinkRunFileWhenAppended(t, st, runPath)
	appended := st.killForTest
	var undo func()
	st.killForTest = func(p string) {
		appended(p)
		if p == "promote failed" {
			f, err := os.Open(os.DevNull)
			if err != nil {
				t.Fatal(err)
			}
			undo = exhaustFDsAfter(t, f)
			_ = f.Close()
		}
	}
	run.Status = durable.RunCompleted
	terminal := terminalRecordOf()
	commitErr := st.RunCommit(context.Background(), &store.CommitParams{Run: run, Records: []*durable.StepRecord{terminal}})
	if undo == nil {
		t.Fatal("the commit did not reach its promote failed point")
	}
	undo()
	if commitErr == nil {
		t.Fatal("RunCommit succeeded")
	}
	if terminal.Seq == 0 {
		// The cut failed: the record is still in the ledger, and its Seq
		// says so (observe notifies it).
		t.Error("the record lost its Seq although the cut failed")
	}
	t.Logf("RunCommit: %v", commitErr)
	_ = st.Close()
	if err := os.Remove(runPath); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(aside, runPath); err != nil {
		t.Fatal(err)
	}
	checkAllOrNothing(t, dir, commitErr)
}

// TestStagedRecoveryKeepsCommitOnReadError: recoverStaged finishes at
// open a terminal commit whose records all landed (package doc, "Commit
// order": "the next open finishes such a commit if all its records
// landed ... so a run's end is never half made"). An error reading the
// ledger, the run file or the staged file (here EMFILE for every new
// descriptor; EIO alike) says nothing of the commit: the open must fail
// naming the file, and the staged name stay for the next open. The failure
// guarded against: each such read error taken for a verdict (appendedMatch's
// for "the records did not land", savedSince's for "not saved since", the
// staged file's for "unreadable"), so the staged file, the only copy of
// the terminal state, is deleted while its records stay in the ledger.
func TestStagedRecoveryKeepsCommitOnReadError(t *testing.T) {
	dir := t.TempDir()
	hidden := filepath.Join(t.TempDir(), "staged")
	var name string
	terminalCommitKilledAfterAppend(t, dir, func() {}, func(staged string) {
		name = filepath.Base(staged)
	})
	// Open without the recovery seeing the staged file, then run the
	// recovery of it with every new descriptor refused.
	if err := os.Rename(filepath.Join(dir, name), hidden); err != nil {
		t.Fatal(err)
	}
	st := openInternal(t, dir)
	staged := filepath.Join(dir, name)
	if err := os.Rename(hidden, staged); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	undo := exhaustFDsAfter(t, f)
	_ = f.Close()
	recErr := st.recoverStagedCommit(staged)
	undo()
	t.Logf("recoverStagedCommit with EMFILE: %v", recErr)
	if recErr == nil {
		t.Error("recoverStagedCommit returned no error although it could read nothing")
	}
	if _, err := os.Stat(staged); err != nil {
		t.Errorf("the staged commit %s was removed on a transient read error (%v): its records stay in the ledger without the state they end", name, err)
	}
}
