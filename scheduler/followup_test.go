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

// What this file checks: a running run whose ticks keep failing backs off
// instead of being re-driven every poll, a resumed run that waits again is
// reported, and a Stop from a callback during Start does not deadlock.

// TestRunningRunFailuresBackOff: a drive whose tick fails and leaves
// the run running puts it in unfinished, to be driven again "after
// the failure back-off" (retryLater doubles the delay with each failure
// in a row, up to maxRetryDelay). But the run is running, not due: the
// very next PollOnce listed the due runs, found the listing complete and
// forgetUnlisted dropped the run's retry entry, failures count included.
// Every re-drive therefore started the back-off again at PollInterval: a
// run whose commits keep failing (disk full, a read-only database) was
// ticked, its effect re-run and OnRunFailed called every one or two poll
// intervals forever, instead of backing off to 5 minutes.
func TestRunningRunFailuresBackOff(t *testing.T) {
	failing := &commitFailures{Wrapper: store.Wrapper{Store: memory.New()}}
	wf := slowAfterWait(20 * time.Millisecond)
	reg, _ := runtime.NewRegistry(wf)
	rt, err := runtime.New(runtime.Config{Store: failing, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	var effects atomic.Int32
	rt.SetHandler("slow", runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		effects.Add(1)
		failing.left.Store(-1) // from now on every commit fails
		return runtime.Completed(map[string]any{}), nil
	}})
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: wf.ID})
	if st, _ := rt.Tick(ctx, id, runtime.TickOptions{}); st.Status != durable.RunWaiting {
		t.Fatalf("not waiting: %s", st.Status)
	}
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, PollInterval: 10 * time.Millisecond})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(800 * time.Millisecond)
	s.Stop()
	// With the delay doubling from 10ms (10, 20, 40, 80, 160, 320ms) the
	// run fails about 7 times in 800ms; allow twice that.
	if n := s.Stats().RunsFailed; n > 15 {
		t.Fatalf("%d failed drives (%d effect calls) of one run in 800ms with a 10ms poll interval: the back-off never grows past the poll interval",
			n, effects.Load())
	}
}

// TestResumedRunThatWaitsAgainIsReported: drive passed over,
// without counting it as resumed and without OnRunResumed, any run its
// tick left with a deadline at or before now, taking that for a wait the
// tick did not release (a clock skew). But a tick that did release the
// wait and moved the run on to a new wait whose deadline has already
// passed (WAIT_EVENT with timeout_s 0, or an "until" already gone by, or
// any short timeout overtaken by a slow tick) looked the same: the host
// never heard of the release (OnRunResumed is its only notification of
// a scheduler tick), RunsResumed undercounted, and the run was also held
// for a poll interval before its timeout is released.
func TestResumedRunThatWaitsAgainIsReported(t *testing.T) {
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	wf := waitFlow(time.Minute)
	wf.Nodes["done"] = func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent,
			Payload: map[string]any{"wait_key": "approval", "timeout_s": 0}, ResultKey: "approval"}, "end"), nil
	}
	wf.Nodes["end"] = func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return runtime.Complete(map[string]any{"ok": true}), nil
	}
	rt, _ := setup(t, c, wf)
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: wf.ID})
	if st, _ := rt.Tick(ctx, id, runtime.TickOptions{}); st.Status != durable.RunWaiting || st.Waiting.Reason != durable.WaitUntil {
		t.Fatalf("not waiting until: %+v", st)
	}
	var resumed []*durable.RunState
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now,
		OnRunResumed: func(st *durable.RunState) { resumed = append(resumed, st) }})
	c.Advance(2 * time.Minute)
	if n, err := s.PollOnce(ctx); n != 1 || err != nil {
		t.Fatalf("PollOnce = %d, %v", n, err)
	}
	st, _ := rt.GetState(ctx, id)
	if st.Status != durable.RunWaiting || st.Waiting.Reason != durable.WaitEvent {
		t.Fatalf("the tick did not move the run on to its event wait: %s %+v", st.Status, st.Waiting)
	}
	if len(resumed) != 1 || s.Stats().RunsResumed != 1 {
		t.Fatalf("the tick released the WAIT_UNTIL and the run moved on to node %q, but OnRunResumed was called %d times and RunsResumed is %d",
			st.CurrentNode, len(resumed), s.Stats().RunsResumed)
	}
}

// TestStopFromCallbackDuringStartDoesNotDeadlock: Stop's doc says a
// Stop made from OnRunResumed or OnRunFailed "asks the loop to end and
// returns at once". Start runs Recover on the caller's goroutine before it
// launches the loop; with the caller's context (no loopKey), a callback
// made for a run Recover drives was not seen as one: Stop waited for done,
// which only the loop (not yet started, and never started while Start
// waited for the callback) closes. Start never returned.
func TestStopFromCallbackDuringStartDoesNotDeadlock(t *testing.T) {
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rt, _ := setup(t, c, waitFlow(time.Minute))
	ctx := context.Background()
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"}); err != nil {
		t.Fatal(err) // left running, never ticked: Recover drives it
	}
	var s *scheduler.Scheduler
	s, _ = scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Hour,
		OnRunResumed: func(*durable.RunState) { s.Stop() }})
	started := make(chan error, 1)
	go func() { started <- s.Start(ctx) }()
	select {
	case err := <-started:
		if err != nil {
			t.Fatal(err)
		}
		s.Stop()
	case <-time.After(2 * time.Second):
		t.Fatal("Start never returned: Stop called from OnRunResumed during Start's Recover waits for a loop that has not started (the goroutine stays blocked)")
	}
}
