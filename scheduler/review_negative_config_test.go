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

// TestNegativePollIntervalDoesNotSpinTheLoop: a negative PollInterval
// (or BatchSize) is taken as the default, as a zero one is: the loop's
// timer fired at once with it, and with nothing due the loop polled the
// store without pause (hundreds of thousands of polls a second).
func TestNegativePollIntervalDoesNotSpinTheLoop(t *testing.T) {
	t.Parallel()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rt, _ := setup(t, c, waitFlow(time.Minute))
	s, err := scheduler.New(scheduler.Config{Runtime: rt, PollInterval: -time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.Stats().PollCycles < 1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // far shorter than the default 1s
	s.Stop()
	if n := s.Stats().PollCycles; n > 3 {
		t.Fatalf("%d polls with nothing due and PollInterval -1s; want the default interval's sleep between polls", n)
	}
}

// TestNegativeBatchSizeTakesTheDefault: a negative BatchSize polls the
// default batch, as a zero one does, not one run at a time.
func TestNegativeBatchSizeTakesTheDefault(t *testing.T) {
	t.Parallel()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rt, _ := setup(t, c, waitFlow(time.Minute))
	ctx := context.Background()
	for range 3 {
		id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
		if st, _ := rt.Tick(ctx, id, runtime.TickOptions{}); st.Status != durable.RunWaiting {
			t.Fatalf("not waiting: %s", st.Status)
		}
	}
	c.Advance(2 * time.Minute)
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, BatchSize: -1})
	if n, err := s.PollOnce(ctx); n != 3 || err != nil {
		t.Fatalf("poll with BatchSize -1 ticked %d (%v); want the 3 due runs (default batch 100)", n, err)
	}
}
