package visualflow

import (
	"testing"
)

// settingsAgentFlow is start -> agent -> end like pinnedAgentFlow, but the
// start declares a data output (x), so its bus carries only x and not the
// run's context (§4.3: bus keys fill undeclared inputs such as context).
func settingsAgentFlow(agentData map[string]any, agentIn []string) map[string]any {
	return rsFlow("vfe_settings_agent", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "x:string"}, nil),
		rsNode("ag", "agent", append([]string{"exec-in:exec"}, agentIn...),
			[]string{"exec-out:exec", "response:string", "success:boolean", "meta:object"}, agentData),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "r:string", "ok:boolean"}, nil, nil),
	}, "start.exec-out>ag.exec-in", "ag.exec-out>end.exec-in", "ag.response>end.r", "ag.success>end.ok")
}

// Spec §5.6 "Settings resolution: pin value else agentConfig value"; the
// pin is coerced (§5.6 input normalisation), but the config value is not:
// Python compiler.py _create_visual_agent_effect_handler reads
//
//	include_context_cfg = agent_config.get("include_context")  (None → use_context)
//	include_context = bool(include_context_cfg) if include_context_cfg is not None else False
//
// i.e. Python truthiness (Appendix B: the string "false" is true), so a
// hand-written agentConfig {"include_context": "false"} turns context
// inheritance on. (llm_call's config is coerced, _coerce_bool; only the
// agent reads its checkbox this way.)
func TestAgentConfigIncludeContextIsTruthiness(t *testing.T) {
	flow := settingsAgentFlow(map[string]any{
		"pinDefaults": map[string]any{"prompt": "do it"},
		"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-cfg", "include_context": "false"},
	}, []string{"prompt:string"})
	var seen map[string]any
	react := outputReact("react-cfg", map[string]any{"answer": "A", "iterations": int64(1), "messages": []any{}}, &seen)
	runAgentFlow(t, flow, react, nil, map[string]any{"x": "1", "context": map[string]any{"messages": []any{
		map[string]any{"role": "user", "content": "earlier"},
	}}})
	ctx, _ := seen["context"].(map[string]any)
	msgs, _ := ctx["messages"].([]any)
	if len(msgs) != 1 {
		t.Fatalf("child context.messages = %s; Python bool(\"false\") is True, so the parent history must be inherited", jsonText(t, msgs))
	}
}
