package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A run held for a retry that someone else then moved on (here the host
// ticked it to its end) is forgotten by the next complete due listing: its
// stale entry, once its retry time passes, does not make the loop poll
// without pause while another run is held (nextWait stays the time to
// that run's retry).
func TestRetryOfARunNoLongerDueIsForgotten(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := runtimetest.NewClock(t0)
	st := &switchableCommits{Store: memory.New()}
	reg, _ := runtime.NewRegistry(waitFlow(time.Minute))
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := func() string {
		id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
		if got, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || got.Status != durable.RunWaiting {
			t.Fatalf("setup: %v %v", got, err)
		}
		return id
	}
	a := start()                // due at t0+1m
	c.Advance(90 * time.Second) // t0+1m30s
	start()                     // b: due at t0+2m30s
	s, err := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	st.fail.Store(true)
	if n, _ := s.PollOnce(ctx); n != 1 { // a fails: held until t0+2m30s
		t.Fatalf("setup: first poll ticked %d", n)
	}
	st.fail.Store(false)
	if got, err := rt.Tick(ctx, a, runtime.TickOptions{}); err != nil || got.Status != durable.RunCompleted {
		t.Fatalf("setup: host tick of a: %v %v", got, err)
	}
	c.Advance(time.Minute) // t0+2m30s: b due, a's retry time reached
	st.fail.Store(true)
	if n, _ := s.PollOnce(ctx); n != 1 || s.Stats().RunsFailed != 2 { // b fails: held until t0+3m30s
		t.Fatalf("setup: second poll ticked %d, RunsFailed %d", n, s.Stats().RunsFailed)
	}
	c.Advance(30 * time.Second) // t0+3m
	if w := scheduler.NextWait(s, ctx); w != 30*time.Second {
		t.Errorf("NextWait = %v with only b due and held until 30s from now; want 30s "+
			"(a's stale retry entry, for a run no longer due, must not make the loop poll at once)", w)
	}
}

// A hold that is not a failure's back-off (here: the tick did not release
// the wait the listing said was due, the runtime's clock being behind the
// scheduler's) holds that wait only: once the host has answered it and the
// run waits again with another deadline, already due, the next poll
// releases the new wait instead of passing it over for a poll interval
// (held: "a hold is dropped when the run is listed with another deadline").
func TestHoldOfOneWaitDoesNotHoldTheNextWait(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rtClock := runtimetest.NewClock(t0.Add(30 * time.Second))
	schedClock := runtimetest.NewClock(t0.Add(10 * time.Minute))
	reg, _ := runtime.NewRegistry(chainFlow(t0))
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, Clock: rtClock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if got, _ := rt.Tick(ctx, id, runtime.TickOptions{}); got.Status != durable.RunWaiting || got.CurrentNode != "w1" {
		t.Fatalf("setup: %s at %q", got.Status, got.CurrentNode)
	}
	s, err := scheduler.New(scheduler.Config{Runtime: rt, Clock: schedClock.Now, PollInterval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	s.PollOnce(ctx) // w1 is due by the scheduler's clock, not the runtime's: not released, held
	if got, _ := rt.GetState(ctx, id); got.CurrentNode != "w1" {
		t.Fatalf("setup: the runtime released w1 early: at %q", got.CurrentNode)
	}
	cur, _ := rt.GetState(ctx, id)
	after, err := rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: cur.Waiting.WaitKey, Payload: map[string]any{"x": 1}})
	if err != nil || after.Status != durable.RunWaiting || after.CurrentNode != "w2" {
		t.Fatalf("setup: resume gave %v at %q, %v; want waiting at w2", after.Status, after.CurrentNode, err)
	}
	rtClock.Advance(3 * time.Minute) // w2 (until t0+2m) is due by both clocks now
	if _, err := s.PollOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := rt.GetState(ctx, id); got.CurrentNode == "w2" {
		t.Errorf("the run's new wait w2, due, was passed over by the hold of w1; want it released at this poll")
	}
}
