package visualflow

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// TestCompileRefusesDuplicateNodeIDs pins that two nodes sharing an id
// are a compile error naming the id, not one node silently replacing the
// other.
func TestCompileRefusesDuplicateNodeIDs(t *testing.T) {
	t.Parallel()
	flow := map[string]any{"id": "dup", "nodes": []any{
		startNode(),
		setVarNode("x", "a", map[string]any{"value": int64(1)}),
		setVarNode("x", "b", map[string]any{"value": int64(2)}),
	}, "edges": []any{rsEdge("start.exec-out>x.exec-in")}}
	_, err := Compile(flow, CompileOptions{})
	if err == nil || !strings.Contains(err.Error(), "node x: duplicate node id") {
		t.Fatalf("err = %v, want a duplicate node id error for x", err)
	}
}

// TestCompileRefusesReservedIDPrefix pins that a user node may not take
// an id in the namespace of the nodes multi-entry lowering generates.
func TestCompileRefusesReservedIDPrefix(t *testing.T) {
	t.Parallel()
	for _, id := range []string{joinPrefix + "t", muxPrefix + "t__p"} {
		flow := map[string]any{"id": "res", "nodes": []any{
			startNode(),
			setVarNode(id, "a", map[string]any{"value": int64(1)}),
		}, "edges": []any{rsEdge("start.exec-out>" + id + ".exec-in")}}
		_, err := Compile(flow, CompileOptions{})
		if err == nil || !strings.Contains(err.Error(), "reserved internal prefix") {
			t.Fatalf("id %s: err = %v, want a reserved prefix error", id, err)
		}
	}
}

// TestUndeclaredPinErrorListsAllPinsUpToTheBound pins that a node with
// exactly maxListedPins inputs has them all listed, with no "… 0 more".
func TestUndeclaredPinErrorListsAllPinsUpToTheBound(t *testing.T) {
	t.Parallel()
	flow := manyPinsFlow(t, maxListedPins)
	flow["edges"] = append(flow["edges"].([]any), map[string]any{"source": "l", "sourceHandle": "value", "target": "c", "targetHandle": "nope"})
	_, err := Compile(flow, CompileOptions{})
	if err == nil || !strings.Contains(err.Error(), "p31)") || strings.Contains(err.Error(), "more") {
		t.Fatalf("error = %v; want the %d input pins listed, none counted", err, maxListedPins)
	}
}

// TestEntryIsFirstExecNodeWithoutIncomingEdge pins §3.3: without an
// entryNode the entry is the first exec node (document order) that no exec
// edge enters, not merely the first exec node.
func TestEntryIsFirstExecNodeWithoutIncomingEdge(t *testing.T) {
	t.Parallel()
	f := rsFlow("f", "", []map[string]any{
		rvEnd("end", []string{"r"}, map[string]any{"r": "end"}),
		setVarNode("sv", "x", map[string]any{"value": "set"}),
		rvStart(),
	}, "start.exec-out>sv.exec-in", "sv.exec-out>end.exec-in")
	wf, err := Compile(f, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if wf.Entry != "start" {
		t.Fatalf("entry = %q, want start", wf.Entry)
	}
}

// TestReachableSubflowWithoutIDIsACompileError pins that a reachable
// subflow node naming no child flow fails at compile time.
func TestReachableSubflowWithoutIDIsACompileError(t *testing.T) {
	t.Parallel()
	f := rsFlow("f", "start", []map[string]any{rvStart(),
		rsNode("sub", "subflow", []string{"exec-in:exec"}, []string{"exec-out:exec"}, nil)},
		"start.exec-out>sub.exec-in")
	_, err := Compile(f, CompileOptions{})
	if err == nil || !strings.Contains(err.Error(), "subflow node has no subflowId") {
		t.Fatalf("err = %v, want a missing subflowId error", err)
	}
}

// TestSchedulerHandlesAreChecked pins §3.4: a sequence accepts only its
// then:* outputs (completed belongs to parallel), a loop only loop/done.
func TestSchedulerHandlesAreChecked(t *testing.T) {
	t.Parallel()
	seq := rsNode("seq", "sequence", []string{"exec-in:exec"}, []string{"then:0:exec", "completed:exec"}, nil)
	loop := rsNode("L", "loop", []string{"exec-in:exec", "items:array"}, []string{"loop:exec", "done:exec", "exec-out:exec"}, nil)
	for name, f := range map[string]map[string]any{
		"sequence completed": rsFlow("f", "start", []map[string]any{rvStart(), seq, rvEnd("a", nil, nil), rvEnd("b", nil, nil)},
			"start.exec-out>seq.exec-in", "seq.then:0>a.exec-in", "seq.completed>b.exec-in"),
		"loop exec-out": rsFlow("f", "start", []map[string]any{rvStart(), loop, rvEnd("a", nil, nil)},
			"start.exec-out>L.exec-in", "L.exec-out>a.exec-in"),
	} {
		_, err := Compile(f, CompileOptions{})
		if err == nil || !strings.Contains(err.Error(), "has unsupported execution outputs") {
			t.Errorf("%s: err = %v, want an unsupported execution outputs error", name, err)
		}
	}
}

// TestJoinExecWithoutSuccessorIsACompileError pins §3.4: a join_exec
// node with no outgoing exec edge is refused.
func TestJoinExecWithoutSuccessorIsACompileError(t *testing.T) {
	t.Parallel()
	f := rsFlow("f", "start", []map[string]any{rvStart(),
		rsNode("j", "join_exec", []string{"exec-in:exec"}, []string{"exec-out:exec"}, nil)},
		"start.exec-out>j.exec-in")
	_, err := Compile(f, CompileOptions{})
	if err == nil || !strings.Contains(err.Error(), "join_exec has no successor") {
		t.Fatalf("err = %v, want a join_exec without successor error", err)
	}
}

// TestMixedBranchHandlesAreACompileError pins §3.4: edges mixing the
// if family (true/false) with the switch family (default/case:*) are
// refused rather than compiled as one branch map.
func TestMixedBranchHandlesAreACompileError(t *testing.T) {
	t.Parallel()
	// The if declares no outputs, so its handles are not checked against pins.
	cond := rsNode("if", "if", []string{"exec-in:exec", "condition:boolean"}, nil, map[string]any{"pinDefaults": map[string]any{"condition": true}})
	f := rsFlow("f", "start", []map[string]any{rvStart(), cond, rvEnd("a", nil, nil), rvEnd("b", nil, nil)},
		"start.exec-out>if.exec-in", "if.true>a.exec-in", "if.default>b.exec-in")
	_, err := Compile(f, CompileOptions{})
	if err == nil || !strings.Contains(err.Error(), "multiple outgoing edges with mixed handles") {
		t.Fatalf("err = %v, want a mixed handles error", err)
	}
}

// TestExecOutEdgeIntoADataPinIsNoDataWire pins that an edge leaving an
// exec-out handle never feeds (or claims) a data pin: the pin keeps its
// default.
func TestExecOutEdgeIntoADataPinIsNoDataWire(t *testing.T) {
	t.Parallel()
	// sv declares no pins, so the edge start.exec-out>sv.value is not type-checked.
	sv := map[string]any{"id": "sv", "type": "set_var", "data": map[string]any{
		"pinDefaults": map[string]any{"name": "x", "value": "default"}}}
	f := rsFlow("f", "start", []map[string]any{rvStart(), sv, rvEnd("end", []string{"x"}, nil), getVarNode("gv", "x")},
		"start.exec-out>sv.exec-in", "start.exec-out>sv.value", "sv.exec-out>end.exec-in", "gv.value>end.x")
	st := rvRun(t, f, nil)
	if st.Output["x"] != "default" {
		t.Fatalf("output = %s, want x=default", jsonText(t, st.Output))
	}
}

// TestEntryNodeIsTrimmed pins that the document's entryNode is read
// trimmed, as every id is.
func TestEntryNodeIsTrimmed(t *testing.T) {
	t.Parallel()
	f := rsFlow("f", " start ", []map[string]any{
		setVarNode("other", "x", map[string]any{"value": 1}),
		rvStart(), rvEnd("end", nil, nil),
	}, "start.exec-out>end.exec-in")
	wf, err := Compile(f, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if wf.Entry != "start" {
		t.Fatalf("entry = %q, want start", wf.Entry)
	}
}

// TestObjectWiresIntoAssertionsPin pins the editor's connection rule
// that an object pin may feed an assertions pin (one assertion), so a flow
// the editor saves with that wire compiles.
func TestObjectWiresIntoAssertionsPin(t *testing.T) {
	t.Parallel()
	f := rsFlow("f", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "a:object"}, nil),
		rsNode("kg", "memory_kg_assert", []string{"exec-in:exec", "assertions:assertions"}, []string{"exec-out:exec"}, nil),
	}, "start.exec-out>kg.exec-in", "start.a>kg.assertions")
	if _, err := Compile(f, CompileOptions{}); err != nil {
		t.Fatalf("compile: %v", err)
	}
	if pinTypesCompatible("object", "array") {
		t.Fatal("object -> array accepted; only assertions takes an object")
	}
}

// TestExecutionPinsConnectOnlyToExecutionPins pins the editor rule
// that execution pins and data pins never connect: such a wire is a
// compile-time type mismatch.
func TestExecutionPinsConnectOnlyToExecutionPins(t *testing.T) {
	t.Parallel()
	f := rsFlow("f", "start", []map[string]any{
		rsNode("start", "on_flow_start", nil, []string{"exec-out:exec", "a:string"}, nil),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "v:string"}, nil, nil),
	}, "start.exec-out>end.exec-in", "start.exec-out>end.v")
	_, err := Compile(f, CompileOptions{})
	if err == nil || !strings.Contains(err.Error(), "type mismatch") {
		t.Fatalf("err = %v, want a type mismatch for exec-out -> v", err)
	}
}

// TestWorkspaceFolderPinIsAString pins that workspace_folder pins are
// of the string family: they connect to strings but not to numbers.
func TestWorkspaceFolderPinIsAString(t *testing.T) {
	t.Parallel()
	if !pinTypesCompatible("workspace_folder", "string") || pinTypesCompatible("workspace_folder", "number") {
		t.Fatal("workspace_folder must connect to string pins and not to number pins")
	}
}

// TestEdgeFromALiteralsUndeclaredPinCompiles pins the literal exemption of
// the edge check (§1.5, §3.2): a literal node's output is its whole
// {"value": …} object, so an edge from a handle its pin list does not
// declare (here "output", the whole record) is not refused. Checking
// literal sources like other nodes would refuse this flow.
func TestEdgeFromALiteralsUndeclaredPinCompiles(t *testing.T) {
	t.Parallel()
	f := rsFlow("f", "start", []map[string]any{rvStart(), literalStringNode("lit", "hi"), rvEnd("end", []string{"r"}, nil)},
		"start.exec-out>end.exec-in", "lit.output>end.r")
	st := rvRun(t, f, nil)
	r, _ := st.Output["r"].(map[string]any)
	if st.Status != durable.RunCompleted || r["value"] != "hi" {
		t.Fatalf("status %s (%s), output %s; want r = the literal's record", st.Status, st.Error, jsonText(t, st.Output))
	}
}
