package observe_test

import (
	"context"
	"errors"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/store/storetest"
)

// A commit that fails after its records were appended notified nothing,
// and the next tick finds the terminal record already in the ledger and
// appends nothing either: a subscriber was never told of the run's last
// records. The records the store appended (those given a Seq) are now
// notified.
func TestSubscriberSeesTheRecordsOfAHalfFailedCommit(t *testing.T) {
	ctx := context.Background()
	node := func(plan func() runtime.StepPlan) runtime.NodeFunc {
		return func(context.Context, *durable.RunState, *runtime.RunContext) (runtime.StepPlan, error) {
			return plan(), nil
		}
	}
	wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": node(func() runtime.StepPlan { return runtime.Complete(map[string]any{"ok": true}) }),
	}}
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		t.Fatal(err)
	}
	obs := observe.Wrap(&storetest.HalfCommit{Store: memory.New(), FailAt: 1})
	sub := obs.Subscribe("", 64)
	defer sub.Cancel()
	rt, err := runtime.New(runtime.Config{Store: obs, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err == nil {
		t.Fatal("injected failure not returned")
	}
	if st, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("second tick: %v, %v", st, err)
	}
	seen := map[int64]bool{}
	events := 0
	for done := false; !done; {
		select {
		case ev := <-sub.C:
			events++
			for _, r := range ev.Records {
				seen[r.Seq] = true
			}
		default:
			done = true
		}
	}
	recs, err := obs.LedgerList(ctx, &store.LedgerListParams{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if !seen[r.Seq] {
			t.Errorf("ledger record seq %d (%s %s) was never delivered to the subscriber (%d events in all)",
				r.Seq, r.NodeID, r.IdempotencyKey, events)
		}
	}
}

// refusingLedger fails every append without storing anything (a write
// whose answer was lost looks the same: no Seq on the records).
type refusingLedger struct{ store.Store }

func (refusingLedger) LedgerAppend(context.Context, string, []*durable.StepRecord) error {
	return errors.New("connection reset")
}

// TestFailedAppendWakesWithoutRecords: after a write that failed with
// its records left without a Seq, observe notifies no records (only
// those the store appended, given a Seq, are "as stored") but wakes the
// run's followers, since the write may have committed all the same
// (observe.Store.notifyAppended).
func TestFailedAppendWakesWithoutRecords(t *testing.T) {
	t.Parallel()
	obs := observe.Wrap(refusingLedger{memory.New()})
	sub := obs.Subscribe("r", 4)
	defer sub.Cancel()
	if err := obs.LedgerAppend(context.Background(), "r", []*durable.StepRecord{rec("r")}); err == nil {
		t.Fatal("the refused append returned no error")
	}
	select {
	case ev := <-sub.C:
		if ev.RunID != "r" || ev.Records != nil {
			t.Fatalf("event after a failed append = %+v (%d records); want a wake-up of run r without records", ev, len(ev.Records))
		}
	default:
		t.Fatal("no wake-up after an append whose outcome is unknown")
	}
	select {
	case ev := <-sub.C:
		t.Fatalf("second event %+v; want one wake-up", ev)
	default:
	}
}
