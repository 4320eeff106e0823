package runtimetest_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
)

// holdThenEscalate waits an hour (WAIT_UNTIL, relative), then waits for
// an "ack" event until a fixed time 30 minutes after the harness's start
// (WAIT_EVENT with an absolute deadline), then completes with what the
// event wait gave.
func holdThenEscalate() *runtime.Workflow {
	return &runtime.Workflow{ID: "rv_escalate", Entry: "hold", Nodes: map[string]runtime.NodeFunc{
		"hold": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": durable.FormatTime(rc.Now().Add(time.Hour))}, ResultKey: "held"}, "ack"), nil
		},
		"ack": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent,
				Payload: map[string]any{"name": "ack", "until": durable.FormatTime(runtimetest.DefaultStart.Add(90 * time.Minute))}, ResultKey: "ack"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ack": run.Vars["ack"]}), nil
		},
	}}
}

// TestAdvanceReleasesDeadlinesAPassMadeDue: Advance promises the
// runs whose WAIT_UNTIL or WAIT_EVENT deadline has passed are ticked,
// "however many", as the scheduler's loop does at that time, and Pass runs
// "until nothing due is left for it". But Pass repeats only while a poll
// fills a batch: a run its poll released into a wait whose deadline has
// already passed (here a WAIT_EVENT with an absolute deadline) stays
// waiting past its deadline after Advance. The loop, in the same state,
// polls again at once (nextWait is 0: something is due and nothing is
// held) and completes the run.
func TestAdvanceReleasesDeadlinesAPassMadeDue(t *testing.T) {
	t.Parallel()
	h := runtimetest.New(t, runtimetest.Config{Workflows: []*runtime.Workflow{holdThenEscalate()}})
	id, st := h.Run("rv_escalate", nil)
	if st.Status != durable.RunWaiting || st.Waiting.Reason != durable.WaitUntil {
		t.Fatalf("setup: %s %+v", st.Status, st.Waiting)
	}
	h.Advance(2 * time.Hour)
	st = h.State(id)
	if st.Status != durable.RunCompleted {
		t.Fatalf("after Advance(2h) the run is %s waiting %+v at %s; both its deadlines (1h, 1h30) have passed",
			st.Status, st.Waiting, h.Clock.Now())
	}
}

// TestScriptedTypedContainersAreCopied: serve promises a copy of the
// scripted outcome ("as a real handler returns a fresh value each call"),
// but pyjson.Clone copies only map[string]any and []any: a result holding
// a []map[string]any (as a test scripting tool calls writes it) is handed
// out shared, so a node editing its result edits the script for the next run.
func TestScriptedTypedContainersAreCopied(t *testing.T) {
	t.Parallel()
	wf := &runtime.Workflow{ID: "rv_edit_typed", Entry: "llm", Nodes: map[string]runtime.NodeFunc{
		"llm": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall, ResultKey: "r",
				Payload: map[string]any{"prompt": "x"}}, "edit"), nil
		},
		"edit": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			r := run.Vars["r"].(map[string]any)
			var name string
			switch calls := r["tool_calls"].(type) {
			case []map[string]any:
				calls[0]["name"] = calls[0]["name"].(string) + " (edited)"
				name = calls[0]["name"].(string)
			case []any:
				c := calls[0].(map[string]any)
				c["name"] = c["name"].(string) + " (edited)"
				name = c["name"].(string)
			}
			return runtime.Complete(map[string]any{"name": name}), nil
		},
	}}
	h := runtimetest.New(t, runtimetest.Config{Workflows: []*runtime.Workflow{wf}})
	out := runtime.Completed(map[string]any{"tool_calls": []map[string]any{{"name": "search", "arguments": map[string]any{}}}})
	h.Script(durable.EffectLLMCall, out, out)
	for i := range 2 {
		_, st := h.Run("rv_edit_typed", nil)
		if got := st.Output["name"]; got != "search (edited)" {
			t.Fatalf("run %d: output %q, want %q: the scripted outcome was changed by an earlier run", i+1, got, "search (edited)")
		}
	}
}
