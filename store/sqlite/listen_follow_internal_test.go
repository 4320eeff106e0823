package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestListenLedgerEndsItsFollowWhenItReturns: a ListenLedger call that
// returns takes its follow off the store, so the store stops noting its
// own appends and deletes for it (following reports false). Were the
// follow left registered, every later write would keep noting rows for a
// listener that is gone, and its notes would grow without bound.
func TestListenLedgerEndsItsFollowWhenItReturns(t *testing.T) {
	open, create, appendN, _ := listenHelpers(t)
	s := open(filepath.Join(t.TempDir(), "listen.sqlite3"))
	s.listenEvery = time.Millisecond
	for range 2 {
		ctx, cancel := context.WithCancel(t.Context())
		ready := make(chan struct{})
		done := make(chan error, 1)
		go func() { done <- s.ListenLedger(ctx, func() { close(ready) }, func(string, bool) {}) }()
		<-ready
		if !s.own.following() {
			t.Fatal("a ListenLedger call under way is not following the store's own writes")
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("ListenLedger after cancel: %v", err)
		}
		if s.own.following() {
			t.Fatal("the store still follows its own writes after its only ListenLedger call returned")
		}
	}
	create(s, "r", 1)
	appendN(s, "r", 2)
	s.own.mu.Lock()
	n := len(s.own.follows)
	s.own.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d follows registered after every ListenLedger call returned", n)
	}
}

// TestListenTrimmedForeignDeleteForgetsTheOwnRowsItRemoved: another
// process deletes a ledger this store appended, then so many others that
// the log is trimmed before a look reads that delete. The look cannot name
// it, so it forgets every own row noted before; were the note kept, the
// other process's new ledger of the same run, in the same rowid and seq,
// would be taken for the store's own row and never heard.
func TestListenTrimmedForeignDeleteForgetsTheOwnRowsItRemoved(t *testing.T) {
	open, create, _, follow := listenHelpers(t)
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	a, b := open(path), open(path)
	next, _ := follow(a)
	create(a, "x", 1) // own: rowid 1, seq 1
	if _, err := b.LedgerDelete(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	insertForeignLedgers(t, b, "r", 10001)
	deleteForeignLedgers(t, b, "r") // trims x's delete out of the log
	if got := next(); !slices.Contains(got, "-") {
		t.Fatalf("heard %q after the delete log was trimmed, want every follower told to read again", got)
	}
	// Another process writes x's ledger again: rowid 1, seq 1.
	if err := execTurn(b, `INSERT INTO ledger (run_id, seq, record_json) VALUES ('x', 1, '{}')`); err != nil {
		t.Fatal(err)
	}
	if got := next(); !slices.Contains(got, "x") {
		t.Fatalf("heard %q after another store created x again, want x", got)
	}
}

// TestListenRollbackKeepsTheNotesOfEarlierCommits: a transaction that does
// not commit undoes its own notes only. Were the notes of a committed
// transaction left pending, the next rollback would undo them too, and the
// store's own committed append would be reported as another process's.
func TestListenRollbackKeepsTheNotesOfEarlierCommits(t *testing.T) {
	open, create, _, follow := listenHelpers(t)
	ctx := t.Context()
	a := open(filepath.Join(t.TempDir(), "db.sqlite"))
	next, _ := follow(a)
	create(a, "y", 1) // own, committed
	if err := a.takeTurn(ctx); err != nil {
		t.Fatal(err)
	}
	err := a.inTx(ctx, func(ctx2 context.Context) error {
		if _, err := a.appendRecords(ctx2, "y", []encodedRecord{{json: `{}`}}); err != nil {
			return err
		}
		return errors.New("a later statement of the transaction fails")
	})
	a.own.settle(false)
	<-a.wsem
	if err == nil {
		t.Fatal("no error")
	}
	if got := next(); slices.Contains(got, "y") {
		t.Fatalf("heard %q: the store's own committed append to y reported after a later rollback", got)
	}
}
