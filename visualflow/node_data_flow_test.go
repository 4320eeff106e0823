package visualflow

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// §4.7: a terminal function node ends the run with its object result plus
// success:true only when absent; a result's own success:false is kept.
func TestTerminalFunctionResultKeepsItsOwnSuccess(t *testing.T) {
	st := runFlowOnce(t, `{"id": "f", "entryNode": "start", "nodes": [
	  {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},
	  {"id": "p", "type": "parse_json", "data": {"pinDefaults": {"text": "{\"success\": false, \"x\": 1}"},
	    "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "text", "type": "string"}],
	    "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "result", "type": "any"}]}}
	],
	"edges": [{"source": "start", "sourceHandle": "exec-out", "target": "p", "targetHandle": "exec-in"}]}`, map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if st.Output["success"] != false {
		t.Fatalf("terminal parse_json of {success:false}: output = %s, want success kept false", jsonText(t, st.Output))
	}
}

// §4.3: a declared pin's pinDefaults entry overrides a same-named bus key
// (an undeclared key only fills a gap).
func TestDeclaredPinDefaultBeatsBusKey(t *testing.T) {
	st := runFlowOnce(t, `{"id": "f", "entryNode": "start", "nodes": [
	  {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}, {"id": "prompt", "type": "string"}, {"id": "extra", "type": "string"}]}},
	  {"id": "end", "type": "on_flow_end", "data": {"pinDefaults": {"prompt": "from-default", "extra": "undeclared-default"},
	    "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "prompt", "type": "string"}]}}
	],
	"edges": [{"source": "start", "sourceHandle": "exec-out", "target": "end", "targetHandle": "exec-in"}]}`,
		map[string]any{"prompt": "from-bus", "extra": "bus-extra"})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if st.Output["prompt"] != "from-default" {
		t.Fatalf("output = %s, want prompt = from-default (declared pin default beats the bus)", jsonText(t, st.Output))
	}
}

// docs/compatibility.md: a node whose base input falls back to the whole
// vars object gets a copy without _temp, so a data-less on_flow_end at the
// entry ends the run with the caller's vars, not the runtime's _temp.
func TestWholeVarsBaseInputLeavesOutTemp(t *testing.T) {
	flow := rsFlow("f", "end", []map[string]any{rsNode("end", "on_flow_end", []string{"exec-in:exec"}, nil, nil)})
	st := runFlow(t, flow, map[string]any{"a": int64(1)})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if _, ok := st.Output["_temp"]; ok || jsonText(t, st.Output["a"]) != "1" {
		t.Fatalf("output = %s, want a=1 and no _temp", jsonText(t, st.Output))
	}
}

// §4.1: _flow_warnings holds de-duplicated warnings: the same llm_call
// fallback warning raised on every loop iteration is listed once.
func TestFlowWarningsAreDeduplicated(t *testing.T) {
	flow := `{"id": "f", "entryNode": "start", "nodes": [
	  {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},
	  {"id": "L", "type": "loop", "data": {"pinDefaults": {"items": [1, 2]},
	    "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "items", "type": "array"}],
	    "outputs": [{"id": "loop", "type": "execution"}, {"id": "done", "type": "execution"}]}},
	  {"id": "llm", "type": "llm_call", "data": {"pinDefaults": {"provider": "p", "prompt": "hi"},
	    "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "provider", "type": "string"}, {"id": "prompt", "type": "string"}],
	    "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "response", "type": "string"}]}}
	],
	"edges": [
	  {"source": "start", "sourceHandle": "exec-out", "target": "L", "targetHandle": "exec-in"},
	  {"source": "L", "sourceHandle": "loop", "target": "llm", "targetHandle": "exec-in"}
	]}`
	llm := &scripted{results: []any{map[string]any{"content": "a"}, map[string]any{"content": "b"}}}
	_, st := runFlows(t, []string{flow}, nil, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()}, map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if len(llm.payloads) != 2 {
		t.Fatalf("llm_call ran %d times, want 2", len(llm.payloads))
	}
	warnings, _ := st.Vars["_flow_warnings"].([]any)
	if len(warnings) != 1 {
		t.Fatalf("_flow_warnings = %s, want the one fallback warning once", jsonText(t, st.Vars["_flow_warnings"]))
	}
}

// §4.2 step 5: a function node with outputKey writes its result at that
// dotted path in vars.
func TestFunctionNodeOutputKeyWritesResult(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		startNode(),
		rsNode("p", "parse_json", []string{"exec-in:exec", "text:string"}, []string{"exec-out:exec", "result:any"},
			map[string]any{"outputKey": "res.parsed", "pinDefaults": map[string]any{"text": `{"x": 1}`}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec"}, nil, nil),
	}, "start.exec-out>p.exec-in", "p.exec-out>end.exec-in")
	st := runFlow(t, flow, map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	res, _ := st.Vars["res"].(map[string]any)
	if got := jsonText(t, res["parsed"]); strings.Join(strings.Fields(got), "") != `{"x":1}` {
		t.Fatalf("vars.res = %s, want {parsed: {x: 1}}", jsonText(t, st.Vars["res"]))
	}
}

// on_user_request copies its outputs (function.go): a later write into
// the var its input came from (here through inputKey, which hands the node
// the live var) must not change the context it output.
func TestOnUserRequestContextIsNotChangedByLaterWrites(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		startNode(),
		rsNode("req", "on_user_request", []string{"exec-in:exec"}, []string{"exec-out:exec", "message:string", "context:object"},
			map[string]any{"inputKey": "req"}),
		setVarNode("w", "req.context.task", map[string]any{"value": "changed"}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "context:object"}, nil, nil),
	}, "start.exec-out>req.exec-in", "req.exec-out>w.exec-in", "w.exec-out>end.exec-in", "req.context>end.context")
	st := runFlow(t, flow, map[string]any{"req": map[string]any{"message": "hi", "context": map[string]any{"task": "t"}}})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	ctx, _ := st.Output["context"].(map[string]any)
	if ctx["task"] != "t" {
		t.Fatalf("on_user_request's context output = %s, want the context as it was (task t)", jsonText(t, st.Output["context"]))
	}
}
