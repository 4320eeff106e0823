package sqlite

import (
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// Own rows another process deletes before a look are forgotten with the
// delete: that process's re-created ledger (same run, same seqs) is heard.
func TestListenAfterAForeignDeleteOfOwnRowsHearsItsRecreation(t *testing.T) {
	open, create, appendN, follow := listenHelpers(t)
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	a, b := open(path), open(path)
	next, _ := follow(a)
	create(a, "x", 2)                                   // own: notes (x,1), (x,2)
	if _, err := b.LedgerDelete(ctx, "x"); err != nil { // before any look
		t.Fatal(err)
	}
	if got := next(); !slices.Equal(got, []string{"-x", ""}) {
		t.Fatalf("heard %q", got)
	}
	appendN(b, "x", 1) // another process appends (x,1)
	if got := next(); !slices.Equal(got, []string{"x"}) {
		t.Fatalf("heard %q after another store's append to x, want [x]", got)
	}
}

// An own append in rowids another process's delete freed is never
// scanned (the look starts past it): its note is forgotten all the same.
func TestListenForgetsOwnRowsInRowidsAForeignDeleteFreed(t *testing.T) {
	open, create, _, follow := listenHelpers(t)
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	a, b := open(path), open(path)
	create(b, "y", 3) // the last rows
	next, f := follow(a)
	if _, err := b.LedgerDelete(ctx, "y"); err != nil {
		t.Fatal(err)
	}
	create(a, "x", 2) // own, in y's rowids
	next()
	next()
	create(a, "w", 1)
	next()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.rows) != 0 {
		t.Fatalf("own notes left after every row was looked at: %v", f.rows)
	}
}

// More than 10,000 of the store's own deletes between two looks: the log
// keeps the last 10,000, yet the trimmed entries are known as own, and a
// later delete of one of those runs by another process is heard.
func TestListenAfterTheDeleteLogWasTrimmed(t *testing.T) {
	open, _, _, follow := listenHelpers(t)
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	a, b := open(path), open(path)
	const n = 10001
	ins := func() {
		insertForeignLedgers(t, b, "r", 10001)
	}
	ins()
	next, _ := follow(a)
	for i := range n {
		if _, err := a.LedgerDelete(ctx, "r"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	if got := next(); len(got) != 0 {
		t.Fatalf("heard %d wake-ups of own deletes", len(got))
	}
	// Another process creates r0 again and deletes it.
	if err := execTurn(b, `INSERT INTO ledger (run_id, seq, record_json) VALUES ('r0', 1, '{}')`); err != nil {
		t.Fatal(err)
	}
	next()
	if _, err := b.LedgerDelete(ctx, "r0"); err != nil {
		t.Fatal(err)
	}
	if got := next(); !slices.Contains(got, "-r0") {
		t.Fatalf("heard %q after another store deleted r0, want -r0", got)
	}
}

// The store's own delete at the table's end, racing a look: whichever
// snapshot the look has, the rows another process adds in the freed
// rowids afterwards are heard.
func TestListenOwnDeleteRacingALookMissesNoForeignRow(t *testing.T) {
	open, create, _, follow := listenHelpers(t)
	for iter := range raceRounds() {
		path := filepath.Join(t.TempDir(), "db.sqlite")
		a, b := open(path), open(path)
		next, _ := follow(a)
		insertForeignLedgers(t, b, "p", 10000)
		create(b, "y", 3) // the last rows
		next()
		// Only to widen the window: a long delete log for the next look.
		deleteForeignLedgers(t, b, "p")
		done := deleteSoon(t, a, "y", iter)
		next() // races with the delete
		<-done
		create(b, "z", 2) // in y's rowids
		got := next()
		if !slices.Contains(got, "z") && !slices.Contains(got, "") {
			t.Errorf("iteration %d: heard %q after another store appended z, want z", iter, got)
		}
		_ = a.Close()
		_ = b.Close()
	}
}

func TestListenManyForeignRowsBetweenLooks(t *testing.T) {
	open, _, _, follow := listenHelpers(t)
	path := filepath.Join(t.TempDir(), "db.sqlite")
	a, b := open(path), open(path)
	next, _ := follow(a)
	if err := execTurn(b, `WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM c WHERE i < 24999)
		INSERT INTO ledger (run_id, seq, record_json) SELECT 'r' || (i/10000), i%10000+1, '{}' FROM c`); err != nil {
		t.Fatal(err)
	}
	if got := next(); !slices.Equal(got, []string{"r0", "r1", "r2"}) {
		t.Fatalf("heard %q", got)
	}
	if err := execTurn(b, `INSERT INTO ledger (run_id, seq, record_json) VALUES ('r9', 1, '{}')`); err != nil {
		t.Fatal(err)
	}
	if got := next(); !slices.Equal(got, []string{"r9"}) {
		t.Fatalf("heard %q", got)
	}
}

// More deletes by another process between two looks than the log keeps:
// those it cannot name are reported as a delete of any run.
func TestListenManyForeignDeletesInOneTransaction(t *testing.T) {
	open, _, _, follow := listenHelpers(t)
	path := filepath.Join(t.TempDir(), "db.sqlite")
	a, b := open(path), open(path)
	insertForeignLedgers(t, b, "r", 10002)
	next, _ := follow(a)
	if err := execTurn(b, `DELETE FROM ledger`); err != nil {
		t.Fatal(err)
	}
	// The log keeps the last 10,000: r0's and r1's entries are gone, so
	// every follower is told to read its ledgers again from seq 1.
	got := next()
	if !slices.Contains(got, "-") || !slices.Contains(got, "-r10001") {
		t.Errorf("heard %d wake-ups, want the deletes it cannot name (\"-\") and those it can", len(got))
	}
}

// The same race never reports the store's own appends, whether the look's
// snapshot holds the deleted rows or not.
func TestListenOwnDeleteRacingALookReportsNoOwnAppend(t *testing.T) {
	open, create, _, follow := listenHelpers(t)
	for iter := range raceRounds() {
		path := filepath.Join(t.TempDir(), "db.sqlite")
		a, b := open(path), open(path)
		next, _ := follow(a)
		insertForeignLedgers(t, b, "p", 10000)
		next()
		deleteForeignLedgers(t, b, "p")
		create(a, "y", 3) // own, unseen yet
		done := deleteSoon(t, a, "y", iter)
		got := next()
		<-done
		got = append(got, next()...)
		if slices.Contains(got, "y") {
			t.Errorf("iteration %d: the store's own appends to y were reported", iter)
		}
		_ = a.Close()
		_ = b.Close()
	}
}

// deleteSoon deletes the ledger of runID in s from another goroutine,
// after a delay that iteration iter of a race varies (0 to 0.9 ms), so
// that the delete lands at a different point of a look each time; the
// channel closes once it is done.
func deleteSoon(t *testing.T, s *Store, runID string, iter int) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(time.Duration(iter%10) * 100 * time.Microsecond)
		if _, err := s.LedgerDelete(t.Context(), runID); err != nil {
			t.Error(err)
		}
	}()
	return done
}

// raceRounds is how many times the racing tests repeat their race.
func raceRounds() int {
	if raceEnabled {
		return 4
	}
	return 40
}
