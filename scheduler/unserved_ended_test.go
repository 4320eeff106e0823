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

// TestDueRunEndedAfterTheListingIsNotReportedUnserved: with claims, the
// scheduler reads a due run's workflow before ticking it; a run that ended
// between the listing and that read (cancelled by the runner that serves
// it) is no one's to drive, so it is not reported as a due run of a
// workflow this runner lacks. Would break if unservedWorkflow judged ended
// runs by their workflow too.
func TestDueRunEndedAfterTheListingIsNotReportedUnserved(t *testing.T) {
	t.Parallel()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	hs := &hookDueStore{Wrapper: store.Wrapper{Store: memory.New()}}
	other, theirs, _ := sharedDueRuns(t, c, hs.Store.(*memory.Store), 1, 0)
	reg, _ := runtime.NewRegistry(waitFlow(time.Minute))
	rt, err := runtime.New(runtime.Config{Store: hs, Registry: reg, Clock: c.Now, Claims: &runtime.Claims{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	hs.hook = func() {
		if _, err := other.Cancel(ctx, theirs[0], "done elsewhere"); err != nil {
			t.Error(err)
		}
	}
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now})
	if _, err := s.PollOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := rt.GetState(ctx, theirs[0]); got.Status != durable.RunCancelled {
		t.Fatalf("setup: run %s; want cancelled", got.Status)
	}
	if errs := s.Stats().Errors; len(errs) != 0 {
		t.Fatalf("a due run that ended after the listing was reported: %q", errs)
	}
}
