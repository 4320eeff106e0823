package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/scheduler"
)

// TestUnservedDueRunIsPassedOverForMaxRetryDelay: a due run of a workflow
// this runner does not serve is held for maxRetryDelay (5 min), not a poll
// interval: two poll intervals later the loop still sleeps (NextWait > 0)
// instead of polling at once to look at it again. Would break if the
// pass-over held the run for PollInterval only.
func TestUnservedDueRunIsPassedOverForMaxRetryDelay(t *testing.T) {
	t.Parallel()
	f := newDueRunsFixture(t, 1)
	s, _ := scheduler.New(scheduler.Config{Runtime: f.rt, Clock: f.c.Now, PollInterval: time.Second})
	ctx := context.Background()
	if n, err := s.PollOnce(ctx); err != nil || n != len(f.mine) {
		t.Fatalf("poll ticked %d (%v); want this runner's %d due runs", n, err, len(f.mine))
	}
	f.c.Advance(2 * time.Second)
	if w := scheduler.NextWait(s, ctx); w != time.Second {
		t.Fatalf("NextWait = %v two poll intervals after the pass-over; want the poll interval (1s): "+
			"the run of the unserved workflow is held for 5 min", w)
	}
	f.c.Advance(5 * time.Minute)
	if w := scheduler.NextWait(s, ctx); w != 0 {
		t.Fatalf("NextWait = %v once the pass-over has ended; want 0 (the run is due, looked at again)", w)
	}
}
