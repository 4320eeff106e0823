package scheduler_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
)

// A poll whose ctx has ended ticks no due run and says why: a stopped
// scheduler does not release waits.
func TestPollWithEndedContextReleasesNothing(t *testing.T) {
	t.Parallel()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rt, _ := setup(t, c, waitFlow(time.Minute))
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
	if got, _ := rt.Tick(ctx, id, runtime.TickOptions{}); got.Status != durable.RunWaiting {
		t.Fatalf("setup: %s", got.Status)
	}
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now})
	c.Advance(2 * time.Minute)
	ended, cancel := context.WithCancel(ctx)
	cancel()
	n, err := s.PollOnce(ended)
	if n != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("PollOnce with an ended ctx = %d, %v; want 0, context.Canceled", n, err)
	}
	if got, _ := rt.GetState(ctx, id); got.Status != durable.RunWaiting {
		t.Errorf("run is %s after a poll with an ended ctx; want still waiting", got.Status)
	}
}
