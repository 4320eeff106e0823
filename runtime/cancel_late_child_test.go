package runtime_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// childAfterListing runs start once, right after the first listing of
// root's children made once it is armed: a child created by another
// writer just after a Cancel walked the tree.
type childAfterListing struct {
	store.Wrapper
	root  string
	start func()
	armed atomic.Bool
	once  sync.Once
}

func (s *childAfterListing) RunListChildren(ctx context.Context, parentID string, status durable.RunStatus) ([]*durable.RunState, error) {
	kids, err := s.Wrapper.RunListChildren(ctx, parentID, status)
	if parentID == s.root && s.armed.Load() {
		s.once.Do(s.start)
	}
	return kids, err
}

// TestCancelEndsAChildStartedAfterItListedTheTree pins the second
// listing of canceller.tree: a child that comes into being after the
// Cancel listed the tree (its parent's tick, in another runner that had
// not learnt of the cancel yet, started it) is cancelled by the same
// call, with the cancel's reason. Without it the child stays running
// under a cancelled parent when Cancel returns, and does work (an LLM
// call, a tool) until something happens to tick it.
func TestCancelEndsAChildStartedAfterItListedTheTree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reg, err := runtime.NewRegistry(askWorkflow())
	if err != nil {
		t.Fatal(err)
	}
	const root = "late-child-root"
	st := &childAfterListing{Wrapper: store.Wrapper{Store: memory.New()}, root: root}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	var late string
	var startErr error
	st.start = func() {
		late, startErr = rt.Start(ctx, runtime.StartParams{WorkflowID: "ask", ParentRunID: root})
	}
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "ask", RunID: root}); err != nil {
		t.Fatal(err)
	}
	if run, err := rt.Tick(ctx, root, runtime.TickOptions{}); err != nil || run.Status != durable.RunWaiting {
		t.Fatalf("root: %v %v; want waiting", run, err)
	}
	st.armed.Store(true)
	if _, err := rt.Cancel(ctx, root, "stop the tree"); err != nil {
		t.Fatal(err)
	}
	if startErr != nil || late == "" {
		t.Fatalf("the late child was not started (%v)", startErr)
	}
	child, err := rt.GetState(ctx, late)
	if err != nil {
		t.Fatal(err)
	}
	if child.Status != durable.RunCancelled || child.Error != "stop the tree" {
		t.Errorf("child started after the tree was listed: %s (error %q) once Cancel returned; want cancelled with the cancel's reason",
			child.Status, child.Error)
	}
}
