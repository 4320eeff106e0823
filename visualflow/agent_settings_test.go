package visualflow

import (
	"slices"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// Provider/model values default, __default__, __abstractcore_default__ and
// abstractcore.default mean "use defaults" without a warning (spec §5.6;
// Python warns only `if used_fallback and not explicit_default`): the
// child gets the run's defaults and _flow_warnings gets no #FALLBACK.
func TestAgentExplicitDefaultMarkersDoNotWarn(t *testing.T) {
	flow := pinnedAgentFlow(map[string]any{
		"pinDefaults": map[string]any{"prompt": "do it"},
		"agentConfig": map[string]any{"provider": "default", "model": "__default__", "_react_workflow_id": "react-def"},
	}, []string{"prompt:string"})
	var seen map[string]any
	react := outputReact("react-def", map[string]any{"answer": "ok", "iterations": int64(1), "messages": []any{}}, &seen)
	st := runAgentFlow(t, flow, react, nil, map[string]any{"_runtime": map[string]any{"provider": "lmstudio", "model": "qwen"}})
	rt, _ := seen["_runtime"].(map[string]any)
	if rt["provider"] != "lmstudio" || rt["model"] != "qwen" {
		t.Fatalf("child _runtime provider/model = %v/%v, want the run defaults lmstudio/qwen", rt["provider"], rt["model"])
	}
	warnings, _ := st.Vars["_flow_warnings"].([]any)
	if slices.Contains(warnings, any("#FALLBACK: missing provider/model; using runtime defaults")) {
		t.Errorf("explicit default markers produced a fallback warning: _flow_warnings = %v", warnings)
	}
}

// prompt_cache_binding is the pin, else agentConfig's (spec §5.6: pin
// value else agentConfig value); like Python, a non-empty object or a
// stripped non-blank string is kept and anything else dropped, and the
// child's _runtime and the structured-output llm_call get the same value,
// so the host's prompt-cache key matches the one Python sends.
func TestAgentPromptCacheBindingLikeReference(t *testing.T) {
	cases := []struct {
		name string
		pin  any // nil: no pin default
		cfg  any // nil: not configured
		want any // nil: absent
	}{
		{"pin is stripped", " bind-1 ", nil, "bind-1"},
		{"config used without a pin", nil, "cfg-b", "cfg-b"},
		{"pin wins over config", "pin-b", "cfg-b", "pin-b"},
		{"blank pin is dropped", "   ", nil, nil},
		{"non-string non-object is dropped", nil, int64(3), nil},
		{"empty object is dropped", map[string]any{}, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defaults := map[string]any{"prompt": "do it"}
			in := []string{"prompt:string"}
			if c.pin != nil {
				defaults["prompt_cache_binding"] = c.pin
				in = append(in, "prompt_cache_binding:any")
			}
			cfg := map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-pcb",
				"outputSchema": map[string]any{"enabled": true, "jsonSchema": map[string]any{"type": "object"}}}
			if c.cfg != nil {
				cfg["prompt_cache_binding"] = c.cfg
			}
			flow := pinnedAgentFlow(map[string]any{"pinDefaults": defaults, "agentConfig": cfg}, in)
			var seen map[string]any
			react := outputReact("react-pcb", map[string]any{"answer": "ok", "iterations": int64(1), "messages": []any{}}, &seen)
			llm := &scripted{results: []any{map[string]any{"data": map[string]any{"k": "v"}}}}
			runAgentFlow(t, flow, react, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}, nil)
			if len(llm.payloads) != 1 {
				t.Fatalf("structured-output llm_call payloads: %d, want 1", len(llm.payloads))
			}
			rt, _ := seen["_runtime"].(map[string]any)
			params, _ := llm.payloads[0]["params"].(map[string]any)
			for where, m := range map[string]map[string]any{"child _runtime": rt, "structured params": params} {
				got, has := m["prompt_cache_binding"]
				if c.want == nil && has {
					t.Errorf("%s.prompt_cache_binding = %#v, want it absent", where, got)
				}
				if c.want != nil && got != c.want {
					t.Errorf("%s.prompt_cache_binding = %#v (present %v), want %#v", where, got, has, c.want)
				}
			}
		})
	}
}

// A response schema pin that is an `abstractsemantics:` $ref fails the
// agent node, naming the ref, as Python's agent input normaliser raises
// when it cannot resolve it: the ReAct child never starts, and no
// structured pass gets an unresolved schema.
func TestAgentSemanticsRefSchemaFailsNode(t *testing.T) {
	flow := pinnedAgentFlow(map[string]any{
		"pinDefaults": map[string]any{"prompt": "do it", "resp_schema": map[string]any{"$ref": " abstractsemantics:kg_assertion_schema_v0"}},
		"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-sem"},
	}, []string{"prompt:string", "resp_schema:object"})
	var seen map[string]any
	react := outputReact("react-sem", map[string]any{"answer": "ok", "iterations": int64(1), "messages": []any{}}, &seen)
	st := tickAgentFlow(t, flow, react, nil, nil)
	if st.Status != durable.RunFailed || !strings.Contains(st.Error, "abstractsemantics:kg_assertion_schema_v0") {
		t.Fatalf("status %s error %q; want failed naming the schema ref", st.Status, st.Error)
	}
	if seen != nil {
		t.Errorf("the ReAct child ran (vars %v); want the agent to fail before starting it", seen)
	}
}

// agentChildVars runs start -> agent -> end with the given agent data
// and input pins, and returns the vars the ReAct child was started with.
func agentChildVars(t *testing.T, agentData map[string]any, in []string, vars map[string]any) map[string]any {
	t.Helper()
	flow := pinnedAgentFlow(agentData, in)
	var seen map[string]any
	react := outputReact("react-cfg", map[string]any{"answer": "A", "iterations": int64(1), "messages": []any{}}, &seen)
	runAgentFlow(t, flow, react, nil, vars)
	if seen == nil {
		t.Fatal("the ReAct child never ran")
	}
	return seen
}

// The config checkbox is read as the reference's compiler.py does
// (include_context, else use_context when include_context is None), so
// {include_context: null, use_context: true} turns "use context" on and
// the agent appends its turn (metadata.kind "agent_turn") to the parent's
// context.messages, as llm_call does.
func TestAgentConfigNullIncludeContextFallsBackToUseContext(t *testing.T) {
	cfg := map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-cfg",
		"include_context": nil, "use_context": true}
	flow := pinnedAgentFlow(map[string]any{"pinDefaults": map[string]any{"prompt": "do it"}, "agentConfig": cfg},
		[]string{"prompt:string"})
	react := outputReact("react-cfg", map[string]any{"answer": "A", "iterations": int64(1), "messages": []any{}}, nil)
	st := runAgentFlow(t, flow, react, nil, nil)
	ctx, _ := st.Vars["context"].(map[string]any)
	msgs, _ := ctx["messages"].([]any)
	found := false
	for _, m := range msgs {
		o, _ := m.(map[string]any)
		if md, ok := o["metadata"].(map[string]any); ok && md["kind"] == "agent_turn" {
			found = true
		}
	}
	if !found {
		t.Errorf("parent context.messages = %s; agentConfig {include_context:null, use_context:true} enables use-context in "+
			"the reference (null include_context falls back to use_context), so the agent turn must be appended",
			jsonText(t, msgs))
	}
}

// A tools pin or agentConfig.tools holding a single string allows that
// tool, stripped: the reference's agent input normaliser reads a value
// that is not a list as a one-item list.
func TestAgentSingleStringToolsAllowed(t *testing.T) {
	for _, tc := range []struct {
		name     string
		defaults map[string]any
		cfgTools any
		in       []string
	}{
		{"pin", map[string]any{"prompt": "do it", "tools": " read_file "}, nil, []string{"prompt:string", "tools:tools"}},
		{"config", map[string]any{"prompt": "do it"}, "read_file", []string{"prompt:string"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-cfg"}
			if tc.cfgTools != nil {
				cfg["tools"] = tc.cfgTools
			}
			seen := agentChildVars(t, map[string]any{"pinDefaults": tc.defaults, "agentConfig": cfg}, tc.in, nil)
			rt, _ := seen["_runtime"].(map[string]any)
			if got := jsonText(t, rt["allowed_tools"]); got != jsonText(t, []any{"read_file"}) {
				t.Errorf("child _runtime.allowed_tools = %s, want [\"read_file\"] (reference _normalize_tool_names wraps a single string)", got)
			}
		})
	}
}

// A whitespace-only system pin adds no system_prompt_extra to the child's
// _runtime (the reference's _build_sub_vars requires system_prompt.strip()).
func TestAgentBlankSystemPinAddsNoExtraPrompt(t *testing.T) {
	cfg := map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-cfg"}
	seen := agentChildVars(t, map[string]any{"pinDefaults": map[string]any{"prompt": "do it", "system": "  \n "},
		"agentConfig": cfg}, []string{"prompt:string", "system:string"}, nil)
	rt, _ := seen["_runtime"].(map[string]any)
	if v, ok := rt["system_prompt_extra"]; ok {
		t.Errorf("child _runtime.system_prompt_extra = %q; the reference omits it for a blank system prompt", v)
	}
}

// The seed is read with Python's int(value), not int(float(value)): a seed
// pin "7.5" is unreadable, gives the default -1, and the child gets no
// seed. (Only a null pin falls back to agentConfig, a documented
// difference; this pin is set and there is no config seed.)
func TestAgentDecimalStringSeedPinGivesNoSeed(t *testing.T) {
	cfg := map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-cfg"}
	seen := agentChildVars(t, map[string]any{"pinDefaults": map[string]any{"prompt": "do it", "seed": "7.5"},
		"agentConfig": cfg}, []string{"prompt:string", "seed:any"}, nil)
	rt, _ := seen["_runtime"].(map[string]any)
	if v, ok := rt["seed"]; ok {
		t.Errorf("child _runtime.seed = %v; the reference's int(\"7.5\") fails, giving seed -1 (no seed key)", v)
	}
}

// An unreadable temperature pin gives the reference's default 0.7 (the
// child gets no temperature) rather than agentConfig's value, which only a
// null pin falls back to.
func TestAgentUnreadableTemperaturePinGivesDefault(t *testing.T) {
	cfg := map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-cfg", "temperature": 0.2}
	seen := agentChildVars(t, map[string]any{"pinDefaults": map[string]any{"prompt": "do it", "temperature": "abc"},
		"agentConfig": cfg}, []string{"prompt:string", "temperature:any"}, nil)
	rt, _ := seen["_runtime"].(map[string]any)
	if v, ok := rt["temperature"]; ok {
		t.Errorf("child _runtime.temperature = %v; an unreadable pin gives the default 0.7 (no temperature key)", v)
	}
}

// "#FALLBACK: missing provider/model; using runtime defaults" is recorded
// whenever a value was taken from _runtime (the reference's
// `used_fallback and not explicit_default`), even when the model stays
// missing and the node then reports its configuration error.
func TestAgentPartialRuntimeFallbackWarns(t *testing.T) {
	cfg := map[string]any{"_react_workflow_id": "react-cfg"}
	flow := pinnedAgentFlow(map[string]any{"pinDefaults": map[string]any{"prompt": "do it"}, "agentConfig": cfg},
		[]string{"prompt:string"})
	react := outputReact("react-cfg", map[string]any{"answer": "A"}, nil)
	st := runAgentFlow(t, flow, react, nil, map[string]any{"_runtime": map[string]any{"provider": "lmstudio"}})
	if st.Output["ok"] != false {
		t.Fatalf("agent success = %#v, want false (model still missing -> configuration error)", st.Output["ok"])
	}
	warnings, _ := st.Vars["_flow_warnings"].([]any)
	if !slices.Contains(warnings, any("#FALLBACK: missing provider/model; using runtime defaults")) {
		t.Errorf("_flow_warnings = %v; the reference records the runtime-defaults fallback it used for the provider", warnings)
	}
}
