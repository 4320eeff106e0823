package scheduler_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/scheduler"
)

// TestDriveTicksAPausedRunningRunOnce: a tick of a paused run does nothing
// and leaves it running, so a drive stops after that tick instead of
// giving it the 100 ticks of a run that uses its whole step budget (each
// a read of the run). Would break if the drive's loop did not stop at a
// paused run.
func TestDriveTicksAPausedRunningRunOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cs, rt := pausedRunningRun(t)
	s, _ := scheduler.New(scheduler.Config{Runtime: rt})
	before := cs.n.Load()
	if err := s.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	if n := cs.n.Load() - before; n > 10 {
		t.Fatalf("Recover read the paused run %d times: its drive ticked it again and again", n)
	}
}
