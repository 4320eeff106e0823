package runtime_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// The idempotency key of a TOOL_CALLS effect leaves out every id a call
// carries, as Python's _normalize_tool_call_for_idempotency pops
// call_id, id, runtime_call_id, model_call_id and idempotency_key (in a
// call and in its "function" object): two requests differing only in one
// of them get one key, under Python's key and ours alike.
func TestToolCallsKeyIgnoresEveryCallID(t *testing.T) {
	effect := func(idKey string, v any) *durable.Effect {
		call := map[string]any{"name": "search", "arguments": map[string]any{"q": "x"}}
		fn := map[string]any{"name": "search"}
		if idKey != "" {
			call[idKey] = v
			fn[idKey] = v
		}
		call["function"] = fn
		return &durable.Effect{Type: durable.EffectToolCalls, Payload: map[string]any{"tool_calls": []any{call}}}
	}
	base := effect("", nil)
	wantPy, want := runtime.PythonIdempotencyKey("r", "n", base), runtime.EffectKey("r", "n", base, 3)
	for _, k := range []string{"call_id", "id", "runtime_call_id", "model_call_id", "idempotency_key"} {
		e := effect(k, "abc-"+k)
		if got := runtime.PythonIdempotencyKey("r", "n", e); got != wantPy {
			t.Errorf("a call carrying %s: Python key %s; want %s, the key without it", k, got, wantPy)
		}
		if got := runtime.EffectKey("r", "n", e, 3); got != want {
			t.Errorf("a call carrying %s: key %s; want %s, the key without it", k, got, want)
		}
	}
	other := effect("", nil)
	other.Payload["tool_calls"].([]any)[0].(map[string]any)["name"] = "fetch"
	if runtime.EffectKey("r", "n", other, 3) == want {
		t.Errorf("calls of different tools share a key")
	}
}
