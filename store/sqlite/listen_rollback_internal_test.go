package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
)

// A failed transaction's notes go before its rollback frees the database:
// another process committing the same run's next record (same run, same
// seq) in the very rowid the rolled-back insert used is heard. The test
// runs writeThen's steps by hand to pin the moment after the rollback.
func TestListenRolledBackNotesGoBeforeTheRollback(t *testing.T) {
	open, create, appendN, follow := listenHelpers(t)
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	a, b := open(path), open(path)
	create(b, "x", 1)
	next, _ := follow(a)
	if err := a.takeTurn(ctx); err != nil {
		t.Fatal(err)
	}
	err := a.inTx(ctx, func(ctx2 context.Context) error {
		if _, err := a.appendRecords(ctx2, "x", []encodedRecord{{json: `{}`}}); err != nil {
			return err
		}
		return errors.New("a later statement of the transaction fails")
	})
	if err == nil {
		t.Fatal("no error")
	}
	// rolled back; settle has not run yet (writeThen: inTx, settleListMarks, own.settle)
	appendN(b, "x", 1) // another process: (x,2), same rowid
	got := next()
	a.own.settle(false)
	<-a.wsem
	if !slices.Contains(got, "x") {
		t.Fatalf("heard %q after another store appended (x,2), want x", got)
	}
}
