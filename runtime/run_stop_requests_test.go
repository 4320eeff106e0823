package runtime

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// Tests of the stop requests hosts make through a run's lock, of the
// attempt-numbered child ids of START_SUBWORKFLOW when the store fails,
// and of limit reads from a handler's goroutine.

func stepNode(f func(run *durable.RunState) StepPlan) NodeFunc {
	return func(ctx context.Context, run *durable.RunState, rc *RunContext) (StepPlan, error) { return f(run), nil }
}

// stopTestRuntime returns a runtime whose workflow "w" requests effect "x" at
// node a, runs the pure node b (counting its runs in bRuns) and completes
// at c.
func stopTestRuntime(t *testing.T, st store.Store, policy EffectPolicy, x HandlerFunc, bRuns *atomic.Int64, more ...*Workflow) *Runtime {
	t.Helper()
	wf := &Workflow{ID: "w", Entry: "a", Nodes: map[string]NodeFunc{
		"a": stepNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: "x", Payload: map[string]any{}, ResultKey: "r"}, "b")
		}),
		"b": stepNode(func(run *durable.RunState) StepPlan {
			if bRuns != nil {
				bRuns.Add(1)
			}
			return StepPlan{NextNode: "c"}
		}),
		"c": stepNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"ok": true}) }),
	}}
	reg, err := NewRegistry(append([]*Workflow{wf}, more...)...)
	if err != nil {
		t.Fatal(err)
	}
	if st == nil {
		st = memory.New()
	}
	rt, err := New(Config{Store: st, Registry: reg, Policy: policy,
		Sleep:    func(context.Context, time.Duration) error { return nil },
		Handlers: map[durable.EffectType]Handler{"x": {Func: x}}})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// waitForWaiters waits until n callers wait for runID's lock.
func waitForWaiters(t *testing.T, r *Runtime, runID string, n int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		r.locksMu.Lock()
		l := r.locks[runID]
		r.locksMu.Unlock()
		got := 0
		if l != nil {
			l.mu.Lock()
			got = len(l.waiters)
			l.mu.Unlock()
		}
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d waiters for the lock of run %s, want %d", got, runID, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// A Pause a node or handler makes on its own run is refused with
// ErrOwnRunLocked, and leaves nothing behind (Pause doc: a tick that takes
// the lock later must not stop on its request). It used to make its stop
// request first and never withdraw it: every later tick stopped at its
// first step boundary, and the reference it kept made Busy(run) true for
// ever, so a scheduler's recovery passed over the run.
func TestPauseOfOwnRunLeavesNoStopRequest(t *testing.T) {
	ctx := context.Background()
	var bRuns atomic.Int64
	var pauseErr error
	rt := stopTestRuntime(t, nil, nil, func(ctx context.Context, req *EffectRequest) (Outcome, error) {
		_, pauseErr = req.Runtime.Pause(ctx, req.Run.RunID, "from its own handler")
		return Completed(map[string]any{"ok": true}), nil
	}, &bRuns)
	id, err := rt.Start(ctx, StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(ctx, id, TickOptions{}); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(pauseErr, ErrOwnRunLocked) {
		t.Fatalf("Pause from the run's own handler returned %v, want ErrOwnRunLocked", pauseErr)
	}
	// A second tick, as a scheduler would make.
	st, err := rt.Tick(ctx, id, TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunCompleted || bRuns.Load() != 1 {
		t.Errorf("after the refused Pause and two ticks the run is %s at node %q (node b ran %d times); "+
			"want it completed: the refused Pause left its stop request set, so every tick stops at once",
			st.Status, st.CurrentNode, bRuns.Load())
	}
	if rt.Busy(id) {
		t.Errorf("Busy(%s) after every call returned: the refused Pause kept its reference to the run's lock "+
			"(its map entry is never deleted, a scheduler's recovery skips the run for ever)", id)
	}
}

// Pause: "A tick in progress stops at its next step boundary"
// (docs/architecture.md), and a host call that gives up changes nothing.
// The stop request was one flag per run: when one of two pending Pauses
// gave up at its deadline, its withdraw cleared the flag the other relied
// on, so the tick ran on past the boundary (further effects, in a real
// workflow) and the pending Pause landed on a completed run. Requests are
// counted now.
func TestPauseGivingUpKeepsAnotherPausesRequest(t *testing.T) {
	ctx := context.Background()
	entered, release := make(chan struct{}, 1), make(chan struct{})
	var bRuns atomic.Int64
	rt := stopTestRuntime(t, nil, nil, func(context.Context, *EffectRequest) (Outcome, error) {
		entered <- struct{}{}
		<-release // a long LLM call
		return Completed(map[string]any{"ok": true}), nil
	}, &bRuns)
	id, err := rt.Start(ctx, StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	tickDone := make(chan error, 1)
	go func() { _, err := rt.Tick(ctx, id, TickOptions{}); tickDone <- err }()
	<-entered

	// Pause A: a client with a short deadline.
	actx, acancel := context.WithCancel(ctx)
	defer acancel()
	aDone := make(chan error, 1)
	go func() { _, err := rt.Pause(actx, id, "a"); aDone <- err }()
	waitForWaiters(t, rt, id, 1)
	// Pause B: a client that waits.
	bDone := make(chan error, 1)
	go func() { _, err := rt.Pause(ctx, id, "b"); bDone <- err }()
	waitForWaiters(t, rt, id, 2)

	acancel()
	if err := <-aDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("Pause A returned %v, want context.Canceled", err)
	}
	close(release)
	if err := <-tickDone; err != nil {
		t.Fatal(err)
	}
	if err := <-bDone; err != nil {
		t.Fatal(err)
	}
	st, err := rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if bRuns.Load() != 0 || !IsPaused(st) {
		t.Fatalf("with Pause B pending the tick ran node b %d time(s) after the effect and the run ended %s "+
			"(paused %v); want the tick stopped at the step boundary and the run paused at b",
			bRuns.Load(), st.Status, IsPaused(st))
	}
}

// childCreateFaultStore is a memory store whose commits a test can make fail.
type childCreateFaultStore struct {
	*memory.Store
	// failChildCreate fails the next create of a child run, before it
	// is written (a store error: connection refused, database busy).
	failChildCreate atomic.Bool
	// loseChildCreate writes the next create of a child run and then
	// reports an error (the answer lost on the way back).
	loseChildCreate atomic.Bool
	// failRun fails the next commit of the run with this id (a kill
	// before that commit).
	failRun atomic.Pointer[string]
}

func (s *childCreateFaultStore) RunCommit(ctx context.Context, p *store.CommitParams) error {
	child := p.Create && p.Run.ParentRunID != ""
	if child && s.failChildCreate.CompareAndSwap(true, false) {
		return errors.New("store unavailable: connection refused")
	}
	if id := s.failRun.Load(); id != nil && *id == p.Run.RunID && s.failRun.CompareAndSwap(id, nil) {
		return errors.New("killed before this commit")
	}
	err := s.Store.RunCommit(ctx, p)
	if err == nil && child && s.loseChildCreate.CompareAndSwap(true, false) {
		return errors.New("connection reset: the commit's answer was lost")
	}
	return err
}

// retryingSubworkflowRuntime returns a runtime over st retrying
// START_SUBWORKFLOW twice, whose workflow "parent" runs "child" as a sync
// subworkflow (child's node counting its runs in childRuns).
func retryingSubworkflowRuntime(t *testing.T, st store.Store, childRuns *atomic.Int64, onChild func()) *Runtime {
	t.Helper()
	child := &Workflow{ID: "child", Entry: "c", Nodes: map[string]NodeFunc{
		"c": stepNode(func(run *durable.RunState) StepPlan {
			childRuns.Add(1)
			if onChild != nil {
				onChild()
			}
			return Complete(map[string]any{"n": childRuns.Load()})
		}),
	}}
	parent := &Workflow{ID: "parent", Entry: "p", Nodes: map[string]NodeFunc{
		"p": stepNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "child"}, ResultKey: "sub"}, "q")
		}),
		"q": stepNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"sub": run.Vars["sub"]}) }),
	}}
	reg, err := NewRegistry(parent, child)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := New(Config{Store: st, Registry: reg,
		Policy: RetryPolicy{Attempts: map[durable.EffectType]int{durable.EffectStartSubworkflow: 2}},
		Sleep:  func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// tickUntilDone ticks the run until a tick returns without an error (a
// tick the test made fail, or an interrupted one, leaves the run at its
// checkpoint for the next), at most five times.
func tickUntilDone(t *testing.T, rt *Runtime, runID string) *durable.RunState {
	t.Helper()
	for range 5 {
		got, err := rt.Tick(context.Background(), runID, TickOptions{})
		if err == nil {
			return got
		}
	}
	t.Fatalf("run %s: five ticks in a row failed", runID)
	return nil
}

// checkOneChildRanOnce checks that the parent completed with one child
// run, ended, whose workflow ran once.
func checkOneChildRanOnce(t *testing.T, st store.Store, got *durable.RunState, childRuns *atomic.Int64) {
	t.Helper()
	kids, err := st.RunListChildren(context.Background(), got.RunID, "")
	if err != nil {
		t.Fatal(err)
	}
	var live []string
	for _, k := range kids {
		if !k.Status.Terminal() {
			live = append(live, k.RunID+" ("+string(k.Status)+")")
		}
	}
	if got.Status != durable.RunCompleted || childRuns.Load() != 1 || len(kids) != 1 || len(live) != 0 {
		t.Fatalf("parent %s; the child workflow ran %d times in %d child runs, %v unfinished; want the parent "+
			"completed with one child run, ended, that ran once", got.Status, childRuns.Load(), len(kids), live)
	}
}

// A retry runs its own child (childRunID adds the attempt), so a Start
// that did not get through the store must not count as a failed attempt:
// its retry would create the attempt-2 child and run it, and a replay
// after a kill, starting again at attempt 1, would find no child under
// that id and run the subworkflow a second time (docs/compatibility.md,
// child run id: "a replay after a crash finds the child instead of
// starting a second one"). Such a Start interrupts the tick instead; the
// replay asks for the same child again.
func TestSubworkflowStartStoreErrorIsReplayedNotRetried(t *testing.T) {
	ctx := context.Background()
	st := &childCreateFaultStore{Store: memory.New()}
	var childRuns atomic.Int64
	var parentID string
	rt := retryingSubworkflowRuntime(t, st, &childRuns, func() {
		if childRuns.Load() == 1 {
			st.failRun.Store(&parentID) // a kill: the parent's next commit never lands
		}
	})
	var err error
	parentID, err = rt.Start(ctx, StartParams{WorkflowID: "parent"})
	if err != nil {
		t.Fatal(err)
	}
	st.failChildCreate.Store(true) // the first Start of the child does not get through
	if _, err := rt.Tick(ctx, parentID, TickOptions{}); err == nil {
		t.Fatal("a tick whose child could not be created returned no error; want it interrupted")
	}
	if kids, _ := st.RunListChildren(ctx, parentID, ""); len(kids) != 0 {
		t.Fatalf("%d children after a Start that failed in the store; want none (no retry under another id)", len(kids))
	}
	checkOneChildRanOnce(t, st, tickUntilDone(t, rt, parentID), &childRuns)
}

// A Start whose create landed with its answer lost (session.go: a commit
// "may have landed with its answer lost") interrupts the tick rather than
// failing the attempt: a retry would start a second child under the next
// attempt's id and leave the first one running, unknown to its parent.
func TestSubworkflowLostStartAnswerFindsTheChild(t *testing.T) {
	st := &childCreateFaultStore{Store: memory.New()}
	var childRuns atomic.Int64
	rt := retryingSubworkflowRuntime(t, st, &childRuns, nil)
	parentID, err := rt.Start(context.Background(), StartParams{WorkflowID: "parent"})
	if err != nil {
		t.Fatal(err)
	}
	st.loseChildCreate.Store(true)
	checkOneChildRanOnce(t, st, tickUntilDone(t, rt, parentID), &childRuns)
}

// GetLimitStatus from a run's node or handler reads the run the tick
// holds (limits.go); a goroutine a handler left running with its context
// read that working copy after the handler returned, unsynchronised, while
// the tick's next nodes wrote vars._limits (a data race: "concurrent map
// read and map write" aborts the process). A handler's context ends when
// it returns, and then the read goes to the store. Meaningful under -race.
func TestLimitStatusFromHandlerGoroutineReadsTheStore(t *testing.T) {
	ctx := context.Background()
	readDone := make(chan struct{})
	var rt *Runtime
	wf := &Workflow{ID: "w", Entry: "a", Nodes: map[string]NodeFunc{
		"a": stepNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: "x", Payload: map[string]any{}}, "b")
		}),
		"b": stepNode(func(run *durable.RunState) StepPlan {
			time.Sleep(20 * time.Millisecond) // the helper reads first, unsynchronised
			limitsOf(run)["current_iteration"] = int64(7)
			return StepPlan{NextNode: "c"}
		}),
		"c": stepNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{}) }),
	}}
	reg, err := NewRegistry(wf)
	if err != nil {
		t.Fatal(err)
	}
	rt, err = New(Config{Store: memory.New(), Registry: reg, Handlers: map[durable.EffectType]Handler{
		"x": {Func: func(ctx context.Context, req *EffectRequest) (Outcome, error) {
			id := req.Run.RunID
			go func() {
				defer close(readDone)
				time.Sleep(5 * time.Millisecond) // after the handler returned
				_, _ = rt.GetLimitStatus(ctx, id)
			}()
			return Completed(nil), nil
		}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(ctx, id, TickOptions{}); err != nil {
		t.Fatal(err)
	}
	<-readDone
}

// Spec §2.10: pause stores the (trimmed) pause_reason; resume_run
// "removes paused and pause_reason, sets resumed_at".
func TestResumeRunRemovesThePauseReason(t *testing.T) {
	ctx := context.Background()
	rt := errRuntime(t, memory.New(), Config{}, callThenDoneWorkflow(durable.EffectAskUser, map[string]any{"prompt": "?"}))
	id := startRun(t, rt, StartParams{})
	run, err := rt.Pause(ctx, id, "  maintenance  ")
	if err != nil {
		t.Fatal(err)
	}
	if ctl := controlOf(run.Vars); ctl["pause_reason"] != "maintenance" {
		t.Errorf("paused: pause_reason %q, want the trimmed reason", ctl["pause_reason"])
	}
	run, err = rt.ResumeRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	ctl := controlOf(run.Vars)
	if _, has := ctl["pause_reason"]; has {
		t.Errorf("after resume_run: control %v still holds pause_reason", ctl)
	}
	if _, has := ctl["paused"]; has || ctl["resumed_at"] == nil {
		t.Errorf("after resume_run: control %v, want no paused and a resumed_at", ctl)
	}
}
