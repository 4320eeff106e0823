package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestLostCommitKeepsNoWaitingAttemptEnd: session.keepLostAttemptEnd
// appends alone the end of an attempt whose commit lost to another
// writer, but never a waiting end: a replay reusing it would wait for an
// answer that may have come meanwhile. Here another runtime on the same
// store pauses the run while a non-local handler runs, and the handler
// answers "waiting": the ledger keeps the attempt's STARTED record only.
func TestLostCommitKeepsNoWaitingAttemptEnd(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	var other *runtime.Runtime
	var runID string
	wait := func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		if _, err := other.Pause(context.Background(), runID, "elsewhere"); err != nil {
			t.Errorf("pause through the other runtime: %v", err)
		}
		return runtime.Waiting(&durable.WaitState{Reason: durable.WaitEvent, WaitKey: "k"}), nil
	}
	wf := &runtime.Workflow{ID: "w", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": wevNode(func(run *durable.RunState) runtime.StepPlan {
			return wevEffect("custom_wait", map[string]any{}, "x", "b")
		}),
		"b": wevNode(func(run *durable.RunState) runtime.StepPlan { return runtime.Complete(map[string]any{"ok": true}) }),
	}}
	mk := func() *runtime.Runtime {
		reg, err := runtime.NewRegistry(wf)
		if err != nil {
			t.Fatal(err)
		}
		rt, err := runtime.New(runtime.Config{Store: st, Registry: reg,
			Handlers: map[durable.EffectType]runtime.Handler{"custom_wait": {Func: wait}}})
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	rt, other := mk(), mk()
	var err error
	runID, err = rt.Start(ctx, runtime.StartParams{WorkflowID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = rt.Tick(ctx, runID, runtime.TickOptions{})
	got, err := st.RunGet(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if !runtime.IsPaused(got) {
		t.Fatalf("run %s, want the other runtime's pause to have won", got.Status)
	}
	recs, err := st.LedgerList(ctx, &store.LedgerListParams{RunID: runID})
	if err != nil {
		t.Fatal(err)
	}
	started := 0
	for _, r := range recs {
		if r.Effect == nil || r.Effect.Type != "custom_wait" {
			continue
		}
		switch r.Status {
		case durable.StepStarted:
			started++
		case durable.StepWaiting:
			t.Errorf("ledger keeps the lost commit's waiting end %+v", r)
		}
	}
	if started != 1 {
		t.Fatalf("%d STARTED records for the effect, want 1 (ledger %d records)", started, len(recs))
	}
}
