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
	for iter := range raceRounds() / 2 {
		path := filepath.Join(t.TempDir(), "db.sqlite")
		a, b := open(path), open(path)
		next, _ := follow(a)
		insertForeignLedgers(t, b, "p", 10000)
		create(b, "base", 1) // stays the table's end below y
		next()
		deleteForeignLedgers(t, b, "p")
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
			t.Errorf("iteration %d: own appends reported (y: %v, z: %v)", iter, slices.Contains(got, "y"), slices.Contains(got, "z"))
		}
		_ = a.Close()
		_ = b.Close()
	}
}
