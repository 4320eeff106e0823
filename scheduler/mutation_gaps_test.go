package scheduler_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestNextWaitIsZeroWhenARunIsDueNow: after a poll that did not fill a
// batch, a run that is due now (it fell due since the listing) and is not
// waiting for a retry makes the loop poll at once, not after
// PollInterval (Scheduler.nextWait).
func TestNextWaitIsZeroWhenARunIsDueNow(t *testing.T) {
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
	s, err := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if w := scheduler.NextWait(s, ctx); w != time.Minute {
		t.Fatalf("before the deadline the loop would sleep %v; want until it (1m)", w)
	}
	c.Advance(2 * time.Minute)
	if w := scheduler.NextWait(s, ctx); w != 0 {
		t.Fatalf("with a run due now and nothing held, the loop would sleep %v; want 0", w)
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

// TestStatsErrorsAreTheLast100AndACopy: Stats.Errors holds the last 100
// errors (the newest kept), and Stats returns a copy the caller may
// change.
func TestStatsErrorsAreTheLast100AndACopy(t *testing.T) {
	t.Parallel()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := memory.New()
	gone := waitFlow(time.Minute)
	gone.ID = "gone"
	old, _ := runtime.NewRegistry(gone)
	before, _ := runtime.New(runtime.Config{Store: st, Registry: old, Clock: c.Now})
	ctx := context.Background()
	var ids []string
	for range 101 {
		id, err := before.Start(ctx, runtime.StartParams{WorkflowID: "gone"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := before.Tick(ctx, id, runtime.TickOptions{}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		c.Advance(time.Millisecond) // due in this order
	}
	rt, _ := runtime.New(runtime.Config{Store: refusing(st, "gone"), Registry: old, Clock: c.Now}) // every tick fails
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, BatchSize: 200})
	c.Advance(2 * time.Minute)
	if n, err := s.PollOnce(ctx); err != nil || n != 101 {
		t.Fatalf("poll ticked %d (%v); want 101", n, err)
	}
	errs := s.Stats().Errors
	if len(errs) != 100 {
		t.Fatalf("%d errors kept; want 100", len(errs))
	}
	if !strings.Contains(errs[99], ids[100]) {
		t.Fatalf("last error %q; want the newest failure (run %s)", errs[99], ids[100])
	}
	for _, e := range errs {
		if strings.Contains(e, ids[0]) {
			t.Fatalf("the oldest failure (run %s) is still kept: %q", ids[0], e)
		}
	}
	errs[0] = "changed by the caller"
	if got := s.Stats().Errors[0]; got == "changed by the caller" {
		t.Fatal("Stats returned the scheduler's own Errors slice, not a copy")
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
