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
