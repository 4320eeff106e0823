package runtime_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// infChainListener waits on "ping" (session scope), then runs n nodes.
func infChainListener(id string, n int) *runtime.Workflow {
	wf := &runtime.Workflow{ID: id, Entry: "w", Nodes: map[string]runtime.NodeFunc{
		"w": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent, ResultKey: "got", Payload: map[string]any{"name": "ping"}}, "n0")
		}),
	}}
	for i := 0; i < n; i++ {
		name, next := "n"+string(rune('0'+i)), "n"+string(rune('0'+i+1))
		if i == n-1 {
			wf.Nodes[name] = node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
				return runtime.Complete(map[string]any{"ok": true})
			})
			continue
		}
		wf.Nodes[name] = node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Next(next)
		})
	}
	return wf
}

func infEmitter(id string, payload map[string]any) *runtime.Workflow {
	return &runtime.Workflow{ID: id, Entry: "e", Nodes: map[string]runtime.NodeFunc{
		"e": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectEmitEvent, ResultKey: "emitted", Payload: payload}, "end")
		}),
		"end": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"emitted": run.Vars["emitted"]})
		}),
	}}
}

// EMIT_EVENT max_steps = Infinity (the literal Python's json.dumps writes
// for float("inf"), read back as json.Number("Infinity")): Python's
// _handle_emit_event (core/runtime.py) reads int(inf), which raises
// OverflowError, as 0, so the listener is resumed without a tick and
// recorded {"status": "running"}, not ticked to its end.
func TestEmitMaxStepsInfinityIsZero(t *testing.T) {
	l := infChainListener("l", 5)
	e := infEmitter("e", map[string]any{"name": "ping", "max_steps": json.Number("Infinity")})
	f := setup(t, l, e)
	ctx := context.Background()
	lid, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "l", SessionID: "S"})
	if st, err := f.rt.Tick(ctx, lid, runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("listener: %v %v", st, err)
	}
	eid, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "e", SessionID: "S"})
	st, err := f.rt.Tick(ctx, eid, runtime.TickOptions{})
	if err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("emitter: %v %v", st, err)
	}
	res, _ := st.Output["emitted"].(map[string]any)
	rs, _ := res["resumed"].([]any)
	if len(rs) != 1 {
		t.Fatalf("resumed %#v", res["resumed"])
	}
	if got := rs[0].(map[string]any)["status"]; got != "running" {
		t.Errorf("listener recorded %v, want running (Python: int(inf) raises OverflowError, max_steps = 0)", got)
	}
}

// A WAIT_EVENT timeout_s of 1e400, which Python's json.loads reads as
// inf, waits "forever" as Infinity does (docs/compatibility.md, WAIT_EVENT
// deadline row), rather than failing as not a non-negative number.
func TestWaitEventTimeoutPastFloatRangeWaits(t *testing.T) {
	for _, v := range []any{json.Number("Infinity"), json.Number("1e400")} {
		_, _, st := waitEventFixture(t, map[string]any{"name": "ping", "timeout_s": v})
		if st.Status != durable.RunWaiting {
			t.Errorf("timeout_s %v: run %s (%s), want waiting until ~292 years from now", v, st.Status, st.Error)
		}
	}
}
