package postgres_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// TestDeadHolderDueRunTwoTickers: a run waits until a deadline that
// has passed; its claim is held by a dead owner (long TTL). Two runners
// (two pools) list it as due and tick it at once, repeatedly. The run
// must be taken over (not stuck for the TTL), and the effect after the
// wait must run exactly once.
func TestDeadHolderDueRunTwoTickers(t *testing.T) {
	testURL(t)
	rs := openRunners(t, 2)
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	var calls atomic.Int32
	until := time.Now().UTC().Add(400 * time.Millisecond).Format(time.RFC3339Nano)
	wf := &runtime.Workflow{ID: "due-effect", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": until}}, "call"), nil
		},
		"call": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": "x"},
				ResultKey: "r"}, ""), nil
		},
	}}
	newRT := func(st store.Store, owner string) *runtime.Runtime {
		reg, err := runtime.NewRegistry(wf)
		if err != nil {
			t.Fatal(err)
		}
		rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Logger: testLogger(t),
			Claims: &runtime.Claims{Owner: owner, TTL: time.Minute},
			Handlers: map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
				calls.Add(1)
				time.Sleep(100 * time.Millisecond)
				return runtime.Completed(map[string]any{"text": "ok"}), nil
			}}}})
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	a, b := newRT(rs[0], "runner-a"), newRT(rs[1], "runner-b")
	// A third runner starts the run, it waits, then "dies" holding its claim.
	dead := newRT(rs[0], "runner-dead")
	id, err := dead.Start(ctx, runtime.StartParams{WorkflowID: "due-effect"})
	if err != nil {
		t.Fatal(err)
	}
	run, err := dead.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || run.Status != durable.RunWaiting {
		t.Fatalf("started run: %+v, %v; want it waiting", run, err)
	}
	if err := rs[0].RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "runner-dead", TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	due, err := rs[1].RunListDue(ctx, &store.RunListDueParams{Now: time.Now()})
	if err != nil || len(due) != 1 {
		t.Fatalf("due = %v, %v", due, err)
	}
	var wg sync.WaitGroup
	for _, rt := range []*runtime.Runtime{a, b} {
		wg.Go(func() {
			for range 3 {
				_, _ = rt.Tick(ctx, id, runtime.TickOptions{})
			}
		})
	}
	wg.Wait()
	run, err = rs[1].RunGet(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != durable.RunCompleted {
		t.Errorf("run is %s after both runners ticked it; want completed (taken over from the dead holder)", run.Status)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("effect ran %d times; want 1", n)
	}
}
