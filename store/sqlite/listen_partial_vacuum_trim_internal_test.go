package sqlite

import (
	"strconv"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"path/filepath"
	"slices"
	"testing"
)

// A ledger that no longer holds seq 1 (another process removed its first
// record) is still logged when this store deletes it (the trigger logs the
// delete that empties a ledger): the look reads past the end it left, and
// another process's append in the freed rowids is heard.
func TestListenOwnDeleteOfALedgerWithoutSeq1(t *testing.T) {
	open, create, _, follow := listenHelpers(t)
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	a, b := open(path), open(path)
	next, _ := follow(a)
	create(b, "y", 3) // the last rows
	if err := execTurn(b, `DELETE FROM ledger WHERE run_id = 'y' AND seq = 1`); err != nil {
		t.Fatal(err)
	}
	// A partial delete is not a ledger's delete: only y's rows are heard.
	if got := next(); !slices.Equal(got, []string{"y"}) {
		t.Fatalf("heard %q, want y", got)
	}
	if _, err := a.LedgerDelete(ctx, "y"); err != nil { // own, unlogged: rows 2,3 at the end
		t.Fatal(err)
	}
	create(b, "z", 2) // another process, in y's freed rowids, before the next look
	if got := next(); !slices.Contains(got, "z") && !slices.Contains(got, "") {
		t.Fatalf("heard %q after another store appended z, want z", got)
	}
}

// The same with the delete made by another process: the delete of y's
// ledger and the append to z that reuses its rowids are both heard.
func TestListenForeignDeleteOfALedgerWithoutSeq1(t *testing.T) {
	open, create, _, follow := listenHelpers(t)
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	a, b := open(path), open(path)
	next, _ := follow(a)
	create(b, "y", 3)
	if err := execTurn(b, `DELETE FROM ledger WHERE run_id = 'y' AND seq = 1`); err != nil {
		t.Fatal(err)
	}
	next()
	if _, err := b.LedgerDelete(ctx, "y"); err != nil {
		t.Fatal(err)
	}
	create(b, "z", 2)
	got := next()
	if !slices.Contains(got, "-y") && !slices.Contains(got, "-") {
		t.Errorf("heard %q, want y's delete", got)
	}
	if !slices.Contains(got, "z") && !slices.Contains(got, "") {
		t.Errorf("heard %q, want z's append", got)
	}
}

// VACUUM (any process may run it on a shared file) renumbers the rowids
// of tables without an INTEGER PRIMARY KEY; the delete log has one, so its
// ids, trimmed past 10,000, stay above the follower's position.
func TestListenAfterVacuum(t *testing.T) {
	open, create, _, follow := listenHelpers(t)
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	a, b := open(path), open(path)
	insertForeignLedgers(t, b, "r", 10100)
	if err := execTurn(b, `DELETE FROM ledger`); err != nil {
		t.Fatal(err)
	}
	next, _ := follow(a)
	if err := execTurn(b, `VACUUM`); err != nil {
		t.Fatal(err)
	}
	var lo, hi int64
	if err := a.rdb.QueryRowContext(ctx, `SELECT MIN(rowid), MAX(rowid) FROM ledger_deletes`).Scan(&lo, &hi); err != nil {
		t.Fatal(err)
	}
	t.Logf("delete log rowids after VACUUM: %d..%d", lo, hi)
	create(b, "x", 1)
	if got := next(); !slices.Equal(got, []string{"x"}) {
		t.Fatalf("heard %q", got)
	}
	if _, err := b.LedgerDelete(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if got := next(); !slices.Contains(got, "-x") && !slices.Contains(got, "-") {
		t.Fatalf("heard %q after another store deleted x, want -x", got)
	}
}

// An own delete whose log entry was trimmed away before a look, inside a
// gap of only own deletes (ownGap), forgets the notes of the own rows it
// removed: another process re-creating the run in the same rowid with the
// same seq is heard.
func TestListenTrimmedOwnDeletesForgetTheRowsTheyRemoved(t *testing.T) {
	open, _, appendN, follow := listenHelpers(t)
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	a, b := open(path), open(path)
	// p0..p10000, rowids 1..10001, by another process
	insertForeignLedgers(t, b, "p", 10001)
	next, _ := follow(a)
	if err := a.LedgerAppend(ctx, "x", recs1("x")); err != nil { // own (x,1) at rowid 10002
		t.Fatal(err)
	}
	if _, err := a.LedgerDelete(ctx, "x"); err != nil { // log entry 1
		t.Fatal(err)
	}
	for i := range 10000 { // own, entries 2..10001: entry 1 is trimmed
		if _, err := a.LedgerDelete(ctx, "p"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	appendN(b, "x", 1) // another process: (x,1), rowid 10002 again
	if got := next(); !slices.Contains(got, "x") && !slices.Contains(got, "") {
		t.Fatalf("heard %q after another store appended to x, want x", got)
	}
}

func recs1(id string) []*durable.StepRecord {
	now := durable.NewTime(time.Now())
	return []*durable.StepRecord{{RunID: id, StepID: id + "a", NodeID: "a",
		Status: durable.StepCompleted, StartedAt: now, EndedAt: now, Attempt: 1}}
}
