package jsonfile

import (
	"errors"
	"log/slog"
	"os"
	"slices"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// failHalfOnce makes the store's next append write half its bytes and
// fail, as a full disk does.
func failHalfOnce(s *Store) {
	s.writeForTest = func(f *os.File, data []byte) (int, error) {
		s.writeForTest = nil
		n, _ := f.Write(data[:len(data)/2])
		return n, errors.New("disk full (test)")
	}
}

func openInternal(t *testing.T, dir string) *Store { return openInternalSync(t, dir, true) }

func openInternalSync(t *testing.T, dir string, noSync bool) *Store {
	t.Helper()
	s, err := New(Config{Dir: dir, NoSync: noSync, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestAppendAfterATornWrite: an append that fails partway may leave a
// torn line (when cutting it back fails too); what is appended next must
// not be merged into it, so that after a reopen it is read back, for the
// command inbox and for a ledger.
func TestAppendAfterATornWrite(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := openInternal(t, dir)

	failHalfOnce(s)
	if _, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "r1", Type: "pause"}); err == nil {
		t.Fatal("the torn command append reported success")
	}
	res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c2", RunID: "r1", Type: "resume"})
	if err != nil || !res.Accepted {
		t.Fatalf("append after the torn one: %+v, %v", res, err)
	}

	run := &durable.RunState{RunID: "r1", WorkflowID: "w", Status: durable.RunRunning, Vars: map[string]any{}}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: run, Create: true,
		Records: []*durable.StepRecord{{RunID: "r1", StepID: "s1", NodeID: "n", Status: durable.StepCompleted}}}); err != nil {
		t.Fatal(err)
	}
	failHalfOnce(s)
	if err := s.LedgerAppend(ctx, "r1", []*durable.StepRecord{{RunID: "r1", StepID: "torn", NodeID: "n", Status: durable.StepCompleted}}); err == nil {
		t.Fatal("the torn ledger append reported success")
	}
	if err := s.LedgerAppend(ctx, "r1", []*durable.StepRecord{{RunID: "r1", StepID: "s2", NodeID: "n", Status: durable.StepCompleted}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openInternal(t, dir)
	cmds, _, err := s.CommandListAfter(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) != 1 || cmds[0].CommandID != "c2" || cmds[0].Seq != res.Seq {
		t.Fatalf("commands after a reopen = %+v, want c2 at seq %d", cmds, res.Seq)
	}
	recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.StepID)
	}
	if len(ids) != 2 || ids[0] != "s1" || ids[1] != "s2" {
		t.Fatalf("ledger after a reopen = %v, want [s1 s2]", ids)
	}
}

// TestFailedCommandAppendLeavesNothing: a command append whose write
// stops one byte short (the line complete but for its newline) and fails
// is cut back off the file, so a reopen does not read back the command
// that was refused, and its seq is not handed out again.
func TestFailedCommandAppendLeavesNothing(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := openInternalSync(t, dir, false)
	s.writeForTest = func(f *os.File, data []byte) (int, error) {
		s.writeForTest = nil
		n, _ := f.Write(data[:len(data)-1])
		return n, errors.New("disk full (test)")
	}
	if _, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "r1", Type: "pause"}); err == nil {
		t.Fatal("the failed command append reported success")
	}
	if !s.dirUnsynced.Load() {
		t.Error("a failed append that created commands.jsonl left no directory sync owed")
	}
	res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c2", RunID: "r1", Type: "resume"})
	if err != nil || !res.Accepted {
		t.Fatalf("append after the failed one: %+v, %v", res, err)
	}
	if res.Seq != 2 {
		t.Errorf("seq after a failed append = %d, want 2 (a seq that may be on disk is not reused)", res.Seq)
	}
	if s.dirUnsynced.Load() {
		t.Error("the next append did not sync the directory it owed")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openInternal(t, dir)
	all, _, err := s.CommandListAfter(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].CommandID != "c2" || all[0].Seq != res.Seq {
		t.Fatalf("commands after a reopen = %+v, want only c2 at seq %d", all, res.Seq)
	}
}

// listStepIDs lists the step ids of runID's ledger records, in order.
func listStepIDs(t *testing.T, s *Store, runID string) []string {
	t.Helper()
	recs, err := s.LedgerList(t.Context(), &store.LedgerListParams{RunID: runID})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		out = append(out, r.StepID)
	}
	return out
}

// A ledger append that fails partway and cannot be cut back (its file
// descriptor is gone) leaves a torn line; the store forgets what it knew
// of the file, so the next append starts on a new line and its record is
// read back, in process and after a reopen.
func TestLedgerAppendAfterAnUncutTornWrite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openInternal(t, dir)
	ctx := t.Context()
	rec := func(step string) []*durable.StepRecord {
		return []*durable.StepRecord{{RunID: "r1", StepID: step, NodeID: "n", Status: durable.StepCompleted}}
	}
	if err := s.LedgerAppend(ctx, "r1", rec("s1")); err != nil {
		t.Fatal(err)
	}
	s.writeForTest = func(f *os.File, data []byte) (int, error) {
		s.writeForTest = nil
		n, _ := f.Write(data[:len(data)/2])
		_ = f.Close() // the truncate that would cut it back fails
		return n, errors.New("disk full (test)")
	}
	if err := s.LedgerAppend(ctx, "r1", rec("torn")); err == nil {
		t.Fatal("the torn ledger append reported success")
	}
	if err := s.LedgerAppend(ctx, "r1", rec("s2")); err != nil {
		t.Fatal(err)
	}
	if got := listStepIDs(t, s, "r1"); !slices.Equal(got, []string{"s1", "s2"}) {
		t.Errorf("ledger in process = %v, want [s1 s2]", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := listStepIDs(t, openInternal(t, dir), "r1"); !slices.Equal(got, []string{"s1", "s2"}) {
		t.Errorf("ledger after a reopen = %v, want [s1 s2]", got)
	}
}
