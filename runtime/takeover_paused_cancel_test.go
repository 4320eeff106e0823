package runtime_test

import (
	"context"
	"github.com/abstractframework/abstractgateway/store/memory"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// docs/architecture.md ("Several runners"): "host updates (pause,
// resume-run, limits) of a waiting run ... do not give up on a run still
// waiting on the same key, unchanged through that wait: they take it from
// that holder". A resume-run always concerns a paused run, and
// idleWaiting refused every paused run, so claimHeld never took one: a
// ResumeRun of a paused run whose holder stopped after committing failed
// with ErrRunClaimed for the claim's whole TTL.
func TestResumeRunTakesAnIdlePausedRunFromItsHolder(t *testing.T) {
	t.Parallel()
	st, rt, id := heldListener(t) // waiting on an event, held by "other" for an hour
	ctx := context.Background()
	// Pause it first (through its holder, as it were): release, pause, re-claim.
	if err := st.RunRelease(ctx, id, "other"); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Pause(ctx, id, "maintenance"); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	// The runner that committed the pause died before releasing its claim.
	if err := st.RunClaim(ctx, &store.RunClaimParams{RunID: id, Owner: "other", TTL: time.Hour, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	got, err := rt.ResumeRun(ctx, id)
	if err != nil {
		t.Fatalf("ResumeRun of a paused run idle under a dead holder = %v; want it taken over as the docs promise for resume-run", err)
	}
	if runtime.IsPaused(got) || got.Status != durable.RunWaiting {
		t.Fatalf("after ResumeRun: %s paused=%v; want waiting on its event, not paused", got.Status, runtime.IsPaused(got))
	}
}

// forceAfterParentEnds is a store whose forced claim of run parent by
// runner "b" waits (up to 1 s) until that run has ended in the store: the
// few store round trips a Cancel through "b" takes between committing the
// sync child cancelled and forcing the parent's claim, stretched so that
// runner "a", which holds the parent and ticks the child inline, commits
// in between, as it can on any real store.
type forceAfterParentEnds struct {
	store.Wrapper
	parent atomic.Value // string
}

func (s *forceAfterParentEnds) RunClaim(ctx context.Context, p *store.RunClaimParams) error {
	if id, _ := s.parent.Load().(string); p.Owner == "b" && p.Force && p.RunID == id {
		for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			if run, err := s.Store.RunGet(ctx, id); err == nil && run.Status.Terminal() {
				break
			}
		}
	}
	return s.Wrapper.RunClaim(ctx, p)
}

// Cancel promises that the run and its unfinished descendants are "each
// saved as cancelled". In one process a cancel of a parent ticking a
// sync child cancels the parent's effect context, so the child's end is
// recorded as a cancelled attempt of the parent. Through another runner,
// the cancel only reaches the holder by taking its claims, deepest
// first: the child is taken and committed cancelled while the holder
// still holds the parent (it learns of lost claims only at its next
// renewal). If the child's effect returns in that moment, the child's
// commit conflicts, the holder reloads the child, finds it cancelled and
// failed the parent with "Unexpected subworkflow status: cancelled",
// committing it failed before the cancel reached the parent: the
// cancelled root ended failed. The parent now stops at its checkpoint for
// the cancel to end it.
func TestCancelThroughAnotherRunnerLeavesTheParentCancelled(t *testing.T) {
	t.Parallel()
	st := &forceAfterParentEnds{Wrapper: store.Wrapper{Store: memory.New()}}
	parentWF := &runtime.Workflow{ID: "p", Entry: "spawn", Nodes: map[string]runtime.NodeFunc{
		"spawn": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectStartSubworkflow,
				Payload: map[string]any{"workflow_id": "c", "run_id": "kid"}, ResultKey: "child"}, "done")
		}),
		"done": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Complete(map[string]any{"child": run.Vars["child"]})
		}),
	}}
	childWF := &runtime.Workflow{ID: "c", Entry: "call", Nodes: map[string]runtime.NodeFunc{
		"call": node(func(run *durable.RunState, rc *runtime.RunContext) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": "x"}, ResultKey: "r"}, "")
		}),
	}}
	entered := make(chan struct{})
	var once sync.Once
	// The child's LLM call returns right after the cancel committed the
	// child (its context is not cancelled: the holder has not renewed).
	llm := func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		once.Do(func() { close(entered) })
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(2 * time.Millisecond) {
			if run, err := st.Store.RunGet(context.Background(), "kid"); err == nil && run.Status.Terminal() {
				break
			}
		}
		return runtime.Completed(map[string]any{"text": "done"}), nil
	}
	mk := func(owner string) *runtime.Runtime {
		reg, err := runtime.NewRegistry(parentWF, childWF)
		if err != nil {
			t.Fatal(err)
		}
		rt, err := runtime.New(runtime.Config{Store: st, Registry: reg,
			Claims:   &runtime.Claims{Owner: owner, TTL: time.Minute, RenewEvery: time.Minute},
			Handlers: map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: {Func: llm}}})
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	a, b := mk("a"), mk("b")
	ctx := context.Background()
	id, err := a.Start(ctx, runtime.StartParams{WorkflowID: "p"})
	if err != nil {
		t.Fatal(err)
	}
	st.parent.Store(id)
	tickDone := tickAsync(a, id)
	<-entered
	got, err := b.Cancel(ctx, id, "stop")
	if err != nil {
		t.Fatalf("Cancel through b: %v", err)
	}
	<-tickDone
	if got.Status != durable.RunCancelled {
		t.Fatalf("parent after Cancel(parent) through another runner: %s %q; want cancelled", got.Status, got.Error)
	}
}
