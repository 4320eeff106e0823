package runtime

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// A's tick is inside an external effect when B pauses the run and then
// lifts the pause with ResumeRun (which ticks). B's tick replays the plan
// in flight, finds A's attempt open, closes it "interrupted" and calls the
// handler again (without claims nothing tells a live attempt from a dead
// one). A's handler then returns and its commit loses: the end B gave its
// attempt stands, and keepLostAttemptEnd adds no second one.
func TestAttemptTakenForDeadByAnotherWriterEndsOnce(t *testing.T) {
	for _, kind := range conflictStores {
		t.Run(kind, func(t *testing.T) {
			ctx := t.Context()
			st := newConflictStore(t, kind)
			var calls atomic.Int32
			entered1, release1 := make(chan struct{}), make(chan struct{})
			entered2, release2 := make(chan struct{}), make(chan struct{})
			h := Handler{Func: func(context.Context, *EffectRequest) (Outcome, error) {
				switch calls.Add(1) {
				case 1:
					close(entered1)
					<-release1
				case 2:
					close(entered2)
					<-release2
				}
				return Completed(map[string]any{"answer": "42"}), nil
			}}
			cfg := Config{Clock: steppingMilliClock(), Handlers: map[durable.EffectType]Handler{"llm": h}}
			var nodeCalls atomic.Int32
			a := errRuntime(t, st, cfg, selfResumingAgent(&nodeCalls))
			b := errRuntime(t, st, cfg, selfResumingAgent(&nodeCalls))
			id, err := a.Start(ctx, StartParams{WorkflowID: "w"})
			if err != nil {
				t.Fatal(err)
			}
			ticked := tickInBackground(ctx, a, id)
			<-entered1
			if _, err := b.Pause(ctx, id, "operator"); err != nil {
				t.Fatal(err)
			}
			resumed := make(chan error, 1)
			go func() { _, err := b.ResumeRun(ctx, id); resumed <- err }()
			<-entered2 // B's tick called the handler a second time
			close(release1)
			t.Logf("A's tick: %v", <-ticked)
			close(release2)
			t.Logf("B's resume: %v", <-resumed)
			run, err := b.GetState(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("run %s", run.Status)
			recs, _ := st.LedgerList(ctx, &store.LedgerListParams{RunID: id})
			for _, r := range recs {
				t.Logf("%d %s %s %s %s", r.Seq, r.NodeID, r.Status, r.StepID, r.Error)
			}
			wantOneEndEach(t, st, id)
		})
	}
}
