package visualflow

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
)

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

// subflowCall runs parent (a flow calling workflow "child") with a
// start_subworkflow handler that records its payloads and completes.
func subflowCall(t *testing.T, parent string, vars map[string]any) (map[string]any, *durable.RunState) {
	t.Helper()
	var payloads []map[string]any
	h := runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		payloads = append(payloads, pyjson.CloneObject(req.Effect.Payload))
		return runtime.Completed(map[string]any{"sub_run_id": "child-1", "output": map[string]any{"success": true}}), nil
	}}
	_, st := runFlows(t, []string{parent}, nil, map[durable.EffectType]runtime.Handler{durable.EffectStartSubworkflow: h}, vars)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if len(payloads) != 1 {
		t.Fatalf("start_subworkflow payloads = %d, want 1", len(payloads))
	}
	return payloads[0], st
}

// subflowParent is start (pins prompt, session_id) → subflow "child"
// with the given extra input pins and pinDefaults.
func subflowParent(inputs, defaults string) string {
	return `{"id": "parent", "entryNode": "start", "nodes": [
	  {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}, {"id": "prompt", "type": "string"}, {"id": "session_id", "type": "string"}]}},
	  {"id": "sub", "type": "subflow", "data": {"subflowId": "child", "pinDefaults": {` + defaults + `},
	    "inputs": [{"id": "exec-in", "type": "execution"}` + inputs + `],
	    "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "output", "type": "any"}]}}
	],
	"edges": [{"source": "start", "sourceHandle": "exec-out", "target": "sub", "targetHandle": "exec-in"}]}`
}

// §5.5: inherit_context is not a forwarded pin, so a subflow whose only
// declared input is inherit_context passes all of the resolved input
// (bus keys included) as child vars.
func TestSubflowWithoutForwardedPinsPassesResolvedInput(t *testing.T) {
	p, _ := subflowCall(t, subflowParent(`, {"id": "inherit_context", "type": "boolean"}`, `"inherit_context": false`),
		map[string]any{"prompt": "hi"})
	vars, _ := p["vars"].(map[string]any)
	if vars["prompt"] != "hi" {
		t.Fatalf("child vars = %s, want the resolved input (prompt=hi)", jsonText(t, p["vars"]))
	}
	if _, ok := vars["inherit_context"]; ok {
		t.Fatalf("child vars = %s keep inherit_context", jsonText(t, p["vars"]))
	}
}

// §5.5: session_id (and its aliases) chooses the child session and is
// dropped from the child vars.
func TestSubflowSessionKeysAreDroppedFromChildVars(t *testing.T) {
	p, _ := subflowCall(t, subflowParent(``, ``), map[string]any{"prompt": "hi", "session_id": "s-9"})
	if p["session_id"] != "s-9" {
		t.Fatalf("payload = %s, want session_id s-9", jsonText(t, p))
	}
	vars, _ := p["vars"].(map[string]any)
	if _, ok := vars["session_id"]; ok || vars["prompt"] != "hi" {
		t.Fatalf("child vars = %s, want prompt kept and session_id dropped", jsonText(t, p["vars"]))
	}
}

// §5.5: inherit_context from the pin (coerced) merges the parent's active
// context into the child's.
func TestSubflowInheritContextPinMergesParentContext(t *testing.T) {
	msg := map[string]any{"role": "user", "content": "earlier"}
	p, _ := subflowCall(t, subflowParent(`, {"id": "inherit_context", "type": "boolean"}`, `"inherit_context": "true"`),
		map[string]any{"prompt": "hi", "context": map[string]any{"messages": []any{msg}}})
	vars, _ := p["vars"].(map[string]any)
	ctx, _ := vars["context"].(map[string]any)
	msgs, _ := ctx["messages"].([]any)
	if len(msgs) != 1 || jsonText(t, msgs[0]) != jsonText(t, msg) {
		t.Fatalf("child vars = %s, want context.messages = [the parent's message]", jsonText(t, p["vars"]))
	}
}
