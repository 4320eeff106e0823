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
)

// Recover continues every interrupted run, however many there are: a
// runner that died with more running runs than one listing page holds
// must not leave its oldest runs stranded.
func TestRecoverContinuesRunsBeyondOneListingPage(t *testing.T) {
	t.Parallel()
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rt, st := setup(t, c, waitFlow(-time.Minute))
	ctx := context.Background()
	const n = 10_003 // one more page than the 10,000 Recover used to list
	ids := make([]string, n)
	for i := range ids {
		c.Advance(time.Millisecond) // distinct update times: the oldest list last
		id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now})
	if err := s.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	left, err := st.RunList(ctx, &store.RunListParams{Status: durable.RunRunning, Limit: n})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Fatalf("%d of %d interrupted runs left running after Recover (oldest first: %s)", len(left), n, ids[0])
	}
	if got, _ := rt.GetState(ctx, ids[0]); got.Status != durable.RunCompleted {
		t.Fatalf("the oldest interrupted run is %s, want completed", got.Status)
	}
}
