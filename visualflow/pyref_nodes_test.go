package visualflow

// VisualFlow node execution checked against the Python reference
// (lpalbou/AbstractRuntime, src/abstractruntime/visualflow_compiler):
// each test quotes what the reference does and where, and "ours"
// describes the divergence the test guards against.

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// forFlowWithEnd is start → F (for, start=0, `end` wired from a pure
// divide a/b with the given pinDefaults) → loop body set_var x=1; done →
// on_flow_end.
func forFlowWithEnd(divDefaults string) string {
	return `{"id": "f", "entryNode": "start", "nodes": [
	  {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},
	  {"id": "div", "type": "divide", "data": {"pinDefaults": ` + divDefaults + `,
	    "inputs": [{"id": "a", "type": "number"}, {"id": "b", "type": "number"}],
	    "outputs": [{"id": "result", "type": "number"}]}},
	  {"id": "F", "type": "for", "data": {"pinDefaults": {"start": 0},
	    "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "start", "type": "number"}, {"id": "end", "type": "number"}, {"id": "step", "type": "number"}],
	    "outputs": [{"id": "loop", "type": "execution"}, {"id": "done", "type": "execution"}, {"id": "i", "type": "number"}, {"id": "index", "type": "number"}]}},
	  {"id": "set", "type": "set_var", "data": {"pinDefaults": {"name": "x", "value": 1},
	    "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "name", "type": "string"}, {"id": "value", "type": "any"}],
	    "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "value", "type": "any"}]}},
	  {"id": "end", "type": "on_flow_end", "data": {"inputs": [{"id": "exec-in", "type": "execution"}]}}
	],
	"edges": [
	  {"source": "start", "sourceHandle": "exec-out", "target": "F", "targetHandle": "exec-in"},
	  {"source": "div", "sourceHandle": "result", "target": "F", "targetHandle": "end"},
	  {"source": "F", "sourceHandle": "loop", "target": "set", "targetHandle": "exec-in"},
	  {"source": "F", "sourceHandle": "done", "target": "end", "targetHandle": "exec-in"}
	]}`
}

// TestPyRefForRangeResolutionErrorFailsRun: an exception while resolving
// a For node's range (here: the pure `divide` feeding `end` divides by
// zero) fails the run.
//
// Python: compiler.py compile_flow, the `for` branch, `_resolve_range`:
//
//	except Exception as e:
//	    run.vars["_flow_error"] = f"For range resolution failed: {e}"
//	    run.vars["_flow_error_node"] = _node_id
//	    raise
//
// and control_adapter.create_for_node_handler does not catch it, so the
// tick raises and the run is failed (spec §4.8: "loop/for/while input
// resolution | the step raises → ... the run failed"). runLoop and
// runWhile do this; runFor instead calls failWith(n, err.Error()), so the
// run *completes* with {success:false} (and, inside a control block, the
// control-return rule even resumes the parent scheduler).
func TestPyRefForRangeResolutionErrorFailsRun(t *testing.T) {
	_, st := startRunWith(t, mustFlow(t, forFlowWithEnd(`{"a": 1, "b": 0}`)), CompileOptions{}, map[string]any{})
	if st.Status != durable.RunFailed {
		t.Errorf("status = %s, output = %s; Python fails the run (the For range resolution raises)", st.Status, jsonText(t, st.Output))
	}
	if got, want := st.Vars["_flow_error"], "For range resolution failed: Division by zero"; got != want {
		t.Errorf("_flow_error = %#v, want %q", got, want)
	}
}

// TestPyRefForBadRangeInsideSequenceReturnsToSequence: a For node whose
// `start` is missing, reached from a Sequence branch, ends that branch
// only; the Sequence then runs its next branch.
//
// Python: control_adapter.create_for_node_handler validates start/end
// *before* creating the frame and pushing the node on the control stack:
//
//	if start is None or end is None:
//	    run.vars["_flow_error"] = "For loop requires numeric 'start' and 'end'."
//	    ...
//	    return StepPlan(node_id=node_id, complete_output={"success": False, ...})
//	...
//	frame = {"kind": "for", ...}; frames[node_id] = frame; stack.append(node_id)
//
// so compiler._wrap_return_to_active_control sees the Sequence as the
// active control node and turns the completion into a return to it; the
// run goes on to then:1. Ours pushes the For (enterFrame) before
// validating, so the For itself is the active control node, the
// control-return rule does not apply and the whole run completes with
// success:false (leaving a stale "for" frame and stack entry in vars).
func TestPyRefForBadRangeInsideSequenceReturnsToSequence(t *testing.T) {
	flow := forInSequenceFlow(`{"end": 3}`)
	_, st := startRunWith(t, mustFlow(t, flow), CompileOptions{}, map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status = %s (%s)", st.Status, st.Error)
	}
	if st.Vars["second"] != true {
		t.Errorf("then:1 did not run (vars.second = %#v); output = %s; Python returns to the Sequence after the For's validation error", st.Vars["second"], jsonText(t, st.Output))
	}
	if st.Output["success"] != true {
		t.Errorf("output = %s; Python completes through the Sequence with success:true", jsonText(t, st.Output))
	}
}

// setVarFlow is start → one variable writer of type typ with the given
// pinDefaults and input pins (terminal).
func setVarFlow(typ, defaults, pins string) string {
	return `{"id": "f", "entryNode": "start", "nodes": [
	  {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},
	  {"id": "w", "type": "` + typ + `", "data": {"pinDefaults": ` + defaults + `,
	    "inputs": [{"id": "exec-in", "type": "execution"}, ` + pins + `],
	    "outputs": [{"id": "exec-out", "type": "execution"}]}}
	],
	"edges": [{"source": "start", "sourceHandle": "exec-out", "target": "w", "targetHandle": "exec-in"}]}`
}

const setVarPins = `{"id": "name", "type": "string"}, {"id": "value", "type": "any"}`

// TestPyRefSetVarDottedNameSkipsEmptySegments: set_var writes a dotted
// name ignoring empty segments ("a..b" is a.b, "user." is user).
//
// Python: adapters/variable_adapter.py `_set_by_path`:
//
//	parts = [p for p in dotted_key.split(".") if p]
//	if not parts:
//	    raise ValueError("Variable name must be non-empty")
//
// Ours (pyval.SetDotted) keeps the empty segments: "a..b" writes
// vars.a[""].b, and "user." replaces vars.user with {"": value}.
func TestPyRefSetVarDottedNameSkipsEmptySegments(t *testing.T) {
	for _, tc := range []struct{ name, key, want string }{
		{"a..b", "a", `{"b": 1}`},
		{"user.", "user", `1`},
	} {
		_, st := startRunWith(t, mustFlow(t, setVarFlow("set_var", `{"name": "`+tc.name+`", "value": 1}`, setVarPins)),
			CompileOptions{}, map[string]any{"user": map[string]any{"old": true}})
		if got, want := jsonText(t, st.Vars[tc.key]), jsonText(t, mustJSON(t, tc.want)); got != want {
			t.Errorf("set_var name %q: vars.%s = %s, want %s (Python skips empty path segments)", tc.name, tc.key, got, want)
		}
	}
}

// TestPyRefSetVarDotOnlyNameFails: a name made only of dots passes the
// non-empty check but has no segment: Python's `_set_by_path` raises
// ValueError("Variable name must be non-empty"), which the set_var
// handler (variable_adapter.create_set_var_node_handler) turns into
//
//	run.vars["_flow_error"] = f"Failed to set variable '{name}': {e}"
//	return StepPlan(..., complete_output={"success": False, "error": ..., "node": node_id})
//
// Ours writes vars[""] = {"": value} and succeeds.
func TestPyRefSetVarDotOnlyNameFails(t *testing.T) {
	_, st := startRunWith(t, mustFlow(t, setVarFlow("set_var", `{"name": ".", "value": 1}`, setVarPins)), CompileOptions{}, map[string]any{})
	want := "Failed to set variable '.': Variable name must be non-empty"
	if st.Output["success"] != false || st.Vars["_flow_error"] != want {
		t.Errorf("output = %s, _flow_error = %#v; Python completes with success:false and _flow_error %q", jsonText(t, st.Output), st.Vars["_flow_error"], want)
	}
	if _, ok := st.Vars[""]; ok {
		t.Errorf("vars[\"\"] = %s was written; Python writes nothing", jsonText(t, st.Vars[""]))
	}
}

// TestPyRefSetVarsEmptyKeyMessage: set_vars with a blank key in updates
// fails with its own message.
//
// Python: variable_adapter.create_set_vars_node_handler:
//
//	if not name:
//	    run.vars["_flow_error"] = "Set Variables requires non-empty variable names in updates."
//
// Ours reuses set_var's "Set Variable requires a non-empty variable name."
// (the spec's "errors as set_var" is looser than the reference).
func TestPyRefSetVarsEmptyKeyMessage(t *testing.T) {
	_, st := startRunWith(t, mustFlow(t, setVarFlow("set_vars", `{"updates": {"  ": 1, "ok": 2}}`, `{"id": "updates", "type": "object"}`)), CompileOptions{}, map[string]any{})
	want := "Set Variables requires non-empty variable names in updates."
	if st.Vars["_flow_error"] != want || st.Output["error"] != want {
		t.Errorf("_flow_error = %#v, output = %s; want error %q", st.Vars["_flow_error"], jsonText(t, st.Output), want)
	}
}

// TestPyRefSetVarsPersistsTrimmedKeys: the persisted `updates` output of
// set_vars holds the trimmed names that were written.
//
// Python: create_set_vars_node_handler builds
// `normalized[name] = v` with `name = (k ...).strip()` and persists
// `_persist_node_output(run.vars, node_id, {"updates": normalized})`.
// Ours persists the raw updates object (untrimmed keys).
func TestPyRefSetVarsPersistsTrimmedKeys(t *testing.T) {
	_, st := startRunWith(t, mustFlow(t, setVarFlow("set_vars", `{"updates": {" a ": 1}}`, `{"id": "updates", "type": "object"}`)), CompileOptions{}, map[string]any{})
	rec := st.Vars["_temp"].(map[string]any)["node_outputs"].(map[string]any)["w"]
	if got, want := jsonText(t, rec), jsonText(t, map[string]any{"updates": map[string]any{"a": int64(1)}}); got != want {
		t.Errorf("node_outputs.w = %s, want %s", got, want)
	}
}

// TestPyRefSetVarPropertyKeySkipsEmptySegments: set_var_property's key
// path skips empty segments.
//
// Python: variable_adapter.py `_set_on_object`:
//
//	parts = [p for p in str(dotted_key or "").split(".") if p]
//
// so key "hp." sets state.hp. Ours writes state.hp = {"": value}.
func TestPyRefSetVarPropertyKeySkipsEmptySegments(t *testing.T) {
	_, st := startRunWith(t, mustFlow(t, setVarFlow("set_var_property", `{"name": "state", "key": "hp.", "value": 5}`,
		`{"id": "name", "type": "string"}, {"id": "key", "type": "string"}, {"id": "value", "type": "any"}`)),
		CompileOptions{}, map[string]any{"state": map[string]any{"hp": int64(1)}})
	if got, want := jsonText(t, st.Vars["state"]), jsonText(t, map[string]any{"hp": int64(5)}); got != want {
		t.Errorf("vars.state = %s, want %s", got, want)
	}
}

func mustJSON(t *testing.T, s string) any {
	t.Helper()
	return mustFlow(t, `{"v": `+s+`}`)["v"]
}

// TestPyRefExecBuiltinNonObjectInput: an exec-pinned builtin node whose
// input is not an object (nothing resolved; here inputKey names a scalar
// var) receives that value under the pins "value", "a" and "text".
//
// Python: visual/executor.py `_wrap_builtin`:
//
//	if isinstance(input_data, dict):
//	    inputs = input_data.copy()
//	else:
//	    inputs = {"value": input_data, "a": input_data, "text": input_data}
//
// so uppercase("hi") is "HI" and abs(-3) is 3.0. Ours passes
// {"input": x}, so the builtin sees its pins as missing ("" and 0.0).
func TestPyRefExecBuiltinNonObjectInput(t *testing.T) {
	for _, tc := range []struct {
		typ, pin string
		in       any
		want     any
	}{
		{"uppercase", "text", "hi", "HI"},
		{"abs", "value", int64(-3), 3.0},
	} {
		st := runFlowOnce(t, `{
		  "id": "f", "entryNode": "start",
		  "nodes": [
		    {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},
		    {"id": "b", "type": "`+tc.typ+`", "data": {"inputKey": "msg",
		      "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "`+tc.pin+`", "type": "any"}],
		      "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "result", "type": "any"}]}}
		  ],
		  "edges": [{"source": "start", "sourceHandle": "exec-out", "target": "b", "targetHandle": "exec-in"}]}`,
			map[string]any{"msg": tc.in})
		if st.Status != durable.RunCompleted {
			t.Fatalf("%s: status %s (%s)", tc.typ, st.Status, st.Error)
		}
		if st.Output["response"] != tc.want {
			t.Errorf("%s on %#v: output = %s, want response %#v", tc.typ, tc.in, jsonText(t, st.Output), tc.want)
		}
	}
}

// TestPyRefForGuardInsideSequenceReturnsToSequence: when a For exceeds
// max_iterations inside a Sequence branch, Python drops the For's frame
// and stack entry before completing:
//
//	if max_iterations > 0 and idx >= max_iterations:
//	    run.vars["_flow_error"] = f"For loop exceeded max_iterations={max_iterations}"
//	    frames.pop(node_id, None)
//	    stack[:] = [x for x in stack if x != node_id]
//	    return StepPlan(node_id=node_id, complete_output={"success": False, ...})
//
// (control_adapter.create_for_node_handler; the While guard is the same),
// so _wrap_return_to_active_control sends control back to the Sequence,
// which runs then:1. Ours keeps the For on the stack, so the run
// completes with success:false and then:1 never runs.
func TestPyRefForGuardInsideSequenceReturnsToSequence(t *testing.T) {
	flow := forInSequenceFlow(`{"start": 0, "end": 20000}`)
	_, st := startRunWith(t, mustFlow(t, flow), CompileOptions{}, map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status = %s (%s)", st.Status, st.Error)
	}
	if st.Vars["_flow_error"] != "For loop exceeded max_iterations=10000" {
		t.Fatalf("_flow_error = %#v", st.Vars["_flow_error"])
	}
	if st.Vars["second"] != true || st.Output["success"] != true {
		t.Errorf("vars.second = %#v, output = %s; Python returns to the Sequence after the guard and runs then:1", st.Vars["second"], jsonText(t, st.Output))
	}
}

// TestPyRefLLMCallIntPinsUseStrictInt: the real basic-llm-test bundle
// wires its start pins `seed` and `max_in_tokens` into an llm_call. The
// reference parses both with a plain int() (visual/executor.py
// _create_llm_call_handler):
//
//	seed_value = int(seed_value_raw)      # except → -1 (no params.seed)
//	parsed = int(raw_max_in)              # except → None (no max_input_tokens)
//
// int("7.5") and int("1000.0") raise, so a caller passing those strings
// gets no seed and no max_input_tokens. Ours uses int(float(x)) and sends
// seed 7 and max_input_tokens 1000.
func TestPyRefLLMCallIntPinsUseStrictInt(t *testing.T) {
	llm := &scripted{results: []any{map[string]any{"content": "ok"}}}
	_, st := runSharedBundle(t, "basic-llm-test@0.0.0",
		map[string]any{"prompt": "hi", "provider": "p", "model": "m", "seed": "7.5", "max_in_tokens": "1000.0"},
		map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()})
	if st.Status != durable.RunCompleted || len(llm.payloads) != 1 {
		t.Fatalf("status = %s (%s), llm calls = %d", st.Status, st.Error, len(llm.payloads))
	}
	p := llm.payloads[0]
	if params, _ := p["params"].(map[string]any); params["seed"] != nil {
		t.Errorf("params.seed = %#v for seed \"7.5\"; Python sends no seed (int(\"7.5\") raises)", params["seed"])
	}
	if v, ok := p["max_input_tokens"]; ok {
		t.Errorf("max_input_tokens = %#v for max_in_tokens \"1000.0\"; Python sends none (int(\"1000.0\") raises)", v)
	}
}

// forInSequenceFlow is start → sequence: then:0 a for node F (pinDefaults
// forDefaults) whose loop body sets vars.looped, then:1 sets vars.second.
func forInSequenceFlow(forDefaults string) string {
	return `{"id": "f", "entryNode": "start", "nodes": [
	  {"id": "start", "type": "on_flow_start", "data": {"outputs": [{"id": "exec-out", "type": "execution"}]}},
	  {"id": "seq", "type": "sequence", "data": {
	    "inputs": [{"id": "exec-in", "type": "execution"}],
	    "outputs": [{"id": "then:0", "type": "execution"}, {"id": "then:1", "type": "execution"}]}},
	  {"id": "F", "type": "for", "data": {"pinDefaults": ` + forDefaults + `,
	    "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "start", "type": "number"}, {"id": "end", "type": "number"}, {"id": "step", "type": "number"}],
	    "outputs": [{"id": "loop", "type": "execution"}, {"id": "done", "type": "execution"}, {"id": "i", "type": "number"}, {"id": "index", "type": "number"}]}},
	  {"id": "body", "type": "set_var", "data": {"pinDefaults": {"name": "looped", "value": true},
	    "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "name", "type": "string"}, {"id": "value", "type": "any"}],
	    "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "value", "type": "any"}]}},
	  {"id": "second", "type": "set_var", "data": {"pinDefaults": {"name": "second", "value": true},
	    "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "name", "type": "string"}, {"id": "value", "type": "any"}],
	    "outputs": [{"id": "exec-out", "type": "execution"}, {"id": "value", "type": "any"}]}}
	],
	"edges": [
	  {"source": "start", "sourceHandle": "exec-out", "target": "seq", "targetHandle": "exec-in"},
	  {"source": "seq", "sourceHandle": "then:0", "target": "F", "targetHandle": "exec-in"},
	  {"source": "seq", "sourceHandle": "then:1", "target": "second", "targetHandle": "exec-in"},
	  {"source": "F", "sourceHandle": "loop", "target": "body", "targetHandle": "exec-in"}
	]}`
}
