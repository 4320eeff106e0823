package visualflow

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// scratchpadSteps runs an agent whose ReAct child leaves steps as the
// steps of one node trace, and returns the agent's scratchpad.steps.
func scratchpadSteps(t *testing.T, steps []any) []any {
	t.Helper()
	react := &runtime.Workflow{ID: "react-steps", Entry: "done", Nodes: map[string]runtime.NodeFunc{
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			rt, _ := run.Vars["_runtime"].(map[string]any)
			rt["node_traces"] = map[string]any{"reason": map[string]any{"node_id": "reason", "steps": steps}}
			return runtime.Complete(map[string]any{"answer": "A", "iterations": int64(1), "messages": []any{}}), nil
		},
	}}
	flow := pinnedAgentFlow(map[string]any{
		"pinDefaults": map[string]any{"prompt": "do it"},
		"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-steps"},
	}, []string{"prompt:string"})
	st := runAgentFlow(t, flow, react, nil, nil)
	tmp, _ := st.Vars["_temp"].(map[string]any)
	agent, _ := tmp["agent"].(map[string]any)
	b, _ := agent["ag"].(map[string]any)
	sp, _ := b["scratchpad"].(map[string]any)
	got, _ := sp["steps"].([]any)
	return got
}

// Spec §5.6 phase "subworkflow": scratchpad.steps = "all node-trace steps
// flattened and sorted by ts". Python (compiler.py
// _create_visual_agent_effect_handler._flatten_node_traces) sorts with
// key str(s.get("ts") or ""), so a step without a ts (or a null ts) sorts
// first (key ""), not last as the text "None" would.
func TestAgentStepsWithoutTsSortFirst(t *testing.T) {
	steps := scratchpadSteps(t, []any{
		map[string]any{"step_id": "with-ts", "ts": "2025-01-01T00:00:00Z"},
		map[string]any{"step_id": "no-ts"},
	})
	var ids []any
	for _, s := range steps {
		m, _ := s.(map[string]any)
		if m["step_id"] == "with-ts" || m["step_id"] == "no-ts" {
			ids = append(ids, m["step_id"])
		}
	}
	if len(ids) != 2 || ids[0] != "no-ts" {
		t.Fatalf("scratchpad.steps order = %v, want [no-ts with-ts] (Python sort key str(ts or \"\"))", ids)
	}
}

// Spec §5.6 scratchpad.steps = node-trace *steps*; Python's
// _flatten_node_traces keeps only dict entries (`if isinstance(s, dict):
// out.append(dict(s))`): a non-object entry of a trace's steps never
// reaches scratchpad.steps.
func TestAgentStepsDropNonObjects(t *testing.T) {
	steps := scratchpadSteps(t, []any{"junk", int64(7)})
	for _, s := range steps {
		if _, ok := s.(map[string]any); !ok {
			t.Fatalf("scratchpad.steps = %s, want only objects (Python drops non-dict steps)", jsonText(t, steps))
		}
	}
}
