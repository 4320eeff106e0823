package observe_test

import (
	"context"
	"errors"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
)

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

// TestEventRecordsAreTheStoredOnes: an event carries the records as
// stored, not the caller's values: a caller that reuses or changes its
// records after the append does not change what subscribers got.
func TestEventRecordsAreTheStoredOnes(t *testing.T) {
	t.Parallel()
	obs := observe.Wrap(memory.New())
	sub := obs.Subscribe("r", 4)
	defer sub.Cancel()
	r := rec("r")
	r.Result = map[string]any{"answer": "stored"}
	if err := obs.LedgerAppend(context.Background(), "r", []*durable.StepRecord{r}); err != nil {
		t.Fatal(err)
	}
	r.NodeID = "changed-after"
	r.Result = map[string]any{"answer": "changed-after"}
	ev := <-sub.C
	if len(ev.Records) != 1 {
		t.Fatalf("event %+v", ev)
	}
	got := ev.Records[0]
	if got.NodeID != "n" || got.Result.(map[string]any)["answer"] != "stored" || got.Seq != 1 {
		t.Fatalf("event record node %q result %v seq %d; want the record as stored (n, stored, 1)", got.NodeID, got.Result, got.Seq)
	}
}
