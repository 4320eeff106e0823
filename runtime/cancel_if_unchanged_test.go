package runtime_test

// CancelWith with CancelOptions.IfUnchanged: a run is cancelled only if it
// is still at the version the caller read; a change made in between (an
// event that resumed it, a tick in progress, another writer's commit)
// wins, and nothing of it is interrupted.

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// loopingListener waits for "ping" at its entry, runs the "work" effect
// and goes back to waiting: the shape of a VisualFlow on_event listener.
func loopingListener() *runtime.Workflow {
	return &runtime.Workflow{ID: "listen", Entry: "w", Nodes: map[string]runtime.NodeFunc{
		"w": wevNode(func(run *durable.RunState) runtime.StepPlan {
			return wevEffect(durable.EffectWaitEvent, map[string]any{"name": "ping"}, "ev", "work")
		}),
		"work": wevNode(func(run *durable.RunState) runtime.StepPlan { return wevEffect("work", map[string]any{}, "x", "w") }),
	}}
}

// workHandler counts the work effect's calls; each call waits for a
// value on gate when gate is not nil, and reports its context's end.
type workHandler struct {
	mu          sync.Mutex
	calls       int
	started     chan struct{}
	gate        chan struct{}
	interrupted bool
}

func (h *workHandler) handler() runtime.Handler {
	return runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		h.mu.Lock()
		h.calls++
		h.mu.Unlock()
		if h.started != nil {
			h.started <- struct{}{}
		}
		if h.gate != nil {
			select {
			case <-h.gate:
			case <-ctx.Done():
				h.mu.Lock()
				h.interrupted = true
				h.mu.Unlock()
				return runtime.Outcome{}, ctx.Err()
			}
		}
		return runtime.Completed(map[string]any{"ok": true}), nil
	}}
}

func (h *workHandler) count() (int, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls, h.interrupted
}

func mustState(t *testing.T, rt *runtime.Runtime, id string) *durable.RunState {
	t.Helper()
	st, err := rt.GetState(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestCancelIfUnchangedCancelsARunStillAsRead(t *testing.T) {
	ctx := t.Context()
	child := &runtime.Workflow{ID: "child", Entry: "c", Nodes: map[string]runtime.NodeFunc{
		"c": wevNode(func(run *durable.RunState) runtime.StepPlan {
			return wevEffect(durable.EffectWaitEvent, map[string]any{"name": "never"}, "ev", "c")
		}),
	}}
	parent := &runtime.Workflow{ID: "parent", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": wevNode(func(run *durable.RunState) runtime.StepPlan {
			return wevEffect(durable.EffectStartSubworkflow, map[string]any{"workflow_id": "child", "async": true}, "sub", "w")
		}),
		"w": wevNode(func(run *durable.RunState) runtime.StepPlan {
			return wevEffect(durable.EffectWaitEvent, map[string]any{"name": "ping"}, "ev", "w")
		}),
	}}
	rt := wevRuntime(t, parent, child)
	p := wevStartTick(t, rt, runtime.StartParams{WorkflowID: "parent", SessionID: "s"})
	if p.Status != durable.RunWaiting {
		t.Fatalf("parent %s, want waiting", p.Status)
	}
	sub, _ := p.Vars["sub"].(map[string]any)
	childID, _ := sub["sub_run_id"].(string)
	if childID == "" {
		t.Fatalf("no child run id in vars.sub: %v", p.Vars["sub"])
	}
	if _, err := rt.Tick(ctx, childID, runtime.TickOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := rt.CancelWith(ctx, p.RunID, runtime.CancelOptions{Reason: "Session completed", IfUnchanged: p})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != durable.RunCancelled || got.Error != "Session completed" {
		t.Fatalf("parent %s (%q), want cancelled with the reason given", got.Status, got.Error)
	}
	if c := mustState(t, rt, childID); c.Status != durable.RunCancelled {
		t.Fatalf("child %s, want cancelled with its parent", c.Status)
	}
}

func TestCancelIfUnchangedLeavesARunAnEventResumed(t *testing.T) {
	ctx := t.Context()
	rt := wevRuntime(t, loopingListener())
	work := &workHandler{}
	rt.SetHandler("work", work.handler())
	read := wevStartTick(t, rt, runtime.StartParams{WorkflowID: "listen", SessionID: "s"})
	if _, err := rt.EmitEvent(ctx, runtime.EmitParams{Name: "ping", SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	now := mustState(t, rt, read.RunID)
	if now.Status != durable.RunWaiting || now.CurrentNode != "w" || now.Version == read.Version {
		t.Fatalf("listener after the event: %s at %s, version %d (read at %d); want waiting at w again, moved on",
			now.Status, now.CurrentNode, now.Version, read.Version)
	}

	_, err := rt.CancelWith(ctx, read.RunID, runtime.CancelOptions{Reason: "Session completed", IfUnchanged: read})
	if !errors.Is(err, runtime.ErrRunChanged) {
		t.Fatalf("conditional cancel of a run changed since read: %v, want ErrRunChanged", err)
	}
	if after := mustState(t, rt, read.RunID); after.Status != durable.RunWaiting || after.Version != now.Version {
		t.Fatalf("refused cancel changed the run: %s, version %d (was %d)", after.Status, after.Version, now.Version)
	}
	if calls, _ := work.count(); calls != 1 {
		t.Fatalf("work ran %d times, want once (the event's branch)", calls)
	}

	// Read again, the same call cancels it.
	got, err := rt.CancelWith(ctx, read.RunID, runtime.CancelOptions{IfUnchanged: now})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != durable.RunCancelled || got.Error != "Cancelled" {
		t.Fatalf("run %s (%q), want cancelled with the default reason", got.Status, got.Error)
	}
}

// A tick in progress (an event's branch running its effect) holds the
// run: the conditional cancel waits for it, then finds the run changed,
// and the effect is never interrupted (an unconditional Cancel would cut
// it).
func TestCancelIfUnchangedDoesNotInterruptATickInProgress(t *testing.T) {
	ctx := t.Context()
	rt := wevRuntime(t, loopingListener())
	work := &workHandler{started: make(chan struct{}, 1), gate: make(chan struct{})}
	rt.SetHandler("work", work.handler())
	read := wevStartTick(t, rt, runtime.StartParams{WorkflowID: "listen", SessionID: "s"})

	emitted := make(chan error, 1)
	go func() {
		_, err := rt.EmitEvent(ctx, runtime.EmitParams{Name: "ping", SessionID: "s"})
		emitted <- err
	}()
	<-work.started // the listener's branch runs its effect, inside the emit's drive
	cancelled := make(chan error, 1)
	go func() {
		_, err := rt.CancelWith(ctx, read.RunID, runtime.CancelOptions{IfUnchanged: read})
		cancelled <- err
	}()
	// Give the cancel time to reach the run's lock; the assertions below
	// hold whether or not it got there first.
	time.Sleep(50 * time.Millisecond)
	close(work.gate)
	if err := <-emitted; err != nil {
		t.Fatal(err)
	}
	if err := <-cancelled; !errors.Is(err, runtime.ErrRunChanged) {
		t.Fatalf("conditional cancel during the branch: %v, want ErrRunChanged", err)
	}
	if calls, interrupted := work.count(); calls != 1 || interrupted {
		t.Fatalf("work ran %d times, interrupted %v; want once, never interrupted", calls, interrupted)
	}
	if st := mustState(t, rt, read.RunID); st.Status != durable.RunWaiting || st.CurrentNode != "w" {
		t.Fatalf("listener %s at %s, want waiting at w after its branch", st.Status, st.CurrentNode)
	}
}

// changeBeforeCancel is a store that, at the first commit making a run
// cancelled, first lets another writer change it (hook), as another
// process might between the cancel's load and its commit.
type changeBeforeCancel struct {
	store.Wrapper
	once sync.Once
	hook func()
}

func (s *changeBeforeCancel) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if p.Run.Status == durable.RunCancelled {
		s.once.Do(s.hook)
	}
	return s.Wrapper.RunCommit(ctx, p)
}

func TestCancelIfUnchangedLosesToACommitMadeAfterItsLoad(t *testing.T) {
	ctx := t.Context()
	mem := memory.New()
	t.Cleanup(func() { _ = mem.Close() })
	other, otherWork := listenerRuntime(t, mem) // another process's runtime on the same store
	var hookErr error
	wrapped := &changeBeforeCancel{Wrapper: store.Wrapper{Store: mem}, hook: func() {
		_, hookErr = other.EmitEvent(ctx, runtime.EmitParams{Name: "ping", SessionID: "s"})
	}}
	rt, _ := listenerRuntime(t, wrapped)
	read := wevStartTick(t, rt, runtime.StartParams{WorkflowID: "listen", SessionID: "s"})

	_, err := rt.CancelWith(ctx, read.RunID, runtime.CancelOptions{IfUnchanged: read})
	if hookErr != nil {
		t.Fatal(hookErr)
	}
	if !errors.Is(err, runtime.ErrRunChanged) {
		t.Fatalf("conditional cancel whose commit conflicts: %v, want ErrRunChanged", err)
	}
	if calls, _ := otherWork.count(); calls != 1 {
		t.Fatalf("the other writer's branch ran %d times, want once", calls)
	}
	st := mustState(t, rt, read.RunID)
	if st.Status != durable.RunWaiting || st.CurrentNode != "w" {
		t.Fatalf("listener %s at %s; the other writer's change should stand", st.Status, st.CurrentNode)
	}
}

// listenerRuntime is a runtime on st serving loopingListener, its "work"
// effects counted by the handler returned.
func listenerRuntime(t *testing.T, st store.Store) (*runtime.Runtime, *workHandler) {
	t.Helper()
	rt := servingRuntime(t, st, "", loopingListener())
	work := &workHandler{}
	rt.SetHandler("work", work.handler())
	return rt, work
}

// A conditional cancel whose commit loses to another process's cancel of
// the run (made between the load and the commit) is ErrRunChanged: the
// other write wins and is not taken for this call's commit. Would break if
// cancelRootAt read any cancelled run after its commit as its own.
func TestCancelIfUnchangedLosesToAnotherCancelMadeAfterItsLoad(t *testing.T) {
	ctx := t.Context()
	mem := memory.New()
	t.Cleanup(func() { _ = mem.Close() })
	other, _ := listenerRuntime(t, mem) // another process's runtime on the same store
	var read *durable.RunState
	var hookErr error
	wrapped := &changeBeforeCancel{Wrapper: store.Wrapper{Store: mem}, hook: func() {
		_, hookErr = other.Cancel(ctx, read.RunID, "the other cancel")
	}}
	rt, _ := listenerRuntime(t, wrapped)
	read = wevStartTick(t, rt, runtime.StartParams{WorkflowID: "listen", SessionID: "s"})
	_, err := rt.CancelWith(ctx, read.RunID, runtime.CancelOptions{Reason: "mine", IfUnchanged: read})
	if hookErr != nil {
		t.Fatal(hookErr)
	}
	if !errors.Is(err, runtime.ErrRunChanged) {
		t.Fatalf("conditional cancel that lost to another cancel: %v, want ErrRunChanged", err)
	}
	if st := mustState(t, rt, read.RunID); st.Status != durable.RunCancelled || st.Error != "the other cancel" {
		t.Fatalf("run %s error %q; want the other cancel's", st.Status, st.Error)
	}
}

// An unconditional cancel of a run with a version it ended at is Cancel:
// an ended root's unfinished descendants are cancelled.
func TestCancelIfUnchangedOfAnEndedRunStillAsRead(t *testing.T) {
	ctx := t.Context()
	wf := &runtime.Workflow{ID: "done", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": wevNode(func(run *durable.RunState) runtime.StepPlan { return runtime.Complete(map[string]any{"ok": true}) }),
	}}
	rt := wevRuntime(t, wf)
	st := wevStartTick(t, rt, runtime.StartParams{WorkflowID: "done"})
	got, err := rt.CancelWith(ctx, st.RunID, runtime.CancelOptions{IfUnchanged: st})
	if err != nil || got.Status != durable.RunCompleted {
		t.Fatalf("conditional cancel of a completed run: %v, %v; want it left completed", got.Status, err)
	}
	stale := *st
	stale.Version--
	if _, err := rt.CancelWith(ctx, st.RunID, runtime.CancelOptions{IfUnchanged: &stale}); !errors.Is(err, runtime.ErrRunChanged) {
		t.Fatalf("conditional cancel of a run that ended since read: %v, want ErrRunChanged", err)
	}
}

// With claims, a run another runner is working on is not taken from it
// (an unconditional Cancel forces the claim, and that runner's effect is
// cut at its next renewal): the conditional cancel waits, then finds the
// run changed or still held, and the other runner's effect completes.
func TestCancelIfUnchangedLeavesARunAnotherRunnerWorksOn(t *testing.T) {
	ctx := t.Context()
	mem := memory.New()
	t.Cleanup(func() { _ = mem.Close() })
	newRT := func(owner string) (*runtime.Runtime, *workHandler) {
		reg, err := runtime.NewRegistry(loopingListener())
		if err != nil {
			t.Fatal(err)
		}
		rt, err := runtime.New(runtime.Config{Store: mem, Registry: reg,
			Claims: &runtime.Claims{Owner: owner, TTL: 3 * time.Second, RenewEvery: 10 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		work := &workHandler{started: make(chan struct{}, 1), gate: make(chan struct{})}
		rt.SetHandler("work", work.handler())
		return rt, work
	}
	a, _ := newRT("a")
	b, bWork := newRT("b")
	read := wevStartTick(t, a, runtime.StartParams{WorkflowID: "listen", SessionID: "s"})

	emitted := make(chan error, 1)
	go func() {
		_, err := b.EmitEvent(ctx, runtime.EmitParams{Name: "ping", SessionID: "s"})
		emitted <- err
	}()
	<-bWork.started // runner b works on the listener's branch, holding its claim
	cancelled := make(chan error, 1)
	go func() {
		_, err := a.CancelWith(ctx, read.RunID, runtime.CancelOptions{IfUnchanged: read})
		cancelled <- err
	}()
	// Long enough for b's renewals to find a claim taken from it.
	time.Sleep(200 * time.Millisecond)
	close(bWork.gate)
	if err := <-emitted; err != nil {
		t.Fatal(err)
	}
	if err := <-cancelled; !errors.Is(err, runtime.ErrRunChanged) && !errors.Is(err, runtime.ErrRunClaimed) {
		t.Fatalf("conditional cancel of a run another runner works on: %v, want ErrRunChanged or ErrRunClaimed", err)
	}
	if calls, interrupted := bWork.count(); calls != 1 || interrupted {
		t.Fatalf("b's work ran %d times, interrupted %v; want once, never interrupted", calls, interrupted)
	}
	if st := mustState(t, a, read.RunID); st.Status != durable.RunWaiting || st.CurrentNode != "w" {
		t.Fatalf("listener %s at %s, want waiting at w after b's branch", st.Status, st.CurrentNode)
	}
}

// Another writer ends the run between the cancel's load and its commit
// (here: an event completes it, after starting a child): that write wins,
// the call says the run changed, and the other writer's child is not
// cancelled.
func TestCancelIfUnchangedLosesToAnEndMadeAfterItsLoad(t *testing.T) {
	ctx := t.Context()
	child := &runtime.Workflow{ID: "child", Entry: "c", Nodes: map[string]runtime.NodeFunc{
		"c": wevNode(func(run *durable.RunState) runtime.StepPlan {
			return wevEffect(durable.EffectWaitEvent, map[string]any{"name": "never"}, "ev", "c")
		}),
	}}
	root := &runtime.Workflow{ID: "root", Entry: "w", Nodes: map[string]runtime.NodeFunc{
		"w": wevNode(func(run *durable.RunState) runtime.StepPlan {
			return wevEffect(durable.EffectWaitEvent, map[string]any{"name": "ping"}, "ev", "spawn")
		}),
		"spawn": wevNode(func(run *durable.RunState) runtime.StepPlan {
			return wevEffect(durable.EffectStartSubworkflow, map[string]any{"workflow_id": "child", "async": true}, "sub", "done")
		}),
		"done": wevNode(func(run *durable.RunState) runtime.StepPlan { return runtime.Complete(map[string]any{"ok": true}) }),
	}}
	mem := memory.New()
	t.Cleanup(func() { _ = mem.Close() })
	newRT := func(st store.Store) *runtime.Runtime {
		reg, err := runtime.NewRegistry(root, child)
		if err != nil {
			t.Fatal(err)
		}
		rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	other := newRT(mem)
	var hookErr error
	rt := newRT(&changeBeforeCancel{Wrapper: store.Wrapper{Store: mem}, hook: func() {
		_, hookErr = other.EmitEvent(ctx, runtime.EmitParams{Name: "ping", SessionID: "s"})
	}})
	read := wevStartTick(t, rt, runtime.StartParams{WorkflowID: "root", SessionID: "s"})
	_, err := rt.CancelWith(ctx, read.RunID, runtime.CancelOptions{IfUnchanged: read})
	if hookErr != nil {
		t.Fatal(hookErr)
	}
	if !errors.Is(err, runtime.ErrRunChanged) {
		t.Errorf("conditional cancel of a run another writer completed meanwhile: %v, want ErrRunChanged", err)
	}
	now := mustState(t, rt, read.RunID)
	sub, _ := now.Vars["sub"].(map[string]any)
	childID, _ := sub["sub_run_id"].(string)
	if now.Status != durable.RunCompleted || childID == "" {
		t.Fatalf("root %s (child %q), want completed by the other writer after starting a child", now.Status, childID)
	}
	if c := mustState(t, rt, childID); c.Status == durable.RunCancelled {
		t.Errorf("the other writer's child was cancelled")
	}
}

// A run a runner that died left claimed, waiting unchanged since read, is
// taken over and cancelled: the takeover's own fence is not a change.
func TestCancelIfUnchangedTakesOverARunADeadRunnerLeftClaimed(t *testing.T) {
	ctx := t.Context()
	mem := memory.New()
	t.Cleanup(func() { _ = mem.Close() })
	reg, err := runtime.NewRegistry(loopingListener())
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: mem, Registry: reg,
		Claims: &runtime.Claims{Owner: "a", TTL: time.Hour, RenewEvery: 10 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	read := wevStartTick(t, rt, runtime.StartParams{WorkflowID: "listen", SessionID: "s"})
	// Runner "dead" committed the wait and died before releasing its claim.
	if err := mem.RunClaim(ctx, &store.RunClaimParams{RunID: read.RunID, Owner: "dead", TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	got, err := rt.CancelWith(ctx, read.RunID, runtime.CancelOptions{Reason: "Session completed", IfUnchanged: read})
	if err != nil {
		t.Fatalf("conditional cancel of a run a dead runner left claimed: %v", err)
	}
	if got.Status != durable.RunCancelled {
		t.Fatalf("run %s, want cancelled", got.Status)
	}
	// Read stale now, the same call is refused.
	if _, err := rt.CancelWith(ctx, read.RunID, runtime.CancelOptions{IfUnchanged: read}); !errors.Is(err, runtime.ErrRunChanged) {
		t.Fatalf("conditional cancel of a run cancelled since read: %v, want ErrRunChanged", err)
	}
}
