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

// The failure back-off of a due run holds only the wait whose release
// failed. A run whose timeout tick failed three times (a store refusing
// writes for a while) is held for 4 poll intervals; the store recovers
// and the host answers the wait, and the run enters a new wait whose
// deadline (the same absolute time) has passed. That wait's release never
// failed: it is released at the next poll (spec §5.2 "Poll cycle"), not
// held up to maxRetryDelay by the earlier wait's back-off. The deadline
// alone cannot tell the waits apart here: the run's version does.
func TestBackoffOfAnEarlierWaitDoesNotHoldANewDueWait(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const poll = time.Minute
	w := waitOnSwitchable(t, t0, sharedDeadlineFlow(t0.Add(time.Minute)), poll)
	c, st, rt, s, id := w.c, w.st, w.rt, w.s, w.id
	ctx := context.Background()
	c.Advance(2 * time.Minute) // wait a is due
	st.fail.Store(true)
	for i, hold := range []time.Duration{poll, 2 * poll, 4 * poll} {
		if n, err := s.PollOnce(ctx); n != 1 || err != nil {
			t.Fatalf("failing tick %d: PollOnce = %d, %v", i+1, n, err)
		}
		if i < 2 {
			c.Advance(hold)
		}
	}
	if got := s.Stats().RunsFailed; got != 3 {
		t.Fatalf("setup: RunsFailed = %d, want 3", got)
	}
	st.fail.Store(false)
	// The event arrives: the host answers wait a; the run enters wait b,
	// whose deadline (the same absolute time) has passed.
	cur, _ := rt.GetState(ctx, id)
	after, err := rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: cur.Waiting.WaitKey, Payload: map[string]any{"x": 1}})
	if err != nil || after.Status != durable.RunWaiting || after.CurrentNode != "b" {
		t.Fatalf("setup: resume gave %v at %q, %v; want waiting at b", after.Status, after.CurrentNode, err)
	}
	c.Advance(poll) // a whole poll interval with wait b due
	if _, err := s.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := rt.GetState(ctx, id); got.Status != durable.RunCompleted {
		t.Errorf("wait b has been due for a poll interval, yet after a Pass the run is %s at %q: held by the back-off of wait a's failed releases (another wait)",
			got.Status, got.CurrentNode)
	}
}

// switchableCommits fails RunCommit while fail is set.
type switchableCommits struct {
	*memory.Store
	fail atomic.Bool
}

func (s *switchableCommits) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if s.fail.Load() {
		return errors.New("injected: commit failed")
	}
	return s.Store.RunCommit(ctx, p)
}

// A due run's retry back-off doubles only with failures in a row: a tick
// that succeeds in between starts it again from PollInterval.
func TestDueRunBackoffRestartsAfterASuccessfulTick(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const poll = time.Minute
	w := waitOnSwitchable(t, t0, chainFlow(t0), poll)
	c, st, rt, s, id := w.c, w.st, w.rt, w.s, w.id
	ctx := context.Background()
	c.Advance(10 * time.Minute) // all three waits are due
	pollOnce := func(want int, what string) {
		t.Helper()
		if n, err := s.PollOnce(ctx); n != want || err != nil {
			t.Fatalf("%s: PollOnce = %d, %v; want %d", what, n, err, want)
		}
	}
	st.fail.Store(true)
	pollOnce(1, "first tick, failing") // held for one PollInterval
	st.fail.Store(false)
	c.Advance(poll)
	pollOnce(1, "second tick, succeeding") // w1 released into w2, due
	if got, _ := rt.GetState(ctx, id); got.CurrentNode != "w2" {
		t.Fatalf("setup: the successful tick left the run at %q; want w2", got.CurrentNode)
	}
	st.fail.Store(true)
	pollOnce(1, "third tick, failing") // a first failure in a row again
	st.fail.Store(false)
	c.Advance(poll)
	pollOnce(1, "one PollInterval after a failure that followed a success")
}

// switchableWait is a run waiting on a store whose commits a test can make
// fail, and a scheduler polling it on the same test clock.
type switchableWait struct {
	c  *runtimetest.Clock
	st *switchableCommits
	rt *runtime.Runtime
	s  *scheduler.Scheduler
	id string
}

// waitOnSwitchable starts wf at t0, ticks its run into its first wait and
// makes a scheduler that polls every poll.
func waitOnSwitchable(t *testing.T, t0 time.Time, wf *runtime.Workflow, poll time.Duration) switchableWait {
	t.Helper()
	w := switchableWait{c: runtimetest.NewClock(t0), st: &switchableCommits{Store: memory.New()}}
	reg, _ := runtime.NewRegistry(wf)
	var err error
	if w.rt, err = runtime.New(runtime.Config{Store: w.st, Registry: reg, Clock: w.c.Now}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w.id, _ = w.rt.Start(ctx, runtime.StartParams{WorkflowID: wf.ID})
	if got, err := w.rt.Tick(ctx, w.id, runtime.TickOptions{}); err != nil || got.Status != durable.RunWaiting {
		t.Fatalf("setup: %v %v", got, err)
	}
	if w.s, err = scheduler.New(scheduler.Config{Runtime: w.rt, Clock: w.c.Now, PollInterval: poll}); err != nil {
		t.Fatal(err)
	}
	return w
}
