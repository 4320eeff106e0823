package runtimetest_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
)

// askThenSpin asks the user, then takes more steps than one tick's
// budget (100) before it completes.
func askThenSpin(steps int) *runtime.Workflow {
	return &runtime.Workflow{ID: "ask_spin", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "go?"}, ResultKey: "answer"}, "spin"), nil
		},
		"spin": spinNode(steps, func(n int64) runtime.StepPlan { return runtime.Complete(map[string]any{"n": n}) }),
	}}
}

// spinNode takes steps steps, counting them in the run's var n, then
// goes on as then says for that count.
func spinNode(steps int, then func(n int64) runtime.StepPlan) runtime.NodeFunc {
	return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		n, _ := runtime.AsInt(run.Vars["n"])
		if n >= int64(steps) {
			return then(n), nil
		}
		run.Vars["n"] = n + 1
		return runtime.Next("spin"), nil
	}
}

// TestAdvanceDrivesOnARunRespondLeftRunning: Respond, like
// scheduler.Scheduled.Respond, resumes a run within one tick's step
// budget; a run that used it is left running and no longer due. The
// harness hands it to its scheduler (Scheduler.DriveSoon), so the next
// Advance drives it on, as a host's scheduler does.
func TestAdvanceDrivesOnARunRespondLeftRunning(t *testing.T) {
	t.Parallel()
	h := runtimetest.New(t, runtimetest.Config{Workflows: []*runtime.Workflow{askThenSpin(150)}})
	id, st := h.Run("ask_spin", nil)
	if st.Status != durable.RunWaiting {
		t.Fatalf("setup: %s, want waiting for the user", st.Status)
	}
	st = h.Respond(id, map[string]any{"text": "yes"})
	if st.Status != durable.RunRunning {
		t.Fatalf("setup: after Respond the run is %s, want running (step budget used)", st.Status)
	}
	h.Advance(time.Second)
	st = h.State(id)
	if st.Status != durable.RunCompleted {
		n, _ := runtime.AsInt(st.Vars["n"])
		t.Fatalf("after Respond and Advance the run is %s at step %d; "+
			"a host's scheduler (Scheduled.Respond → DriveSoon) drives on a run a Respond left running", st.Status, n)
	}
}

// TestAdvanceDrivesOnARunRunLeftRunning: the same for Run (start and
// tick), like scheduler.Scheduled.Run.
func TestAdvanceDrivesOnARunRunLeftRunning(t *testing.T) {
	t.Parallel()
	spin := askThenSpin(150)
	spin.Entry = "spin"
	h := runtimetest.New(t, runtimetest.Config{Workflows: []*runtime.Workflow{spin}})
	id, st := h.Run("ask_spin", nil)
	if st.Status != durable.RunRunning {
		t.Fatalf("setup: after Run the run is %s, want running (step budget used)", st.Status)
	}
	h.Advance(time.Second)
	h.RequireStatus(id, durable.RunCompleted)
}
