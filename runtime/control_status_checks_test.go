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

// Spec §2.7: resume_run "only acts on paused non-terminal runs". A run
// never paused, running or waiting on a question, is left as it is: not
// saved again, no resumed_at, and a running one not ticked (its driver
// does that). Would break if ResumeRun lifted a pause without checking
// there is one (it would then tick a running run it was not asked to).
func TestResumeRunOfUnpausedRunChangesNothing(t *testing.T) {
	f := setup(t, chain(2), askWorkflow())
	ctx := context.Background()
	running, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	asking, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "ask"})
	if run, err := f.rt.Tick(ctx, asking, runtime.TickOptions{}); err != nil || run.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %v", run, err)
	}
	for _, id := range []string{running, asking} {
		before := mustGet(t, f.rt, id)
		run, err := f.rt.ResumeRun(ctx, id)
		if err != nil {
			t.Fatalf("ResumeRun %s: %v", id, err)
		}
		if run.Status != before.Status || run.Version != before.Version {
			t.Errorf("ResumeRun of unpaused run %s: %s v%d -> %s v%d; want it unchanged",
				id, before.Status, before.Version, run.Status, run.Version)
		}
		if _, has := specControl(run)["resumed_at"]; has {
			t.Errorf("ResumeRun of unpaused run %s wrote resumed_at: %v", id, specControl(run))
		}
	}
}

// A pause wait without resume_to_node (written so by another writer) is
// lifted at the run's current node, as Python keeps current_node when
// resume_to is empty. Would break if ResumeRun took the empty resume node
// as the node to run: the tick would then fail the run on a missing node.
func TestResumeRunOfPauseWaitWithoutResumeNodeKeepsTheCurrentNode(t *testing.T) {
	f := setup(t, chain(2))
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if _, err := f.rt.Pause(ctx, id, ""); err != nil {
		t.Fatal(err)
	}
	run, err := f.st.RunGet(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	run.Waiting.ResumeToNode = ""
	if err := f.st.RunCommit(ctx, &store.CommitParams{Run: run}); err != nil {
		t.Fatal(err)
	}
	st, err := f.rt.ResumeRun(ctx, id)
	if err != nil || st.Status != durable.RunCompleted || st.CurrentNode != "n1" {
		t.Fatalf("ResumeRun = %+v, %v; want the run completed from n0 (at n1)", st, err)
	}
}

// childGoneAfterListing deletes the run gone once, right after the first
// listing of root's children made once armed: a child removed (pruned by
// another process) between a Cancel's walk of the tree and its cancel.
type childGoneAfterListing struct {
	store.Wrapper
	root, gone string
	armed      atomic.Bool
	once       sync.Once
}

func (s *childGoneAfterListing) RunListChildren(ctx context.Context, parentID string, status durable.RunStatus) ([]*durable.RunState, error) {
	kids, err := s.Wrapper.RunListChildren(ctx, parentID, status)
	if parentID == s.root && s.armed.Load() {
		s.once.Do(func() { _, _ = s.Wrapper.RunDelete(ctx, s.gone) })
	}
	return kids, err
}

// A run of the tree that is gone by the time Cancel reaches it is passed
// over: the rest of the tree is cancelled and Cancel succeeds. Would break
// if Cancel failed on the missing run's ErrNotFound, leaving the root live.
func TestCancelPassesOverATreeRunDeletedAfterTheListing(t *testing.T) {
	ctx := context.Background()
	const root = "gone-child-root"
	st := &childGoneAfterListing{Wrapper: store.Wrapper{Store: memory.New()}, root: root}
	rt := servingRuntime(t, st, "", askWorkflow())
	var err error
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "ask", RunID: root}); err != nil {
		t.Fatal(err)
	}
	if st.gone, err = rt.Start(ctx, runtime.StartParams{WorkflowID: "ask", ParentRunID: root}); err != nil {
		t.Fatal(err)
	}
	st.armed.Store(true)
	run, err := rt.Cancel(ctx, root, "stop")
	if err != nil || run.Status != durable.RunCancelled || run.Error != "stop" {
		t.Fatalf("Cancel = %+v, %v; want the root cancelled, the deleted child passed over", run, err)
	}
}
