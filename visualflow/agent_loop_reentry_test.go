package visualflow

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// An agent re-entered after phase "done" (here by a loop) starts from a
// fresh bucket (spec §5.6 "On entry"): nothing of the earlier pass leaks
// into the next one's pins, so a second child that reports no iterations
// gives a meta without the first child's iterations.
func TestAgentReenteredInLoopStartsFromFreshBucket(t *testing.T) {
	fx := rsNode("fx", "agent", []string{"exec-in:exec", "prompt:string"}, []string{"exec-out:exec", "response:string", "meta:object"},
		map[string]any{"pinDefaults": map[string]any{"prompt": "task"},
			"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-loop"}})
	runs := 0
	react := &runtime.Workflow{ID: "react-loop", Entry: "done", Nodes: map[string]runtime.NodeFunc{
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			runs++
			if runs == 1 {
				return runtime.Complete(map[string]any{"answer": "a1", "iterations": int64(3)}), nil
			}
			return runtime.Complete(map[string]any{"answer": "a2"}), nil
		},
	}}
	st := runAgentFlow(t, loopFlow("loop_agent", fx, "meta", nil), react, nil,
		map[string]any{"items": []any{1, 2}, "acc": []any{}})
	acc, _ := st.Output["acc"].([]any)
	if len(acc) != 2 {
		t.Fatalf("acc = %s, want the meta of each of the 2 passes", jsonText(t, st.Output["acc"]))
	}
	first, _ := acc[0].(map[string]any)
	second, _ := acc[1].(map[string]any)
	if jsonText(t, first["iterations"]) != "3" {
		t.Errorf("first pass meta.iterations = %s, want 3", jsonText(t, first["iterations"]))
	}
	if v, has := second["iterations"]; has {
		t.Errorf("second pass meta.iterations = %s, want absent (the child reported none; the first pass's bucket must be cleared)", jsonText(t, v))
	}
}
