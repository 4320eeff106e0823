package runtime

import (
	"context"
	"sync"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// blockChildCreate blocks the first create of a run with a parent (the
// start_subworkflow handler's Start) until released.
type blockChildCreate struct {
	store.Store
	once              sync.Once
	entered, released chan struct{}
}

func (b *blockChildCreate) AtomicCommit() bool { return store.IsAtomic(b.Store) }

func (b *blockChildCreate) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if p.Create && p.Run.ParentRunID != "" {
		b.once.Do(func() {
			close(b.entered)
			<-b.released
		})
	}
	return b.Store.RunCommit(ctx, p)
}

func parentWaitingOnAsyncKid() []*Workflow {
	parent := &Workflow{ID: "parent", Entry: "start", Nodes: map[string]NodeFunc{
		"start": errNode(func(run *durable.RunState) StepPlan {
			return Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "kid", "async": true, "wait": true}, ResultKey: "sub"}, "done")
		}),
		"done": errNode(func(run *durable.RunState) StepPlan {
			return Complete(map[string]any{"sub": run.Vars["sub"]})
		}),
	}}
	kid := &Workflow{ID: "kid", Entry: "k", Nodes: map[string]NodeFunc{
		"k": errNode(func(run *durable.RunState) StepPlan { return Complete(map[string]any{"v": 1.0}) }),
	}}
	return []*Workflow{parent, kid}
}

// A's tick of the parent is inside start_subworkflow (async+wait) when B
// pauses the parent; A's commit of the wait loses to the pause, and A's
// drain runs the child to its end while the parent is paused (its end
// skips it). B's ResumeRun replays the plan in flight: the handler is
// called again and finds the child ended. Were the waiting end kept
// alone (as completed ends are, keepLostAttemptEnd) and reused, the
// parent would wait for ever on a child that has already ended.
func TestChildEndedWhileTheParentsWaitCommitWasLostIsDelivered(t *testing.T) {
	for _, kind := range conflictStores {
		t.Run(kind, func(t *testing.T) {
			ctx := t.Context()
			bs := &blockChildCreate{Store: newConflictStore(t, kind), entered: make(chan struct{}), released: make(chan struct{})}
			cfg := Config{Clock: steppingMilliClock()}
			a := errRuntime(t, bs, cfg, parentWaitingOnAsyncKid()...)
			b := errRuntime(t, bs, cfg, parentWaitingOnAsyncKid()...)
			id, err := a.Start(ctx, StartParams{WorkflowID: "parent"})
			if err != nil {
				t.Fatal(err)
			}
			ticked := tickInBackground(ctx, a, id)
			<-bs.entered
			if _, err := b.Pause(ctx, id, "operator"); err != nil {
				t.Fatal(err)
			}
			close(bs.released)
			if err := <-ticked; err != nil {
				t.Logf("A's tick: %v", err)
			}
			if _, err := b.ResumeRun(ctx, id); err != nil {
				t.Fatal(err)
			}
			a.RetryFollowUps(ctx)
			b.RetryFollowUps(ctx)
			run, err := b.GetState(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			recs, _ := bs.LedgerList(ctx, &store.LedgerListParams{RunID: id})
			for _, r := range recs {
				t.Logf("%d %s %s %s %s", r.Seq, r.NodeID, r.Status, r.StepID, r.Error)
			}
			if run.Status != durable.RunCompleted {
				kids, _ := bs.RunListChildren(ctx, id, "")
				for _, k := range kids {
					t.Logf("child %s: %s", k.RunID, k.Status)
				}
				t.Fatalf("parent %s (waiting %+v); want completed with the child's output", run.Status, run.Waiting)
			}
		})
	}
}
