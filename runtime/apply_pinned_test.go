package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// TestApplyEffectLLMCallNotesTokensUsed: spec §1.x limits,
// "estimated_tokens_used is overwritten after each completed LLM_CALL
// with usage.input_tokens": an LLM_CALL a host applies to a run
// (ApplyEffect) counts as one its tick makes.
func TestApplyEffectLLMCallNotesTokensUsed(t *testing.T) {
	ctx := context.Background()
	llm := func(ctx context.Context, _ *runtime.EffectRequest) (runtime.Outcome, error) {
		return runtime.Completed(map[string]any{"content": "hi", "usage": map[string]any{"input_tokens": int64(42)}}), nil
	}
	wf := &runtime.Workflow{ID: "w", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": wevNode(func(run *durable.RunState) runtime.StepPlan {
			return wevEffect(durable.EffectWaitEvent, map[string]any{"wait_key": "go"}, "go", "wait")
		}),
	}}
	rt := applyRuntime(t, runtime.Config{Handlers: map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: {Func: llm}}}, wf)
	run := wevStartTick(t, rt, runtime.StartParams{WorkflowID: "w"})
	if _, err := rt.ApplyEffect(ctx, runtime.ApplyEffectParams{RunID: run.RunID, NodeID: "n", IdempotencyKey: "k",
		Effect: &durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": "p"}}}); err != nil {
		t.Fatal(err)
	}
	status, err := rt.GetLimitStatus(ctx, run.RunID)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := status["tokens"].(map[string]any)
	if used, _ := runtime.AsInt(tok["estimated_used"]); used != 42 {
		t.Fatalf("tokens %v, want estimated_used 42 after the applied LLM_CALL", tok)
	}
}

// TestApplyEffectReplayRerunsRerunOnReplayHandler: an
// ApplyEffect retried under a key whose completed record is in the ledger
// reuses the result, and calls a RerunOnReplay handler again so that its
// changes to the run, lost with the run's state (a kill between a
// non-atomic store's two writes, simulated by rewriting the run), are
// made again (Handler.RerunOnReplay).
func TestApplyEffectReplayRerunsRerunOnReplayHandler(t *testing.T) {
	ctx := context.Background()
	calls := 0
	mark := func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls++
		req.Run.Vars["marked"] = true
		return runtime.Completed(map[string]any{"ok": true}), nil
	}
	wf := &runtime.Workflow{ID: "w", Entry: "wait", Nodes: map[string]runtime.NodeFunc{
		"wait": wevNode(func(run *durable.RunState) runtime.StepPlan {
			return wevEffect(durable.EffectWaitEvent, map[string]any{"wait_key": "go"}, "go", "wait")
		}),
	}}
	st := memory.New()
	rt := applyRuntime(t, runtime.Config{Store: st, Handlers: map[durable.EffectType]runtime.Handler{"mark": {Func: mark, RerunOnReplay: true}}}, wf)
	run := wevStartTick(t, rt, runtime.StartParams{WorkflowID: "w"})
	apply := func() {
		t.Helper()
		if _, err := rt.ApplyEffect(ctx, runtime.ApplyEffectParams{RunID: run.RunID, NodeID: "n", IdempotencyKey: "k",
			Effect: &durable.Effect{Type: "mark"}}); err != nil {
			t.Fatal(err)
		}
	}
	apply()
	stored, err := st.RunGet(ctx, run.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Vars["marked"] != true {
		t.Fatalf("vars %v, want marked", stored.Vars)
	}
	delete(stored.Vars, "marked") // the run's write lost, the ledger's kept
	if err := st.RunCommit(ctx, &store.CommitParams{Run: stored}); err != nil {
		t.Fatal(err)
	}
	apply()
	got := mustState(t, rt, run.RunID)
	if got.Vars["marked"] != true || calls != 2 {
		t.Fatalf("after the retry: marked=%v, handler calls %d; want the change made again by a second call", got.Vars["marked"], calls)
	}
}
