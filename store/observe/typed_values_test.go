package observe_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
)

// TestEventRecordsDoNotShareTypedContainers: observe promises events
// carry "the records exactly as stored" and that a caller that changes its
// records after the append "does not change what subscribers got"
// (TestEventRecordsAreTheStoredOnes). notify copies records with
// StepRecord.Clone, whose pyjson.Clone copies only map[string]any and
// []any: a typed Go container in a result ([]string, map[string]string,
// which the stores accept and encode as JSON lists and objects) is shared
// between the caller and every subscriber. A caller that reuses its slice
// after the append changes the event a subscriber reads (and races with
// it), and the event does not hold what the ledger holds.
func TestEventRecordsDoNotShareTypedContainers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	obs := observe.Wrap(memory.New())
	sub := obs.Subscribe("r", 4)
	defer sub.Cancel()
	tags := []string{"stored"}
	r := rec("r")
	r.Result = map[string]any{"tags": tags}
	if err := obs.LedgerAppend(ctx, "r", []*durable.StepRecord{r}); err != nil {
		t.Fatal(err)
	}
	tags[0] = "changed-after" // the caller reuses its buffer
	ev := <-sub.C
	if len(ev.Records) != 1 {
		t.Fatalf("event %+v", ev)
	}
	stored, err := obs.LedgerList(ctx, &store.LedgerListParams{RunID: "r"})
	if err != nil || len(stored) != 1 {
		t.Fatalf("ledger %v, %v", stored, err)
	}
	want := stored[0].Result.(map[string]any)["tags"].([]any)[0]
	var got any
	switch v := ev.Records[0].Result.(map[string]any)["tags"].(type) {
	case []any:
		got = v[0]
	case []string:
		got = v[0]
	}
	if got != want {
		t.Fatalf("event record tags[0] = %v (%T), the ledger holds %v: the event shares the caller's slice",
			got, ev.Records[0].Result.(map[string]any)["tags"], want)
	}
}
