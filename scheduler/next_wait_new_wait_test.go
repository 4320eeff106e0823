package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
)

// TestLoopDoesNotSleepOnTheBackoffOfAnEarlierWait: a run held by the
// failure back-off of wait w1 is answered by the host and enters w2, whose
// deadline has passed. The back-off holds w1 only, so the loop polls at
// once (NextWait 0) rather than sleeping until the retry. Would break if
// nextWait took every held run listed as still held, whatever its wait.
func TestLoopDoesNotSleepOnTheBackoffOfAnEarlierWait(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const poll = time.Minute
	w := waitOnSwitchable(t, t0, chainFlow(t0), poll)
	c, st, rt, s, id := w.c, w.st, w.rt, w.s, w.id
	ctx := context.Background()
	c.Advance(10 * time.Minute) // every wait of the chain is due
	st.fail.Store(true)
	if n, err := s.PollOnce(ctx); n != 1 || err != nil {
		t.Fatalf("failing tick: PollOnce = %d, %v", n, err)
	}
	st.fail.Store(false)
	after, err := rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: "k", Payload: map[string]any{"x": 1}})
	if err != nil || after.Status != durable.RunWaiting || after.CurrentNode != "w2" {
		t.Fatalf("setup: resume gave %v at %q, %v; want waiting at w2", after.Status, after.CurrentNode, err)
	}
	if got := scheduler.NextWait(s, ctx); got != 0 {
		t.Fatalf("NextWait = %v with the run due in a new wait; want 0 (w1's back-off does not hold w2)", got)
	}
}
