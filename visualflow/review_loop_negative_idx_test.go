package visualflow

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A loop frame whose idx is negative (a frame written by another runtime
// or edited by a host) made runLoop index items with it: the node
// panicked ("index out of range [-1]") and the run failed. The reference
// indexes the frozen items list as Python does (items[-1] is the last
// item) and carries on from there.
func TestReviewLoopNegativeFrameIndexDoesNotPanic(t *testing.T) {
	flow := rsFlow("neg_idx", "start", []map[string]any{
		rvStart(),
		rvLoop("L", []any{"a", "b", "c"}),
		setVarNode("sv", "seen", nil),
		rvEnd("end", []string{"seen"}, nil),
		getVarNode("gv", "seen"),
	}, "start.exec-out>L.exec-in", "L.loop>sv.exec-in", "L.item>sv.value", "L.done>end.exec-in", "gv.value>end.seen")
	wf, err := Compile(flow, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := tickFromNegativeLoopFrame(t, wf, nil)
	// items[-1] = "c", then idx 0.. 2: a, b, c; the last write is "c".
	if got := st.Output["seen"]; got != "c" {
		t.Fatalf("output %s, want seen=c", jsonText(t, st.Output))
	}
}

// tickFromNegativeLoopFrame starts a run of wf (with vars) at its loop L
// over [a b c], whose frame already holds idx -1 as a run written by
// another runtime may, ticks it and checks that it completed.
func tickFromNegativeLoopFrame(t *testing.T, wf *runtime.Workflow, vars map[string]any) *durable.RunState {
	t.Helper()
	rt := newTestRuntime(t, memory.New(), nil, wf)
	ctx := context.Background()
	all := map[string]any{"_temp": map[string]any{"_control": map[string]any{
		"stack":     []any{"L"},
		"return_to": "L",
		"frames":    map[string]any{"L": map[string]any{"kind": "loop", "idx": int64(-1), "items": []any{"a", "b", "c"}}},
	}}}
	for k, v := range vars {
		all[k] = v
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf.ID, Vars: all})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s), want completed", st.Status, st.Error)
	}
	return st
}
