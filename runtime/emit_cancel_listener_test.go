package runtime_test

// Waits and cross-run effects: cancelling an emitter does not cancel the
// effect of a listener its EMIT_EVENT runs inline; the test's comment
// states the rule it checks.

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

func wevNode(fn func(run *durable.RunState) runtime.StepPlan) runtime.NodeFunc {
	return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return fn(run), nil
	}
}

func wevEffect(typ durable.EffectType, payload map[string]any, resultKey, next string) runtime.StepPlan {
	return runtime.Request(&durable.Effect{Type: typ, Payload: payload, ResultKey: resultKey}, next)
}

func wevRuntime(t *testing.T, wfs ...*runtime.Workflow) *runtime.Runtime {
	t.Helper()
	reg, err := runtime.NewRegistry(wfs...)
	if err != nil {
		t.Fatal(err)
	}
	st := memory.New()
	t.Cleanup(func() { _ = st.Close() })
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

func wevStartTick(t *testing.T, rt *runtime.Runtime, p runtime.StartParams) *durable.RunState {
	t.Helper()
	ctx := context.Background()
	id, err := rt.Start(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	st, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Cancel of an emitter reaches a run that is neither the emitter nor one of
// its descendants. EMIT_EVENT with max_steps > 0 ticks each resumed listener
// inline, inside the emitter's effect context; Cancel(emitter) cancels that
// context with cause ErrRunCancelled, the listener's own callHandler reads
// that cause as a cancel of the listener, interrupts the listener's effect in
// flight, records its attempt "cancelled", and the effect is executed a second
// time when the listener is driven on (an LLM or tool call paid or performed
// twice for a run nobody cancelled).
//
// Promise: Cancel's doc comment (runtime/control.go) and docs/compatibility.md
// ("cancel" row): a cancel interrupts the effect in flight of the run and its
// unfinished descendants; compatibility.md ("EMIT_EVENT max_steps" row): each
// listener is resumed and given that many steps, as Python does, where a
// cancel of the emitter never touches a listener.
func TestCancelOfEmitterDoesNotCancelInlineListenerEffect(t *testing.T) {
	ctx := context.Background()
	listener := &runtime.Workflow{ID: "listen", Entry: "w", Nodes: map[string]runtime.NodeFunc{
		"w": wevNode(func(run *durable.RunState) runtime.StepPlan {
			return wevEffect(durable.EffectWaitEvent, map[string]any{"name": "ping"}, "ev", "work")
		}),
		"work": wevNode(func(run *durable.RunState) runtime.StepPlan { return wevEffect("slow", map[string]any{}, "x", "done") }),
		"done": wevNode(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Complete(map[string]any{"x": run.Vars["x"]})
		}),
	}}
	emitter := &runtime.Workflow{ID: "emit", Entry: "e", Nodes: map[string]runtime.NodeFunc{
		"e": wevNode(func(run *durable.RunState) runtime.StepPlan {
			return wevEffect(durable.EffectEmitEvent, map[string]any{"name": "ping", "max_steps": 5}, "r", "done")
		}),
		"done": wevNode(func(run *durable.RunState) runtime.StepPlan { return runtime.Complete(map[string]any{}) }),
	}}
	rt := wevRuntime(t, listener, emitter)

	// The emitter's effect context, to know when the cancel has reached it.
	emitCtx := make(chan context.Context, 1)
	builtinEmit, _ := rt.Handler(durable.EffectEmitEvent)
	rt.SetHandler(durable.EffectEmitEvent, runtime.Handler{Local: builtinEmit.Local,
		Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			emitCtx <- ctx
			return builtinEmit.Func(ctx, req)
		}})
	// The listener's slow effect: completes when released, or gives up when
	// its context is cancelled.
	var mu sync.Mutex
	starts := 0
	slowCtx := make(chan context.Context, 4)
	release := make(chan struct{})
	rt.SetHandler("slow", runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		mu.Lock()
		starts++
		mu.Unlock()
		slowCtx <- ctx
		select {
		case <-ctx.Done():
			return runtime.Outcome{}, ctx.Err()
		case <-release:
			return runtime.Completed(map[string]any{"ok": true}), nil
		}
	}})

	l := wevStartTick(t, rt, runtime.StartParams{WorkflowID: "listen", SessionID: "s"})
	if l.Status != durable.RunWaiting {
		t.Fatalf("listener: %s", l.Status)
	}
	eid, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "emit", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	tickDone := make(chan error, 1)
	go func() { _, err := rt.Tick(ctx, eid, runtime.TickOptions{}); tickDone <- err }()
	ectx := <-emitCtx
	lctx := <-slowCtx // the listener's effect runs inline, inside the emitter's
	cancelDone := make(chan error, 1)
	go func() { _, err := rt.Cancel(ctx, eid, "stop the emitter"); cancelDone <- err }()
	select {
	case <-ectx.Done(): // the cancel reached the emitter's effect
	case <-time.After(3 * time.Second):
		t.Fatal("Cancel never reached the emitter's effect")
	}
	listenerInterrupted := lctx.Err() != nil
	close(release)
	if err := <-cancelDone; err != nil {
		t.Fatal(err)
	}
	if err := <-tickDone; err != nil {
		t.Fatal(err)
	}

	if es, _ := rt.GetState(ctx, eid); es.Status != durable.RunCancelled {
		t.Fatalf("emitter %s, want cancelled", es.Status)
	}
	recs, err := rt.GetLedger(ctx, l.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var cancelledAttempts int
	for _, r := range recs {
		if r.Status == durable.StepCancelled {
			cancelledAttempts++
		}
	}
	mu.Lock()
	n := starts
	mu.Unlock()
	if listenerInterrupted || cancelledAttempts > 0 || n != 1 {
		t.Fatalf("Cancel of emitter %s interrupted the effect of listener %s, which is neither the emitter nor its "+
			"descendant (listener effect context cancelled: %v; listener attempts recorded cancelled: %d; "+
			"listener effect executed %d times, want 1)", eid, l.RunID, listenerInterrupted, cancelledAttempts, n)
	}
}
