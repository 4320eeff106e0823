package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/postgres"
)

// TestListenLedgerIgnoresOtherSchemas: the notification channel is shared
// by every schema on the database; ListenLedger wakes only for appends
// "another Store value made to this schema". An append to another
// schema's ledger (another deployment on the same server) must not wake
// this schema's followers.
func TestListenLedgerIgnoresOtherSchemas(t *testing.T) {
	testURL(t)
	t.Parallel()
	open := func(schema string) *postgres.Store {
		s, err := postgres.New(t.Context(), postgres.Config{URL: testURL(t), Schema: schema,
			Logger: testLogger(t), MaxConns: 2, NotifyAppends: true})
		if err != nil {
			t.Fatalf("New(schema %s): %v", schema, err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	schemaA, schemaB := freshSchemaName(t), freshSchemaName(t)
	listener, writerA, writerB := open(schemaA), open(schemaA), open(schemaB)

	ctx, stop := context.WithCancel(t.Context())
	ready := make(chan struct{})
	woken := make(chan string, 16)
	listened := make(chan error, 1)
	go func() {
		listened <- listener.ListenLedger(ctx, func() { close(ready) }, func(runID string, _ bool) { woken <- runID })
	}()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		stop()
		t.Fatal("not listening within 10 s")
	}
	append1 := func(s *postgres.Store, runID string) {
		if err := s.LedgerAppend(ctx, runID, []*durable.StepRecord{testRecord(runID, "n")}); err != nil {
			t.Error(err)
		}
	}
	// Committed in this order, so notified in this order.
	append1(writerB, "in-other-schema")
	append1(writerA, "in-this-schema")
	select {
	case id := <-woken:
		if id != "in-this-schema" {
			t.Errorf("first wake-up for run %q; want %q (the other schema's append must not wake)", id, "in-this-schema")
		}
	case <-time.After(10 * time.Second):
		t.Error("no wake-up within 10 s for this schema's append")
	}
	stop()
	if err := <-listened; !errors.Is(err, context.Canceled) {
		t.Errorf("ListenLedger after its context ended = %v", err)
	}
}
