package visualflow

import (
	"strconv"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// Nodes whose input bus is not an object (a list or a scalar) read it as
// the Python reference does.

// runFlowOnce compiles and runs flow to its first stop.
func runFlowOnce(t *testing.T, src string, vars map[string]any) *durable.RunState {
	t.Helper()
	_, st := startRunWith(t, mustFlow(t, src), CompileOptions{}, vars)
	return st
}

// recordingLoopFlow is start → [a code node returning codeBody →] the
// loop node given (id "L"), whose loop branch stores L's output pin `pin`
// in var "last" and whose done branch ends the run with {last}.
func recordingLoopFlow(codeBody, loopNode, pin string) string {
	nodes := `{"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},`
	edges := `{"source": "start", "sourceHandle": "exec-out", "target": "L", "targetHandle": "exec-in"},`
	if codeBody != "" {
		nodes += `{"id": "code", "type": "code", "data": {"codeBody": ` + strconv.Quote(codeBody) + `,
		  "inputs": [{"id": "exec-in", "type": "execution"}],
		  "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "output", "type": "any"}]}},`
		edges = `{"source": "start", "sourceHandle": "exec-out", "target": "code", "targetHandle": "exec-in"},
		  {"source": "code", "sourceHandle": "exec-out", "target": "L", "targetHandle": "exec-in"},`
	}
	return `{"id": "f", "entryNode": "start", "nodes": [` + nodes + loopNode + `,
	    {"id": "set", "type": "set_var", "data": {"pinDefaults": {"name": "last"},
	      "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "name", "type": "string"}, {"id": "value", "type": "any"}],
	      "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "value", "type": "any"}]}},
	    {"id": "gv", "type": "get_var", "data": {"pinDefaults": {"name": "last"},
	      "inputs": [{"id": "name", "type": "string"}], "outputs": [{"id": "value", "type": "any"}]}},
	    {"id": "end", "type": "on_flow_end", "data": {"inputs": [{"id": "exec-in", "type": "execution"}, {"id": "last", "type": "any"}]}}
	  ],
	  "edges": [` + edges + `
	    {"source": "L", "sourceHandle": "loop", "target": "set", "targetHandle": "exec-in"},
	    {"source": "L", "sourceHandle": "` + pin + `", "target": "set", "targetHandle": "value"},
	    {"source": "L", "sourceHandle": "done", "target": "end", "targetHandle": "exec-in"},
	    {"source": "gv", "sourceHandle": "value", "target": "end", "targetHandle": "last"}
	  ]}`
}

// ForEach (loop) whose `items` pin is unwired after a node that put a list
// on the bus: the reference calls the loop's input function on the bus
// itself when no input resolved (§4.2 step 4: "on resolved (or on the
// base input if resolved is empty)"), and `_create_loop_handler` turns a
// non-object input into the items list. Ours iterated zero times.
func TestLoopItemsFromListBus(t *testing.T) {
	st := runFlowOnce(t, recordingLoopFlow("return [1, 2, 3]", `{"id": "L", "type": "loop", "data": {
	  "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "items", "type": "array"}],
	  "outputs": [{"id": "loop", "type": "execution"}, {"id": "done", "type": "execution"},
	              {"id": "item", "type": "any"}, {"id": "index", "type": "number"}]}}`, "item"), map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if got := jsonText(t, st.Output["last"]); got != "3" {
		t.Fatalf("loop over the bus list: output.last = %s, want 3 (reference iterates the list on the bus); output=%s", got, jsonText(t, st.Output))
	}
}

// If whose `condition` pin is unwired after a node that put a truthy
// scalar on the bus: the reference's `_create_if_handler` uses
// bool(input) for a non-object input (which it gets when nothing
// resolved, §4.2 step 4). Ours read input["condition"] of a nil map and
// always took `false`.
func TestIfConditionFromScalarBus(t *testing.T) {
	st := runFlowOnce(t, `{
	  "id": "f", "entryNode": "start",
	  "nodes": [
	    {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},
	    {"id": "code", "type": "code", "data": {"codeBody": "return True",
	      "inputs": [{"id": "exec-in", "type": "execution"}],
	      "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "output", "type": "any"}]}},
	    {"id": "if", "type": "if", "data": {
	      "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "condition", "type": "boolean"}],
	      "outputs": [{"id": "true", "type": "execution"}, {"id": "false", "type": "execution"}]}}
	  ],
	  "edges": [
	    {"source": "start", "sourceHandle": "exec-out", "target": "code", "targetHandle": "exec-in"},
	    {"source": "code", "sourceHandle": "exec-out", "target": "if", "targetHandle": "exec-in"}
	  ]}`, map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if b := st.Output["branch"]; b != "true" {
		t.Fatalf("if on a truthy scalar bus took branch %v, want \"true\"; output=%s", b, jsonText(t, st.Output))
	}
}

// For loop: a non-numeric `step` falls back to 1 in the reference
// (`_to_number(step)` is None → step = 1.0; spec §4.6.6 "step default 1";
// only start/end are required to be numeric). Ours failed the run with
// "For loop requires numeric 'start' and 'end'.".
func TestForNonNumericStepDefaultsToOne(t *testing.T) {
	st := runFlowOnce(t, recordingLoopFlow("", `{"id": "L", "type": "for", "data": {"pinDefaults": {"start": 0, "end": 3, "step": ""},
	  "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "start", "type": "number"}, {"id": "end", "type": "number"}, {"id": "step", "type": "number"}],
	  "outputs": [{"id": "loop", "type": "execution"}, {"id": "done", "type": "execution"}, {"id": "i", "type": "number"}, {"id": "index", "type": "number"}]}}`, "i"), map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if st.Output["success"] != true || jsonText(t, st.Output["last"]) != "2.0" {
		t.Fatalf("for with step \"\": output=%s, want last=2.0 and success=true (step defaults to 1)", jsonText(t, st.Output))
	}
}

// on_flow_start receiving a non-object input (inputKey naming a string
// var) with two declared data pins: spec §4.10 "non-object input: the
// single declared pin (or `input`) receives the value" — with two pins the
// value goes to `input`. Ours put it in the first pin.
func TestFlowStartNonObjectInputManyPins(t *testing.T) {
	st := runFlowOnce(t, `{
	  "id": "f", "entryNode": "start",
	  "nodes": [
	    {"id": "start", "type": "on_flow_start", "data": {"inputKey": "msg",
	      "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "a", "type": "string"}, {"id": "b", "type": "string"}]}}
	  ],
	  "edges": []}`, map[string]any{"msg": "hi"})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if st.Output["input"] != "hi" || st.Output["a"] != nil {
		t.Fatalf("on_flow_start with 2 pins and a string input: output=%s, want {input: \"hi\", success: true}", jsonText(t, st.Output))
	}
}

// concatExecFlow runs concat as an exec node on the var msg (inputKey),
// with nothing wired to its pins.
const concatExecFlow = `{
  "id": "f", "entryNode": "start",
  "nodes": [
    {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},
    {"id": "cat", "type": "concat", "data": {"inputKey": "msg",
      "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "a", "type": "string"}, {"id": "b", "type": "string"}],
      "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "result", "type": "string"}]}}
  ],
  "edges": [{"source": "start", "sourceHandle": "exec-out", "target": "cat", "targetHandle": "exec-in"}]}`

// concat as an exec node receiving a non-object input (nothing resolved,
// inputKey naming a string var): spec §6.5 "Non-object input →
// str(input)". Ours passed {"input": x} to the builtin and returned "".
func TestConcatNonObjectInput(t *testing.T) {
	st := runFlowOnce(t, concatExecFlow,
		map[string]any{"msg": "hi"})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if st.Output["response"] != "hi" {
		t.Fatalf("concat of a string input: output=%s, want response \"hi\"", jsonText(t, st.Output))
	}
}

// make_array as an exec node receiving a non-object input: spec §6.7
// "Non-object input → list conversion" (a list is copied, a scalar
// becomes [x]). Ours returned [].
func TestMakeArrayNonObjectInput(t *testing.T) {
	st := runFlowOnce(t, `{
	  "id": "f", "entryNode": "start",
	  "nodes": [
	    {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},
	    {"id": "arr", "type": "make_array", "data": {"inputKey": "msg",
	      "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "a", "type": "any"}, {"id": "b", "type": "any"}],
	      "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "result", "type": "array"}]}}
	  ],
	  "edges": [{"source": "start", "sourceHandle": "exec-out", "target": "arr", "targetHandle": "exec-in"}]}`,
		map[string]any{"msg": "hi"})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if got := jsonText(t, st.Output["response"]); got != "[\n  \"hi\"\n]" {
		t.Fatalf("make_array of a string input: output=%s, want response [\"hi\"]", jsonText(t, st.Output))
	}
}

// Switch whose `value` pin is unwired after a node that put a scalar on
// the bus: same root cause as the If case — the reference's
// `_create_switch_handler` uses the input itself as the value when it is
// not an object. Ours read value from a nil map and always went `default`.
func TestSwitchValueFromScalarBus(t *testing.T) {
	st := runFlowOnce(t, `{
	  "id": "f", "entryNode": "start",
	  "nodes": [
	    {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},
	    {"id": "code", "type": "code", "data": {"codeBody": "return 'b'",
	      "inputs": [{"id": "exec-in", "type": "execution"}],
	      "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "output", "type": "any"}]}},
	    {"id": "sw", "type": "switch", "data": {"switchConfig": {"cases": [{"id": "x", "value": "b"}]},
	      "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "value", "type": "any"}],
	      "outputs": [{"id": "default", "type": "execution"}, {"id": "case:x", "type": "execution"}]}}
	  ],
	  "edges": [
	    {"source": "start", "sourceHandle": "exec-out", "target": "code", "targetHandle": "exec-in"},
	    {"source": "code", "sourceHandle": "exec-out", "target": "sw", "targetHandle": "exec-in"}
	  ]}`, map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if b := st.Output["branch"]; b != "case:x" {
		t.Fatalf("switch on a scalar bus took branch %v, want \"case:x\"; output=%s", b, jsonText(t, st.Output))
	}
}

// While with an unwired `condition` after a node that put a truthy scalar
// on the bus: the scalar is the condition (§4.2 step 4). The first
// iteration puts an object on the bus, whose missing `condition` then
// ends the loop: one iteration. Ours ran none.
func TestWhileConditionFromScalarBus(t *testing.T) {
	st := runFlowOnce(t, recordingLoopFlow("return 1", `{"id": "L", "type": "while", "data": {
	  "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "condition", "type": "boolean"}],
	  "outputs": [{"id": "loop", "type": "execution"}, {"id": "done", "type": "execution"},
	              {"id": "item", "type": "any"}, {"id": "index", "type": "number"}]}}`, "item"), map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if got := jsonText(t, st.Output["last"]); got != "1" {
		t.Fatalf("while on a truthy scalar bus: output.last = %s, want 1 (one iteration with the bus as item); output=%s", got, jsonText(t, st.Output))
	}
}
