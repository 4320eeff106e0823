package runtime_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestFollowUpRetriesFollowTheRuntimeClock: the back-off of a kept
// follow-up was timed by time.Now (followretry.go), not by Config.Clock as
// every other deadline of the runtime and the scheduler is. A runtime on a
// fake clock (runtime/runtimetest) advanced an hour still found the retry
// not due, so a harness pass could not release it.
func TestFollowUpRetriesFollowTheRuntimeClock(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	st := &failTerminalOnce{Wrapper: store.Wrapper{Store: memory.New()}, wf: "child"}
	parent := &runtime.Workflow{ID: "parent", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
				Payload: map[string]any{"workflow_id": "child", "async": true, "wait": true}}, "after"), nil
		},
		"after": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"child": run.Vars["sub"]}), nil
		},
	}}
	child := &runtime.Workflow{ID: "child", Entry: "c", Nodes: map[string]runtime.NodeFunc{
		"c": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	reg, _ := runtime.NewRegistry(parent, child)
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "parent"})
	if p, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || p.Status != durable.RunWaiting || rt.PendingFollowUps() != 1 {
		t.Fatalf("setup: tick err %v, %d follow-ups kept", err, rt.PendingFollowUps())
	}
	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	if n := rt.RetryFollowUps(ctx); n != 1 {
		t.Fatalf("RetryFollowUps drove %d follow-ups an hour (by the runtime's clock) after one failed, want 1", n)
	}
	if p, _ := rt.GetState(ctx, id); p.Status != durable.RunCompleted {
		t.Fatalf("parent %s after the retry, want completed", p.Status)
	}
}
