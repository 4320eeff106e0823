package scheduler_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// loopPassStore signals each due listing (one per loop pass here, as no
// run is due) on passes, and fails the next `fails` RunIndex calls (the
// listing Recover starts with).
type loopPassStore struct {
	store.Wrapper
	fails  atomic.Int32
	passes chan struct{}
}

func newLoopPassStore() *loopPassStore {
	return &loopPassStore{Wrapper: store.Wrapper{Store: memory.New()}, passes: make(chan struct{}, 100)}
}

func (s *loopPassStore) RunIndex(ctx context.Context, p *store.RunIndexParams) ([]store.RunIndexRow, error) {
	if s.fails.Add(-1) >= 0 {
		return nil, errors.New("injected: database is locked")
	}
	return s.Store.RunIndex(ctx, p)
}

func (s *loopPassStore) RunListDue(ctx context.Context, p *store.RunListDueParams) ([]store.DueRun, error) {
	due, err := s.Store.RunListDue(ctx, p)
	select {
	case s.passes <- struct{}{}:
	default:
	}
	return due, err
}

// awaitPass waits for the loop's next due listing (a hang guard only: the
// loop sleeps an hour unless woken, so no pass comes by timing).
func (s *loopPassStore) awaitPass(t *testing.T, what string) {
	t.Helper()
	select {
	case <-s.passes:
	case <-time.After(30 * time.Second):
		t.Fatalf("no loop pass %s", what)
	}
}

// Start's recovery fails and so does the loop's first retry of it: the
// loop keeps the recovery pending and tries it again at its next pass
// (Start doc: "tried again by the loop, each PollInterval, until one
// succeeds"), so the run a crash left running is driven.
func TestLoopRetriesAFailedRecoveryUntilOneSucceeds(t *testing.T) {
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := newLoopPassStore()
	reg, _ := runtime.NewRegistry(oneStepFlow(nil))
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "one"}) // left running by a crash
	st.fails.Store(2)                                              // Start's Recover and the loop's first retry fail
	s, err := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	st.awaitPass(t, "after Start") // the loop's first pass, after its failed retry
	if got, _ := rt.GetState(ctx, id); got.Status != durable.RunRunning {
		t.Fatalf("setup: run %s before the store is back; want running", got.Status)
	}
	s.Wake()
	st.awaitPass(t, "after Wake")
	if got, _ := rt.GetState(ctx, id); got.Status != durable.RunCompleted {
		t.Errorf("run left running by a crash is %s after the store came back and the loop passed again; "+
			"want completed (the failed recovery retried)", got.Status)
	}
}

// The loop runs Recover every RecoverInterval: a run left running is
// driven at the next pass once the interval has passed since the last
// recovery, exactly the interval included (the loop compares with >=, not
// >), and also after the clock was set back since then (loop: "it runs
// now"), which would otherwise put the next one off by the step.
func TestRecoveryRunsAtTheNextPassOnceDue(t *testing.T) {
	for _, tc := range []struct {
		name    string
		advance time.Duration
	}{
		{"clock set back", -time.Minute},
		{"exactly RecoverInterval later", time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			st := newLoopPassStore()
			reg, _ := runtime.NewRegistry(oneStepFlow(nil))
			rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Clock: c.Now})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			s, err := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Hour, RecoverInterval: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer s.Stop()
			st.awaitPass(t, "after Start")
			id, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "one"}) // left running (say, by another runner that died)
			c.Advance(tc.advance)
			s.Wake()
			st.awaitPass(t, "after Wake")
			if got, _ := rt.GetState(ctx, id); got.Status != durable.RunCompleted {
				t.Errorf("run left running is %s after the pass; want completed (Recover is due)", got.Status)
			}
		})
	}
}
