package jsonfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// appendAsPython appends a whole line to path through a descriptor of its
// own, as Python's JsonlLedgerStore.append does (open "a", one write).
func appendAsPython(t *testing.T, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(line); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// openWithOneRecord opens a store on a fresh directory whose run r1 has
// one ledger record, and returns the store and the ledger's path.
func openWithOneRecord(t *testing.T) (*Store, string) {
	t.Helper()
	dir := t.TempDir()
	s := openInternal(t, dir)
	first := &durable.StepRecord{RunID: "r1", StepID: "s1", NodeID: "n", Status: durable.StepCompleted, Attempt: 1}
	if err := s.LedgerAppend(t.Context(), "r1", []*durable.StepRecord{first}); err != nil {
		t.Fatal(err)
	}
	return s, filepath.Join(dir, "ledger_r1.jsonl")
}

// Another process's append that lands between the store's look at the
// ledger and its own write puts the store's records one line further: the
// seqs the append reports are where a reading of the file finds them.
func TestAppendRaceWithAnotherWriterKeepsSeqsTrue(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, path := openWithOneRecord(t)
	s.writeForTest = func(f *os.File, data []byte) (int, error) {
		s.writeForTest = nil
		appendAsPython(t, path, completedLine(t, "py", "kpy", 200))
		return f.Write(data)
	}
	own := []*durable.StepRecord{
		{RunID: "r1", StepID: "own1", NodeID: "n", Status: durable.StepCompleted, Attempt: 1, IdempotencyKey: "kown1"},
		{RunID: "r1", StepID: "own2", NodeID: "n", Status: durable.StepCompleted, Attempt: 1, IdempotencyKey: "kown2"},
	}
	if err := s.LedgerAppend(ctx, "r1", own); err != nil {
		t.Fatal(err)
	}
	if own[0].Seq != 3 || own[1].Seq != 4 {
		t.Fatalf("seqs reported %d, %d; the file has them at 3, 4", own[0].Seq, own[1].Seq)
	}
	recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: "r1"})
	if err != nil || len(recs) != 4 || recs[1].IdempotencyKey != "kpy" || recs[2].StepID != "own1" || recs[2].Seq != 3 {
		t.Fatalf("listed %d records, %v", len(recs), err)
	}
	if r, err := s.LedgerFindCompleted(ctx, "r1", "kpy"); err != nil || r == nil || r.Seq != 2 {
		t.Fatalf("the other process's record: %v, %v", r, err)
	}
	next := &durable.StepRecord{RunID: "r1", StepID: "next", NodeID: "n", Status: durable.StepCompleted, Attempt: 1}
	if err := s.LedgerAppend(ctx, "r1", []*durable.StepRecord{next}); err != nil || next.Seq != 5 {
		t.Fatalf("the next append: seq %d, %v; want 5", next.Seq, err)
	}
}

// A failed append of the store is cut back off the ledger only when
// nothing but its own bytes follow: another process's record appended
// meanwhile stays, with the store's part after it left as a torn line.
func TestFailedAppendKeepsAnotherWritersRecord(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, path := openWithOneRecord(t)
	s.writeForTest = func(f *os.File, data []byte) (int, error) {
		s.writeForTest = nil
		appendAsPython(t, path, completedLine(t, "py", "kpy", 200))
		n, _ := f.Write(data[:len(data)/2])
		return n, errors.New("no space left on device (test)")
	}
	own := &durable.StepRecord{RunID: "r1", StepID: "own", NodeID: "n", Status: durable.StepCompleted, Attempt: 1}
	if err := s.LedgerAppend(ctx, "r1", []*durable.StepRecord{own}); err == nil {
		t.Fatal("the failed append reported success")
	}
	if r, err := s.LedgerFindCompleted(ctx, "r1", "kpy"); err != nil || r == nil || r.Seq != 2 {
		t.Fatalf("the other process's completed record after the failed append: %v, %v", r, err)
	}
	// Alone, a failed append is cut back as before.
	s.writeForTest = func(f *os.File, data []byte) (int, error) {
		s.writeForTest = nil
		n, _ := f.Write(data[:len(data)/2])
		return n, errors.New("no space left on device (test)")
	}
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.LedgerAppend(ctx, "r1", []*durable.StepRecord{own}); err == nil {
		t.Fatal("the failed append reported success")
	}
	if after, err := os.Stat(path); err != nil || after.Size() != before.Size() {
		t.Fatalf("a failed append alone was not cut back: %d bytes, was %d", after.Size(), before.Size())
	}
}
