package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestSyncSubworkflowNestingLimitIsExactly200: docs/compatibility.md
// ("sync subworkflow nesting") promises at most 200 nested sync
// subworkflows within one tick, the 201st level's effect failing. A
// self-recursive sync subflow therefore makes exactly 201 runs (the root
// and 200 children); an off-by-one in the depth check lets one more in.
func TestSyncSubworkflowNestingLimitIsExactly200(t *testing.T) {
	if !runInChildProcess(t) {
		return
	}
	ctx := context.Background()
	st := memory.New()
	rt := selfRecursiveRuntime(t, st, nil)
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "rec"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatalf("tick: %v", err)
	}
	if got.Status != durable.RunFailed {
		t.Fatalf("root run %s, want failed", got.Status)
	}
	runs, err := st.RunList(ctx, &store.RunListParams{Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 201 {
		t.Fatalf("%d runs made; want 201 (the root and 200 nested sync children, the limit documented)", len(runs))
	}
}

// TestAsyncWaitDetailsSayAsync: spec runtime-model.md
// (START_SUBWORKFLOW modes): an async+wait start leaves the parent waiting
// with details {sub_run_id, sub_workflow_id, async: true, include_traces}.
func TestAsyncWaitDetailsSayAsync(t *testing.T) {
	parent := &runtime.Workflow{ID: "p", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": wevNode(func(run *durable.RunState) runtime.StepPlan {
			return wevEffect(durable.EffectStartSubworkflow, map[string]any{"workflow_id": "c", "async": true, "wait": true}, "sub", "end")
		}),
		"end": wevNode(func(run *durable.RunState) runtime.StepPlan { return runtime.Complete(map[string]any{"ok": true}) }),
	}}
	child := &runtime.Workflow{ID: "c", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": wevNode(func(run *durable.RunState) runtime.StepPlan {
			return wevEffect(durable.EffectWaitEvent, map[string]any{"wait_key": "go"}, "go", "wait")
		}),
	}}
	rt := wevRuntime(t, parent, child)
	p := wevStartTick(t, rt, runtime.StartParams{WorkflowID: "p"})
	if p.Status != durable.RunWaiting || p.Waiting == nil || p.Waiting.Reason != durable.WaitSubworkflow {
		t.Fatalf("parent %s (%+v), want waiting on its async child", p.Status, p.Waiting)
	}
	d := p.Waiting.Details
	if d["async"] != true {
		t.Errorf("details.async = %#v, want true (details %v)", d["async"], d)
	}
	if d["sub_workflow_id"] != "c" || d["sub_run_id"] != runtime.WaitedChild(p) || d["include_traces"] != false {
		t.Errorf("details %v, want sub_run_id, sub_workflow_id c, include_traces false", d)
	}
}
