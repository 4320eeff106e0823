package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestDriveTicksAPausedRunningRunOnce: a tick of a paused run does nothing
// and leaves it running, so a drive stops after that tick instead of
// giving it the 100 ticks of a run that uses its whole step budget (each
// a read of the run). Would break if the drive's loop did not stop at a
// paused run.
func TestDriveTicksAPausedRunningRunOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cs := &countGets{Wrapper: store.Wrapper{Store: memory.New()}}
	reg, _ := runtime.NewRegistry(waitFlow(time.Minute))
	rt, err := runtime.New(runtime.Config{Store: cs, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait",
		Vars: map[string]any{"_runtime": map[string]any{"control": map[string]any{"paused": true}}}})
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := rt.GetState(ctx, id); st.Status != durable.RunRunning || !runtime.IsPaused(st) {
		t.Fatalf("setup: %s paused=%v", st.Status, runtime.IsPaused(st))
	}
	s, _ := scheduler.New(scheduler.Config{Runtime: rt})
	before := cs.n.Load()
	if err := s.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if n := cs.n.Load() - before; n > 10 {
		t.Fatalf("Recover read the paused run %d times: its drive ticked it again and again", n)
	}
}
