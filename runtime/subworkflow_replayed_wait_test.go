package runtime

import (
	"context"
	"sync"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
)

// killBetweenAtWait is a non-atomic store's view that "dies" inside the
// commit that makes run `target` waiting: the records of that commit are
// appended (as the JSON-file store writes them first), the run file is not
// written, and every later call fails.
type killBetweenAtWait struct {
	store.Wrapper
	target string
	mu     sync.Mutex
	dead   bool
}

func (s *killBetweenAtWait) isDead() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.dead }

func (s *killBetweenAtWait) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if s.isDead() {
		return errKilled
	}
	if p.Run.RunID == s.target && p.Run.Status == durable.RunWaiting {
		_ = s.Store.LedgerAppend(ctx, p.Run.RunID, p.Records)
		s.mu.Lock()
		s.dead = true
		s.mu.Unlock()
		return errKilled
	}
	return s.Store.RunCommit(ctx, p)
}

func (s *killBetweenAtWait) RunGet(ctx context.Context, id string) (*durable.RunState, error) {
	if s.isDead() {
		return nil, errKilled
	}
	return s.Store.RunGet(ctx, id)
}

func (s *killBetweenAtWait) LedgerList(ctx context.Context, p *store.LedgerListParams) ([]*durable.StepRecord, error) {
	if s.isDead() {
		return nil, errKilled
	}
	return s.Store.LedgerList(ctx, p)
}

func (s *killBetweenAtWait) LedgerAppend(ctx context.Context, id string, recs []*durable.StepRecord) error {
	if s.isDead() {
		return errKilled
	}
	return s.Store.LedgerAppend(ctx, id, recs)
}

// parentAndLeaf: "top" starts "leaf" (sync, or async+wait) and completes
// with what it got; "leaf" asks a person (sync) or completes at once
// (async) with {"answer": ...}.
func parentAndLeaf(async bool) []*Workflow {
	payload := map[string]any{"workflow_id": "leaf"}
	if async {
		payload = map[string]any{"workflow_id": "leaf", "async": true, "wait": true}
	}
	leafEntry := errNode(func(run *durable.RunState) StepPlan {
		return Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}, ResultKey: "a"}, "end")
	})
	if async {
		leafEntry = errNode(func(run *durable.RunState) StepPlan {
			run.Vars["a"] = map[string]any{"text": "auto"}
			return Next("end")
		})
	}
	return []*Workflow{
		{ID: "top", Entry: "spawn", Nodes: map[string]NodeFunc{
			"spawn": errNode(func(run *durable.RunState) StepPlan {
				return Request(&durable.Effect{Type: durable.EffectStartSubworkflow, Payload: payload, ResultKey: "sub"}, "done")
			}),
			"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"sub": run.Vars["sub"]}) }),
		}},
		{ID: "leaf", Entry: "ask", Nodes: map[string]NodeFunc{
			"ask": leafEntry,
			"end": errNode(func(run *durable.RunState) StepPlan {
				a, _ := run.Vars["a"].(map[string]any)
				return Complete(map[string]any{"answer": a["text"]})
			}),
		}},
	}
}

// JSON-file store (records first, then the run file). "top" calls "leaf"
// sync; leaf asks a person, so top's START_SUBWORKFLOW ends WAITING. The
// process dies inside top's waiting commit: the WAITING end record is
// durable, top's run file still shows it running at "spawn" with the plan
// in flight. After the restart the person answers leaf first (leaf
// completes; top is not waiting yet, so nobody resumes it), then top is
// ticked. Its replay reused the durable wait (durableWait) and committed
// top waiting on a child that had already ended, with nothing left to
// resume it: in the live path the handler queues a followParentResume for
// exactly this race. START_SUBWORKFLOW is now never answered from a
// durable wait: the handler runs again and finds its child.
func TestReplayedSyncChildWaitLearnsTheChildEnded(t *testing.T) {
	ctx := context.Background()
	js, wfs := killTopInItsWaitCommit(t, false)
	kids, err := js.RunListChildren(ctx, "top", "")
	if err != nil || len(kids) != 1 || kids[0].Status != durable.RunWaiting {
		t.Fatalf("children %v, %v; want one leaf waiting on its person", kids, err)
	}
	leaf := kids[0]
	if got, _ := js.RunGet(ctx, "top"); got.Status != durable.RunRunning {
		t.Fatalf("top %s before restart; want running (its run file was not written)", got.Status)
	}

	rtB := errRuntime(t, js, Config{}, wfs...)
	st, err := rtB.Resume(ctx, ResumeParams{RunID: leaf.RunID, WaitKey: leaf.Waiting.WaitKey, Payload: map[string]any{"text": "yes"}})
	if err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("leaf after its answer: %v, %v; want completed", st, err)
	}
	if _, err := rtB.Tick(ctx, "top", TickOptions{}); err != nil {
		t.Fatal(err)
	}
	rtB.RetryFollowUps(ctx) // whatever was kept (nothing due yet, in fact)
	top, _ := js.RunGet(ctx, "top")
	if recs, _ := js.LedgerList(ctx, &store.LedgerListParams{RunID: "top"}); true {
		for _, r := range recs {
			t.Logf("top ledger: %s attempt %d %v", r.Status, r.Attempt, r.Effect != nil && r.Effect.Type == durable.EffectStartSubworkflow)
		}
	}
	if top.Status != durable.RunCompleted {
		w := ""
		if top.Waiting != nil {
			w = top.Waiting.WaitKey
		}
		t.Fatalf("top is %s (wait %q) with its child %s completed; want top resumed with the child's output and completed (pending follow-ups: %d)",
			top.Status, w, leaf.RunID, rtB.PendingFollowUps())
	}
}

// Same kill, async+wait: leaf was created (committed) but its tick, a
// follow-up of top's session, never ran. After the restart top is ticked:
// the replay must drive leaf (Tick drives "runs started by this run's
// steps"), which a reused durable wait never did (the handler's
// enqueueTick was skipped).
func TestReplayedAsyncWaitDrivesItsChild(t *testing.T) {
	ctx := context.Background()
	js, wfs := killTopInItsWaitCommit(t, true)
	kids, err := js.RunListChildren(ctx, "top", "")
	if err != nil || len(kids) != 1 || kids[0].Status != durable.RunRunning {
		t.Fatalf("children %v, %v; want one leaf, created, not yet ticked", kids, err)
	}
	rtB := errRuntime(t, js, Config{}, wfs...)
	top, err := rtB.Tick(ctx, "top", TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	child, _ := js.RunGet(ctx, kids[0].RunID)
	if top.Status != durable.RunCompleted {
		t.Fatalf("after Tick(top): top %s, child %s at %q; want the child driven and top resumed, completed",
			top.Status, child.Status, child.CurrentNode)
	}
}

// killTopInItsWaitCommit starts "top" (parentAndLeaf(async)) on a
// JSON-file store in a fresh directory and ticks it until the process
// dies inside the commit that makes top waiting: the records are durable,
// top's run file is not. It returns the store, as a restart finds it, and
// the workflows.
func killTopInItsWaitCommit(t *testing.T, async bool) (*jsonfile.Store, []*Workflow) {
	t.Helper()
	ctx := context.Background()
	js, err := jsonfile.New(jsonfile.Config{Dir: t.TempDir(), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { js.Close() })
	wfs := parentAndLeaf(async)
	view := &killBetweenAtWait{Wrapper: store.Wrapper{Store: js}, target: "top"}
	rt := errRuntime(t, view, Config{}, wfs...)
	if _, err := rt.Start(ctx, StartParams{WorkflowID: "top", RunID: "top"}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(ctx, "top", TickOptions{}); err == nil {
		t.Fatal("the kill never happened")
	}
	return js, wfs
}
