package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// TestSharedKeyIndexForgetsALedgerRewrittenAsLong: shared store a
// indexes run r's completed keys through seq 2; another process (store b,
// or Python's SqliteLedgerStore.delete then append) deletes r's ledger and
// writes it again with at least as many rows. Row 2 still exists, so a's
// key index did not notice the delete and missed the new keys at seqs
// below its read-through mark; it now reads the delete log.
func TestSharedKeyIndexForgetsALedgerRewrittenAsLong(t *testing.T) {
	ctx := t.Context()
	_, a, b := indexedThenDeletedElsewhere(t)
	if err := b.LedgerAppend(ctx, "r", []*durable.StepRecord{completedRec("t1", "x1"), completedRec("t2", "x2"), completedRec("t3", "x3")}); err != nil {
		t.Fatal(err)
	}
	wantFound(t, a, "x3", "t3")
	wantFound(t, a, "x1", "t1") // seq 1 now holds x1
}

// TestSharedKeyIndexForgetsALedgerWhoseDeleteLeftTheLog: the ledger delete
// log keeps its last 10,000 entries. Shared store a indexes run r's
// completed keys; store b deletes r's ledger; 10,000 more ledgers are
// deleted (Python's deletes here), so r's entry is trimmed from the log;
// b writes r's ledger again, longer. a no longer finds r in the log, but
// the log now starts past what a had seen: any ledger may have been
// deleted, so a must read r's ledger afresh. Else it keeps reading after
// seq 2 (a row the new ledger also has) and misses the new ledger's keys
// below it: the effect of a completed record would run again.
func TestSharedKeyIndexForgetsALedgerWhoseDeleteLeftTheLog(t *testing.T) {
	ctx := t.Context()
	path, a, b := indexedThenDeletedElsewhere(t)
	db := rawDB(t, path)
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range []string{
		`INSERT INTO ledger (run_id, seq, record_json)
		   WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000)
		   SELECT 'z' || i, 1, '{}' FROM n`,
		`DELETE FROM ledger WHERE run_id GLOB 'z*'`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(q, err)
		}
	}
	var logged, entries int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FILTER (WHERE run_id = 'r'), COUNT(*) FROM ledger_deletes`).Scan(&logged, &entries); err != nil {
		t.Fatal(err)
	}
	if logged != 0 || entries != 10000 {
		t.Fatalf("setup: the delete log holds %d entries, %d of them r's; want 10000, r's trimmed", entries, logged)
	}
	if err := b.LedgerAppend(ctx, "r", []*durable.StepRecord{completedRec("t1", "x1"), completedRec("t2", "x2"), completedRec("t3", "x3")}); err != nil {
		t.Fatal(err)
	}
	wantFound(t, a, "x1", "t1") // seq 1 now holds x1, below what a had read
	wantFound(t, a, "x3", "t3")
	wantFound(t, a, "k1", "") // the deleted ledger's keys are gone
	wantFound(t, a, "k2", "")
}

// indexedThenDeletedElsewhere opens two shared stores a and b on one new
// file (its path returned): a indexes run r's completed keys k1 and k2
// (seqs 1..2), then b deletes r's ledger.
func indexedThenDeletedElsewhere(t *testing.T) (path string, a, b *sqlite.Store) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "runtime.sqlite3")
	a, b = openShared(t, path), openShared(t, path)
	if err := a.LedgerAppend(t.Context(), "r", []*durable.StepRecord{completedRec("s1", "k1"), completedRec("s2", "k2")}); err != nil {
		t.Fatal(err)
	}
	wantFound(t, a, "k1", "s1") // a's key index reads rows 1..2
	if _, err := b.LedgerDelete(t.Context(), "r"); err != nil {
		t.Fatal(err)
	}
	return path, a, b
}
