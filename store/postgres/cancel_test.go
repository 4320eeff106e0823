package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/postgres"
)

// TestCommitOutlivesCancellation: a commit whose caller cancels it while
// the server is executing it waits for the server's answer and reports
// it. Abandoning it would report a failure for a transaction the server
// may still commit (it had the commit already), which is how a cancelled
// parent once missed a child created while it was being cancelled.
//
// The server is made to hold the commit on a row lock taken by another
// transaction; the caller's context is cancelled meanwhile.
func TestCommitOutlivesCancellation(t *testing.T) {
	t.Parallel()
	schema := testSchema(t)
	s := openSchema(t, schema)
	ctx := t.Context()
	r := testRun("held")
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}

	locker, tx := lockingTx(t, schema)
	if _, err := tx.Exec(ctx, "SELECT 1 FROM runs WHERE run_id = 'held' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}

	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.CurrentNode = "next"
	done := make(chan error, 1)
	go func() {
		done <- s.RunCommit(cctx, &store.CommitParams{Run: r,
			Records: []*durable.StepRecord{testRecord("held", "next")}})
	}()
	waitForBlocked(t, locker, 1)
	cancel()
	select {
	case err := <-done:
		t.Fatalf("RunCommit returned %v when cancelled while the server held its commit; want it to wait for the server", err)
	case <-time.After(500 * time.Millisecond):
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("RunCommit after the lock was released: %v", err)
	}
	got, err := s.RunGet(ctx, "held")
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 2 || got.CurrentNode != "next" || r.Version != 2 {
		t.Errorf("run at version %d (caller's %d), node %q; want the commit applied", got.Version, r.Version, got.CurrentNode)
	}
	if n, err := s.LedgerCount(ctx, "held"); err != nil || n != 1 {
		t.Errorf("ledger holds %d records (%v), want 1", n, err)
	}
}

// lockingTx opens a transaction of another session on schema, for a test
// to take locks a store's writes then wait on; it is rolled back (and its
// connection closed) when the test ends.
func lockingTx(t *testing.T, schema string) (*pgx.Conn, pgx.Tx) {
	t.Helper()
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, testURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	if _, err := conn.Exec(ctx, "SET search_path TO "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	return conn, tx
}

// waitForBlocked waits until n sessions wait on a lock conn's transaction
// holds (pg_stat_activity is read afresh: conn is inside a transaction,
// which would otherwise keep its first snapshot of it).
func waitForBlocked(t *testing.T, conn *pgx.Conn, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var got int
		if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity, pg_stat_clear_snapshot()
			WHERE pg_backend_pid() = ANY(pg_blocking_pids(pid))`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("fewer than %d sessions waited on the locks within 10 s", n)
}

// TestCancelledWriteWaitingForAConnection: the caller's cancellation
// "counts only until the write begins" (Store.writing), yet the write's
// context dropped it before the connection was even acquired, so a write
// whose caller gave up while it queued for a pool connection (every
// connection busy, e.g. behind slow lock waits) stayed blocked for up to
// WriteTimeout (30 s by default) and was then committed after all.
func TestCancelledWriteWaitingForAConnection(t *testing.T) {
	testURL(t)
	t.Parallel()
	schema := testSchema(t)
	s, err := postgres.New(t.Context(), postgres.Config{URL: testURL(t), Schema: schema,
		Logger: testLogger(t), MaxConns: 1, WriteTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	// The pool's only connection is busy.
	tx, err := s.BeginOnPool(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			_ = tx.Rollback(context.Background())
		}
	}
	defer release()

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- s.RunCommit(ctx, &store.CommitParams{Run: testRun("queued"), Create: true})
	}()
	time.Sleep(200 * time.Millisecond) // queued for the connection
	start := time.Now()
	cancel()
	var commitErr error
	select {
	case commitErr = <-done:
		t.Logf("RunCommit returned %v %v after its caller cancelled", commitErr, time.Since(start).Round(time.Millisecond))
	case <-time.After(2 * time.Second):
		// Free the connection: the cancelled write goes ahead.
		release()
		commitErr = <-done
		t.Errorf("RunCommit, cancelled while it waited for a pool connection, was still blocked 2 s later; "+
			"once a connection freed up it returned %v", commitErr)
	}
	release()
	if commitErr != nil && !errors.Is(commitErr, context.Canceled) {
		t.Errorf("RunCommit cancelled before it began = %v; want context.Canceled", commitErr)
	}
}
