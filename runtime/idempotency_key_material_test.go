package runtime_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// The kernel's key is made of run, node, type, payload and effect_seq:
// two effects alike but for their node get two keys, and so do two alike
// but for their run. A key that took the run id for the node id would let
// an effect at one node reuse the record of an identical effect at
// another made at the same effect_seq.
func TestEffectKeyDiffersByNodeAndRun(t *testing.T) {
	e := &durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{"prompt": "p"}}
	base := runtime.EffectKey("run-1", "node-1", e, 2)
	if got := runtime.EffectKey("run-1", "node-2", e, 2); got == base {
		t.Errorf("nodes node-1 and node-2 share the key %s", got)
	}
	if got := runtime.EffectKey("run-2", "node-1", e, 2); got == base {
		t.Errorf("runs run-1 and run-2 share the key %s", got)
	}
	if got := runtime.EffectKey("run-1", "node-1", e, 3); got == base {
		t.Errorf("effect_seq 2 and 3 share the key %s", got)
	}
	// The Python key too tells nodes apart.
	if runtime.PythonIdempotencyKey("run-1", "node-1", e) == runtime.PythonIdempotencyKey("run-1", "node-2", e) {
		t.Errorf("the Python key does not tell node-1 from node-2")
	}
}

// Only a TOOL_CALLS payload is normalised (spec §2.9 step 1): another
// effect's allowed_tools or tool_calls are hashed as given, so the order
// of its allowed_tools and the ids of its calls are part of its key, as in
// Python. Normalising every type would give an LLM_CALL a key Python's
// records do not carry.
func TestEffectKeyNormalisesOnlyToolCallsPayloads(t *testing.T) {
	llm := func(allowed []any, callID string) *durable.Effect {
		return &durable.Effect{Type: durable.EffectLLMCall, Payload: map[string]any{
			"prompt":        "p",
			"allowed_tools": allowed,
			"tool_calls":    []any{map[string]any{"name": "search", "call_id": callID}},
		}}
	}
	base := llm([]any{"b", "a"}, "c1")
	if runtime.PythonIdempotencyKey("r", "n", base) == runtime.PythonIdempotencyKey("r", "n", llm([]any{"a", "b"}, "c1")) {
		t.Errorf("llm_call: allowed_tools [b a] and [a b] share a Python key; only tool_calls sorts them")
	}
	if runtime.EffectKey("r", "n", base, 1) == runtime.EffectKey("r", "n", llm([]any{"b", "a"}, "c2"), 1) {
		t.Errorf("llm_call: calls with call_id c1 and c2 share a key; only tool_calls drops the ids")
	}
}
