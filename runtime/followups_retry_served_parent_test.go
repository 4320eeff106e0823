package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestFollowUpsRetriedParentResumeDrivesAServedParentPastItsResume: a
// parent waiting on an async child is resumed by the child's end and
// ticked on; a commit of that tick (after the resume's) loses its answer,
// so the parent's resume is kept for a retry. The retry finds the parent
// running, no longer waiting, its last record no longer the resume: a
// parent this runtime serves is driven on (the failed attempt's steps
// may have left it there: here the STARTED record of a handler that is
// not Local), not left running undriven in a live process,
// as it would be if the retry only drove a parent whose last record is
// the resume (driveResumedElsewhere) or an ended one.
func TestFollowUpsRetriedParentResumeDrivesAServedParentPastItsResume(t *testing.T) {
	wfs := parentAndAskingChild()
	parent := &runtime.Workflow{ID: "zparent", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": wfs[0].Nodes["spawn"],
		"after": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Next("mid"), nil
		},
		"mid": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: "job", ResultKey: "said"}, "end"), nil
		},
		"end": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"child": run.Vars["sub"]}), nil
		},
	}}
	st := &loseCommitOnce{Wrapper: store.Wrapper{Store: memory.New()}, match: func(p *store.CommitParams) bool {
		return p.Run.WorkflowID == "zparent" && p.Run.Status == durable.RunRunning && p.Run.CurrentNode == "mid"
	}}
	// A handler that is not Local: its STARTED record is committed
	// before it runs, a commit of the running parent at "mid".
	job := runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		return runtime.Completed(map[string]any{"ok": true}), nil
	}}
	h := runtimetest.New(t, runtimetest.Config{Workflows: []*runtime.Workflow{parent, wfs[1]}, Store: st,
		Handlers: map[durable.EffectType]runtime.Handler{"job": job}})
	pid, p := h.Run("zparent", nil)
	childID := runtime.WaitedChild(p)
	if childID == "" {
		t.Fatalf("setup: parent is %s, not waiting on a child", p.Status)
	}
	c := h.RequireStatus(childID, durable.RunWaiting)
	st.armed.Store(true)
	_, err := h.Runtime.Resume(t.Context(), runtime.ResumeParams{RunID: childID, WaitKey: c.Waiting.WaitKey,
		Payload: map[string]any{"response": "yes"}})
	if !st.failed.Load() {
		t.Fatalf("setup: the parent's commit at \"mid\" was not reached (resume err %v)", err)
	}
	if p := h.State(pid); p.Status != durable.RunRunning || p.CurrentNode != "mid" {
		t.Fatalf("setup: after the lost answer the parent is %s at %q; want running at \"mid\"", p.Status, p.CurrentNode)
	}
	for i := 0; i < 12; i++ {
		h.Advance(10 * time.Minute)
	}
	if p := h.State(pid); p.Status != durable.RunCompleted {
		t.Fatalf("parent %s is %s at %q two hours after the retry of its resume: nothing drove it on (%d follow-ups kept)",
			pid, p.Status, p.CurrentNode, h.Runtime.PendingFollowUps())
	}
}
