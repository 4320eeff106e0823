package observe_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// stackedObserve is observe → observe → offload → hash chain → memory:
// the memory backend, the outer observe.Store, and a subscription to its
// run "run-1".
func stackedObserve(t *testing.T) (*memory.Store, *observe.Store, *observe.Subscription) {
	t.Helper()
	backend := memory.New()
	inner := observe.Wrap(offload.Wrap(hashchain.Wrap(backend), artifact.NewMemory(), offload.Config{MaxInlineBytes: 64}))
	outer := observe.Wrap(inner)
	sub := outer.Subscribe("run-1", 8)
	t.Cleanup(sub.Cancel)
	return backend, outer, sub
}

// bigRecord is a step record of run "run-1" whose result offload moves out.
func bigRecord(now durable.Time) *durable.StepRecord {
	return &durable.StepRecord{RunID: "run-1", StepID: "s1", NodeID: "n", Status: durable.StepCompleted,
		StartedAt: now, EndedAt: now, Attempt: 1, IdempotencyKey: "k1",
		Result: map[string]any{"content": strings.Repeat("x", 500)}}
}

// storedAndNotified returns run-1's one record as backend stored it and
// the event sub was notified of it.
func storedAndNotified(t *testing.T, backend *memory.Store, sub *observe.Subscription) (*durable.StepRecord, observe.Event) {
	t.Helper()
	stored, err := backend.LedgerList(context.Background(), &store.LedgerListParams{RunID: "run-1"})
	if err != nil || len(stored) != 1 {
		t.Fatalf("stored %v, %v", stored, err)
	}
	select {
	case ev := <-sub.C:
		return stored[0], ev
	default:
		t.Fatal("the outer follower was not notified")
	}
	return nil, observe.Event{}
}

// observe promises to notify the records exactly as stored (hashes and
// sequence numbers included; spec §4.10), and gets them from the store
// below through store.CopyingWriter. An observe.Store stacked over another
// (observe → observe → offload → hash chain → backend: a command that
// wraps the store it is handed for its own live output, as bundle run does
// with observe.Wrap(ds.st)) must get them from the inner one too: not the
// caller's un-offloaded records carrying the record_hash of the offloaded
// copy, which do not verify against their own hash.
func TestObserveOverObserveNotifiesRecordsAsStored(t *testing.T) {
	ctx := context.Background()
	backend, outer, sub := stackedObserve(t)

	now := durable.NewTime(time.Now())
	run := &durable.RunState{RunID: "run-1", WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "n",
		Vars: map[string]any{}, CreatedAt: now, UpdatedAt: now}
	rec := bigRecord(now)
	if err := outer.RunCommit(ctx, &store.CommitParams{Run: run, Create: true, Records: []*durable.StepRecord{rec}}); err != nil {
		t.Fatal(err)
	}
	stored, ev := storedAndNotified(t, backend, sub)
	if len(ev.Records) != 1 {
		t.Fatalf("notified %d records, want 1", len(ev.Records))
	}
	got := ev.Records[0]
	if !reflect.DeepEqual(got.Result, stored.Result) {
		t.Errorf("outer follower's result = %.60v…, stored result = %v (the offloaded ref)", got.Result, stored.Result)
	}
	if rep := hashchain.VerifyLedgerChain(ev.Records); !rep.OK {
		t.Errorf("the outer follower's record does not verify against its own record_hash: %+v", rep.Errors)
	}
}

// The same holds for a plain ledger append through both layers.
func TestObserveOverObserveNotifiesAppendedRecordsAsStored(t *testing.T) {
	ctx := context.Background()
	backend, outer, sub := stackedObserve(t)

	now := durable.NewTime(time.Now())
	rec := bigRecord(now)
	if err := outer.LedgerAppend(ctx, "run-1", []*durable.StepRecord{rec}); err != nil {
		t.Fatal(err)
	}
	stored, ev := storedAndNotified(t, backend, sub)
	if len(ev.Records) != 1 || !reflect.DeepEqual(ev.Records[0].Result, stored.Result) {
		t.Fatalf("outer follower notified %d record(s), first %.60v…; want the stored one, result %v", len(ev.Records), ev.Records, stored.Result)
	}
	if rep := hashchain.VerifyLedgerChain(ev.Records); !rep.OK {
		t.Errorf("the outer follower's record does not verify against its own record_hash: %+v", rep.Errors)
	}
}
