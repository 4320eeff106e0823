package visualflow

import (
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// divByZero is a pure divide node whose every evaluation fails.
func divByZero(id string) map[string]any {
	return rsNode(id, "divide", []string{"a:number", "b:number"}, []string{"result:number"},
		map[string]any{"pinDefaults": map[string]any{"a": int64(1), "b": int64(0)}})
}

// specTemp is vars._temp of a run state.
func specTemp(st *durable.RunState) map[string]any {
	tmp, _ := st.Vars["_temp"].(map[string]any)
	return tmp
}

// Spec §4.4: set_var, set_vars, set_var_property, add_message, emit_event,
// sequence and parallel do not write the bus ("pass-through"), so a
// data-less on_flow_end after them still forwards the start's outputs.
func TestSpec44_PassThroughNodesKeepTheBus(t *testing.T) {
	xs := map[string]map[string]any{
		"set_var": setVarNode("X", "v", map[string]any{"value": int64(1)}),
		"set_vars": rsNode("X", "set_vars", []string{"exec-in:exec", "updates:object"}, []string{"exec-out:exec"},
			map[string]any{"pinDefaults": map[string]any{"updates": map[string]any{"v": int64(1)}}}),
		"set_var_property": rsNode("X", "set_var_property", []string{"exec-in:exec", "name:string", "key:string", "value:any"}, []string{"exec-out:exec"},
			map[string]any{"pinDefaults": map[string]any{"name": "obj", "key": "p", "value": int64(1)}}),
		"add_message": rsNode("X", "add_message", []string{"exec-in:exec", "role:string", "content:string"}, []string{"exec-out:exec"},
			map[string]any{"pinDefaults": map[string]any{"role": "user", "content": "hello"}}),
		"emit_event": rsNode("X", "emit_event", []string{"exec-in:exec", "name:string"}, []string{"exec-out:exec"},
			map[string]any{"pinDefaults": map[string]any{"name": "ping"}}),
	}
	for name, x := range xs {
		t.Run(name, func(t *testing.T) {
			f := rsFlow("f", "start", []map[string]any{
				rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "k:string"}, nil), x, rvEnd("end", nil, nil),
			}, "start.exec-out>X.exec-in", "X.exec-out>end.exec-in")
			st := runFlow(t, f, map[string]any{"k": "from-start"})
			if st.Status != durable.RunCompleted || st.Output["k"] != "from-start" {
				t.Fatalf("status %s (%s), output %s, want k = from-start (bus kept)", st.Status, st.Error, jsonText(t, st.Output))
			}
		})
	}
	for _, typ := range []string{"sequence", "parallel"} {
		t.Run(typ, func(t *testing.T) {
			f := rsFlow("f", "start", []map[string]any{
				rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "k:string"}, nil),
				rsNode("X", typ, []string{"exec-in:exec"}, []string{"then:0:exec"}, nil), rvEnd("end", nil, nil),
			}, "start.exec-out>X.exec-in", "X.then:0>end.exec-in")
			st := runFlow(t, f, map[string]any{"k": "from-start"})
			if st.Status != durable.RunCompleted || st.Output["k"] != "from-start" {
				t.Fatalf("status %s (%s), output %s, want k = from-start (bus kept)", st.Status, st.Error, jsonText(t, st.Output))
			}
		})
	}
}

// Spec §4.1: `_last_output` is "Absent until the first function node
// runs" — a run whose only node is an effect node has no bus.
func TestSpec41_NoBusWithoutAFunctionNode(t *testing.T) {
	f := rsFlow("f", "emit", []map[string]any{
		rsNode("emit", "emit_event", []string{"exec-in:exec", "name:string"}, []string{"exec-out:exec"},
			map[string]any{"pinDefaults": map[string]any{"name": "ping"}}),
	})
	st := runFlow(t, f, map[string]any{"k": "v"})
	if st.Status != durable.RunCompleted || st.Output["success"] != true {
		t.Fatalf("status %s (%s), output %s", st.Status, st.Error, jsonText(t, st.Output))
	}
	if v, has := st.Vars["_last_output"]; has {
		t.Fatalf("_last_output = %s, want it absent", jsonText(t, v))
	}
}

// Spec §4.3: a connected pin whose source produced the pin is set "even
// if value is null", hiding a same-named bus key; an undeclared
// pinDefaults key only fills a gap in the resolved input.
func TestSpec43_NullWireWinsAndUndeclaredDefaultFillsGap(t *testing.T) {
	start := rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "a:any", "b:any", "extra:any"}, nil)
	end := rsNode("end", "on_flow_end", []string{"exec-in:exec", "b:any"}, nil, nil)
	st := runFlow(t, rsFlow("f", "start", []map[string]any{start, end}, "start.exec-out>end.exec-in", "start.a>end.b"),
		map[string]any{"a": nil, "b": "bus"})
	if v, has := st.Output["b"]; !has || v != nil {
		t.Fatalf("output %s, want b = null (the wire's null beats the bus key)", jsonText(t, st.Output))
	}

	end2 := rsNode("end", "on_flow_end", []string{"exec-in:exec"}, nil,
		map[string]any{"pinDefaults": map[string]any{"extra": "dflt-extra", "gap": "dflt-gap"}})
	st = runFlow(t, rsFlow("f", "start", []map[string]any{start, end2}, "start.exec-out>end.exec-in"), map[string]any{"extra": "bus"})
	if st.Output["extra"] != "bus" || st.Output["gap"] != "dflt-gap" {
		t.Fatalf("output %s, want extra = bus (undeclared default does not override) and gap = dflt-gap", jsonText(t, st.Output))
	}
}

// Spec §4.5: pure nodes are uncached — "a random_int wired to two pins of
// the same node produces two different numbers".
func TestSpec45_PureNodesAreReevaluatedPerPull(t *testing.T) {
	r := rsNode("r", "random_int", []string{"min:number", "max:number"}, []string{"result:number"},
		map[string]any{"pinDefaults": map[string]any{"min": int64(0), "max": int64(1_000_000_000_000)}})
	f := rsFlow("f", "start", []map[string]any{rvStart(), r, rvEnd("end", []string{"a", "b"}, nil)},
		"start.exec-out>end.exec-in", "r.result>end.a", "r.result>end.b")
	st := runFlow(t, f, map[string]any{})
	if st.Status != durable.RunCompleted || st.Output["a"] == nil {
		t.Fatalf("status %s, output %s", st.Status, jsonText(t, st.Output))
	}
	if jsonText(t, st.Output["a"]) == jsonText(t, st.Output["b"]) {
		t.Fatalf("output %s: both pins got the same number; each pull must re-evaluate random_int", jsonText(t, st.Output))
	}
}

// Spec §4.5: pure nodes are lazy (only evaluated when pulled): a failing
// pure node nobody reads does not fail the run.
func TestSpec45_UnpulledPureNodeIsNeverEvaluated(t *testing.T) {
	st := runFlow(t, rsFlow("f", "start", []map[string]any{rvStart(), divByZero("d"), rvEnd("end", nil, map[string]any{"r": "ok"})},
		"start.exec-out>end.exec-in"), map[string]any{})
	if st.Status != durable.RunCompleted || st.Output["success"] != true {
		t.Fatalf("status %s, output %s, want a clean completion", st.Status, jsonText(t, st.Output))
	}
}

// Spec §4.5: "Pure nodes see only their wires and defaults — never the
// bus, never the caller's vars".
func TestSpec45_PureNodesIgnoreBusAndVars(t *testing.T) {
	add := rsNode("add", "add", []string{"a:number", "b:number"}, []string{"result:number"},
		map[string]any{"pinDefaults": map[string]any{"b": int64(1)}})
	start := rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "a:number"}, nil)
	st := runFlow(t, rsFlow("f", "start", []map[string]any{start, add, rvEnd("end", []string{"sum"}, nil)},
		"start.exec-out>end.exec-in", "add.result>end.sum"), map[string]any{"a": int64(10)})
	if st.Status != durable.RunCompleted || jsonText(t, st.Output["sum"]) != "1.0" {
		t.Fatalf("status %s, output %s, want sum = 1.0 (a neither from the bus nor from vars)", st.Status, jsonText(t, st.Output))
	}
}

// Spec §4.5: builtin pure nodes receive the hidden input `_pin_order`
// (declared non-exec input pins, in order): coalesce takes its first
// non-null input in declared order, not by name.
func TestSpec45_BuiltinsGetDeclaredPinOrder(t *testing.T) {
	co := rsNode("co", "coalesce", []string{"b:any", "a:any"}, []string{"result:any"},
		map[string]any{"pinDefaults": map[string]any{"a": "A", "b": "B"}})
	st := runFlow(t, rsFlow("f", "start", []map[string]any{rvStart(), co, rvEnd("end", []string{"v"}, nil)},
		"start.exec-out>end.exec-in", "co.result>end.v"), map[string]any{})
	if st.Output["v"] != "B" {
		t.Fatalf("output %s, want v = B (pin b is declared first)", jsonText(t, st.Output))
	}
}

// Spec §4.2 step 6 and §4.5: an exception raised by a pure node upstream
// of a function node N completes the run with {error, success:false,
// node: N}, sets _flow_error/_flow_error_node = N and persists the
// failure record under _temp.node_outputs[N].
func TestSpec42_UpstreamPureErrorFailureRecord(t *testing.T) {
	a := rsNode("A", "add", []string{"exec-in:exec", "a:number", "b:number"}, []string{"exec-out:exec", "result:number"}, nil)
	st := runFlow(t, rsFlow("f", "start", []map[string]any{rvStart(), a, divByZero("d"), rvEnd("end", nil, nil)},
		"start.exec-out>A.exec-in", "A.exec-out>end.exec-in", "d.result>A.a"), map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s), want completed", st.Status, st.Error)
	}
	if st.Output["success"] != false || st.Output["node"] != "A" || st.Output["error"] != "Division by zero" {
		t.Fatalf("output %s, want {error: Division by zero, success: false, node: A}", jsonText(t, st.Output))
	}
	if st.Vars["_flow_error_node"] != "A" || st.Vars["_flow_error"] != "Division by zero" {
		t.Errorf("_flow_error %v, _flow_error_node %v, want Division by zero / A", st.Vars["_flow_error"], st.Vars["_flow_error_node"])
	}
	outs, _ := specTemp(st)["node_outputs"].(map[string]any)
	rec, _ := outs["A"].(map[string]any)
	if rec["success"] != false || rec["error"] != "Division by zero" || rec["node"] != "A" {
		t.Errorf("node_outputs.A = %s, want the failure record", jsonText(t, outs["A"]))
	}
}

// Spec §4.6.5: loop input resolution errors set _flow_error ("Loop items
// resolution failed: …") and fail the step (run fails, §4.8).
func TestSpec465_LoopItemsResolutionErrorFailsTheRun(t *testing.T) {
	d := divByZero("d")
	d["data"].(map[string]any)["outputs"] = []any{map[string]any{"id": "result", "type": "any"}}
	f := rsFlow("f", "start", []map[string]any{rvStart(), rvLoop("L", nil), d, rvEnd("end", nil, nil)},
		"start.exec-out>L.exec-in", "d.result>L.items", "L.loop>end.exec-in")
	st := runFlow(t, f, map[string]any{})
	if st.Status != durable.RunFailed || !strings.Contains(st.Error, "Loop items resolution failed: ") {
		t.Fatalf("status %s, error %q; want failed with Loop items resolution failed", st.Status, st.Error)
	}
	if e, _ := st.Vars["_flow_error"].(string); !strings.HasPrefix(e, "Loop items resolution failed: ") {
		t.Errorf("_flow_error = %q", e)
	}
}

// Spec §4.8: input-resolution exceptions of set_var* writers and of
// generic effect nodes make the step raise and the run fail.
func TestSpec48_WriterAndEffectInputErrorsFailTheRun(t *testing.T) {
	for name, x := range map[string]map[string]any{
		"set_var": setVarNode("X", "v", nil),
		"answer_user": rsNode("X", "answer_user", []string{"exec-in:exec", "value:string"}, []string{"exec-out:exec"},
			map[string]any{"pinDefaults": map[string]any{"message": "hi"}}),
	} {
		t.Run(name, func(t *testing.T) {
			f := rsFlow("f", "start", []map[string]any{rvStart(), x, divByZero("d"), rvEnd("end", nil, nil)},
				"start.exec-out>X.exec-in", "X.exec-out>end.exec-in", "d.result>X.value")
			st := runFlow(t, f, map[string]any{})
			if st.Status != durable.RunFailed || !strings.Contains(st.Error, "Division by zero") {
				t.Fatalf("status %s, error %q, output %s; want the run failed with the pure error", st.Status, st.Error, jsonText(t, st.Output))
			}
		})
	}
}

// Spec §4.8: emit_event and on_event input resolution errors are
// swallowed ("inputs treated as {}"): the configured name applies.
func TestSpec48_EventNodeInputErrorsAreSwallowed(t *testing.T) {
	emit := rsNode("emit", "emit_event", []string{"exec-in:exec", "payload:any"}, []string{"exec-out:exec"},
		map[string]any{"effectConfig": map[string]any{"name": "ping"}})
	st := runFlow(t, rsFlow("f", "start", []map[string]any{rvStart(), emit, divByZero("d"), rvEnd("end", []string{"r"}, map[string]any{"r": "done"})},
		"start.exec-out>emit.exec-in", "emit.exec-out>end.exec-in", "d.result>emit.payload"), map[string]any{})
	if st.Status != durable.RunCompleted || st.Output["r"] != "done" {
		t.Fatalf("emit_event: status %s (%s), output %s; want the error swallowed", st.Status, st.Error, jsonText(t, st.Output))
	}

	on := rsNode("on", "on_event", []string{"name:string"}, []string{"exec-out:exec"},
		map[string]any{"eventConfig": map[string]any{"name": "ping"}})
	st = runFlow(t, rsFlow("f", "on", []map[string]any{on, divByZero("d"), rvEnd("end", nil, nil)},
		"on.exec-out>end.exec-in", "d.result>on.name"), map[string]any{})
	if st.Status != durable.RunWaiting || st.Waiting == nil || !strings.HasSuffix(st.Waiting.WaitKey, ":ping") {
		t.Fatalf("on_event: status %s (%s), wait %+v; want a wait on the configured name", st.Status, st.Error, st.Waiting)
	}
}

// Spec §4.10: an on_flow_start declaring no data output pin outputs every
// var whose name does not start with `_`, plus its pinDefaults (non-`_`
// names) for names absent from the vars; this becomes the bus and
// _temp.node_outputs[start].
func TestSpec410_StartWithoutPinsForwardsPublicVars(t *testing.T) {
	start := rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"},
		map[string]any{"pinDefaults": map[string]any{"a": "dflt-a", "extra": "dflt", "_h": "hidden"}})
	st := runFlow(t, rsFlow("f", "start", []map[string]any{start, rvEnd("end", nil, nil)}, "start.exec-out>end.exec-in"),
		map[string]any{"a": int64(1), "_hidden": int64(2), "context": map[string]any{"task": "t"}})
	want := `{"a": 1, "context": {"task": "t"}, "extra": "dflt"}`
	outs, _ := specTemp(st)["node_outputs"].(map[string]any)
	if got := jsonText(t, outs["start"]); got != jsonText(t, mustFlow(t, want)) {
		t.Fatalf("node_outputs.start = %s, want %s", got, want)
	}
	if jsonText(t, st.Output["context"]) != jsonText(t, map[string]any{"task": "t"}) || st.Output["extra"] != "dflt" {
		t.Errorf("output %s, want the start outputs forwarded", jsonText(t, st.Output))
	}
	for _, k := range []string{"_hidden", "_h", "_runtime", "_limits"} {
		if _, has := st.Output[k]; has {
			t.Errorf("output has reserved key %s", k)
		}
	}
}

// Spec §4.6.7: the while iteration record is the bus copy plus `item`
// ("kept if the bus already has item") and index = iters.
func TestSpec467_WhileKeepsBusItem(t *testing.T) {
	start := rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "item:any", "x:any"}, nil)
	end := rsNode("end", "on_flow_end", []string{"exec-in:exec", "item:any", "index:any", "x:any"}, nil, nil)
	f := rsFlow("f", "start", []map[string]any{start, whileNode("W", map[string]any{"condition": true}), end},
		"start.exec-out>W.exec-in", "W.loop>end.exec-in", "W.item>end.item", "W.index>end.index")
	st := runFlow(t, f, map[string]any{"item": "I", "x": int64(1)})
	if st.Status != durable.RunCompleted || st.Output["item"] != "I" || jsonText(t, st.Output["index"]) != "0" || jsonText(t, st.Output["x"]) != "1" {
		t.Fatalf("status %s (%s), output %s; want item I (kept), index 0, x 1 (bus copy)", st.Status, st.Error, jsonText(t, st.Output))
	}
}

// Spec §4.7 and §4.1: a linear function node with a successor records
// prev_exec_handle = "exec-out"; effect nodes do not update it (quirk).
func TestSpec47_PrevExecHandleOfFunctionAndEffectNodes(t *testing.T) {
	code := rsNode("c", "code", []string{"exec-in:exec"}, []string{"exec-out:exec", "output:any"}, map[string]any{"codeBody": "return 1"})
	ans := rsNode("ans", "answer_user", []string{"exec-in:exec", "message:string"}, []string{"exec-out:exec"},
		map[string]any{"pinDefaults": map[string]any{"message": "hi"}})
	for _, c := range []struct {
		mid  map[string]any
		want string
	}{{code, "exec-out"}, {ans, "true"}} {
		id := c.mid["id"].(string)
		f := rsFlow("f", "start", []map[string]any{rvStart(), rvIf("if", map[string]any{"condition": true}), c.mid,
			setVarNode("sv", "v", map[string]any{"value": int64(1)})},
			"start.exec-out>if.exec-in", "if.true>"+id+".exec-in", id+".exec-out>sv.exec-in")
		st := runFlow(t, f, map[string]any{})
		if st.Status != durable.RunCompleted {
			t.Fatalf("%s: status %s (%s)", id, st.Status, st.Error)
		}
		if got := specTemp(st)["prev_exec_handle"]; got != c.want {
			t.Errorf("%s: _temp.prev_exec_handle = %#v, want %q", id, got, c.want)
		}
	}
}

// Spec §4.6.6 and §4.6.8: `for` advances i and index before jumping and
// keeps its range in run vars, so a wait inside the body resumes into the
// body and the next visit goes on with the next i (no repeat).
func TestSpec466_ForWithWaitInBodyDoesNotRepeat(t *testing.T) {
	ask := rsNode("ask", "ask_user", []string{"exec-in:exec", "prompt:string"}, []string{"exec-out:exec", "response:any"},
		map[string]any{"pinDefaults": map[string]any{"prompt": "next?"}})
	f := rsFlow("f", "start", []map[string]any{rvStart(), forNode(map[string]any{"start": int64(0), "end": int64(3)}),
		setVarNode("sv", "seen", nil), ask},
		"start.exec-out>L.exec-in", "L.loop>sv.exec-in", "L.i>sv.value", "sv.exec-out>ask.exec-in")
	rt, st := startRunWith(t, f, CompileOptions{}, map[string]any{})
	var seen []string
	for st.Status == durable.RunWaiting && len(seen) < 10 {
		seen = append(seen, jsonText(t, st.Vars["seen"]))
		var err error
		st, err = rt.Resume(context.Background(), runtime.ResumeParams{RunID: st.RunID, WaitKey: st.Waiting.WaitKey, Payload: map[string]any{"response": "ok"}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if st.Status != durable.RunCompleted || strings.Join(seen, ",") != "0.0,1.0,2.0" {
		t.Fatalf("status %s (%s), i at each wait %q; want 0.0,1.0,2.0 then completion", st.Status, st.Error, seen)
	}
}
