package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// A node that sets vars._runtime.effect_seq back to a smaller number (in
// place, still a number) has the count put back (kernelFields.keepEffectSeq):
// the kernel alone moves it. Were a number accepted whatever its value,
// an identical effect made again in a loop would be recorded under the
// key of the one made before, and a replay after a crash would reuse that
// earlier result instead of making the effect again.
func TestNodeTakingEffectSeqBackGetsNoReusedKey(t *testing.T) {
	calls := 0
	h := runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls++
		return runtime.Completed(map[string]any{"call": calls}), nil
	}}
	wf := &runtime.Workflow{ID: "loop", Entry: "act", Nodes: map[string]runtime.NodeFunc{
		"act": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Request(&durable.Effect{Type: "job", ResultKey: "r", Payload: map[string]any{"n": 1}}, "next"), nil
		},
		"next": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			if run.Vars["again"] == nil {
				run.Vars["again"] = true
				run.Vars["_runtime"].(map[string]any)["effect_seq"] = int64(0)
				return runtime.Next("act"), nil
			}
			return runtime.Complete(map[string]any{"r": run.Vars["r"]}), nil
		},
	}}
	rt := applyRuntime(t, runtime.Config{Handlers: map[durable.EffectType]runtime.Handler{"job": h}}, wf)
	id, err := rt.Start(t.Context(), runtime.StartParams{WorkflowID: "loop"})
	if err != nil {
		t.Fatal(err)
	}
	run, err := rt.Tick(t.Context(), id, runtime.TickOptions{})
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("tick: %v, %v", run, err)
	}
	if calls != 2 {
		t.Fatalf("handler called %d times, want 2", calls)
	}
	recs, err := rt.GetLedger(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range recs {
		if r.Status == durable.StepCompleted && r.Effect != nil && r.Effect.Type == "job" {
			keys = append(keys, r.IdempotencyKey)
		}
	}
	if len(keys) != 2 || keys[0] == keys[1] {
		t.Fatalf("completed job records' keys %v; want two different keys (the second effect_seq-scoped after the first)", keys)
	}
}
