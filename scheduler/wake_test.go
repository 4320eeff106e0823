package scheduler_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// A WakeStore between an observer and an offloading store passed the
// records on through store.Wrapper, which is no CopyingWriter: the
// observer then notified the caller's records (the large value inline)
// instead of the stored ones (a ref in its place). It now passes the
// stored records on, for commits and appends.
func TestWakeStorePassesStoredRecordsOn(t *testing.T) {
	ctx := context.Background()
	inner := memory.New()
	obs := observe.Wrap(scheduler.NewWakeStore(offload.Wrap(inner, artifact.NewMemory(), offload.Config{MaxInlineBytes: 100})))
	sub := obs.Subscribe("r", 4)
	defer sub.Cancel()
	big := map[string]any{"content": strings.Repeat("x", 1000)}
	run := &durable.RunState{RunID: "r", WorkflowID: "wf", Status: durable.RunRunning, Vars: map[string]any{}}
	recs := []*durable.StepRecord{{RunID: "r", StepID: "s1", NodeID: "n", Status: durable.StepCompleted, Attempt: 1, Result: big}}
	if err := obs.RunCommit(ctx, &store.CommitParams{Run: run, Create: true, Records: recs}); err != nil {
		t.Fatal(err)
	}
	if err := obs.LedgerAppend(ctx, "r", []*durable.StepRecord{{RunID: "r", StepID: "s2", NodeID: "n", Status: durable.StepCompleted, Attempt: 1, Result: big}}); err != nil {
		t.Fatal(err)
	}
	stored, err := inner.LedgerList(ctx, &store.LedgerListParams{RunID: "r"})
	if err != nil || len(stored) != 2 {
		t.Fatalf("stored %v, %v", stored, err)
	}
	for i := range 2 {
		ev := <-sub.C
		if got := ev.Records[0].Result; !reflect.DeepEqual(got, stored[i].Result) {
			t.Errorf("record %d notified with result %.60v…, stored %v (the ref)", i+1, got, stored[i].Result)
		}
	}
}
