package jsonfile

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// TestStore_CacheIsBounded: a store that has committed many runs keeps
// states and ledger indexes within CacheBytes, and runs it no longer
// keeps read back from the files: state, ledger and completed-key
// look-up.
func TestStore_CacheIsBounded(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	s, err := New(Config{Dir: t.TempDir(), NoSync: true, CacheBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ctx := t.Context()
	now := durable.NewTime(time.Now())
	const runs = 400 // ~1.5 KB of state and ~220 B of ledger index each: both over the limit
	for i := range runs {
		id := fmt.Sprintf("run-%03d", i)
		r := &durable.RunState{RunID: id, WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "n",
			Vars: map[string]any{"i": fmt.Sprint(i), "pad": strings.Repeat("x", 1000)}, CreatedAt: now, UpdatedAt: now}
		recs := []*durable.StepRecord{{RunID: id, StepID: "s1", NodeID: "n", Status: durable.StepCompleted,
			StartedAt: now, EndedAt: now, IdempotencyKey: "key-" + id, Result: map[string]any{"i": fmt.Sprint(i)}}}
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true, Records: recs}); err != nil {
			t.Fatal(err)
		}
	}
	for name, c := range map[string]interface{ Size() (int, int64) }{"states": s.cache, "ledger indexes": s.ledgers} {
		n, cost := c.Size()
		if n >= runs || cost > limit {
			t.Errorf("%s: %d entries costing %d after %d runs; want fewer entries within %d", name, n, cost, runs, limit)
		}
	}
	if _, ok := s.cache.Get("run-000"); ok {
		t.Fatal("run-000's state is still cached; the test needs it evicted")
	}
	if _, ok := s.ledgers.Get("run-001"); ok {
		t.Fatal("run-001's ledger index is still cached; the test needs it evicted")
	}
	r, err := s.RunGet(ctx, "run-000")
	if err != nil || r.Vars["i"] != "0" || r.Version != 1 {
		t.Fatalf("RunGet(run-000) = %+v, %v; want its state at version 1", r, err)
	}
	recs, err := s.LedgerList(ctx, &store.LedgerListParams{RunID: "run-001"})
	if err != nil || len(recs) != 1 || recs[0].IdempotencyKey != "key-run-001" {
		t.Fatalf("LedgerList(run-001) = %v, %v", recs, err)
	}
	rec, err := s.LedgerFindCompleted(ctx, "run-002", "key-run-002")
	if err != nil || rec == nil || rec.Seq != 1 {
		t.Fatalf("LedgerFindCompleted(run-002) = %+v, %v", rec, err)
	}
}
