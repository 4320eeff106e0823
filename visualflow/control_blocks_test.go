package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
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

// §4.7: a switch whose chosen branch (default, or a case:*) has no edge
// ends the branch cleanly: the run completes with success:true.
func TestSwitchUnconnectedDefaultOrCaseEndsCleanly(t *testing.T) {
	for _, tc := range []struct{ value, branch string }{{"zzz", "default"}, {"x", "case:a"}} {
		flow := rsFlow("f", "start", []map[string]any{
			startNode(),
			rsNode("sw", "switch", []string{"exec-in:exec", "value:any"}, []string{"default:exec", "case:a:exec", "case:b:exec"},
				map[string]any{"pinDefaults": map[string]any{"value": tc.value},
					"switchConfig": map[string]any{"cases": []any{map[string]any{"id": "a", "value": "x"}, map[string]any{"id": "b", "value": "y"}}}}),
			setVarNode("b", "took", map[string]any{"value": "b"}),
		}, "start.exec-out>sw.exec-in", "sw.case:b>b.exec-in")
		st := runFlow(t, flow, map[string]any{})
		if st.Status != durable.RunCompleted {
			t.Fatalf("%s: status %s (%s)", tc.branch, st.Status, st.Error)
		}
		if st.Output["success"] != true || st.Output["branch"] != tc.branch {
			t.Fatalf("%s: output = %s, want a clean end (success:true, branch %s)", tc.branch, jsonText(t, st.Output), tc.branch)
		}
	}
}
