package runtime_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// TestWaitEventWithNaNTimeoutFailsTheRun pins the refusal of a
// WAIT_EVENT timeout_s that is NaN. JSON text from Python may hold the
// literal NaN (json.Number "NaN" here), which compares false with
// everything: a check written as secs < 0 lets it through, and the wait
// gets a deadline about 292 years away, a wait that silently never times
// out. It must fail the run as any other timeout that is not a
// non-negative number (Python's timedelta(seconds=nan) raises too).
func TestWaitEventWithNaNTimeoutFailsTheRun(t *testing.T) {
	t.Parallel()
	f := setup(t, &runtime.Workflow{ID: "nan_wait", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent,
				Payload: map[string]any{"name": "ping", "timeout_s": json.Number("NaN")}, ResultKey: "evt"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"ok": true})
		}),
	}})
	ctx := context.Background()
	id, err := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "nan_wait"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunFailed || !strings.Contains(st.Error, "timeout_s must be a non-negative number") {
		until := ""
		if st.Waiting != nil {
			until = st.Waiting.Until.String()
		}
		t.Fatalf("WAIT_EVENT with timeout_s NaN: run %s (error %q, deadline %q); want it failed, timeout_s not a non-negative number",
			st.Status, st.Error, until)
	}
}
