package sqlite

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// lookFunc makes one look and returns what it heard, a delete as "-" and
// the run id.
type lookFunc func() []string

// listenHelpers opens shared stores, creates runs and appends records
// through them, and follows a store with looks driven by hand.
func listenHelpers(t *testing.T) (open func(string) *Store, create func(*Store, string, int), appendN func(*Store, string, int), follow func(*Store) (lookFunc, *ledgerFollow)) {
	ctx := t.Context()
	open = func(path string) *Store {
		s, err := New(ctx, Config{Path: path, Shared: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	recsOf := func(id string, n int) []*durable.StepRecord {
		now := durable.NewTime(time.Now())
		var recs []*durable.StepRecord
		for i := range n {
			recs = append(recs, &durable.StepRecord{RunID: id, StepID: id + string(rune('a'+i)), NodeID: "a",
				Status: durable.StepCompleted, StartedAt: now, EndedAt: now, Attempt: 1})
		}
		return recs
	}
	create = func(s *Store, id string, n int) {
		t.Helper()
		now := durable.NewTime(time.Now())
		run := &durable.RunState{RunID: id, WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "a",
			Vars: map[string]any{}, CreatedAt: now, UpdatedAt: now}
		if err := s.RunCommit(ctx, &store.CommitParams{Run: run, Create: true, Records: recsOf(id, n)}); err != nil {
			t.Fatal(err)
		}
	}
	appendN = func(s *Store, id string, n int) {
		t.Helper()
		if err := s.LedgerAppend(ctx, id, recsOf(id, n)); err != nil {
			t.Fatal(err)
		}
	}
	follow = func(s *Store) (lookFunc, *ledgerFollow) {
		f, rowTop, delTop, err := s.startFollow(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.own.remove(f) })
		return func() []string {
			var heard []string
			err := s.listenOnce(context.Background(), f, &rowTop, &delTop, func(id string, deleted bool) {
				if deleted {
					id = "-" + id
				}
				heard = append(heard, id)
			})
			if err != nil {
				t.Fatal(err)
			}
			return heard
		}, f
	}
	return
}

// Rowids a delete frees at the end of the ledger table are given again to
// the next rows: a look that scans only past the last rowid it saw would
// miss rows added there. Each scenario drives the looks by hand.
func TestListenLedgerAfterRowidsAreReused(t *testing.T) {
	ctx := t.Context()
	open, create, _, follow := listenHelpers(t)

	t.Run("another process's delete", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "db.sqlite")
		a, b := open(path), open(path)
		create(b, "x", 2)
		create(b, "y", 2) // the last rows
		next, _ := follow(a)
		if _, err := b.LedgerDelete(ctx, "y"); err != nil {
			t.Fatal(err)
		}
		create(b, "z", 2) // in y's rowids
		got := next()
		// z's rows were not found by rowid, but every follower is told to
		// read its ledgers again.
		if !slices.Equal(got, []string{"-y", ""}) {
			t.Fatalf("heard %q, want y's delete then a wake-up for every run", got)
		}
		create(b, "w", 1)
		if got := next(); !slices.Equal(got, []string{"w"}) {
			t.Fatalf("heard %q next, want w", got)
		}
	})

	t.Run("its own delete", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "db.sqlite")
		a, b := open(path), open(path)
		next, _ := follow(a)
		create(b, "x", 2)
		create(a, "y", 2) // the last rows, its own
		if got := next(); !slices.Equal(got, []string{"x"}) {
			t.Fatalf("heard %q, want x only", got)
		}
		if _, err := a.LedgerDelete(ctx, "y"); err != nil {
			t.Fatal(err)
		}
		create(b, "z", 2) // in y's rowids
		if got := next(); !slices.Equal(got, []string{"z"}) {
			t.Fatalf("heard %q, want z, found in the rowids its own delete freed", got)
		}
	})

	t.Run("a transaction that does not commit", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "db.sqlite")
		a, b := open(path), open(path)
		next, _ := follow(a)
		create(a, "x", 1)
		// The head's upsert, after the records are inserted and noted,
		// fails: the transaction rolls back, and its note must go with it,
		// or it would hide the other store's record with the same seq.
		for _, op := range []string{"INSERT", "UPDATE"} {
			if err := execTurn(b, `CREATE TRIGGER head_fails_`+op+` BEFORE `+op+` ON ledger_heads WHEN NEW.run_id = 'x'
				BEGIN SELECT RAISE(ABORT, 'refused'); END`); err != nil {
				t.Fatal(err)
			}
		}
		now := durable.NewTime(time.Now())
		r2 := func() []*durable.StepRecord {
			return []*durable.StepRecord{{RunID: "x", StepID: "s2", NodeID: "a", Status: durable.StepCompleted, StartedAt: now, EndedAt: now, Attempt: 1}}
		}
		if err := a.LedgerAppend(ctx, "x", r2()); err == nil {
			t.Fatal("the append went through its failing head trigger")
		}
		for _, op := range []string{"INSERT", "UPDATE"} {
			if err := execTurn(b, `DROP TRIGGER head_fails_`+op); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.LedgerAppend(ctx, "x", r2()); err != nil {
			t.Fatal(err)
		}
		if got := next(); !slices.Equal(got, []string{"x"}) {
			t.Fatalf("heard %q, want x's record from the other store", got)
		}
	})
}

// execTurn runs one statement on s's writer connection, in its turn.
func execTurn(s *Store, stmt string) error {
	ctx := context.Background()
	if err := s.takeTurn(ctx); err != nil {
		return err
	}
	defer func() { <-s.wsem }()
	_, err := s.wconn.ExecContext(ctx, stmt)
	return err
}

// insertForeignLedgers writes n one-record ledgers, prefix0 to prefix<n-1>,
// with plain SQL on s's connection, as another process might.
func insertForeignLedgers(t *testing.T, s *Store, prefix string, n int) {
	t.Helper()
	err := execTurn(s, `WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM c WHERE i < `+strconv.Itoa(n-1)+`)
		INSERT INTO ledger (run_id, seq, record_json) SELECT '`+prefix+`' || i, 1, '{}' FROM c`)
	if err != nil {
		t.Fatal(err)
	}
}

// deleteForeignLedgers deletes, with plain SQL, the ledgers whose run ids
// start with prefix.
func deleteForeignLedgers(t *testing.T, s *Store, prefix string) {
	t.Helper()
	if err := execTurn(s, `DELETE FROM ledger WHERE run_id LIKE '`+prefix+`%'`); err != nil {
		t.Fatal(err)
	}
}
