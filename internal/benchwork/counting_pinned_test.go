package benchwork

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestCountingCountsEveryCall: each store call made through the counting
// view adds one to its op, the LedgerFindCompleted fast path included,
// and PerRun lists an op called once (ops_per_run is the pilot's store
// calls per run, as the README's table of saves, loads and lists).
func TestCountingCountsEveryCall(t *testing.T) {
	ctx := context.Background()
	st, c := Wrap(memory.New())
	defer st.Close()
	finder, ok := st.(store.LedgerFinder)
	if !ok {
		t.Fatal("precondition: the memory store has the LedgerFinder fast path")
	}
	run := &durable.RunState{RunID: "r1", WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "n", Vars: map[string]any{}}
	rec := &durable.StepRecord{RunID: "r1", StepID: "s1", NodeID: "n", Status: durable.StepCompleted, IdempotencyKey: "k"}
	calls := map[Op]func() error{
		OpRunCommit: func() error { return st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true}) },
		OpRunGet:    func() error { _, err := st.RunGet(ctx, "r1"); return err },
		OpRunList:   func() error { _, err := st.RunList(ctx, &store.RunListParams{}); return err },
		OpRunListDue: func() error {
			_, err := st.RunListDue(ctx, &store.RunListDueParams{Now: run.CreatedAt.Time})
			return err
		},
		OpRunNextDue:          func() error { _, err := st.RunNextDue(ctx); return err },
		OpRunListChildren:     func() error { _, err := st.RunListChildren(ctx, "r1", ""); return err },
		OpRunIndex:            func() error { _, err := st.RunIndex(ctx, &store.RunIndexParams{}); return err },
		OpLedgerAppend:        func() error { return st.LedgerAppend(ctx, "r1", []*durable.StepRecord{rec}) },
		OpLedgerList:          func() error { _, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: "r1"}); return err },
		OpLedgerCount:         func() error { _, err := st.LedgerCount(ctx, "r1"); return err },
		OpLedgerFindCompleted: func() error { _, err := finder.LedgerFindCompleted(ctx, "r1", "k"); return err },
		OpRunDelete:           func() error { _, err := st.RunDelete(ctx, "r1"); return err },
		OpLedgerDelete:        func() error { _, err := st.LedgerDelete(ctx, "r1"); return err },
		OpCommand:             func() error { _, err := st.CommandLastSeq(ctx); return err },
	}
	// In an order that leaves the run and its ledger for the reads.
	for _, op := range []Op{OpRunCommit, OpRunGet, OpRunList, OpRunListDue, OpRunNextDue, OpRunListChildren, OpRunIndex,
		OpLedgerAppend, OpLedgerList, OpLedgerCount, OpLedgerFindCompleted, OpRunDelete, OpLedgerDelete, OpCommand} {
		if err := calls[op](); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
	}
	s := c.Snapshot()
	per := s.PerRun(1)
	for op := range calls {
		if s.Ops[op] != 1 || per[op.String()] != 1 {
			t.Errorf("%s: counted %d, ops_per_run %v; want 1 and 1", op, s.Ops[op], per[op.String()])
		}
	}
}

// TestCountingCountsClaimsAndReleases: RunClaim and RunRelease are
// writes (Commits counts them, each one SQLite transaction), so the
// counting view must count both; an uncounted release would lower
// commits_per_run and go_vs_ceiling on the stores that claim runs.
func TestCountingCountsClaimsAndReleases(t *testing.T) {
	ctx := context.Background()
	st, c := Wrap(memory.New())
	defer st.Close()
	claimer, ok := st.(store.RunClaimer)
	if !ok {
		t.Fatal("precondition: the memory store claims runs")
	}
	run := &durable.RunState{RunID: "r1", WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "n", Vars: map[string]any{}}
	if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true}); err != nil {
		t.Fatal(err)
	}
	if err := claimer.RunClaim(ctx, &store.RunClaimParams{RunID: "r1", Owner: "o", TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if err := claimer.RunRelease(ctx, "r1", "o"); err != nil {
		t.Fatal(err)
	}
	s := c.Snapshot()
	if s.Ops[OpRunClaim] != 1 || s.Ops[OpRunRelease] != 1 || s.Commits() != 3 {
		t.Errorf("claims %d releases %d commits %d; want 1, 1 and 3 (commit + claim + release)",
			s.Ops[OpRunClaim], s.Ops[OpRunRelease], s.Commits())
	}
}
