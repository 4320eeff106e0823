package observe_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
)

// halfCommit is a non-atomic store (it embeds the Store interface, hiding
// the memory store's AtomicCommit) whose failAt-th non-create RunCommit
// does what store/jsonfile does when it has appended the records but
// cannot replace the state file: the records are durable, the commit
// returns an error.
type halfCommit struct {
	store.Store
	mu     sync.Mutex
	n      int
	failAt int
}

func (s *halfCommit) RunCommit(ctx context.Context, p *store.CommitParams) error {
	if !p.Create {
		s.mu.Lock()
		s.n++
		fail := s.n == s.failAt
		s.mu.Unlock()
		if fail {
			if err := s.Store.LedgerAppend(ctx, p.Run.RunID, p.Records); err != nil {
				return err
			}
			return errors.New("injected: saving the run state failed after its records were appended")
		}
	}
	return s.Store.RunCommit(ctx, p)
}

// A commit that fails after its records were appended notified nothing,
// and the next tick finds the terminal record already in the ledger and
// appends nothing either: a subscriber was never told of the run's last
// records. The records the store appended (those given a Seq) are now
// notified.
func TestSubscriberSeesTheRecordsOfAHalfFailedCommit(t *testing.T) {
	ctx := context.Background()
	node := func(plan func() runtime.StepPlan) runtime.NodeFunc {
		return func(context.Context, *durable.RunState, *runtime.RunContext) (runtime.StepPlan, error) {
			return plan(), nil
		}
	}
	wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": node(func() runtime.StepPlan { return runtime.Complete(map[string]any{"ok": true}) }),
	}}
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		t.Fatal(err)
	}
	obs := observe.Wrap(&halfCommit{Store: memory.New(), failAt: 1})
	sub := obs.Subscribe("", 64)
	defer sub.Cancel()
	rt, err := runtime.New(runtime.Config{Store: obs, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Tick(ctx, id, runtime.TickOptions{}); err == nil {
		t.Fatal("injected failure not returned")
	}
	if st, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("second tick: %v, %v", st, err)
	}
	seen := map[int64]bool{}
	events := 0
	for done := false; !done; {
		select {
		case ev := <-sub.C:
			events++
			for _, r := range ev.Records {
				seen[r.Seq] = true
			}
		default:
			done = true
		}
	}
	recs, err := obs.LedgerList(ctx, &store.LedgerListParams{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if !seen[r.Seq] {
			t.Errorf("ledger record seq %d (%s %s) was never delivered to the subscriber (%d events in all)",
				r.Seq, r.NodeID, r.IdempotencyKey, events)
		}
	}
}
