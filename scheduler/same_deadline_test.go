package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
)

// sharedDeadlineFlow waits for event "a", then for event "b", both until
// the same absolute deadline (a collection phase that ends at one time
// whatever happens in it), then completes.
func sharedDeadlineFlow(deadline time.Time) *runtime.Workflow {
	wait := func(name, next string) runtime.NodeFunc {
		return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent, ResultKey: name,
				Payload: map[string]any{"name": name, "scope": "run", "until": durable.FormatTime(deadline)}}, next), nil
		}
	}
	return &runtime.Workflow{ID: "shared_deadline", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": wait("a", "b"),
		"b": wait("b", "done"),
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
}

// TestReleaseIntoANewWaitWithTheSameDeadlineIsReported: a due run whose
// tick releases its WAIT_EVENT (timed out) and enters another wait with
// the same deadline was taken by drive for a tick that released nothing
// (drive compared only the deadline): not counted in RunsResumed, no
// OnRunResumed, and held back for a poll interval although its new wait
// was due at once; one Pass left the run waiting past its deadline.
func TestReleaseIntoANewWaitWithTheSameDeadlineIsReported(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := runtimetest.NewClock(t0)
	rt, _ := setup(t, c, sharedDeadlineFlow(t0.Add(time.Minute)))
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "shared_deadline"})
	if st, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("setup: %v %v", st, err)
	}
	var resumed []string
	s, err := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Hour,
		OnRunResumed: func(st *durable.RunState) { resumed = append(resumed, st.CurrentNode) }})
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(2 * time.Minute)
	if n, err := s.PollOnce(ctx); n != 1 || err != nil {
		t.Fatalf("poll ticked %d (%v); want the due run", n, err)
	}
	if got := s.Stats().RunsResumed; got != 1 || len(resumed) != 1 {
		t.Errorf("the tick released wait a (timed out) into wait b: RunsResumed = %d, OnRunResumed calls = %d; want 1, 1",
			got, len(resumed))
	}
	if st, _ := rt.GetState(ctx, id); st.Status != durable.RunCompleted {
		if w := scheduler.NextWait(s, ctx); w != 0 {
			t.Errorf("wait b is due now and nothing else holds the run, yet the loop would sleep %v", w)
		}
	}
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := rt.GetState(ctx, id); st.Status != durable.RunCompleted {
		t.Errorf("after a Pass the run is %s at %q, its deadline passed a minute ago; want completed", st.Status, st.CurrentNode)
	}
}
