package runtime

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// RetryFollowUps runs in the scheduler's loop at every pass, before the
// poll that releases due timers. Like the scheduler's other paths
// (PollOnce, driveUnfinished, Recover check Runtime.Busy), it passes over
// a run this process is working on right now, keeping the follow-up for a
// later retry: waiting for the run's lock held the whole loop up (no wait
// released, no other run moved) for as long as that work lasted. The
// cancel of a tree's descendants is the exception: it asks the busy run
// to stop and waits for it.

// busyClock is a settable clock for Config.Clock.
type busyClock struct {
	mu  sync.Mutex
	now time.Time
}

func newBusyClock() *busyClock {
	return &busyClock{now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *busyClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *busyClock) Advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// retryPassesOver calls RetryFollowUps and fails t unless it returns
// within half a second; release ends the work it must not wait for, so
// that a RetryFollowUps that waits returns before the test ends.
func retryPassesOver(t *testing.T, rt *Runtime, release func()) {
	t.Helper()
	retried := make(chan int, 1)
	go func() { retried <- rt.RetryFollowUps(context.Background()) }()
	select {
	case <-retried:
	case <-time.After(500 * time.Millisecond):
		release()
		<-retried
		t.Fatal("RetryFollowUps waited for a run busy in this process instead of passing over it: " +
			"the scheduler's loop is held up for as long as that work lasts")
	}
}

// The kept follow-up comes about naturally here: a ResumeRun whose tick
// was cut during a retry's back-off keeps the run's drive for
// RetryFollowUps; the host then ticks the run itself and that tick waits
// to retry its call (each back-off up to RetryPolicy.Max, 60 s by default).
func TestRetryFollowUpsDoesNotWaitForARunInItsRetryBackoff(t *testing.T) {
	ctx := context.Background()
	clock := newBusyClock()
	var calls atomic.Int32
	handler := func(context.Context, *EffectRequest) (Outcome, error) {
		if calls.Add(1) <= 2 {
			return Failed("provider unavailable"), nil
		}
		return Completed(map[string]any{"answer": "42"}), nil
	}
	inBackoff := make(chan struct{}, 8)
	release := make(chan struct{})
	sleep := func(sctx context.Context, d time.Duration) error {
		inBackoff <- struct{}{}
		select {
		case <-sctx.Done():
			return context.Cause(sctx)
		case <-release:
			return nil
		}
	}
	wf := &Workflow{ID: "w", Entry: "call", Nodes: map[string]NodeFunc{
		"call": errNode(func(*durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: "llm", Payload: map[string]any{"q": "x"}, ResultKey: "out"}, "done")
		}),
		"done": errNode(func(*durable.RunState) StepPlan { return Complete(map[string]any{"ok": true}) }),
	}}
	rt := errRuntime(t, memory.New(), Config{
		Handlers: map[durable.EffectType]Handler{"llm": {Func: handler}},
		Policy:   RetryPolicy{DefaultAttempts: 3},
		Sleep:    sleep,
		Clock:    clock.Now,
	}, wf)
	id, err := rt.Start(ctx, StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Pause(ctx, id, "operator"); err != nil {
		t.Fatal(err)
	}

	// 1. The operator lifts the pause with a deadline that ends while the
	// run waits to retry its call: ResumeRun fails and keeps the drive.
	rctx, rcancel := context.WithCancel(ctx)
	resumed := make(chan error, 1)
	go func() {
		_, err := rt.ResumeRun(rctx, id)
		resumed <- err
	}()
	<-inBackoff
	rcancel()
	if err := <-resumed; err == nil {
		t.Fatal("ResumeRun cut during the back-off returned no error")
	}
	if n := rt.PendingFollowUps(); n != 1 {
		t.Fatalf("%d follow-ups kept after the cut ResumeRun, want its drive", n)
	}

	// 2. The host ticks the run again; its attempt fails and it waits to
	// retry.
	ticked := make(chan error, 1)
	go func() {
		_, err := rt.Tick(ctx, id, TickOptions{})
		ticked <- err
	}()
	<-inBackoff

	// 3. The scheduler's pass retries the kept follow-up, now due.
	clock.Advance(2 * time.Second)
	retryPassesOver(t, rt, func() { close(release) })
	if n := rt.PendingFollowUps(); n != 1 {
		t.Errorf("%d follow-ups kept after the pass, want the drive passed over", n)
	}
	close(release)
	if err := <-ticked; err != nil {
		t.Fatalf("host tick: %v", err)
	}
	if run, _ := rt.GetState(ctx, id); run.Status != durable.RunCompleted {
		t.Fatalf("run %s, want completed", run.Status)
	}
	// The drive passed over finds nothing left to do at its next retry.
	clock.Advance(time.Hour)
	rt.RetryFollowUps(ctx)
	if n := rt.PendingFollowUps(); n != 0 {
		t.Errorf("%d follow-ups kept after the run completed, want none", n)
	}
}

// busyTree is a runtime with "top" started and ticked: it waits on its
// async child "leaf", which asks a person.
func busyTree(t *testing.T, clock *busyClock) (rt *Runtime, top, leaf string) {
	t.Helper()
	ctx := context.Background()
	wfs := []*Workflow{
		{ID: "top", Entry: "spawn", Nodes: map[string]NodeFunc{
			"spawn": errNode(func(*durable.RunState) StepPlan {
				return Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
					Payload: map[string]any{"workflow_id": "leaf", "async": true, "wait": true}}, "done")
			}),
			"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"sub": run.Vars["sub"]}) }),
		}},
		{ID: "leaf", Entry: "ask", Nodes: map[string]NodeFunc{
			"ask": errNode(func(*durable.RunState) StepPlan {
				return Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}, ResultKey: "a"}, "done")
			}),
			"done": errNode(func(*durable.RunState) StepPlan { return Complete(map[string]any{}) }),
		}},
	}
	rt = errRuntime(t, memory.New(), Config{Clock: clock.Now}, wfs...)
	top, err := rt.Start(ctx, StartParams{WorkflowID: "top"})
	if err != nil {
		t.Fatal(err)
	}
	run, err := rt.Tick(ctx, top, TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if leaf = WaitedChild(run); leaf == "" {
		t.Fatalf("top %s, want waiting on its child", run.Status)
	}
	return rt, top, leaf
}

// lockRun holds the lock of run id as a host update would; release (safe
// to call more than once, and called at the test's end) frees it.
func lockRun(t *testing.T, rt *Runtime, id string) (release func()) {
	t.Helper()
	_, unlock, err := rt.lock(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(unlock) }
	t.Cleanup(release)
	return release
}

// retryBusyThenFree makes the kept follow-up (what) due and retries it
// while its run is busy, then frees the run (release) and retries once
// more an hour later: the first retry must pass over it, the second do
// it. whileBusy and onceFree check the run after each.
func retryBusyThenFree(t *testing.T, rt *Runtime, clock *busyClock, release func(), what string, whileBusy, onceFree func()) {
	t.Helper()
	clock.Advance(time.Minute)
	retryPassesOver(t, rt, release)
	whileBusy()
	if n := rt.PendingFollowUps(); n != 1 {
		t.Errorf("%d follow-ups kept after the pass, want the %s passed over", n, what)
	}

	release()
	clock.Advance(time.Hour)
	rt.RetryFollowUps(context.Background())
	onceFree()
	if n := rt.PendingFollowUps(); n != 0 {
		t.Errorf("%d follow-ups kept once done, want none", n)
	}
}

// A child's end whose parent's resume a cancelled caller left undone is
// kept; the parent is busy in this process (a host update holds its lock)
// when the retry is due.
func TestRetryFollowUpsPassesOverAParentBusyInThisProcess(t *testing.T) {
	ctx := context.Background()
	clock := newBusyClock()
	rt, top, leaf := busyTree(t, clock)
	child, err := rt.GetState(ctx, leaf)
	if err != nil {
		t.Fatal(err)
	}
	release := lockRun(t, rt, top)

	// The leaf's answer ends it; handing its end to top waits for top's
	// lock until the caller gives up: the resume is kept.
	rctx, rcancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := rt.Resume(rctx, ResumeParams{RunID: leaf, WaitKey: child.Waiting.WaitKey, Payload: map[string]any{"a": 1}})
		done <- err
	}()
	for run, _ := rt.GetState(ctx, leaf); !run.Status.Terminal(); run, _ = rt.GetState(ctx, leaf) {
		time.Sleep(time.Millisecond)
	}
	rcancel()
	<-done
	if n := rt.PendingFollowUps(); n != 1 {
		t.Fatalf("%d follow-ups kept, want the parent's resume", n)
	}

	retryBusyThenFree(t, rt, clock, release, "resume", func() {
		if run, _ := rt.GetState(ctx, top); run.Status != durable.RunWaiting {
			t.Errorf("top %s while busy, want still waiting", run.Status)
		}
	}, func() {
		if run, _ := rt.GetState(ctx, top); run.Status != durable.RunCompleted {
			t.Errorf("top %s once free, want completed", run.Status)
		}
	})
}

// A tree cancel a kill stopped after the parent's commit leaves the
// descendants' cancel kept; a descendant is busy in this process (a host
// update holds its lock) when the retry is due. Unlike the other
// follow-ups, the cancel is not passed over: it waits for the run (a tick
// there returns at once on its stop request) and cancels it, so that no
// effect starts under the cancelled tree.
func TestRetryFollowUpsWaitsForADescendantBusyInThisProcessToCancelIt(t *testing.T) {
	ctx := context.Background()
	clock := newBusyClock()
	rt, top, leaf := busyTree(t, clock)
	err := rt.hostUpdate(ctx, top, true, func(run *durable.RunState) (bool, []*durable.StepRecord, error) {
		markCancelled(run, cancelCause{reason: "stop", root: top})
		return true, nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rt.retryLater(ctx, followUp{kind: followCancelTree, runID: top}, false)
	release := lockRun(t, rt, leaf)
	clock.Advance(time.Minute)
	retried := make(chan struct{})
	go func() { rt.RetryFollowUps(ctx); close(retried) }()
	select {
	case <-retried:
		t.Fatal("RetryFollowUps passed over the busy descendant of a cancelled tree")
	case <-time.After(50 * time.Millisecond):
	}
	release()
	select {
	case <-retried:
	case <-time.After(2 * time.Second):
		t.Fatal("RetryFollowUps did not return once the descendant was free")
	}
	if run, _ := rt.GetState(ctx, leaf); run.Status != durable.RunCancelled || run.Error != "stop" {
		t.Errorf("leaf %s (%q), want cancelled with the tree's reason", run.Status, run.Error)
	}
	if n := rt.PendingFollowUps(); n != 0 {
		t.Errorf("%d follow-ups kept once done, want none", n)
	}
}
