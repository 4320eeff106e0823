package runtime

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A tree cancel kept for RetryFollowUps (the run was committed cancelled,
// its descendants' cancel left undone) must still reach a descendant this
// process is working on: its effect in flight is interrupted at once by
// the stop request (requestStop cancels its context), as Cancel and the
// tick's own drain do, and the retry waits for the tick, which then
// returns, to see the run cancelled. Passing over the busy descendant
// leaves it running its effect, for ever when that effect waits for its
// context, under a cancelled tree.
func TestRetriedTreeCancelInterruptsADescendantBusyInThisProcess(t *testing.T) {
	ctx := context.Background()
	clock := newBusyClock()
	started := make(chan struct{}, 1)
	interrupted := make(chan struct{})
	block := func(hctx context.Context, _ *EffectRequest) (Outcome, error) {
		started <- struct{}{}
		<-hctx.Done() // a long effect: a tool waiting on the outside world
		close(interrupted)
		return Outcome{}, hctx.Err()
	}
	wfs := []*Workflow{
		{ID: "top", Entry: "spawn", Nodes: map[string]NodeFunc{
			"spawn": errNode(func(*durable.RunState) StepPlan {
				return Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
					Payload: map[string]any{"workflow_id": "leaf", "async": true, "wait": true}}, "done")
			}),
			"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{}) }),
		}},
		{ID: "leaf", Entry: "work", Nodes: map[string]NodeFunc{
			"work": errNode(func(*durable.RunState) StepPlan {
				return Request(&durable.Effect{Type: "block", Payload: map[string]any{}, ResultKey: "a"}, "done")
			}),
			"done": errNode(func(*durable.RunState) StepPlan { return Complete(map[string]any{}) }),
		}},
	}
	rt := errRuntime(t, memory.New(), Config{
		Clock:    clock.Now,
		Handlers: map[durable.EffectType]Handler{"block": {Func: block}},
	}, wfs...)
	top, err := rt.Start(ctx, StartParams{WorkflowID: "top"})
	if err != nil {
		t.Fatal(err)
	}
	// The top's tick starts the leaf and drives it: the leaf's effect
	// blocks, so the leaf is busy in this process.
	tctx, tcancel := context.WithCancel(ctx)
	defer tcancel()
	ticked := make(chan struct{})
	go func() {
		defer close(ticked)
		_, _ = rt.Tick(tctx, top, TickOptions{})
	}()
	select {
	case <-started:
	case <-time.After(2 * time.Second):
		t.Fatal("the leaf's effect never started")
	}
	var leaf string
	for deadline := time.Now().Add(time.Second); leaf == "" && time.Now().Before(deadline); {
		if run, err := rt.GetState(ctx, top); err == nil {
			leaf = WaitedChild(run)
		}
		if leaf == "" {
			time.Sleep(time.Millisecond)
		}
	}
	if leaf == "" || !rt.Busy(leaf) {
		t.Fatalf("setup: leaf %q not busy in this process", leaf)
	}

	retriedTreeCancel(t, rt, top)

	// The scheduler's pass retries it.
	clock.Advance(time.Minute)
	done := make(chan struct{})
	go func() { rt.RetryFollowUps(ctx); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		tcancel()
		<-done
		t.Fatal("RetryFollowUps held up: the busy descendant's effect was not cut")
	}
	select {
	case <-interrupted:
	default:
		t.Errorf("the kept cancel of top's tree never interrupted the effect of its busy descendant %s: "+
			"it goes on running under a cancelled tree (%d follow-ups kept)", leaf, rt.PendingFollowUps())
	}
	if run, _ := rt.GetState(ctx, leaf); run.Status != durable.RunCancelled || run.Error != "stop" {
		t.Errorf("leaf %s (%q) after the retried cancel; want cancelled with the tree's reason", run.Status, run.Error)
	}
	if n := rt.PendingFollowUps(); n != 0 {
		t.Errorf("%d follow-ups kept after the retried cancel, want none", n)
	}
	tcancel()
	<-ticked
}

// retriedTreeCancel commits top cancelled and keeps the cancel of its
// descendants for RetryFollowUps, as a kill or a cut caller leaves it.
func retriedTreeCancel(t *testing.T, rt *Runtime, top string) {
	t.Helper()
	ctx := context.Background()
	err := rt.hostUpdate(ctx, top, true, func(run *durable.RunState) (bool, []*durable.StepRecord, error) {
		markCancelled(run, cancelCause{reason: "stop", root: top})
		return true, nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rt.retryLater(ctx, followUp{kind: followCancelTree, runID: top}, false)
}

// The same, with the busy descendant waiting to retry a failed call: the
// kept cancel's stop request cuts the back-off short and the retry waits
// for the tick. No new attempt (a call to the outside world under a
// cancelled tree) starts; the tick commits the run cancelled, as it does
// an attempt the cancel cuts.
func TestRetriedTreeCancelEndsADescendantInItsRetryBackoff(t *testing.T) {
	ctx := context.Background()
	clock := newBusyClock()
	var calls atomic.Int32
	failing := func(context.Context, *EffectRequest) (Outcome, error) {
		calls.Add(1)
		return Failed("provider unavailable"), nil
	}
	inBackoff := make(chan struct{}, 8)
	sleep := func(sctx context.Context, d time.Duration) error {
		inBackoff <- struct{}{}
		<-sctx.Done() // a long back-off
		return context.Cause(sctx)
	}
	wfs := []*Workflow{
		{ID: "top", Entry: "spawn", Nodes: map[string]NodeFunc{
			"spawn": errNode(func(*durable.RunState) StepPlan {
				return Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
					Payload: map[string]any{"workflow_id": "leaf", "async": true, "wait": true}}, "done")
			}),
			"done": errNode(func(*durable.RunState) StepPlan { return Complete(map[string]any{}) }),
		}},
		{ID: "leaf", Entry: "call", Nodes: map[string]NodeFunc{
			"call": errNode(func(*durable.RunState) StepPlan {
				return Request(&durable.Effect{Type: "llm", Payload: map[string]any{}, ResultKey: "a"}, "done")
			}),
			"done": errNode(func(*durable.RunState) StepPlan { return Complete(map[string]any{}) }),
		}},
	}
	rt := errRuntime(t, memory.New(), Config{
		Clock:    clock.Now,
		Handlers: map[durable.EffectType]Handler{"llm": {Func: failing}},
		Policy:   RetryPolicy{DefaultAttempts: 3},
		Sleep:    sleep,
	}, wfs...)
	top, err := rt.Start(ctx, StartParams{WorkflowID: "top"})
	if err != nil {
		t.Fatal(err)
	}
	tctx, tcancel := context.WithCancel(ctx)
	defer tcancel()
	ticked := make(chan struct{})
	go func() {
		defer close(ticked)
		_, _ = rt.Tick(tctx, top, TickOptions{})
	}()
	select {
	case <-inBackoff:
	case <-time.After(2 * time.Second):
		t.Fatal("the leaf never waited to retry its call")
	}
	run, err := rt.GetState(ctx, top)
	if err != nil {
		t.Fatal(err)
	}
	leaf := WaitedChild(run)
	if leaf == "" || !rt.Busy(leaf) {
		t.Fatalf("setup: leaf %q not busy in this process", leaf)
	}

	retriedTreeCancel(t, rt, top)
	clock.Advance(time.Minute)
	done := make(chan struct{})
	go func() { rt.RetryFollowUps(ctx); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		tcancel()
		<-done
		t.Fatal("RetryFollowUps held up: the busy descendant's back-off was not cut")
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the leaf's call was made %d times; want 1: a new attempt started once the kept cancel "+
			"cut its back-off", n)
	}
	if n := rt.PendingFollowUps(); n != 0 {
		t.Errorf("%d follow-ups kept after the retried cancel, want none", n)
	}
	if run, _ := rt.GetState(ctx, leaf); run.Status != durable.RunCancelled || run.Error != "stop" {
		t.Errorf("leaf %s (%q); want cancelled with the tree's reason by its own tick", run.Status, run.Error)
	}
	tcancel()
	<-ticked
}
