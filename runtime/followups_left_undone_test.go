package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestCancelledTickKeepsItsFollowUps: a Tick whose caller
// goes away mid-tick checkpoints what it did (session.steps flushes before
// returning the interruption), an async child started earlier in that tick
// included, but Runtime.Tick returned the error before d.finish: the
// child's queued follow-up tick was neither drained nor kept for
// RetryFollowUps, the child was left running and nothing in a live
// process without claims drove it (the parent moved past the start node,
// so ticking the parent again does not tick the child either). A failed
// Tick, Resume, NotifyChildEnded or Cancel now keeps what it queued.
func TestCancelledTickKeepsItsFollowUps(t *testing.T) {
	var cancel context.CancelFunc
	parent := &runtime.Workflow{ID: "parent", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
				Payload: map[string]any{"workflow_id": "child", "async": true}}, "gone"), nil
		},
		"gone": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			cancel() // the host's request ends here (a client disconnect)
			return runtime.Next("end"), nil
		},
		"end": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	child := &runtime.Workflow{ID: "child", Entry: "c", Nodes: map[string]runtime.NodeFunc{
		"c": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"child": true}), nil
		},
	}}
	h := runtimetest.New(t, runtimetest.Config{Workflows: []*runtime.Workflow{parent, child}})
	id := h.Start("parent", nil)
	var ctx context.Context
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	_, err := h.Runtime.Tick(ctx, id, runtime.TickOptions{})
	if err == nil {
		t.Fatal("setup: the tick was not interrupted")
	}
	p := h.State(id)
	childID, _ := p.Vars["sub"].(map[string]any)["sub_run_id"].(string)
	if childID == "" {
		t.Fatalf("setup: the parent's checkpoint does not hold the started child (vars %v)", p.Vars)
	}
	// The host lets it be; the scheduler's loop passes, an hour long.
	for i := 0; i < 6; i++ {
		h.Advance(10 * time.Minute)
	}
	c := h.State(childID)
	if c.Status != durable.RunCompleted {
		t.Fatalf("async child %s is %s at %q after an hour of scheduler passes: the follow-up tick its parent's "+
			"interrupted Tick queued was dropped, not kept (%d follow-ups kept)", childID, c.Status, c.CurrentNode,
			h.Runtime.PendingFollowUps())
	}
}

// TestChildPastFollowRoundsIsDrivenOn: a follow-up gives
// a run at most maxFollowRounds ticks (driver.drain) and then left it
// running, "for the next call or the scheduler's recovery". Without
// claims the scheduler recovers only at Start, and its loop drives only
// the runs its own drives left running (Scheduler.unfinished): an async
// child that needed more than maxFollowRounds ticks was never driven again
// in a live process. It is now kept for RetryFollowUps.
func TestChildPastFollowRoundsIsDrivenOn(t *testing.T) {
	ctx := context.Background()
	const steps = 150 // past maxFollowRounds (100) ticks of one step each
	parent := &runtime.Workflow{ID: "parent", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
				Payload: map[string]any{"workflow_id": "loop", "async": true, "wait": true}}, "after"), nil
		},
		"after": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"child": run.Vars["sub"]}), nil
		},
	}}
	loop := &runtime.Workflow{ID: "loop", Entry: "l", Nodes: map[string]runtime.NodeFunc{
		"l": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			var n int64
			switch v := run.Vars["n"].(type) {
			case int64:
				n = v
			case int:
				n = int64(v)
			case float64:
				n = int64(v)
			case json.Number:
				n, _ = v.Int64()
			}
			if n >= steps {
				return runtime.Complete(map[string]any{"n": n}), nil
			}
			run.Vars["n"] = n + 1
			return runtime.Next("l"), nil
		},
	}}
	rt, sched, clock := scheduledRuntime(t, 1, parent, loop)
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "parent"})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || p.Status != durable.RunWaiting {
		t.Fatalf("setup: parent %v, %v", p, err)
	}
	for i := 0; i < 6; i++ {
		clock.Advance(10 * time.Minute)
		if _, err := sched.Pass(ctx); err != nil {
			t.Fatal(err)
		}
	}
	p, err := rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != durable.RunCompleted {
		childID := runtime.WaitedChild(p)
		c, cerr := rt.GetState(ctx, childID)
		if cerr != nil {
			t.Fatal(errors.Join(errors.New("loading the child"), cerr))
		}
		t.Fatalf("parent %s after an hour of scheduler passes; its async child is %s at n=%v, left running by the "+
			"follow-up's round bound and driven by nobody (%d follow-ups kept)", p.Status, c.Status, c.Vars["n"],
			rt.PendingFollowUps())
	}
}

// TestInterruptedResumeRunIsDrivenOn: ResumeRun lifts the
// pause (a committed host update: the run is running again at its node)
// and then drives the run with Tick. When its caller goes away during
// that drive, the tick checkpoints and returns the interruption, and the
// run was left running with nobody to drive it: the drive was not kept
// for RetryFollowUps (only a refused claim was), the scheduler's loop does
// not see a running run it did not leave itself, and a second ResumeRun is
// a no-op, as the run is no longer paused. Any failed drive after a lift
// is now kept.
func TestInterruptedResumeRunIsDrivenOn(t *testing.T) {
	var cancel context.CancelFunc = func() {}
	cancelAtB := false
	wf := &runtime.Workflow{ID: "pausable", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Next("b"), nil
		},
		"b": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			if cancelAtB {
				cancel() // the host's request ends here
			}
			return runtime.Next("c"), nil
		},
		"c": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	h := runtimetest.New(t, runtimetest.Config{Workflows: []*runtime.Workflow{wf}})
	bg := context.Background()
	id := h.Start("pausable", nil)
	if st, err := h.Runtime.Tick(bg, id, runtime.TickOptions{MaxSteps: 1}); err != nil || st.Status != durable.RunRunning {
		t.Fatalf("setup: tick %v %v", st, err)
	}
	if _, err := h.Runtime.Pause(bg, id, "hold on"); err != nil {
		t.Fatal(err)
	}
	cancelAtB = true
	var ctx context.Context
	ctx, cancel = context.WithCancel(bg)
	defer cancel()
	if _, err := h.Runtime.ResumeRun(ctx, id); err == nil {
		t.Fatal("setup: ResumeRun's drive was not interrupted")
	}
	cancelAtB = false
	// The host tries again, then lets the scheduler's loop pass for an hour.
	if _, err := h.Runtime.ResumeRun(bg, id); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		h.Advance(10 * time.Minute)
	}
	if st := h.State(id); st.Status != durable.RunCompleted {
		t.Fatalf("run %s at %q after ResumeRun (interrupted, then again) and an hour of scheduler passes: "+
			"its drive was dropped (%d follow-ups kept)", st.Status, st.CurrentNode, h.Runtime.PendingFollowUps())
	}
}

// scheduledRuntime is a runtime over a fresh in-memory store with a
// manual clock and a step budget of maxSteps, and a scheduler on it.
func scheduledRuntime(t *testing.T, maxSteps int, wfs ...*runtime.Workflow) (*runtime.Runtime, *scheduler.Scheduler, *runtimetest.Clock) {
	t.Helper()
	reg, err := runtime.NewRegistry(wfs...)
	if err != nil {
		t.Fatal(err)
	}
	clock := runtimetest.NewClock(runtimetest.DefaultStart)
	st := memory.New()
	t.Cleanup(func() { _ = st.Close() })
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: clock.Now, MaxSteps: maxSteps})
	if err != nil {
		t.Fatal(err)
	}
	sched, err := scheduler.New(scheduler.Config{Runtime: rt, Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return rt, sched, clock
}
