package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// The back-off of a due run whose tick keeps failing doubles from
// PollInterval but never exceeds maxRetryDelay (5 minutes): with a
// 3-minute poll interval, the second failure holds the run 5 minutes,
// not the 6 the doubling gives.
func TestFailureBackoffIsCappedAtFiveMinutes(t *testing.T) {
	t.Parallel()
	const poll = 3 * time.Minute
	w := waitOnSwitchable(t, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), waitFlow(time.Minute), poll)
	c, st, rt, s, id := w.c, w.st, w.rt, w.s, w.id
	ctx := context.Background()
	c.Advance(time.Hour)
	st.fail.Store(true)
	if n, _ := s.PollOnce(ctx); n != 1 {
		t.Fatalf("first failing poll ticked %d; want 1", n)
	}
	c.Advance(poll)
	if n, _ := s.PollOnce(ctx); n != 1 || s.Stats().RunsFailed != 2 {
		t.Fatalf("second failing poll ticked %d, RunsFailed %d; want 1, 2", n, s.Stats().RunsFailed)
	}
	st.fail.Store(false)
	c.Advance(5*time.Minute - time.Second)
	if n, _ := s.PollOnce(ctx); n != 0 {
		t.Fatalf("ticked %d before the 5-minute cap passed; want the run still held", n)
	}
	c.Advance(time.Second)
	if n, err := s.PollOnce(ctx); n != 1 || err != nil {
		t.Errorf("poll once the 5-minute cap passed ticked %d (%v); want the run retried (back-off capped at 5m, not 6m)", n, err)
	}
	if got, _ := rt.GetState(ctx, id); got.Status != durable.RunCompleted {
		t.Errorf("the run is %s; want completed", got.Status)
	}
}

// The back-off counts failures in a row of one wait only: a run whose
// release failed twice in wait w1 (held 2 poll intervals), then moved on
// by the host into wait w2 (another deadline, due), whose release then
// fails once, is held one poll interval, not four.
func TestFailureBackoffRestartsInANewWait(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const poll = time.Minute
	w := waitOnSwitchable(t, t0, chainFlow(t0), poll)
	c, st, rt, s, id := w.c, w.st, w.rt, w.s, w.id
	ctx := context.Background()
	c.Advance(10 * time.Minute) // all three waits are due
	st.fail.Store(true)
	if n, _ := s.PollOnce(ctx); n != 1 {
		t.Fatalf("first failing poll ticked %d", n)
	}
	c.Advance(poll)
	if n, _ := s.PollOnce(ctx); n != 1 || s.Stats().RunsFailed != 2 {
		t.Fatalf("second failing poll ticked %d, RunsFailed %d", n, s.Stats().RunsFailed)
	}
	c.Advance(2 * poll) // the w1 back-off has passed
	st.fail.Store(false)
	if got, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || got.CurrentNode != "w2" {
		t.Fatalf("setup: host tick left %v, %v; want waiting at w2", got, err)
	}
	st.fail.Store(true)
	if n, _ := s.PollOnce(ctx); n != 1 || s.Stats().RunsFailed != 3 {
		t.Fatalf("failing poll in w2 ticked %d, RunsFailed %d", n, s.Stats().RunsFailed)
	}
	st.fail.Store(false)
	c.Advance(poll)
	if n, err := s.PollOnce(ctx); n != 1 || err != nil {
		t.Errorf("poll one interval after w2's first failed release ticked %d (%v); want it retried "+
			"(w1's failures do not count for w2)", n, err)
	}
	if got, _ := rt.GetState(ctx, id); got.CurrentNode != "w3" {
		t.Errorf("run at %q; want released into w3", got.CurrentNode)
	}
}
