package runtime_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// refusesWorkflow is a process's view of a store in which every commit of
// a run of workflow wf fails before it is made.
type refusesWorkflow struct {
	store.Wrapper
	wf string
}

func (s *refusesWorkflow) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if p.Run != nil && p.Run.WorkflowID == s.wf {
		return errors.New("connection reset")
	}
	return s.Wrapper.RunCommit(ctx, p)
}

// Runner B serves "gp" and "child", runner A only "parent": gp waits on
// parent, parent on child. B ends the child and resumes the parent
// without a tick, the answer of that commit lost: B keeps the parent's
// resume for a retry. A then finishes the parent, but its hand-off of
// the parent's end to gp fails. B's retry finds the parent ended: it
// drives the ended parent without its workflow, which hands its end to
// gp, waiting on it, which B serves and completes. Leaving an ended
// parent B does not serve to "a runtime that serves it" would leave gp
// waiting on an ended run.
func TestRetriedParentResumeHandsAnEndedUnservedParentsEndOn(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	gp := &runtime.Workflow{ID: "gp", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
				Payload: map[string]any{"workflow_id": "parent", "async": true, "wait": true}}, "after")
		}),
		"after": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"sub": run.Vars["sub"]})
		}),
	}}
	bView := &parentCommitLost{Wrapper: store.Wrapper{Store: mem}}
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	setup := servingRuntime(t, mem, "runner-c", gp, waitingParent(true), answeringChild())
	a := servingRuntime(t, &refusesWorkflow{Wrapper: store.Wrapper{Store: mem}, wf: "gp"}, "runner-a", waitingParent(true))
	b, _ := loggingRuntime(t, bView, "runner-b", clock, gp, answeringChild())

	gid, err := setup.Start(ctx, runtime.StartParams{WorkflowID: "gp"})
	if err != nil {
		t.Fatal(err)
	}
	gate := func(ctx context.Context, run *durable.RunState, nodeID string) error {
		if run.WorkflowID == "child" {
			return runtime.ErrStepGateClosed // the child waits for runner B
		}
		return nil
	}
	gst, err := setup.Tick(ctx, gid, runtime.TickOptions{StepGate: gate})
	if err != nil || runtime.WaitedChild(gst) == "" {
		t.Fatalf("setup: gp %v, %v; want waiting on its parent run", gst, err)
	}
	pid := runtime.WaitedChild(gst)
	pst, err := setup.GetState(ctx, pid)
	if err != nil || runtime.WaitedChild(pst) == "" {
		t.Fatalf("setup: parent %v, %v; want waiting on its child", pst, err)
	}
	cid := runtime.WaitedChild(pst)

	bView.armed = true
	if cst, err := b.Tick(ctx, cid, runtime.TickOptions{}); err != nil || cst.Status != durable.RunCompleted {
		t.Fatalf("child ticked by runner B: %v, %v; want completed", cst, err)
	}
	if !bView.lost || b.PendingFollowUps() != 1 {
		t.Fatalf("setup: lost answer %v, B keeps %d follow-ups; want the parent's resume kept", bView.lost, b.PendingFollowUps())
	}
	if pst, err := a.Tick(ctx, pid, runtime.TickOptions{}); err != nil || pst.Status != durable.RunCompleted {
		t.Fatalf("setup: parent ticked by runner A: %v, %v; want completed", pst, err)
	}
	if g, _ := setup.GetState(ctx, gid); runtime.WaitedChild(g) != pid {
		t.Fatalf("setup: gp is %s; want still waiting on the ended parent (A's hand-off failed)", g.Status)
	}
	for range 3 {
		mu.Lock()
		now = now.Add(10 * time.Minute)
		mu.Unlock()
		b.RetryFollowUps(ctx)
	}
	if g, _ := setup.GetState(ctx, gid); g.Status != durable.RunCompleted {
		t.Fatalf("gp is %s (waiting on %q) after runner B's retries; want its ended parent's end handed on and gp completed",
			g.Status, runtime.WaitedChild(g))
	}
}
