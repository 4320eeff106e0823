package runtime_test

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// varsQueryRun runs one node that sets scratchpad.x to "fresh" in its
// working copy (the run started with "stale") and then asks VARS_QUERY
// with payload (built from the run), and returns the tool result.
func varsQueryRun(t *testing.T, payload func(run *durable.RunState) map[string]any) map[string]any {
	t.Helper()
	wf := &runtime.Workflow{ID: "vq", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": wevNode(func(run *durable.RunState) runtime.StepPlan {
			run.Vars["scratchpad"] = map[string]any{"x": "fresh", "y": "other"}
			return wevEffect(durable.EffectVarsQuery, payload(run), "q", "end")
		}),
		"end": wevNode(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Complete(map[string]any{"q": run.Vars["q"]})
		}),
	}}
	rt := wevRuntime(t, wf)
	st := wevStartTick(t, rt, runtime.StartParams{WorkflowID: "vq", Vars: map[string]any{"scratchpad": map[string]any{"x": "stale"}}})
	if st.Status != durable.RunCompleted {
		t.Fatalf("run %s (%s), want completed", st.Status, st.Error)
	}
	q, _ := st.Output["q"].(map[string]any)
	if q == nil {
		q, _ = st.Vars["q"].(map[string]any)
	}
	if q == nil {
		t.Fatalf("no VARS_QUERY result in output %v", st.Output)
	}
	if rs, _ := q["results"].([]any); len(rs) == 1 {
		if r, ok := rs[0].(map[string]any); ok {
			return r
		}
	}
	t.Fatalf("VARS_QUERY result %v, want one tool result", q)
	return nil
}

// TestVarsQueryOwnRunIDReadsWorkingCopy: a target_run_id naming
// the calling run itself reads the run as the step sees it (Python reads
// run.vars unless the target is another run), not its last checkpoint.
func TestVarsQueryOwnRunIDReadsWorkingCopy(t *testing.T) {
	q := varsQueryRun(t, func(run *durable.RunState) map[string]any {
		return map[string]any{"path": "scratchpad.x", "target_run_id": run.RunID}
	})
	out, _ := q["output"].(string)
	if q["success"] != true || !strings.Contains(out, `"fresh"`) {
		t.Fatalf("result %v, want the working copy's value \"fresh\"", q)
	}
}

// TestVarsQueryNullPathFallsBackToVarPath: path present but null
// falls back to var_path (spec: path / var_path), not to the default
// scratchpad.
func TestVarsQueryNullPathFallsBackToVarPath(t *testing.T) {
	q := varsQueryRun(t, func(run *durable.RunState) map[string]any {
		return map[string]any{"path": nil, "var_path": "scratchpad.y"}
	})
	out, _ := q["output"].(string)
	if q["success"] != true || !strings.Contains(out, `"path": "scratchpad.y"`) {
		t.Fatalf("result %v, want scratchpad.y read", q)
	}
}
