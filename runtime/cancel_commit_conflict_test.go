package runtime_test

import (
	"context"
	"sync"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A Cancel whose commit loses to another writer's (runner b updates the
// limits of the waiting run between runner a's read and its cancelled
// commit: two processes on one store, without claims) is made again on the
// run as that writer left it: the run ends cancelled, b's limits kept, and
// Cancel succeeds. A cancel that gave up on the first conflict (cancelOnce
// taking store.ErrConflict for a failure) would leave the run waiting and
// return the conflict to the caller.
func TestCancelCommitThatConflictsIsMadeAgainOnTheReloadedRun(t *testing.T) {
	ctx := context.Background()
	shared := memory.New()
	as := &afterGetStore{Store: shared}
	a := servingRuntime(t, as, "", askWorkflow())
	b := servingRuntime(t, shared, "", askWorkflow())
	id, err := a.Start(ctx, runtime.StartParams{WorkflowID: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	if run, err := a.Tick(ctx, id, runtime.TickOptions{}); err != nil || run.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %v; want waiting on the ask", run, err)
	}
	var once sync.Once
	updated := false
	as.after = func(ctx context.Context, run *durable.RunState) {
		if run.RunID != id {
			return
		}
		once.Do(func() {
			if err := b.UpdateLimits(ctx, id, map[string]any{"max_iterations": 7}); err != nil {
				t.Errorf("limits update through runner b: %v", err)
				return
			}
			updated = true
		})
	}
	run, err := a.Cancel(ctx, id, "stop")
	if !updated {
		t.Fatal("runner b's update did not land between runner a's read and its commit")
	}
	if err != nil {
		t.Fatalf("Cancel after its commit conflicted: %v; want it made again and succeeding", err)
	}
	limits, _ := run.Vars["_limits"].(map[string]any)
	if run.Status != durable.RunCancelled || run.Error != "stop" || feJSON(limits["max_iterations"]) != "7" {
		t.Fatalf("run %s error %q limits %v; want cancelled with \"stop\" over b's max_iterations 7", run.Status, run.Error, limits)
	}
}
