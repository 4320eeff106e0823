package jsonfile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// TestUnsyncedCommitLeavesCallerVersion pins RunCommit's contract that a
// commit reporting an error leaves p.Run.Version as it was ("on success
// p.Run.Version is incremented"), even when the state file is in place
// but the directory sync after it failed: the caller's next commit with
// that stale object must then conflict (it re-reads the run), not
// overwrite the state at a version the store never handed out.
func TestUnsyncedCommitLeavesCallerVersion(t *testing.T) {
	st, run, before, err := commitTerminalDirSyncFailing(t, t.TempDir())
	if err == nil {
		t.Fatal("precondition: the directory sync did not fail")
	}
	if run.Version != before {
		t.Fatalf("RunCommit failed (%v) but moved the caller's version %d -> %d", err, before, run.Version)
	}
	// The stale object's next commit conflicts.
	run.CurrentNode = "b"
	err = st.RunCommit(context.Background(), &store.CommitParams{Run: run})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("commit at the version the failed commit left = %v, want ErrConflict", err)
	}
}

// TestOwedDirSyncPaidByAppendToExistingFile pins appendFile's promise
// that a directory sync owed by an earlier failure (a new file whose entry
// was never synced) is made by the next successful append, even one to a
// file that already existed: otherwise the new entry stays non-durable
// until some later create happens to sync the directory.
func TestOwedDirSyncPaidByAppendToExistingFile(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := openInternalSync(t, dir, false)
	if _, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "r1", Type: "pause"}); err != nil {
		t.Fatal(err)
	}
	oweDirSync(t, s)
	// An append to commands.jsonl, which exists, pays it.
	if _, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c2", RunID: "r1", Type: "resume"}); err != nil {
		t.Fatal(err)
	}
	if s.dirUnsynced.Load() {
		t.Error("a successful append left the owed directory sync unpaid")
	}
}

// TestLedgerRewrittenInPlaceIsReadWhole pins the ledger cache's check
// that a file which grew under the same identity still continues the
// lines it scanned: another process that rewrote the ledger in place
// (truncate and write, same inode) with longer content must be read from
// the start, its records numbered 1.., not from the old tail offset as if
// it had only been appended to.
func TestLedgerRewrittenInPlaceIsReadWhole(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := openInternal(t, dir)
	var recs []*durable.StepRecord
	for i := range 2 {
		recs = append(recs, &durable.StepRecord{RunID: "r1", StepID: fmt.Sprintf("s%d", i), NodeID: "a", Status: durable.StepStarted})
	}
	if err := s.LedgerAppend(ctx, "r1", recs); err != nil {
		t.Fatal(err)
	}
	if got, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: "r1"}); err != nil || len(got) != 2 {
		t.Fatalf("precondition: LedgerList = %d records, %v", len(got), err)
	}
	path := s.ledgerPath("r1")
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Three records, the first longer than the old file: the old size
	// falls inside the first line.
	long := "rewritten-" + strings.Repeat("x", 300)
	var b strings.Builder
	for i := range 3 {
		id := long
		if i == 0 {
			id += strings.Repeat("y", len(old))
		}
		fmt.Fprintf(&b, "{\"run_id\": \"r1\", \"step_id\": \"%s%d\", \"node_id\": \"a\", \"status\": \"started\"}\n", id, i)
	}
	data := b.String()
	if len(data) <= len(old) || data[len(old)-1] == '\n' {
		t.Fatalf("precondition: rewrite of %d bytes over %d does not straddle a line", len(data), len(old))
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range got {
		ids = append(ids, fmt.Sprintf("%d:%.12s", r.Seq, r.StepID))
	}
	if len(got) != 3 || got[0].Seq != 1 || !strings.HasPrefix(got[0].StepID, long) || !strings.HasSuffix(got[0].StepID, "y0") || got[2].Seq != 3 {
		t.Fatalf("ledger rewritten in place read as %v, want its 3 records at seqs 1..3", ids)
	}
	if n, err := s.LedgerCount(ctx, "r1"); err != nil || n != 3 {
		t.Fatalf("LedgerCount = %d, %v; want 3", n, err)
	}
}

// TestRunDeleteSyncsDirectory pins that RunDelete makes the removal of
// the run file durable (a directory sync), as every other change of the
// directory's entries is: observed through the owed-sync flag, which a
// failed create sets and only a directory sync clears.
func TestRunDeleteSyncsDirectory(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s, _ := stagedFaultSetup(t, dir) // run r1, synced store
	oweDirSync(t, s)
	existed, err := s.RunDelete(ctx, "r1")
	if err != nil || !existed {
		t.Fatalf("RunDelete(r1) = %v, %v", existed, err)
	}
	if s.dirUnsynced.Load() {
		t.Error("RunDelete removed the run file without syncing the directory")
	}
}

// TestLedgerDeleteSyncsDirectory: LedgerDelete, like RunDelete, syncs
// the directory after removing the ledger file, so that a power loss
// cannot bring the deleted ledger back (its records would then be read
// again for a run created anew under the same id). Seen through the
// directory sync owed after a failed create, which any sync pays.
func TestLedgerDeleteSyncsDirectory(t *testing.T) {
	ctx := t.Context()
	s, _ := stagedFaultSetup(t, t.TempDir()) // synced store
	if err := s.LedgerAppend(ctx, "r1", []*durable.StepRecord{{RunID: "r1", StepID: "s1", NodeID: "a", Status: durable.StepStarted}}); err != nil {
		t.Fatal(err)
	}
	oweDirSync(t, s)
	n, err := s.LedgerDelete(ctx, "r1")
	if err != nil || n != 1 {
		t.Fatalf("LedgerDelete(r1) = %d, %v; want 1, nil", n, err)
	}
	if s.dirUnsynced.Load() {
		t.Error("LedgerDelete removed the ledger file without syncing the directory")
	}
}

// TestOpenSyncsTheDirectoryAfterFinishingAStagedCommit: the open that
// finishes a terminal commit a crash interrupted (its staged state
// renamed over the run file) syncs the directory before it goes on, so
// that a power loss after the open cannot bring back the old run file
// beside the terminal records, the half-made end staging exists to rule
// out. The crash is a panic at the "appended" point; the recovery is run
// again on the store, with a directory sync owed, as the open runs it.
func TestOpenSyncsTheDirectoryAfterFinishingAStagedCommit(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	st, run := stagedFaultSetup(t, dir)
	st.killForTest = func(p string) {
		if p == "appended" {
			panic("killed (test)")
		}
	}
	run.Status = durable.RunCompleted
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("precondition: the commit was not stopped at the kill point")
			}
		}()
		_ = st.RunCommit(ctx, &store.CommitParams{Run: run, Records: []*durable.StepRecord{terminalRecordOf()}})
	}()
	st.killForTest = nil
	staged, err := filepath.Glob(filepath.Join(dir, stagedPattern))
	if err != nil || len(staged) != 1 {
		t.Fatalf("precondition: staged files %v, %v; want one", staged, err)
	}
	st.dirUnsynced.Store(true)
	if err := st.recoverStaged(); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, stagedPattern)); len(left) != 0 {
		t.Fatalf("staged files left after the recovery: %v", left)
	}
	if st.dirUnsynced.Load() {
		t.Error("the recovery put the staged run file in place without syncing the directory")
	}
}

// TestLedgerDeleteReportsAFailedDirectorySync: a LedgerDelete whose
// directory sync fails (here EMFILE: no descriptor left to open the
// directory) reports the error, since the deleted ledger may come back
// after a power loss; it is not taken for a delete that is durable.
// Not parallel: the descriptor limit is the process's.
func TestLedgerDeleteReportsAFailedDirectorySync(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s, _ := stagedFaultSetup(t, dir) // synced store
	if err := s.LedgerAppend(ctx, "r1", []*durable.StepRecord{{RunID: "r1", StepID: "s1", NodeID: "a", Status: durable.StepStarted}}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	undo := exhaustFDsAfter(t, f)
	_ = f.Close()
	n, err := s.LedgerDelete(ctx, "r1")
	undo()
	if err == nil {
		t.Errorf("LedgerDelete with no descriptor left for the directory sync = %d, nil; want the sync's error", n)
	}
	if _, serr := os.Stat(filepath.Join(dir, "ledger_r1.jsonl")); !errors.Is(serr, os.ErrNotExist) {
		t.Fatalf("precondition: the ledger file is still there (%v): the failure was not the directory sync's", serr)
	}
}

// oweDirSync leaves s owing a directory sync: a ledger append (of run
// "r2") that creates its file and then fails to write, so the new
// directory entry was never synced.
func oweDirSync(t *testing.T, s *Store) {
	t.Helper()
	s.writeForTest = func(f *os.File, data []byte) (int, error) {
		s.writeForTest = nil
		return 0, errors.New("disk full (test)")
	}
	if err := s.LedgerAppend(t.Context(), "r2", []*durable.StepRecord{{RunID: "r2", StepID: "s1", NodeID: "a", Status: durable.StepStarted}}); err == nil {
		t.Fatal("precondition: the failed ledger append reported success")
	}
	if !s.dirUnsynced.Load() {
		t.Fatal("precondition: no directory sync owed after a failed create")
	}
}
