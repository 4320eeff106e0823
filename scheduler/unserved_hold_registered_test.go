package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/scheduler"
)

// A due run held because this runtime did not serve its workflow is
// released as soon as the workflow is registered (Scheduled.Run registers
// workflows when it first runs them, after Start's recovery and first
// polls), not left for the rest of the 5-minute hold.
func TestUnservedHoldEndsWhenWorkflowIsRegistered(t *testing.T) {
	t.Parallel()
	f := newDueRunsFixture(t, 3)
	c, rt, theirs, mine := f.c, f.rt, f.theirs, f.mine
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Second})
	ctx := context.Background()
	if n, err := s.PollOnce(ctx); err != nil || n != len(mine) {
		t.Fatalf("first poll ticked %d (%v); want this runner's %d due runs", n, err, len(mine))
	}
	c.Advance(time.Second)
	if n, err := s.PollOnce(ctx); err != nil || n != 0 {
		t.Fatalf("poll before the workflow is registered ticked %d (%v); want 0 (its runs held)", n, err)
	}

	if err := rt.Registry().Register(theirsFlow()); err != nil {
		t.Fatal(err)
	}
	if w := scheduler.NextWait(s, ctx); w != 0 {
		t.Fatalf("loop would sleep %v with runs of a workflow now served due; want 0", w)
	}
	c.Advance(time.Second)
	if n, err := s.PollOnce(ctx); err != nil || n != len(theirs) {
		t.Fatalf("poll after the workflow is registered ticked %d (%v); want its %d due runs, not held "+
			"for the rest of %v", n, err, len(theirs), 5*time.Minute)
	}
	for _, id := range theirs {
		if got, _ := rt.GetState(ctx, id); got.Status != durable.RunCompleted {
			t.Fatalf("run %s of the workflow registered since is %s; want completed", id, got.Status)
		}
	}
}
