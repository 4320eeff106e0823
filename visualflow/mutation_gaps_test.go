package visualflow

// Tests added by a mutation-testing pass over visualflow: each guards a
// promised behaviour of spec visualflow.md that no other test checked.

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
)

const forPins = `"inputs": [{"id": "exec-in", "type": "execution"}, {"id": "start", "type": "number"}, {"id": "end", "type": "number"}, {"id": "step", "type": "number"}],
	  "outputs": [{"id": "loop", "type": "execution"}, {"id": "done", "type": "execution"}, {"id": "i", "type": "number"}, {"id": "index", "type": "number"}, {"id": "total", "type": "number"}]`

// §4.6.6: total = ceil((end-start)/step), so 0..5 by 2 has 3 iterations
// and reports total 3.
func TestForTotalIsCeilingOfRangeOverStep(t *testing.T) {
	st := runFlowOnce(t, recordingLoopFlow("", `{"id": "L", "type": "for", "data": {"pinDefaults": {"start": 0, "end": 5, "step": 2}, `+forPins+`}}`, "total"), map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if got := jsonText(t, st.Output["last"]); got != "3" {
		t.Fatalf("for 0..5 step 2: total = %s, want 3 (ceil(5/2))", got)
	}
}

// §4.6.6: with a negative step the loop stops when i <= end (end
// exclusive): 5..0 by -1 visits 5,4,3,2,1, never 0.
func TestForNegativeStepIsEndExclusive(t *testing.T) {
	st := runFlowOnce(t, recordingLoopFlow("", `{"id": "L", "type": "for", "data": {"pinDefaults": {"start": 5, "end": 0, "step": -1}, `+forPins+`}}`, "i"), map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if got := jsonText(t, st.Output["last"]); got != "1.0" {
		t.Fatalf("for 5..0 step -1: last i = %s, want 1.0 (end exclusive)", got)
	}
}

// §4.6.5: ForEach over null items iterates zero times (null → []), not
// once over [null].
func TestLoopOverNullItemsRunsNoIteration(t *testing.T) {
	st := runFlowOnce(t, recordingLoopFlow("", `{"id": "L", "type": "loop", "data": {"pinDefaults": {"items": null},
	  "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "items", "type": "array"}],
	  "outputs": [{"id": "loop", "type": "execution"}, {"id": "done", "type": "execution"}, {"id": "item", "type": "any"}, {"id": "index", "type": "number"}]}}`, "index"), map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if last, ok := st.Output["last"]; !ok || last != nil {
		t.Fatalf("loop over null items: output = %s, want last=null (no iteration ran)", jsonText(t, st.Output))
	}
}

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

// §4.6.7: re-entering a while through an explicit exec edge restarts its
// frame, so its index starts again at 0 on every re-entry.
func TestWhileReenteredByExecEdgeRestartsIndex(t *testing.T) {
	flow := `{"id": "f", "entryNode": "start", "nodes": [
	  {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},
	  {"id": "gn", "type": "get_var", "data": {"pinDefaults": {"name": "n"}, "inputs": [{"id": "name", "type": "string"}], "outputs": [{"id": "value", "type": "any"}]}},
	  {"id": "lt", "type": "compare", "data": {"pinDefaults": {"b": 3, "op": "<"},
	    "inputs": [{"id": "a", "type": "number"}, {"id": "b", "type": "number"}, {"id": "op", "type": "string"}], "outputs": [{"id": "result", "type": "boolean"}]}},
	  {"id": "plus", "type": "add", "data": {"pinDefaults": {"b": 1},
	    "inputs": [{"id": "a", "type": "number"}, {"id": "b", "type": "number"}], "outputs": [{"id": "result", "type": "number"}]}},
	  {"id": "W", "type": "while", "data": {
	    "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "condition", "type": "boolean"}],
	    "outputs": [{"id": "loop", "type": "execution"}, {"id": "done", "type": "execution"}, {"id": "item", "type": "any"}, {"id": "index", "type": "number"}]}},
	  {"id": "inc", "type": "set_var", "data": {"pinDefaults": {"name": "n"},
	    "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "name", "type": "string"}, {"id": "value", "type": "any"}],
	    "outputs": [{"id": "exec-out", "type": "execution"}]}},
	  {"id": "rec", "type": "set_var", "data": {"pinDefaults": {"name": "idx"},
	    "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "name", "type": "string"}, {"id": "value", "type": "any"}],
	    "outputs": [{"id": "exec-out", "type": "execution"}]}},
	  {"id": "end", "type": "on_flow_end", "data": {"inputs": [{"id": "exec-in", "type": "execution"}]}}
	],
	"edges": [
	  {"source": "start", "sourceHandle": "exec-out", "target": "W", "targetHandle": "exec-in"},
	  {"source": "gn", "sourceHandle": "value", "target": "lt", "targetHandle": "a"},
	  {"source": "lt", "sourceHandle": "result", "target": "W", "targetHandle": "condition"},
	  {"source": "gn", "sourceHandle": "value", "target": "plus", "targetHandle": "a"},
	  {"source": "plus", "sourceHandle": "result", "target": "inc", "targetHandle": "value"},
	  {"source": "W", "sourceHandle": "index", "target": "rec", "targetHandle": "value"},
	  {"source": "W", "sourceHandle": "loop", "target": "inc", "targetHandle": "exec-in"},
	  {"source": "inc", "sourceHandle": "exec-out", "target": "rec", "targetHandle": "exec-in"},
	  {"source": "rec", "sourceHandle": "exec-out", "target": "W", "targetHandle": "exec-in"},
	  {"source": "W", "sourceHandle": "done", "target": "end", "targetHandle": "exec-in"}
	]}`
	st := runFlowOnce(t, flow, map[string]any{"n": int64(0)})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if got := jsonText(t, st.Vars["n"]); got != "3.0" {
		t.Fatalf("vars.n = %s, want 3.0 (three passes)", got)
	}
	if got := jsonText(t, st.Vars["idx"]); got != "0" {
		t.Fatalf("while index on the last explicit re-entry = %s, want 0 (the frame restarts)", got)
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

// §3.1/§6.12: a target entered from two exec handles of one node (both
// branches of an `if`) takes the overridden input wired for the handle
// actually taken: the join picks its route by prev_exec_handle, not by
// the source node alone (which would always give the first route).
func TestJoinPicksTheRouteOfTheHandleTaken(t *testing.T) {
	for _, cond := range []string{"True", "False"} {
		st := runFlowOnce(t, `{"id": "f", "entryNode": "start", "nodes": [
		  {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},
		  {"id": "code", "type": "code", "data": {"codeBody": "return `+cond+`",
		    "inputs": [{"id": "exec-in", "type": "execution"}],
		    "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "output", "type": "any"}]}},
		  {"id": "if", "type": "if", "data": {
		    "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "condition", "type": "boolean"}],
		    "outputs": [{"id": "true", "type": "execution"}, {"id": "false", "type": "execution"}]}},
		  {"id": "yes", "type": "literal_string", "data": {"literalValue": "took true", "outputs": [{"id": "value", "type": "string"}]}},
		  {"id": "no", "type": "literal_string", "data": {"literalValue": "took false", "outputs": [{"id": "value", "type": "string"}]}},
		  {"id": "end", "type": "on_flow_end", "data": {
		    "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "branch", "type": "string"}],
		    "inputRouteOverrides": {"branch": {
		      "if::true": {"sourceNodeId": "yes", "sourceHandle": "value"},
		      "if::false": {"sourceNodeId": "no", "sourceHandle": "value"}}}}}
		],
		"edges": [
		  {"source": "start", "sourceHandle": "exec-out", "target": "code", "targetHandle": "exec-in"},
		  {"source": "code", "sourceHandle": "exec-out", "target": "if", "targetHandle": "exec-in"},
		  {"source": "code", "sourceHandle": "output", "target": "if", "targetHandle": "condition"},
		  {"source": "if", "sourceHandle": "true", "target": "end", "targetHandle": "exec-in"},
		  {"source": "if", "sourceHandle": "false", "target": "end", "targetHandle": "exec-in"}
		]}`, map[string]any{})
		if st.Status != durable.RunCompleted {
			t.Fatalf("condition %s: status %s (%s)", cond, st.Status, st.Error)
		}
		if want := "took " + strings.ToLower(cond); st.Output["branch"] != want {
			t.Fatalf("condition %s: output = %s, want branch = %q", cond, jsonText(t, st.Output), want)
		}
	}
}
