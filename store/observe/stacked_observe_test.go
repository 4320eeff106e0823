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
	backend := memory.New()
	inner := observe.Wrap(offload.Wrap(hashchain.Wrap(backend), artifact.NewMemory(), offload.Config{MaxInlineBytes: 64}))
	outer := observe.Wrap(inner)
	sub := outer.Subscribe("run-1", 8)
	defer sub.Cancel()

	now := durable.NewTime(time.Now())
	run := &durable.RunState{RunID: "run-1", WorkflowID: "wf", Status: durable.RunRunning, CurrentNode: "n",
		Vars: map[string]any{}, CreatedAt: now, UpdatedAt: now}
	rec := &durable.StepRecord{RunID: "run-1", StepID: "s1", NodeID: "n", Status: durable.StepCompleted,
		StartedAt: now, EndedAt: now, Attempt: 1, IdempotencyKey: "k1",
		Result: map[string]any{"content": strings.Repeat("x", 500)}}
	if err := outer.RunCommit(ctx, &store.CommitParams{Run: run, Create: true, Records: []*durable.StepRecord{rec}}); err != nil {
		t.Fatal(err)
	}
	stored, err := backend.LedgerList(ctx, &store.LedgerListParams{RunID: "run-1"})
	if err != nil || len(stored) != 1 {
		t.Fatalf("stored %v, %v", stored, err)
	}
	var ev observe.Event
	select {
	case ev = <-sub.C:
	default:
		t.Fatal("the outer follower was not notified")
	}
	if len(ev.Records) != 1 {
		t.Fatalf("notified %d records, want 1", len(ev.Records))
	}
	got := ev.Records[0]
	if !reflect.DeepEqual(got.Result, stored[0].Result) {
		t.Errorf("outer follower's result = %.60v…, stored result = %v (the offloaded ref)", got.Result, stored[0].Result)
	}
	if rep := hashchain.VerifyLedgerChain(ev.Records); !rep.OK {
		t.Errorf("the outer follower's record does not verify against its own record_hash: %+v", rep.Errors)
	}
}

// The same holds for a plain ledger append through both layers.
func TestObserveOverObserveNotifiesAppendedRecordsAsStored(t *testing.T) {
	ctx := context.Background()
	backend := memory.New()
	inner := observe.Wrap(offload.Wrap(hashchain.Wrap(backend), artifact.NewMemory(), offload.Config{MaxInlineBytes: 64}))
	outer := observe.Wrap(inner)
	sub := outer.Subscribe("run-1", 8)
	defer sub.Cancel()

	now := durable.NewTime(time.Now())
	rec := &durable.StepRecord{RunID: "run-1", StepID: "s1", NodeID: "n", Status: durable.StepCompleted,
		StartedAt: now, EndedAt: now, Attempt: 1, IdempotencyKey: "k1",
		Result: map[string]any{"content": strings.Repeat("x", 500)}}
	if err := outer.LedgerAppend(ctx, "run-1", []*durable.StepRecord{rec}); err != nil {
		t.Fatal(err)
	}
	stored, err := backend.LedgerList(ctx, &store.LedgerListParams{RunID: "run-1"})
	if err != nil || len(stored) != 1 {
		t.Fatalf("stored %v, %v", stored, err)
	}
	var ev observe.Event
	select {
	case ev = <-sub.C:
	default:
		t.Fatal("the outer follower was not notified")
	}
	if len(ev.Records) != 1 || !reflect.DeepEqual(ev.Records[0].Result, stored[0].Result) {
		t.Fatalf("outer follower notified %d record(s), first %.60v…; want the stored one, result %v", len(ev.Records), ev.Records, stored[0].Result)
	}
	if rep := hashchain.VerifyLedgerChain(ev.Records); !rep.OK {
		t.Errorf("the outer follower's record does not verify against its own record_hash: %+v", rep.Errors)
	}
}
