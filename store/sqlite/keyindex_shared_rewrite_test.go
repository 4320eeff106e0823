package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// TestSharedKeyIndexForgetsALedgerRewrittenAsLong: shared store a
// indexes run r's completed keys through seq 2; another process (store b,
// or Python's SqliteLedgerStore.delete then append) deletes r's ledger and
// writes it again with at least as many rows. Row 2 still exists, so a's
// key index did not notice the delete and missed the new keys at seqs
// below its read-through mark; it now reads the delete log.
func TestSharedKeyIndexForgetsALedgerRewrittenAsLong(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	a, b := openShared(t, path), openShared(t, path)
	if err := a.LedgerAppend(ctx, "r", []*durable.StepRecord{completedRec("s1", "k1"), completedRec("s2", "k2")}); err != nil {
		t.Fatal(err)
	}
	wantFound(t, a, "k1", "s1") // a's key index reads rows 1..2
	if _, err := b.LedgerDelete(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	if err := b.LedgerAppend(ctx, "r", []*durable.StepRecord{completedRec("t1", "x1"), completedRec("t2", "x2"), completedRec("t3", "x3")}); err != nil {
		t.Fatal(err)
	}
	wantFound(t, a, "x3", "t3")
	wantFound(t, a, "x1", "t1") // seq 1 now holds x1
}
