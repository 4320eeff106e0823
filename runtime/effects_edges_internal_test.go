package runtime

// Built-in effects and host entry points at awkward moments: events,
// resumes of waits that changed, a child's end, cancels and stops of sync
// children. Each test failed on the code before its fix; the comments say
// what went wrong.

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

var farDeadline = time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)

func waitEventPlan(name, next, resultKey string) StepPlan {
	return Request(&durable.Effect{Type: durable.EffectWaitEvent,
		Payload: map[string]any{"name": name, "scope": "session"}, ResultKey: resultKey}, next)
}

// (1) builtin_events.go: the wildcard key of an emitted event is cut at
// the last ':' of the whole key, so an event whose name holds a ':'
// ("job:done") is offered to evt:session:s1:job:* instead of
// evt:session:s1:* (spec §3.5: a listener on name "*" receives every event
// of that scope id).
func TestEventNameWithColonReachesWildcardListener(t *testing.T) {
	ctx := context.Background()
	listener := &Workflow{ID: "listen", Entry: "wait", Nodes: map[string]NodeFunc{
		"wait": errNode(func(run *durable.RunState) StepPlan { return waitEventPlan("*", "done", "evt") }),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"evt": run.Vars["evt"]}) }),
	}}
	emitter := &Workflow{ID: "emit", Entry: "emit", Nodes: map[string]NodeFunc{
		"emit": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectEmitEvent,
				Payload: map[string]any{"name": "job:done"}, ResultKey: "r"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"r": run.Vars["r"]}) }),
	}}
	rt := errRuntime(t, memory.New(), Config{}, listener, emitter)
	lid, _ := rt.Start(ctx, StartParams{WorkflowID: "listen", SessionID: "s1"})
	if st, err := rt.Tick(ctx, lid, TickOptions{}); err != nil || st.Waiting == nil || st.Waiting.WaitKey != "evt:session:s1:*" {
		t.Fatalf("listener: %v %v", st, err)
	}
	eid, _ := rt.Start(ctx, StartParams{WorkflowID: "emit", SessionID: "s1"})
	st, err := rt.Tick(ctx, eid, TickOptions{})
	if err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("emitter: %v %v", st, err)
	}
	ls, _ := rt.GetState(ctx, lid)
	if ls.Status != durable.RunCompleted {
		t.Fatalf("wildcard listener of session s1 is %s after event %q was emitted in s1 (emit result %v); want completed",
			ls.Status, "job:done", st.Output["r"])
	}
}

// armedStore runs hook once, on the first call that matches, in place of
// a concurrent actor acting at that exact moment.
type armedStore struct {
	store.Wrapper
	mu       sync.Mutex
	onList   func(p *store.RunListParams) // after the listing
	onGet    func(runID string, run *durable.RunState)
	onCommit func(p *store.CommitParams) // before the commit
}

func (s *armedStore) RunList(ctx context.Context, p *store.RunListParams) ([]*durable.RunState, error) {
	runs, err := s.Wrapper.RunList(ctx, p)
	s.mu.Lock()
	h := s.onList
	s.mu.Unlock()
	if h != nil && err == nil {
		h(p)
	}
	return runs, err
}

func (s *armedStore) RunGet(ctx context.Context, runID string) (*durable.RunState, error) {
	run, err := s.Wrapper.RunGet(ctx, runID)
	s.mu.Lock()
	h := s.onGet
	s.mu.Unlock()
	if h != nil && err == nil {
		h(runID, run)
	}
	return run, err
}

func (s *armedStore) RunCommit(ctx context.Context, p *store.CommitParams) error {
	s.mu.Lock()
	h := s.onCommit
	s.mu.Unlock()
	if h != nil {
		h(p)
	}
	return s.Wrapper.RunCommit(ctx, p)
}

// (2a) resume.go: the wait-key check of a resume is skipped when the
// stored wait has no key, and event delivery relies on it. A listener
// listed by EMIT_EVENT that is resumed by someone else before delivery
// locks it (here: a host answering the same key; equally the scheduler
// timing the wait out) and goes on into WAIT_UNTIL (key null) receives
// the event anyway: the envelope lands at the WAIT_UNTIL's result key and
// the timer is released hours early. The event was meant for a wait that
// no longer exists.
func TestEventDoesNotResumeAKeylessWaitEnteredAfterListing(t *testing.T) {
	ctx := context.Background()
	listener := &Workflow{ID: "listen", Entry: "wait", Nodes: map[string]NodeFunc{
		"wait": errNode(func(run *durable.RunState) StepPlan { return waitEventPlan("ping", "sleep", "evt") }),
		"sleep": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": durable.FormatTime(farDeadline)}, ResultKey: "slept"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"slept": run.Vars["slept"]}) }),
	}}
	emitter := &Workflow{ID: "emit", Entry: "emit", Nodes: map[string]NodeFunc{
		"emit": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectEmitEvent,
				Payload: map[string]any{"name": "ping"}, ResultKey: "r"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"r": run.Vars["r"]}) }),
	}}
	st := &armedStore{Wrapper: store.Wrapper{Store: memory.New()}}
	rt := errRuntime(t, st, Config{}, listener, emitter)
	lid, _ := rt.Start(ctx, StartParams{WorkflowID: "listen", SessionID: "s1"})
	if ls, err := rt.Tick(ctx, lid, TickOptions{}); err != nil || ls.Status != durable.RunWaiting {
		t.Fatalf("listener: %v %v", ls, err)
	}
	var fired atomic.Bool
	st.onList = func(p *store.RunListParams) {
		if len(p.WaitKeys) == 0 || fired.Swap(true) {
			return
		}
		// Between the listing and the delivery: another resumer answers
		// the listener's wait; the listener moves on into WAIT_UNTIL.
		ls, err := rt.Resume(ctx, ResumeParams{RunID: lid, WaitKey: "evt:session:s1:ping", Payload: map[string]any{"first": true}})
		if err != nil || ls.Status != durable.RunWaiting || ls.Waiting.Reason != durable.WaitUntil {
			t.Errorf("concurrent resume: %v %v", ls, err)
		}
	}
	eid, _ := rt.Start(ctx, StartParams{WorkflowID: "emit", SessionID: "s1"})
	es, err := rt.Tick(ctx, eid, TickOptions{})
	if err != nil || !fired.Load() {
		t.Fatalf("emitter: %v %v (hook fired %v)", es, err, fired.Load())
	}
	ls, _ := rt.GetState(ctx, lid)
	if ls.Status != durable.RunWaiting || ls.Waiting == nil || ls.Waiting.Reason != durable.WaitUntil {
		t.Fatalf("listener in WAIT_UNTIL (until %s) was resumed by an event meant for its previous wait: "+
			"status %s, output %v; emit result %v", durable.FormatTime(farDeadline), ls.Status, ls.Output, es.Output["r"])
	}
}

// asyncWaitParent starts "child" async+wait, then sleeps in WAIT_UNTIL.
func asyncWaitParent() *Workflow {
	return &Workflow{ID: "parent", Entry: "spawn", Nodes: map[string]NodeFunc{
		"spawn": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "child", "async": true, "wait": true}, ResultKey: "child"}, "sleep")
		}),
		"sleep": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": durable.FormatTime(farDeadline)}, ResultKey: "slept"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan {
			return Complete(map[string]any{"child": run.Vars["child"], "slept": run.Vars["slept"]})
		}),
	}}
}

func askChild() *Workflow {
	return &Workflow{ID: "child", Entry: "ask", Nodes: map[string]NodeFunc{
		"ask": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}, ResultKey: "a"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"a": run.Vars["a"]}) }),
	}}
}

// (2b) driver.go resumeParent + resume.go: the same hole on the child's
// end. resumeParent checks the parent's key on an unlocked read, then
// resumes through the keyless-tolerant check. Two notifications of one
// child's end (the child's own driver and NotifyChildEnded from
// ResumeRun / scheduler.Recover / another runner) both pass the read; the
// first resumes the parent, which moves into WAIT_UNTIL; the second then
// resumes that WAIT_UNTIL with the child's output: the parent is resumed
// twice by one child's end.
func TestChildEndResumesItsParentOnce(t *testing.T) {
	ctx := context.Background()
	st := &armedStore{Wrapper: store.Wrapper{Store: memory.New()}}
	rt := errRuntime(t, st, Config{}, asyncWaitParent(), askChild())
	pid, _ := rt.Start(ctx, StartParams{WorkflowID: "parent"})
	ps, err := rt.Tick(ctx, pid, TickOptions{})
	if err != nil || ps.Status != durable.RunWaiting || ps.Waiting.Reason != durable.WaitSubworkflow {
		t.Fatalf("parent: %v %v", ps, err)
	}
	cid := WaitedChild(ps)
	var fired atomic.Bool
	st.onGet = func(runID string, run *durable.RunState) {
		if runID != pid || run.Status != durable.RunWaiting || run.Waiting.Reason != durable.WaitSubworkflow || fired.Swap(true) {
			return
		}
		// The child's driver has just read the parent waiting on the
		// child; another notifier of the same end gets in first.
		if err := rt.NotifyChildEnded(ctx, cid); err != nil {
			t.Errorf("concurrent notify: %v", err)
		}
	}
	if cs, err := rt.Resume(ctx, ResumeParams{RunID: cid, Payload: map[string]any{"text": "yes"}}); err != nil || cs.Status != durable.RunCompleted {
		t.Fatalf("child: %v %v", cs, err)
	}
	ps, _ = rt.GetState(ctx, pid)
	if !fired.Load() {
		t.Fatal("hook did not fire")
	}
	if ps.Status != durable.RunWaiting || ps.Waiting == nil || ps.Waiting.Reason != durable.WaitUntil {
		t.Fatalf("parent resumed twice by one child's end: its WAIT_UNTIL (until %s) was released with the child's output: "+
			"status %s, output %v", durable.FormatTime(farDeadline), ps.Status, ps.Output)
	}
}

// (3) builtin_subworkflow.go: a sync child that waits makes its parent
// wait on it, but nothing re-checks the child once the parent's wait is
// committed. If the child is resumed and ends in between (its wait is
// visible as soon as the child's tick commits it; e.g. an event or a
// quick user answer), the child's driver reads the parent still
// "running" and skips it; the parent then commits its wait on a child
// that has already ended and waits forever (until a process restart runs
// scheduler.Recover). The async+wait path is protected (the parent's
// driver ticks the child after the commit and re-checks); sync is not.
func TestSyncChildEndingBeforeParentWaitCommitResumesParent(t *testing.T) {
	ctx := context.Background()
	parent := &Workflow{ID: "parent", Entry: "spawn", Nodes: map[string]NodeFunc{
		"spawn": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "child"}, ResultKey: "child"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"child": run.Vars["child"]}) }),
	}}
	st := &armedStore{Wrapper: store.Wrapper{Store: memory.New()}}
	rt := errRuntime(t, st, Config{}, parent, askChild())
	pid, _ := rt.Start(ctx, StartParams{WorkflowID: "parent"})
	var fired atomic.Bool
	st.onCommit = func(p *store.CommitParams) {
		r := p.Run
		if r.RunID != pid || r.Status != durable.RunWaiting || r.Waiting == nil ||
			r.Waiting.Reason != durable.WaitSubworkflow || fired.Swap(true) {
			return
		}
		// The child is already waiting (committed); it is answered and
		// ends just before the parent's wait on it is committed.
		// Bounded: the parent's lock is held by the tick committing its
		// wait (this goroutine), so a first attempt at resuming a parent
		// not yet waiting on the child must leave it to that tick (which
		// re-checks the child) rather than wait for the lock: waiting
		// would deadlock here (until the deadline) and stall a caller
		// anywhere.
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		cs, err := rt.Resume(rctx, ResumeParams{RunID: WaitedChild(r), Payload: map[string]any{"text": "yes"}})
		if err != nil || cs.Status != durable.RunCompleted {
			t.Errorf("child: %v %v", cs, err)
		}
		if rctx.Err() != nil {
			t.Errorf("the child's Resume waited for its parent's lock until its deadline: a first attempt drove a parent not waiting on the child")
		}
	}
	if _, err := rt.Tick(ctx, pid, TickOptions{}); err != nil {
		t.Fatal(err)
	}
	if !fired.Load() {
		t.Fatal("hook did not fire")
	}
	ps, _ := rt.GetState(ctx, pid)
	if ps.Status != durable.RunCompleted {
		t.Fatalf("parent is %s (waiting on %q) although its child has completed; want it resumed and completed",
			ps.Status, WaitedChild(ps))
	}
}

// (4) control.go cancelOnce: a run whose workflow is not registered is
// cancelled too (opened without its workflow), and a parent waiting on it
// is resumed (Cancel's contract: "a parent left waiting on a cancelled
// child is resumed with the child's end"; compatibility.md: cancelled
// child → output {"success": false, …}).
func TestCancelOfUnregisteredChildResumesItsParent(t *testing.T) {
	ctx := context.Background()
	rt := errRuntime(t, memory.New(), Config{}, asyncWaitParent(), askChild())
	pid, _ := rt.Start(ctx, StartParams{WorkflowID: "parent"})
	ps, err := rt.Tick(ctx, pid, TickOptions{})
	if err != nil || ps.Status != durable.RunWaiting {
		t.Fatalf("parent: %v %v", ps, err)
	}
	cid := WaitedChild(ps)
	if err := rt.Registry().Unregister("child"); err != nil {
		t.Fatal(err)
	}
	cs, err := rt.Cancel(ctx, cid, "")
	if err != nil || cs.Status != durable.RunCancelled {
		t.Fatalf("cancel child: %v %v", cs, err)
	}
	ps, _ = rt.GetState(ctx, pid)
	if WaitedChild(ps) == cid {
		t.Fatalf("parent still waits on child %s, which is cancelled", cid)
	}
}

// syncParentOf runs "child" as a sync subworkflow.
func syncParentOf() *Workflow {
	return &Workflow{ID: "parent", Entry: "spawn", Nodes: map[string]NodeFunc{
		"spawn": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "child"}, ResultKey: "child"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"child": run.Vars["child"]}) }),
	}}
}

// (5a) builtin_subworkflow.go + tick.go: a StepGate that returns
// ErrStepGateClosed "stops the tick cleanly at that boundary" — but the
// gate is consulted in the steps of a sync child too, and a child stopped
// there is handed back "running", which the sync handler turns into
// "Unexpected subworkflow status: running": the parent fails for good.
// (A gate returning any other error interrupts the parent at its
// checkpoint instead, as it should.)
func TestStepGateClosedInSyncChildDoesNotFailParent(t *testing.T) {
	ctx := context.Background()
	child := &Workflow{ID: "child", Entry: "a", Nodes: map[string]NodeFunc{
		"a": errNode(func(run *durable.RunState) StepPlan { return Next("b") }),
		"b": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"ok": true}) }),
	}}
	rt := errRuntime(t, memory.New(), Config{}, syncParentOf(), child)
	pid, _ := rt.Start(ctx, StartParams{WorkflowID: "parent"})
	gate := func(ctx context.Context, run *durable.RunState, nodeID string) error {
		if run.WorkflowID == "child" && nodeID == "b" {
			return ErrStepGateClosed // e.g. a host draining for shutdown
		}
		return nil
	}
	ps, err := rt.Tick(ctx, pid, TickOptions{StepGate: gate})
	if err != nil {
		t.Fatal(err)
	}
	if ps.Status == durable.RunFailed {
		t.Fatalf("a closed step gate failed the parent: %q; want it stopped at its checkpoint and continuing on the next tick", ps.Error)
	}
	if ps, err = rt.Tick(ctx, pid, TickOptions{}); err != nil || ps.Status != durable.RunCompleted {
		t.Fatalf("next tick: %v %v", ps, err)
	}
}

// (5b) Same cause: Pause of a run that is executing as a sync child stops
// its tick at the next step boundary; the parent's handler gets the child
// "running" and fails the parent. (Python's tick returns the persisted,
// paused child — waiting — and the parent waits on it.)
func TestPauseOfSyncChildDoesNotFailParent(t *testing.T) {
	ctx := context.Background()
	var rt *Runtime
	paused := make(chan error, 1)
	child := selfPausingChild(&rt, paused)
	rt = errRuntime(t, memory.New(), Config{}, syncParentOf(), child)
	pid, _ := rt.Start(ctx, StartParams{WorkflowID: "parent"})
	ps, err := rt.Tick(ctx, pid, TickOptions{})
	if perr := <-paused; perr != nil {
		t.Fatal(perr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if ps.Status == durable.RunFailed {
		t.Fatalf("pausing the sync child failed its parent: %q", ps.Error)
	}
}

// selfPausingChild is a two-node workflow "child" whose first step a host
// pauses while it executes (through *rt, set once the runtime exists);
// the pause's outcome is sent on paused.
func selfPausingChild(rt **Runtime, paused chan error) *Workflow {
	var once sync.Once
	return &Workflow{ID: "child", Entry: "a", Nodes: map[string]NodeFunc{
		"a": errNode(func(run *durable.RunState) StepPlan {
			id := run.RunID
			hostStopsOnce(&once, *rt, id, paused, func() error {
				_, err := (*rt).Pause(context.Background(), id, "hold on")
				return err
			})
			return Next("b")
		}),
		"b": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"ok": true}) }),
	}}
}
