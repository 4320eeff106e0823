package visualflow

// Tests added by a mutation-testing pass over VisualFlow scheduling and
// data flow (sched.go, control.go, join.go, lower.go, resolve.go,
// state.go, writers.go, function.go): each guards a behaviour promised by
// spec visualflow.md (or a doc comment) that no other test checked.

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// mvsStart is an on_flow_start with no data pins.
func mvsStart() map[string]any {
	return rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil)
}

// mvsSetVar is a set_var writing name (value from its pins or defaults).
func mvsSetVar(id, name string, defaults map[string]any) map[string]any {
	d := map[string]any{"name": name}
	for k, v := range defaults {
		d[k] = v
	}
	return rsNode(id, "set_var", []string{"exec-in:exec", "name:string", "value:any"}, []string{"exec-out:exec", "value:any"},
		map[string]any{"pinDefaults": d})
}

// mvsLiteral is a literal_string node.
func mvsLiteral(id, value string) map[string]any {
	return rsNode(id, "literal_string", nil, []string{"value:string"}, map[string]any{"literalValue": value})
}

// mvsCompare is a compare node "a <op> b" with b and op as defaults.
func mvsCompare(id, op string, b int) map[string]any {
	return rsNode(id, "compare", []string{"a:number", "b:number", "op:string"}, []string{"result:boolean"},
		map[string]any{"pinDefaults": map[string]any{"b": int64(b), "op": op}})
}

// mvsGetVar is a get_var pure node reading name.
func mvsGetVar(id, name string) map[string]any {
	return rsNode(id, "get_var", []string{"name:string"}, []string{"value:any"},
		map[string]any{"pinDefaults": map[string]any{"name": name}})
}

// mvsWhile is a while node.
func mvsWhile(id string, defaults map[string]any) map[string]any {
	return rsNode(id, "while", []string{"exec-in:exec", "condition:boolean"},
		[]string{"loop:exec", "done:exec", "item:any", "index:number"}, map[string]any{"pinDefaults": defaults})
}

func mvsRun(t *testing.T, flow map[string]any, vars map[string]any) *durable.RunState {
	t.Helper()
	_, st := startRunWith(t, flow, CompileOptions{}, vars)
	return st
}

func mvsControl(st *durable.RunState) map[string]any {
	tmp, _ := st.Vars["_temp"].(map[string]any)
	c, _ := tmp["_control"].(map[string]any)
	return c
}

// §4.6.2: entering a scheduler on its return deletes return_to. A stale
// return_to left by an implicit branch end would make a later explicit
// re-entry (the chat-loop pattern) look like a return, so the while would
// continue its frame instead of restarting it at index 0.
func TestWhileExplicitReentryAfterImplicitReturnRestartsIndex(t *testing.T) {
	// while n < 3: n += 1; idx = W.index; if n < 2 the branch ends
	// (implicit return to W), else an exec edge goes back to W.
	flow := rsFlow("f", "start", []map[string]any{
		mvsStart(),
		mvsGetVar("gn", "n"),
		mvsCompare("lt3", "<", 3),
		mvsCompare("lt2", "<", 2),
		rsNode("plus", "add", []string{"a:number", "b:number"}, []string{"result:number"},
			map[string]any{"pinDefaults": map[string]any{"b": int64(1)}}),
		mvsWhile("W", map[string]any{}),
		mvsSetVar("inc", "n", nil),
		mvsSetVar("rec", "idx", nil),
		rsNode("chk", "if", []string{"exec-in:exec", "condition:boolean"}, []string{"true:exec", "false:exec"}, nil),
	},
		"start.exec-out>W.exec-in",
		"gn.value>lt3.a", "lt3.result>W.condition",
		"gn.value>plus.a", "plus.result>inc.value",
		"W.index>rec.value",
		"gn.value>lt2.a", "lt2.result>chk.condition",
		"W.loop>inc.exec-in", "inc.exec-out>rec.exec-in", "rec.exec-out>chk.exec-in",
		"chk.false>W.exec-in",
	)
	st := mvsRun(t, flow, map[string]any{"n": int64(0)})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if got := jsonText(t, st.Vars["n"]); got != "3.0" {
		t.Fatalf("vars.n = %s, want 3.0", got)
	}
	if got := jsonText(t, st.Vars["idx"]); got != "0" {
		t.Fatalf("while index after the last explicit re-entry = %s, want 0 (an implicit return earlier must not make later explicit re-entries count as returns)", got)
	}
}

// §4.6.2: an explicit re-entry restarts the frame without pushing the
// scheduler on the stack again, so a while re-entered by exec edges inside
// a Sequence branch, once its condition is false and with no done edge,
// hands control back to the Sequence, which runs its next branch.
func TestWhileReenteredByExecEdgeInsideSequenceReturnsToSequence(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		mvsStart(),
		rsNode("seq", "sequence", []string{"exec-in:exec"}, []string{"then:0:exec", "then:1:exec"}, nil),
		mvsGetVar("gn", "n"),
		mvsCompare("lt3", "<", 3),
		rsNode("plus", "add", []string{"a:number", "b:number"}, []string{"result:number"},
			map[string]any{"pinDefaults": map[string]any{"b": int64(1)}}),
		mvsWhile("W", map[string]any{}),
		mvsSetVar("inc", "n", nil),
		mvsSetVar("second", "second", map[string]any{"value": true}),
	},
		"start.exec-out>seq.exec-in",
		"seq.then:0>W.exec-in", "seq.then:1>second.exec-in",
		"gn.value>lt3.a", "lt3.result>W.condition",
		"gn.value>plus.a", "plus.result>inc.value",
		"W.loop>inc.exec-in", "inc.exec-out>W.exec-in",
	)
	st := mvsRun(t, flow, map[string]any{"n": int64(0)})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if st.Vars["second"] != true || st.Output["success"] != true {
		t.Fatalf("vars.second = %#v, output = %s; want the Sequence's then:1 run and success", st.Vars["second"], jsonText(t, st.Output))
	}
	if got := jsonText(t, st.Vars["n"]); got != "3.0" {
		t.Fatalf("vars.n = %s, want 3.0", got)
	}
}

// §4.6.2: a finishing scheduler deletes its frame and leaves the stack, so
// that once every control block is done the run vars hold no frame and an
// empty stack.
func TestFinishedSchedulersLeaveNoFramesOrStack(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		mvsStart(),
		rsNode("seq", "sequence", []string{"exec-in:exec"}, []string{"then:0:exec", "then:1:exec"}, nil),
		rsNode("L", "loop", []string{"exec-in:exec", "items:array"}, []string{"loop:exec", "done:exec", "item:any", "index:number"},
			map[string]any{"pinDefaults": map[string]any{"items": []any{int64(1), int64(2)}}}),
		mvsSetVar("body", "last", nil),
		mvsSetVar("second", "second", map[string]any{"value": true}),
	},
		"start.exec-out>seq.exec-in",
		"seq.then:0>L.exec-in", "seq.then:1>second.exec-in",
		"L.loop>body.exec-in", "L.item>body.value",
	)
	st := mvsRun(t, flow, map[string]any{})
	if st.Status != durable.RunCompleted || st.Vars["second"] != true {
		t.Fatalf("status %s (%s), vars.second = %#v", st.Status, st.Error, st.Vars["second"])
	}
	c := mvsControl(st)
	if frames, _ := c["frames"].(map[string]any); len(frames) != 0 {
		t.Errorf("_temp._control.frames = %s, want {} (finished schedulers delete their frames)", jsonText(t, c["frames"]))
	}
	if stack, _ := c["stack"].([]any); len(stack) != 0 {
		t.Errorf("_temp._control.stack = %s, want []", jsonText(t, c["stack"]))
	}
}

// viaFlow builds a scheduler sched whose two exec handles h1, h2 (edges in
// that order) both enter target X, whose input pin is overridden per route
// with a literal of the handle's name.
func viaFlow(sched map[string]any, h1, h2 string, target map[string]any, pin string) map[string]any {
	id := sched["id"].(string)
	data := target["data"].(map[string]any)
	data["inputRouteOverrides"] = map[string]any{pin: map[string]any{
		id + "::" + h1: map[string]any{"sourceNodeId": "lit1", "sourceHandle": "value"},
		id + "::" + h2: map[string]any{"sourceNodeId": "lit2", "sourceHandle": "value"},
	}}
	return rsFlow("f", "start", []map[string]any{mvsStart(), sched, target, mvsLiteral("lit1", h1), mvsLiteral("lit2", h2)},
		"start.exec-out>"+id+".exec-in", id+"."+h1+">X.exec-in", id+"."+h2+">X.exec-in")
}

func viaEnd() map[string]any {
	return rsNode("X", "on_flow_end", []string{"exec-in:exec", "via:string"}, nil, nil)
}

// §4.6.5/§4.6.2: a loop leaving by `done` records prev_exec_handle "done",
// so a target entered by both its loop and done handles takes the done
// route's overridden input.
func TestLoopDoneRecordsDoneHandleForTheJoin(t *testing.T) {
	loop := rsNode("L", "loop", []string{"exec-in:exec", "items:array"}, []string{"loop:exec", "done:exec", "item:any"},
		map[string]any{"pinDefaults": map[string]any{"items": []any{}}})
	st := mvsRun(t, viaFlow(loop, "loop", "done", viaEnd(), "via"), map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if st.Output["via"] != "done" {
		t.Fatalf("output = %s, want via = done (the join must see handle 'done')", jsonText(t, st.Output))
	}
}

// §4.6.3: a sequence records prev_exec_handle = then:N for the branch it
// dispatches, so a target entered from two of its handles takes the
// overridden input of the handle dispatched (then:0 first).
func TestSequenceRecordsThenHandleForTheJoin(t *testing.T) {
	seq := rsNode("S", "sequence", []string{"exec-in:exec"}, []string{"then:0:exec", "then:1:exec"}, nil)
	st := mvsRun(t, viaFlow(seq, "then:1", "then:0", viaEnd(), "via"), map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if st.Output["via"] != "then:0" {
		t.Fatalf("output = %s, want via = then:0 (the first branch dispatched)", jsonText(t, st.Output))
	}
}

// §4.6.4: after its branches a parallel records prev_exec_handle
// "completed" before going to its completed target, so a target entered
// by a branch handle and by `completed` takes the completed route's
// overridden input on its second (last) entry.
func TestParallelRecordsCompletedHandleForTheJoin(t *testing.T) {
	par := rsNode("P", "parallel", []string{"exec-in:exec"}, []string{"then:0:exec", "completed:exec"}, nil)
	st := mvsRun(t, viaFlow(par, "then:0", "completed", mvsSetVar("X", "via", nil), "value"), map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if st.Vars["via"] != "completed" {
		t.Fatalf("vars.via = %#v, want completed (X's last entry is by the completed handle)", st.Vars["via"])
	}
}

// §6.12: join_exec persists {which, from, from_handle} as its output and
// sets prev_exec_handle = "exec-out".
func TestJoinRecordsItsRouteAndExecOutHandle(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		mvsStart(),
		rsNode("if", "if", []string{"exec-in:exec", "condition:boolean"}, []string{"true:exec", "false:exec"},
			map[string]any{"pinDefaults": map[string]any{"condition": false}}),
		mvsSetVar("X", "v", map[string]any{"value": int64(1)}),
	}, "start.exec-out>if.exec-in", "if.true>X.exec-in", "if.false>X.exec-in")
	st := mvsRun(t, flow, map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	tmp, _ := st.Vars["_temp"].(map[string]any)
	outs, _ := tmp["node_outputs"].(map[string]any)
	rec, _ := outs[joinPrefix+"X"].(map[string]any)
	if len(rec) != 3 || jsonText(t, rec["which"]) != "1" || rec["from"] != "if" || rec["from_handle"] != "false" {
		t.Errorf("join record = %s, want {which: 1, from: if, from_handle: false}", jsonText(t, rec))
	}
	if tmp["prev_exec_handle"] != "exec-out" {
		t.Errorf("_temp.prev_exec_handle = %#v, want exec-out (set by the join; set_var does not change it)", tmp["prev_exec_handle"])
	}
}

// §3.1 step 2: entryRoutes naming a route that is not an incoming exec
// edge is stale metadata and refused, even when every edge is listed.
func TestEntryRoutesWithAnExtraRouteAreRefused(t *testing.T) {
	x := mvsSetVar("X", "v", map[string]any{"value": int64(1)})
	x["data"].(map[string]any)["entryRoutes"] = []any{
		map[string]any{"sourceNodeId": "if", "sourceHandle": "true"},
		map[string]any{"sourceNodeId": "if", "sourceHandle": "false"},
		map[string]any{"sourceNodeId": "start", "sourceHandle": "exec-out"},
	}
	flow := rsFlow("f", "start", []map[string]any{
		mvsStart(),
		rsNode("if", "if", []string{"exec-in:exec", "condition:boolean"}, []string{"true:exec", "false:exec"}, nil),
		x,
	}, "start.exec-out>if.exec-in", "if.true>X.exec-in", "if.false>X.exec-in")
	_, err := Compile(flow, CompileOptions{})
	if err == nil || !strings.Contains(err.Error(), "entryRoutes mismatch") {
		t.Fatalf("compile error = %v, want an entryRoutes mismatch", err)
	}
}

// overrideFlow is if(condition) → X (on_flow_end, pin via with the given
// pinDefaults) from both branches, via overridden for route if::true only.
func overrideFlow(cond bool, override map[string]any, xDefaults map[string]any) map[string]any {
	x := viaEnd()
	d := x["data"].(map[string]any)
	d["inputRouteOverrides"] = map[string]any{"via": map[string]any{"if::true": override}}
	if xDefaults != nil {
		d["pinDefaults"] = xDefaults
	}
	return rsFlow("f", "start", []map[string]any{
		mvsStart(),
		rsNode("if", "if", []string{"exec-in:exec", "condition:boolean"}, []string{"true:exec", "false:exec"},
			map[string]any{"pinDefaults": map[string]any{"condition": cond}}),
		x, mvsLiteral("lit", "overridden"),
	}, "start.exec-out>if.exec-in", "if.true>X.exec-in", "if.false>X.exec-in")
}

// §3.1 step 4: an overridden pin with no data edge keeps its pinDefaults
// value (as the mux fallback) on routes without an override.
func TestOverriddenPinKeepsItsDefaultOnOtherRoutes(t *testing.T) {
	st := mvsRun(t, overrideFlow(false, map[string]any{"sourceNodeId": "lit", "sourceHandle": "value"}, map[string]any{"via": "dflt"}), map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if st.Output["via"] != "dflt" {
		t.Fatalf("output = %s, want via = dflt (the pin default through the mux fallback)", jsonText(t, st.Output))
	}
}

// §3.1 step 4: an override names its source as sourceNodeId (alias
// source) and sourceHandle (alias handle).
func TestRouteOverrideAcceptsSourceAndHandleAliases(t *testing.T) {
	st := mvsRun(t, overrideFlow(true, map[string]any{"source": "lit", "handle": "value"}, nil), map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if st.Output["via"] != "overridden" {
		t.Fatalf("output = %s, want via = overridden (override given as {source, handle})", jsonText(t, st.Output))
	}
}

// §4.6.5: a loop whose items pin is unwired and has no default, after a
// node that left an empty object on the bus, iterates zero times: the
// object input has no items (it is not wrapped as [{}]).
func TestLoopAfterEmptyObjectBusRunsNoIteration(t *testing.T) {
	st := runFlowOnce(t, recordingLoopFlow("", `{"id": "L", "type": "loop", "data": {
	  "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "items", "type": "array"}],
	  "outputs": [{"id": "loop", "type": "execution"}, {"id": "done", "type": "execution"}, {"id": "item", "type": "any"}, {"id": "index", "type": "number"}]}}`, "index"), map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if last, ok := st.Output["last"]; !ok || last != nil {
		t.Fatalf("loop after an empty-object bus: output = %s, want last=null (no iteration)", jsonText(t, st.Output))
	}
}

// §4.6.5: the loop's iteration record carries total = len(items), read by
// its `total` pin.
func TestLoopIterationRecordHasTotal(t *testing.T) {
	st := runFlowOnce(t, recordingLoopFlow("", `{"id": "L", "type": "loop", "data": {"pinDefaults": {"items": ["a", "b", "c"]},
	  "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "items", "type": "array"}],
	  "outputs": [{"id": "loop", "type": "execution"}, {"id": "done", "type": "execution"}, {"id": "item", "type": "any"}, {"id": "index", "type": "number"}, {"id": "total", "type": "number"}]}}`, "total"), map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if got := jsonText(t, st.Output["last"]); got != "3" {
		t.Fatalf("loop over 3 items: total = %s, want 3", got)
	}
}

// §4.6.6: the For guard stops at index 10000: the last iteration run has
// index 9999 and the run completes with the guard's error.
func TestForGuardRunsExactlyTenThousandIterations(t *testing.T) {
	st := runFlowOnce(t, recordingLoopFlow("", `{"id": "L", "type": "for", "data": {"pinDefaults": {"start": 0, "end": 20000}, `+forPins+`}}`, "index"), map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if st.Vars["_flow_error"] != "For loop exceeded max_iterations=10000" || st.Output["success"] != false {
		t.Fatalf("_flow_error = %#v, output = %s", st.Vars["_flow_error"], jsonText(t, st.Output))
	}
	if got := jsonText(t, st.Vars["last"]); got != "9999" {
		t.Fatalf("last index run = %s, want 9999 (10000 iterations)", got)
	}
}

// §4.6.7: the While guard stops at iters 10000: the last iteration run has
// index 9999.
func TestWhileGuardRunsExactlyTenThousandIterations(t *testing.T) {
	st := runFlowOnce(t, recordingLoopFlow("", `{"id": "L", "type": "while", "data": {"pinDefaults": {"condition": true},
	  "inputs": [{"id": "exec-in", "type": "execution"}, {"id": "condition", "type": "boolean"}],
	  "outputs": [{"id": "loop", "type": "execution"}, {"id": "done", "type": "execution"}, {"id": "item", "type": "any"}, {"id": "index", "type": "number"}]}}`, "index"), map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if st.Vars["_flow_error"] != "While loop exceeded max_iterations=10000" {
		t.Fatalf("_flow_error = %#v", st.Vars["_flow_error"])
	}
	if got := jsonText(t, st.Vars["last"]); got != "9999" {
		t.Fatalf("last index run = %s, want 9999 (10000 iterations)", got)
	}
}

// docs/compatibility.md: a node whose base input falls back to the whole
// vars object gets a copy without _temp, so a data-less on_flow_end at the
// entry ends the run with the caller's vars, not the runtime's _temp.
func TestWholeVarsBaseInputLeavesOutTemp(t *testing.T) {
	flow := rsFlow("f", "end", []map[string]any{rsNode("end", "on_flow_end", []string{"exec-in:exec"}, nil, nil)})
	st := mvsRun(t, flow, map[string]any{"a": int64(1)})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if _, ok := st.Output["_temp"]; ok || jsonText(t, st.Output["a"]) != "1" {
		t.Fatalf("output = %s, want a=1 and no _temp", jsonText(t, st.Output))
	}
}

// §4.5: a pure node's connected pin whose source has produced nothing is
// absent: its pinDefaults entry is not applied (wires always win).
func TestPureNodeIgnoresDefaultOfConnectedUnresolvedPin(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		mvsStart(),
		mvsGetVar("gv", "x"),
		mvsSetVar("A", "seen", nil),
		mvsSetVar("B", "b", map[string]any{"value": "later"}),
	}, "start.exec-out>A.exec-in", "A.exec-out>B.exec-in", "gv.value>A.value", "B.value>gv.name")
	st := mvsRun(t, flow, map[string]any{"x": "secret"})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if v, ok := st.Vars["seen"]; !ok || v != nil {
		t.Fatalf("vars.seen = %s, want null (get_var's name is wired to a node that has not run)", jsonText(t, st.Vars["seen"]))
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

// §6.6: set_var with no value defaults it by the declared value pin type;
// number → 0.
func TestSetVarAbsentNumberValueIsZero(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		mvsStart(),
		rsNode("w", "set_var", []string{"exec-in:exec", "name:string", "value:number"}, []string{"exec-out:exec"},
			map[string]any{"pinDefaults": map[string]any{"name": "n"}}),
	}, "start.exec-out>w.exec-in")
	st := mvsRun(t, flow, map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if got := jsonText(t, st.Vars["n"]); got != "0" {
		t.Fatalf("vars.n = %s, want 0 (number pin zero value)", got)
	}
}

// §6.6: add_message with no role appends a message with role "user".
func TestAddMessageRoleDefaultsToUser(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		mvsStart(),
		rsNode("am", "add_message", []string{"exec-in:exec", "role:string", "content:string"}, []string{"exec-out:exec", "message:object"},
			map[string]any{"pinDefaults": map[string]any{"content": "hi"}}),
	}, "start.exec-out>am.exec-in")
	st := mvsRun(t, flow, map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	ctx, _ := st.Vars["context"].(map[string]any)
	msgs, _ := ctx["messages"].([]any)
	if len(msgs) != 1 {
		t.Fatalf("vars.context = %s, want one message", jsonText(t, st.Vars["context"]))
	}
	if m, _ := msgs[0].(map[string]any); m["role"] != "user" || m["content"] != "hi" {
		t.Fatalf("message = %s, want role user, content hi", jsonText(t, msgs[0]))
	}
}

// §4.4: memact_compose writes its record to the bus, so a data-less
// on_flow_end after it ends the run with that record.
func TestMemactComposeWritesTheBus(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		mvsStart(),
		rsNode("mc", "memact_compose", []string{"exec-in:exec", "kg_result:object"}, []string{"exec-out:exec", "ok:boolean"}, nil),
		rsNode("end", "on_flow_end", []string{"exec-in:exec"}, nil, nil),
	}, "start.exec-out>mc.exec-in", "mc.exec-out>end.exec-in")
	st := mvsRun(t, flow, map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if st.Output["ok"] != false || st.Output["error"] == nil {
		t.Fatalf("output = %s, want memact_compose's record (ok:false, error) from the bus", jsonText(t, st.Output))
	}
}

// §4.2 step 5: a function node with outputKey writes its result at that
// dotted path in vars.
func TestFunctionNodeOutputKeyWritesResult(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		mvsStart(),
		rsNode("p", "parse_json", []string{"exec-in:exec", "text:string"}, []string{"exec-out:exec", "result:any"},
			map[string]any{"outputKey": "res.parsed", "pinDefaults": map[string]any{"text": `{"x": 1}`}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec"}, nil, nil),
	}, "start.exec-out>p.exec-in", "p.exec-out>end.exec-in")
	st := mvsRun(t, flow, map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	res, _ := st.Vars["res"].(map[string]any)
	if got := jsonText(t, res["parsed"]); strings.Join(strings.Fields(got), "") != `{"x":1}` {
		t.Fatalf("vars.res = %s, want {parsed: {x: 1}}", jsonText(t, st.Vars["res"]))
	}
}

// §4.7: a switch whose chosen branch (default, or a case:*) has no edge
// ends the branch cleanly: the run completes with success:true.
func TestSwitchUnconnectedDefaultOrCaseEndsCleanly(t *testing.T) {
	for _, tc := range []struct{ value, branch string }{{"zzz", "default"}, {"x", "case:a"}} {
		flow := rsFlow("f", "start", []map[string]any{
			mvsStart(),
			rsNode("sw", "switch", []string{"exec-in:exec", "value:any"}, []string{"default:exec", "case:a:exec", "case:b:exec"},
				map[string]any{"pinDefaults": map[string]any{"value": tc.value},
					"switchConfig": map[string]any{"cases": []any{map[string]any{"id": "a", "value": "x"}, map[string]any{"id": "b", "value": "y"}}}}),
			mvsSetVar("b", "took", map[string]any{"value": "b"}),
		}, "start.exec-out>sw.exec-in", "sw.case:b>b.exec-in")
		st := mvsRun(t, flow, map[string]any{})
		if st.Status != durable.RunCompleted {
			t.Fatalf("%s: status %s (%s)", tc.branch, st.Status, st.Error)
		}
		if st.Output["success"] != true || st.Output["branch"] != tc.branch {
			t.Fatalf("%s: output = %s, want a clean end (success:true, branch %s)", tc.branch, jsonText(t, st.Output), tc.branch)
		}
	}
}

// §6.10: a file node's base input gets the run's workspace keys only when
// not already present: a workspace_root on the bus wins over the var.
func TestFileNodeKeepsWorkspaceRootFromItsInput(t *testing.T) {
	varRoot, busRoot := t.TempDir(), t.TempDir()
	flow := rsFlow("f", "start", []map[string]any{
		mvsStart(),
		rsNode("code", "code", []string{"exec-in:exec"}, []string{"exec-out:exec", "output:any"},
			map[string]any{"codeBody": "return {'workspace_root': " + strconv.Quote(busRoot) + "}"}),
		rsNode("wf", "write_file", []string{"exec-in:exec", "file_path:string", "content:string"}, []string{"exec-out:exec", "file_path:string"},
			map[string]any{"pinDefaults": map[string]any{"file_path": "f.txt", "content": "x"}}),
	}, "start.exec-out>code.exec-in", "code.exec-out>wf.exec-in")
	st := mvsRun(t, flow, map[string]any{"workspace_root": varRoot})
	if st.Status != durable.RunCompleted || st.Output["success"] != true {
		t.Fatalf("status %s (%s), output %s", st.Status, st.Error, jsonText(t, st.Output))
	}
	if _, err := os.Stat(filepath.Join(busRoot, "f.txt")); err != nil {
		_, errVar := os.Stat(filepath.Join(varRoot, "f.txt"))
		t.Fatalf("f.txt not written under the bus's workspace_root (%v); under the var's: %v", err, errVar == nil)
	}
}

// on_user_request copies its outputs (function.go): a later write into
// the var its input came from (here through inputKey, which hands the node
// the live var) must not change the context it output.
func TestOnUserRequestContextIsNotChangedByLaterWrites(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		mvsStart(),
		rsNode("req", "on_user_request", []string{"exec-in:exec"}, []string{"exec-out:exec", "message:string", "context:object"},
			map[string]any{"inputKey": "req"}),
		mvsSetVar("w", "req.context.task", map[string]any{"value": "changed"}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "context:object"}, nil, nil),
	}, "start.exec-out>req.exec-in", "req.exec-out>w.exec-in", "w.exec-out>end.exec-in", "req.context>end.context")
	st := mvsRun(t, flow, map[string]any{"req": map[string]any{"message": "hi", "context": map[string]any{"task": "t"}}})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	ctx, _ := st.Output["context"].(map[string]any)
	if ctx["task"] != "t" {
		t.Fatalf("on_user_request's context output = %s, want the context as it was (task t)", jsonText(t, st.Output["context"]))
	}
}

// §4.5: pulling pin "output" of a scalar result yields the whole value,
// as pin "result" does.
func TestPullOutputPinOfScalarIsWholeValue(t *testing.T) {
	flow := rsFlow("f", "start", []map[string]any{
		mvsStart(),
		rsNode("sum", "add", []string{"a:number", "b:number"}, []string{"output:number"},
			map[string]any{"pinDefaults": map[string]any{"a": int64(1), "b": int64(2)}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "total:number"}, nil, nil),
	}, "start.exec-out>end.exec-in", "sum.output>end.total")
	st := mvsRun(t, flow, map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	if got := jsonText(t, st.Output["total"]); got != "3.0" {
		t.Fatalf("output = %s, want total 3.0 (pin output of a scalar is the whole value)", jsonText(t, st.Output))
	}
}
