package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A system pin that is not a string is str()-ed as Python's agent input
// normaliser does (str(system or "")), so a numeric system pin still
// reaches the child as _runtime.system_prompt_extra.
func TestAgentNonStringSystemPinIsStringified(t *testing.T) {
	seen := agentChildVars(t, map[string]any{"pinDefaults": map[string]any{"prompt": "do it", "system": int64(42)},
		"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-cfg"}},
		[]string{"prompt:string", "system:any"}, nil)
	rt, _ := seen["_runtime"].(map[string]any)
	if got := rt["system_prompt_extra"]; got != "42" {
		t.Fatalf("child _runtime.system_prompt_extra = %#v, want \"42\"", got)
	}
}

// The include_context pin is a coerced boolean (spec §5.6, Appendix B): the
// string "false" turns context inclusion off, so the agent does not append
// its turn to the parent's context.messages.
func TestAgentIncludeContextStringFalseIsOff(t *testing.T) {
	flow := pinnedAgentFlow(map[string]any{"pinDefaults": map[string]any{"prompt": "do it", "include_context": "false"},
		"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-cfg"}},
		[]string{"prompt:string", "include_context:any"})
	react := outputReact("react-cfg", map[string]any{"answer": "A", "iterations": int64(1), "messages": []any{}}, nil)
	st := runAgentFlow(t, flow, react, nil, nil)
	if msgs := parentMessages(st); len(msgs) != 0 {
		t.Fatalf("parent context.messages = %s, want none (include_context \"false\")", jsonText(t, msgs))
	}
}

// agentConfig.outputSchema enables structured output only when its enabled
// flag is set (spec §5.6): a disabled outputSchema with a jsonSchema makes
// no structured llm_call and the agent answers in unstructured mode.
func TestAgentDisabledOutputSchemaIsNotStructured(t *testing.T) {
	flow := pinnedAgentFlow(map[string]any{"pinDefaults": map[string]any{"prompt": "do it"},
		"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-cfg",
			"outputSchema": map[string]any{"enabled": false, "jsonSchema": map[string]any{"type": "object"}}}},
		[]string{"prompt:string"})
	react := outputReact("react-cfg", map[string]any{"answer": "A", "iterations": int64(1), "messages": []any{}}, nil)
	llm := &scripted{results: []any{map[string]any{"data": map[string]any{"k": "v"}}}}
	st := runAgentFlow(t, flow, react, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}, nil)
	if len(llm.payloads) != 0 {
		t.Fatalf("structured llm_calls = %d, want 0 (outputSchema.enabled is false)", len(llm.payloads))
	}
	if b := agentBucketOf(st, "ag"); b["output_mode"] != "unstructured" {
		t.Errorf("bucket output_mode = %v, want unstructured", b["output_mode"])
	}
}

// The context pin's own attachments win over the parent's: with
// include_context the parent's attachments are given to the child only
// when the pin's context has none (spec §5.6 child context).
func TestAgentContextPinAttachmentsWinOverParent(t *testing.T) {
	vars := map[string]any{"context": map[string]any{"messages": []any{}, "attachments": []any{"parent.png"}}}
	seen := agentChildVars(t, map[string]any{"pinDefaults": map[string]any{"prompt": "do it", "include_context": true,
		"context": map[string]any{"attachments": []any{"pin.png"}}},
		"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-cfg"}},
		[]string{"prompt:string", "include_context:boolean", "context:object"}, vars)
	ctx, _ := seen["context"].(map[string]any)
	if got := jsonText(t, ctx["attachments"]); got != jsonText(t, []any{"pin.png"}) {
		t.Fatalf("child context.attachments = %s, want [\"pin.png\"]", got)
	}
}

// A context pin whose messages hold no message objects does not replace the
// inherited history (spec §5.6: "replaced by context.messages from the pin
// when non-empty"): with include_context the child still gets the parent's
// messages.
func TestAgentPinMessagesWithoutObjectsKeepInheritedHistory(t *testing.T) {
	vars := map[string]any{"context": map[string]any{"messages": []any{chatMsg("user", "u1")}}}
	seen := agentChildVars(t, map[string]any{"pinDefaults": map[string]any{"prompt": "do it", "include_context": true,
		"context": map[string]any{"messages": []any{"not a message"}}},
		"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-cfg"}},
		[]string{"prompt:string", "include_context:boolean", "context:object"}, vars)
	ctx, _ := seen["context"].(map[string]any)
	if got, want := jsonText(t, ctx["messages"]), jsonText(t, []any{chatMsg("user", "u1")}); got != want {
		t.Fatalf("child context.messages = %s, want %s", got, want)
	}
}

// A seed of 0 is a seed: the child's _runtime gets seed 0 (spec §5.6
// "seed? (only if >= 0)"), so a reproducible run with seed 0 stays
// reproducible.
func TestAgentSeedZeroReachesChild(t *testing.T) {
	seen := agentChildVars(t, map[string]any{"pinDefaults": map[string]any{"prompt": "do it", "seed": int64(0)},
		"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-cfg"}},
		[]string{"prompt:string", "seed:number"}, nil)
	rt, _ := seen["_runtime"].(map[string]any)
	if got, has := rt["seed"]; !has || jsonText(t, got) != "0" {
		t.Fatalf("child _runtime.seed = %v (present %v), want 0", got, has)
	}
}

// The provider/model default markers are recognised case-insensitively
// (spec §5.6): "DEFAULT" and "__Default__" ask for the run's defaults, which
// the child then gets.
func TestAgentDefaultMarkersAreCaseInsensitive(t *testing.T) {
	seen := agentChildVars(t, map[string]any{"pinDefaults": map[string]any{"prompt": "do it"},
		"agentConfig": map[string]any{"provider": "DEFAULT", "model": "__Default__", "_react_workflow_id": "react-cfg"}},
		[]string{"prompt:string"}, map[string]any{"_runtime": map[string]any{"provider": "lmstudio", "model": "qwen"}})
	rt, _ := seen["_runtime"].(map[string]any)
	if rt["provider"] != "lmstudio" || rt["model"] != "qwen" {
		t.Fatalf("child _runtime provider/model = %v/%v, want the run defaults lmstudio/qwen", rt["provider"], rt["model"])
	}
}

// The scratchpad has context_extra only when the context pin has keys
// besides task and messages (spec §5.6 "context_extra?"); without a context
// pin there is no empty context_extra.
func TestAgentScratchpadHasNoEmptyContextExtra(t *testing.T) {
	flow := pinnedAgentFlow(map[string]any{"pinDefaults": map[string]any{"prompt": "do it"},
		"agentConfig": map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-cfg"}},
		[]string{"prompt:string"})
	react := outputReact("react-cfg", map[string]any{"answer": "A", "iterations": int64(1), "messages": []any{}}, nil)
	st := runAgentFlow(t, flow, react, nil, nil)
	sp, _ := agentBucketOf(st, "ag")["scratchpad"].(map[string]any)
	if sp == nil {
		t.Fatal("bucket has no scratchpad")
	}
	if v, has := sp["context_extra"]; has {
		t.Fatalf("scratchpad.context_extra = %s, want absent", jsonText(t, v))
	}
}

// The run's default model is taken only with the run's default provider
// (spec §5.6 "the model only if the provider matches"): an agent configured
// with another provider and no model stays misconfigured rather than
// pairing that provider with a model of a different one.
func TestAgentRuntimeModelNeedsMatchingProvider(t *testing.T) {
	flow := pinnedAgentFlow(map[string]any{"pinDefaults": map[string]any{"prompt": "do it"},
		"agentConfig": map[string]any{"provider": "openai", "_react_workflow_id": "react-cfg"}},
		[]string{"prompt:string"})
	var seen map[string]any
	react := outputReact("react-cfg", map[string]any{"answer": "A", "iterations": int64(1), "messages": []any{}}, &seen)
	st := runAgentFlow(t, flow, react, nil, map[string]any{"_runtime": map[string]any{"provider": "lmstudio", "model": "qwen"}})
	if seen != nil {
		rt, _ := seen["_runtime"].(map[string]any)
		t.Fatalf("the ReAct child ran with provider/model %v/%v; want the missing-model configuration error", rt["provider"], rt["model"])
	}
	if st.Vars["_flow_error"] != "Agent node missing provider/model configuration" {
		t.Errorf("_flow_error = %v, want the missing provider/model error", st.Vars["_flow_error"])
	}
}

// The meta pin's iterations are rebuilt from the bucket as an integer
// (Python's sync of the agent pins): a child reporting iterations that are
// not a number leaves meta.iterations out rather than passing the text on.
func TestAgentMetaPinDropsNonIntegerIterations(t *testing.T) {
	cfg := map[string]any{"provider": "p", "model": "m", "_react_workflow_id": "react-it"}
	flow := rsFlow("vfe_agent_it", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("ag", "agent", []string{"exec-in:exec", "prompt:string"}, []string{"exec-out:exec", "meta:object"},
			map[string]any{"pinDefaults": map[string]any{"prompt": "do it"}, "agentConfig": cfg}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "mt:object"}, nil, nil),
	}, "start.exec-out>ag.exec-in", "ag.exec-out>end.exec-in", "ag.meta>end.mt")
	react := outputReact("react-it", map[string]any{"answer": "A", "iterations": "many", "messages": []any{}}, nil)
	st := runAgentFlow(t, flow, react, nil, nil)
	mt, _ := st.Output["mt"].(map[string]any)
	if mt == nil {
		t.Fatalf("no meta pin in the output %s", jsonText(t, st.Output))
	}
	if v, has := mt["iterations"]; has {
		t.Fatalf("meta.iterations = %s, want absent for a non-integer count", jsonText(t, v))
	}
}

// For the missing provider/model outcome the scratchpad pin's messages come
// from the outcome's context.messages when it has some (the reference's
// sync: bucket messages, else raw.context.messages, else the minimal
// transcript), so the context pin's history is shown.
func TestAgentConfigErrorScratchpadUsesContextMessages(t *testing.T) {
	cfg := map[string]any{"_react_workflow_id": "react-cfg"}
	pinMsgs := []any{map[string]any{"role": "user", "content": "earlier"}}
	flow := rsFlow("vfe_agent_cfgctx", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil),
		rsNode("ag", "agent", []string{"exec-in:exec", "prompt:string", "context:object"},
			[]string{"exec-out:exec", "scratchpad:object"},
			map[string]any{"pinDefaults": map[string]any{"prompt": "do it", "context": map[string]any{"messages": pinMsgs}},
				"agentConfig": cfg}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "sp:object"}, nil, nil),
	}, "start.exec-out>ag.exec-in", "ag.exec-out>end.exec-in", "ag.scratchpad>end.sp")
	react := outputReact("react-cfg", map[string]any{"answer": "A"}, nil)
	st := runAgentFlow(t, flow, react, nil, nil)
	sp, _ := st.Output["sp"].(map[string]any)
	if got, want := jsonText(t, sp["messages"]), jsonText(t, pinMsgs); got != want {
		t.Fatalf("agent.scratchpad.messages = %s, want the context pin's messages %s", got, want)
	}
}
