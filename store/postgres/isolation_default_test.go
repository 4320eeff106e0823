package postgres_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/postgres"
)

// isolationURL returns TEST_POSTGRES_URL with the session default
// transaction isolation set to level, as a database or role default
// (ALTER DATABASE … SET default_transaction_isolation, which the tests
// cannot set on a shared server) sets it for every connection of a
// deployment. The store's writes rely on READ COMMITTED (doc.go,
// ledger.go, postgres.go inTx), so it must pin that level whatever the
// URL or the database says.
func isolationURL(t *testing.T, level string) string {
	t.Helper()
	u, err := url.Parse(testURL(t))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("default_transaction_isolation", level)
	// %20, not Encode's +: pgx reads + as itself.
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
	return u.String()
}

// openOwnPool opens a Store on schema at rawURL (a pool of its own, as a
// runner process would have).
func openOwnPool(t *testing.T, rawURL, schema string) *postgres.Store {
	t.Helper()
	s, err := postgres.New(t.Context(), postgres.Config{URL: rawURL, Schema: schema, Logger: testLogger(t), MaxConns: 2})
	if err != nil {
		t.Fatalf("New(schema %s): %v", schema, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// plainConn opens a plain connection (another process's session).
func plainConn(t *testing.T) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(t.Context(), testURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// waitBlockedBehind waits until n backends wait, directly or behind
// other waiters, on the transaction of pid, and returns them.
func waitBlockedBehind(t *testing.T, observer *pgx.Conn, pid uint32, n int) []uint32 {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		blockers := map[uint32][]uint32{}
		rows, err := observer.Query(t.Context(), `SELECT pid, pg_blocking_pids(pid)::int8[] FROM pg_stat_activity
			WHERE cardinality(pg_blocking_pids(pid)) > 0`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var p uint32
			var by []int64
			if err := rows.Scan(&p, &by); err != nil {
				t.Fatal(err)
			}
			for _, b := range by {
				blockers[uint32(b)] = append(blockers[uint32(b)], p)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		var found []uint32
		seen := map[uint32]bool{pid: true}
		for queue := []uint32{pid}; len(queue) > 0; queue = queue[1:] {
			for _, w := range blockers[queue[0]] {
				if !seen[w] {
					seen[w] = true
					found = append(found, w)
					queue = append(queue, w)
				}
			}
		}
		if len(found) >= n {
			return found
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d backends wait behind %d, want %d", len(found), pid, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// holdAdvisoryLock begins a transaction on c holding the advisory lock the
// store takes for kind/name in schema (postgres.go lockOn), as another
// runner in the middle of the same write holds it.
func holdAdvisoryLock(t *testing.T, c *pgx.Conn, schema, kind, name string) pgx.Tx {
	t.Helper()
	tx, err := c.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(t.Context(), `SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))`, schema+"/"+kind, name); err != nil {
		t.Fatal(err)
	}
	return tx
}

// TestCommitConflictUnderRepeatableReadDefault checks doc.go
// ("Concurrency between processes"): of two commits of one version
// "exactly one changes a row; the other, after waiting, changes none and
// gets store.ErrConflict", and postgres.go's inTx promise of READ
// COMMITTED transactions. Before the store pinned its isolation level, on a
// database whose default_transaction_isolation is repeatable read (or
// serializable), the waiting commit failed with SQLSTATE 40001 ("could
// not serialize access due to concurrent update"), which is not
// ErrConflict, so the runtime took a routine lost race for a store failure.
func TestCommitConflictUnderRepeatableReadDefault(t *testing.T) {
	testURL(t)
	t.Parallel()
	ctx := t.Context()
	schema := freshSchemaName(t)
	u := isolationURL(t, "repeatable read")
	a, b := openOwnPool(t, u, schema), openOwnPool(t, u, schema)
	if err := a.RunCommit(ctx, &store.CommitParams{Run: testRun("r"), Create: true}); err != nil {
		t.Fatal(err)
	}
	ra, err := a.RunGet(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	rb, err := b.RunGet(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}

	// A LedgerAppend of another process is in flight: it holds run r's
	// ledger lock, so runner b's commit (which writes records) takes the
	// run row and waits on that lock; runner a's commit of the same
	// version then waits on b's row lock.
	holder, observer := plainConn(t), plainConn(t)
	tx := holdAdvisoryLock(t, holder, schema, "ledger", "r")
	errB := make(chan error, 1)
	go func() {
		rb.CurrentNode = "b"
		errB <- b.RunCommit(ctx, &store.CommitParams{Run: rb, Records: []*durable.StepRecord{testRecord("r", "b")}})
	}()
	bpids := waitBlockedBehind(t, observer, holder.PgConn().PID(), 1)
	errA := make(chan error, 1)
	go func() {
		ra.CurrentNode = "a"
		errA <- a.RunCommit(ctx, &store.CommitParams{Run: ra})
	}()
	waitBlockedBehind(t, observer, bpids[0], 1)
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errB; err != nil {
		t.Fatalf("runner b's commit: %v", err)
	}
	if err := <-errA; !errors.Is(err, store.ErrConflict) {
		t.Errorf("runner a's commit of the version b committed = %v; want store.ErrConflict", err)
	}
}

// TestLedgerAppendUnderRepeatableReadDefault checks doc.go: "Ledger
// seqs are MAX(seq)+1 taken under a per-run advisory lock held to commit
// … so they are gapless" and ledger.go's ledgerInsertSQL, which relies on
// READ COMMITTED ("in READ COMMITTED the statement's snapshot then sees
// every append committed before"). Before the store pinned READ
// COMMITTED, with a database default of repeatable read, the snapshot was
// the one taken before the lock wait, the second of two appenders read the
// old MAX(seq), and its append failed with a duplicate key instead of
// taking the next seq (the memory store accepts both).
func TestLedgerAppendUnderRepeatableReadDefault(t *testing.T) {
	testURL(t)
	t.Parallel()
	ctx := t.Context()
	schema := freshSchemaName(t)
	u := isolationURL(t, "repeatable read")
	a, b := openOwnPool(t, u, schema), openOwnPool(t, u, schema)

	holder, observer := plainConn(t), plainConn(t)
	tx := holdAdvisoryLock(t, holder, schema, "ledger", "r")
	errs := make(chan error, 2)
	for _, s := range []*postgres.Store{a, b} {
		go func() { errs <- s.LedgerAppend(ctx, "r", []*durable.StepRecord{testRecord("r", "n")}) }()
	}
	waitBlockedBehind(t, observer, holder.PgConn().PID(), 2)
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("LedgerAppend of one of two runners: %v; want both appended (seqs 1 and 2)", err)
		}
	}
	if n, err := a.LedgerCount(ctx, "r"); err != nil || n != 2 {
		t.Errorf("LedgerCount = %d, %v; want 2", n, err)
	}
}

// TestConcurrentOpenUnderRepeatableReadDefault checks doc.go
// ("Migrations are … applied when a Store opens, in one transaction under
// a transaction-level advisory lock, so processes opening the same schema
// at once apply each exactly once"). With a database default of
// repeatable read, the process that waited on the migration lock reads
// pg_namespace and schema_migrations in the snapshot taken before its
// wait, finds nothing, and fails to create the schema the other one just
// created: the second runner of a fresh deployment does not start.
func TestConcurrentOpenUnderRepeatableReadDefault(t *testing.T) {
	testURL(t)
	t.Parallel()
	ctx := t.Context()
	schema := freshSchemaName(t)
	u := isolationURL(t, "repeatable read")

	holder, observer := plainConn(t), plainConn(t)
	tx := holdAdvisoryLock(t, holder, schema, "migrate", "")
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			s, err := postgres.New(ctx, postgres.Config{URL: u, Schema: schema, Logger: testLogger(t), MaxConns: 2})
			if s != nil {
				_ = s.Close()
			}
			errs <- err
		}()
	}
	waitBlockedBehind(t, observer, holder.PgConn().PID(), 2)
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("New of one of two runners opening a fresh schema at once: %v", err)
		}
	}
}

// TestCommandAppendUnderRepeatableReadDefault checks doc.go
// ("Command seqs come from the one-row command_seq table, locked by each
// append: gapless") and store.CommandStore ("CommandAppend stores a
// command once per CommandID"): two runners' appends that meet on the
// command_seq row both succeed with consecutive seqs, as in the memory
// store. Before the store pinned READ COMMITTED, with a database default of
// repeatable read, the appender that waited for the row failed with
// SQLSTATE 40001 once the other one's update committed, and an API
// caller's pause or cancel was refused.
func TestCommandAppendUnderRepeatableReadDefault(t *testing.T) {
	testURL(t)
	t.Parallel()
	ctx := t.Context()
	schema := freshSchemaName(t)
	u := isolationURL(t, "repeatable read")
	a, b := openOwnPool(t, u, schema), openOwnPool(t, u, schema)

	// Another appender is between its lock and its commit.
	holder, observer := plainConn(t), plainConn(t)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT last_seq FROM `+pgx.Identifier{schema, "command_seq"}.Sanitize()+` FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	type result struct {
		res durable.CommandAppendResult
		err error
	}
	results := make(chan result, 2)
	for i, s := range []*postgres.Store{a, b} {
		go func() {
			res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c" + string(rune('a'+i)), RunID: "r", Type: "pause"})
			results <- result{res, err}
		}()
	}
	waitBlockedBehind(t, observer, holder.PgConn().PID(), 2)
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if r := <-results; r.err != nil || !r.res.Accepted {
			t.Errorf("CommandAppend of one of two runners = %+v, %v; want accepted", r.res, r.err)
		}
	}
	if last, err := a.CommandLastSeq(ctx); err != nil || last != 2 {
		t.Errorf("CommandLastSeq = %d, %v; want 2", last, err)
	}
}
