package postgres_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/postgres"
)

// otherWorkflowRuntime is a runner on st that serves another workflow
// than expiry-call (runners sharing a store may each serve some
// workflows: scheduler.Recover leaves a run of a workflow its registry
// lacks to a runner that has it).
func otherWorkflowRuntime(t *testing.T, st *postgres.Store, owner string) *runtime.Runtime {
	t.Helper()
	return eventRuntime(t, st, owner, &runtime.Workflow{ID: "other", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{}), nil
		},
	}})
}

// TestCancelThroughRunnerWithoutTheWorkflowEndsTheAttempt: runner A works on a run
// (its LLM call in flight); a host cancels it through runner C, which does
// not serve the run's workflow (runners sharing a store may each serve some
// workflows: runtime.cancelOnce opens the run without its workflow, under
// its forced claim). docs/architecture.md: a cancel through a runner that
// does not hold the run "ends the attempt in flight as `cancelled` in the
// ledger itself and commits at once": the run ends cancelled with its
// attempt's STARTED record ended, not left open.
func TestCancelThroughRunnerWithoutTheWorkflowEndsTheAttempt(t *testing.T) {
	testURL(t)
	schema := testSchema(t)
	aStore, cStore := openSchema(t, schema), openSchema(t, schema)
	started := make(chan context.Context, 1)
	a := expiryRuntime(t, aStore, "runner-a", 30*time.Second, func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		started <- ctx
		select {
		case <-ctx.Done():
			return runtime.Outcome{}, ctx.Err()
		case <-time.After(20 * time.Second):
			return runtime.Completed(map[string]any{"text": "late"}), nil
		}
	})
	c := otherWorkflowRuntime(t, cStore, "runner-c")
	ctx := t.Context()
	id, err := a.Start(ctx, runtime.StartParams{WorkflowID: "expiry-call"})
	if err != nil {
		t.Fatal(err)
	}
	tickDone := make(chan error, 1)
	go func() {
		_, err := a.Tick(ctx, id, runtime.TickOptions{})
		tickDone <- err
	}()
	var effCtx context.Context
	select {
	case effCtx = <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the effect never started")
	}
	begin := time.Now()
	st, err := c.Cancel(ctx, id, "stop")
	if err != nil {
		t.Fatalf("Cancel through a runner without the workflow, after %v: %v", time.Since(begin).Round(time.Millisecond), err)
	}
	if st.Status != durable.RunCancelled {
		t.Fatalf("status after Cancel = %s, want cancelled", st.Status)
	}
	select {
	case <-effCtx.Done():
	case <-time.After(5 * time.Second):
		t.Error("the holder's effect was not interrupted within 5 s of the cancel")
	}
	<-tickDone
	recs, err := cStore.LedgerList(ctx, &store.LedgerListParams{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	ends := map[string]durable.StepStatus{}
	for _, r := range recs {
		t.Logf("seq %d %s %s %s", r.Seq, r.NodeID, r.Status, r.StepID)
		if r.Status != durable.StepStarted {
			ends[r.StepID] = r.Status
		}
	}
	for _, r := range recs {
		if r.Status == durable.StepStarted && ends[r.StepID] == "" {
			t.Errorf("attempt %s (node %s) was left open in the ledger: the cancel did not end it as cancelled", r.StepID, r.NodeID)
		}
	}
}

// slowThinkRuntime is a runner on st whose workflow "slow-think" waits
// until vars.until, then runs a pure node "think" that takes think (a
// code node computing, say: the VisualFlow sandbox allows 5 s), then an
// LLM_CALL handled by h.
func slowThinkRuntime(t *testing.T, st *postgres.Store, c runtime.Claims, think time.Duration, thinking func(), h runtime.HandlerFunc) *runtime.Runtime {
	t.Helper()
	n := func(fn func(run *durable.RunState) runtime.StepPlan) runtime.NodeFunc {
		return func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return fn(run), nil
		}
	}
	reg, err := runtime.NewRegistry(&runtime.Workflow{ID: "slow-think", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": n(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectWaitUntil,
				Payload: map[string]any{"until": run.Vars["until"]}}, "think")
		}),
		"think": n(func(run *durable.RunState) runtime.StepPlan {
			if thinking != nil {
				thinking()
			}
			time.Sleep(think)
			return runtime.Next("call")
		}),
		"call": n(func(run *durable.RunState) runtime.StepPlan {
			return runtime.Request(&durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": "x"},
				ResultKey: "r"}, "")
		}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg, Logger: testLogger(t), Claims: &c,
		Handlers: map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: {Func: h}}})
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// Two schedulers poll one due run. Runner A claims it, releases its
// WAIT_UNTIL and runs the next node, a pure one that takes two seconds,
// before its LLM call. Runner B's tick is refused and, the run still
// looking "waiting, unchanged" in the store (pure steps are not
// committed), B takes the claim from A after ~1.3 s (tickHeldDue) as if A
// were dead. Without a fence, A (not knowing yet: its next renewal is
// RenewEvery away) committed its STARTED record and called the handler,
// B's commit conflicted and B released the claim, and B's next tick
// replayed the attempt while A's call still ran: one effect on two
// runners at once. The taking now commits the run unchanged at once, so
// A's commit is refused before its handler is called, and A's tick ends
// with ErrRunClaimed (the run went to another runner), not a failure.
func TestDueTakeoverOfBusyHolderFencesIt(t *testing.T) {
	testURL(t)
	schema := testSchema(t)
	aStore, bStore := openSchema(t, schema), openSchema(t, schema)
	var inA, overlap atomic.Bool
	var calls atomic.Int32
	claims := func(owner string) runtime.Claims {
		return runtime.Claims{Owner: owner, TTL: 30 * time.Second, RenewEvery: 5 * time.Second}
	}
	aThinking := make(chan struct{})
	var thinkOnce sync.Once
	a := slowThinkRuntime(t, aStore, claims("runner-a"), 2*time.Second, func() { thinkOnce.Do(func() { close(aThinking) }) }, func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls.Add(1)
		inA.Store(true)
		defer inA.Store(false)
		select {
		case <-ctx.Done():
			return runtime.Outcome{}, ctx.Err()
		case <-time.After(3 * time.Second):
			return runtime.Completed(map[string]any{"text": "a"}), nil
		}
	})
	b := slowThinkRuntime(t, bStore, claims("runner-b"), 1500*time.Millisecond, nil, func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls.Add(1)
		if inA.Load() {
			overlap.Store(true)
		}
		return runtime.Completed(map[string]any{"text": "b"}), nil
	})
	ctx := t.Context()
	// Due in two seconds: time enough for the start and first tick on a
	// loaded machine, which must find the run not due yet.
	due := time.Now().Add(2 * time.Second)
	until := due.UTC().Format("2006-01-02T15:04:05.000000+00:00")
	id, err := a.Start(ctx, runtime.StartParams{WorkflowID: "slow-think", Vars: map[string]any{"until": until}})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := a.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("first tick: %v, %v; want waiting", st, err)
	}
	time.Sleep(time.Until(due) + 100*time.Millisecond) // due now
	aDone := make(chan error, 1)
	go func() { // A's scheduler polls the due run
		_, err := a.Tick(ctx, id, runtime.TickOptions{})
		aDone <- err
	}()
	select { // A holds the claim and thinks
	case <-aThinking:
	case <-time.After(30 * time.Second):
		t.Fatal("runner A's tick never reached the thinking node")
	}
	st, bErr := b.Tick(ctx, id, runtime.TickOptions{}) // B's scheduler polls it too
	aErr := <-aDone
	if bErr != nil || st.Status != durable.RunCompleted {
		t.Fatalf("B's tick: %v, %v; want the run taken over and completed", st, bErr)
	}
	if !errors.Is(aErr, runtime.ErrRunClaimed) {
		t.Errorf("A's tick: %v; want ErrRunClaimed (the run went to runner B)", aErr)
	}
	if overlap.Load() {
		t.Errorf("the LLM call of run %s ran on runner B while runner A's call of the same attempt was still running", id)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the LLM call ran %d times; want once (A fenced off before it called)", n)
	}
}
