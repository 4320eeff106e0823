package scheduler_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestStopDuringStartRecoveryRecordsNoError: a Stop made (here from
// OnRunResumed) while Start's recovery runs cuts the recovery short; that
// is the host's stop, not a failed recovery, so nothing is recorded in
// Stats.Errors. Would break if Start recorded every Recover error, also
// one its own stop caused (the loopCtx.Err() check dropped).
func TestStopDuringStartRecoveryRecordsNoError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var stopped atomic.Bool
	// After the stop, the other run's step lasts until its tick's context
	// ends: the recovery is cut short whichever run it drives first.
	reg, _ := runtime.NewRegistry(oneStepFlow(func(ctx context.Context) error {
		if stopped.Load() {
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}))
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // left running by a crash
		if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "one"}); err != nil {
			t.Fatal(err)
		}
	}
	var s *scheduler.Scheduler
	var once sync.Once
	s, err = scheduler.New(scheduler.Config{Runtime: rt, OnRunResumed: func(*durable.RunState) {
		once.Do(func() {
			s.Stop()
			stopped.Store(true)
		})
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	<-s.Done()
	if errs := s.Stats().Errors; len(errs) != 0 {
		t.Fatalf("a recovery cut short by Stop was recorded as failed: %q", errs)
	}
	if s.Running() {
		t.Fatal("Running after Stop")
	}
}
