package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
)

// TestSuccessfulRetryEndsTheRunsBackoff: run A's retry succeeds while run
// B still waits out its back-off. A's back-off ends with that success, so
// the loop sleeps until B's retry (30 s) instead of polling at once, as it
// would for a retry time that has passed. Would break if a successful tick
// left the run's retry entry behind.
func TestSuccessfulRetryEndsTheRunsBackoff(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := waitOnSwitchable(t, t0, waitFlow(time.Minute), time.Minute) // A, due at t0+1m
	c, st, rt, s, a := w.c, w.st, w.rt, w.s, w.id
	ctx := context.Background()
	c.Advance(30 * time.Second)
	b, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"}) // B, due at t0+1m30s
	if got, err := rt.Tick(ctx, b, runtime.TickOptions{}); err != nil || got.Status != durable.RunWaiting {
		t.Fatalf("setup: %v %v", got, err)
	}
	pollOnce := func(want int, what string) {
		t.Helper()
		if n, err := s.PollOnce(ctx); n != want || err != nil {
			t.Fatalf("%s: PollOnce = %d, %v; want %d", what, n, err, want)
		}
	}
	st.fail.Store(true)
	c.Advance(30 * time.Second)      // t0+1m
	pollOnce(1, "A's tick, failing") // A held until t0+2m
	c.Advance(30 * time.Second)      // t0+1m30s
	pollOnce(1, "B's tick, failing") // B held until t0+2m30s
	st.fail.Store(false)
	c.Advance(30 * time.Second) // t0+2m
	pollOnce(1, "A's retry, succeeding")
	if got, _ := rt.GetState(ctx, a); got.Status != durable.RunCompleted {
		t.Fatalf("setup: A is %s after its retry; want completed", got.Status)
	}
	if got := scheduler.NextWait(s, ctx); got != 30*time.Second {
		t.Fatalf("NextWait = %v; want 30s, until B's retry (A's back-off ended with its success)", got)
	}
}
