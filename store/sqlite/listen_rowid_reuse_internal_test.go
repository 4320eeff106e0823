package sqlite

import (
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// An own delete at the table's end followed by an own append to another
// run in the freed rowids, racing a look whose snapshot may predate the
// delete: neither run's own rows are reported.
func TestListenOwnRowsInRowidsAnOwnDeleteFreed(t *testing.T) {
	open, create, _, follow := listenHelpers(t)
	ctx := t.Context()
	bad := 0
	for iter := range raceRounds() / 2 {
		path := filepath.Join(t.TempDir(), "db.sqlite")
		a, b := open(path), open(path)
		next, _ := follow(a)
		if err := execTurn(b, `WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM c WHERE i < 9999)
			INSERT INTO ledger (run_id, seq, record_json) SELECT 'p' || i, 1, '{}' FROM c`); err != nil {
			t.Fatal(err)
		}
		create(b, "base", 1) // stays the table's end below y
		next()
		if err := execTurn(b, `DELETE FROM ledger WHERE run_id LIKE 'p%'`); err != nil { // a long log: a slow look
			t.Fatal(err)
		}
		create(a, "y", 3) // own, the last rows, unseen yet
		done := make(chan struct{})
		go func() {
			defer close(done)
			time.Sleep(time.Duration(iter%10) * 100 * time.Microsecond)
			if _, err := a.LedgerDelete(ctx, "y"); err != nil {
				t.Error(err)
			}
			create(a, "z", 3) // own, in y's rowids: overwrites y's notes
		}()
		got := next()
		<-done
		got = append(got, next()...)
		if slices.Contains(got, "y") || slices.Contains(got, "z") {
			bad++
			t.Errorf("iteration %d: own appends reported (y: %v, z: %v)", iter, slices.Contains(got, "y"), slices.Contains(got, "z"))
		}
		_ = a.Close()
		_ = b.Close()
	}
	t.Logf("own appends reported in %d/20", bad)
}
