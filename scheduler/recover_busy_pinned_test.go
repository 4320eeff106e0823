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

// A run a failed drive left running waits out its back-off; a Recover
// that meets it while the host holds it queues it for once it is free but
// keeps its back-off time (Recover: "A run already queued keeps its time
// (a failure back-off)"), rather than driving it at the next pass.
func TestRecoverOfABusyRunKeepsItsFailureBackoff(t *testing.T) {
	t.Parallel()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	sc := &switchableCommits{Store: memory.New()}
	gs := &gateGetStore{Wrapper: store.Wrapper{Store: sc}}
	reg, _ := runtime.NewRegistry(oneStepFlow(nil))
	rt, err := runtime.New(runtime.Config{Store: gs, Registry: reg, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "one"}) // left running by a crash
	s, err := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	sc.fail.Store(true)
	if err := s.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	sc.fail.Store(false)
	if got := s.Stats().RunsFailed; got != 1 {
		t.Fatalf("setup: RunsFailed = %d; want the recovery's drive failed once", got)
	}
	letGo := holdRun(t, rt, gs, id)
	if err := s.Recover(ctx); err != nil { // meets the run busy
		letGo()
		t.Fatal(err)
	}
	letGo()
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := rt.GetState(ctx, id); got.Status != durable.RunRunning {
		t.Errorf("run is %s at a pass right after its failed drive; want still running, held for its 1-minute back-off", got.Status)
	}
	c.Advance(time.Minute)
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := rt.GetState(ctx, id); got.Status != durable.RunCompleted {
		t.Errorf("run is %s once its back-off passed; want completed", got.Status)
	}
}
