package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// Control flow and data flow against spec §3 (compilation) and §4
// (execution): entries, pruning, truthiness of branch conditions, loops
// and their nesting, sequence and parallel, values that persist across
// iterations, terminal nodes. Small graphs are built with rsNode/rsFlow.

func rvStart() map[string]any {
	return rsNode("start", "on_flow_start", nil, []string{"exec-out:exec"}, nil)
}

func rvEnd(id string, pins []string, defaults map[string]any) map[string]any {
	in := []string{"exec-in:exec"}
	for _, p := range pins {
		in = append(in, p+":any")
	}
	return rsNode(id, "on_flow_end", in, nil, map[string]any{"pinDefaults": defaults})
}

func rvLoop(id string, items any) map[string]any {
	d := map[string]any{}
	if items != nil {
		d["pinDefaults"] = map[string]any{"items": items}
	}
	return rsNode(id, "loop", []string{"exec-in:exec", "items:array"},
		[]string{"loop:exec", "done:exec", "item:any", "index:number", "total:number"}, d)
}

// rvInc is set_var count = add(get_var(count), 1) with pure nodes <id>_gv, <id>_add.
func rvInc(id, name string) ([]map[string]any, []string) {
	nodes := []map[string]any{
		setVarNode(id, name, nil),
		getVarNode(id+"_gv", name),
		rsNode(id+"_add", "add", []string{"a:number", "b:number"}, []string{"result:number"},
			map[string]any{"pinDefaults": map[string]any{"b": int64(1)}}),
	}
	edges := []string{id + "_gv.value>" + id + "_add.a", id + "_add.result>" + id + ".value"}
	return nodes, edges
}

func rvRun(t *testing.T, flow map[string]any, vars map[string]any) *durable.RunState {
	t.Helper()
	if vars == nil {
		vars = map[string]any{}
	}
	st := runFlow(t, flow, vars)
	return st
}

func rvIf(id string, defaults map[string]any) map[string]any {
	return rsNode(id, "if", []string{"exec-in:exec", "condition:boolean"}, []string{"true:exec", "false:exec"},
		map[string]any{"pinDefaults": defaults})
}

// §4.7/Q17/App. B: if uses Python truthiness.
func TestControlFlowIfTruthiness(t *testing.T) {
	cases := []struct {
		name string
		cond any
		want string
	}{
		{"string false", "false", "T"}, {"string 0", "0", "T"}, {"int 0", int64(0), "F"},
		{"float 0", 0.0, "F"}, {"empty string", "", "F"}, {"empty list", []any{}, "F"},
		{"empty obj", map[string]any{}, "F"}, {"null", nil, "F"}, {"list of 0", []any{int64(0)}, "T"},
		{"float 0.5", 0.5, "T"}, {"true", true, "T"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := rsFlow("f", "start", []map[string]any{rvStart(), rvIf("if", map[string]any{"condition": c.cond}),
				rvEnd("endT", []string{"r"}, map[string]any{"r": "T"}), rvEnd("endF", []string{"r"}, map[string]any{"r": "F"})},
				"start.exec-out>if.exec-in", "if.true>endT.exec-in", "if.false>endF.exec-in")
			st := rvRun(t, f, nil)
			if st.Output["r"] != c.want {
				t.Fatalf("cond %#v: output %s, want r=%s", c.cond, jsonText(t, st.Output), c.want)
			}
		})
	}
}

// §4.7/Q17: the condition coming through a wire (literal_json) too.
func TestControlFlowIfTruthinessViaWire(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{{"false", "T"}, {int64(0), "F"}, {[]any{}, "F"}, {map[string]any{}, "F"}} {
		f := rsFlow("f", "start", []map[string]any{rvStart(), rvIf("if", nil),
			rsNode("lit", "literal_json", nil, []string{"value:any"}, map[string]any{"literalValue": c.v}),
			rvEnd("endT", []string{"r"}, map[string]any{"r": "T"}), rvEnd("endF", []string{"r"}, map[string]any{"r": "F"})},
			"start.exec-out>if.exec-in", "lit.value>if.condition", "if.true>endT.exec-in", "if.false>endF.exec-in")
		st := rvRun(t, f, nil)
		if st.Output["r"] != c.want {
			t.Errorf("wired cond %#v: output %s, want r=%s", c.v, jsonText(t, st.Output), c.want)
		}
	}
}

// §4.6.2/4.6.5: nested loops: inner loop restarts for every outer item.
func TestControlFlowNestedLoopsCount(t *testing.T) {
	inc, incE := rvInc("inc", "count")
	nodes := append([]map[string]any{rvStart(), rvLoop("O", []any{int64(1), int64(2), int64(3)}), rvLoop("I", []any{"a", "b"}),
		rvEnd("end", []string{"count"}, nil), getVarNode("gv", "count")}, inc...)
	edges := append([]string{"start.exec-out>O.exec-in", "O.loop>I.exec-in", "I.loop>inc.exec-in", "O.done>end.exec-in",
		"gv.value>end.count"}, incE...)
	st := rvRun(t, rsFlow("f", "start", nodes, edges...), map[string]any{"count": int64(0)})
	if st.Status != durable.RunCompleted || jsonText(t, st.Output["count"]) != "6.0" {
		t.Fatalf("status %s output %s, want count 6.0", st.Status, jsonText(t, st.Output))
	}
}

// §4.6.2: nested loops where the inner loop has a done edge to a node that ends (returns to outer).
func TestControlFlowNestedLoopsInnerDone(t *testing.T) {
	inc, incE := rvInc("inc", "count")
	inc2, inc2E := rvInc("inc2", "outer")
	nodes := append([]map[string]any{rvStart(), rvLoop("O", []any{int64(1), int64(2), int64(3)}), rvLoop("I", []any{"a", "b"}),
		rvEnd("end", []string{"count", "outer"}, nil), getVarNode("gv", "count"), getVarNode("gv2", "outer")}, append(inc, inc2...)...)
	edges := append([]string{"start.exec-out>O.exec-in", "O.loop>I.exec-in", "I.loop>inc.exec-in", "I.done>inc2.exec-in", "O.done>end.exec-in",
		"gv.value>end.count", "gv2.value>end.outer"}, append(incE, inc2E...)...)
	st := rvRun(t, rsFlow("f", "start", nodes, edges...), map[string]any{"count": int64(0), "outer": int64(0)})
	if st.Status != durable.RunCompleted || jsonText(t, st.Output["count"]) != "6.0" || jsonText(t, st.Output["outer"]) != "3.0" {
		t.Fatalf("status %s output %s, want count 6.0 outer 3.0", st.Status, jsonText(t, st.Output))
	}
}

// §4.2 step 6 / Q3: a failing function node in a loop body ends only the iteration.
func TestControlFlowLoopBodyErrorContinues(t *testing.T) {
	inc, incE := rvInc("inc", "count")
	div := rsNode("div", "divide", []string{"exec-in:exec", "a:number", "b:number"}, []string{"exec-out:exec", "result:number"},
		map[string]any{"pinDefaults": map[string]any{"a": int64(1)}})
	nodes := append([]map[string]any{rvStart(), rvLoop("L", []any{int64(1), int64(0), int64(2)}), div,
		rvEnd("end", []string{"count"}, nil), getVarNode("gv", "count")}, inc...)
	edges := append([]string{"start.exec-out>L.exec-in", "L.loop>div.exec-in", "L.item>div.b", "div.exec-out>inc.exec-in",
		"L.done>end.exec-in", "gv.value>end.count"}, incE...)
	st := rvRun(t, rsFlow("f", "start", nodes, edges...), map[string]any{"count": int64(0)})
	if st.Status != durable.RunCompleted || jsonText(t, st.Output["count"]) != "2.0" || st.Output["success"] != true {
		t.Fatalf("status %s output %s, want count 2.0 success", st.Status, jsonText(t, st.Output))
	}
}

// §4.6.5: loop over an empty list goes straight to done.
func TestControlFlowLoopEmptyList(t *testing.T) {
	inc, incE := rvInc("inc", "count")
	nodes := append([]map[string]any{rvStart(), rvLoop("L", []any{}), rvEnd("end", []string{"count", "idx"}, nil), getVarNode("gv", "count")}, inc...)
	edges := append([]string{"start.exec-out>L.exec-in", "L.loop>inc.exec-in", "L.done>end.exec-in", "gv.value>end.count", "L.index>end.idx"}, incE...)
	st := rvRun(t, rsFlow("f", "start", nodes, edges...), map[string]any{"count": int64(0)})
	if st.Status != durable.RunCompleted || jsonText(t, st.Output["count"]) != "0" || st.Output["idx"] != nil {
		t.Fatalf("status %s output %s", st.Status, jsonText(t, st.Output))
	}
}

// §4.6.2 / §4.10: a loop over [] without done at top level completes with {success, result: bus}.
func TestControlFlowLoopEmptyNoDoneTopLevel(t *testing.T) {
	st := rvRun(t, rsFlow("f", "start", []map[string]any{rvStart(), rvLoop("L", []any{}), rvEnd("end", nil, nil)},
		"start.exec-out>L.exec-in", "L.loop>end.exec-in"), map[string]any{"x": int64(7)})
	if st.Status != durable.RunCompleted || jsonText(t, st.Output) != jsonText(t, map[string]any{"success": true, "result": map[string]any{"x": int64(7)}}) {
		t.Fatalf("status %s output %s", st.Status, jsonText(t, st.Output))
	}
}

// §4.6.7: while with compare condition re-evaluated each visit.
func TestControlFlowWhileCounter(t *testing.T) {
	inc, incE := rvInc("inc", "count")
	nodes := append([]map[string]any{rvStart(), whileNode("W", nil), compareNode("cmp", "<", 3), getVarNode("gvc", "count"),
		rvEnd("end", []string{"count"}, nil), getVarNode("gv", "count")}, inc...)
	edges := append([]string{"start.exec-out>W.exec-in", "gvc.value>cmp.a", "cmp.result>W.condition", "W.loop>inc.exec-in",
		"W.done>end.exec-in", "gv.value>end.count"}, incE...)
	st := rvRun(t, rsFlow("f", "start", nodes, edges...), map[string]any{"count": int64(0)})
	if st.Status != durable.RunCompleted || jsonText(t, st.Output["count"]) != "3.0" {
		t.Fatalf("status %s output %s", st.Status, jsonText(t, st.Output))
	}
}

// §4.6.3: on_flow_end inside a sequence branch ends the run.
func TestControlFlowSequenceEndInFirstBranch(t *testing.T) {
	seq := rsNode("seq", "sequence", []string{"exec-in:exec"}, []string{"then:0:exec", "then:1:exec"}, nil)
	st := rvRun(t, rsFlow("f", "start", []map[string]any{rvStart(), seq, rvEnd("endA", []string{"r"}, map[string]any{"r": "A"}),
		rvEnd("endB", []string{"r"}, map[string]any{"r": "B"})},
		"start.exec-out>seq.exec-in", "seq.then:0>endA.exec-in", "seq.then:1>endB.exec-in"), nil)
	if st.Output["r"] != "A" {
		t.Fatalf("output %s", jsonText(t, st.Output))
	}
}

// §4.6.3, Q3: a failing then:0 branch does not stop then:1; then the sequence completes with the bus.
func TestControlFlowSequenceFailingBranch(t *testing.T) {
	inc, incE := rvInc("inc", "count")
	seq := rsNode("seq", "sequence", []string{"exec-in:exec"}, []string{"then:0:exec", "then:1:exec"}, nil)
	div := rsNode("div", "divide", []string{"exec-in:exec", "a:number", "b:number"}, []string{"exec-out:exec", "result:number"},
		map[string]any{"pinDefaults": map[string]any{"a": int64(1), "b": int64(0)}})
	nodes := append([]map[string]any{rvStart(), seq, div}, inc...)
	edges := append([]string{"start.exec-out>seq.exec-in", "seq.then:0>div.exec-in", "seq.then:1>inc.exec-in"}, incE...)
	st := rvRun(t, rsFlow("f", "start", nodes, edges...), map[string]any{"count": int64(0)})
	if st.Status != durable.RunCompleted || st.Output["success"] != true || jsonText(t, st.Vars["count"]) != "1.0" {
		t.Fatalf("status %s output %s count %v", st.Status, jsonText(t, st.Output), st.Vars["count"])
	}
}

// §4.6.4: parallel runs branches then completed.
func TestControlFlowParallelCompleted(t *testing.T) {
	inc, incE := rvInc("inc", "count")
	inc2, inc2E := rvInc("inc2", "count")
	par := rsNode("par", "parallel", []string{"exec-in:exec"}, []string{"then:0:exec", "then:1:exec", "completed:exec"}, nil)
	nodes := append([]map[string]any{rvStart(), par, rvEnd("end", []string{"count"}, nil), getVarNode("gv", "count")}, append(inc, inc2...)...)
	edges := append([]string{"start.exec-out>par.exec-in", "par.then:0>inc.exec-in", "par.then:1>inc2.exec-in", "par.completed>end.exec-in",
		"gv.value>end.count"}, append(incE, inc2E...)...)
	st := rvRun(t, rsFlow("f", "start", nodes, edges...), map[string]any{"count": int64(0)})
	if st.Status != durable.RunCompleted || jsonText(t, st.Output["count"]) != "2.0" {
		t.Fatalf("status %s output %s", st.Status, jsonText(t, st.Output))
	}
}

// §4.7 + §4.6.1: an if in a loop body whose chosen branch is unconnected ends the iteration.
func TestControlFlowLoopIfUnconnectedBranch(t *testing.T) {
	inc, incE := rvInc("inc", "count")
	nodes := append([]map[string]any{rvStart(), rvLoop("L", []any{true, "", "false", int64(0)}), rvIf("if", nil),
		rvEnd("end", []string{"count"}, nil), getVarNode("gv", "count")}, inc...)
	edges := append([]string{"start.exec-out>L.exec-in", "L.loop>if.exec-in", "L.item>if.condition", "if.true>inc.exec-in",
		"L.done>end.exec-in", "gv.value>end.count"}, incE...)
	st := rvRun(t, rsFlow("f", "start", nodes, edges...), map[string]any{"count": int64(0)})
	if st.Status != durable.RunCompleted || jsonText(t, st.Output["count"]) != "2.0" {
		t.Fatalf("status %s output %s", st.Status, jsonText(t, st.Output))
	}
}

// Q15: a branch that "breaks" to the loop's done target still returns to the loop.
func TestControlFlowLoopBreakReturnsToLoop(t *testing.T) {
	inc, incE := rvInc("inc", "count")
	hits, hitsE := rvInc("X", "hits")
	cmp := rsNode("eq", "compare", []string{"a:any", "b:any", "op:string"}, []string{"result:boolean"},
		map[string]any{"pinDefaults": map[string]any{"b": int64(2), "op": "=="}})
	nodes := append([]map[string]any{rvStart(), rvLoop("L", []any{int64(1), int64(2), int64(3)}), rvIf("if", nil), cmp}, append(inc, hits...)...)
	edges := append([]string{"start.exec-out>L.exec-in", "L.loop>inc.exec-in", "inc.exec-out>if.exec-in", "L.item>eq.a", "eq.result>if.condition",
		"if.true>X.exec-in", "L.done>X.exec-in"}, append(incE, hitsE...)...)
	st := rvRun(t, rsFlow("f", "start", nodes, edges...), map[string]any{"count": int64(0), "hits": int64(0)})
	if st.Status != durable.RunCompleted || jsonText(t, st.Vars["count"]) != "3.0" || jsonText(t, st.Vars["hits"]) != "2.0" {
		t.Fatalf("status %s output %s count %v hits %v", st.Status, jsonText(t, st.Output), st.Vars["count"], st.Vars["hits"])
	}
}

// §3.1/§3.3: two entry events feeding one node with route overrides.
func TestControlFlowTwoEntries(t *testing.T) {
	for _, c := range []struct{ entry, want string }{{"", "one"}, {"S1", "one"}, {"S2", "two"}} {
		s1 := rsNode("S1", "on_flow_start", nil, []string{"exec-out:exec", "x:string"}, nil)
		s2 := rsNode("S2", "on_user_request", nil, []string{"exec-out:exec", "message:string", "context:object"}, nil)
		end := rsNode("T", "on_flow_end", []string{"exec-in:exec", "m:any"}, nil, map[string]any{
			"inputRouteOverrides": map[string]any{"m": map[string]any{
				"S1::exec-out": map[string]any{"sourceNodeId": "S1", "sourceHandle": "x"},
				"S2::exec-out": map[string]any{"sourceNodeId": "S2", "sourceHandle": "message"},
			}}})
		f := rsFlow("f", c.entry, []map[string]any{s1, s2, end}, "S1.exec-out>T.exec-in", "S2.exec-out>T.exec-in")
		st := rvRun(t, f, map[string]any{"x": "one", "message": "two"})
		if st.Output["m"] != c.want {
			t.Errorf("entry %q: output %s, want m=%s", c.entry, jsonText(t, st.Output), c.want)
		}
	}
}

// §4.5: exec node outputs persist across loop iterations until the node runs again.
func TestControlFlowStaleExecOutputAcrossIterations(t *testing.T) {
	a := rsNode("A", "add", []string{"exec-in:exec", "a:number", "b:number"}, []string{"exec-out:exec", "result:number"},
		map[string]any{"pinDefaults": map[string]any{"b": int64(100)}})
	cmp := rsNode("eq", "compare", []string{"a:any", "b:any", "op:string"}, []string{"result:boolean"},
		map[string]any{"pinDefaults": map[string]any{"b": int64(1), "op": "=="}})
	s := setVarNode("S", "last", nil)
	mul := rsNode("mul", "multiply", []string{"a:number", "b:number"}, []string{"result:number"}, map[string]any{"pinDefaults": map[string]any{"b": int64(1)}})
	nodes := []map[string]any{rvStart(), rvLoop("L", []any{int64(1), int64(2)}), rvIf("if", nil), cmp, a, s, mul,
		rvEnd("end", []string{"last"}, nil), getVarNode("gv", "last")}
	edges := []string{"start.exec-out>L.exec-in", "L.loop>if.exec-in", "L.item>eq.a", "eq.result>if.condition", "if.true>A.exec-in",
		"L.item>A.a", "A.exec-out>S.exec-in", "if.false>S.exec-in", "A.result>mul.a", "mul.result>S.value", "L.done>end.exec-in", "gv.value>end.last"}
	st := rvRun(t, rsFlow("f", "start", nodes, edges...), nil)
	if st.Status != durable.RunCompleted || jsonText(t, st.Output["last"]) != "101.0" {
		t.Fatalf("status %s output %s", st.Status, jsonText(t, st.Output))
	}
}

// §4.3: a pin wired to an exec node that is not on the exec path stays unresolved; the bus key remains
// and the pin default is not applied.
func TestControlFlowWireFromPrunedExecNode(t *testing.T) {
	a := rsNode("A", "add", []string{"exec-in:exec", "a:number", "b:number"}, []string{"exec-out:exec", "result:number"}, nil)
	end := rsNode("end", "on_flow_end", []string{"exec-in:exec", "v:any", "w:any"}, nil, map[string]any{"pinDefaults": map[string]any{"v": "dflt", "w": "dw"}})
	st := rvRun(t, rsFlow("f", "start", []map[string]any{rvStart(), a, end}, "start.exec-out>end.exec-in", "A.result>end.v", "A.result>end.w"),
		map[string]any{"v": "bus"})
	if st.Output["v"] != "bus" || st.Output["w"] != nil {
		t.Fatalf("output %s, want v=bus (bus key), w=null", jsonText(t, st.Output))
	}
}

// §4.7: unknown branch name from a branch-capable function node.
func TestControlFlowUnknownBranch(t *testing.T) {
	code := rsNode("c", "code", []string{"exec-in:exec"}, []string{"true:exec", "false:exec", "output:any"},
		map[string]any{"codeBody": "return {\"branch\": \"maybe\"}"})
	st := rvRun(t, rsFlow("f", "start", []map[string]any{rvStart(), code, rvEnd("e1", nil, nil), rvEnd("e2", nil, nil)},
		"start.exec-out>c.exec-in", "c.true>e1.exec-in", "c.false>e2.exec-in"), nil)
	if st.Output["success"] != false || st.Output["error"] != "Unknown branch 'maybe'" {
		t.Fatalf("output %s", jsonText(t, st.Output))
	}
}

// §4.10: on_flow_end inside a loop body ends the run at the first iteration.
func TestControlFlowEndInsideLoop(t *testing.T) {
	st := rvRun(t, rsFlow("f", "start", []map[string]any{rvStart(), rvLoop("L", []any{"a", "b"}), rvEnd("end", []string{"item"}, nil)},
		"start.exec-out>L.exec-in", "L.loop>end.exec-in", "L.item>end.item"), nil)
	if st.Status != durable.RunCompleted || st.Output["item"] != "a" || st.Output["success"] != true {
		t.Fatalf("output %s", jsonText(t, st.Output))
	}
}

// §4.7: terminal function node with a scalar result.
func TestControlFlowTerminalScalar(t *testing.T) {
	a := rsNode("A", "add", []string{"exec-in:exec", "a:number", "b:number"}, []string{"exec-out:exec", "result:number"},
		map[string]any{"pinDefaults": map[string]any{"a": int64(1), "b": int64(2)}})
	st := rvRun(t, rsFlow("f", "start", []map[string]any{rvStart(), a}, "start.exec-out>A.exec-in"), nil)
	if jsonText(t, st.Output) != jsonText(t, map[string]any{"response": 3.0, "success": true}) {
		t.Fatalf("output %s", jsonText(t, st.Output))
	}
}

// §4.4: after an if the bus is {branch, condition}: an end without pins forwards it.
func TestControlFlowBusAfterIf(t *testing.T) {
	st := rvRun(t, rsFlow("f", "start", []map[string]any{rvStart(), rvIf("if", map[string]any{"condition": "yes"}), rvEnd("end", nil, nil)},
		"start.exec-out>if.exec-in", "if.true>end.exec-in"), map[string]any{"p": int64(1)})
	if jsonText(t, st.Output) != jsonText(t, map[string]any{"branch": "true", "condition": "yes", "success": true}) {
		t.Fatalf("output %s", jsonText(t, st.Output))
	}
}

// §4.6.6: for accepts numeric strings and yields float i.
func TestControlFlowForStrings(t *testing.T) {
	st := runFlowOnce(t, recordingLoopFlow("", `{"id": "L", "type": "for", "data": {"pinDefaults": {"start": "0", "end": " 3 "}, `+forPins+`}}`, "i"), map[string]any{})
	if st.Status != durable.RunCompleted || jsonText(t, st.Output["last"]) != "2.0" {
		t.Fatalf("status %s output %s", st.Status, jsonText(t, st.Output))
	}
}

// §4.6.7/Q17: while condition with Python truthiness ("false" is true).
func TestControlFlowWhileStringFalseCondition(t *testing.T) {
	inc, incE := rvInc("inc", "count")
	clear := setVarNode("clr", "flag", map[string]any{"value": ""})
	nodes := append([]map[string]any{rvStart(), whileNode("W", nil), getVarNode("gvf", "flag"), clear,
		rvEnd("end", []string{"count"}, nil), getVarNode("gv", "count")}, inc...)
	edges := append([]string{"start.exec-out>W.exec-in", "gvf.value>W.condition", "W.loop>inc.exec-in", "inc.exec-out>clr.exec-in",
		"W.done>end.exec-in", "gv.value>end.count"}, incE...)
	for _, c := range []struct {
		flag any
		want string
	}{{"false", "1.0"}, {int64(0), "0"}, {[]any{}, "0"}, {map[string]any{}, "0"}, {0.0, "0"}, {[]any{false}, "1.0"}} {
		st := rvRun(t, rsFlow("f", "start", nodes, edges...), map[string]any{"count": int64(0), "flag": c.flag})
		if st.Status != durable.RunCompleted || jsonText(t, st.Output["count"]) != c.want {
			t.Errorf("flag %#v: status %s output %s, want count %s", c.flag, st.Status, jsonText(t, st.Output), c.want)
		}
	}
}

// §4.3/Q9: an unwired if condition is fed from the bus.
func TestControlFlowIfConditionFromBus(t *testing.T) {
	f := rsFlow("f", "start", []map[string]any{rvStart(), rvIf("if", nil),
		rvEnd("endT", []string{"r"}, map[string]any{"r": "T"}), rvEnd("endF", []string{"r"}, map[string]any{"r": "F"})},
		"start.exec-out>if.exec-in", "if.true>endT.exec-in", "if.false>endF.exec-in")
	for _, c := range []struct {
		v    any
		want string
	}{{"false", "T"}, {int64(0), "F"}, {"", "F"}} {
		st := rvRun(t, f, map[string]any{"condition": c.v})
		if st.Output["r"] != c.want {
			t.Errorf("bus condition %#v: %s want %s", c.v, jsonText(t, st.Output), c.want)
		}
	}
}

// §4.10: end with declared success pin unresolved keeps null; Q2 start defaults.
func TestControlFlowEndSuccessPinAndStartDefaults(t *testing.T) {
	start := rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "a:any", "b:any"},
		map[string]any{"pinDefaults": map[string]any{"a": "da", "b": "db"}})
	end := rsNode("end", "on_flow_end", []string{"exec-in:exec", "a:any", "b:any", "g:any", "success:any"}, nil, nil)
	st := rvRun(t, rsFlow("f", "start", []map[string]any{start, end, getVarNode("gv", "b")},
		"start.exec-out>end.exec-in", "start.a>end.a", "start.b>end.b", "gv.value>end.g"), map[string]any{"a": nil})
	want := map[string]any{"a": nil, "b": "db", "g": nil, "success": nil}
	if jsonText(t, st.Output) != jsonText(t, want) {
		t.Fatalf("output %s want %s", jsonText(t, st.Output), jsonText(t, want))
	}
}

// §4.6.1: a terminal effect node in a loop body returns to the loop after the effect.
func TestControlFlowTerminalEffectInLoop(t *testing.T) {
	ans := rsNode("ans", "answer_user", []string{"exec-in:exec", "message:string"}, []string{"exec-out:exec", "success:boolean"}, nil)
	inc, incE := rvInc("inc", "count")
	nodes := append([]map[string]any{rvStart(), rvLoop("L", []any{"a", "b", "c"}), ans, rvEnd("end", []string{"count"}, nil), getVarNode("gv", "count")}, inc...)
	edges := append([]string{"start.exec-out>L.exec-in", "L.loop>inc.exec-in", "inc.exec-out>ans.exec-in", "L.item>ans.message", "L.done>end.exec-in", "gv.value>end.count"}, incE...)
	st := rvRun(t, rsFlow("f", "start", nodes, edges...), map[string]any{"count": int64(0)})
	if st.Status != durable.RunCompleted || jsonText(t, st.Output["count"]) != "3.0" {
		t.Fatalf("status %s (%s) output %s", st.Status, st.Error, jsonText(t, st.Output))
	}
}

// §4.7: terminal effect outside blocks completes with {success, result: outcome}.
func TestControlFlowTerminalEffectOutput(t *testing.T) {
	ans := rsNode("ans", "answer_user", []string{"exec-in:exec", "message:string"}, []string{"exec-out:exec", "success:boolean"},
		map[string]any{"pinDefaults": map[string]any{"message": "hi"}})
	st := rvRun(t, rsFlow("f", "start", []map[string]any{rvStart(), ans}, "start.exec-out>ans.exec-in"), nil)
	t.Logf("output %s", jsonText(t, st.Output))
	if st.Status != durable.RunCompleted || st.Output["success"] != true {
		t.Fatalf("status %s output %s", st.Status, jsonText(t, st.Output))
	}
	if _, ok := st.Output["result"]; !ok {
		t.Fatalf("no result in %s", jsonText(t, st.Output))
	}
}

// §4.6.6 + §4.6.1: a for with a bad range inside an outer loop ends only that iteration.
func TestControlFlowForErrorInsideLoop(t *testing.T) {
	inc, incE := rvInc("inc", "count")
	forN := rsNode("F", "for", []string{"exec-in:exec", "start:number", "end:number", "step:number"},
		[]string{"loop:exec", "done:exec", "i:number", "index:number"}, map[string]any{"pinDefaults": map[string]any{"start": "x", "end": int64(3)}})
	inc2, inc2E := rvInc("inc2", "inner")
	nodes := append([]map[string]any{rvStart(), rvLoop("L", []any{int64(1), int64(2)}), forN, rvEnd("end", []string{"count", "inner", "err"}, nil),
		getVarNode("gv", "count"), getVarNode("gv2", "inner"), getVarNode("gve", "_flow_error")}, append(inc, inc2...)...)
	edges := append([]string{"start.exec-out>L.exec-in", "L.loop>inc.exec-in", "inc.exec-out>F.exec-in", "F.loop>inc2.exec-in",
		"L.done>end.exec-in", "gv.value>end.count", "gv2.value>end.inner", "gve.value>end.err"}, append(incE, inc2E...)...)
	st := rvRun(t, rsFlow("f", "start", nodes, edges...), map[string]any{"count": int64(0), "inner": int64(0)})
	if st.Status != durable.RunCompleted || jsonText(t, st.Output["count"]) != "2.0" || jsonText(t, st.Output["inner"]) != "0" {
		t.Fatalf("status %s output %s", st.Status, jsonText(t, st.Output))
	}
}

// §4.6.2: while nested in a loop with explicit back-edge (chat-loop pattern) restarts per outer item.
func TestControlFlowWhileBackEdgeInsideLoop(t *testing.T) {
	inc, incE := rvInc("inc", "count")
	cmp := rsNode("cmp", "compare", []string{"a:number", "b:number", "op:string"}, []string{"result:boolean"},
		map[string]any{"pinDefaults": map[string]any{"op": "<"}})
	mul := rsNode("mul", "multiply", []string{"a:number", "b:number"}, []string{"result:number"}, map[string]any{"pinDefaults": map[string]any{"b": int64(2)}})
	nodes := append([]map[string]any{rvStart(), rvLoop("L", []any{int64(1), int64(2), int64(3)}), whileNode("W", nil), cmp, getVarNode("gvc", "count"), mul,
		rvEnd("end", []string{"count"}, nil), getVarNode("gv", "count")}, inc...)
	// while count < item*2 (item of the outer loop)
	edges := append([]string{"start.exec-out>L.exec-in", "L.loop>W.exec-in", "gvc.value>cmp.a", "L.item>mul.a", "mul.result>cmp.b", "cmp.result>W.condition",
		"W.loop>inc.exec-in", "inc.exec-out>W.exec-in", "L.done>end.exec-in", "gv.value>end.count"}, incE...)
	st := rvRun(t, rsFlow("f", "start", nodes, edges...), map[string]any{"count": int64(0)})
	if st.Status != durable.RunCompleted || jsonText(t, st.Output["count"]) != "6.0" {
		t.Fatalf("status %s (%s) output %s", st.Status, st.Error, jsonText(t, st.Output))
	}
}

// §4.6.3/4.6.4 nested in a loop: sequence and parallel(+completed) restart per item.
func TestControlFlowSequenceParallelInLoop(t *testing.T) {
	a, aE := rvInc("a", "count")
	b, bE := rvInc("b", "count")
	c, cE := rvInc("c", "done")
	seq := rsNode("seq", "sequence", []string{"exec-in:exec"}, []string{"then:0:exec", "then:1:exec"}, nil)
	par := rsNode("par", "parallel", []string{"exec-in:exec"}, []string{"then:0:exec", "then:1:exec", "completed:exec"}, nil)
	for _, sched := range []string{"seq", "par"} {
		nodes := append([]map[string]any{rvStart(), rvLoop("L", []any{int64(1), int64(2)}), seq, par, rvEnd("end", []string{"count", "done"}, nil),
			getVarNode("gv", "count"), getVarNode("gv2", "done")}, append(append(a, b...), c...)...)
		edges := append([]string{"start.exec-out>L.exec-in", "L.loop>" + sched + ".exec-in", sched + ".then:0>a.exec-in", sched + ".then:1>b.exec-in",
			"par.completed>c.exec-in", "L.done>end.exec-in", "gv.value>end.count", "gv2.value>end.done"}, append(append(aE, bE...), cE...)...)
		st := rvRun(t, rsFlow("f", "start", nodes, edges...), map[string]any{"count": int64(0), "done": int64(0)})
		wantDone := "0"
		if sched == "par" {
			wantDone = "2.0"
		}
		if st.Status != durable.RunCompleted || jsonText(t, st.Output["count"]) != "4.0" || jsonText(t, st.Output["done"]) != wantDone {
			t.Errorf("%s: status %s output %s", sched, st.Status, jsonText(t, st.Output))
		}
	}
}

// Restart equivalence of the control scenarios above (every step on a fresh runtime over the file store).
func TestControlFlowRestartEquivalence(t *testing.T) {
	inc, incE := rvInc("inc", "count")
	cmp := rsNode("cmp", "compare", []string{"a:number", "b:number", "op:string"}, []string{"result:boolean"},
		map[string]any{"pinDefaults": map[string]any{"op": "<"}})
	mul := rsNode("mul", "multiply", []string{"a:number", "b:number"}, []string{"result:number"}, map[string]any{"pinDefaults": map[string]any{"b": int64(2)}})
	nodes := append([]map[string]any{rvStart(), rvLoop("L", []any{int64(1), int64(2), int64(3)}), whileNode("W", nil), cmp, getVarNode("gvc", "count"), mul,
		rvEnd("end", []string{"count", "item"}, nil), getVarNode("gv", "count")}, inc...)
	edges := append([]string{"start.exec-out>L.exec-in", "L.loop>W.exec-in", "gvc.value>cmp.a", "L.item>mul.a", "mul.result>cmp.b", "cmp.result>W.condition",
		"W.loop>inc.exec-in", "inc.exec-out>W.exec-in", "L.done>end.exec-in", "gv.value>end.count", "W.item>end.item"}, incE...)
	compareStraightAndRestarted(t, goldenCase{Flow: rsFlow("f", "start", nodes, edges...), Vars: map[string]any{"count": int64(0)}})
}

// §4.7 + §6.2 switch: Python str() matching, default branch.
func TestControlFlowSwitchMatching(t *testing.T) {
	cases := []map[string]any{{"id": "a", "value": "1"}, {"id": "b", "value": "True"}, {"id": "c", "value": ""}, {"id": "d", "value": int64(2)}}
	for _, c := range []struct {
		v    any
		want string
	}{{int64(1), "a"}, {true, "b"}, {nil, "c"}, {2.0, "def"}, {int64(2), "d"}, {"2", "d"}, {1.0, "def"}} {
		sw := rsNode("sw", "switch", []string{"exec-in:exec", "value:any"}, []string{"default:exec", "case:a:exec", "case:b:exec", "case:c:exec", "case:d:exec"},
			map[string]any{"switchConfig": map[string]any{"cases": []any{cases[0], cases[1], cases[2], cases[3]}}, "pinDefaults": map[string]any{"value": c.v}})
		f := rsFlow("f", "start", []map[string]any{rvStart(), sw, rvEnd("ea", []string{"r"}, map[string]any{"r": "a"}), rvEnd("eb", []string{"r"}, map[string]any{"r": "b"}),
			rvEnd("ec", []string{"r"}, map[string]any{"r": "c"}), rvEnd("ed", []string{"r"}, map[string]any{"r": "d"}), rvEnd("edef", []string{"r"}, map[string]any{"r": "def"})},
			"start.exec-out>sw.exec-in", "sw.case:a>ea.exec-in", "sw.case:b>eb.exec-in", "sw.case:c>ec.exec-in", "sw.case:d>ed.exec-in", "sw.default>edef.exec-in")
		st := rvRun(t, f, nil)
		if st.Output["r"] != c.want {
			t.Errorf("value %#v: %s want %s", c.v, jsonText(t, st.Output), c.want)
		}
	}
}
