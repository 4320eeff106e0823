package runtime

// A cancelled attempt always belongs to a cancelled run: what Cancel
// promises of the effect it interrupts, whether or not its caller waits
// for the run's end, whoever calls it, and whatever moves the run next.

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

func callThenDone(effType durable.EffectType) *Workflow {
	return &Workflow{ID: "w", Entry: "call", Nodes: map[string]NodeFunc{
		"call": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: effType, Payload: map[string]any{"q": "x"}, ResultKey: "out"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"ok": true}) }),
	}}
}

// attemptEnds returns how many attempts of effType the run's ledger
// started and, per step id, the statuses of their end records.
func attemptEnds(t *testing.T, st store.Store, id string, effType durable.EffectType) (started int, ends map[string][]durable.StepStatus) {
	t.Helper()
	recs, err := st.LedgerList(context.Background(), &store.LedgerListParams{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	ends = map[string][]durable.StepStatus{}
	for _, r := range recs {
		if r.Effect == nil || r.Effect.Type != effType {
			continue
		}
		if r.Status == durable.StepStarted {
			started++
			continue
		}
		ends[r.StepID] = append(ends[r.StepID], r.Status)
	}
	return started, ends
}

// countCancelledEnds counts the end records with status cancelled.
func countCancelledEnds(ends map[string][]durable.StepStatus) int {
	n := 0
	for _, e := range ends {
		for _, s := range e {
			if s == durable.StepCancelled {
				n++
			}
		}
	}
	return n
}

// Promise: docs/compatibility.md row "cancel" and Runtime.Cancel's doc
// comment (control.go): "the context of any effect in flight is cancelled
// (its attempt is recorded "cancelled" and never retried)".
//
// A Cancel whose caller stops waiting for the tick (its context ends while
// a handler that ignores its context runs) has already cancelled the
// effect's context, so the tick records the attempt "cancelled" and drops
// the handler's result. The bug this guards against: nothing then
// committed the run
// cancelled; it stayed running at the effect, and the next tick ran the
// effect again under the same key (the handler ran twice). The tick that
// records the cancelled attempt now commits the run cancelled with it.
func TestCancelThatGivesUpStillEndsTheRunItInterrupted(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int64
	entered := make(chan struct{}, 4)
	release := make(chan struct{})
	handler := func(hctx context.Context, req *EffectRequest) (Outcome, error) {
		n := calls.Add(1)
		entered <- struct{}{}
		if n == 1 {
			<-release // ignores its context: an LLM call that finishes anyway
		}
		return Completed(map[string]any{"answer": n}), nil
	}
	st := memory.New()
	rt := errRuntime(t, st, Config{Handlers: map[durable.EffectType]Handler{"llm": {Func: handler}}}, callThenDone("llm"))
	id, err := rt.Start(ctx, StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	tickDone := make(chan error, 1)
	go func() {
		_, err := rt.Tick(ctx, id, TickOptions{})
		tickDone <- err
	}()
	<-entered
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, cerr := rt.Cancel(cctx, id, "stop")
	cancel()
	close(release)
	if err := <-tickDone; err != nil {
		t.Fatalf("first tick: %v", err)
	}
	if cerr == nil {
		t.Fatal("Cancel returned before the handler it interrupted did: the test did not make it give up")
	}
	run, err := rt.GetState(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	_, ends := attemptEnds(t, st, id, "llm")
	if run.Status != durable.RunCancelled || run.Error != "stop" || countCancelledEnds(ends) != 1 {
		t.Fatalf("after a Cancel that gave up (%v): run %s (error %q), attempt ends %v; "+
			"want the run cancelled with the cancel's reason and its one attempt cancelled", cerr, run.Status, run.Error, ends)
	}
	recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	events := 0
	for _, r := range recs {
		if r.IdempotencyKey == TerminalStatusKey(durable.RunCancelled) {
			events++
		}
	}
	if events != 1 {
		t.Errorf("cancelled status events: %d, want 1", events)
	}
	// The cancelled attempt is never made again.
	st2, err := rt.Tick(ctx, id, TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 1 || st2.Status != durable.RunCancelled {
		t.Errorf("attempt recorded cancelled, yet the run is %s and the handler ran %d times; "+
			"want the run cancelled and the cancelled attempt never retried", st2.Status, calls.Load())
	}
}

// Promise: Runtime.Cancel (control.go): a cancel from a run's own node or
// handler is "refused before any stop request, which would cancel the
// caller's own effect"; the compatibility row "cancel": a cancelled
// attempt is never retried.
//
// A handler of an async child that cancels its parent (the whole session:
// an agent's "stop" tool) makes Cancel walk the tree down to the caller's
// own run. The bug this guards against: the walk cancelled the caller's
// effect
// context, was then refused (ErrOwnRunLocked) on that run and gave up: the
// attempt ended "cancelled", the child stayed running, and the driver
// ticked it again, the handler running 100 times in one Tick. The walk is
// now refused before any stop request.
func TestCancelOfAnAncestorFromADescendantsHandlerIsRefusedWithoutStoppingIt(t *testing.T) {
	ctx := context.Background()
	parent := &Workflow{ID: "parent", Entry: "spawn", Nodes: map[string]NodeFunc{
		"spawn": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "w", "async": true, "wait": true}, ResultKey: "child"}, "end")
		}),
		"end": errNode(func(run *durable.RunState) StepPlan { return Complete(nil) }),
	}}
	var calls atomic.Int64
	var cancelErr error
	handler := func(hctx context.Context, req *EffectRequest) (Outcome, error) {
		calls.Add(1)
		_, err := req.Runtime.Cancel(hctx, req.Run.ParentRunID, "stop tool")
		if calls.Load() == 1 {
			cancelErr = err
		}
		if err != nil {
			return Completed(map[string]any{"cancel_error": err.Error()}), nil
		}
		return Completed(map[string]any{"ok": true}), nil
	}
	st := memory.New()
	rt := errRuntime(t, st, Config{Handlers: map[durable.EffectType]Handler{"llm": {Func: handler}}}, parent, callThenDone("llm"))
	pid, err := rt.Start(ctx, StartParams{WorkflowID: "parent"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(ctx, pid, TickOptions{}); err != nil {
		t.Logf("tick: %v", err)
	}
	kids, _ := st.RunListChildren(ctx, pid, "")
	if len(kids) != 1 {
		t.Fatalf("children: %d", len(kids))
	}
	p, _ := rt.GetState(ctx, pid)
	kid, _ := rt.GetState(ctx, kids[0].RunID)
	_, ends := attemptEnds(t, st, kid.RunID, "llm")
	cancelledAttempts := countCancelledEnds(ends)
	if cancelErr == nil || !errors.Is(cancelErr, ErrOwnRunLocked) {
		t.Errorf("Cancel of the parent from the child's handler: %v, want ErrOwnRunLocked", cancelErr)
	}
	if cancelledAttempts > 0 || calls.Load() != 1 {
		t.Errorf("the refused Cancel (%v) cancelled its caller's own effect: %d attempts ended cancelled "+
			"(handler called %d times in one Tick), parent %s, child %s",
			cancelErr, cancelledAttempts, calls.Load(), p.Status, kid.Status)
	}
	// Refused, it changed nothing: the child completed, and its end
	// resumed the parent, which completed too.
	if kid.Status != durable.RunCompleted || p.Status != durable.RunCompleted {
		t.Errorf("after the refused Cancel: parent %s, child %s, want both completed", p.Status, kid.Status)
	}
}

// runGetCounter counts the loads of each run: how often something
// opened it.
type runGetCounter struct {
	store.Store
	mu   sync.Mutex
	gets map[string]int
}

func (c *runGetCounter) RunGet(ctx context.Context, runID string) (*durable.RunState, error) {
	c.mu.Lock()
	c.gets[runID]++
	c.mu.Unlock()
	return c.Store.RunGet(ctx, runID)
}

func (c *runGetCounter) count(runID string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gets[runID]
}

// Promise: the same as above, from the driver's side (driver.drain): a
// run whose tick a cancel request stopped is about to be committed
// cancelled by that Cancel; ticking it again at once would only stop it
// again (with the refused Cancel above, drain ticked the child 100 times
// in one call). It is kept for a later retry instead.
func TestDrainDoesNotTickAgainARunACancelStopped(t *testing.T) {
	ctx := context.Background()
	var childID string
	parent := &Workflow{ID: "parent", Entry: "spawn", Nodes: map[string]NodeFunc{
		"spawn": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "w", "async": true}, ResultKey: "child"}, "call")
		}),
		"call": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: "stop_child"}, "end")
		}),
		"end": errNode(func(run *durable.RunState) StepPlan { return Complete(nil) }),
	}}
	var rt *Runtime
	var withdraw func()
	stopChild := func(hctx context.Context, req *EffectRequest) (Outcome, error) {
		// A Cancel of the child under way: its stop request is made, its
		// commit not yet (as while it waits for the child's lock).
		childID, _ = req.Run.Vars["child"].(map[string]any)["sub_run_id"].(string)
		withdraw = rt.requestStop(childID, cancelCause{reason: "stop"})
		return Completed(nil), nil
	}
	llm := func(hctx context.Context, req *EffectRequest) (Outcome, error) { return Completed(nil), nil }
	st := &runGetCounter{Store: memory.New(), gets: map[string]int{}}
	rt = errRuntime(t, st, Config{Handlers: map[durable.EffectType]Handler{
		"stop_child": {Func: stopChild}, "llm": {Func: llm},
	}}, parent, callThenDone("llm"))
	pid, err := rt.Start(ctx, StartParams{WorkflowID: "parent"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(ctx, pid, TickOptions{}); err != nil {
		t.Fatal(err)
	}
	if withdraw == nil {
		t.Fatal("the parent's handler did not run")
	}
	defer withdraw()
	kid, err := rt.GetState(ctx, childID)
	if err != nil {
		t.Fatal(err)
	}
	if kid.Status != durable.RunRunning {
		t.Fatalf("child %s, want it left running for the cancel to commit", kid.Status)
	}
	if n := st.count(childID); n > 5 {
		t.Errorf("the child a cancel stopped was loaded %d times in one Tick: driven again and again", n)
	}
	if rt.PendingFollowUps() == 0 {
		t.Error("the child a cancel stopped is not kept for a later drive (should the cancel give up)")
	}
}

// Promise: docs/compatibility.md row "cancel": "a child ticked to work
// under a cancelled parent cancels itself" (tick.go
// endUnderCancelledParent). A parent cancelled without its children (a
// Python host's cancel_run, spec runtime-model.md §2.8: "Children are not
// cancelled") leaves its child waiting for a person. The bug this guards
// against: the answer's Resume drove the child on under its cancelled parent, and
// its next effect ran. The resume now cancels the child first and is
// refused as stale.
func TestResumeOfAChildUnderACancelledParentCancelsIt(t *testing.T) {
	ctx := context.Background()
	child := &Workflow{ID: "child", Entry: "ask", Nodes: map[string]NodeFunc{
		"ask": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}, ResultKey: "a"}, "call")
		}),
		"call": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: "llm", Payload: map[string]any{"q": "x"}}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(nil) }),
	}}
	parent := &Workflow{ID: "parent", Entry: "ask", Nodes: map[string]NodeFunc{
		"ask": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}}, "")
		}),
	}}
	var calls atomic.Int64
	handler := func(hctx context.Context, req *EffectRequest) (Outcome, error) {
		calls.Add(1)
		return Completed(map[string]any{"ok": true}), nil
	}
	st := memory.New()
	rt := errRuntime(t, st, Config{Handlers: map[durable.EffectType]Handler{"llm": {Func: handler}}}, parent, child)
	pid, err := rt.Start(ctx, StartParams{WorkflowID: "parent"})
	if err != nil {
		t.Fatal(err)
	}
	cid, err := rt.Start(ctx, StartParams{WorkflowID: "child", ParentRunID: pid})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := rt.Tick(ctx, cid, TickOptions{}); err != nil || s.Status != durable.RunWaiting {
		t.Fatalf("child tick: %v %v", s, err)
	}
	// A Python host cancels the parent alone (cancel_run).
	p, err := st.RunGet(ctx, pid)
	if err != nil {
		t.Fatal(err)
	}
	markCancelled(p, cancelCause{reason: "python cancel"})
	if err := st.RunCommit(ctx, &store.CommitParams{Run: p}); err != nil {
		t.Fatal(err)
	}
	c, rerr := rt.Resume(ctx, ResumeParams{RunID: cid, Payload: map[string]any{"answer": "yes"}})
	var stale *StaleResumeError
	if !errors.As(rerr, &stale) || stale.Status != string(durable.RunCancelled) {
		t.Errorf("resume of a child under a cancelled parent: %v, want a StaleResumeError saying it is cancelled", rerr)
	}
	if calls.Load() != 0 || statusOf(c) != durable.RunCancelled {
		t.Errorf("resumed child under a cancelled parent: status %s (err %v), its effect ran %d times; "+
			"want it cancelled without working", statusOf(c), rerr, calls.Load())
	}
	stored, err := rt.GetState(ctx, cid)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Status != durable.RunCancelled || stored.Error != "python cancel" {
		t.Errorf("stored child: %s (error %q), want cancelled with its parent's reason", stored.Status, stored.Error)
	}
}

func statusOf(s *durable.RunState) durable.RunStatus {
	if s == nil {
		return ""
	}
	return s.Status
}

// openAttemptEnds: Cancel ends an attempt an interrupted tick left open
// with a "cancelled" end record, error "cancelled", as an attempt
// cancelled in flight ends.
func TestCancelEndsAnOpenAttemptAsCancelled(t *testing.T) {
	ctx := context.Background()
	st, rt, id, entered := startLLMRunUntilCut(t)
	interruptTick(t, rt, id, entered)
	if _, err := rt.Cancel(ctx, id, ""); err != nil {
		t.Fatal(err)
	}
	var started *durable.StepRecord
	for _, r := range listLedger(t, st, id) {
		if r.Effect == nil || r.Effect.Type != "llm" {
			continue
		}
		switch r.Status {
		case durable.StepStarted:
			started = r
		case durable.StepCancelled:
			if started == nil || r.StepID != started.StepID || r.Error != "cancelled" || r.EndedAt.IsZero() {
				t.Errorf("end of the open attempt: step %s error %q ended_at %v; want step %v, error \"cancelled\", an end time",
					r.StepID, r.Error, r.EndedAt, started)
			}
			return
		}
	}
	t.Fatal("no cancelled end of the open attempt in the ledger")
}

// startLLMRunUntilCut starts a run whose "llm" effect, once its tick
// calls it (entered), waits until the tick's context ends, then fails.
func startLLMRunUntilCut(t *testing.T) (*memory.Store, *Runtime, string, chan struct{}) {
	t.Helper()
	entered := make(chan struct{}, 1)
	handler := func(hctx context.Context, req *EffectRequest) (Outcome, error) {
		entered <- struct{}{}
		<-hctx.Done()
		return Failed("llm call: " + hctx.Err().Error()), nil
	}
	st := memory.New()
	rt := errRuntime(t, st, Config{Handlers: map[durable.EffectType]Handler{"llm": {Func: handler}}},
		callThenDoneWorkflow("llm", map[string]any{"prompt": "q"}))
	return st, rt, startRun(t, rt, StartParams{}), entered
}

// A ledger written before replays closed the attempts they left behind
// (or by Python) may hold several open attempts: Cancel ends each of
// them, not only the last.
func TestCancelEndsEveryOpenAttempt(t *testing.T) {
	ctx := context.Background()
	st, rt, id, entered := startLLMRunUntilCut(t)
	// An earlier attempt a runner that died left open, under another key.
	older := &durable.StepRecord{StepID: "older-attempt", RunID: id, NodeID: "a", Status: durable.StepStarted,
		Effect: &durable.Effect{Type: "llm", Payload: map[string]any{}}, Attempt: 1, IdempotencyKey: "older-key"}
	if err := st.LedgerAppend(ctx, id, []*durable.StepRecord{older}); err != nil {
		t.Fatal(err)
	}
	interruptTick(t, rt, id, entered)
	if _, err := rt.Cancel(ctx, id, ""); err != nil {
		t.Fatal(err)
	}
	open := map[string]bool{}
	for _, r := range listLedger(t, st, id) {
		switch r.Status {
		case durable.StepStarted:
			open[r.StepID] = true
		case durable.StepCancelled:
			if r.Error != "cancelled" || !open[r.StepID] {
				t.Errorf("cancelled end of step %s (error %q) that is not an open attempt", r.StepID, r.Error)
			}
			delete(open, r.StepID)
		}
	}
	if len(open) != 0 {
		t.Fatalf("attempts left open after the cancel: %v", open)
	}
}

// Cancel cancels the context of an effect in flight through
// cancelInflight, which exists only while a handler runs. A cancel
// requested while the step's node function ran (or while the STARTED
// checkpoint was committed) found none, so the effect started after the
// cancel and ran to its end uncancelled (an LLM call of minutes held
// Cancel that long), its attempt recorded "completed". A cancel request
// now makes the attempt end cancelled before its handler starts.
func TestCancelRequestedBeforeTheHandlerCancelsIt(t *testing.T) {
	ctx := context.Background()
	var rt *Runtime
	cancelDone := make(chan error, 1)
	var once sync.Once
	var called, sawCancel atomic.Bool
	wf := &Workflow{ID: "w", Entry: "a", Nodes: map[string]NodeFunc{
		"a": errNode(func(run *durable.RunState) StepPlan {
			id := run.RunID
			// A host cancels the run while this node function runs.
			hostStopsOnce(&once, rt, id, cancelDone, func() error {
				_, err := rt.Cancel(context.Background(), id, "stop")
				return err
			})
			return Request(&durable.Effect{Type: "slow"}, "b")
		}),
		"b": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"ok": true}) }),
	}}
	rt = errRuntime(t, memory.New(), Config{}, wf)
	rt.SetHandler("slow", Handler{Func: func(ctx context.Context, req *EffectRequest) (Outcome, error) {
		called.Store(true)
		select {
		case <-ctx.Done():
			sawCancel.Store(true)
			return Outcome{}, ctx.Err()
		case <-time.After(2 * time.Second): // the external call finishes
			return Completed(map[string]any{"done": true}), nil
		}
	}})
	id, _ := rt.Start(ctx, StartParams{WorkflowID: "w"})
	if _, err := rt.Tick(ctx, id, TickOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := <-cancelDone; err != nil {
		t.Fatal(err)
	}
	st, _ := rt.GetState(ctx, id)
	if st.Status != durable.RunCancelled {
		t.Fatalf("status %s, want cancelled", st.Status)
	}
	recs, _ := rt.GetLedger(ctx, id)
	var end durable.StepStatus
	for _, r := range recs {
		if r.Effect != nil && r.Effect.Type == "slow" && r.Status != durable.StepStarted {
			end = r.Status
		}
	}
	if end != durable.StepCancelled || called.Load() && !sawCancel.Load() {
		t.Fatalf("an effect started after Cancel was requested ran uncancelled to its end (handler saw ctx cancelled: %v, "+
			"attempt recorded %q); want its context cancelled and the attempt recorded cancelled (or never started)",
			sawCancel.Load(), end)
	}
}
