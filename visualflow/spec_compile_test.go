package visualflow

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// Spec §3.1 step 4: "the existing data edge into T.pinId (if any) is
// removed and becomes src → mux.fallback", so a route without an override
// reads the wired value while the overridden route reads its own source.
func TestSpec31_OverriddenPinFallsBackToItsWire(t *testing.T) {
	for _, c := range []struct {
		cond bool
		want string
	}{{true, "overridden"}, {false, "wired"}} {
		f := overrideFlow(c.cond, map[string]any{"sourceNodeId": "lit", "sourceHandle": "value"}, nil)
		f["nodes"] = append(f["nodes"].([]any), literalStringNode("wire", "wired"))
		f["edges"] = append(f["edges"].([]any), rsEdge("wire.value>X.via"))
		st := runFlow(t, f, map[string]any{})
		if st.Status != durable.RunCompleted {
			t.Fatalf("cond %v: status %s (%s)", c.cond, st.Status, st.Error)
		}
		if st.Output["via"] != c.want {
			t.Errorf("cond %v: output = %s, want via = %q", c.cond, jsonText(t, st.Output), c.want)
		}
	}
}

// Spec §3.1 step 1: entryRoutes define the routes in array order (route
// index = position), a missing sourceHandle is "exec-out" and a missing
// key is "<sourceNodeId>::<sourceHandle>"; step 3 inserts
// __internal_join_exec__<T> as a runtime node.
func TestSpec31_EntryRoutesOrderAndDefaultKeys(t *testing.T) {
	f := twoEntryFlow(map[string]any{
		"entryRoutes": []any{map[string]any{"sourceNodeId": "S2"}, map[string]any{"sourceNodeId": "S1"}},
		"inputRouteOverrides": map[string]any{"m": map[string]any{
			"S1::exec-out": map[string]any{"sourceNodeId": "S1", "sourceHandle": "x"},
			"S2::exec-out": map[string]any{"sourceNodeId": "S2", "sourceHandle": "message"},
		}},
	})
	wf, err := Compile(f, CompileOptions{})
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	if _, ok := wf.Nodes[joinPrefix+"T"]; !ok {
		t.Fatalf("workflow nodes lack %s", joinPrefix+"T")
	}
	st := runFlow(t, f, map[string]any{"x": "one", "message": "two"})
	if st.Status != durable.RunCompleted || st.Output["m"] != "one" {
		t.Fatalf("status %s (%s), output %s, want m = one", st.Status, st.Error, jsonText(t, st.Output))
	}
	tmp, _ := st.Vars["_temp"].(map[string]any)
	outs, _ := tmp["node_outputs"].(map[string]any)
	rec, _ := outs[joinPrefix+"T"].(map[string]any)
	if jsonText(t, rec["which"]) != "1" {
		t.Errorf("join record = %s, want which = 1 (S1 is the second entry of entryRoutes)", jsonText(t, rec))
	}
}

// Spec §3.1 steps 2–3: without exec fan-in the flow is unchanged (no join
// node is generated).
func TestSpec31_NoFanInAddsNoJoin(t *testing.T) {
	wf, err := Compile(rsFlow("f", "start", []map[string]any{rvStart(), rvEnd("end", nil, nil)}, "start.exec-out>end.exec-in"), CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for id := range wf.Nodes {
		if strings.HasPrefix(id, joinPrefix) {
			t.Fatalf("workflow has generated node %s without exec fan-in", id)
		}
	}
}

// Spec §3.1 step 2: an override referencing a missing source node is a
// compile error.
func TestSpec31_OverrideToMissingSourceNodeIsRefused(t *testing.T) {
	f := overrideFlow(true, map[string]any{"sourceNodeId": "ghost", "sourceHandle": "value"}, nil)
	_, err := Compile(f, CompileOptions{})
	if err == nil || !strings.Contains(err.Error(), "missing source node") {
		t.Fatalf("err = %v, want a missing source node error", err)
	}
}

// Spec §3.3: "Entry = entryNode if it names an exec node; else the first
// exec node (document order) with no incoming exec edge".
func TestSpec33_EntryNodeNamingAPureNodeFallsBack(t *testing.T) {
	f := rsFlow("f", "lit", []map[string]any{literalStringNode("lit", "x"), rvStart(), rvEnd("end", nil, nil)}, "start.exec-out>end.exec-in")
	wf, err := Compile(f, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if wf.Entry != "start" {
		t.Fatalf("entry = %q, want start", wf.Entry)
	}
}

// Spec §3.3: when every exec node has an incoming exec edge the entry is
// the first exec node in document order.
func TestSpec33_EveryExecNodeEnteredTakesTheFirst(t *testing.T) {
	f := rsFlow("f", "", []map[string]any{
		literalStringNode("lit", "x"),
		setVarNode("a", "x", map[string]any{"value": int64(1)}),
		setVarNode("b", "y", map[string]any{"value": int64(2)}),
	}, "a.exec-out>b.exec-in", "b.exec-out>a.exec-in")
	wf, err := Compile(f, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if wf.Entry != "a" {
		t.Fatalf("entry = %q, want a", wf.Entry)
	}
}

// Spec §3.3: exec nodes not reachable from the entry are dropped silently
// (even one whose outputs would not compile), while pure nodes are kept.
func TestSpec33_UnreachableExecNodesAreDroppedSilently(t *testing.T) {
	f := rsFlow("f", "start", []map[string]any{
		rvStart(), rvEnd("end", []string{"v"}, nil), literalStringNode("lit", "kept"),
		setVarNode("orphan", "x", map[string]any{"value": int64(1)}),
		rvEnd("o1", nil, nil), rvEnd("o2", nil, nil),
	}, "start.exec-out>end.exec-in", "lit.value>end.v", "orphan.exec-out>o1.exec-in", "orphan.exec-out>o2.exec-in")
	wf, err := Compile(f, CompileOptions{})
	if err != nil {
		t.Fatalf("compile: %v (an unreachable fan-out must not be checked)", err)
	}
	for _, id := range []string{"orphan", "o1", "o2"} {
		if _, ok := wf.Nodes[id]; ok {
			t.Errorf("unreachable exec node %s is a runtime node", id)
		}
	}
	st := runFlow(t, f, map[string]any{})
	if st.Status != durable.RunCompleted || st.Output["v"] != "kept" {
		t.Fatalf("status %s, output %s, want v = kept (pure nodes are never dropped)", st.Status, jsonText(t, st.Output))
	}
}

// Spec §3.4: any other single outgoing handle of a non-scheduler node is a
// compile error ("unsupported branching output").
func TestSpec34_SingleUnsupportedHandleIsRefused(t *testing.T) {
	code := rsNode("c", "code", []string{"exec-in:exec"}, []string{"weird:exec", "output:any"}, map[string]any{"codeBody": "return 1"})
	f := rsFlow("f", "start", []map[string]any{rvStart(), code, rvEnd("end", nil, nil)}, "start.exec-out>c.exec-in", "c.weird>end.exec-in")
	_, err := Compile(f, CompileOptions{})
	if err == nil || !strings.Contains(err.Error(), "unsupported branching output") {
		t.Fatalf("err = %v, want an unsupported branching output error", err)
	}
}

// Spec §3.4: an edge from a then:N handle a sequence does not declare
// (e.g. a node without pin metadata) is the compile error "Control node
// '<id>' has unsupported execution outputs".
func TestSpec34_SequenceWithoutPinMetadataRefusesThenEdges(t *testing.T) {
	seq := map[string]any{"id": "seq", "type": "sequence", "data": map[string]any{}}
	f := rsFlow("f", "start", []map[string]any{rvStart(), seq, rvEnd("end", nil, nil)}, "start.exec-out>seq.exec-in", "seq.then:0>end.exec-in")
	_, err := Compile(f, CompileOptions{})
	if err == nil || !strings.Contains(err.Error(), "Control node 'seq' has unsupported execution outputs") {
		t.Fatalf("err = %v, want the unsupported execution outputs error", err)
	}
}
