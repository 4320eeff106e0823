package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// agentBucketOf is vars._temp.agent.<id>.
func agentBucketOf(st *durable.RunState, id string) map[string]any {
	tmp, _ := st.Vars["_temp"].(map[string]any)
	ag, _ := tmp["agent"].(map[string]any)
	b, _ := ag[id].(map[string]any)
	return b
}

// The agent bucket keeps what the pins are rebuilt from after a restart
// (spec §5.6): scratchpad, answer, messages, success, provider, model,
// iterations, sub_run_id and output_mode ("structured" after the
// structured pass), the keys Python's handler writes and its output sync
// reads, so a Python runtime continuing a run saved here sees the same pins.
func TestAgentBucketKeepsPinSourceKeys(t *testing.T) {
	for _, structured := range []bool{false, true} {
		name, wantMode := "unstructured", "unstructured"
		cfg := map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-vfr"}
		var handlers map[durable.EffectType]runtime.Handler
		if structured {
			name, wantMode = "structured", "structured"
			cfg["outputSchema"] = map[string]any{"enabled": true, "jsonSchema": map[string]any{"type": "object"}}
			llm := &scripted{results: []any{map[string]any{"data": map[string]any{"x": int64(1)}}}}
			handlers = map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}
		}
		t.Run(name, func(t *testing.T) {
			flow := pinnedAgentFlow(map[string]any{"pinDefaults": map[string]any{"prompt": "do it"}, "agentConfig": cfg},
				[]string{"prompt:string"})
			msgs := []any{map[string]any{"role": "user", "content": "do it"}, map[string]any{"role": "assistant", "content": "A"}}
			react := outputReact("react-vfr", map[string]any{"answer": "A", "iterations": int64(3), "messages": msgs}, nil)
			st := runAgentFlow(t, flow, react, handlers, nil)
			b := agentBucketOf(st, "ag")
			if b == nil {
				t.Fatalf("no _temp.agent.ag bucket: %s", jsonText(t, st.Vars["_temp"]))
			}
			var missing []string
			for _, k := range []string{"scratchpad", "answer", "messages", "success", "provider", "model", "iterations", "sub_run_id", "output_mode"} {
				if _, ok := b[k]; !ok {
					missing = append(missing, k)
				}
			}
			if len(missing) > 0 {
				t.Errorf("agent bucket lacks %v (spec §5.6: pins are rebuilt from these bucket keys); bucket keys: %s",
					missing, jsonText(t, keysOf(b)))
			}
			if b["provider"] != "p" || b["model"] != "m" || b["output_mode"] != wantMode {
				t.Errorf("bucket provider/model/output_mode = %#v/%#v/%#v, want p/m/%s", b["provider"], b["model"], b["output_mode"], wantMode)
			}
		})
	}
}

func keysOf(m map[string]any) []any {
	var out []any
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A run Python saved while the agent waited on its ReAct child holds the
// normaliser's resolved_inputs ({task, context, provider/model: pin or
// null, system, tools}); every phase resolves the settings from them and
// agentConfig (spec §5.6 "pin value else agentConfig value"), so the
// structured pass runs with the configured provider, model, schema and
// temperature, and meta names the configured provider and model.
func TestAgentContinuesPythonSavedBucket(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "number"}}}
	cfg := map[string]any{"provider": "p", "model": "m", "temperature": 0.2, "_react_workflow_id": "react-vfr",
		"outputSchema": map[string]any{"enabled": true, "jsonSchema": schema}}
	flow := rsFlow("vfe_agent_py", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("ag", "agent", []string{"exec-in:exec", "prompt:string"},
			[]string{"exec-out:exec", "response:string", "data:object", "meta:object"},
			map[string]any{"pinDefaults": map[string]any{"prompt": "do it"}, "agentConfig": cfg}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "r:string", "d:object", "meta:object"}, nil, nil),
	}, "start.exec-out>ag.exec-in", "ag.exec-out>end.exec-in", "ag.response>end.r", "ag.data>end.d", "ag.meta>end.meta")

	// The state as Python saved it when the child's completion resumed the
	// parent (result key _temp.agent.ag.sub).
	pyBucket := map[string]any{
		"phase": "subworkflow",
		"resolved_inputs": map[string]any{"task": "do it", "context": map[string]any{}, "provider": nil, "model": nil,
			"system": "", "tools": []any{}},
		"sub": map[string]any{"sub_run_id": "child-1", "output": map[string]any{"answer": "A", "iterations": int64(2),
			"messages": []any{}}, "node_traces": map[string]any{}},
	}
	vars := map[string]any{"_temp": map[string]any{"agent": map[string]any{"ag": pyBucket}}}
	llm := &scripted{results: []any{map[string]any{"data": map[string]any{"x": int64(7)}}}}
	never := outputReact("react-vfr", map[string]any{"answer": "child started again"}, nil)
	st := runAgentFlow(t, flow, never, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}, vars)

	if len(llm.payloads) != 1 {
		t.Fatalf("structured llm_calls = %d, want 1: agentConfig.outputSchema is enabled (spec §5.6 phase structured); outputs %s",
			len(llm.payloads), jsonText(t, st.Output))
	}
	p := llm.payloads[0]
	params, _ := p["params"].(map[string]any)
	if p["provider"] != "p" || p["model"] != "m" || p["response_schema"] == nil || jsonText(t, params["temperature"]) != "0.2" {
		t.Errorf("structured llm_call payload = %s; want provider p, model m, the config schema, temperature 0.2", jsonText(t, p))
	}
	meta, _ := st.Output["meta"].(map[string]any)
	if meta["provider"] != "p" || meta["model"] != "m" {
		t.Errorf("meta = %s; want provider p and model m from agentConfig", jsonText(t, meta))
	}
}

// The pins are rebuilt from the bucket and _temp.effects.<N>, which for a
// structured agent is the data (Python's _sync_effect_results_to_node_outputs):
// a `success` field of the data sets the `success` pin, as in the
// reference, so a data-edge reader sees false here.
func TestAgentStructuredDataSuccessSetsPin(t *testing.T) {
	cfg := map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-vfr",
		"outputSchema": map[string]any{"enabled": true, "jsonSchema": map[string]any{"type": "object"}}}
	flow := pinnedAgentFlow(map[string]any{"pinDefaults": map[string]any{"prompt": "do it"}, "agentConfig": cfg},
		[]string{"prompt:string"})
	llm := &scripted{results: []any{map[string]any{"data": map[string]any{"success": false, "reason": "no"}}}}
	react := outputReact("react-vfr", map[string]any{"answer": "A", "iterations": int64(1), "messages": []any{}}, nil)
	st := runAgentFlow(t, flow, react, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}, nil)
	if st.Output["ok"] != false {
		t.Errorf("agent.success pin read downstream = %#v, want false (Python rebuilds it from the structured data's `success`)", st.Output["ok"])
	}
}

// The context pin's messages reach the ReAct child as its object entries
// only, and replace the inherited history only when some remain (Python's
// _build_sub_vars), so a list of strings never becomes malformed messages
// nor wipes the parent's conversation.
func TestAgentContextPinKeepsObjectMessages(t *testing.T) {
	cfg := map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-vfr", "include_context": true}
	flow := pinnedAgentFlow(map[string]any{"pinDefaults": map[string]any{"prompt": "do it",
		"context": map[string]any{"messages": []any{"just text", map[string]any{"role": "user", "content": "x"}}}},
		"agentConfig": cfg}, []string{"prompt:string", "context:object"})
	var seen map[string]any
	react := outputReact("react-vfr", map[string]any{"answer": "A", "iterations": int64(1), "messages": []any{}}, &seen)
	runAgentFlow(t, flow, react, nil, nil)
	ctx, _ := seen["context"].(map[string]any)
	want := []any{map[string]any{"role": "user", "content": "x"}}
	if got := jsonText(t, ctx["messages"]); got != jsonText(t, want) {
		t.Errorf("child context.messages = %s\nwant only the object entries %s (Python _build_sub_vars)", got, jsonText(t, want))
	}

	// Only non-object entries: the inherited parent messages stay.
	flow = pinnedAgentFlow(map[string]any{"pinDefaults": map[string]any{"prompt": "do it",
		"context": map[string]any{"messages": []any{"just text"}}}, "agentConfig": cfg},
		[]string{"prompt:string", "context:object"})
	parent := []any{map[string]any{"role": "user", "content": "earlier"}}
	seen = nil
	react = outputReact("react-vfr", map[string]any{"answer": "A", "iterations": int64(1), "messages": []any{}}, &seen)
	runAgentFlow(t, flow, react, nil, map[string]any{"context": map[string]any{"messages": parent}})
	ctx, _ = seen["context"].(map[string]any)
	msgs, _ := ctx["messages"].([]any)
	for _, m := range msgs {
		if _, ok := m.(map[string]any); !ok {
			t.Errorf("child context.messages = %s: a non-object entry from the pin replaced the inherited history (Python keeps the parent's messages)",
				jsonText(t, msgs))
			break
		}
	}
}

// A structured agent without successor completes the run with Python's
// phase "structured" meta {schema, version, output_mode, provider, model,
// tool_calls, tool_results, sub_run_id?}: no iterations.
func TestAgentTerminalStructuredMetaHasNoIterations(t *testing.T) {
	cfg := map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-vfr",
		"outputSchema": map[string]any{"enabled": true, "jsonSchema": map[string]any{"type": "object"}}}
	flow := rsFlow("vfe_agent_term", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("ag", "agent", []string{"exec-in:exec", "prompt:string"}, []string{"exec-out:exec", "response:string"},
			map[string]any{"pinDefaults": map[string]any{"prompt": "do it"}, "agentConfig": cfg}),
	}, "start.exec-out>ag.exec-in")
	llm := &scripted{results: []any{map[string]any{"data": map[string]any{"x": int64(1)}}}}
	react := outputReact("react-vfr", map[string]any{"answer": "A", "iterations": int64(4), "messages": []any{}}, nil)
	st := runAgentFlow(t, flow, react, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}, nil)
	meta, _ := st.Output["meta"].(map[string]any)
	if meta == nil || meta["output_mode"] != "structured" {
		t.Fatalf("run output = %s", jsonText(t, st.Output))
	}
	if _, ok := meta["iterations"]; ok {
		t.Errorf("terminal structured meta = %s; Python's has no iterations key", jsonText(t, meta))
	}
}

// The child's _runtime.thinking inherited from the parent is normalised
// like the node's own (spec §5.6; Python's _normalize_thinking): a bool or
// a non-blank stripped string, else no key, so a blank or null host value
// means "no override" rather than an invalid thinking level.
func TestAgentInheritedThinkingNormalised(t *testing.T) {
	cfg := map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-vfr"}
	for _, tc := range []struct {
		parent  any
		want    any
		present bool
	}{{"  ", nil, false}, {nil, nil, false}, {" high ", "high", true}} {
		flow := pinnedAgentFlow(map[string]any{"pinDefaults": map[string]any{"prompt": "do it"}, "agentConfig": cfg},
			[]string{"prompt:string"})
		var seen map[string]any
		react := outputReact("react-vfr", map[string]any{"answer": "A", "iterations": int64(1), "messages": []any{}}, &seen)
		runAgentFlow(t, flow, react, nil, map[string]any{"_runtime": map[string]any{"thinking": tc.parent}})
		crt, _ := seen["_runtime"].(map[string]any)
		got, present := crt["thinking"]
		if present != tc.present || got != tc.want {
			t.Errorf("parent _runtime.thinking %#v: child _runtime.thinking = %#v (present %v), want %#v (present %v)",
				tc.parent, got, present, tc.want, tc.present)
		}
	}
}
