package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

func emptyNameRuntime(t *testing.T, wfs ...*runtime.Workflow) *runtime.Runtime {
	t.Helper()
	reg, err := runtime.NewRegistry(wfs...)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// EMIT_EVENT's diagnostics for an event nobody received list the names
// the session's listeners wait on. Python (core/runtime.py
// _handle_emit_event) collects a name only when it is non-empty:
//
//	suffix = wk[len(prefix):]
//	if suffix and suffix not in available_in_session and len(available_in_session) < 15:
//	    available_in_session.append(suffix)
//
// and adds "available_listeners_in_session" only when that list is
// non-empty (spec §3.5 step 2-3: "collect up to 15 distinct suffixes").
// A run waiting on the explicit key "evt:session:S:" (WAIT_EVENT
// payload.wait_key wins as given, spec §3.3) has an empty suffix: Python's
// result for an emit of "other" in session S has no
// available_listeners_in_session key at all; Go's carries [""].
func TestEmitDiagnosticsSkipEmptyListenerName(t *testing.T) {
	listener := &runtime.Workflow{ID: "l", Entry: "w", Nodes: map[string]runtime.NodeFunc{
		"w": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent, ResultKey: "got",
				Payload: map[string]any{"wait_key": "evt:session:S:"}}, "end")
		}),
		"end": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{})
		}),
	}}
	emitter := &runtime.Workflow{ID: "e", Entry: "e", Nodes: map[string]runtime.NodeFunc{
		"e": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectEmitEvent, ResultKey: "emitted",
				Payload: map[string]any{"name": "other"}}, "end")
		}),
		"end": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{})
		}),
	}}
	rt := emptyNameRuntime(t, listener, emitter)
	ctx := context.Background()
	lid, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "l", SessionID: "S"})
	if st, err := rt.Tick(ctx, lid, runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("listener: %v %v", st, err)
	}
	eid, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "e", SessionID: "S"})
	st, err := rt.Tick(ctx, eid, runtime.TickOptions{})
	if err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("emitter: %v %v", st, err)
	}
	res, _ := st.Vars["emitted"].(map[string]any)
	if v, ok := res["available_listeners_in_session"]; ok {
		t.Errorf("emit result has available_listeners_in_session = %#v; Python skips the empty name and leaves the key out", v)
	}
}
