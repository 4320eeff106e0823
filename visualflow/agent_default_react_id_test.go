package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// Spec §5.6: without agentConfig._react_workflow_id the agent starts
// visual_react_agent_<sanitize(flowId)>_<sanitize(nodeId)>. Python's
// _sanitize (visualflow_compiler/visual/agent_ids.py) strips the id
// before replacing unsafe runs, so a flow whose id carries a trailing
// space ("agent flow ") starts "visual_react_agent_agent_flow_ag" — the
// workflow a Python host registers for it.
func TestAgentDefaultReactIDStripsFlowID(t *testing.T) {
	flow := rsFlow("agent flow ", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("ag", "agent", []string{"exec-in:exec", "prompt:string"},
			[]string{"exec-out:exec", "response:string", "success:boolean", "meta:object"},
			map[string]any{"pinDefaults": map[string]any{"prompt": "do it"}, "agentConfig": map[string]any{"provider": "p", "model": "m"}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "r:string"}, nil, nil),
	}, "start.exec-out>ag.exec-in", "ag.exec-out>end.exec-in", "ag.response>end.r")
	var seen map[string]any
	react := outputReact("visual_react_agent_agent_flow_ag", map[string]any{"answer": "A", "iterations": int64(1), "messages": []any{}}, &seen)
	st := tickAgentFlow(t, flow, react, nil, nil)
	if st.Status != durable.RunCompleted || seen == nil {
		t.Fatalf("status %s (%s), child ran %v; want the agent to start visual_react_agent_agent_flow_ag", st.Status, st.Error, seen != nil)
	}
	if st.Output["r"] != "A" {
		t.Fatalf("response = %v, want A", st.Output["r"])
	}
}

// Spec §5.6: sanitize replaces each *run* of characters outside
// [A-Za-z0-9_-] by one "_" (Python agent_ids.py _SAFE_ID_RE), so flow
// "a b@1.0" / node "n:1" start "visual_react_agent_a_b_1_0_n_1".
func TestAgentDefaultReactIDSanitizesRuns(t *testing.T) {
	flow := rsFlow("a  b@1.0", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("n:1", "agent", []string{"exec-in:exec", "prompt:string"},
			[]string{"exec-out:exec", "response:string"},
			map[string]any{"pinDefaults": map[string]any{"prompt": "do it"}, "agentConfig": map[string]any{"provider": "p", "model": "m"}}),
	}, "start.exec-out>n:1.exec-in")
	var seen map[string]any
	react := outputReact("visual_react_agent_a_b_1_0_n_1", map[string]any{"answer": "A"}, &seen)
	st := tickAgentFlow(t, flow, react, nil, nil)
	if st.Status != durable.RunCompleted || seen == nil {
		t.Fatalf("status %s (%s), child ran %v; want visual_react_agent_a_b_1_0_n_1", st.Status, st.Error, seen != nil)
	}
}
