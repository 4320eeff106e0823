package visualflow

import "testing"

// subflowParentFlow is start (pin session_id) → subflow "child" with the
// given extra input pins, pinDefaults and effectConfig (JSON fragments).
func subflowParentFlow(inputs, defaults, effectConfig string) string {
	return `{"id": "parent", "entryNode": "start", "nodes": [
	  {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}, {"id": "session_id", "type": "string"}]}},
	  {"id": "sub", "type": "subflow", "data": {"subflowId": "child", "pinDefaults": {` + defaults + `}, "effectConfig": {` + effectConfig + `},
	    "inputs": [{"id": "exec-in", "type": "execution"}` + inputs + `],
	    "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "output", "type": "any"}]}}
	],
	"edges": [{"source": "start", "sourceHandle": "exec-out", "target": "sub", "targetHandle": "exec-in"}]}`
}

// TestSubflow_SessionTakesFirstPresentKey: the child session comes from the
// first present of child_session_id, childSessionId, session_id,
// sessionId (spec §5.5; executor._create_subflow_effect_builder) and is
// used only when it is a non-blank string. A declared child_session_id pin
// holding "" (its editor default) means "no override": the child stays in
// the parent's session rather than taking the session_id on the bus.
func TestSubflow_SessionTakesFirstPresentKey(t *testing.T) {
	p, _ := subflowCall(t, subflowParentFlow(`, {"id": "child_session_id", "type": "string"}`, `"child_session_id": ""`, ``),
		map[string]any{"session_id": "other-session"})
	if s, has := p["session_id"]; has {
		t.Fatalf("start_subworkflow session_id = %v, want none (child_session_id is present but blank)", s)
	}
}

// TestSubflow_InheritContextConfigNullFallsBack: with no inherit pin, the
// configured default is bool() of effectConfig.inherit_context, or of
// inheritContext when that is null (executor._create_subflow_effect_builder).
// So {"inherit_context": null, "inheritContext": true} inherits the
// parent's context, and so does the text "false" (Python truthiness).
func TestSubflow_InheritContextConfigNullFallsBack(t *testing.T) {
	for _, cfg := range []string{`"inherit_context": null, "inheritContext": true`, `"inherit_context": "false"`} {
		vars := map[string]any{"context": map[string]any{"messages": []any{
			map[string]any{"role": "user", "content": "parent says hi"},
		}}}
		p, _ := subflowCall(t, subflowParentFlow(`, {"id": "x", "type": "string"}`, `"x": "v"`, cfg), vars)
		cv, _ := p["vars"].(map[string]any)
		ctx, _ := cv["context"].(map[string]any)
		if msgs, _ := ctx["messages"].([]any); len(msgs) != 1 {
			t.Fatalf("effectConfig {%s}: child vars = %s, want the parent's message inherited", cfg, jsonText(t, cv))
		}
	}
}
