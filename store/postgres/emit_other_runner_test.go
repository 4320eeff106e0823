package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/postgres"
)

// eventRuntime is a runner on st serving only wf (runners sharing a store
// may each serve some workflows: scheduler.Recover leaves a run of a
// workflow its registry lacks to a runner that has it).
func eventRuntime(t *testing.T, st *postgres.Store, owner string, wf *runtime.Workflow) *runtime.Runtime {
	t.Helper()
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Logger: testLogger(t),
		Claims: &runtime.Claims{Owner: owner, TTL: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// Runner A serves the emitting workflow, runner B the listening one, on
// one database (runners sharing a store may each serve some workflows).
// The listener, ticked by B, waits on the global event "ping"; A's run
// emits it. A's delivery used to skip the listener as
// "workflow_not_registered", and with nothing keeping an undelivered
// event the listener waited for ever. The resume itself (the payload at
// the result key, the run set running at its resume node) needs no
// workflow code: A commits it and leaves the drive to B (its Recover ticks
// running runs of its workflows).
func TestEmitReachesListenerServedByAnotherRunner(t *testing.T) {
	testURL(t)
	t.Parallel()
	schema := testSchema(t)
	aStore, bStore := openSchema(t, schema), openSchema(t, schema)
	node := func(plan runtime.StepPlan) runtime.NodeFunc {
		return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return plan, nil
		}
	}
	a := eventRuntime(t, aStore, "runner-a", &runtime.Workflow{ID: "emitter", Entry: "emit", Nodes: map[string]runtime.NodeFunc{
		"emit": node(runtime.Request(&durable.Effect{Type: durable.EffectEmitEvent,
			Payload: map[string]any{"name": "ping", "scope": "global", "payload": map[string]any{"x": int64(1)}}, ResultKey: "emitted"}, "end")),
		"end": node(runtime.Complete(map[string]any{})),
	}})
	b := eventRuntime(t, bStore, "runner-b", &runtime.Workflow{ID: "listener", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": node(runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent,
			Payload: map[string]any{"name": "ping", "scope": "global"}, ResultKey: "got"}, "end")),
		"end": node(runtime.Complete(map[string]any{})),
	}})
	ctx := t.Context()
	lid, err := b.Start(ctx, runtime.StartParams{WorkflowID: "listener"})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := b.Tick(ctx, lid, runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("listener's first tick: %v, %v; want waiting on the event", st, err)
	}
	eid, err := a.Start(ctx, runtime.StartParams{WorkflowID: "emitter"})
	if err != nil {
		t.Fatal(err)
	}
	est, err := a.Tick(ctx, eid, runtime.TickOptions{})
	if err != nil || est.Status != durable.RunCompleted {
		t.Fatalf("emitter's tick: %v, %v; want completed", est, err)
	}
	t.Logf("emit result: %v", est.Vars["emitted"])
	// Runner B drives what it serves (as its scheduler's Recover would).
	st, err := b.Tick(ctx, lid, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunCompleted {
		t.Fatalf("listener %s is %s (waiting on %v) after runner A emitted its event: the event was lost "+
			"because runner A does not serve the listener's workflow", lid, st.Status, st.Waiting)
	}
}
