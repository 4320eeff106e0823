package offload_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// Spec §4.10: "A Go port should notify with the record exactly as stored
// (return it from the inner append)", and §6.1 delivers the record after
// the inner append. In the recommended stack (observe → offload →
// hashchain → backend) the subscriber got the caller's record with the
// stored copy's hashes (offload.copySeq) but the *un-offloaded* result, so
// the notified record neither equalled the stored one nor verified against
// its own record_hash. observe now notifies offload's stored copies
// (store.CopyingWriter).
func TestObserverGetsRecordAsStored(t *testing.T) {
	ctx := context.Background()
	inner, obs, sub := observedOffloadStack(t)
	rec := &durable.StepRecord{RunID: "r", StepID: "s", NodeID: "n", Status: durable.StepCompleted, Attempt: 1,
		Result: map[string]any{"content": strings.Repeat("x", 1000)}}
	if err := obs.LedgerAppend(ctx, "r", []*durable.StepRecord{rec}); err != nil {
		t.Fatal(err)
	}
	stored, err := inner.LedgerList(ctx, &store.LedgerListParams{RunID: "r"})
	if err != nil || len(stored) != 1 {
		t.Fatalf("stored %v, %v", stored, err)
	}
	ev := <-sub.C
	got := ev.Records[0]
	if !reflect.DeepEqual(got.Result, stored[0].Result) {
		t.Errorf("notified result = %.80v…; stored result = %v (the offloaded ref)", got.Result, stored[0].Result)
	}
	if rep := hashchain.VerifyLedgerChain(ev.Records); !rep.OK {
		t.Errorf("the notified record does not verify against its own record_hash: %+v", rep.Errors)
	}
}

// The same through RunCommit: the records a commit stores are notified as
// stored. What would break: RunCommitStored returning the caller's records
// when it committed offloaded copies, so an observer above it is handed
// the un-offloaded result under the stored record's hash.
func TestObserverGetsCommittedRecordAsStored(t *testing.T) {
	ctx := context.Background()
	inner, obs, sub := observedOffloadStack(t)
	run := &durable.RunState{RunID: "r", WorkflowID: "w", Status: durable.RunRunning, Vars: map[string]any{}}
	rec := &durable.StepRecord{RunID: "r", StepID: "s", NodeID: "n", Status: durable.StepCompleted, Attempt: 1,
		Result: map[string]any{"content": strings.Repeat("x", 1000)}}
	if err := obs.RunCommit(ctx, &store.CommitParams{Run: run, Create: true, Records: []*durable.StepRecord{rec}}); err != nil {
		t.Fatal(err)
	}
	stored, err := inner.LedgerList(ctx, &store.LedgerListParams{RunID: "r"})
	if err != nil || len(stored) != 1 {
		t.Fatalf("stored %v, %v", stored, err)
	}
	ev := <-sub.C
	if len(ev.Records) != 1 || !reflect.DeepEqual(ev.Records[0].Result, stored[0].Result) {
		t.Fatalf("notified records %v; want the stored one, result %v (the offloaded ref)", ev.Records, stored[0].Result)
	}
	if rep := hashchain.VerifyLedgerChain(ev.Records); !rep.OK {
		t.Errorf("the notified record does not verify against its own record_hash: %+v", rep.Errors)
	}
}

// observedOffloadStack is the recommended stack (observe → offload →
// hashchain → memory) offloading past 100 bytes, with a subscription to
// run "r" cancelled at the test's end; inner is the backend.
func observedOffloadStack(t *testing.T) (*memory.Store, *observe.Store, *observe.Subscription) {
	t.Helper()
	inner := memory.New()
	obs := observe.Wrap(offload.Wrap(hashchain.Wrap(inner), artifact.NewMemory(), offload.Config{MaxInlineBytes: 100}))
	sub := obs.Subscribe("r", 4)
	t.Cleanup(sub.Cancel)
	return inner, obs, sub
}
