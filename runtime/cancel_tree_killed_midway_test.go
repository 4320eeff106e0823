package runtime

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// errKilled is what a store view fails with once its process is "killed".
var errKilled = errors.New("process killed")

// killedAfterCancelBelow is a process's view of a store that dies right
// after the first commit that cancels a run other than root is durable:
// that call and every later one fail.
type killedAfterCancelBelow struct {
	store.Wrapper
	root string
	mu   sync.Mutex
	dead bool
}

func (s *killedAfterCancelBelow) isDead() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.dead }

func (s *killedAfterCancelBelow) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if s.isDead() {
		return errKilled
	}
	err := s.Store.RunCommit(ctx, p)
	if err == nil && p.Run.RunID != s.root && p.Run.Status == durable.RunCancelled {
		s.mu.Lock()
		s.dead = true
		s.mu.Unlock()
		return errKilled
	}
	return err
}

func (s *killedAfterCancelBelow) RunGet(ctx context.Context, id string) (*durable.RunState, error) {
	if s.isDead() {
		return nil, errKilled
	}
	return s.Store.RunGet(ctx, id)
}

func (s *killedAfterCancelBelow) LedgerList(ctx context.Context, p *store.LedgerListParams) ([]*durable.StepRecord, error) {
	if s.isDead() {
		return nil, errKilled
	}
	return s.Store.LedgerList(ctx, p)
}

// shipAfterChild: "top" calls "leaf" (sync, or async+wait) and "ships"
// once the call returns, whatever it returned; "leaf" makes a "work"
// effect (sync) or asks a person (async).
func shipAfterChild(async bool) []*Workflow {
	payload := map[string]any{"workflow_id": "leaf"}
	leafNode := errNode(func(run *durable.RunState) StepPlan {
		return Request(&durable.Effect{Type: "work", Payload: map[string]any{}, ResultKey: "w"}, "done")
	})
	if async {
		payload = map[string]any{"workflow_id": "leaf", "async": true, "wait": true}
		leafNode = errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectAskUser, Payload: map[string]any{"prompt": "?"}, ResultKey: "w"}, "done")
		})
	}
	return []*Workflow{
		{ID: "top", Entry: "spawn", Nodes: map[string]NodeFunc{
			"spawn": errNode(func(run *durable.RunState) StepPlan {
				return Request(&durable.Effect{Type: durable.EffectStartSubworkflow, Payload: payload, ResultKey: "sub"}, "ship")
			}),
			"ship": errNode(func(run *durable.RunState) StepPlan {
				return Request(&durable.Effect{Type: "ship", Payload: map[string]any{}, ResultKey: "s"}, "done")
			}),
			"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"sub": run.Vars["sub"]}) }),
		}},
		{ID: "leaf", Entry: "work", Nodes: map[string]NodeFunc{
			"work": leafNode,
			"done": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{}) }),
		}},
	}
}

// shipCounter counts the "ship" effects made; its handler for "work"
// reports each call on started and blocks until its context ends.
type shipCounter struct {
	mu      sync.Mutex
	shipped int
	started chan struct{}
}

func (c *shipCounter) handlers() map[durable.EffectType]Handler {
	return map[durable.EffectType]Handler{
		"ship": {Func: func(ctx context.Context, req *EffectRequest) (Outcome, error) {
			c.mu.Lock()
			c.shipped++
			c.mu.Unlock()
			return Completed(map[string]any{"shipped": true}), nil
		}},
		"work": {Func: func(ctx context.Context, req *EffectRequest) (Outcome, error) {
			c.started <- struct{}{}
			<-ctx.Done()
			return Completed(nil), nil
		}},
	}
}

func (c *shipCounter) count() int { c.mu.Lock(); defer c.mu.Unlock(); return c.shipped }

// cancelledWith returns the run's vars._runtime.cancelled_with.
func cancelledWith(run *durable.RunState) any {
	rt, _ := run.Vars["_runtime"].(map[string]any)
	return rt[cancelledWithKey]
}

// A Cancel of a tree whose root ticks a sync child is killed right after
// the child's cancelled commit (the child's own tick makes it, its effect
// cut), before the root's: the root is left running at its call. When
// the root is ticked again (after a restart, or by another runner once
// the dead one's claim expired), its call finds the child cancelled. The
// cancel was aimed at the root: the root ends cancelled with the cancel's
// reason, not failed with "Unexpected subworkflow status: cancelled",
// and does not ship. A cancel aimed at the child alone still fails the
// root, as Python words a cancelled sync child.
func TestSyncChildOfTreeCancelKilledMidwayCancelsItsParentWhenReplayed(t *testing.T) {
	for _, tc := range []struct {
		name, target string // "top" or "leaf": the run Cancel is aimed at
		want         durable.RunStatus
		wantErr      string
	}{
		{"cancel of the tree", "top", durable.RunCancelled, "user cancelled"},
		{"cancel of the child alone", "leaf", durable.RunFailed, "Effect failed after 1 attempts: Unexpected subworkflow status: cancelled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			base := memory.New()
			wfs := shipAfterChild(false)
			counter := &shipCounter{started: make(chan struct{}, 1)}
			const top = "top-run"
			viewA := &killedAfterCancelBelow{Wrapper: store.Wrapper{Store: base}, root: top}
			rtA := errRuntime(t, viewA, Config{Handlers: counter.handlers()}, wfs...)
			if _, err := rtA.Start(ctx, StartParams{WorkflowID: "top", RunID: top}); err != nil {
				t.Fatal(err)
			}
			ticked := make(chan error, 1)
			go func() { _, err := rtA.Tick(ctx, top, TickOptions{}); ticked <- err }()
			select {
			case <-counter.started:
			case <-time.After(10 * time.Second):
				t.Fatal("the child's effect never started")
			}
			kids, err := base.RunListChildren(ctx, top, "")
			if err != nil || len(kids) != 1 {
				t.Fatalf("children of the root: %v, %v; want its sync child", kids, err)
			}
			leaf := kids[0].RunID
			target := map[string]string{"top": top, "leaf": leaf}[tc.target]
			if _, err := rtA.Cancel(ctx, target, "user cancelled"); err == nil {
				t.Fatal("the kill never happened")
			}
			if err := <-ticked; err == nil {
				t.Fatal("the root's tick went through a dead store")
			}
			child, err := base.RunGet(ctx, leaf)
			if err != nil {
				t.Fatal(err)
			}
			wantWith := map[string]any{"run_id": target, "reason": "user cancelled"}
			if child.Status != durable.RunCancelled || !reflect.DeepEqual(cancelledWith(child), wantWith) {
				t.Fatalf("child %s, cancelled_with %v; want cancelled, with %v", child.Status, cancelledWith(child), wantWith)
			}
			if got, _ := base.RunGet(ctx, top); got.Status != durable.RunRunning {
				t.Fatalf("root %s before the restart; want running (the kill came before its commit)", got.Status)
			}

			rtB := errRuntime(t, base, Config{Handlers: counter.handlers()}, wfs...)
			st, err := rtB.Tick(ctx, top, TickOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if st.Status != tc.want || st.Error != tc.wantErr || counter.count() != 0 {
				t.Errorf("root %s (%q), shipped %d time(s); want %s (%q), never shipped",
					st.Status, st.Error, counter.count(), tc.want, tc.wantErr)
			}
			if tc.want == durable.RunCancelled && !reflect.DeepEqual(cancelledWith(st), wantWith) {
				t.Errorf("root cancelled_with %v; want %v (the cancel it belongs to)", cancelledWith(st), wantWith)
			}
		})
	}
}

// A Cancel aimed at a child alone (its parent is outside the cancelled
// tree) still resumes the parent waiting on it with the child's
// cancelled end, which the parent goes on with; the child records that
// the cancel was aimed at itself. A run that no cancel ended has no such
// record.
func TestCancelOfChildAloneStillResumesItsParent(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	counter := &shipCounter{started: make(chan struct{}, 1)}
	rt := errRuntime(t, st, Config{Handlers: counter.handlers()}, shipAfterChild(true)...)
	top, err := rt.Start(ctx, StartParams{WorkflowID: "top"})
	if err != nil {
		t.Fatal(err)
	}
	parked, err := rt.Tick(ctx, top, TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	leaf := WaitedChild(parked)
	if leaf == "" {
		t.Fatalf("top %s %+v; want waiting on its child", parked.Status, parked.Waiting)
	}
	if _, err := rt.Cancel(ctx, leaf, "not needed"); err != nil {
		t.Fatal(err)
	}
	child, err := st.RunGet(ctx, leaf)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"run_id": leaf, "reason": "not needed"}; !reflect.DeepEqual(cancelledWith(child), want) {
		t.Errorf("child cancelled_with %v; want %v", cancelledWith(child), want)
	}
	got, err := st.RunGet(ctx, top)
	if err != nil {
		t.Fatal(err)
	}
	wantOut := map[string]any{"success": false, "error": "not needed", "status": "cancelled"}
	sub, _ := got.Vars["sub"].(map[string]any)
	if got.Status != durable.RunCompleted || counter.count() != 1 || !reflect.DeepEqual(sub["output"], wantOut) {
		t.Errorf("parent %s (%q), shipped %d time(s), given %v; want completed, shipped once, given %v",
			got.Status, got.Error, counter.count(), sub["output"], wantOut)
	}
	if w := cancelledWith(got); w != nil {
		t.Errorf("a completed run records cancelled_with %v", w)
	}
}
