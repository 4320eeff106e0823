package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// Spec §2.9 runtime call ids: take `call_id`, or `id` only when `call_id` is
// absent/null, trim it, "and if the result is empty use the runtime call id
// (so `"call_id": ""` does not fall back to `id`)".
func TestSpecEmptyCallIDDoesNotFallBackToID(t *testing.T) {
	f := setup(t, oneEffect("ids", func() *durable.Effect {
		return &durable.Effect{Type: durable.EffectToolCalls, ResultKey: "r", Payload: map[string]any{
			"tool_calls": []any{
				map[string]any{"call_id": "", "id": "abc", "name": "x"},
				map[string]any{"call_id": "  ", "id": "def", "name": "y"},
			},
		}}
	}))
	var calls []any
	var key string
	f.rt.SetHandler(durable.EffectToolCalls, runtime.Handler{Func: func(ctx context.Context, req *runtime.EffectRequest) (runtime.Outcome, error) {
		calls, _ = req.Effect.Payload["tool_calls"].([]any)
		key = req.IdempotencyKey
		return runtime.Completed(map[string]any{"mode": "executed", "results": []any{}}), nil
	}})
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "ids"})
	if run, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("tick: %v %v", run, err)
	}
	if len(calls) != 2 {
		t.Fatalf("handler saw calls %v", calls)
	}
	for i, c := range calls {
		call, _ := c.(map[string]any)
		want := "rtcall_" + key + "_" + string(rune('1'+i))
		if call["runtime_call_id"] != want || call["call_id"] != want {
			t.Errorf("call %d = %v; want runtime_call_id = call_id = %s (a blank call_id does not fall back to id)", i, call, want)
		}
	}
}
