package hashchain_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A commit with records and no run returns an error, as every backend does
// ("run id is required"), and does not panic inside the decorator. The bug
// this guards against: RunCommit read p.Run.RunID before the inner store
// saw the commit, so it panicked whenever the commit carried records
// (observe.Store guards against the same crash: nilrun_test.go).
func TestRunCommitWithoutRunReturnsError(t *testing.T) {
	ctx := context.Background()
	recs := func() []*durable.StepRecord {
		return []*durable.StepRecord{{RunID: "run-1", StepID: "s", NodeID: "n", Status: durable.StepCompleted, Attempt: 1}}
	}
	innerErr := memory.New().RunCommit(ctx, &store.CommitParams{Records: recs()})
	if innerErr == nil {
		t.Fatal("memory store accepted a commit without a run")
	}
	st := hashchain.Wrap(memory.New())
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Errorf("hashchain.Store.RunCommit(records, no run) panicked: %v; the inner store returns %q", p, innerErr)
			}
		}()
		err = st.RunCommit(ctx, &store.CommitParams{Records: recs()})
	}()
	if err == nil && !t.Failed() {
		t.Errorf("RunCommit(records, no run) = nil, want the inner store's error %q", innerErr)
	}
}

// holdingAppend holds the inner LedgerAppend of one run (after the
// decorator has read the head and chained the records) until released.
type holdingAppend struct {
	store.Store
	hold    bool // set before the append to hold
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (h *holdingAppend) LedgerAppend(ctx context.Context, runID string, records []*durable.StepRecord) error {
	if h.hold {
		h.once.Do(func() {
			close(h.entered)
			<-h.release
		})
	}
	return h.Store.LedgerAppend(ctx, runID, records)
}

// A LedgerDelete that lands between an append's head read and its write
// leaves a ledger that still verifies: "no append may put back the head of
// the ledger being deleted" (hashchain's LedgerDelete takes the run's
// stripe). The bug this guards against: without that, the new ledger's
// first record carried the deleted ledger's head as prev_hash, and the
// ledger no longer verified (prev_hash_mismatch at index 0), although
// every record in it was chained by this decorator.
func TestDeleteDuringAppendKeepsChainValid(t *testing.T) {
	ctx := context.Background()
	inner := &holdingAppend{Store: memory.New(), entered: make(chan struct{}), release: make(chan struct{})}
	st := hashchain.Wrap(inner)
	now := durable.NewTime(time.Now())
	rec := func(step string) *durable.StepRecord {
		return &durable.StepRecord{RunID: "run-1", StepID: step, NodeID: "n", Status: durable.StepCompleted,
			StartedAt: now, EndedAt: now, Attempt: 1}
	}
	if err := st.LedgerAppend(ctx, "run-1", []*durable.StepRecord{rec("s1")}); err != nil {
		t.Fatal(err)
	}
	// Now hold the next append after its head read.
	inner.hold = true
	appended := make(chan error, 1)
	go func() { appended <- st.LedgerAppend(ctx, "run-1", []*durable.StepRecord{rec("s2")}) }()
	<-inner.entered
	deleted := make(chan error, 1)
	go func() { _, err := st.LedgerDelete(ctx, "run-1"); deleted <- err }()
	select {
	case err := <-deleted: // the delete did not wait for the append in flight
		if err != nil {
			t.Fatal(err)
		}
		close(inner.release)
		if err := <-appended; err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Second): // it waits: let the append finish first
		close(inner.release)
		if err := <-appended; err != nil {
			t.Fatal(err)
		}
		if err := <-deleted; err != nil {
			t.Fatal(err)
		}
	}
	recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	if rep := hashchain.VerifyLedgerChain(recs); !rep.OK {
		t.Errorf("ledger after a delete raced with an append does not verify: %+v", rep.Errors)
	}
}

// A record whose effect object carries a member a newer writer added (here
// "effect_id") is hashed by Python's verify_ledger_chain over the stored
// dict, member included, and must verify here too. The bug this guards
// against: decodeEffect (durable/effect.go) kept only
// type/payload/result_key, so VerifyLedgerChain recomputed the hash without
// the member and reported a valid chain as tampered (StepRecord keeps
// top-level members of newer writers in Extra so that hashing them works;
// the effect's were lost). The record_hash is compute_record_hash() of the
// line by Python 0.4.28.
const pyEffectExtraLine = `{"run_id": "run-1", "step_id": "s1", "node_id": "n1", "status": "started", "effect": {"type": "llm_call", "payload": {"prompt": "hi"}, "result_key": "x", "effect_id": "e-1"}, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": "k1", "prev_hash": null, "record_hash": "ce422ba2bcf75e90b3dd219057cb6f43587c6d1dec7c652a133cf9c0a5fcbcdb", "signature": null}`

func TestEffectMembersOfNewerWritersVerify(t *testing.T) {
	r, err := durable.UnmarshalRecord([]byte(pyEffectExtraLine))
	if err != nil {
		t.Fatal(err)
	}
	if rep := hashchain.VerifyLedgerChain([]*durable.StepRecord{r}); !rep.OK {
		t.Errorf("a chain Python verifies fails in Go (effect member dropped): %+v", rep.Errors)
	}
}
