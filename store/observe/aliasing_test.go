package observe_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
)

// TestSubscribersGetTheirOwnRecords: notify makes one set of
// copies and sends the same Event (the same *StepRecord values, the same
// result maps) to every subscription. A follower that adapts the records
// it got (drops a member, rewrites a value before forwarding them) changes
// what every other follower reads, and races with them.
func TestSubscribersGetTheirOwnRecords(t *testing.T) {
	t.Parallel()
	obs := observe.Wrap(memory.New())
	a := obs.Subscribe("r", 4)
	defer a.Cancel()
	b := obs.Subscribe("", 4)
	defer b.Cancel()
	r := rec("r")
	r.Result = map[string]any{"text": "stored"}
	if err := obs.LedgerAppend(context.Background(), "r", []*durable.StepRecord{r}); err != nil {
		t.Fatal(err)
	}
	evA, evB := <-a.C, <-b.C
	evA.Records[0].Result.(map[string]any)["text"] = "changed by follower a"
	evA.Records[0].NodeID = "changed by follower a"
	if got := evB.Records[0].Result.(map[string]any)["text"]; got != "stored" || evB.Records[0].NodeID != r.NodeID {
		t.Fatalf("follower b reads text %v node %q after follower a changed its own event: the records are shared", got, evB.Records[0].NodeID)
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
