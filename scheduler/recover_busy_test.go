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
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestRecoverDrivesARunAHostUpdateHeldOnceFree: Recover passes over a
// running run whose lock is held in this process (Runtime.Busy), as
// waiting for it would hold the recovery up. The holder may be a host
// update (here UpdateLimits) that does not tick the run: Recover used to
// drop such a run, and without claims (Recover runs once, at Start) a run
// a crash left running stayed running until the next restart. Python's
// update_limits only saves _limits; it has no bearing on the recovery.
// The run is now queued and driven by the pass after its lock is free.
func TestRecoverDrivesARunAHostUpdateHeldOnceFree(t *testing.T) {
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	gs := &gateGetStore{Wrapper: store.Wrapper{Store: memory.New()}}
	wf := &runtime.Workflow{ID: "once", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	reg, _ := runtime.NewRegistry(wf)
	rt, err := runtime.New(runtime.Config{Store: gs, Registry: reg, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Started, never ticked: running, as a crash leaves a run.
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "once"})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Second})

	letGo := holdRun(t, rt, gs, id)
	withinASecond(t, "Recover", letGo, func() {
		if err := s.Recover(ctx); err != nil {
			t.Error(err)
		}
	})
	// Still held: the pass does not wait for it either, and tries again a
	// poll interval later.
	withinASecond(t, "the pass", letGo, func() { s.Pass(ctx) })
	if w := scheduler.NextWait(s, ctx); w <= 0 {
		t.Errorf("the loop would sleep %v while the run stays held: it polls without pause", w)
	}
	letGo()
	c.Advance(time.Second)
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := st.Vars["_limits"].(map[string]any); l == nil || l["max_tokens"] == nil {
		t.Fatalf("setup: the limits update was not saved: %v", st.Vars["_limits"])
	}
	if st.Status != durable.RunCompleted {
		t.Fatalf("run a crash left running is %s after the recovery and a pass once the host's update ended; want driven to its end", st.Status)
	}
}

// TestRecoverQueuedRunTheHostTickedIsNotTickedTwice: a running run that
// the host is ticking when Recover comes is queued too; the queued drive
// takes the run's lock after the host's tick, so the node does not run
// twice, and the drive of the run that tick completed does nothing.
func TestRecoverQueuedRunTheHostTickedIsNotTickedTwice(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var runs atomic.Int32
	wf := &runtime.Workflow{ID: "slow", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			if runs.Add(1) == 1 {
				close(entered)
				<-release
			}
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	reg, _ := runtime.NewRegistry(wf)
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "slow"})
	if err != nil {
		t.Fatal(err)
	}
	var failed atomic.Int32
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, PollInterval: 10 * time.Millisecond,
		OnRunFailed: func(string, error) { failed.Add(1) }})
	ticked := make(chan error, 1)
	go func() {
		_, err := rt.Tick(ctx, id, runtime.TickOptions{}) // the host ticks the run itself
		ticked <- err
	}()
	<-entered
	if err := s.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	// The queued drive, while the host's tick still runs, is put off.
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-ticked; err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // past the poll interval
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if st, _ := rt.GetState(ctx, id); st.Status != durable.RunCompleted {
		t.Fatalf("run %s; want completed", st.Status)
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("node ran %d times; want once (the host's tick)", n)
	}
	if n := failed.Load(); n != 0 || len(s.Stats().Errors) != 0 {
		t.Fatalf("the queued drive of the completed run failed: %v", s.Stats().Errors)
	}
}
