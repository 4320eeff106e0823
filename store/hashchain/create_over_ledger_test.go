package hashchain_test

import (
	"context"
	"errors"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestChainContinuesOverKeptLedger: RunDelete keeps the
// ledger (store.RunStore), so a run created again under the same id (a
// create without RandomID) appends to a ledger that already has records.
// Its records must chain to that ledger's head, as Python's
// HashChainedLedgerStore does (it always reads the head from the ledger);
// the bug this guards against: they were chained as a fresh ledger's
// (prev_hash ""), which broke the chain.
func TestChainContinuesOverKeptLedger(t *testing.T) {
	t.Parallel()
	st := hashchain.Wrap(memory.New())
	ctx := context.Background()
	mkRun := func() *durable.RunState {
		return &durable.RunState{RunID: "run-1", WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "start",
			Vars: map[string]any{}}
	}
	rec := func(step string) *durable.StepRecord {
		return &durable.StepRecord{RunID: "run-1", StepID: step, NodeID: "n", Status: durable.StepCompleted, Attempt: 1}
	}
	first := rec("step-1")
	if err := st.RunCommit(ctx, &store.CommitParams{Run: mkRun(), Create: true, Records: []*durable.StepRecord{first}}); err != nil {
		t.Fatal(err)
	}
	if ok, err := st.RunDelete(ctx, "run-1"); err != nil || !ok {
		t.Fatalf("RunDelete = %v, %v", ok, err)
	}
	second := rec("step-2")
	if err := st.RunCommit(ctx, &store.CommitParams{Run: mkRun(), Create: true, Records: []*durable.StepRecord{second}}); err != nil {
		t.Fatal(err)
	}
	stored, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: "run-1"})
	if err != nil || len(stored) != 2 {
		t.Fatalf("LedgerList = %d records, %v", len(stored), err)
	}
	if second.PrevHash != first.RecordHash {
		t.Errorf("record 2 prev_hash = %q, want record 1's hash %q", second.PrevHash, first.RecordHash)
	}
	if rep := hashchain.VerifyLedgerChain(stored); !rep.OK {
		t.Errorf("ledger of a run created again over its kept ledger does not verify: %+v", rep.Errors)
	}
}

// halfCreate is a non-atomic store whose first create appends its records
// and then fails to save the state, as the JSON-file store does when it
// cannot write the run file (records first: "the ledger is never behind
// the state").
type halfCreate struct {
	store.Store
	failed bool
}

func (s *halfCreate) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if p.Create && !s.failed {
		s.failed = true
		if err := s.Store.LedgerAppend(ctx, p.Run.RunID, p.Records); err != nil {
			return err
		}
		return errors.New("injected: the run file could not be written")
	}
	return s.Store.RunCommit(ctx, p)
}

// TestChainAfterHalfFailedCreate: a create under a chosen
// id (runtime Start with RunID) on a non-atomic store can leave its
// records in the ledger and fail; the retried create must chain to them.
func TestChainAfterHalfFailedCreate(t *testing.T) {
	t.Parallel()
	inner := &halfCreate{Store: memory.New()}
	st := hashchain.Wrap(inner)
	ctx := context.Background()
	mk := func() (*durable.RunState, []*durable.StepRecord) {
		return &durable.RunState{RunID: "run-1", WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "start", Vars: map[string]any{}},
			[]*durable.StepRecord{{RunID: "run-1", StepID: "s", NodeID: "start", Status: durable.StepStarted, Attempt: 1}}
	}
	r, recs := mk()
	if err := st.RunCommit(ctx, &store.CommitParams{Run: r, Create: true, Records: recs}); err == nil {
		t.Fatal("the injected create failure did not happen")
	}
	r, recs = mk()
	if err := st.RunCommit(ctx, &store.CommitParams{Run: r, Create: true, Records: recs}); err != nil {
		t.Fatalf("retried create: %v", err)
	}
	stored, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: "run-1"})
	if err != nil || len(stored) != 2 {
		t.Fatalf("LedgerList = %d records, %v", len(stored), err)
	}
	if rep := hashchain.VerifyLedgerChain(stored); !rep.OK {
		t.Errorf("ledger after a half-failed create and its retry does not verify: %+v", rep.Errors)
	}
}
