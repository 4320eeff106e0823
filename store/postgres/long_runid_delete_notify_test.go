package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/postgres"
)

// A ledger delete is notified as a delete (ListenLedger's deleted=true)
// also for a run whose id does not fit in a NOTIFY payload: appends of
// such a run wake every follower (runID ""), and a delete of one must
// likewise reach every follower as a delete. A follower that is only woken
// reads from its cursor, which a delete moves back to the start, so it
// would read the ledger that grows again from its middle (store/observe:
// "a delete, unlike an append, is not found by a read from the cursor").
func TestLongRunIDLedgerDeleteIsNotifiedAsADelete(t *testing.T) {
	testURL(t)
	schema := testSchema(t)
	id := strings.Repeat("d", 8000)
	plain := openSchema(t, schema)
	if err := plain.RunCommit(t.Context(), &store.CommitParams{Run: testRun(id), Create: true,
		Records: []*durable.StepRecord{testRecord(id, "a")}}); err != nil {
		t.Fatal(err)
	}
	notifying, err := postgres.New(t.Context(), postgres.Config{URL: testURL(t), Schema: schema, Logger: testLogger(t), MaxConns: 2, NotifyAppends: true})
	if err != nil {
		t.Fatal(err)
	}
	defer notifying.Close()
	type heard struct {
		runID   string
		deleted bool
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ready, woken, done := make(chan struct{}), make(chan heard, 8), make(chan error, 1)
	go func() {
		done <- plain.ListenLedger(ctx, func() { close(ready) },
			func(runID string, deleted bool) { woken <- heard{runID, deleted} })
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("listening: %v", err)
	}
	if n, err := notifying.LedgerDelete(t.Context(), id); err != nil || n != 1 {
		t.Fatalf("LedgerDelete = %d, %v; want 1 record deleted", n, err)
	}
	select {
	case got := <-woken:
		if !got.deleted || (got.runID != "" && got.runID != id) {
			t.Errorf("the delete of a run with a %d-byte id was heard as runID %q (len %d), deleted=%v; want a delete for every follower (\"\") or the run",
				len(id), got.runID[:min(len(got.runID), 20)], len(got.runID), got.deleted)
		}
	case <-time.After(10 * time.Second):
		t.Error("the delete of a run with a long id notified no listener")
	}
}
