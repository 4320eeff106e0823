package runtime

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// busyLeafTree is a "top" run whose tick, running in the background, has
// started its "leaf" subworkflow and is driving it: the leaf is busy in
// this process.
type busyLeafTree struct {
	rt        *Runtime
	clock     *busyClock
	top, leaf string
	tcancel   context.CancelFunc
	ticked    chan struct{}
}

// startBusyLeafTree starts top, whose node starts and waits for a leaf run
// entered at work (which goes on to a completing "done"), ticks top in
// the background and returns once busy receives, the leaf then busy in
// this process; never (what names the wait) fails t. cfg gets the
// tree's clock.
func startBusyLeafTree(t *testing.T, cfg Config, work NodeFunc, busy <-chan struct{}, never string) *busyLeafTree {
	t.Helper()
	ctx := context.Background()
	done := errNode(func(*durable.RunState) StepPlan { return Complete(map[string]any{}) })
	wfs := []*Workflow{
		{ID: "top", Entry: "spawn", Nodes: map[string]NodeFunc{
			"spawn": errNode(func(*durable.RunState) StepPlan {
				return Request(&durable.Effect{Type: durable.EffectStartSubworkflow, ResultKey: "sub",
					Payload: map[string]any{"workflow_id": "leaf", "async": true, "wait": true}}, "done")
			}),
			"done": done,
		}},
		{ID: "leaf", Entry: "work", Nodes: map[string]NodeFunc{"work": work, "done": done}},
	}
	b := &busyLeafTree{clock: newBusyClock(), ticked: make(chan struct{})}
	cfg.Clock = b.clock.Now
	b.rt = errRuntime(t, memory.New(), cfg, wfs...)
	var err error
	if b.top, err = b.rt.Start(ctx, StartParams{WorkflowID: "top"}); err != nil {
		t.Fatal(err)
	}
	tctx, tcancel := context.WithCancel(ctx)
	b.tcancel = tcancel
	t.Cleanup(tcancel)
	go func() {
		defer close(b.ticked)
		_, _ = b.rt.Tick(tctx, b.top, TickOptions{})
	}()
	select {
	case <-busy:
	case <-time.After(10 * time.Second):
		t.Fatal(never)
	}
	for deadline := time.Now().Add(10 * time.Second); b.leaf == "" && time.Now().Before(deadline); {
		if run, err := b.rt.GetState(ctx, b.top); err == nil {
			b.leaf = WaitedChild(run)
		}
		if b.leaf == "" {
			time.Sleep(time.Millisecond)
		}
	}
	if b.leaf == "" || !b.rt.Busy(b.leaf) {
		t.Fatalf("setup: leaf %q not busy in this process", b.leaf)
	}
	return b
}

// retryKeptCancel commits top cancelled, keeps the cancel of its
// descendants (retriedTreeCancel) and, a minute later, has the
// scheduler's pass retry it in the background: the channel closes when
// RetryFollowUps returns.
func (b *busyLeafTree) retryKeptCancel(t *testing.T) <-chan struct{} {
	t.Helper()
	retriedTreeCancel(t, b.rt, b.top)
	b.clock.Advance(time.Minute)
	retried := make(chan struct{})
	go func() { defer close(retried); b.rt.RetryFollowUps(context.Background()) }()
	return retried
}

// awaitRetry waits for retried, failing t with held if it does not
// close within ten seconds (the tick's context is then cancelled).
func (b *busyLeafTree) awaitRetry(t *testing.T, retried <-chan struct{}, held string) {
	t.Helper()
	select {
	case <-retried:
	case <-time.After(10 * time.Second):
		b.tcancel()
		<-retried
		t.Fatal(held)
	}
}

// stopTick cancels the background tick and waits for it to return.
func (b *busyLeafTree) stopTick() {
	b.tcancel()
	<-b.ticked
}

// effectNode requests an effect of type typ, then goes on to "done".
func effectNode(typ durable.EffectType) NodeFunc {
	return errNode(func(*durable.RunState) StepPlan {
		return Request(&durable.Effect{Type: typ, Payload: map[string]any{}, ResultKey: "a"}, "done")
	})
}

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
	started := make(chan struct{}, 1)
	interrupted := make(chan struct{})
	block := func(hctx context.Context, _ *EffectRequest) (Outcome, error) {
		started <- struct{}{}
		<-hctx.Done() // a long effect: a tool waiting on the outside world
		close(interrupted)
		return Outcome{}, hctx.Err()
	}
	// The top's tick starts the leaf and drives it: the leaf's effect
	// blocks, so the leaf is busy in this process.
	b := startBusyLeafTree(t, Config{Handlers: map[durable.EffectType]Handler{"block": {Func: block}}},
		effectNode("block"), started, "the leaf's effect never started")
	rt, leaf := b.rt, b.leaf

	// The scheduler's pass retries it.
	b.awaitRetry(t, b.retryKeptCancel(t), "RetryFollowUps held up: the busy descendant's effect was not cut")
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
	b.stopTick()
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
	b := startBusyLeafTree(t, Config{
		Handlers: map[durable.EffectType]Handler{"llm": {Func: failing}},
		Policy:   RetryPolicy{DefaultAttempts: 3},
		Sleep:    sleep,
	}, effectNode("llm"), inBackoff, "the leaf never waited to retry its call")
	rt, leaf := b.rt, b.leaf

	b.awaitRetry(t, b.retryKeptCancel(t), "RetryFollowUps held up: the busy descendant's back-off was not cut")
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
	b.stopTick()
}

// The kept cancel of a run's descendants takes the tree's root from the
// run's marker only when the marker's reason is the run's own error: a
// marker copied from another run (here another tree's, "other" aimed at
// "elsewhere") is not this cancel's, so the descendants are cancelled
// with the run's reason and no marker naming a root the cancel was never
// aimed at. Would break if any marker were trusted: the child would carry
// {"run_id": "elsewhere"}, and whoever hands its end to a parent would
// take "elsewhere"'s cancel to cover that parent.
func TestKeptTreeCancelIgnoresAForeignMarker(t *testing.T) {
	ctx := context.Background()
	st, clock := memory.New(), newBusyClock()
	rt := errRuntime(t, st, Config{Clock: clock.Now}, askOnly())
	top, err := rt.Start(ctx, StartParams{WorkflowID: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	child, err := rt.Start(ctx, StartParams{WorkflowID: "ask", ParentRunID: top})
	if err != nil {
		t.Fatal(err)
	}
	if run, err := rt.Tick(ctx, child, TickOptions{}); err != nil || run.Status != durable.RunWaiting {
		t.Fatalf("child tick: %v, %v", run, err)
	}
	err = rt.hostUpdate(ctx, top, true, func(run *durable.RunState) (bool, []*durable.StepRecord, error) {
		markCancelled(run, cancelCause{reason: "other", root: "elsewhere"})
		run.Error = "mine"
		return true, nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rt.retryLater(ctx, followUp{kind: followCancelTree, runID: top}, false)
	clock.Advance(time.Minute)
	rt.RetryFollowUps(ctx)
	run, err := st.RunGet(ctx, child)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != durable.RunCancelled || run.Error != "mine" {
		t.Fatalf("child %s (%q) after the kept cancel; want cancelled with the run's reason \"mine\"", run.Status, run.Error)
	}
	if root, reason := cancelMarker(run); root != "" || reason != "" {
		t.Errorf("child's cancel marker names root %q (reason %q); want none: the top's marker was another cancel's", root, reason)
	}
}
