package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// Resume took every ErrRunClaimed from its first attempt for "another
// runner holds the run" and
// tried again through its takeover. But ErrRunClaimed also comes out of an
// attempt that did claim the run and committed the answer: its steps
// then stopped on a run another runner holds (a sync child held
// elsewhere, a handler that returns ErrRunClaimed, as HandlerFunc
// documents) or on the loss of its own claim. The second attempt found
// the run no longer waiting and Resume reported a *StaleResumeError,
// whose documented meaning is that the answer was not taken, while the
// answer was in the run and its resume record in the ledger. Only the
// refusal of the run's own claim (claimRefusedError naming it) now
// counts as "held elsewhere".
func TestTakeoverResumeCommittedThenInterruptedIsNotStale(t *testing.T) {
	t.Parallel()
	st := memory.New()
	reg, err := runtime.NewRegistry(
		&runtime.Workflow{ID: "ask_then_sync", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
			"wait": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectWaitEvent,
					Payload: map[string]any{"name": "go", "scope": "session"}, ResultKey: "answer"}, "spawn")
			}),
			"spawn": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
				return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
					Payload: map[string]any{"workflow_id": "sync_kid", "run_id": "kid"}, ResultKey: "child"}, "done")
			}),
			"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
				return runtime.Complete(map[string]any{"ok": true})
			}),
		}},
		&runtime.Workflow{ID: "sync_kid", Entry: "only", Nodes: map[string]runtime.NodeFunc{
			"only": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
				return runtime.Complete(map[string]any{"ok": true})
			}),
		}})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Claims: &runtime.Claims{Owner: "me", TTL: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // only to fail a hung test
	defer cancel()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "ask_then_sync", SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	run, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || run.Status != durable.RunWaiting {
		t.Fatalf("first tick: %v, %v", run, err)
	}
	// Another runner works on the child the resumed run will call.
	if err := st.RunClaim(ctx, &store.RunClaimParams{RunID: "kid", Owner: "other", TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}

	_, err = rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: run.Waiting.WaitKey, Payload: map[string]any{"by": "host"}})

	got, gerr := rt.GetState(ctx, id)
	if gerr != nil {
		t.Fatal(gerr)
	}
	recs, lerr := rt.GetLedger(ctx, id)
	if lerr != nil {
		t.Fatal(lerr)
	}
	recorded := false
	for _, r := range recs {
		if r.Effect != nil && r.Effect.Type == durable.EffectResume {
			recorded = true
		}
	}
	if !recorded || got.Vars["answer"] == nil {
		t.Fatalf("rig: the answer was not committed (status %s, answer %v, resume record %v)", got.Status, got.Vars["answer"], recorded)
	}
	var stale *runtime.StaleResumeError
	if errors.As(err, &stale) {
		t.Fatalf("Resume = %v: a StaleResumeError (answer not taken) for an answer that is committed "+
			"(run %s, vars.answer set, resume record in the ledger); want the ErrRunClaimed of the interrupted steps", err, got.Status)
	}
	if !errors.Is(err, runtime.ErrRunClaimed) {
		t.Fatalf("Resume = %v; want ErrRunClaimed (the sync child is held elsewhere)", err)
	}
}
