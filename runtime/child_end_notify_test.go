package runtime_test

// A child's end and its parent: NotifyChildEnded, WaitedChild and the
// follow-ups kept when the parent cannot be resumed.

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// WaitedChild prefers the wait's details.sub_run_id to its wait key, as
// its doc says.
func TestWaitedChildPrefersDetailsSubRunID(t *testing.T) {
	t.Parallel()
	run := &durable.RunState{Status: durable.RunWaiting, Waiting: &durable.WaitState{Reason: durable.WaitSubworkflow,
		WaitKey: runtime.SubworkflowWaitKey("by-key"), Details: map[string]any{"sub_run_id": "by-details"}}}
	if got := runtime.WaitedChild(run); got != "by-details" {
		t.Fatalf("WaitedChild = %q; want details.sub_run_id %q", got, "by-details")
	}
	run.Waiting.Details = nil
	if got := runtime.WaitedChild(run); got != "by-key" {
		t.Fatalf("WaitedChild without details = %q; want the wait key's %q", got, "by-key")
	}
}

// NotifyChildEnded of a run that does not exist reports it and keeps no
// follow-up for a retry (a deleted run is forgotten, never retried).
func TestNotifyChildEndedOfAMissingRunKeepsNoRetry(t *testing.T) {
	t.Parallel()
	rt, _, _ := scheduledRuntime(t, 0, asyncParentAndChild()...)
	err := rt.NotifyChildEnded(context.Background(), "no-such-run")
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("NotifyChildEnded of a missing run = %v; want ErrNotFound", err)
	}
	if n := rt.PendingFollowUps(); n != 0 {
		t.Fatalf("%d follow-ups kept for a run that does not exist; want none", n)
	}
}

// NotifyChildEnded resumes the parent only if it still waits on the
// child: a parent that does not wait (here running, never ticked) is left
// as it is, not driven.
func TestNotifyChildEndedLeavesAParentThatDoesNotWaitAlone(t *testing.T) {
	t.Parallel()
	var parentSteps atomic.Int32
	parent := &runtime.Workflow{ID: "busy", Entry: "work", Nodes: map[string]runtime.NodeFunc{
		"work": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			parentSteps.Add(1)
			return runtime.Complete(map[string]any{"ok": true})
		}),
	}}
	child := &runtime.Workflow{ID: "quick", Entry: "c", Nodes: map[string]runtime.NodeFunc{
		"c": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"child": true})
		}),
	}}
	rt, _, _ := scheduledRuntime(t, 0, parent, child)
	ctx := context.Background()
	pid, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "busy"})
	if err != nil {
		t.Fatal(err)
	}
	cid, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "quick", ParentRunID: pid})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := rt.Tick(ctx, cid, runtime.TickOptions{}); err != nil || c.Status != durable.RunCompleted {
		t.Fatalf("setup: child %v, %v", c, err)
	}
	before, _ := rt.GetState(ctx, pid)
	if err := rt.NotifyChildEnded(ctx, cid); err != nil {
		t.Fatalf("NotifyChildEnded: %v", err)
	}
	after, _ := rt.GetState(ctx, pid)
	if n := parentSteps.Load(); n != 0 || after.Status != durable.RunRunning || after.Version != before.Version {
		t.Fatalf("the parent, which does not wait on the child, was driven: %d steps, %s, version %d -> %d",
			n, after.Status, before.Version, after.Version)
	}
}

// A child that ends while its parent is paused does not resume the parent
// (a paused run is not resumed) and that is no failure: nothing is kept
// for a retry, and NotifyChildEnded reports no error.
func TestChildEndLeavesAPausedParentWaitingWithoutError(t *testing.T) {
	t.Parallel()
	parent := &runtime.Workflow{ID: "p", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
				Payload: map[string]any{"workflow_id": "c", "async": true, "wait": true}}, "end")
		}),
		"end": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"ok": true})
		}),
	}}
	child := &runtime.Workflow{ID: "c", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent,
				Payload: map[string]any{"wait_key": "go"}, ResultKey: "go"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"child": true})
		}),
	}}
	rt, _, _ := scheduledRuntime(t, 0, parent, child)
	ctx := context.Background()
	pid, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "p"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := rt.Tick(ctx, pid, runtime.TickOptions{})
	if err != nil || p.Status != durable.RunWaiting {
		t.Fatalf("setup: parent %v, %v", p, err)
	}
	cid := runtime.WaitedChild(p)
	if _, err := rt.Pause(ctx, pid, "hold on"); err != nil {
		t.Fatal(err)
	}
	if c, err := rt.Resume(ctx, runtime.ResumeParams{RunID: cid, WaitKey: "go", Payload: map[string]any{}}); err != nil || c.Status != durable.RunCompleted {
		t.Fatalf("setup: child %v, %v", c, err)
	}
	if err := rt.NotifyChildEnded(ctx, cid); err != nil {
		t.Fatalf("NotifyChildEnded with the parent paused = %v; want no error", err)
	}
	if got, _ := rt.GetState(ctx, pid); got.Status != durable.RunWaiting || !runtime.IsPaused(got) {
		t.Fatalf("the paused parent: %s paused=%v; want it still paused, waiting on its child", got.Status, runtime.IsPaused(got))
	}
	if n := rt.PendingFollowUps(); n != 0 {
		t.Fatalf("%d follow-ups kept for a paused parent; want none", n)
	}
}
