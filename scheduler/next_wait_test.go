package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
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

// TestHeldRunDoesNotDelayLaterDeadline: one due run whose tick fails (the
// store refuses its commits) is held for its retry. Another run's
// deadline falls 100ms later. The package doc promises the loop sleeps
// "until the next deadline (or the poll interval, whichever is first)",
// and nextWait's doc says held runs "count from the time they are" tried
// again; yet nextWait, seeing the held run's past deadline as the store's
// next one, slept until the held run's retry (PollInterval) and released
// the healthy run up to a whole PollInterval late.
func TestHeldRunDoesNotDelayLaterDeadline(t *testing.T) {
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := memory.New()
	gone := waitFlow(time.Minute)
	gone.ID = "gone"
	old, _ := runtime.NewRegistry(waitFlow(time.Minute+100*time.Millisecond), gone)
	before, _ := runtime.New(runtime.Config{Store: st, Registry: old, Clock: c.Now})
	ctx := context.Background()
	g, _ := before.Start(ctx, runtime.StartParams{WorkflowID: "gone"})
	before.Tick(ctx, g, runtime.TickOptions{}) // due at T+1m
	h, _ := before.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
	if s, _ := before.Tick(ctx, h, runtime.TickOptions{}); s.Status != durable.RunWaiting { // due at T+1m+100ms
		t.Fatalf("healthy run: %s", s.Status)
	}
	rt, _ := runtime.New(runtime.Config{Store: refusing(st, "gone"), Registry: old, Clock: c.Now})
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Second})
	c.Advance(time.Minute)
	if n, err := s.PollOnce(ctx); n != 1 || err != nil || s.Stats().RunsFailed != 1 {
		t.Fatalf("poll: ticked %d (%v), failed %d; want the gone run ticked and failed", n, err, s.Stats().RunsFailed)
	}
	if w := scheduler.NextWait(s, ctx); w > 100*time.Millisecond {
		t.Fatalf("loop would sleep %v; the healthy run falls due in 100ms (the held run's retry is in 1s)", w)
	}
}
