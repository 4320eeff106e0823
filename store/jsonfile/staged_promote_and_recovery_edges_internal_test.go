package jsonfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/atomicfile"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
)

// TestUnsyncedPromoteKeepsTheRecordsAndOwesTheSync: a terminal commit
// whose Promote put the staged state in place but whose directory sync
// failed (EMFILE from just after the append's write; the ledger existed,
// so the append itself syncs no directory) is in place: its records stay
// in the ledger ("in place: the records belong to it"), the store owes
// the directory sync, and a reopen finds the run ended with its one
// terminal record (checkAllOrNothing). Breaks if promote takes
// ErrUnsynced for a failure and cuts the records off a run that ended (a
// completed run without its terminal record), or forgets the owed sync.
// Not parallel: the descriptor limit is the process's.
func TestUnsyncedPromoteKeepsTheRecordsAndOwesTheSync(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, run := stagedFaultSetup(t, dir)
	if err := st.LedgerAppend(ctx, "r1", []*durable.StepRecord{{RunID: "r1", StepID: "s1", NodeID: "a", Status: durable.StepStarted}}); err != nil {
		t.Fatal(err)
	}
	if st.dirUnsynced.Load() {
		t.Fatal("precondition: a directory sync owed before the commit")
	}
	giveBack := exhaustFDsAfterNextWrite(t, st)
	// Were the unsynced promote taken for a failure, the undo that follows
	// must not fail for want of descriptors too: give them back there.
	st.killForTest = func(p string) {
		if p == "promote failed" {
			giveBack()
		}
	}
	run.Status = durable.RunCompleted
	err := st.RunCommit(ctx, &store.CommitParams{Run: run, Records: []*durable.StepRecord{terminalRecordOf()}})
	giveBack()
	if !errors.Is(err, atomicfile.ErrUnsynced) {
		t.Fatalf("RunCommit whose Promote's directory sync failed = %v; want ErrUnsynced", err)
	}
	if got := terminalStatuses(t, st, "r1"); !slices.Equal(got, []string{"completed"}) {
		t.Errorf("terminal records after the unsynced promote: %v; want [completed] (the run file holds the end)", got)
	}
	if !st.dirUnsynced.Load() {
		t.Error("the unsynced promote left no directory sync owed")
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	checkAllOrNothing(t, dir, err)
}

// TestStagedNameAtTheLengthLimitKeepsTheRunField: a staged name of
// exactly maxNameLen bytes fits (file systems take 255), so it records
// the run file's size and sum; only a longer one falls back to the name
// judged by file times. Breaks on an off-by-one in the limit.
func TestStagedNameAtTheLengthLimitKeepsTheRunField(t *testing.T) {
	dir := t.TempDir()
	st := openInternal(t, dir)
	appended := []byte("records\n")
	content := []byte("{}")
	short := stagedNameWithContent("", 12, appended, int64(len(content)), appendSum(content))
	id := strings.Repeat("r", maxNameLen-len(short))
	path := filepath.Join(dir, "run_"+id+".json")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	want := stagedNameWithContent(id, 12, appended, int64(len(content)), appendSum(content))
	if len(want) != maxNameLen {
		t.Fatalf("precondition: name of %d bytes, want %d", len(want), maxNameLen)
	}
	if got := st.stagedNameOf(id, path, 12, appended); got != want {
		t.Errorf("a %d-byte staged name: staged as %q, want %q", len(want), got, want)
	}
}

// TestStagedNameReadsARunFileRewrittenInPlace: the sum the store keeps of
// the run file it last wrote is used only while the file is still that
// one: same file, modification time and size. A rewrite in place (same
// inode) of another size whose time was set back (a restore, a clock
// step) is read again, so the staged name records the bytes on disk.
// Breaks if the size is left out of the check: recovery would then judge
// another process's save by a sum of bytes no longer there.
func TestStagedNameReadsARunFileRewrittenInPlace(t *testing.T) {
	dir := t.TempDir()
	st := openInternal(t, dir)
	if err := st.RunCommit(t.Context(), &store.CommitParams{Run: identityRun("r1", "ours", durable.RunWaiting), Create: true}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "run_r1.json")
	if c, _ := st.cache.Get("r1"); c == nil || !c.summed {
		t.Fatal("precondition: the commit left no sum of the run file in the cache")
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	rewritten := []byte(`{"run_id": "r1", "status": "running"}`)
	if _, err := f.Write(rewritten); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	appended := []byte("records\n")
	want := stagedNameWithContent("r1", 12, appended, int64(len(rewritten)), appendSum(rewritten))
	if got := st.stagedNameOf("r1", path, 12, appended); got != want {
		t.Errorf("after a rewrite in place: staged as %q, want %q", got, want)
	}
}

// TestRecoveryKeepsTheStagedNameWhenTheLedgerCannotBeRead: a ledger the
// recovery cannot stat for a reason other than its absence (here a
// symlink loop: ELOOP) fails the open and leaves the staged name for the
// next one ("only what was read can say that a commit is to be
// dropped"). Breaks if any stat error is taken for a missing ledger: the
// commit is then judged not to have landed and its staged state dropped.
func TestRecoveryKeepsTheStagedNameWhenTheLedgerCannotBeRead(t *testing.T) {
	dir := t.TempDir()
	ledger := filepath.Join(dir, "ledger_r1.jsonl")
	if err := os.Symlink("ledger_r1.jsonl", ledger); err != nil {
		t.Skipf("symlinks unsupported here: %v", err)
	}
	data, err := durable.MarshalRun(identityRun("r1", "ours", durable.RunCompleted), pyjson.Pretty)
	if err != nil {
		t.Fatal(err)
	}
	staged := filepath.Join(dir, stagedName("r1", 0, []byte("records\n")))
	if err := os.WriteFile(staged, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := New(Config{Dir: dir, NoSync: true}); err == nil {
		_ = s.Close()
		t.Fatal("open with a ledger it cannot stat succeeded")
	}
	if _, err := os.Stat(staged); err != nil {
		t.Fatalf("the staged name after the failed open: %v; want it kept", err)
	}
}

// TestRecoveryDropsAStagedNameOfAnInvalidRunID: a file named like a
// staged commit whose run id the store refuses (a backslash) is not one
// of its commits: the open removes it and writes no run file from it,
// even when a ledger of that name holds exactly the bytes it names.
// Breaks if parseStagedName stops checking the id, so that the recovery
// puts a run file of an id no commit could have made in place.
func TestRecoveryDropsAStagedNameOfAnInvalidRunID(t *testing.T) {
	dir := t.TempDir()
	const id = `a\b`
	records := []byte("{\"run_id\": \"a\\\\b\"}\n")
	if err := os.WriteFile(filepath.Join(dir, "ledger_"+id+".jsonl"), records, 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := durable.MarshalRun(identityRun(id, "ours", durable.RunCompleted), pyjson.Pretty)
	if err != nil {
		t.Fatal(err)
	}
	staged := filepath.Join(dir, stagedName(id, 0, records))
	if err := os.WriteFile(staged, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	if _, err := os.Lstat(filepath.Join(dir, "run_"+id+".json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("run file of the invalid id after the open: %v; want none", err)
	}
	if _, err := os.Lstat(staged); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the staged name of an invalid id after the open: %v; want it removed", err)
	}
}
