package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/postgres"
)

// A runner whose machine vanished in the middle of a transaction used to
// keep that transaction's locks until TCP gave up on the connection (hours
// with the usual keepalive settings); on the command counter that stops
// every gateway's command appends. The server now ends a transaction of
// ours that waits on its client for longer than the write bound.
func TestAbandonedTransactionReleasesItsLocks(t *testing.T) {
	t.Parallel()
	schema := testSchema(t)
	ctx := t.Context()
	frozen, err := postgres.New(ctx, postgres.Config{URL: testURL(t), Schema: schema,
		Logger: testLogger(t), MaxConns: 2, WriteTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = frozen.Close() })
	other, err := postgres.New(ctx, postgres.Config{URL: testURL(t), Schema: schema, Logger: testLogger(t), MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })

	// The frozen runner took the counter's lock, as CommandAppend does,
	// and then stopped talking.
	tx, err := frozen.BeginOnPool(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	if _, err := tx.Exec(ctx, `SELECT last_seq FROM command_seq FOR UPDATE`); err != nil {
		t.Fatal(err)
	}

	appendCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	start := time.Now()
	res, err := other.CommandAppend(appendCtx, &durable.CommandRecord{CommandID: "after-freeze", RunID: "r", Type: "pause",
		Payload: map[string]any{}})
	if err != nil || !res.Accepted {
		t.Fatalf("append behind an abandoned transaction: %+v, %v (after %v)", res, err, time.Since(start))
	}
	t.Logf("append went through after %v", time.Since(start).Round(10*time.Millisecond))
	// The abandoned transaction was ended by the server, not committed.
	if err := tx.Commit(ctx); err == nil {
		t.Error("the abandoned transaction could still commit")
	}
}
