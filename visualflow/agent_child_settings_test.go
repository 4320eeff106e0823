package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// The agent node's child settings and structured output (spec §5.6). Python reference: AbstractRuntime
// visualflow_compiler/compiler.py _create_visual_agent_effect_handler
// (_build_sub_vars, phases init/subworkflow/structured).

// Spec §5.6 "Child vars": _limits = copy of the parent's, defaults for
// missing keys, max_iterations / max_input_tokens overridden by the node
// settings (numeric strings accepted); scratchpad.max_iterations follows;
// context = {task, messages: parent active view (system + last
// max_history_messages) when include_context, attachments (cleaned), other
// context-pin keys}; _runtime = {inbox:[], provider (lower-cased), model,
// allowed_tools (trimmed, de-duplicated), temperature (≠0.7), seed (≥0)}.
// The scratchpad keeps the extra context-pin keys as context_extra.
func TestAgentChildVarsFromSettings(t *testing.T) {
	flow := pinnedAgentFlow(map[string]any{
		"pinDefaults": map[string]any{"prompt": "do it", "include_context": true, "temperature": 0.2, "seed": 3,
			"max_iterations": "7", "max_in_tokens": 900, "context": map[string]any{"extra": "x", "task": "ignored"}},
		"agentConfig": map[string]any{"provider": "OpenAI", "model": "m", "tools": []any{" a ", "b", "a", 3}, "_react_workflow_id": "react-rv"},
	}, []string{"prompt:string", "include_context:boolean", "temperature:number", "seed:number", "max_iterations:number",
		"max_in_tokens:number", "context:object"})
	var seen map[string]any
	react := outputReact("react-rv", map[string]any{"answer": "ok", "iterations": int64(2)}, &seen)
	vars := map[string]any{
		"_limits": map[string]any{"max_history_messages": int64(1), "max_iterations": int64(30)},
		"context": map[string]any{"messages": []any{chatMsg("system", "S"), chatMsg("user", "u1"), chatMsg("user", "u2")},
			"attachments": []any{" f.png ", "  "}},
	}
	st := runAgentFlow(t, flow, react, nil, vars)

	limits, _ := seen["_limits"].(map[string]any)
	wantLimits := map[string]any{"max_iterations": int64(7), "current_iteration": int64(0), "max_tokens": int64(32768),
		"max_output_tokens": nil, "max_input_tokens": int64(900), "max_history_messages": int64(1),
		"estimated_tokens_used": int64(0), "warn_iterations_pct": int64(80), "warn_tokens_pct": int64(80)}
	if got, w := jsonText(t, limits), jsonText(t, wantLimits); got != w {
		t.Errorf("child _limits = %s\nwant %s", got, w)
	}
	if sp, _ := seen["scratchpad"].(map[string]any); jsonText(t, sp) != jsonText(t, map[string]any{"iteration": 0, "max_iterations": 7}) {
		t.Errorf("child scratchpad = %s", jsonText(t, sp))
	}
	wantCtx := map[string]any{"task": "do it", "extra": "x", "attachments": []any{"f.png"},
		"messages": []any{chatMsg("system", "S"), chatMsg("user", "u2")}}
	if got, w := jsonText(t, seen["context"]), jsonText(t, wantCtx); got != w {
		t.Errorf("child context = %s\nwant %s", got, w)
	}
	wantRT := map[string]any{"inbox": []any{}, "provider": "openai", "model": "m", "allowed_tools": []any{"a", "b"},
		"temperature": 0.2, "seed": int64(3)}
	rt, _ := seen["_runtime"].(map[string]any)
	for k, v := range wantRT {
		if jsonText(t, rt[k]) != jsonText(t, v) {
			t.Errorf("child _runtime[%q] = %s, want %s", k, jsonText(t, rt[k]), jsonText(t, v))
		}
	}
	for _, k := range []string{"thinking", "system_prompt_extra", "control", "prompt_cache_binding"} {
		if v, has := rt[k]; has {
			t.Errorf("child _runtime[%q] = %s, want absent", k, jsonText(t, v))
		}
	}
	tmp, _ := st.Vars["_temp"].(map[string]any)
	agent, _ := tmp["agent"].(map[string]any)
	b, _ := agent["ag"].(map[string]any)
	sp, _ := b["scratchpad"].(map[string]any)
	if jsonText(t, sp["context_extra"]) != jsonText(t, map[string]any{"extra": "x"}) || sp["workflow_id"] != "react-rv" || sp["task"] != "do it" {
		t.Errorf("bucket scratchpad context_extra/workflow_id/task = %s/%v/%v", jsonText(t, sp["context_extra"]), sp["workflow_id"], sp["task"])
	}
}

// Spec §5.6 phase "structured": a wrapper-form resp_schema pin is
// normalised and enables the pass; one llm_call with the single user
// message "Convert the Agent answer … Return JSON only.\n\nTask:\n<task>\n\n
// Answer:\n<answer>", system_prompt = system pin, response_schema_name
// "Agent_<N>", params {temperature, seed≥0}, result key
// _temp.agent.<N>.structured; then data = parsed content, _temp.effects.<N>
// = data, response = compact JSON, meta.output_mode "structured".
func TestAgentStructuredPass(t *testing.T) {
	flow := pinnedAgentFlow(map[string]any{
		"pinDefaults": map[string]any{"prompt": "do it", "system": "be terse", "seed": 5,
			"resp_schema": map[string]any{"type": "json_schema", "json_schema": map[string]any{"schema": map[string]any{"type": "object"}}}},
		"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-rs"},
	}, []string{"prompt:string", "system:string", "seed:number", "resp_schema:object"})
	react := outputReact("react-rs", map[string]any{"answer": "A", "iterations": int64(2)}, nil)
	llm := &scripted{results: []any{map[string]any{"content": `{"b":1}`}}}
	st := runAgentFlow(t, flow, react, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}, nil)
	if len(llm.payloads) != 1 {
		t.Fatalf("llm calls = %d", len(llm.payloads))
	}
	p := llm.payloads[0]
	wantMsgs := []any{chatMsg("user", "Convert the Agent answer into a JSON object matching the required schema. Return JSON only.\n\nTask:\ndo it\n\nAnswer:\nA")}
	if jsonText(t, p["messages"]) != jsonText(t, wantMsgs) || p["system_prompt"] != "be terse" || p["response_schema_name"] != "Agent_ag" ||
		jsonText(t, p["response_schema"]) != jsonText(t, map[string]any{"type": "object"}) ||
		jsonText(t, p["params"]) != jsonText(t, map[string]any{"temperature": 0.7, "seed": 5}) {
		t.Errorf("structured llm_call payload = %s", jsonText(t, p))
	}
	if st.Output["r"] != `{"b":1}` || st.Output["ok"] != true {
		t.Errorf("response/success = %v/%v", st.Output["r"], st.Output["ok"])
	}
	tmp, _ := st.Vars["_temp"].(map[string]any)
	eff, _ := tmp["effects"].(map[string]any)
	if jsonText(t, eff["ag"]) != jsonText(t, map[string]any{"b": 1}) {
		t.Errorf("_temp.effects.ag = %s, want the data", jsonText(t, eff["ag"]))
	}
	outs, _ := tmp["node_outputs"].(map[string]any)
	rec, _ := outs["ag"].(map[string]any)
	meta, _ := rec["meta"].(map[string]any)
	if meta["output_mode"] != "structured" || jsonText(t, rec["data"]) != jsonText(t, map[string]any{"b": 1}) {
		t.Errorf("node output meta/data = %s/%s", jsonText(t, meta), jsonText(t, rec["data"]))
	}
}

// The agent's pins win over agentConfig (spec §5.6 "pin value else
// agentConfig value"): a max_iterations pin over the config's, and a tools
// pin that is present even when null (the normaliser reads "pin list if
// the key is present, else agentConfig.tools"), so the child gets no tools.
func TestAgentPinsWinOverAgentConfig(t *testing.T) {
	flow := pinnedAgentFlow(map[string]any{
		"pinDefaults": map[string]any{"prompt": "do it", "tools": nil, "max_iterations": "7"},
		"agentConfig": map[string]any{"provider": "p", "model": "m", "tools": []any{"search"}, "max_iterations": 40,
			"_react_workflow_id": "react-pins"},
	}, []string{"prompt:string", "tools:array", "max_iterations:number"})
	var seen map[string]any
	react := outputReact("react-pins", map[string]any{"answer": "ok"}, &seen)
	runAgentFlow(t, flow, react, nil, nil)
	rt, _ := seen["_runtime"].(map[string]any)
	if got := jsonText(t, rt["allowed_tools"]); got != "[]" {
		t.Errorf("child _runtime.allowed_tools = %s, want [] (a null tools pin overrides agentConfig.tools)", got)
	}
	limits, _ := seen["_limits"].(map[string]any)
	if got := jsonText(t, limits["max_iterations"]); got != "7" {
		t.Errorf("child _limits.max_iterations = %s, want 7 (the pin, not agentConfig's 40)", got)
	}
}
