package jsonfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/atomicfile"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
)

// ledgerBytes is what a commit of recs appends to a ledger that
// ends on a newline: one line per record.
func ledgerBytes(t *testing.T, recs ...*durable.StepRecord) []byte {
	t.Helper()
	var out []byte
	for _, r := range recs {
		var err error
		if out, err = durable.AppendRecord(out, r, pyjson.Line); err != nil {
			t.Fatal(err)
		}
		out = append(out, '\n')
	}
	return out
}

// stagedDirOnDisk writes a data dir as a process killed inside a terminal
// commit leaves it: run_r1.json (waiting, with a mark of who saved it),
// the ledger, and the staged state (completed) under the name of a commit
// that appended `appended` to a ledger of `before` bytes. runSavedLater
// dates the run file after the staged file (someone saved the run since),
// otherwise before it.
func stagedDirOnDisk(t *testing.T, ledger string, before int64, appended []byte, runSavedLater bool) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	runPath := write("run_r1.json", `{"run_id": "r1", "workflow_id": "w", "status": "waiting", "current_node": "a", "vars": {"saved_by": "other"}}`)
	write("ledger_r1.jsonl", ledger)
	staged := write(stagedName("r1", before, appended),
		`{"run_id": "r1", "workflow_id": "w", "status": "completed", "current_node": "a", "vars": {}, "output": {"ok": true}}`)
	stagedAt := time.Now().Add(-time.Hour)
	runAt := stagedAt.Add(-time.Minute)
	if runSavedLater {
		runAt = stagedAt.Add(time.Minute)
	}
	if err := os.Chtimes(staged, stagedAt, stagedAt); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(runPath, runAt, runAt); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRecoverStagedLeavesAnotherProcessesWork: the recovery finishes a
// staged commit only when the ledger ends exactly with its records (size
// and FNV sum) and the run file was not saved since; it cuts a partial
// append only when the run was not saved since (docs/architecture.md:
// "If another process (Python) used the directory in between, saving the
// run or appending to its ledger, the staged file is dropped and its work
// left alone"). Guards each of those three checks.
func TestRecoverStagedLeavesAnotherProcessesWork(t *testing.T) {
	first := `{"run_id": "r1", "step_id": "s1", "node_id": "a", "status": "waiting"}` + "\n"
	records := `{"run_id": "r1", "step_id": "s2", "node_id": "a", "status": "completed"}` + "\n"
	// Another process's line, of the same length as the commit's records.
	other := `{"run_id": "r1", "step_id": "p2", "node_id": "a", "status": "completed"}` + "\n"
	if len(other) != len(records) || other == records {
		t.Fatal("precondition: the other line has the records' length and other bytes")
	}
	before := int64(len(first))
	cases := []struct {
		name          string
		ledger        string
		runSavedLater bool
	}{
		// The ledger reached the staged size, with another process's bytes.
		{"ledger appended by another process", first + other, false},
		// The records landed whole, and another process appended after
		// them: the commit was overtaken.
		{"ledger appended past the commit", first + records + other, false},
		// The records landed whole, but the run was saved after the staging.
		{"run saved since", first + records, true},
		// Part of the ledger's size range was written, and the run saved since:
		// the bytes may be the other process's, so they stay.
		{"partial size, run saved since", first + other[:10], true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := stagedDirOnDisk(t, c.ledger, before, []byte(records), c.runSavedLater)
			st := openInternal(t, dir)
			run, err := st.RunGet(context.Background(), "r1")
			if err != nil {
				t.Fatal(err)
			}
			if run.Status != durable.RunWaiting || run.Vars["saved_by"] != "other" {
				t.Errorf("after the reopen: run %s (saved_by %v); want the other process's waiting run left in place",
					run.Status, run.Vars["saved_by"])
			}
			got, err := os.ReadFile(filepath.Join(dir, "ledger_r1.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.ledger {
				t.Errorf("the ledger changed at open: %q, want %q", got, c.ledger)
			}
			if left, _ := atomicfile.Glob(dir, stagedPattern); len(left) > 0 {
				t.Errorf("staged files left: %v", left)
			}
		})
	}
}

// TestOpenFailsOnAStagedNameItCannotRemove: the recovery must leave no
// staged file; when it cannot settle one (here a non-empty directory
// under a staged-looking name cannot be removed), New reports it instead
// of opening the store as if the commit had been settled.
func TestOpenFailsOnAStagedNameItCannotRemove(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, ".commit-nonsense.tmp")
	if err := os.MkdirAll(filepath.Join(sub, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := New(Config{Dir: dir, NoSync: true})
	if err == nil {
		_ = st.Close()
		t.Fatal("New opened the store with a staged name it could not remove")
	}
	if !strings.Contains(err.Error(), ".commit-nonsense.tmp") {
		t.Errorf("New: %v; want the error to name the staged file", err)
	}
}

// runWithOneRecord makes r1 (running) with one non-terminal record
// in its ledger, in a synced store, and returns the store, the run at its
// stored version and the ledger's bytes.
func runWithOneRecord(t *testing.T, dir string) (*Store, *durable.RunState, []byte) {
	t.Helper()
	st, run := stagedFaultSetup(t, dir)
	rec := &durable.StepRecord{RunID: "r1", StepID: "s1", NodeID: "a", Status: durable.StepCompleted}
	if err := st.RunCommit(context.Background(), &store.CommitParams{Run: run, Records: []*durable.StepRecord{rec}}); err != nil {
		t.Fatal(err)
	}
	ledger, err := os.ReadFile(filepath.Join(dir, "ledger_r1.jsonl"))
	if err != nil || len(ledger) == 0 {
		t.Fatalf("precondition: ledger %q (%v)", ledger, err)
	}
	return st, run, ledger
}

// checkLedgerBytes checks the ledger holds exactly want.
func checkLedgerBytes(t *testing.T, dir string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(dir, "ledger_r1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("ledger is %q, want it as before the failed commit: %q", got, want)
	}
}

// TestFailedTerminalAppendIsCutBackWhenAppendCouldNot: a terminal
// commit's append that fails partway and that appendFile cannot cut back
// (its descriptor is gone) is undone by unstage: the ledger is cut back to
// its size before the commit, not to zero, and the staged file is dropped.
// The run stays as it was, in process and after a reopen.
func TestFailedTerminalAppendIsCutBackWhenAppendCouldNot(t *testing.T) {
	dir := t.TempDir()
	st, run, ledger := runWithOneRecord(t, dir)
	st.writeForTest = func(f *os.File, data []byte) (int, error) {
		st.writeForTest = nil
		n, _ := f.Write(data[:len(data)/2])
		_ = f.Close() // appendFile's own cut fails
		return n, errors.New("disk full (test)")
	}
	run.Status = durable.RunCompleted
	if err := st.RunCommit(context.Background(), &store.CommitParams{Run: run, Records: []*durable.StepRecord{terminalRecordOf()}}); err == nil {
		t.Fatal("the failed terminal commit reported success")
	}
	checkLedgerBytes(t, dir, ledger)
	if left, _ := atomicfile.Glob(dir, stagedPattern); len(left) > 0 {
		t.Errorf("staged files left after the failed commit: %v", left)
	}
	got, err := st.RunGet(context.Background(), "r1")
	if err != nil || got.Status != durable.RunRunning {
		t.Fatalf("run %v (%v), want still running", got, err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	checkAllOrNothing(t, dir, nil)
	checkLedgerBytes(t, dir, ledger)
}

// TestFailedPromoteCutsOnlyTheCommitsRecords: when the staged state
// cannot be put in place (the run file became a symlink), the commit's
// records are cut back to the ledger's size before them (the size the
// staged name knew), keeping the records of earlier commits.
func TestFailedPromoteCutsOnlyTheCommitsRecords(t *testing.T) {
	dir := t.TempDir()
	st, run, ledger := runWithOneRecord(t, dir)
	symlinkRunFileWhenAppended(t, st, filepath.Join(dir, "run_r1.json"))
	run.Status = durable.RunCompleted
	err := st.RunCommit(context.Background(), &store.CommitParams{Run: run, Records: []*durable.StepRecord{terminalRecordOf()}})
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("RunCommit: %v, want Promote's refusal", err)
	}
	checkLedgerBytes(t, dir, ledger)
	if n, err := st.LedgerCount(context.Background(), "r1"); err != nil || n != 1 {
		t.Errorf("%d records (%v), want the earlier commit's one", n, err)
	}
}

// TestTerminalCommitFailsWholeWhenStagingFails: an error from staging
// (beforeWrite) ends the append with nothing written (appendFile's doc;
// CHANGELOG: "a full disk now fails such a commit before anything is
// appended"). Here staging fails because a directory holds the staged
// name.
func TestTerminalCommitFailsWholeWhenStagingFails(t *testing.T) {
	dir := t.TempDir()
	st, run, ledger := runWithOneRecord(t, dir)
	rec := terminalRecordOf()
	name := st.stagedNameOf("r1", filepath.Join(dir, "run_r1.json"), int64(len(ledger)), ledgerBytes(t, rec))
	if err := os.MkdirAll(filepath.Join(dir, name, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	run.Status = durable.RunCompleted
	err := st.RunCommit(context.Background(), &store.CommitParams{Run: run, Records: []*durable.StepRecord{rec}})
	if err == nil {
		t.Fatal("the terminal commit succeeded although its state could not be staged")
	}
	if !strings.Contains(err.Error(), "staging") {
		t.Errorf("RunCommit: %v; want the staging error", err)
	}
	checkLedgerBytes(t, dir, ledger)
	got, err := st.RunGet(context.Background(), "r1")
	if err != nil || got.Status != durable.RunRunning {
		t.Fatalf("run %v (%v), want still running", got, err)
	}
}

// TestStagedAppendDirSyncFailureIsReported: when a staged commit's
// records land but the directory sync after them fails, the commit goes
// on and then reports that failure (RunCommit: "finish the commit ...
// then report the error"), even when putting the state in place fails
// too.
func TestStagedAppendDirSyncFailureIsReported(t *testing.T) {
	_, _, _, commitErr := commitTerminalDirSyncFailing(t, t.TempDir())
	if !errors.Is(commitErr, errAppendedUnsynced) {
		t.Errorf("RunCommit: %v; want it to report the append's failed directory sync", commitErr)
	}
}

// TestStagedNameLengthLimit: a terminal commit is staged when its staged
// name fits the 255-byte file name limit (maxNameLen) and committed the
// unstaged way when it is one byte longer; either way it commits.
func TestStagedNameLengthLimit(t *testing.T) {
	ctx := context.Background()
	for _, want := range []int{maxNameLen, maxNameLen + 1} {
		// Find an id and a step id giving a staged name of exactly want bytes.
		var id string
		var rec *durable.StepRecord
		var appended []byte
	search:
		for n := 200; n < 240; n++ {
			for k := 0; k < 40; k++ {
				id = strings.Repeat("r", n)
				rec = &durable.StepRecord{RunID: id, StepID: "s" + strings.Repeat("x", k), NodeID: "a", Status: durable.StepCompleted}
				appended = ledgerBytes(t, rec)
				if len(stagedName(id, 0, appended)) == want {
					break search
				}
				rec = nil
			}
		}
		if rec == nil {
			t.Fatalf("no id gives a staged name of %d bytes", want)
		}
		t.Run(fmt.Sprintf("%d-byte name", want), func(t *testing.T) {
			dir := t.TempDir()
			file := `{"run_id": "` + id + `", "workflow_id": "w", "status": "waiting", "current_node": "a", "vars": {}}`
			if err := os.WriteFile(filepath.Join(dir, "run_"+id+".json"), []byte(file), 0o644); err != nil {
				t.Fatal(err)
			}
			st := openInternal(t, dir)
			run, err := st.RunGet(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			var stagedAs []string
			st.killForTest = func(p string) {
				if p == "staged" {
					left, _ := atomicfile.Glob(dir, stagedPattern)
					for _, l := range left {
						stagedAs = append(stagedAs, filepath.Base(l))
					}
					if len(left) == 0 {
						stagedAs = append(stagedAs, "(nothing)")
					}
				}
			}
			run.Status = durable.RunCompleted
			if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Records: []*durable.StepRecord{rec}}); err != nil {
				t.Fatalf("terminal commit with a %d-byte staged name: %v", want, err)
			}
			got, err := st.RunGet(ctx, id)
			if err != nil || got.Status != durable.RunCompleted {
				t.Fatalf("run %v (%v), want completed", got, err)
			}
			if want <= maxNameLen {
				if len(stagedAs) != 1 || stagedAs[0] != stagedName(id, 0, appended) {
					t.Errorf("staged as %v, want once as the %d-byte name", stagedAs, want)
				}
			} else if len(stagedAs) != 0 {
				t.Errorf("a %d-byte staged name was used: %v", want, stagedAs)
			}
			if left, _ := atomicfile.Glob(dir, stagedPattern); len(left) > 0 {
				t.Errorf("staged files left: %v", left)
			}
		})
	}
}
