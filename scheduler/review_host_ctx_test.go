package scheduler_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
)

// TestPassCutShortByTheHostsContextLeavesNoRunStuck: a host drives the
// scheduler itself (Pass, as runtimetest's Advance does) with a context
// that ends while a released run's effect is in flight. The run is left
// running at its checkpoint, no longer due; without claims no Recover
// comes while the process lives. The next Pass must drive it on, as the
// scheduler drives on a run its own drive left running (and as Scheduled's
// Run and Respond hand on a run whose caller went away).
func TestPassCutShortByTheHostsContextLeavesNoRunStuck(t *testing.T) {
	t.Parallel()
	c, rt, id, entered := dueRunWithBlockingCall(t)
	ctx := context.Background()
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now})
	passCutShort(ctx, s, entered)
	if st, _ := rt.GetState(ctx, id); st.Status != durable.RunRunning {
		t.Fatalf("run after the cut-short pass: %s (%s), want running at its checkpoint", st.Status, st.Error)
	}
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := rt.GetState(ctx, id); st.Status != durable.RunCompleted {
		t.Fatalf("run after the next pass: %s; want it driven on to completion (nothing else drives it without a Recover)", st.Status)
	}
}

// TestQueuedRunsOutliveAPassCutShort: runs handed to the scheduler to drive
// on (DriveSoon, as Scheduled's Run and Respond hand on runs left running)
// stay queued when a host's Pass ends with its context before reaching
// them: the next Pass drives them.
func TestQueuedRunsOutliveAPassCutShort(t *testing.T) {
	t.Parallel()
	entered := make(chan struct{}, 1)
	var calls atomic.Int32
	wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			if calls.Add(1) == 1 {
				entered <- struct{}{}
				<-ctx.Done()
				return runtime.StepPlan{}, ctx.Err()
			}
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rt, _ := setup(t, c, wf)
	ctx := context.Background()
	var ids []string
	for range 2 {
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now})
	for _, id := range ids {
		s.DriveSoon(id)
	}
	passCutShort(ctx, s, entered)
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if st, _ := rt.GetState(ctx, id); st.Status != durable.RunCompleted {
			t.Errorf("run %s after the next pass: %s; want it driven on to completion", id, st.Status)
		}
	}
}

// passCutShort runs s.Pass under a context that ends once entered
// signals (a run's effect in flight), and returns when the pass has.
func passCutShort(ctx context.Context, s *scheduler.Scheduler, entered <-chan struct{}) {
	hostCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Pass(hostCtx)
	}()
	<-entered
	cancel()
	<-done
}
