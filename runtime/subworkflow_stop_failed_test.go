package runtime

// A Pause or Cancel aimed at a sync child while its parent's tick drives
// it stops the child's tick at its next step boundary, then commits the
// child's pause wait or its end. The parent reads what that call left in
// the store (Python's sync tick sees only a persisted pause or cancel,
// spec §2.3 4.1, §2.7, §2.8): a call whose commit fails changes nothing,
// and the child goes on under its parent.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// stopFailStore fails, with a plain store error, the commits that pause
// run target or end it cancelled, once target is set and fail is on.
type stopFailStore struct {
	store.Store
	mu     sync.Mutex
	target string
	fail   bool
}

func (s *stopFailStore) aim(runID string) {
	s.mu.Lock()
	s.target = runID
	s.mu.Unlock()
}

func (s *stopFailStore) RunCommit(ctx context.Context, p *store.CommitParams) error {
	s.mu.Lock()
	refuse := s.fail && s.target != "" && p.Run != nil && p.Run.RunID == s.target &&
		(IsPaused(p.Run) || p.Run.Status == durable.RunCancelled)
	s.mu.Unlock()
	if refuse {
		return errors.New("disk I/O error")
	}
	return s.Store.RunCommit(ctx, p)
}

// stopFailTree is a runtime whose workflow "top" runs "leaf" as a sync
// child; leaf runs leafEntry, then "mid" and "done".
func stopFailTree(t *testing.T, st store.Store, cfg Config, leafEntry NodeFunc) *Runtime {
	t.Helper()
	leaf := &Workflow{ID: "leaf", Entry: "first", Nodes: map[string]NodeFunc{
		"first": leafEntry,
		"mid":   errNode(func(run *durable.RunState) StepPlan { return Next("done") }),
		"done":  errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"ok": true}) }),
	}}
	top := &Workflow{ID: "top", Entry: "spawn", Nodes: map[string]NodeFunc{
		"spawn": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "leaf"}, ResultKey: "child"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"child": run.Vars["child"]}) }),
	}}
	return errRuntime(t, st, cfg, top, leaf)
}

// awaitStopRequest waits (at most 5 s) until a Pause or Cancel of runID
// has made its stop request.
func awaitStopRequest(t *testing.T, rt *Runtime, runID string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		l := rt.ref(runID)
		l.sigMu.Lock()
		n := l.pauseRequests
		l.sigMu.Unlock()
		rt.unref(runID, l)
		if n > 0 {
			return
		}
	}
	t.Fatalf("no stop request reached run %s", runID)
}

// onlyChild returns the id of parentID's one child.
func onlyChild(t *testing.T, rt *Runtime, parentID string) string {
	t.Helper()
	kids, err := rt.store.RunListChildren(context.Background(), parentID, "")
	if err != nil || len(kids) != 1 {
		t.Fatalf("children of %s: %v %v", parentID, kids, err)
	}
	return kids[0].RunID
}

// stopSyncChildMidTick starts "top" and ticks it in the background; once
// its sync child has entered its first node or handler (entered), it aims
// st at the child and calls stop on it (a Pause or Cancel), lets the child
// go on (release) once the stop request stands, and returns when both the
// parent's tick and stop have returned, with stop's error.
func stopSyncChildMidTick(t *testing.T, rt *Runtime, st *stopFailStore, entered <-chan struct{}, release chan struct{},
	stop func(child string) error) (topID, child string, stopErr error) {
	t.Helper()
	ctx := context.Background()
	topID, err := rt.Start(ctx, StartParams{WorkflowID: "top"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _, _ = rt.Tick(ctx, topID, TickOptions{}); close(done) }()
	<-entered
	child = onlyChild(t, rt, topID)
	st.aim(child)
	errc := make(chan error, 1)
	go func() { errc <- stop(child) }()
	awaitStopRequest(t, rt, child)
	close(release)
	<-done
	return topID, child, <-errc
}

// retryFollowUps runs the scheduler's loop (RetryFollowUps at each poll)
// well past any back-off.
func retryFollowUps(rt *Runtime, clk *busyClock) {
	for i := 0; i < 20; i++ {
		clk.Advance(time.Minute)
		rt.RetryFollowUps(context.Background())
	}
}

// A Pause of the sync child arrives while the child's effect runs; its
// request stops the child's tick at the next step boundary. Committed, the
// parent waits on the paused child and completes once it is resumed. Not
// committed (a store error here; a caller giving up on the lock does the
// same), the pause changes nothing: the parent's tick goes on driving the
// child, and both complete, where the parent used to wait for good on a
// child left running with nothing to drive it.
func TestPauseOfSyncChildStoppedMidTick(t *testing.T) {
	for _, fail := range []bool{false, true} {
		name := map[bool]string{false: "committed", true: "commit_fails"}[fail]
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			entered, release := make(chan struct{}, 4), make(chan struct{})
			llm := Handler{Func: func(ctx context.Context, req *EffectRequest) (Outcome, error) {
				entered <- struct{}{}
				select {
				case <-release:
					return Completed(map[string]any{"text": "ok"}), nil
				case <-ctx.Done():
					return Failed("interrupted"), nil
				}
			}}
			first := errNode(func(run *durable.RunState) StepPlan {
				return Request(&durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": "x"}, ResultKey: "r"}, "mid")
			})
			st := &stopFailStore{Store: memory.New(), fail: fail}
			clk := newBusyClock()
			rt := stopFailTree(t, st, Config{Handlers: map[durable.EffectType]Handler{durable.EffectLLMCall: llm}, Clock: clk.Now}, first)

			topID, child, err := stopSyncChildMidTick(t, rt, st, entered, release, func(id string) error {
				_, err := rt.Pause(ctx, id, "hold")
				return err
			})
			if (err != nil) != fail {
				t.Fatalf("Pause: %v (commit failing: %v)", err, fail)
			}

			if !fail {
				ts, _ := rt.GetState(ctx, topID)
				cs, _ := rt.GetState(ctx, child)
				if !IsPaused(cs) || WaitedChild(ts) != child {
					t.Fatalf("after the pause: child %s (paused %v), parent %s waiting on %q; want the parent waiting on the paused child",
						cs.Status, IsPaused(cs), ts.Status, WaitedChild(ts))
				}
				if _, err := rt.ResumeRun(ctx, child); err != nil {
					t.Fatal(err)
				}
			}
			retryFollowUps(rt, clk)
			ts, _ := rt.GetState(ctx, topID)
			cs, _ := rt.GetState(ctx, child)
			if IsPaused(cs) || cs.Status != durable.RunCompleted || ts.Status != durable.RunCompleted {
				t.Fatalf("child %s (paused %v) at %q, parent %s (waiting %+v); want both completed",
					cs.Status, IsPaused(cs), cs.CurrentNode, ts.Status, ts.Waiting)
			}
		})
	}
}

// A Cancel aimed at the sync child alone arrives while the child runs a
// node; its request stops the child's tick at the next step boundary.
// Committed, the parent fails with Python's "Unexpected subworkflow
// status: cancelled". Not committed, the child was never cancelled: the
// parent's tick goes on driving it and both complete, where the parent
// used to fail at once, the child left running and undriven.
func TestCancelOfSyncChildStoppedMidTick(t *testing.T) {
	for _, fail := range []bool{false, true} {
		name := map[bool]string{false: "committed", true: "commit_fails"}[fail]
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			entered, release := make(chan struct{}, 4), make(chan struct{})
			first := errNode(func(run *durable.RunState) StepPlan {
				entered <- struct{}{}
				<-release
				return Next("mid")
			})
			st := &stopFailStore{Store: memory.New(), fail: fail}
			clk := newBusyClock()
			rt := stopFailTree(t, st, Config{Clock: clk.Now}, first)

			topID, child, err := stopSyncChildMidTick(t, rt, st, entered, release, func(id string) error {
				_, err := rt.Cancel(ctx, id, "stop child")
				return err
			})
			if (err != nil) != fail {
				t.Fatalf("Cancel: %v (commit failing: %v)", err, fail)
			}
			retryFollowUps(rt, clk)

			ts, _ := rt.GetState(ctx, topID)
			cs, _ := rt.GetState(ctx, child)
			if !fail {
				if cs.Status != durable.RunCancelled || ts.Status != durable.RunFailed ||
					!strings.Contains(ts.Error, "Unexpected subworkflow status: cancelled") {
					t.Fatalf("after the cancel: child %s, parent %s (error %q); want the child cancelled, the parent failed",
						cs.Status, ts.Status, ts.Error)
				}
				return
			}
			if cs.Status != durable.RunCompleted || ts.Status != durable.RunCompleted {
				t.Fatalf("after a failed cancel: child %s at %q, parent %s (error %q); want both completed",
					cs.Status, cs.CurrentNode, ts.Status, ts.Error)
			}
		})
	}
}

// A sync child cancelled while its effect runs returns from its tick
// still "running" (the cancel commits after): the parent failed with
// "Unexpected subworkflow status: running" although the child was
// cancelled (Python, whose inline tick returns the persisted cancelled
// child, says "cancelled").
func TestSyncChildCancelledMidEffectIsNotReportedRunning(t *testing.T) {
	ctx := context.Background()
	started := make(chan string, 1)
	child := &Workflow{ID: "child", Entry: "a", Nodes: map[string]NodeFunc{
		"a": errNode(func(run *durable.RunState) StepPlan { return Request(&durable.Effect{Type: "slow"}, "b") }),
		"b": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"ok": true}) }),
	}}
	rt := errRuntime(t, memory.New(), Config{}, syncParentOf(), child)
	rt.SetHandler("slow", Handler{Func: func(ctx context.Context, req *EffectRequest) (Outcome, error) {
		started <- req.Run.RunID
		<-ctx.Done()
		return Outcome{}, ctx.Err()
	}})
	pid, _ := rt.Start(ctx, StartParams{WorkflowID: "parent"})
	done := make(chan error, 1)
	go func() { _, err := rt.Tick(ctx, pid, TickOptions{}); done <- err }()
	cid := <-started
	if cs, err := rt.Cancel(ctx, cid, "stop child"); err != nil || cs.Status != durable.RunCancelled {
		t.Fatalf("cancel child: %v %v", cs, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ps, _ := rt.GetState(ctx, pid)
	if strings.Contains(ps.Error, "status: running") {
		t.Fatalf("parent %s with %q, but its child %s is cancelled (not running)", ps.Status, ps.Error, cid)
	}
}

// A host pausing a sync child while its step ran stopped the child's tick
// and the parent's, which was left "running" at its START_SUBWORKFLOW
// node (not waiting on the child, as Python's parent would be). When the
// host then lifted the pause and the child completed, resumeParent found
// the parent not waiting and did nothing: nothing in a live process drove
// it again. The parent now waits on a paused child as on a waiting one.
func TestPausedSyncChildEndResumesItsParent(t *testing.T) {
	ctx := context.Background()
	var rt *Runtime
	paused := make(chan error, 1)
	child := selfPausingChild(&rt, paused)
	parent := &Workflow{ID: "parent", Entry: "ask", Nodes: map[string]NodeFunc{
		"ask": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "go?"}, ResultKey: "a"}, "spawn")
		}),
		"spawn": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "child"}, ResultKey: "child"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"child": run.Vars["child"]}) }),
	}}
	rt = errRuntime(t, memory.New(), Config{}, parent, child)
	pid, _ := rt.Start(ctx, StartParams{WorkflowID: "parent"})
	ps, err := rt.Tick(ctx, pid, TickOptions{})
	if err != nil || ps.Status != durable.RunWaiting {
		t.Fatalf("parent: %v %v", ps, err)
	}
	// The host answers; the parent goes on into its sync child, which
	// another host pauses mid-step.
	if _, err := rt.Resume(ctx, ResumeParams{RunID: pid, WaitKey: ps.Waiting.WaitKey, Payload: map[string]any{"text": "yes"}}); err != nil {
		t.Fatal(err)
	}
	if err := <-paused; err != nil {
		t.Fatal(err)
	}
	kids, err := rt.store.RunListChildren(ctx, pid, "")
	if err != nil || len(kids) != 1 {
		t.Fatalf("children %v %v", kids, err)
	}
	cs, err := rt.ResumeRun(ctx, kids[0].RunID)
	if err != nil || cs.Status != durable.RunCompleted {
		t.Fatalf("child after ResumeRun: %v %v", cs, err)
	}
	ps, _ = rt.GetState(ctx, pid)
	if ps.Status != durable.RunCompleted {
		t.Fatalf("parent is %s at node %q although its sync child %s has completed; want it resumed with the child's end",
			ps.Status, ps.CurrentNode, cs.RunID)
	}
}
