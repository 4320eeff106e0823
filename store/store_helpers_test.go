package store_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// scanOnlyLedger is a LedgerStore without the LedgerFinder fast path, so
// FindCompleted reads its ledger.
type scanOnlyLedger struct {
	store.LedgerStore
	recs []*durable.StepRecord
}

func (l scanOnlyLedger) LedgerList(ctx context.Context, p *store.LedgerListParams) ([]*durable.StepRecord, error) {
	return l.recs, nil
}

// TestFindCompletedEmptyKeyFindsNothingWhenScanning guards "An empty key
// names no effect: nil, whatever the store": a completed record without an
// idempotency key is not found by the empty key on a store without the
// fast path.
func TestFindCompletedEmptyKeyFindsNothingWhenScanning(t *testing.T) {
	t.Parallel()
	l := scanOnlyLedger{recs: []*durable.StepRecord{
		{RunID: "r1", StepID: "s1", NodeID: "n", Status: durable.StepCompleted, Seq: 1},
	}}
	got, err := store.FindCompleted(t.Context(), l, "r1", "")
	if err != nil || got != nil {
		t.Errorf("FindCompleted with an empty key = %+v, %v; want nil, nil", got, err)
	}
}

// TestFindCompletedScanSkipsRecordsNotCompleted: the scanning path returns
// the first COMPLETED record with the key, not a started or failed one
// that carries the same key.
func TestFindCompletedScanSkipsRecordsNotCompleted(t *testing.T) {
	t.Parallel()
	l := scanOnlyLedger{recs: []*durable.StepRecord{
		{RunID: "r1", StepID: "s1", NodeID: "n", Status: durable.StepStarted, IdempotencyKey: "k", Seq: 1},
		{RunID: "r1", StepID: "s2", NodeID: "n", Status: durable.StepFailed, IdempotencyKey: "k", Seq: 2},
		{RunID: "r1", StepID: "s3", NodeID: "n", Status: durable.StepCompleted, IdempotencyKey: "k", Seq: 3},
	}}
	got, err := store.FindCompleted(t.Context(), l, "r1", "k")
	if err != nil || got == nil || got.Seq != 3 {
		t.Errorf("FindCompleted = %+v, %v; want the completed record (seq 3)", got, err)
	}
}

// TestIsAtomicOfWrapperFollowsTheWrappedStore: a Wrapper always has an
// AtomicCommit method, so IsAtomic must use its answer: a wrapped
// non-atomic store stays non-atomic (else the kernel would skip its replay
// checks on a store that can half-commit).
func TestIsAtomicOfWrapperFollowsTheWrappedStore(t *testing.T) {
	t.Parallel()
	nonAtomic := struct{ store.Store }{memory.New()} // hides AtomicCommit
	if store.IsAtomic(nonAtomic) {
		t.Fatal("precondition: the bare store is atomic")
	}
	if store.IsAtomic(store.Wrapper{Store: nonAtomic}) {
		t.Error("IsAtomic(Wrapper of a non-atomic store) = true, want false")
	}
	if !store.IsAtomic(store.Wrapper{Store: memory.New()}) {
		t.Error("IsAtomic(Wrapper of the memory store) = false, want true")
	}
}
