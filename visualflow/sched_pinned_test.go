package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// TestParallelFrameCompletedTargetWins pins that a saved parallel
// frame's completed_target decides where the parallel continues once its
// branches are done, as in the reference, over the compiled completed edge.
func TestParallelFrameCompletedTargetWins(t *testing.T) {
	t.Parallel()
	flow := rsFlow("parframe", "P", []map[string]any{
		rsNode("P", "parallel", []string{"exec-in:exec"}, []string{"then:0:exec", "then:1:exec", "completed:exec"}, nil),
		setFlagNode("A", "a_ran"), setFlagNode("B", "b_ran"), setFlagNode("C", "c_ran"),
	}, "P.then:0>A.exec-in", "P.then:1>C.exec-in", "P.completed>B.exec-in")
	frame := map[string]any{"kind": "parallel", "idx": int64(1), "then": []any{"then:0"}, "phase": "branches", "completed_target": "C"}
	vars := map[string]any{"_temp": map[string]any{"_control": map[string]any{
		"stack": []any{"P"}, "return_to": "P", "frames": map[string]any{"P": frame},
	}}}
	_, st := startRunWith(t, flow, CompileOptions{}, vars)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s, want completed", st.Status)
	}
	if st.Vars["c_ran"] != true || st.Vars["b_ran"] != nil || st.Vars["a_ran"] != nil {
		t.Fatalf("a_ran=%v b_ran=%v c_ran=%v, want only the frame's completed target C to run",
			st.Vars["a_ran"], st.Vars["b_ran"], st.Vars["c_ran"])
	}
}

// TestFinishedSchedulerPopsOnlyTheTopEntry pins §4.6.2: a finishing
// scheduler on top of the control stack pops that one entry; an earlier
// entry of the same node (a re-entry from inside a nested block) stays.
func TestFinishedSchedulerPopsOnlyTheTopEntry(t *testing.T) {
	t.Parallel()
	tmp := map[string]any{"_control": map[string]any{"stack": []any{"L", "X", "L"}, "frames": map[string]any{}}}
	s := &step{vars: map[string]any{"_temp": tmp}, tmp: tmp}
	s.removeFromStack("L")
	if got := jsonText(t, s.stack()); got != jsonText(t, []any{"L", "X"}) {
		t.Fatalf("stack = %s, want [L, X]", got)
	}
	s.removeFromStack("L")
	if got := jsonText(t, s.stack()); got != jsonText(t, []any{"X"}) {
		t.Fatalf("stack = %s, want [X] (every occurrence removed when not on top)", got)
	}
}
