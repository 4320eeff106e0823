package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// atFlow is workflow "at": it waits until the time in vars["until"]
// (WAIT_UNTIL), then completes.
func atFlow() *runtime.Workflow {
	return &runtime.Workflow{ID: "at", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": run.Vars["until"]}}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
}

// heldAndTwoDue sets up, with BatchSize 1 and a scheduler clock ahead of
// the runtime's: run h held back for a retry (its listed deadline, 1m,
// was not released by the runtime, whose clock was behind), then runs a
// and b due at 10s and 20s, before h's deadline. The runtime's clock is
// then moved on, so ticks release what is due.
func heldAndTwoDue(t *testing.T) (s *scheduler.Scheduler, rt *runtime.Runtime, h, a, b string) {
	t.Helper()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rc := runtimetest.NewClock(t0)
	sc := runtimetest.NewClock(t0.Add(2 * time.Minute))
	rt, _ = setup(t, rc, atFlow())
	ctx := context.Background()
	start := func(until time.Duration) string {
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "at",
			Vars: map[string]any{"until": durable.FormatTime(t0.Add(until))}})
		if err != nil {
			t.Fatal(err)
		}
		if st, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting {
			t.Fatalf("setup: run not waiting: %v %v", st, err)
		}
		return id
	}
	var err error
	s, err = scheduler.New(scheduler.Config{Runtime: rt, Clock: sc.Now, BatchSize: 1, PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	h = start(time.Minute)
	if n, err := s.PollOnce(ctx); n != 1 || err != nil {
		t.Fatalf("setup: first poll = %d, %v", n, err)
	}
	if st, _ := rt.GetState(ctx, h); st.Status != durable.RunWaiting {
		t.Fatalf("setup: the runtime (clock behind) released h: %s", st.Status)
	}
	a, b = start(10*time.Second), start(20*time.Second)
	rc.Advance(5 * time.Minute)
	return s, rt, h, a, b
}

// PollOnce ticks at most BatchSize runs, even when the listing it read
// (BatchSize plus the held runs, to read past them) holds more that are
// not held.
func TestPollOnceTicksAtMostBatchSizeWhenAHeldRunIsNotListed(t *testing.T) {
	t.Parallel()
	s, rt, _, a, b := heldAndTwoDue(t)
	ctx := context.Background()
	if n, err := s.PollOnce(ctx); n != 1 || err != nil {
		t.Fatalf("PollOnce = %d, %v; want 1 (BatchSize)", n, err)
	}
	sa, _ := rt.GetState(ctx, a)
	sb, _ := rt.GetState(ctx, b)
	if sa.Status != durable.RunCompleted || sb.Status != durable.RunWaiting {
		t.Fatalf("after one poll of batch 1: a %s, b %s; want a completed and b still waiting", sa.Status, sb.Status)
	}
}

// A run held back for a retry stays held when a poll's listing was cut
// at its limit and did not reach it: only a complete listing says a run
// is no longer due (forgetUnlisted).
func TestHeldRunStaysHeldPastATruncatedListing(t *testing.T) {
	t.Parallel()
	s, rt, h, _, _ := heldAndTwoDue(t)
	ctx := context.Background()
	for i := 0; i < 4; i++ {
		if _, err := s.PollOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if st, _ := rt.GetState(ctx, h); st.Status != durable.RunWaiting {
		t.Fatalf("run h, held for a retry an hour away, was ticked within the hour (%s): a truncated listing "+
			"that did not list it dropped its hold", st.Status)
	}
}

// TestDueRunItsTickDidNotReleaseIsHeld: when the runtime's clock is
// behind the scheduler's, the tick of a listed due run leaves the wait
// as it was: the run is passed over for a poll interval (not polled again
// at once, in a hot loop) and is not reported as resumed.
func TestDueRunItsTickDidNotReleaseIsHeld(t *testing.T) {
	t.Parallel()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rt, _ := setup(t, c, waitFlow(time.Minute))
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	ahead := func() time.Time { return c.Now().Add(90 * time.Second) }
	resumed := 0
	s, err := scheduler.New(scheduler.Config{Runtime: rt, Clock: ahead,
		OnRunResumed: func(*durable.RunState) { resumed++ }})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.PollOnce(ctx); err != nil || n != 1 {
		t.Fatalf("first poll ticked %d (%v); want the listed run", n, err)
	}
	if got, _ := rt.GetState(ctx, id); got.Status != durable.RunWaiting {
		t.Fatalf("run %s; the runtime's clock says it is not due yet", got.Status)
	}
	if st := s.Stats(); st.RunsResumed != 0 || resumed != 0 {
		t.Fatalf("a tick that released nothing counted as resumed (%d, %d callbacks)", st.RunsResumed, resumed)
	}
	if n, _ := s.PollOnce(ctx); n != 0 {
		t.Fatalf("second poll at once ticked %d; want the run passed over for a poll interval", n)
	}
	if w := scheduler.NextWait(s, ctx); w <= 0 {
		t.Fatalf("loop would sleep %v; want until the run's retry", w)
	}
}

// TestRunHeldElsewhereIsRetriedAfterOnePollInterval: a due run that
// another runner holds is passed over for PollInterval each time, without
// the back-off of failed ticks (Scheduler.retryLater): once the holder
// lets go, the next poll after one interval ticks it.
func TestRunHeldElsewhereIsRetriedAfterOnePollInterval(t *testing.T) {
	t.Parallel()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := memory.New()
	reg, _ := runtime.NewRegistry(waitFlow(time.Minute))
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: c.Now, Claims: &runtime.Claims{Owner: "me"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	c.Advance(2 * time.Minute)
	if err := st.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "other", TTL: time.Hour, Now: c.Now()}); err != nil {
		t.Fatal(err)
	}
	// The holder keeps working on the run (committing it) while it holds it.
	stop := make(chan struct{})
	holderDone := make(chan struct{})
	go func() {
		defer close(holderDone)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			if run, err := st.RunGet(ctx, id); err == nil {
				run.Vars["holder_step"] = i
				_ = st.RunCommit(ctx, &store.CommitParams{Run: run})
			}
		}
	}()
	s, err := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Second})
	if err != nil {
		close(stop)
		<-holderDone
		t.Fatal(err)
	}
	for i := range 2 {
		s.PollOnce(ctx)
		if got, _ := rt.GetState(ctx, id); got.Status != durable.RunWaiting {
			close(stop)
			<-holderDone
			t.Fatalf("poll %d: a run another runner works on was ticked (%s)", i, got.Status)
		}
		c.Advance(time.Second)
	}
	close(stop)
	<-holderDone
	if n := s.Stats().RunsFailed; n != 0 {
		t.Fatalf("a run held elsewhere counted as %d failures", n)
	}
	if err := st.RunRelease(ctx, id, "other"); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.PollOnce(ctx); n != 1 {
		t.Fatalf("one poll interval after the second pass-over, ticked %d; want the released run (no back-off)", n)
	}
	if got, _ := rt.GetState(ctx, id); got.Status != durable.RunCompleted {
		t.Fatalf("released run: %s", got.Status)
	}
}
