package runtime_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// failTerminalOnce fails the first commit that ends a run of workflow wf,
// after (lost=true) or before the inner store makes it: a commit whose
// answer a dead connection lost, or one that never reached the server.
type failTerminalOnce struct {
	store.Wrapper
	wf     string
	lost   bool
	failed atomic.Bool
}

func (s *failTerminalOnce) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if p.Run != nil && p.Run.WorkflowID == s.wf && p.Run.Status.Terminal() && s.failed.CompareAndSwap(false, true) {
		if s.lost {
			if err := s.Wrapper.RunCommit(ctx, p); err != nil {
				return err
			}
		}
		return errors.New("connection reset")
	}
	return s.Wrapper.RunCommit(ctx, p)
}

// TestFailedFollowUpsAreRetried: a parent waits on an async child that the
// parent's own Tick drives as a follow-up. When the child's terminal commit
// failed, or landed with its answer lost, the follow-up's failure was only
// logged: the host's Tick succeeded, so nothing drove the child again or
// resumed the parent in a live process without claims. Failed follow-ups
// are now kept and driven again by RetryFollowUps (the scheduler's loop
// calls it).
func TestFailedFollowUpsAreRetried(t *testing.T) {
	for _, lost := range []bool{false, true} {
		name := map[bool]string{false: "commit failed", true: "answer lost"}[lost]
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st := &failTerminalOnce{Wrapper: store.Wrapper{Store: memory.New()}, wf: "child", lost: lost}
			reg, _ := runtime.NewRegistry(asyncParentAndChild()...)
			rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
			if err != nil {
				t.Fatal(err)
			}
			id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "parent"})
			p, err := rt.Tick(ctx, id, runtime.TickOptions{})
			if err != nil {
				t.Fatalf("the parent's tick: %v", err)
			}
			// A commit that landed with its answer lost still queues the
			// parent's resume, which the same call drains: the parent
			// completes at once, and the child's failed tick is kept.
			want := map[bool]durable.RunStatus{false: durable.RunWaiting, true: durable.RunCompleted}[lost]
			if !st.failed.Load() || p.Status != want {
				t.Fatalf("setup: child's terminal commit failed %v, parent %s, want %s", st.failed.Load(), p.Status, want)
			}
			if n := rt.PendingFollowUps(); n != 1 {
				t.Fatalf("%d follow-ups kept for a retry, want the child's tick", n)
			}
			if n := rt.RetryFollowUps(ctx); n != 0 {
				t.Fatalf("RetryFollowUps drove %d follow-ups before their back-off", n)
			}
			deadline := time.Now().Add(10 * time.Second)
			for rt.RetryFollowUps(ctx) == 0 {
				if time.Now().After(deadline) {
					t.Fatal("the kept follow-up never fell due")
				}
				time.Sleep(50 * time.Millisecond)
			}
			p, err = rt.GetState(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			out, _ := p.Output["child"].(map[string]any)
			if p.Status != durable.RunCompleted || out["output"] == nil {
				t.Fatalf("after the retry the parent is %s with output %v, want completed with its child's output", p.Status, p.Output)
			}
			if n := rt.PendingFollowUps(); n != 0 {
				t.Fatalf("%d follow-ups still kept after they succeeded", n)
			}
		})
	}
}

// asyncParentAndChild: workflow "parent" starts "child" async and waits on
// it, then completes with what it received; "child" completes at once.
func asyncParentAndChild() []*runtime.Workflow {
	parent := &runtime.Workflow{ID: "parent", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
				Payload: map[string]any{"workflow_id": "child", "async": true, "wait": true}}, "after"), nil
		},
		"after": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"child": run.Vars["sub"]}), nil
		},
	}}
	child := &runtime.Workflow{ID: "child", Entry: "c", Nodes: map[string]runtime.NodeFunc{
		"c": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	return []*runtime.Workflow{parent, child}
}

// TestFollowUpRetriesFollowTheRuntimeClock: the back-off of a kept
// follow-up was timed by time.Now (followretry.go), not by Config.Clock as
// every other deadline of the runtime and the scheduler is. A runtime on a
// fake clock (runtime/runtimetest) advanced an hour still found the retry
// not due, so a harness pass could not release it.
func TestFollowUpRetriesFollowTheRuntimeClock(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	st := &failTerminalOnce{Wrapper: store.Wrapper{Store: memory.New()}, wf: "child"}
	reg, _ := runtime.NewRegistry(asyncParentAndChild()...)
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "parent"})
	if p, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || p.Status != durable.RunWaiting || rt.PendingFollowUps() != 1 {
		t.Fatalf("setup: tick err %v, %d follow-ups kept", err, rt.PendingFollowUps())
	}
	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	if n := rt.RetryFollowUps(ctx); n != 1 {
		t.Fatalf("RetryFollowUps drove %d follow-ups an hour (by the runtime's clock) after one failed, want 1", n)
	}
	if p, _ := rt.GetState(ctx, id); p.Status != durable.RunCompleted {
		t.Fatalf("parent %s after the retry, want completed", p.Status)
	}
}

// A call gives an async child that never waits maxFollowRounds (100)
// ticks of its step budget, then keeps it for RetryFollowUps instead of
// holding the caller up (architecture: "100 rounds of the step budget").
func TestFollowUpGivesALoopingChildAHundredTicks(t *testing.T) {
	t.Parallel()
	var steps atomic.Int64
	parent := &runtime.Workflow{ID: "parent", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
				Payload: map[string]any{"workflow_id": "loop", "async": true}}, "end")
		}),
		"end": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"ok": true})
		}),
	}}
	loop := &runtime.Workflow{ID: "loop", Entry: "l", Nodes: map[string]runtime.NodeFunc{
		"l": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			steps.Add(1)
			return runtime.Next("l")
		}),
	}}
	rt, _, _ := scheduledRuntime(t, 1, parent, loop)
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "parent"})
	if err != nil {
		t.Fatal(err)
	}
	// The parent's own tick budget is 1 step: tick it until it has
	// started the child and completed.
	for i := 0; i < 5; i++ {
		p, err := rt.Tick(ctx, id, runtime.TickOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Status == durable.RunCompleted {
			break
		}
	}
	if n := steps.Load(); n != 100 {
		t.Fatalf("the call drove its looping child %d one-step ticks; want 100", n)
	}
	if n := rt.PendingFollowUps(); n != 1 {
		t.Fatalf("%d follow-ups kept; want the child's tick kept for a retry", n)
	}
}
