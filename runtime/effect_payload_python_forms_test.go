package runtime_test

// Payload texts of the built-in effects read as the Python kernel
// (abstractruntime/core/runtime.py 0.4.28) reads them.

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// EMIT_EVENT reads max_steps as Python's int(payload.get("max_steps", 0)
// or 0) (_handle_emit_event): "1_0" is 10 and "٥" (Arabic-Indic five) is
// 5, so the listeners are resumed with that many steps and `resumed`
// reports their status after them (as
// TestDiffMemEmitEventResumedStatusAfterMaxSteps shows for 5), not
// "running" as with no steps.
func TestEmitEventMaxStepsReadsPythonIntText(t *testing.T) {
	want := map[string]string{"L1": "completed", "L2": "completed", "L3": "waiting"}
	for _, ms := range []string{"1_0", "٥"} {
		r := emitScenario(t, map[string]any{"name": "ping", "session_id": "s2", "payload": map[string]any{"x": 1}, "max_steps": ms})
		resumed, _ := r["resumed"].([]any)
		if len(resumed) != 3 {
			t.Fatalf("max_steps %q: resumed %v", ms, r["resumed"])
		}
		for _, x := range resumed {
			m := x.(map[string]any)
			if id := m["run_id"].(string); m["status"] != want[id] {
				t.Errorf("max_steps %q: resumed %s status %q; Python (int(%q) steps): %q", ms, id, m["status"], ms, want[id])
			}
		}
	}
}

// A WAIT_UNTIL whose offset is ±00:00:00.f is UTC, as Python 3.11's
// datetime.fromisoformat reads it (a zero whole-second offset drops its
// fraction: "2030-01-01T00:00:00-00:00:00.5" is midnight UTC), so at
// 00:00:00.2 it is due at once, where applying the half second would
// make the run wait.
func TestWaitUntilZeroOffsetFractionIsUTC(t *testing.T) {
	until := "2030-01-01T00:00:00-00:00:00.5"
	wf := &runtime.Workflow{ID: "w", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil, Payload: map[string]any{"until": until}, ResultKey: "r"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"r": run.Vars["r"]})
		}),
	}}
	f := setup(t, wf)
	f.now = time.Date(2030, 1, 1, 0, 0, 0, 200_000_000, time.UTC)
	ctx := context.Background()
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunCompleted {
		var u any
		if st.Waiting != nil {
			u = st.Waiting.Until.String()
		}
		t.Fatalf("WAIT_UNTIL %q at 00:00:00.2: status %s (deadline %v); Python: completed at once (the offset is UTC)", until, st.Status, u)
	}
}
