package crashtest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
)

// killedAfter is a runner's view of a shared store that "kills the
// process" right after the first commit matching when is durable: that
// call and every later one (claims included) fail with ErrKilled.
type killedAfter struct {
	store.Wrapper
	when func(p *store.CommitParams) bool
	mu   sync.Mutex
	dead bool
}

func (s *killedAfter) isDead() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.dead }

func (s *killedAfter) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if s.isDead() {
		return ErrKilled
	}
	kill := s.when(p)
	err := s.Store.RunCommit(ctx, p)
	if kill && err == nil {
		s.mu.Lock()
		s.dead = true
		s.mu.Unlock()
		return ErrKilled
	}
	return err
}

func (s *killedAfter) RunGet(ctx context.Context, id string) (*durable.RunState, error) {
	if s.isDead() {
		return nil, ErrKilled
	}
	return s.Store.RunGet(ctx, id)
}

func (s *killedAfter) RunClaim(ctx context.Context, p *store.RunClaimParams) error {
	if s.isDead() {
		return ErrKilled
	}
	return s.Wrapper.RunClaim(ctx, p)
}

func (s *killedAfter) RunRelease(ctx context.Context, runID, owner string) error {
	if s.isDead() {
		return ErrKilled
	}
	return s.Wrapper.RunRelease(ctx, runID, owner)
}

// cancelTreeWorkflows: a root parked on its async+wait child ct_mid
// (which, with nested, is parked the same way on ct_leaf, else asks a
// person itself); once its child ends the root "ships".
func cancelTreeWorkflows(nested bool) []*runtime.Workflow {
	spawn := func(wf, next string) runtime.NodeFunc {
		return cfNode(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": wf, "async": true, "wait": true}, ResultKey: "sub"}, next)
		})
	}
	ask := cfNode(func(run *durable.RunState) runtime.StepPlan {
		return runtime.Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}}, "")
	})
	mid := &runtime.Workflow{ID: "ct_mid", Entry: "ask", Nodes: map[string]runtime.NodeFunc{"ask": ask}}
	if nested {
		mid = &runtime.Workflow{ID: "ct_mid", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
			"spawn": spawn("ct_leaf", "done"),
			"done":  cfNode(func(run *durable.RunState) runtime.StepPlan { return runtime.Complete(map[string]any{}) }),
		}}
	}
	return []*runtime.Workflow{
		{ID: "ct_root", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
			"spawn": spawn("ct_mid", "ship"),
			"ship": cfNode(func(run *durable.RunState) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: "ship", Payload: map[string]any{}, ResultKey: "s"}, "done")
			}),
			"done": cfNode(func(run *durable.RunState) runtime.StepPlan { return runtime.Complete(map[string]any{}) }),
		}},
		mid,
		{ID: "ct_leaf", Entry: "ask", Nodes: map[string]runtime.NodeFunc{"ask": ask}},
	}
}

func cancelTreeRuntime(t *testing.T, st store.Store, owner string, nested bool, shipped func(runID string)) *runtime.Runtime {
	t.Helper()
	reg, err := runtime.NewRegistry(cancelTreeWorkflows(nested)...)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg,
		Claims: &runtime.Claims{Owner: owner, TTL: time.Second, RenewEvery: 100 * time.Millisecond},
		Handlers: map[durable.EffectType]runtime.Handler{"ship": {Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
			shipped(req.Run.RunID)
			return runtime.Completed(map[string]any{"shipped": true}), nil
		}}}})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// TestCrashCancelOfTreeKilledMidwayIsNotUndoneByAnotherRunner: two
// runners share a store (claims on). Runner A cancels a tree (a root
// parked on its async+wait child, itself parked on its own child when
// nested) and is killed right after the deepest run's cancelled commit,
// before its ancestors'. Runner B's scheduler is running all along: its
// periodic Recover (scheduler.Config.RecoverInterval) finds a parent
// waiting on an ended child, long before A restarts and applies its
// recorded cancel again. The child's commit recorded which run the
// cancel was aimed at: B cancels the parent (and, in turn, the root)
// instead of resuming it, so the root never ships and ends cancelled, and
// A's cancel applied again finds it so.
func TestCrashCancelOfTreeKilledMidwayIsNotUndoneByAnotherRunner(t *testing.T) {
	t.Parallel()
	for name, nested := range map[string]bool{"child": false, "grandchild": true} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			forRunnerStores(t, func(t *testing.T, open func(*testing.T) store.Store) {
				cancelTreeKilledMidway(t, open, nested)
			})
		})
	}
}

func cancelTreeKilledMidway(t *testing.T, open func(*testing.T) store.Store, nested bool) {
	ctx := context.Background()
	var mu sync.Mutex
	var shipped []string
	ship := func(id string) { mu.Lock(); shipped = append(shipped, id); mu.Unlock() }

	const root = "tree-root"
	viewA := &killedAfter{Wrapper: store.Wrapper{Store: open(t)}, when: func(p *store.CommitParams) bool {
		return p.Run.RunID != root && p.Run.Status == durable.RunCancelled
	}}
	rtA := cancelTreeRuntime(t, viewA, "runner-A", nested, ship)
	if _, err := rtA.Start(ctx, runtime.StartParams{WorkflowID: "ct_root", RunID: root}); err != nil {
		t.Fatal(err)
	}
	st, err := rtA.Tick(ctx, root, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunWaiting || st.Waiting.Reason != durable.WaitSubworkflow {
		t.Fatalf("root %s %+v, want waiting on its child", st.Status, st.Waiting)
	}
	mid := runtime.WaitedChild(st)
	if nested {
		m, err := viewA.RunGet(ctx, mid)
		if err != nil {
			t.Fatal(err)
		}
		if runtime.WaitedChild(m) == "" {
			t.Fatalf("child %s %+v, want waiting on its own child", m.Status, m.Waiting)
		}
	}
	// The user cancels the tree through runner A, which dies midway.
	if _, err := rtA.Cancel(ctx, root, "user cancelled"); err == nil {
		t.Fatal("the kill never happened")
	}
	if !viewA.isDead() {
		t.Fatal("runner A is not dead")
	}

	// Runner B, alive all along: its periodic Recover.
	shared := open(t)
	rtB := cancelTreeRuntime(t, shared, "runner-B", nested, ship)
	schB, err := scheduler.New(scheduler.Config{Runtime: rtB})
	if err != nil {
		t.Fatal(err)
	}
	if err := schB.Recover(ctx); err != nil {
		t.Fatalf("runner B recover: %v", err)
	}
	for _, id := range []string{mid, root} {
		got, err := shared.RunGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != durable.RunCancelled || got.Error != "user cancelled" {
			t.Errorf("after runner B's Recover, run %s is %s (%q); want cancelled (%q) with its tree", id, got.Status, got.Error, "user cancelled")
		}
	}

	// Runner A restarts and, as documented, applies the recorded cancel
	// again before its scheduler starts.
	rtA2 := cancelTreeRuntime(t, shared, "runner-A", nested, ship)
	if _, err := rtA2.Cancel(ctx, root, "user cancelled"); err != nil {
		t.Fatalf("re-applying the cancel: %v", err)
	}
	got, err := shared.RunGet(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got.Status != durable.RunCancelled || len(shipped) > 0 {
		t.Errorf("root ended %s (%q) and shipped %d time(s) after the user cancelled its tree; want cancelled, never shipped",
			got.Status, got.Error, len(shipped))
	}
}
