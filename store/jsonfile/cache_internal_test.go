package jsonfile

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// TestLRU: the least recently used entry goes first once the total cost
// passes the limit, a get makes an entry recent, a put replaces the cost
// of the key it reuses, and the entry just put stays even when it alone
// is over the limit.
func TestLRU(t *testing.T) {
	t.Parallel()
	c := newLRU[int](10)
	c.put("a", 1, 4)
	c.put("b", 2, 4)
	if _, ok := c.get("a"); !ok { // a is now the most recently used
		t.Fatal("a missing")
	}
	c.put("c", 3, 4) // 12 > 10: b goes
	if _, ok := c.get("b"); ok {
		t.Error("b kept; want it evicted as the least recently used")
	}
	if n, cost := c.size(); n != 2 || cost != 8 {
		t.Errorf("size = %d entries, cost %d; want 2, 8", n, cost)
	}
	c.put("a", 10, 1) // replaces a's cost
	if v, _ := c.get("a"); v != 10 {
		t.Errorf("a = %d, want 10", v)
	}
	if _, cost := c.size(); cost != 5 {
		t.Errorf("cost after replacing a = %d, want 5", cost)
	}
	c.put("big", 4, 50)
	if n, _ := c.size(); n != 1 {
		t.Errorf("%d entries after an entry over the limit; want only it", n)
	}
	if _, ok := c.get("big"); !ok {
		t.Error("the entry just put was evicted")
	}
	c.remove("big")
	if n, cost := c.size(); n != 0 || cost != 0 {
		t.Errorf("after remove: %d entries, cost %d", n, cost)
	}
}

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
	for name, c := range map[string]interface{ size() (int, int64) }{"states": s.cache, "ledger indexes": s.ledgers} {
		n, cost := c.size()
		if n >= runs || cost > limit {
			t.Errorf("%s: %d entries costing %d after %d runs; want fewer entries within %d", name, n, cost, runs, limit)
		}
	}
	if _, ok := s.cache.get("run-000"); ok {
		t.Fatal("run-000's state is still cached; the test needs it evicted")
	}
	if _, ok := s.ledgers.get("run-001"); ok {
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
