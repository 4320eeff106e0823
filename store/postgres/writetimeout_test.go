package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/postgres"
)

// TestWriteTimeoutReportsTheServersAnswer: a write whose server side
// waits on a lock for longer than the store's write bound used to be
// reported failed while the server still held the whole pipelined batch
// (its Sync included) and committed it once the lock was released: the
// run advanced and the ledger grew after the caller was told nothing was
// written. Now the bound cancels the write on the server, whose answer
// (the write rolled back) is what is reported, and the connection stays
// usable. The caller's context is never cancelled here.
func TestWriteTimeoutReportsTheServersAnswer(t *testing.T) {
	t.Parallel()
	schema := testSchema(t)
	s, err := postgres.New(t.Context(), postgres.Config{URL: testURL(t), Schema: schema,
		Logger: testLogger(t), MaxConns: 4, WriteTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ctx := t.Context()
	r := testRun("held")
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}

	// Another session (an admin, a newer runner's migration…) holds the
	// run's row lock and the ledger lock of run "appended" for > 30 s.
	locker, tx := lockingTx(t, schema)
	if _, err := tx.Exec(ctx, "SELECT 1 FROM runs WHERE run_id = 'held' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))`, schema+"/ledger", "appended"); err != nil {
		t.Fatal(err)
	}

	var commitErr, appendErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		r.CurrentNode = "next"
		commitErr = s.RunCommit(context.Background(), &store.CommitParams{Run: r,
			Records: []*durable.StepRecord{testRecord("held", "next")}})
	})
	wg.Go(func() {
		appendErr = s.LedgerAppend(context.Background(), "appended", []*durable.StepRecord{testRecord("appended", "a")})
	})
	waitForBlocked(t, locker, 2)
	wg.Wait() // both are cancelled after WriteTimeout
	if commitErr == nil || appendErr == nil {
		t.Fatalf("writes held on a lock past WriteTimeout: RunCommit %v, LedgerAppend %v; want both to fail", commitErr, appendErr)
	}
	t.Logf("RunCommit: %v; LedgerAppend: %v", commitErr, appendErr)
	// The lock holder goes away without changing anything.
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	// Give the server a moment to run what it still held, then look.
	time.Sleep(time.Second)
	got, err := s.RunGet(ctx, "held")
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.LedgerCount(ctx, "held")
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.LedgerCount(ctx, "appended")
	if err != nil {
		t.Fatal(err)
	}
	if commitErr != nil && (got.Version != 1 || n != 0) {
		t.Errorf("RunCommit reported %v, yet the run is now at version %d (node %q) with %d ledger records: the failed write committed",
			commitErr, got.Version, got.CurrentNode, n)
	}
	if appendErr != nil && m != 0 {
		t.Errorf("LedgerAppend reported %v, yet the ledger now holds %d record(s): the failed append committed", appendErr, m)
	}
	// The write goes through once nothing holds it up.
	if err := s.RunCommit(ctx, &store.CommitParams{Run: got, Records: []*durable.StepRecord{testRecord("held", "next")}}); err != nil {
		t.Fatalf("the next write: %v", err)
	}
}
