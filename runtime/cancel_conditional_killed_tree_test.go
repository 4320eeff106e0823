package runtime

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// killAfterCancelOf dies right after the commit that cancels run target
// is durable: that call and every later one fail.
type killAfterCancelOf struct {
	store.Wrapper
	target string
	mu     sync.Mutex
	dead   bool
}

func (s *killAfterCancelOf) isDead() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.dead }

func (s *killAfterCancelOf) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if s.isDead() {
		return errKilled
	}
	err := s.Store.RunCommit(ctx, p)
	if err == nil && p.Run.RunID == s.target && p.Run.Status == durable.RunCancelled {
		s.mu.Lock()
		s.dead = true
		s.mu.Unlock()
		return errKilled
	}
	return err
}

func (s *killAfterCancelOf) RunGet(ctx context.Context, id string) (*durable.RunState, error) {
	if s.isDead() {
		return nil, errKilled
	}
	return s.Store.RunGet(ctx, id)
}

func (s *killAfterCancelOf) LedgerList(ctx context.Context, p *store.LedgerListParams) ([]*durable.StepRecord, error) {
	if s.isDead() {
		return nil, errKilled
	}
	return s.Store.LedgerList(ctx, p)
}

func (s *killAfterCancelOf) RunListChildren(ctx context.Context, id string, st durable.RunStatus) ([]*durable.RunState, error) {
	if s.isDead() {
		return nil, errKilled
	}
	return s.Store.RunListChildren(ctx, id, st)
}

// root → mid → leaf, each parked on its child (async+wait); leaf asks a
// person, then "ships", then completes.
func threeLevelSync() []*Workflow {
	spawn := func(id, child string) *Workflow {
		return &Workflow{ID: id, Entry: "spawn", Nodes: map[string]NodeFunc{
			"spawn": errNode(func(run *durable.RunState) StepPlan {
				return Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
					Payload: map[string]any{"workflow_id": child, "async": true, "wait": true}, ResultKey: "sub"}, "done")
			}),
			"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"sub": run.Vars["sub"]}) }),
		}}
	}
	return []*Workflow{spawn("root", "mid"), spawn("mid", "leaf"), {ID: "leaf", Entry: "ask", Nodes: map[string]NodeFunc{
		"ask": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}, ResultKey: "a"}, "ship")
		}),
		"ship": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: "ship", Payload: map[string]any{}, ResultKey: "s"}, "end")
		}),
		"end": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"ok": true}) }),
	}}}
}

// A conditional cancel (CancelWith IfUnchanged) decides the root first:
// the process dies right after the root's cancelled commit, before any
// descendant is cancelled. CancelOptions documents that such live runs
// "cancel themselves when next ticked, resumed or sent an event". The
// grandchild (leaf) is then answered: its resume walks up its ancestors
// (endUnderCancelledParent) and finds the cancelled root, so leaf is
// cancelled and never runs its "ship" effect. (It checked only its own
// parent, which is live, and leaf went on.)
func TestConditionalCancelKilledAfterTheRootStopsTheGrandchild(t *testing.T) {
	ctx := context.Background()
	base := memory.New()
	var shipped atomic.Int32
	cfg := Config{Handlers: map[durable.EffectType]Handler{"ship": {Func: func(ctx context.Context, req *EffectRequest) (Outcome, error) {
		shipped.Add(1)
		return Completed(map[string]any{"shipped": true}), nil
	}}}}
	wfs := threeLevelSync()
	view := &killAfterCancelOf{Wrapper: store.Wrapper{Store: base}, target: "root"}
	rtA := errRuntime(t, view, cfg, wfs...)
	if _, err := rtA.Start(ctx, StartParams{WorkflowID: "root", RunID: "root"}); err != nil {
		t.Fatal(err)
	}
	root, err := rtA.Tick(ctx, "root", TickOptions{})
	if err != nil || root.Status != durable.RunWaiting {
		t.Fatalf("root: %v, %v; want waiting on mid", root, err)
	}
	mids, _ := base.RunListChildren(ctx, "root", "")
	if len(mids) != 1 || mids[0].Status != durable.RunWaiting {
		t.Fatalf("mid: %v", mids)
	}
	leaves, _ := base.RunListChildren(ctx, mids[0].RunID, "")
	if len(leaves) != 1 || leaves[0].Status != durable.RunWaiting || leaves[0].Waiting.Reason != durable.WaitUser {
		t.Fatalf("leaf: %v", leaves)
	}
	leaf := leaves[0]
	if _, err := rtA.CancelWith(ctx, "root", CancelOptions{Reason: "stop", IfUnchanged: root}); err == nil {
		t.Fatal("the kill never happened")
	}
	if got, _ := base.RunGet(ctx, "root"); got.Status != durable.RunCancelled {
		t.Fatalf("root %s; want cancelled before the kill", got.Status)
	}

	rtB := errRuntime(t, base, cfg, wfs...)
	st, err := rtB.Resume(ctx, ResumeParams{RunID: leaf.RunID, WaitKey: leaf.Waiting.WaitKey, Payload: map[string]any{"text": "go"}})
	var stale *StaleResumeError
	gotLeaf, _ := base.RunGet(ctx, leaf.RunID)
	gotMid, _ := base.RunGet(ctx, mids[0].RunID)
	if !errors.As(err, &stale) || gotLeaf.Status != durable.RunCancelled || shipped.Load() != 0 {
		t.Fatalf("resume of the grandchild under the cancelled root: err %v, state %v; leaf %s, mid %s, shipped %d time(s); "+
			"want leaf cancelled (StaleResumeError) and nothing shipped", err, st != nil, gotLeaf.Status, gotMid.Status, shipped.Load())
	}
}
