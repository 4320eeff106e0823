package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// writerFlow is start → one set_var with the given pinDefaults (terminal).
func writerFlow(defaults string) string {
	return `{"id": "f", "entryNode": "start", "nodes": [
	  {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},
	  {"id": "w", "type": "set_var", "data": {"pinDefaults": ` + defaults + `,
	    "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "name", "type": "string"}, {"id": "value", "type": "any"}],
	    "outputs": [{"id": "exec-out", "type": "execution"}]}}
	],
	"edges": [{"source": "start", "sourceHandle": "exec-out", "target": "w", "targetHandle": "exec-in"}]}`
}

// A name whose first written segment is reserved is refused even though
// it does not start with '_' itself: "._temp" would overwrite the
// runtime's _temp once the empty segment is dropped.
func TestSetVarReservedNameAfterEmptySegment(t *testing.T) {
	_, st := startRunWith(t, mustFlow(t, writerFlow(`{"name": "._temp", "value": 1}`)), CompileOptions{}, map[string]any{})
	want := "Invalid variable name '._temp': names starting with '_' are reserved."
	if st.Output["success"] != false || st.Vars["_flow_error"] != want {
		t.Errorf("output = %s, _flow_error = %#v; want success:false and %q", jsonText(t, st.Output), st.Vars["_flow_error"], want)
	}
	if _, isObject := st.Vars["_temp"].(map[string]any); !isObject {
		t.Errorf("vars._temp = %s was overwritten", jsonText(t, st.Vars["_temp"]))
	}
}

// A falsy non-string name is empty, as the reference reads names
// (str(raw or "")): set_var with name 0 does not write vars["0"].
func TestSetVarFalsyNameIsEmpty(t *testing.T) {
	_, st := startRunWith(t, mustFlow(t, writerFlow(`{"name": 0, "value": 1}`)), CompileOptions{}, map[string]any{})
	if want := "Set Variable requires a non-empty variable name."; st.Vars["_flow_error"] != want {
		t.Errorf("_flow_error = %#v, want %q", st.Vars["_flow_error"], want)
	}
	if _, ok := st.Vars["0"]; ok {
		t.Error(`vars["0"] was written`)
	}
}

// The While guard, like the For guard, drops the loop's frame and stack
// entry before failing, so that inside a Sequence branch the failure ends
// that branch only and the Sequence runs its next branch.
func TestWhileGuardInsideSequenceReturnsToSequence(t *testing.T) {
	flow := `{"id": "f", "entryNode": "start", "nodes": [
	  {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},
	  {"id": "seq", "type": "sequence", "data": {
	    "inputs": [{"id": "exec-in", "type": "execution"}],
	    "outputs": [{"id": "then:0", "type": "execution"}, {"id": "then:1", "type": "execution"}]}},
	  {"id": "W", "type": "while", "data": {"pinDefaults": {"condition": true},
	    "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "condition", "type": "boolean"}],
	    "outputs": [{"id": "loop", "type": "execution"}, {"id": "done", "type": "execution"}, {"id": "item", "type": "any"}, {"id": "index", "type": "number"}]}},
	  {"id": "body", "type": "set_var", "data": {"pinDefaults": {"name": "looped", "value": true},
	    "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "name", "type": "string"}, {"id": "value", "type": "any"}],
	    "outputs": [{"id": "exec-out", "type": "execution"}]}},
	  {"id": "second", "type": "set_var", "data": {"pinDefaults": {"name": "second", "value": true},
	    "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "name", "type": "string"}, {"id": "value", "type": "any"}],
	    "outputs": [{"id": "exec-out", "type": "execution"}]}}
	],
	"edges": [
	  {"source": "start", "sourceHandle": "exec-out", "target": "seq", "targetHandle": "exec-in"},
	  {"source": "seq", "sourceHandle": "then:0", "target": "W", "targetHandle": "exec-in"},
	  {"source": "seq", "sourceHandle": "then:1", "target": "second", "targetHandle": "exec-in"},
	  {"source": "W", "sourceHandle": "loop", "target": "body", "targetHandle": "exec-in"}
	]}`
	_, st := startRunWith(t, mustFlow(t, flow), CompileOptions{}, map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status = %s (%s)", st.Status, st.Error)
	}
	if st.Vars["_flow_error"] != "While loop exceeded max_iterations=10000" {
		t.Fatalf("_flow_error = %#v", st.Vars["_flow_error"])
	}
	if st.Vars["second"] != true || st.Output["success"] != true {
		t.Errorf("vars.second = %#v, output = %s; want then:1 run and success:true", st.Vars["second"], jsonText(t, st.Output))
	}
}
