package runtime_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A subworkflow wait that asked to be wrapped as a tool result stores a
// resume payload verbatim only when it is already {mode, results} (spec
// §2.6 step 4); one with "mode" alone (or "results" alone) is still
// converted into the tool envelope.
func TestSubworkflowWrapConvertsAPayloadWithModeOnly(t *testing.T) {
	ctx := context.Background()
	parent := &runtime.Workflow{ID: "p", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
				Payload: map[string]any{"workflow_id": "ask", "async": true, "wait": true, "wrap_as_tool_result": true}}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"sub": run.Vars["sub"]})
		}),
	}}
	for _, extra := range []string{"mode", "results"} {
		f := setup(t, parent, askWorkflow())
		id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "p"})
		st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
		if err != nil || st.Status != durable.RunWaiting || st.Waiting.Reason != durable.WaitSubworkflow {
			t.Fatalf("parent: %v %v; want waiting on its child", st, err)
		}
		child := runtime.WaitedChild(st)
		st, err = f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: st.Waiting.WaitKey,
			Payload: map[string]any{extra: "x", "output": map[string]any{"answer": "A"}}})
		if err != nil || st.Status != durable.RunCompleted {
			t.Fatalf("%s: resume: %v %v", extra, st, err)
		}
		got, _ := json.Marshal(st.Output["sub"])
		want := `{"mode":"executed","results":[{"call_id":"subworkflow","error":null,"name":"start_subworkflow",` +
			`"output":{"answer":"A","rendered":"A","sub_run_id":"` + child + `"},"success":true}]}`
		if string(got) != want {
			t.Errorf("payload with %q only: stored\n %s\nwant\n %s", extra, got, want)
		}
	}
}
