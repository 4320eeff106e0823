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

// failedRecovery is a run of "one" a crash left running, whose drive by
// Recover failed (the store's commits failed then): the scheduler holds it
// for its 1-minute failure back-off.
type failedRecovery struct {
	c   *runtimetest.Clock
	reg *runtime.Registry
	rt  *runtime.Runtime
	s   *scheduler.Scheduler
	id  string
}

// newFailedRecovery sets up a failedRecovery on a store whose commits can
// fail, seen by the runtime through wrap (nil: as it is).
func newFailedRecovery(t *testing.T, wrap func(store.Store) store.Store) failedRecovery {
	t.Helper()
	f := failedRecovery{c: runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	sc := &switchableCommits{Store: memory.New()}
	var st store.Store = sc
	if wrap != nil {
		st = wrap(sc)
	}
	f.reg, _ = runtime.NewRegistry(oneStepFlow(nil))
	var err error
	if f.rt, err = runtime.New(runtime.Config{Store: st, Registry: f.reg, Clock: f.c.Now}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	f.id, _ = f.rt.Start(ctx, runtime.StartParams{WorkflowID: "one"}) // left running by a crash
	if f.s, err = scheduler.New(scheduler.Config{Runtime: f.rt, Clock: f.c.Now, PollInterval: time.Minute}); err != nil {
		t.Fatal(err)
	}
	sc.fail.Store(true)
	if err := f.s.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	sc.fail.Store(false)
	if got := f.s.Stats().RunsFailed; got != 1 {
		t.Fatalf("setup: RunsFailed = %d; want the recovery's drive failed once", got)
	}
	return f
}

// wantHeldForItsBackoff checks that a pass now leaves the run running and
// one a minute later completes it.
func (f failedRecovery) wantHeldForItsBackoff(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if _, err := f.s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.rt.GetState(ctx, f.id); got.Status != durable.RunRunning {
		t.Errorf("run is %s at a pass right after its failed drive; want still running, held for its 1-minute back-off", got.Status)
	}
	f.c.Advance(time.Minute)
	if _, err := f.s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.rt.GetState(ctx, f.id); got.Status != durable.RunCompleted {
		t.Errorf("run is %s once its back-off passed; want completed", got.Status)
	}
}
