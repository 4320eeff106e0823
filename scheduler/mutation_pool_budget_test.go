package scheduler_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A poll that lists again past a due run of a workflow it does not serve
// (PollOnce's second listing) keeps to BatchSize also when it drives runs
// side by side (Concurrency): the runs its pool already launched count
// against the batch. Sequential and concurrent polls tick the same runs.
func TestPollPastAnUnservedRunKeepsToItsBatch(t *testing.T) {
	t.Parallel()
	for _, conc := range []int{1, 4} {
		t.Run(fmt.Sprintf("concurrency=%d", conc), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			st := memory.New()
			// Due first, a run of a workflow this runner lacks; then three of its own.
			_, _, mine := sharedDueRuns(t, c, st, 1, 3)
			reg, _ := runtime.NewRegistry(waitFlow(time.Minute))
			rt, _ := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: c.Now})
			s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, BatchSize: 2, Concurrency: conc})
			n, err := s.PollOnce(ctx)
			if err != nil || n != 2 {
				t.Fatalf("PollOnce = %d, %v; want 2 (BatchSize)", n, err)
			}
			got := statuses(t, rt, mine)
			if got[durable.RunCompleted] != 2 || got[durable.RunWaiting] != 1 {
				t.Fatalf("after one poll of BatchSize 2: %v; want 2 completed and 1 left waiting", got)
			}
		})
	}
}
