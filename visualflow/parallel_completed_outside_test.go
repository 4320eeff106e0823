package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// A parallel's `completed` chain runs after the parallel has finished:
// spec §4.6.2 ("When a scheduler finishes it deletes frames[C], removes C
// from the stack, then: go to its done/completed target if connected")
// and the reference (control_adapter.py create_parallel_node_handler:
// frame["phase"] = "completed"; frames.pop(node_id); stack.pop(); then
// `return StepPlan(next_node=completed_target2)`). So a completed chain
// that ends at a terminal node outside any other control block ends the
// run exactly as that node ends it outside a parallel (here a terminal
// function node `add`: {response: 3, success: true}, §4.7). The Go scheduler instead keeps the parallel on the control
// stack while the completed chain runs; the terminal node's completion
// is turned into "branch end" by the control-return rule, control comes
// back to the parallel, and the run completes with the parallel's own
// {"success": true, "result": <bus>} — a different run output than
// Python's for the same flow.
func TestParallelCompletedChainEndsOutsideTheParallel(t *testing.T) {
	terminal := func() map[string]any {
		return rsNode("X", "add", []string{"exec-in:exec", "a:number", "b:number"}, []string{"exec-out:exec", "result:number"},
			map[string]any{"pinDefaults": map[string]any{"a": int64(1), "b": int64(2)}})
	}
	// Reference output: the same terminal node reached without a parallel.
	plain := rsFlow("plain", "start", []map[string]any{startNode(), terminal()}, "start.exec-out>X.exec-in")
	want := runFlow(t, plain, map[string]any{})
	if want.Status != durable.RunCompleted {
		t.Fatalf("plain flow: status %s (%s)", want.Status, want.Error)
	}

	par := rsFlow("par", "start", []map[string]any{
		startNode(),
		rsNode("P", "parallel", []string{"exec-in:exec"}, []string{"then:0:exec", "completed:exec"}, nil),
		setFlagNode("A", "a_ran"),
		terminal(),
	}, "start.exec-out>P.exec-in", "P.then:0>A.exec-in", "P.completed>X.exec-in")
	got := runFlow(t, par, map[string]any{})
	if got.Status != durable.RunCompleted {
		t.Fatalf("parallel flow: status %s (%s)", got.Status, got.Error)
	}
	if got.Vars["a_ran"] != true {
		t.Fatalf("branch then:0 did not run: vars a_ran=%v", got.Vars["a_ran"])
	}
	if a, b := jsonText(t, got.Output), jsonText(t, want.Output); a != b {
		t.Errorf("run output after the completed chain = %s\nwant %s (the terminal node's own completion: the parallel finished before its completed chain, spec §4.6.2)", a, b)
	}
	if c := tempControl(got); c != nil {
		if st, _ := c["stack"].([]any); len(st) != 0 {
			t.Errorf("control stack at the end = %v, want empty", st)
		}
	}
}

// Same root cause, worse symptom: a function node that fails in the
// `completed` chain of a top-level parallel must complete the run with
// {success: false, error, node} (§4.2 step 6), because the parallel has
// already finished and no control block is active (§4.6.2; reference
// control_adapter.py pops the parallel's frame and stack entry before
// jumping to completed_target, so compiler.py's
// _wrap_return_to_active_control finds no active control node). In Go
// the parallel is still on the stack, the failure is treated as a
// "branch end" (Q3), and the run completes with success=true: the error
// is silently swallowed.
func TestParallelCompletedChainFailureFailsTheRun(t *testing.T) {
	div := rsNode("X", "divide", []string{"exec-in:exec", "a:number", "b:number"}, []string{"exec-out:exec", "result:number"},
		map[string]any{"pinDefaults": map[string]any{"a": int64(1), "b": int64(0)}})
	par := rsFlow("par", "start", []map[string]any{
		startNode(),
		rsNode("P", "parallel", []string{"exec-in:exec"}, []string{"then:0:exec", "completed:exec"}, nil),
		setFlagNode("A", "a_ran"),
		div,
	}, "start.exec-out>P.exec-in", "P.then:0>A.exec-in", "P.completed>X.exec-in")
	got := runFlow(t, par, map[string]any{})
	if got.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", got.Status, got.Error)
	}
	if got.Output["success"] != false || got.Output["node"] != "X" {
		t.Errorf("run output = %s\nwant {success: false, error: \"Division by zero\", node: \"X\"}: the failing node is outside any active control block once the parallel finished",
			jsonText(t, got.Output))
	}
}

// A parallel frame an earlier Go version saved in phase "completed" (it
// stayed on the stack while its completed chain ran) means that chain has
// ended when control comes back: the parallel finishes without running it
// a second time.
func TestParallelFrame_OlderCompletedPhaseFinishes(t *testing.T) {
	flow := rsFlow("parframe", "P", []map[string]any{
		rsNode("P", "parallel", []string{"exec-in:exec"}, []string{"then:0:exec", "completed:exec"}, nil),
		setFlagNode("A", "a_ran"),
		setFlagNode("X", "x_ran"),
	}, "P.then:0>A.exec-in", "P.completed>X.exec-in")
	frame := map[string]any{"kind": "parallel", "phase": "completed", "idx": int64(1), "then": []any{"then:0"}, "completed_target": "X"}
	vars := map[string]any{"_temp": map[string]any{"_control": map[string]any{
		"stack": []any{"P"}, "return_to": "P", "frames": map[string]any{"P": frame},
	}}}
	_, st := startRunWith(t, flow, CompileOptions{}, vars)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s, want completed", st.Status)
	}
	if st.Vars["a_ran"] != nil || st.Vars["x_ran"] != nil {
		t.Errorf("a_ran=%v x_ran=%v, want neither (branches and completed chain already ran); output=%s",
			st.Vars["a_ran"], st.Vars["x_ran"], jsonText(t, st.Output))
	}
}
