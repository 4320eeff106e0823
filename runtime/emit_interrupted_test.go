package runtime_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// cancelOnListenerResume cancels the caller's context once a listener's
// resume is committed (when armed), as a host's request context ends
// while EmitEvent is delivering (a client that went away).
type cancelOnListenerResume struct {
	store.Wrapper
	cancel context.CancelFunc
	armed  atomic.Bool
}

func (s *cancelOnListenerResume) RunCommit(ctx context.Context, p *store.CommitParams) error {
	err := s.Wrapper.RunCommit(ctx, p)
	if err == nil && !p.Create && p.Run != nil && p.Run.Status == durable.RunRunning &&
		p.Run.WorkflowID == "listener" && s.armed.CompareAndSwap(true, false) {
		s.cancel()
	}
	return err
}

// emitListeners starts three runs waiting on the session event "go" in
// a runtime on st.
func emitListeners(t *testing.T, st store.Store) (*runtime.Runtime, []string) {
	t.Helper()
	wf := &runtime.Workflow{ID: "listener", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent,
				Payload: map[string]any{"name": "go", "session_id": "s1"}, ResultKey: "evt"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"evt": run.Vars["evt"]})
		}),
	}}
	reg, _ := runtime.NewRegistry(wf)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var ids []string
	for range 3 {
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "listener", SessionID: "s1"})
		if err != nil {
			t.Fatal(err)
		}
		if w, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || w.Status != durable.RunWaiting {
			t.Fatalf("listener %s: %v %v", id, w, err)
		}
		ids = append(ids, id)
	}
	return rt, ids
}

// waitingAmong returns the runs of ids still waiting.
func waitingAmong(t *testing.T, rt *runtime.Runtime, ids []string) []string {
	t.Helper()
	var out []string
	for _, id := range ids {
		if got, _ := rt.GetState(context.Background(), id); got.Status == durable.RunWaiting {
			out = append(out, id)
		}
	}
	return out
}

// EmitEvent stops delivering when its context ends. Nothing keeps the
// event for the listeners it did not reach, so it must not report
// success: it returns the ids it delivered to and an error that wraps the
// context's cause and says how many listeners were not reached (the host
// may emit again; delivery is at-least-once, spec §3.5).
func TestEmitEventInterruptedReportsListenersNotReached(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := &cancelOnListenerResume{Wrapper: store.Wrapper{Store: memory.New()}, cancel: cancel}
	rt, ids := emitListeners(t, st)
	st.armed.Store(true)
	delivered, err := rt.EmitEvent(ctx, runtime.EmitParams{Name: "go", SessionID: "s1"})
	left := waitingAmong(t, rt, ids)
	if len(delivered) != 1 || len(left) != 2 {
		t.Fatalf("delivered to %v, still waiting %v; want one delivery before the context ended", delivered, left)
	}
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "2 listener(s) not reached") {
		t.Fatalf("EmitEvent error %v; want the interruption (context.Canceled) naming 2 listeners not reached", err)
	}
	for _, id := range left {
		if !strings.Contains(err.Error(), id) {
			t.Errorf("error %q does not name listener %s", err, id)
		}
	}
}

// A context already ended reaches no listener: an error, not an empty
// success (the memory store lists runs whatever the context).
func TestEmitEventWithEndedContextReportsEveryListener(t *testing.T) {
	rt, ids := emitListeners(t, memory.New())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	delivered, err := rt.EmitEvent(ctx, runtime.EmitParams{Name: "go", SessionID: "s1"})
	if len(delivered) != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("EmitEvent = %v, %v; want no delivery and context.Canceled", delivered, err)
	}
	if left := waitingAmong(t, rt, ids); len(left) != 3 {
		t.Fatalf("still waiting %v; want all three", left)
	}
}
