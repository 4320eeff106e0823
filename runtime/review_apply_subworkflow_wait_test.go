package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// TestApplyEffectAsyncWaitSubworkflowLeavesNoChild: ApplyEffect turns a
// handler's wait into a failure ("an effect applied outside its graph
// cannot" wait: there is no node to resume). An async+wait
// START_SUBWORKFLOW is known to wait before anything is done, yet its
// handler creates the child and queues its drive before returning the
// wait: the effect is reported failed while the child it started runs to
// its end, an orphan whose end resumes nothing (one more per call).
func TestApplyEffectAsyncWaitSubworkflowLeavesNoChild(t *testing.T) {
	host := &runtime.Workflow{ID: "host", Entry: "ask", Nodes: map[string]runtime.NodeFunc{
		"ask": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}}, "ask")
		}),
	}}
	kid := &runtime.Workflow{ID: "kid", Entry: "k", Nodes: map[string]runtime.NodeFunc{
		"k": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"v": int64(1)})
		}),
	}}
	f := setup(t, host, kid)
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "host"})
	if st, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("host run: %v, %v", st, err)
	}
	out, err := f.rt.ApplyEffect(ctx, runtime.ApplyEffectParams{RunID: id, NodeID: "cmd", IdempotencyKey: "command:1",
		Effect: &durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
			Payload: map[string]any{"workflow_id": "kid", "async": true, "wait": true}}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != runtime.OutcomeFailed {
		t.Fatalf("outcome %+v, want failed (an applied effect cannot wait)", out)
	}
	kids, err := f.st.RunListChildren(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(kids) != 0 {
		t.Errorf("the failed effect left %d child run(s) (first: %s, %s); want none", len(kids), kids[0].RunID, kids[0].Status)
	}
}
